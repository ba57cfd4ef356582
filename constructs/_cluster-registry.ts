/**
 * The one registry of the construct library: how a construct tells the cluster (or package, or app)
 * it is created in what it contributes, without anyone searching the tree.
 *
 * - `ClusterRegistry.of(c)`: the registry of the cluster `c` is in — its nearest enclosing `Chart`
 *   (a `ControlPlaneCluster`, an `AppCluster`, a plain `Chart`), else its root. An
 *   `ApiServiceExportTemplate` registers an export, a `CompositeResourceDefinition` a claim API and a
 *   `DataService` its names (checked against the data services registered before it: a clash is an
 *   error naming both) and the ProviderConfigs its backends use. A cluster that reacts (a
 *   `ControlPlaneCluster` grants its backend every export) adds a listener.
 * - `Slot`: one value or list kept on a construct, across copies of this library (the clusters of an
 *   app, the package an object was added to).
 *
 * A leaf: it takes narrow records (`{ group, version, kind, plural }`, …), not the constructs that make
 * them, and imports nothing of this library, so the XRD, the export template and the DataService can
 * all use it without importing each other.
 */
import { Chart } from 'cdk8s';
import type { IConstruct } from 'constructs';

/** A value kept on a construct under a `Symbol.for` key (shared by every copy of this library). */
export class Slot<T> {
  private readonly key: symbol;

  /** @param name the slot's global name, e.g. `klutch-kit.topology.clusters` */
  constructor(name: string) {
    this.key = Symbol.for(name);
  }

  /** The value kept on `c`, or undefined. */
  public get(c: IConstruct): T | undefined {
    return (c as unknown as Record<symbol, T | undefined>)[this.key];
  }

  /** Keeps `value` on `c` (once: a slot is not reassigned). */
  public set(c: IConstruct, value: T): T {
    Object.defineProperty(c, this.key, { value });
    return value;
  }

  /** The value kept on `c`, made by `init` on first use. */
  public getOrInit(c: IConstruct, init: () => T): T {
    return this.get(c) ?? this.set(c, init());
  }
}

/** A resource a binding lets the provider side reach in the consumer's cluster (`group` '' is the core group). */
export interface ClaimedResourceRecord {
  readonly group?: string;
  readonly resource: string;
}

/** An API app clusters can bind, as its APIServiceExportTemplate names it (one object per export: compared by identity). */
export interface ExportRecord {
  readonly group: string;
  /** The resource (plural). */
  readonly resource: string;
  /** The resources the export claims in the consumer's cluster. */
  readonly permissionClaims: readonly ClaimedResourceRecord[];
}

/** An API whose objects app clusters create: an XRD's claims, or its namespaced composite resources. */
export interface ClaimApiRecord {
  readonly group: string;
  /** The referenceable version. */
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
}

/** A ProviderConfig reference a backend composes with: its kind and name, and its object when this app emits it. */
export interface ProviderConfigRecord {
  readonly kind: string;
  readonly name: string;
  readonly apiObject?: IConstruct;
}

/** What a data service takes in its cluster: names that must be unique there, and the ProviderConfigs its backends use. */
export interface DataServiceRecord {
  /** The construct path, e.g. `control-plane/Catalogue/postgresql`. */
  readonly path: string;
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  readonly claimKind: string;
  readonly claimPlural: string;
  /** The backends (each a cluster-scoped Composition of its name) and the ProviderConfigs each uses. */
  readonly backends: ReadonlyArray<{ readonly name: string; readonly automation: string; readonly providerConfigs: readonly ProviderConfigRecord[] }>;
  readonly exportTemplate: { readonly namespace: string; readonly name: string };
  /** The `value` of its API style (`Claims`, `NamespacedXR`): which provider-anynines its a9s backends compose for. */
  readonly apiStyle: string;
}

/** What a cluster does when something is registered with it (every member optional). */
export interface ClusterListener {
  onExport?(e: ExportRecord): void;
  onClaimApi?(a: ClaimApiRecord): void;
  onDataService?(d: DataServiceRecord): void;
}

const REGISTRY = new Slot<ClusterRegistry>('klutch-kit.ClusterRegistry');

