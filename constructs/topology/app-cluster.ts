/**
 * An app cluster: the konnector (RBAC limited to the bound APIs), the `apiservicebindings` CRD, one
 * APIServiceBinding per bound API of the control plane (permission claims accepted), and sample
 * claims. The provider kubeconfig Secret is *not* emitted: it holds credentials and is created by
 * `kubectl bind` (or the Pulumi stack) as Secret `klutch-bind/<kubeconfigSecretName>`.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { fail } from '../_errors.js';
import { apiServiceBindingKind } from '../../contract/index.js';
import { checkAllowedNamespace } from '../../contract/allowed-namespaces.js';
import type { IDataService } from '../dataservice/index.js';
import { KlutchMonitoring, type MonitoringOptions } from '../monitoring/index.js';
import {
  AcceptablePermissionClaim,
  ApiServiceBinding,
  type IApiExport,
  isApiExport,
  Konnector,
  KonnectorProps,
  KONNECTOR_NAMESPACE,
} from '../runtime/index.js';
import { ClusterChart, ClusterRole } from './cluster-chart.js';
import { ControlPlaneCluster, ExportedApiInfo } from './control-plane-cluster.js';

export interface AppClusterProps {
  /** Cluster name and output folder. */
  readonly clusterName: string;
  /** The control plane this cluster binds to. */
  readonly controlPlane: ControlPlaneCluster;
  /**
   * APIs to bind: data services, catalogue operations or export templates of the control plane (by
   * reference), or `<plural>.<group>` binding names (as a config file gives them).
   * @default - every export of the control plane
   */
  readonly bind?: ReadonlyArray<IApiExport | string>;
  /** Name of the Secret (in klutch-bind) with the provider kubeconfig. @default "kubeconfig-<control plane name>" */
  readonly kubeconfigSecretName?: string;
  /** Accept the exports' permission claims (e.g. service-binding credentials). @default true */
  readonly acceptPermissionClaims?: boolean;
  /** Konnector overrides. @default - defaults of Konnector */
  readonly konnector?: Omit<KonnectorProps, 'boundApis'>;
  /**
   * Monitoring of the konnector: a ServiceMonitor/PodMonitor, the PrometheusRule and the Grafana
   * dashboard (needs the Prometheus Operator's CRDs on the cluster). @default - none
   */
  readonly monitoring?: MonitoringOptions;
}

/** A sample claim on an app cluster: of a data service (by reference), or of a kind (by name). */
export interface ClaimProps {
  /**
   * The data service claimed, e.g. `catalogue.service('postgresql')`: its claim kind and group.
   * Give this or `kind`. @default - the claim API named by `kind`
   */
  readonly dataService?: IDataService;
  /** Claim kind, e.g. `PostgresqlInstance` (an operation such as `Backup`, or without a data service at hand). @default - the claim kind of `dataService` */
  readonly kind?: string;
  /** API group (with `kind`). @default - the only bound group offering this kind */
  readonly group?: string;
  readonly name: string;
  /** @default "default" */
  readonly namespace?: string;
  readonly spec: Record<string, unknown>;
  /** @default - none */
  readonly labels?: Record<string, string>;
}

export class AppCluster extends ClusterChart {
  public readonly clusterRole = ClusterRole.APP;
  public readonly controlPlane: ControlPlaneCluster;
  public readonly konnector: Konnector;
  /** Bindings by name (`<plural>.<group>`); with the default `bind`, an export added to the control plane later is added here. */
  public readonly bindings: ReadonlyMap<string, ApiServiceBinding>;
  /** The konnector's monitoring, when `monitoring` is set. */
  public readonly monitoring?: KlutchMonitoring;
  private readonly claimNames = new Set<string>();
  private readonly bound: ExportedApiInfo[] = [];
  private readonly bindingMap = new Map<string, ApiServiceBinding>();
  private readonly kubeconfigSecretName: string;
  private readonly props: AppClusterProps;

