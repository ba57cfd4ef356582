/** The bindable APIs: CRDs matched by APIServiceExportTemplates (in all namespaces). */
import { stringify } from 'yaml';
import { OFFERING_ANNOTATION, parseOffering, type Offering } from '../../contract/index.js';
import type { KubeClient, KubeObject } from '../core/client.js';
import type { ObjectCache } from '../core/object-cache.js';
import { R } from './refs.js';
import type { PermissionClaim } from '../../contract/wire.js';

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

/** A field of the claim's `spec`, from the CRD schema. */
export interface ApiParameter {
  /** Dotted path under `spec`, e.g. `parameters.maxConnections`. */
  path: string;
  type: string;
  required: boolean;
  description?: string;
  enum?: string[];
  default?: unknown;
  /** Ranges and patterns, e.g. `1 – 100`, `≤ 63 characters`, `matches ^[a-z]+$`. */
  constraints: string[];
}

export interface BindableApi {
  group: string;
  resource: string;
  kind: string;
  scope: 'Namespaced' | 'Cluster';
  versions: string[];
  template: { namespace: string; name: string };
  permissionClaims: PermissionClaim[];
  /** The version the details describe (the storage version when served, else the first served). */
  version?: string;
  /** The schema's description of the kind. */
  description?: string;
  /** Fields of `spec` (Crossplane's claim plumbing such as compositionRef left out). */
  parameters?: ApiParameter[];
  /** Services, plan sizes and backends from the template's offering annotation. */
  offering?: Offering;
  /** Why the offering annotation was ignored. */
  offeringError?: string;
  /** A claim to copy: the first service, its first plan, the default backend, required fields. */
  exampleClaim?: string;
  /**
   * Where an object of this API names its backend, below `spec`: `compositionRef` (a claim, a v1 XR) or
   * `crossplane.compositionRef` (a Crossplane v2 namespaced or cluster XR). @default 'compositionRef'
   */
  compositionRefField?: string;
}

/** Claim fields Crossplane adds (how a claim is wired, not what it orders). */
const PLUMBING = new Set([
  'compositionRef',
  'compositionSelector',
  'compositionRevisionRef',
  'compositionRevisionSelector',
  'compositionUpdatePolicy',
  'compositeDeletePolicy',
  'resourceRef',
  'writeConnectionSecretToRef',
  'publishConnectionDetailsTo',
  'crossplane',
]);

type Schema = {
  type?: string;
  description?: string;
  enum?: unknown[];
  default?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  'x-kubernetes-int-or-string'?: boolean;
};

function constraintsOf(s: Schema): string[] {
  const out: string[] = [];
  if (s.minimum !== undefined && s.maximum !== undefined)
    out.push(`${s.minimum}${s.exclusiveMinimum ? ' (exclusive)' : ''} – ${s.maximum}${s.exclusiveMaximum ? ' (exclusive)' : ''}`);
  else if (s.minimum !== undefined) out.push(`${s.exclusiveMinimum ? '>' : '≥'} ${s.minimum}`);
  else if (s.maximum !== undefined) out.push(`${s.exclusiveMaximum ? '<' : '≤'} ${s.maximum}`);
  if (s.minLength !== undefined && s.maxLength !== undefined) out.push(`${s.minLength} – ${s.maxLength} characters`);
  else if (s.minLength !== undefined) out.push(`≥ ${s.minLength} characters`);
  else if (s.maxLength !== undefined) out.push(`≤ ${s.maxLength} characters`);
  if (s.minItems !== undefined) out.push(`≥ ${s.minItems} items`);
  if (s.maxItems !== undefined) out.push(`≤ ${s.maxItems} items`);
  if (s.pattern) out.push(`matches ${s.pattern}`);
  if (s.format) out.push(`format ${s.format}`);
  return out;
}

/** The fields under `spec` of a CRD version's schema, depth first, plumbing left out. */
export function specParameters(schema: unknown): ApiParameter[] {
  const spec = (schema as Schema | undefined)?.properties?.spec;
  const out: ApiParameter[] = [];
  const walk = (s: Schema, prefix: string, required: Set<string>, depth: number) => {
    for (const [name, p] of Object.entries(s.properties ?? {})) {
      if (depth === 0 && PLUMBING.has(name)) continue;
      const path = prefix ? `${prefix}.${name}` : name;
      if (p.type === 'object' && p.properties && depth < 3) {
        walk(p, path, new Set(p.required ?? []), depth + 1);
        continue;
      }
      const type = p['x-kubernetes-int-or-string'] ? 'integer or string' : p.type === 'array' ? `list of ${p.items?.type ?? 'values'}` : (p.type ?? 'any');
      out.push({
        path,
        type,
        required: required.has(name),
        ...(p.description ? { description: p.description } : {}),
        ...(p.enum ? { enum: p.enum.map(String) } : {}),
        ...(p.default !== undefined ? { default: p.default } : {}),
        constraints: constraintsOf(p),
      });
    }
  };
  if (spec) walk(spec, '', new Set(spec.required ?? []), 0);
  return out;
}

