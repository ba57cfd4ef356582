/**
 * Derives the composite-resource (XR) CRD and the claim CRD from a Crossplane
 * CompositeResourceDefinition, field for field as Crossplane does:
 * - Crossplane 2.x: `crossplane-runtime/v2 pkg/xcrd` (`ForCompositeResource`, `ForCompositeResourceClaim`);
 * - Crossplane 1.20: `crossplane internal/xcrd` (same functions, older property sets).
 *
 * Summary of what gets injected:
 * - root: `required: [spec]`, `metadata.name.maxLength` 63 (or the XRD's smaller value), the XRD
 *   schema's description; root `x-kubernetes-validations` are kept on 2.x only;
 * - spec: the XRD's spec properties, required, oneOf, CEL rules and preserve flag, then
 *   Crossplane's own properties (which win on conflict):
 *   - claims: compositionRef, compositionSelector, compositionRevisionRef,
 *     compositionRevisionSelector, compositionUpdatePolicy, compositeDeletePolicy (default from
 *     `defaultCompositeDeletePolicy`, itself defaulted to Background on v1 XRDs), resourceRef,
 *     writeConnectionSecretToRef{name}
 *     (+ publishConnectionDetailsTo on 1.20);
 *   - legacy (v1 / LegacyCluster) XRs: the same composition fields, compositionUpdatePolicy (default
 *     from `defaultCompositionUpdatePolicy`, itself defaulted to Automatic), claimRef, resourceRefs, writeConnectionSecretToRef{name,namespace}
 *     (+ publishConnectionDetailsTo on 1.20);
 *   - modern (v2 Cluster/Namespaced) XRs: the composition fields and resourceRefs under `spec.crossplane`;
 * - status: the XRD's status properties, then conditions (+ connectionDetails.lastPublishedTime and
 *   claimConditionTypes for legacy XRs and claims);
 * - names: categories + `composite` / `claim`; printer columns SYNCED, READY, COMPOSITION /
 *   CONNECTION-SECRET, AGE; the status subresource.
 */
import type { JSONSchemaProps } from '../../contract/api/_schema.js';
import { sortKeys } from '../../contract/api/_schema.js';
import type { CustomResourceDefinition } from '../../contract/api/_kind.js';

/** Which Crossplane's derivation to reproduce. */
export type CrossplaneTarget = '2' | '1.20';

export interface CompositeResourceDefinitionLike {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; labels?: Record<string, string> };
  spec: {
    group: string;
    names: { kind: string; plural: string; singular?: string; listKind?: string; shortNames?: string[]; categories?: string[] };
    claimNames?: { kind: string; plural: string; singular?: string; listKind?: string; shortNames?: string[]; categories?: string[] };
    scope?: 'Namespaced' | 'Cluster' | 'LegacyCluster';
    defaultCompositeDeletePolicy?: 'Background' | 'Foreground';
    defaultCompositionUpdatePolicy?: 'Automatic' | 'Manual';
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    conversion?: unknown;
    versions: Array<{
      name: string;
      served: boolean;
      referenceable: boolean;
      deprecated?: boolean;
      deprecationWarning?: string;
      schema?: { openAPIV3Schema?: JSONSchemaProps };
      additionalPrinterColumns?: unknown[];
      subresources?: { scale?: unknown };
    }>;
  };
}

export interface DeriveOptions {
  /** @default '2' */
  readonly crossplane?: CrossplaneTarget;
}

/** A CRD as derived by Crossplane (scale subresource and conversion included). */
export type DerivedCrd = CustomResourceDefinition & { spec: CustomResourceDefinition['spec'] & { conversion?: unknown } };

const MAX_NAME_LENGTH = 63;

const str = (): JSONSchemaProps => ({ type: 'string' });
const nameRef = (): JSONSchemaProps => ({ type: 'object', required: ['name'], properties: { name: str() } });
const labelSelector = (): JSONSchemaProps => ({
  type: 'object',
  required: ['matchLabels'],
  properties: { matchLabels: { type: 'object', additionalProperties: str() } },
});
const enumStr = (values: string[], def?: string): JSONSchemaProps => ({ type: 'string', enum: values, ...(def ? { default: def } : {}) });