  constructor(scope: Construct, id: string, props: AppClusterProps) {
    const P = 'AppClusterProps';
    if (!props || typeof props !== 'object') fail(P, props, 'must be an object with clusterName and controlPlane');
    super(scope, id, { clusterName: props.clusterName }, P);
    if (!(props.controlPlane instanceof ControlPlaneCluster)) {
      throw new Error(`${P}.controlPlane: ${typeof props.controlPlane} is not a ControlPlaneCluster`);
    }
    if (props.controlPlane.clusterName === props.clusterName) {
      throw new Error(`${P}.clusterName: "${props.clusterName}" is the control plane's name; each cluster needs its own folder`);
    }
    this.controlPlane = props.controlPlane;
    this.props = props;
    this.bindings = this.bindingMap;
    const chosen = props.bind === undefined ? props.controlPlane.exports : AppCluster.chosenExports(props);
    this.kubeconfigSecretName = props.kubeconfigSecretName ?? `kubeconfig-${props.controlPlane.clusterName}`;

    // The binding CRD, before the konnector replaces it with its embedded copy.
    const crd = apiServiceBindingKind.crd();
    new ApiObject(this, 'ApiServiceBindingCrd', crd as never);

    const groups = new Map<string, string[]>();
    for (const e of chosen) groups.set(e.group, [...(groups.get(e.group) ?? []), e.resource]);
    const claimed = new Map<string, { group: string; resource: string }>();
    for (const e of chosen) for (const c of e.permissionClaims) claimed.set(`${c.group ?? ''}/${c.resource}`, { group: c.group ?? '', resource: c.resource });
    this.konnector = new Konnector(this, 'Konnector', {
      ...props.konnector,
      boundApis: [...groups.entries()].map(([group, resources]) => ({ group, resources })),
      ...(claimed.size > 0 ? { claimedResources: [...claimed.values()] } : {}),
    });
    if (props.monitoring) this.monitoring = new KlutchMonitoring(this, 'Monitoring', { ...props.monitoring, konnector: this.konnector });
    for (const e of chosen) this.addBinding(e);
    if (props.bind === undefined) {
      // Every export, whenever it is made: one added to the control plane after this cluster is bound too.
      props.controlPlane.onExport((e) => {
        this.konnector.addBoundApi({ group: e.group, resources: [e.resource] });
        for (const c of e.permissionClaims) this.konnector.addClaimedResource({ group: c.group ?? '', resource: c.resource });
        this.addBinding(e);
      });
      this.node.addValidation({
        validate: () =>
          this.bound.length > 0
            ? []
            : [
                `AppClusterProps.controlPlane: control plane "${props.controlPlane.clusterName}" exports no API; add a data service (or an export template) to it`,
              ],
      });
    }
  }

  /** The APIs bound on this cluster (`<plural>.<group>` each), in the order they were bound. */
  public get boundApis(): readonly ExportedApiInfo[] {
    return [...this.bound];
  }

  /** The exports named by `bind` (data services, operations, templates, or `<plural>.<group>`), each checked to be the control plane's. */
  private static chosenExports(props: AppClusterProps): ExportedApiInfo[] {
    const P = 'AppClusterProps';
    const exports = props.controlPlane.exports;
    if (!Array.isArray(props.bind) || props.bind.length === 0)
      fail(`${P}.bind`, props.bind, 'must list at least one API (a data service or "<plural>.<group>")');
    return props.bind.map((b, i) => {
      if (isApiExport(b)) {
        const e = props.controlPlane.exportOf(b);
        if (!e) {
          fail(
            `${P}.bind[${i}]`,
            b.node.path,
            `is not exported by "${props.controlPlane.clusterName}": it was created outside that control plane; pass a data service, operation or export template created in it`,
          );
        }
        return e;
      }
      const e = exports.find((x) => x.name === b);
      if (!e) fail(`${P}.bind[${i}]`, b, `is not exported by "${props.controlPlane.clusterName}"; exports: ${exports.map((x) => x.name).join(', ')}`);
      return e;
    });
  }

  /** The APIServiceBinding of one export (its permission claims accepted or rejected as `acceptPermissionClaims` says). */
  private addBinding(e: ExportedApiInfo): void {
    const accept = this.props.acceptPermissionClaims ?? true;
    this.bound.push(e);
    this.bindingMap.set(
      e.name,
      new ApiServiceBinding(this, `Binding-${e.name}`, {
        group: e.group,
        resource: e.resource,
        namespace: this.props.konnector?.namespace ?? KONNECTOR_NAMESPACE,
        kubeconfigSecretRef: { name: this.kubeconfigSecretName },
        permissionClaims: e.permissionClaims.map((c) => ({ ...c, state: accept ? 'Accepted' : 'Rejected' }) as AcceptablePermissionClaim),
      }),
    );
  }