/** A claim to copy for an API. */
export function exampleClaim(
  api: Pick<BindableApi, 'group' | 'kind' | 'scope' | 'offering' | 'compositionRefField'> & { version: string; parameters: ApiParameter[] },
): string {
  const spec: Record<string, unknown> = {};
  const set = (path: string, v: unknown) => {
    const parts = path.split('.');
    let o = spec;
    for (const p of parts.slice(0, -1)) o = (o[p] ??= {}) as Record<string, unknown>;
    o[parts[parts.length - 1]] = v;
  };
  const service = api.offering?.services[0];
  const backend = api.offering?.backends.find((b) => b.default && (!service || b.services.includes(service.name)));
  for (const p of api.parameters) {
    if (p.path === 'service' && service) set('service', service.name);
    else if (p.path === 'plan' && service?.plans[0]) set('plan', service.plans[0]);
    else if (p.required) {
      // An enum the default backend narrows (e.g. the instance types a ServiceBinding backend handles).
      const fit = p.enum?.find((e) => backend?.services.includes(e));
      set(p.path, p.default ?? fit ?? p.enum?.[0] ?? (p.type === 'integer' || p.type === 'number' ? 1 : p.type === 'boolean' ? false : `<${p.path}>`));
    }
  }
  if (backend) set(api.compositionRefField ?? 'compositionRef', { name: backend.name });
  const name = `my-${api.kind.toLowerCase()}`;
  return stringify(
    {
      apiVersion: `${api.group}/${api.version}`,
      kind: api.kind,
      metadata: api.scope === 'Namespaced' ? { name, namespace: 'default' } : { name },
      spec,
    },
    { lineWidth: 0 },
  );
}

/** Informer caches the catalogue may read instead of the API server (when synced). */
export interface CatalogCache {
  synced(): boolean;
  readonly templates: ObjectCache<ExportTemplate>;
  readonly crds: ObjectCache<Crd>;
}

/** How long a standby's lists of templates and CRDs serve /resources (see Catalog.fromApiServer). */
export const UNCACHED_TTL_MS = 5000;

export class Catalog {
  cache: CatalogCache | undefined;

  constructor(
    private readonly kube: KubeClient,
    private readonly consumerScope: 'Namespaced' | 'Cluster',
    private readonly now: () => number = Date.now,
  ) {}

  private get cached(): CatalogCache | undefined {
    return this.cache?.synced() ? this.cache : undefined;
  }

  /**
   * Without a synced cache (a standby replica, or before the informers synced) every page view would list
   * all templates and all CRDs of the control plane: one unauthenticated request each. Those lists are
   * shared by the requests of `UNCACHED_TTL_MS` (single flight), so a flood costs one pair of lists per
   * interval and replica, not one per request.
   */
  private uncached: { at: number; value: Promise<{ templates: ExportTemplate[]; crds: Crd[] }> } | undefined;

  private fromApiServer(): Promise<{ templates: ExportTemplate[]; crds: Crd[] }> {
    const t = this.now();
    if (this.uncached && t - this.uncached.at < UNCACHED_TTL_MS) return this.uncached.value;
    const value = Promise.all([this.kube.list<ExportTemplate>(R.templates), this.kube.list<Crd>(R.crds)]).then(([a, b]) => ({
      templates: a.items,
      crds: b.items,
    }));
    this.uncached = { at: t, value };
    // a failed list is not kept: the next request tries again
    value.catch(() => {
      if (this.uncached?.value === value) this.uncached = undefined;
    });
    return value;
  }

  private async templates(): Promise<ExportTemplate[]> {
    const items = this.cached?.templates.list() ?? (await this.fromApiServer()).templates;
    return items.filter((t) => t.spec?.APIServiceSelector?.resource);
  }

  private toApi(t: ExportTemplate, crd: Crd): BindableApi | undefined {
    if (crd.spec.scope === 'Cluster' && this.consumerScope !== 'Cluster') return undefined;
    const served = crd.spec.versions.filter((v) => v.served);
    const shown = served.find((v) => v.storage) ?? served[0];
    const schema = shown?.schema?.openAPIV3Schema as Schema | undefined;
    const annotation = t.metadata.annotations?.[OFFERING_ANNOTATION];
    const parsed = annotation === undefined ? {} : parseOffering(annotation);
    const api = {
      group: crd.spec.group,
      resource: crd.spec.names.plural,
      kind: crd.spec.names.kind,
      scope: crd.spec.scope,
      versions: served.map((v) => v.name),
      template: { namespace: t.metadata.namespace ?? '', name: t.metadata.name ?? '' },
      permissionClaims: t.spec.permissionClaims ?? [],
      version: shown?.name ?? '',
      ...(schema?.description ? { description: schema.description } : {}),
      parameters: specParameters(schema),
      // A Crossplane v2 XR (e.g. a namespaced XR bound without claims) has its Crossplane fields under spec.crossplane.
      ...(schema?.properties?.spec?.properties?.crossplane?.properties?.compositionRef ? { compositionRefField: 'crossplane.compositionRef' } : {}),
      ...(parsed.offering ? { offering: parsed.offering } : {}),
      ...(parsed.error ? { offeringError: parsed.error } : {}),
    };
    return { ...api, exampleClaim: exampleClaim(api) };
  }

  /** Every bindable API, sorted by CRD name. */
  async list(): Promise<BindableApi[]> {
    const [templates, crds] = await Promise.all([this.templates(), this.cached ? this.cached.crds.list() : this.fromApiServer().then((l) => l.crds)]);
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
    const crd = c ? c.crds.getByName(undefined, `${resource}.${group}`) : await this.kube.getOrNull<Crd>(R.crds, undefined, `${resource}.${group}`);
    if (!crd) {
      throw new CatalogError(
        `resource "${resource}.${group}" has a template but no CustomResourceDefinition on the provider yet; ask the provider to install it`,
      );
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
