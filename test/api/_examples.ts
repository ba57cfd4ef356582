/**
 * Example objects for the binding API, generated from a CRD schema (valid bases and single-field
 * mutations) plus hand-written CEL, default and update cases. Shared by the compatibility test
 * (test/api/crd-compat.test.ts) and the validator-vs-API-server test
 * (test/integration/validate/validator-vs-apiserver.test.ts).
 */
import {
  apiServiceBindingKind,
  apiServiceExportKind,
  apiServiceExportRequestKind,
  apiServiceExportTemplateKind,
  apiServiceNamespaceKind,
  appClusterBindingKind,
  bindingKinds,
  clusterBindingKind,
  type JSONSchemaProps,
} from '../../contract/api/index.js';

export type BindingKind = (typeof bindingKinds)[number];

// ---------------------------------------------------------------------------------------------
// Example generation from Klutch's schema.

const PATTERN_SAMPLES: Record<string, string> = {
  '^(|[a-z0-9]([-a-z0-9]*[a-z0-9](\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?)$': 'example.com',
  '^[a-z][-a-z0-9]*[a-z0-9]$': 'widgets',
  '^v[1-9][0-9]*([a-z]+[1-9][0-9]*)?$': 'v1alpha1',
};
const QUANTITY_SAMPLE = '250m';

/** A value valid for `s`: every property filled (`full`) or only required ones. */
export function sample(s: JSONSchemaProps, full: boolean, name: string): unknown {
  if (s['x-kubernetes-int-or-string']) return s.pattern ? QUANTITY_SAMPLE : 8080;
  if (s['x-kubernetes-preserve-unknown-fields'] && !s.properties) return { any: { thing: [1, 'two'] } };
  if (s.enum) return s.enum[0];
  switch (s.type) {
    case 'string':
      if (s.format === 'date-time') return '2026-01-02T03:04:05Z';
      if (s.pattern)
        return (
          PATTERN_SAMPLES[s.pattern] ??
          (() => {
            throw new Error(`no sample for pattern ${s.pattern}`);
          })()
        );
      return `${name || 'value'}-x`;
    case 'integer':
      return 3;
    case 'number':
      return 1.5;
    case 'boolean':
      return false;
    case 'array':
      return [sample(s.items!, full, name)];
    case 'object': {
      if (s.additionalProperties && typeof s.additionalProperties === 'object') return { key: sample(s.additionalProperties, full, 'key') };
      const out: Record<string, unknown> = {};
      for (const [k, p] of Object.entries(s.properties ?? {})) {
        if (full || s.required?.includes(k)) out[k] = sample(p, full, k);
      }
      return out;
    }
    default:
      return {};
  }
}

export interface Example {
  readonly label: string;
  readonly obj: unknown;
  readonly old?: unknown;
  /** Expected verdict, when known independently of either schema. */
  readonly expect?: 'valid' | 'invalid';
}

function setAt(obj: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(obj) as Record<string | number, unknown>;
  let cur = copy;
  for (const p of path.slice(0, -1)) cur = cur[p] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (value === undefined) delete cur[last];
  else cur[last] = value;
  return copy;
}

/** Single-field mutations of `base` along `schema`: wrong types, bad enums, bad patterns, missing required, unknown fields. */
export function mutations(schema: JSONSchemaProps, base: unknown, path: (string | number)[] = []): Example[] {
  const out: Example[] = [];
  const at = path.join('.');
  if (path.length) {
    if (schema.type === 'string' && !schema['x-kubernetes-int-or-string']) out.push({ label: `${at}: number instead of string`, obj: 42, expect: 'invalid' });
    if (schema.type === 'boolean') out.push({ label: `${at}: string instead of boolean`, obj: 'yes', expect: 'invalid' });
    if (schema.type === 'integer') out.push({ label: `${at}: fraction instead of integer`, obj: 1.25, expect: 'invalid' });
    if (schema.type === 'array') out.push({ label: `${at}: object instead of array`, obj: { a: 1 }, expect: 'invalid' });
    if (schema.type === 'object' && !schema['x-kubernetes-preserve-unknown-fields'])
      out.push({ label: `${at}: array instead of object`, obj: ['x'], expect: 'invalid' });
    if (schema.enum) out.push({ label: `${at}: value outside the enum`, obj: 'NotAnEnumValue', expect: 'invalid' });
    if (schema.pattern && schema.type === 'string') out.push({ label: `${at}: value not matching the pattern`, obj: 'Not_Valid!', expect: 'invalid' });
    if (schema.minLength) out.push({ label: `${at}: empty string below minLength`, obj: '', expect: 'invalid' });
    if (schema.minItems) out.push({ label: `${at}: empty list below minItems`, obj: [], expect: 'invalid' });
  }
  const mapped = out.map((m) => ({ ...m, obj: setAt(base, path, m.obj) }));
  let cur: unknown = base;
  for (const p of path) cur = (cur as Record<string | number, unknown>)?.[p];
  if (schema.type === 'object' && schema.properties && cur && typeof cur === 'object') {
    if (!schema['x-kubernetes-preserve-unknown-fields'] && path.length) {
      mapped.push({ label: `${at}: unknown field`, obj: setAt(base, [...path, 'notInSchema'], 1), expect: 'invalid' });
    }
    for (const [k, p] of Object.entries(schema.properties)) {
      if (path.length === 0 && (k === 'metadata' || k === 'apiVersion' || k === 'kind')) continue;
      if (!(k in (cur as object))) continue;
      if (schema.required?.includes(k)) {
        // A required field with a default is filled in again by defaulting.
        mapped.push({
          label: `${[...path, k].join('.')}: required field removed`,
          obj: setAt(base, [...path, k], undefined),
          expect: p.default === undefined ? 'invalid' : 'valid',
        });
      }
      mapped.push(...mutations(p, base, [...path, k]));
    }
  }
  if (schema.type === 'array' && schema.items && Array.isArray(cur) && cur.length) mapped.push(...mutations(schema.items, base, [...path, 0]));
  return mapped;
}