function publishConnectionDetailsTo(): JSONSchemaProps {
  const stringMap: JSONSchemaProps = { type: 'object', additionalProperties: str() };
  return {
    type: 'object',
    required: ['name'],
    properties: {
      name: str(),
      configRef: { type: 'object', default: { name: 'default' }, properties: { name: str() } },
      metadata: { type: 'object', properties: { labels: stringMap, annotations: { ...stringMap }, type: str() } },
    },
  };
}

function compositionProps(updatePolicyDefault?: string): Record<string, JSONSchemaProps> {
  return {
    compositionRef: nameRef(),
    compositionSelector: labelSelector(),
    compositionRevisionRef: nameRef(),
    compositionRevisionSelector: labelSelector(),
    compositionUpdatePolicy: enumStr(['Automatic', 'Manual'], updatePolicyDefault),
  };
}

function resourceRefs(withNamespace: boolean): JSONSchemaProps {
  const properties: Record<string, JSONSchemaProps> = { apiVersion: str(), name: str(), kind: str() };
  if (withNamespace) properties.namespace = str();
  return { type: 'array', 'x-kubernetes-list-type': 'atomic', items: { type: 'object', required: ['apiVersion', 'kind'], properties } };
}

/** Spec properties Crossplane injects into XRs. */
export function compositeResourceSpecProps(
  scope: 'Namespaced' | 'Cluster' | 'LegacyCluster',
  target: CrossplaneTarget,
  updatePolicyDefault?: string,
): Record<string, JSONSchemaProps> {
  if (target === '1.20') {
    return {
      ...compositionProps(updatePolicyDefault),
      claimRef: {
        type: 'object',
        required: ['apiVersion', 'kind', 'namespace', 'name'],
        properties: { apiVersion: str(), kind: str(), namespace: str(), name: str() },
      },
      resourceRefs: resourceRefs(false),
      publishConnectionDetailsTo: publishConnectionDetailsTo(),
      writeConnectionSecretToRef: { type: 'object', required: ['name', 'namespace'], properties: { name: str(), namespace: str() } },
    };
  }
  const props: Record<string, JSONSchemaProps> = { ...compositionProps(updatePolicyDefault), resourceRefs: resourceRefs(scope !== 'Namespaced') };
  if (scope === 'LegacyCluster') {
    props.claimRef = {
      type: 'object',
      required: ['apiVersion', 'kind', 'namespace', 'name'],
      properties: { apiVersion: str(), kind: str(), namespace: str(), name: str() },
    };
    props.writeConnectionSecretToRef = { type: 'object', required: ['name', 'namespace'], properties: { name: str(), namespace: str() } };
    return props;
  }
  return { crossplane: { type: 'object', description: 'Configures how Crossplane will reconcile this composite resource', properties: props } };
}

/** Spec properties Crossplane injects into claims. */
export function compositeResourceClaimSpecProps(target: CrossplaneTarget, deletePolicyDefault?: string): Record<string, JSONSchemaProps> {
  const props: Record<string, JSONSchemaProps> = {
    ...compositionProps(),
    compositeDeletePolicy: enumStr(['Background', 'Foreground'], deletePolicyDefault),
    resourceRef: { type: 'object', required: ['apiVersion', 'kind', 'name'], properties: { apiVersion: str(), kind: str(), name: str() } },
    writeConnectionSecretToRef: { type: 'object', required: ['name'], properties: { name: str() } },
  };
  if (target === '1.20') props.publishConnectionDetailsTo = publishConnectionDetailsTo();
  return props;
}