  /** Adds a claim of a bound API (the konnector syncs it to the control plane). */
  public addClaim(props: ClaimProps): ApiObject {
    const P = 'AppCluster.addClaim';
    if (!props || typeof props !== 'object') fail(P, props, 'must be an object with dataService (or kind), name and spec');
    const { kind, group } = this.claimedApi(P, props);
    const apis = this.controlPlane.claimApisOfKind(kind).filter((a) => group === undefined || a.group === group);
    if (apis.length === 0) {
      fail(
        `${P}.kind`,
        kind,
        `is not a claim kind of control plane "${this.controlPlane.clusterName}"; kinds: ${[...new Set(this.controlPlane.claimApis.map((a) => a.kind))].sort().join(', ')}`,
      );
    }
    if (apis.length > 1)
      throw new Error(`${P}.group: ${JSON.stringify(group)}; kind ${kind} exists in ${apis.map((a) => a.group).join(', ')} — name the group`);
    const api = apis[0];
    const bindingName = `${api.plural}.${api.group}`;
    if (!this.bindings.has(bindingName)) {
      fail(`${P}.kind`, kind, `(${bindingName}) is not bound in cluster "${this.clusterName}"; bound: ${[...this.bindings.keys()].join(', ')}`);
    }
    const namespace = props.namespace ?? 'default';
    const key = `${bindingName}/${namespace}/${props.name}`;
    if (this.claimNames.has(key)) fail(`${P}.name`, props.name, `is already a ${kind} in namespace ${namespace} of cluster "${this.clusterName}"`);
    if (!props.spec || typeof props.spec !== 'object') fail(`${P}.spec`, props.spec, 'must be an object');
    this.allowClaimNamespace(`${P}.namespace`, namespace);
    this.claimNames.add(key);
    return new ApiObject(this, `Claim ${bindingName} ${namespace} ${props.name}`, {
      apiVersion: `${api.group}/${api.version}`,
      kind: api.kind,
      metadata: { name: props.name, namespace, ...(props.labels ? { labels: { ...props.labels } } : {}) },
      spec: props.spec,
    });
  }

  /**
   * The konnector may bind the namespace of a claim: added to its namespaces when the props chose none
   * (the default `default` is replaced by the claims' namespaces), refused when the props named others.
   */
  private allowClaimNamespace(at: string, namespace: string): void {
    checkAllowedNamespace(at, namespace);
    const chosen = this.props.konnector?.namespaces ?? this.props.konnector?.allowedNamespaces;
    const allowed = this.konnector.allowedNamespaces;
    if (chosen !== undefined && allowed !== undefined && !allowed.includes(namespace)) {
      fail(
        at,
        namespace,
        `is not one of the konnector's namespaces (${allowed.join(', ')}): nothing would be synced there; add it to AppClusterProps.konnector.namespaces or put the claim in one of them`,
      );
    }
    this.konnector.addNamespace(namespace);
  }

  /** The kind (and group) a claim is of: its data service's, checked to be of this cluster's control plane, or `kind` (and `group`). */
  private claimedApi(P: string, props: ClaimProps): { kind: string; group?: string } {
    const ds = props.dataService;
    if (ds === undefined) {
      if (typeof props.kind !== 'string' || props.kind.length === 0)
        fail(`${P}.kind`, props.kind, 'must be a claim kind such as "PostgresqlInstance" (or pass dataService)');
      return { kind: props.kind, group: props.group };
    }
    if (props.kind !== undefined || props.group !== undefined) {
      fail(
        `${P}.${props.kind !== undefined ? 'kind' : 'group'}`,
        props.kind ?? props.group,
        'is given with dataService, which sets the kind and group; pass one of them',
      );
    }
    if (!isApiExport(ds) || typeof (ds as Partial<IDataService>).model?.claimKind !== 'string') {
      fail(
        `${P}.dataService`,
        ds instanceof Construct ? ds.node.path : ds,
        'is not a data service (IDataService), e.g. a DataService or catalogue.service("postgresql")',
      );
    }
    if (!this.controlPlane.exportOf(ds)) {
      fail(`${P}.dataService`, ds.node.path, `is not exported by "${this.controlPlane.clusterName}": it was created outside that control plane`);
    }
    return { kind: ds.model.claimKind, group: ds.model.group };
  }
}