export function baseObject(k: BindingKind, schema: JSONSchemaProps, full: boolean): Record<string, unknown> {
  const spec = sample(schema.properties!.spec, full, 'spec') as Record<string, unknown>;
  let name = 'sample';
  if (k === apiServiceExportKind) {
    const n = spec.names as { plural: string };
    name = `${n.plural}.${spec.group}`;
    // The minimal base is a namespaced export (no isolation), the full one cluster-scoped.
    if (!full) Object.assign(spec, { scope: 'Namespaced', informerScope: 'Namespaced' });
  }
  if (k === clusterBindingKind) name = 'cluster';
  const obj: Record<string, unknown> = { apiVersion: k.apiVersion, kind: k.kind, metadata: { name, namespace: 'cluster-abc' }, spec };
  if (full) obj.status = sample(schema.properties!.status, full, 'status');
  return obj;
}

/** Hand-written cases: CEL rules, defaults and update transitions. */
export function celCases(): Array<{ kind: BindingKind; ex: Example }> {
  const exportSpec = {
    group: 'example.com',
    names: { kind: 'Widget', plural: 'widgets' },
    scope: 'Namespaced',
    informerScope: 'Namespaced',
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
  };
  const exp = (spec: Record<string, unknown>, name = 'widgets.example.com') => apiServiceExportKind.make(name, spec as never, { namespace: 'c' });
  const claim = { group: '', resource: 'secrets', version: 'v1' };
  const cb = (name: string, ref: Record<string, unknown> = { name: 'kubeconfig', key: 'kubeconfig' }) =>
    clusterBindingKind.make(name, { kubeconfigSecretRef: ref as never, providerPrettyName: 'Provider' }, { namespace: 'c' });
  const acb = (name: string, ns = 'klutch') =>
    appClusterBindingKind.make(name, { kubeconfigSecretRef: { namespace: ns, name: 'app', key: 'kubeconfig' } }, { namespace: 'p' });
  const req = (resources: unknown[], parameters?: unknown) =>
    apiServiceExportRequestKind.make('r', { resources, ...(parameters ? { parameters } : {}) } as never, { namespace: 'c' });
  const binding = (pc: unknown[], ref = { namespace: 'klutch-bind', name: 'kubeconfig', key: 'kubeconfig' }) =>
    apiServiceBindingKind.make('widgets.example.com', { kubeconfigSecretRef: ref, permissionClaims: pc } as never);
  return [
    { kind: apiServiceExportKind, ex: { label: 'export: namespaced, valid', obj: exp(exportSpec), expect: 'valid' } },
    { kind: apiServiceExportKind, ex: { label: 'export: name is not <plural>.<group>', obj: exp(exportSpec, 'widgets'), expect: 'invalid' } },
    { kind: apiServiceExportKind, ex: { label: 'export: name with another group', obj: exp(exportSpec, 'widgets.example.org'), expect: 'invalid' } },
    {
      kind: apiServiceExportKind,
      ex: {
        label: "export: core group (the rule wants name 'widgets.', not a DNS subdomain: core-group exports cannot exist)",
        obj: exp({ ...exportSpec, group: '' }, 'widgets.'),
        expect: 'invalid',
      },
    },
    {
      kind: apiServiceExportKind,
      ex: {
        label: 'export: cluster scope with cluster informers and isolation',
        obj: exp({ ...exportSpec, scope: 'Cluster', informerScope: 'Cluster', clusterScopedIsolation: 'Prefixed' }),
        expect: 'valid',
      },
    },
    {
      kind: apiServiceExportKind,
      ex: { label: 'export: cluster scope without isolation', obj: exp({ ...exportSpec, scope: 'Cluster', informerScope: 'Cluster' }), expect: 'invalid' },
    },
    {
      kind: apiServiceExportKind,
      ex: {
        label: 'export: cluster scope with namespaced informers',
        obj: exp({ ...exportSpec, scope: 'Cluster', informerScope: 'Namespaced', clusterScopedIsolation: 'None' }),
        expect: 'invalid',
      },
    },
    {
      kind: apiServiceExportKind,
      ex: { label: 'export: namespaced scope with isolation', obj: exp({ ...exportSpec, clusterScopedIsolation: 'None' }), expect: 'invalid' },
    },
    { kind: apiServiceExportKind, ex: { label: 'export: no versions', obj: exp({ ...exportSpec, versions: [] }), expect: 'invalid' } },
    {
      kind: apiServiceExportKind,
      ex: {
        label: 'export: duplicate version names (list-type map)',
        obj: exp({ ...exportSpec, versions: [exportSpec.versions[0], exportSpec.versions[0]] }),
        expect: 'invalid',
      },
    },
    {
      kind: apiServiceExportKind,
      ex: { label: 'export: bad version name', obj: exp({ ...exportSpec, versions: [{ ...exportSpec.versions[0], name: 'version1' }] }), expect: 'invalid' },
    },
    {
      kind: apiServiceExportKind,
      ex: {
        label: 'export: served defaults to true (may be omitted)',
        obj: exp({ ...exportSpec, versions: [{ name: 'v1', storage: true, schema: { openAPIV3Schema: {} } }] }),
        expect: 'valid',
      },
    },
    {
      kind: apiServiceExportKind,
      ex: {
        label: 'export: claim with adopt and donate',
        obj: exp({ ...exportSpec, permissionClaims: [{ ...claim, autoAdopt: true, autoDonate: true }] }),
        expect: 'invalid',
      },
    },
    {
      kind: apiServiceExportKind,
      ex: {
        label: 'export: claim with adopt only',
        obj: exp({ ...exportSpec, permissionClaims: [{ ...claim, autoAdopt: true, autoDonate: false }] }),
        expect: 'valid',
      },
    },
    {
      kind: apiServiceExportKind,
      ex: {
        label: 'export: claim with bad owner',
        obj: exp({ ...exportSpec, permissionClaims: [{ ...claim, selector: { owner: 'Nobody' } }] }),
        expect: 'invalid',
      },
    },
    {
      kind: apiServiceExportKind,
      ex: { label: 'export: claim without version', obj: exp({ ...exportSpec, permissionClaims: [{ resource: 'secrets' }] }), expect: 'invalid' },
    },
    {
      kind: apiServiceExportKind,
      ex: { label: 'export: informerScope changed on update', obj: exp({ ...exportSpec, informerScope: 'Cluster' }), old: exp(exportSpec), expect: 'invalid' },
    },
    {
      kind: apiServiceExportKind,
      ex: { label: 'export: informerScope kept on update', obj: exp({ ...exportSpec, group: 'example.com' }), old: exp(exportSpec), expect: 'valid' },
    },
    { kind: clusterBindingKind, ex: { label: 'cluster binding named cluster', obj: cb('cluster'), expect: 'valid' } },
    { kind: clusterBindingKind, ex: { label: 'cluster binding named otherwise', obj: cb('my-cluster'), expect: 'invalid' } },
    { kind: clusterBindingKind, ex: { label: 'cluster binding with bad secret key', obj: cb('cluster', { name: 'k', key: 'config' }), expect: 'invalid' } },
    {
      kind: clusterBindingKind,
      ex: { label: 'cluster binding: secret ref changed', obj: cb('cluster', { name: 'other', key: 'kubeconfig' }), old: cb('cluster'), expect: 'invalid' },
    },
    {
      kind: clusterBindingKind,
      ex: {
        label: 'cluster binding: secret ref unchanged, status added',
        obj: { ...cb('cluster'), status: { konnectorVersion: 'v1' } },
        old: cb('cluster'),
        expect: 'valid',
      },
    },
    {
      kind: clusterBindingKind,
      ex: {
        label: 'cluster binding: empty pretty name',
        obj: { ...cb('cluster'), spec: { ...cb('cluster').spec, providerPrettyName: '' } },
        expect: 'invalid',
      },
    },
    { kind: appClusterBindingKind, ex: { label: 'app cluster binding: renamed on update', obj: acb('b'), old: acb('a'), expect: 'invalid' } },
    { kind: appClusterBindingKind, ex: { label: 'app cluster binding: same name on update', obj: acb('a'), old: acb('a'), expect: 'valid' } },
    { kind: appClusterBindingKind, ex: { label: 'app cluster binding: secret namespace changed', obj: acb('a', 'other'), old: acb('a'), expect: 'invalid' } },
    {
      kind: appClusterBindingKind,
      ex: {
        label: 'app cluster binding: konnector overrides with resources and probes',
        obj: {
          ...acb('a'),
          spec: {
            ...acb('a').spec,
            konnector: {
              deploy: true,
              overrides: {
                image: 'k:1',
                resources: { limits: { cpu: '500m', memory: 268435456 } },
                livenessProbe: { httpGet: { port: 'http', path: '/healthz' } },
              },
            },
          },
        },
        expect: 'valid',
      },
    },
    {
      kind: appClusterBindingKind,
      ex: {
        label: 'app cluster binding: bad quantity',
        obj: { ...acb('a'), spec: { ...acb('a').spec, konnector: { overrides: { resources: { limits: { cpu: 'lots' } } } } } },
        expect: 'invalid',
      },
    },
    {
      kind: appClusterBindingKind,
      ex: {
        label: 'app cluster binding: duplicate container ports (list-map)',
        obj: { ...acb('a'), spec: { ...acb('a').spec, konnector: { overrides: { ports: [{ containerPort: 80 }, { containerPort: 80, protocol: 'TCP' }] } } } },
        expect: 'invalid',
      },
    },
    { kind: apiServiceExportRequestKind, ex: { label: 'request: one resource', obj: req([{ resource: 'widgets', group: 'example.com' }]), expect: 'valid' } },
    { kind: apiServiceExportRequestKind, ex: { label: 'request: no resources', obj: req([]), expect: 'invalid' } },
    {
      kind: apiServiceExportRequestKind,
      ex: { label: 'request: resources changed', obj: req([{ resource: 'gadgets' }]), old: req([{ resource: 'widgets' }]), expect: 'invalid' },
    },
    {
      kind: apiServiceExportRequestKind,
      ex: {
        label: 'request: resources unchanged (group defaulted on both)',
        obj: req([{ resource: 'widgets', group: '' }]),
        old: req([{ resource: 'widgets' }]),
        expect: 'valid',
      },
    },
    {
      kind: apiServiceExportRequestKind,
      ex: { label: 'request: parameters changed', obj: req([{ resource: 'w' + 'x' }], { a: 2 }), old: req([{ resource: 'wx' }], { a: 1 }), expect: 'invalid' },
    },
    {
      kind: apiServiceExportRequestKind,
      ex: { label: 'request: bad phase', obj: { ...req([{ resource: 'widgets' }]), status: { phase: 'Done' } }, expect: 'invalid' },
    },
    { kind: apiServiceBindingKind, ex: { label: 'binding: accepted claim', obj: binding([{ ...claim, state: 'Accepted' }]), expect: 'valid' } },
    { kind: apiServiceBindingKind, ex: { label: 'binding: claim without state', obj: binding([claim]), expect: 'invalid' } },
    { kind: apiServiceBindingKind, ex: { label: 'binding: claim state Maybe', obj: binding([{ ...claim, state: 'Maybe' }]), expect: 'invalid' } },
    {
      kind: apiServiceBindingKind,
      ex: {
        label: 'binding: secret ref changed',
        obj: binding([], { namespace: 'x', name: 'kubeconfig', key: 'kubeconfig' }),
        old: binding([]),
        expect: 'invalid',
      },
    },
    {
      kind: apiServiceBindingKind,
      ex: {
        label: 'binding: no spec (spec optional)',
        obj: { apiVersion: apiServiceBindingKind.apiVersion, kind: 'APIServiceBinding', metadata: { name: 'x' } },
        expect: 'valid',
      },
    },
    {
      kind: apiServiceNamespaceKind,
      ex: { label: 'namespace: empty spec', obj: apiServiceNamespaceKind.make('default', {}, { namespace: 'c' }), expect: 'valid' },
    },
    {
      kind: apiServiceNamespaceKind,
      ex: { label: 'namespace: field in empty spec', obj: { ...apiServiceNamespaceKind.make('default', {}), spec: { x: 1 } }, expect: 'invalid' },
    },
    {
      kind: apiServiceExportTemplateKind,
      ex: {
        label: 'template: capitalised selector key',
        obj: apiServiceExportTemplateKind.make('t', { APIServiceSelector: { group: 'anynines.com', resource: 'postgresqlinstances' } }),
        expect: 'valid',
      },
    },
    {
      kind: apiServiceExportTemplateKind,
      ex: {
        label: 'template: lower-case selector key',
        obj: { ...apiServiceExportTemplateKind.make('t', { APIServiceSelector: { resource: 'x' } }), spec: { apiServiceSelector: { resource: 'x' } } },
        expect: 'invalid',
      },
    },
  ];
}