/** The exports, claim APIs and data services of one cluster, in the order they were registered. */
export class ClusterRegistry {
  /** The registry of the cluster `c` is in (its nearest enclosing Chart, not `c` itself, else its root), made on first use. */
  public static of(c: IConstruct): ClusterRegistry {
    const scopes = c.node.scopes;
    let owner: IConstruct = c.node.root;
    for (let i = scopes.length - 2; i >= 0; i--) {
      if (Chart.isChart(scopes[i])) {
        owner = scopes[i];
        break;
      }
    }
    return REGISTRY.getOrInit(owner, () => new ClusterRegistry());
  }

  /** The registry of `chart` itself (what its constructs register with), made on first use. */
  public static ofChart(chart: Chart): ClusterRegistry {
    return REGISTRY.getOrInit(chart, () => new ClusterRegistry());
  }

  private readonly exportList: ExportRecord[] = [];
  private readonly claimApiList: ClaimApiRecord[] = [];
  private readonly dataServiceList: DataServiceRecord[] = [];
  private readonly listeners: ClusterListener[] = [];

  private constructor() {}

  /** The exports registered so far. */
  public get exports(): readonly ExportRecord[] {
    return [...this.exportList];
  }

  /** The claim APIs registered so far. */
  public get claimApis(): readonly ClaimApiRecord[] {
    return [...this.claimApiList];
  }

  /** The data services registered so far. */
  public get dataServices(): readonly DataServiceRecord[] {
    return [...this.dataServiceList];
  }

  /** Calls `l` for every registration from now on (and, with `replay`, for the earlier ones first). */
  public listen(l: ClusterListener, replay = false): void {
    if (replay) {
      for (const e of this.exportList) l.onExport?.(e);
      for (const a of this.claimApiList) l.onClaimApi?.(a);
      for (const d of this.dataServiceList) l.onDataService?.(d);
    }
    this.listeners.push(l);
  }

  public registerExport(e: ExportRecord): void {
    this.exportList.push(e);
    for (const l of this.listeners) l.onExport?.(e);
  }

  public registerClaimApi(a: ClaimApiRecord): void {
    this.claimApiList.push(a);
    for (const l of this.listeners) l.onClaimApi?.(a);
  }

  /** Records a data service; throws when one of its names clashes with an earlier data service's in this cluster. */
  public registerDataService(d: DataServiceRecord): void {
    for (const e of this.dataServiceList) {
      const problem = dataServiceClash(e, d);
      if (problem) throw new Error(problem);
    }
    this.dataServiceList.push(d);
    for (const l of this.listeners) l.onDataService?.(d);
  }
}

/** The clash of two data services of one cluster, or undefined. */
export function dataServiceClash(a: DataServiceRecord, b: DataServiceRecord): string | undefined {
  const both = `DataService "${a.path}" and DataService "${b.path}"`;
  if (a.group === b.group) {
    for (const k of [b.kind, b.claimKind]) {
      if (k === a.kind || k === a.claimKind)
        return `${both} both define kind "${k}" in group "${b.group}"; give one of them another kind (DataServiceProps.kind, claimKind) or group`;
    }
    for (const p of [b.plural, b.claimPlural]) {
      if (p === a.plural || p === a.claimPlural)
        return `${both} both define the resource "${p}.${b.group}"; give one of them another plural (DataServiceProps.plural, claimPlural) or group`;
    }
  }
  const backend = b.backends.find((n) => a.backends.some((x) => x.name === n.name))?.name;
  if (backend !== undefined)
    return `${both} both have a backend "${backend}" (its Composition "${backend}" is cluster-scoped); give one of them another name (the backend's name prop)`;
  if (a.exportTemplate.namespace === b.exportTemplate.namespace && a.exportTemplate.name === b.exportTemplate.name)
    return (
      `${both} both export through the APIServiceExportTemplate ${b.exportTemplate.namespace}/${b.exportTemplate.name} ` +
      `(groups "${a.group}" and "${b.group}"); give one of them another claimPlural or exportTemplateNamespace`
    );
  return undefined;
}
