/** The bindable APIs: CRDs matched by APIServiceExportTemplates (in all namespaces). */
import type { KubeClient, KubeObject } from '../core/client.js';
import { R } from './refs.js';
import type { PermissionClaim } from './wire.js';

export interface ExportTemplate extends KubeObject {
  spec: {
    APIServiceSelector: { group?: string; resource: string; version?: string };
    permissionClaims?: PermissionClaim[];
  };
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: unknown };
  subresources?: Record<string, unknown>;
  additionalPrinterColumns?: unknown[];
}

export interface Crd extends KubeObject {
  spec: {
    group: string;
    names: { plural: string; singular?: string; kind: string; listKind?: string; shortNames?: string[]; categories?: string[] };
    scope: 'Namespaced' | 'Cluster';
    versions: CrdVersion[];
    conversion?: { strategy?: string };
  };
  status?: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>; acceptedNames?: unknown; storedVersions?: string[] };
}

export interface BindableApi {
  group: string;
  resource: string;
  kind: string;
  scope: 'Namespaced' | 'Cluster';
  versions: string[];
  template: { namespace: string; name: string };
  permissionClaims: PermissionClaim[];
}

/** Informer caches the catalogue may read instead of the API server (when synced). */
export interface CatalogCache {
  synced(): boolean;
  templates(): ExportTemplate[];
  crds(): Crd[];
  crd(name: string): Crd | undefined;
}

export class Catalog {
  cache: CatalogCache | undefined;

  constructor(
    private readonly kube: KubeClient,
    private readonly consumerScope: 'Namespaced' | 'Cluster',
  ) {}

  private get cached(): CatalogCache | undefined {
    return this.cache?.synced() ? this.cache : undefined;
  }

  private async templates(): Promise<ExportTemplate[]> {
    const items = this.cached?.templates() ?? (await this.kube.list<ExportTemplate>(R.templates)).items;
    return items.filter((t) => t.spec?.APIServiceSelector?.resource);
  }

  private toApi(t: ExportTemplate, crd: Crd): BindableApi | undefined {
    if (crd.spec.scope === 'Cluster' && this.consumerScope !== 'Cluster') return undefined;
    return {
      group: crd.spec.group,
      resource: crd.spec.names.plural,
      kind: crd.spec.names.kind,
      scope: crd.spec.scope,
      versions: crd.spec.versions.filter((v) => v.served).map((v) => v.name),
      template: { namespace: t.metadata.namespace ?? '', name: t.metadata.name ?? '' },
      permissionClaims: t.spec.permissionClaims ?? [],
    };
  }

  /** Every bindable API, sorted by CRD name. */
  async list(): Promise<BindableApi[]> {
    const [templates, crds] = await Promise.all([this.templates(), this.cached ? this.cached.crds() : this.kube.list<Crd>(R.crds).then((l) => l.items)]);
    const byName = new Map(crds.map((c) => [c.metadata.name!, c]));
    const out = new Map<string, BindableApi>();
    for (const t of templates) {
      const sel = t.spec.APIServiceSelector;
      const name = `${sel.resource}.${sel.group ?? ''}`;
      const crd = byName.get(name);
      if (!crd || out.has(name)) continue;
      const api = this.toApi(t, crd);
      if (api) out.set(name, api);
    }
    return [...out.values()].sort((a, b) => `${a.resource}.${a.group}`.localeCompare(`${b.resource}.${b.group}`));
  }

  /** The bindable API `resource.group`, or an error saying why it is not bindable. */
  async find(group: string, resource: string): Promise<BindableApi> {
    const templates = (await this.templates()).filter(
      (t) => (t.spec.APIServiceSelector.group ?? '') === group && t.spec.APIServiceSelector.resource === resource,
    );
    if (templates.length === 0) {
      throw new CatalogError(`resource "${resource}" of group "${group}" is not offered by any APIServiceExportTemplate; pick one from /resources`);
    }
    const c = this.cached;
    const crd = c ? c.crd(`${resource}.${group}`) : await this.kube.getOrNull<Crd>(R.crds, undefined, `${resource}.${group}`);
    if (!crd) {
      throw new CatalogError(`resource "${resource}.${group}" has a template but no CustomResourceDefinition on the provider yet; ask the provider to install it`);
    }
    const api = this.toApi(templates[0], crd);
    if (!api) {
      throw new CatalogError(`resource "${resource}.${group}" is cluster-scoped and this backend only binds namespaced APIs (--consumer-scope=Namespaced)`);
    }
    return api;
  }
}

export class CatalogError extends Error {
  readonly status = 400;
  constructor(message: string) {
    super(message);
    this.name = 'CatalogError';
  }
}