/** Status properties Crossplane injects. */
export function compositeResourceStatusProps(scope: 'Namespaced' | 'Cluster' | 'LegacyCluster', target: CrossplaneTarget): Record<string, JSONSchemaProps> {
  const condProps: Record<string, JSONSchemaProps> = {
    lastTransitionTime: { type: 'string', format: 'date-time' },
    message: str(),
    reason: str(),
    status: str(),
    type: str(),
  };
  if (target === '2') condProps.observedGeneration = { type: 'integer', format: 'int64' };
  const props: Record<string, JSONSchemaProps> = {
    conditions: {
      description: 'Conditions of the resource.',
      type: 'array',
      'x-kubernetes-list-map-keys': ['type'],
      'x-kubernetes-list-type': 'map',
      items: { type: 'object', required: ['lastTransitionTime', 'reason', 'status', 'type'], properties: condProps },
    },
  };
  if (target === '1.20' || scope === 'LegacyCluster') {
    props.connectionDetails = { type: 'object', properties: { lastPublishedTime: { type: 'string', format: 'date-time' } } };
    props.claimConditionTypes = { type: 'array', 'x-kubernetes-list-type': 'set', items: str() };
  }
  return props;
}

function printerColumns(kind: 'xr' | 'claim', scope: string, target: CrossplaneTarget): unknown[] {
  const legacy = target === '1.20' || scope === 'LegacyCluster';
  const base = [
    { name: 'SYNCED', type: 'string', jsonPath: ".status.conditions[?(@.type=='Synced')].status" },
    { name: 'READY', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
  ];
  if (kind === 'claim') {
    return [
      ...base,
      { name: 'CONNECTION-SECRET', type: 'string', jsonPath: '.spec.writeConnectionSecretToRef.name' },
      { name: 'AGE', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ];
  }
  return [
    ...base,
    { name: 'COMPOSITION', type: 'string', jsonPath: legacy ? '.spec.compositionRef.name' : '.spec.crossplane.compositionRef.name' },
    {
      name: 'COMPOSITIONREVISION',
      type: 'string',
      jsonPath: legacy ? '.spec.compositionRevisionRef.name' : '.spec.crossplane.compositionRevisionRef.name',
      priority: 1,
    },
    { name: 'AGE', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ];
}

/** The XRD's scope as Crossplane defaults it: v1 XRDs are LegacyCluster, v2 XRDs Namespaced. */
export function xrdScope(xrd: CompositeResourceDefinitionLike): 'Namespaced' | 'Cluster' | 'LegacyCluster' {
  if (xrd.spec.scope) return xrd.spec.scope;
  return xrd.apiVersion === 'apiextensions.crossplane.io/v2' ? 'Namespaced' : 'LegacyCluster';
}

function genVersion(
  v: CompositeResourceDefinitionLike['spec']['versions'][number],
  target: CrossplaneTarget,
  where: string,
): DerivedCrd['spec']['versions'][number] & Record<string, unknown> {
  const s = v.schema?.openAPIV3Schema;
  if (!s) throw new Error(`${where}.schema.openAPIV3Schema: custom resource validation cannot be nil (version ${JSON.stringify(v.name)} has no schema)`);
  const xSpec = s.properties?.spec ?? {};
  const xStatus = s.properties?.status ?? {};
  let maxLength = MAX_NAME_LENGTH;
  const old = s.properties?.metadata?.properties?.name?.maxLength;
  if (typeof old === 'number' && old < maxLength) maxLength = old;

  const spec: JSONSchemaProps = { type: 'object', properties: { ...structuredClone(xSpec.properties ?? {}) } };
  if (xSpec.required?.length) spec.required = [...xSpec.required];
  if (xSpec['x-kubernetes-preserve-unknown-fields'] !== undefined) spec['x-kubernetes-preserve-unknown-fields'] = xSpec['x-kubernetes-preserve-unknown-fields'];
  if (xSpec['x-kubernetes-validations']?.length) spec['x-kubernetes-validations'] = structuredClone(xSpec['x-kubernetes-validations']);
  if (xSpec.oneOf?.length) spec.oneOf = structuredClone(xSpec.oneOf);
  if (xSpec.description !== undefined) spec.description = xSpec.description;

  const status: JSONSchemaProps = { type: 'object', properties: { ...structuredClone(xStatus.properties ?? {}) } };
  if (xStatus.required?.length) status.required = [...xStatus.required];
  if (xStatus['x-kubernetes-validations']?.length) status['x-kubernetes-validations'] = structuredClone(xStatus['x-kubernetes-validations']);
  if (xStatus.oneOf?.length) status.oneOf = structuredClone(xStatus.oneOf);
  if (xStatus.description !== undefined) status.description = xStatus.description;

  const root: JSONSchemaProps = {
    type: 'object',
    required: ['spec'],
    properties: {
      apiVersion: str(),
      kind: str(),
      metadata: { type: 'object', properties: { name: { type: 'string', maxLength } } },
      spec,
      status,
    },
  };
  if (s.description !== undefined) root.description = s.description;
  if (target === '2' && s['x-kubernetes-validations']?.length) root['x-kubernetes-validations'] = structuredClone(s['x-kubernetes-validations']);

  const out: DerivedCrd['spec']['versions'][number] & Record<string, unknown> = {
    name: v.name,
    served: v.served,
    storage: v.referenceable,
    schema: { openAPIV3Schema: root },
    subresources: { status: {} },
  };
  if (v.deprecated) out.deprecated = true;
  if (v.deprecationWarning !== undefined) out.deprecationWarning = v.deprecationWarning;
  if (v.additionalPrinterColumns?.length) out.additionalPrinterColumns = structuredClone(v.additionalPrinterColumns) as never;
  if (target === '2' && v.subresources?.scale) (out.subresources as Record<string, unknown>).scale = structuredClone(v.subresources.scale);
  return out;
}

function crdMetadata(name: string, xrd: CompositeResourceDefinitionLike): DerivedCrd['metadata'] {
  const md: DerivedCrd['metadata'] = { name };
  const labels = { ...(xrd.metadata?.labels ?? {}), ...(xrd.spec.metadata?.labels ?? {}) };
  if (Object.keys(labels).length) md.labels = labels;
  if (xrd.spec.metadata?.annotations) md.annotations = { ...xrd.spec.metadata.annotations };
  return md;
}

/**
 * The XRD's policies as Crossplane reads them: the XRD CRD defaults `defaultCompositionUpdatePolicy`
 * to Automatic (v1 and v2 API) and `defaultCompositeDeletePolicy` to Background (v1 API only), so
 * the stored XRD always carries them and the derived CRDs get them as defaults of
 * `spec.compositionUpdatePolicy` (XRs) and `spec.compositeDeletePolicy` (claims).
 */
export function storedDefaults(xrd: CompositeResourceDefinitionLike): { defaultCompositionUpdatePolicy: string; defaultCompositeDeletePolicy?: string } {
  const v2 = xrd.apiVersion === 'apiextensions.crossplane.io/v2';
  return {
    defaultCompositionUpdatePolicy: xrd.spec.defaultCompositionUpdatePolicy ?? 'Automatic',
    defaultCompositeDeletePolicy: xrd.spec.defaultCompositeDeletePolicy ?? (v2 ? undefined : 'Background'),
  };
}

function checkXrd(xrd: CompositeResourceDefinitionLike): void {
  const where = `CompositeResourceDefinition ${JSON.stringify(xrd.metadata?.name ?? '')}`;
  if (!xrd?.spec?.group || !xrd.spec.names?.kind || !xrd.spec.names?.plural) {
    throw new Error(
      `${where}: spec.group, spec.names.kind and spec.names.plural are required (got ${JSON.stringify({ group: xrd?.spec?.group, names: xrd?.spec?.names })})`,
    );
  }
  if (!Array.isArray(xrd.spec.versions) || xrd.spec.versions.length === 0) {
    throw new Error(`${where}: spec.versions must list at least one version (got ${JSON.stringify(xrd.spec.versions)})`);
  }
}

/** Derives the XR CRD of an XRD, as Crossplane's `ForCompositeResource`. */
export function deriveXrCrd(xrd: CompositeResourceDefinitionLike, opts: DeriveOptions = {}): DerivedCrd {
  checkXrd(xrd);
  const target = opts.crossplane ?? '2';
  const scope = target === '1.20' ? 'LegacyCluster' : xrdScope(xrd);
  const names = structuredClone(xrd.spec.names) as DerivedCrd['spec']['names'];
  names.categories = [...(names.categories ?? []), 'composite'];
  const versions = xrd.spec.versions.map((v, i) => {
    const crdv = genVersion(v, target, `spec.versions[${i}]`);
    crdv.additionalPrinterColumns = [...(crdv.additionalPrinterColumns ?? []), ...(printerColumns('xr', scope, target) as never[])];
    Object.assign(
      crdv.schema.openAPIV3Schema.properties!.spec.properties!,
      compositeResourceSpecProps(scope, target, storedDefaults(xrd).defaultCompositionUpdatePolicy),
    );
    if (target === '2') Object.assign(crdv.schema.openAPIV3Schema.properties!.status.properties!, compositeResourceStatusProps(scope, target));
    else Object.assign(crdv.schema.openAPIV3Schema.properties!.status.properties!, compositeResourceStatusProps('LegacyCluster', target));
    return crdv;
  });
  const spec: DerivedCrd['spec'] = {
    group: xrd.spec.group,
    names,
    scope: scope === 'Namespaced' ? 'Namespaced' : 'Cluster',
    versions,
  };
  if (xrd.spec.conversion !== undefined) spec.conversion = structuredClone(xrd.spec.conversion);
  return sortKeys({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: crdMetadata(xrd.metadata?.name ?? `${xrd.spec.names.plural}.${xrd.spec.group}`, xrd),
    spec,
  }) as DerivedCrd;
}

/** Derives the claim CRD of an XRD with `claimNames`, as Crossplane's `ForCompositeResourceClaim`. */
export function deriveClaimCrd(xrd: CompositeResourceDefinitionLike, opts: DeriveOptions = {}): DerivedCrd {
  checkXrd(xrd);
  const target = opts.crossplane ?? '2';
  const cn = xrd.spec.claimNames;
  const where = `CompositeResourceDefinition ${JSON.stringify(xrd.metadata?.name ?? '')}`;
  if (!cn) throw new Error(`${where}: spec.claimNames is missing, so there is no claim CRD to derive`);
  const n = xrd.spec.names;
  for (const [field, a, b] of [
    ['kind', cn.kind, n.kind],
    ['plural', cn.plural, n.plural],
    ['singular', cn.singular, n.singular],
    ['listKind', cn.listKind, n.listKind],
  ] as const) {
    if (a && a === b) throw new Error(`${where}: spec.claimNames.${field} ${JSON.stringify(a)} conflicts with composite resource name (spec.names.${field})`);
  }
  const names = structuredClone(cn) as DerivedCrd['spec']['names'];
  names.categories = [...(names.categories ?? []), 'claim'];
  const versions = xrd.spec.versions.map((v, i) => {
    const crdv = genVersion(v, target, `spec.versions[${i}]`);
    crdv.additionalPrinterColumns = [...(crdv.additionalPrinterColumns ?? []), ...(printerColumns('claim', 'LegacyCluster', target) as never[])];
    Object.assign(
      crdv.schema.openAPIV3Schema.properties!.spec.properties!,
      compositeResourceClaimSpecProps(target, storedDefaults(xrd).defaultCompositeDeletePolicy),
    );
    Object.assign(crdv.schema.openAPIV3Schema.properties!.status.properties!, compositeResourceStatusProps('LegacyCluster', target));
    return crdv;
  });
  const spec: DerivedCrd['spec'] = { group: xrd.spec.group, names, scope: 'Namespaced', versions };
  if (xrd.spec.conversion !== undefined) spec.conversion = structuredClone(xrd.spec.conversion);
  return sortKeys({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: crdMetadata(`${cn.plural}.${xrd.spec.group}`, xrd),
    spec,
  }) as DerivedCrd;
}
