/** APIServiceExport → CustomResourceDefinition, and who owns a CRD. */
import type { KubeObject, OwnerReference } from '../core/client.js';
import { deepEqual, isSubset } from './metadata.js';
import { EXPORTED_LABEL, type APIServiceBinding, type APIServiceExport } from './types.js';
import { BIND_API_VERSION, apiServiceBindingKind } from '../../contract/index.js';

export type CRD = KubeObject & {
  spec: {
    group: string;
    names: Record<string, unknown>;
    scope: string;
    versions: Array<Record<string, unknown>>;
    [k: string]: unknown;
  };
  status?: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>; acceptedNames?: unknown; storedVersions?: string[] };
};

export function bindingOwnerRef(b: APIServiceBinding): OwnerReference {
  return {
    apiVersion: BIND_API_VERSION,
    kind: apiServiceBindingKind.kind,
    name: b.metadata.name!,
    uid: b.metadata.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The CRD the app cluster gets for an export: same group, names, scope, versions (schema, subresources, printer columns). */
export function exportToCRD(exp: APIServiceExport, binding: APIServiceBinding): CRD {
  const s = exp.spec;
  const names: Record<string, unknown> = { ...s.names };
  if (!names.singular) names.singular = String(s.names.kind).toLowerCase();
  if (!names.listKind) names.listKind = `${s.names.kind}List`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${s.names.plural}.${s.group}`,
      labels: { [EXPORTED_LABEL]: 'true' },
      ownerReferences: [bindingOwnerRef(binding)],
    },
    spec: {
      group: s.group,
      names,
      scope: s.scope,
      versions: s.versions.map((v) => {
        const out: Record<string, unknown> = { name: v.name, served: v.served ?? true, storage: v.storage ?? false, schema: v.schema };
        if (v.deprecated) out.deprecated = v.deprecated;
        if (v.deprecationWarning) out.deprecationWarning = v.deprecationWarning;
        if (v.subresources && Object.keys(v.subresources).length) out.subresources = v.subresources;
        if (v.additionalPrinterColumns?.length) out.additionalPrinterColumns = v.additionalPrinterColumns;
        return out;
      }),
    },
  };
}

/** Controller owner of an object, if any. */
export const controllerOf = (o: KubeObject): OwnerReference | undefined => o.metadata.ownerReferences?.find((r) => r.controller);

export function isOwnedBy(o: KubeObject, b: APIServiceBinding): boolean {
  const c = controllerOf(o);
  return !!c && c.kind === apiServiceBindingKind.kind && c.uid === b.metadata.uid;
}

/** Whether the live CRD needs an update to match `want` (compares the fields we set; the API server adds defaults). */
export function crdNeedsUpdate(live: CRD, want: CRD): boolean {
  const l = live.spec;
  const w = want.spec;
  if (l.group !== w.group || l.scope !== w.scope) return true;
  if (!Object.entries(w.names).every(([k, v]) => deepEqual(v, l.names[k]))) return true;
  if (l.versions.length !== w.versions.length) return true;
  return w.versions.some((wv, i) => {
    const lv = l.versions[i] ?? {};
    const { schema, ...rest } = wv;
    // The schema is compared exactly (removed properties must be removed); other fields as a subset,
    // because the API server fills defaults.
    return (
      !deepEqual(schema, lv.schema) ||
      !isSubset(rest, lv) ||
      (!!lv.subresources && !wv.subresources) ||
      (!!lv.additionalPrinterColumns && !wv.additionalPrinterColumns)
    );
  });
}

export function crdEstablished(c: CRD | undefined): boolean {
  return !!c?.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True');
}
