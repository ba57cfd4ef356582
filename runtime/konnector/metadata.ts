/** Object copying and comparison helpers shared by the sync reconcilers. */
import { createHash } from 'node:crypto';
import { isNotFound, type KubeClient, type KubeObject, type ObjectMeta, type ResourceRef } from '../core/client.js';

/** Deep equality for JSON values. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => deepEqual(ao[k], bo[k]));
}

/**
 * True when every field of `want` is present with the same value in `have` (objects are compared
 * key by key, arrays and scalars exactly). Fields only in `have` (added by other managers, e.g.
 * Crossplane's `spec.resourceRef`) are ignored.
 */
export function isSubset(want: unknown, have: unknown): boolean {
  if (want === undefined) return true;
  if (want === null || typeof want !== 'object' || Array.isArray(want)) return deepEqual(want, have);
  if (have === null || typeof have !== 'object' || Array.isArray(have)) return false;
  const h = have as Record<string, unknown>;
  return Object.entries(want as Record<string, unknown>).every(([k, v]) => isSubset(v, h[k]));
}

/** Stable JSON (sorted keys). */
export function stableStringify(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return '[' + v.map(stableStringify).join(',') + ']';
  const o = v as Record<string, unknown>;
  return (
    '{' +
    Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => JSON.stringify(k) + ':' + stableStringify(o[k]))
      .join(',') +
    '}'
  );
}

export const hashOf = (v: unknown): string => createHash('sha256').update(stableStringify(v)).digest('hex').slice(0, 32);

/**
 * Metadata for a copy on the other cluster: name/namespace as given, labels and annotations kept,
 * everything server-managed dropped (uid, resourceVersion, generation, ownerReferences, finalizers,
 * managedFields, timestamps).
 */
export function cleanMeta(m: ObjectMeta, name: string, namespace: string | undefined, extraAnnotations: Record<string, string> = {}): ObjectMeta {
  const out: ObjectMeta = { name };
  if (namespace) out.namespace = namespace;
  if (m.labels && Object.keys(m.labels).length) out.labels = { ...m.labels };
  const ann = { ...(m.annotations ?? {}), ...extraAnnotations };
  delete ann['kubectl.kubernetes.io/last-applied-configuration'];
  if (Object.keys(ann).length) out.annotations = ann;
  return out;
}

/** A shallow copy of an object without status and with the given metadata. */
export function copyWithMeta(o: KubeObject, meta: ObjectMeta, opts: { keepStatus?: boolean } = {}): KubeObject {
  const { metadata: _m, status, ...rest } = o as KubeObject & { status?: unknown };
  const out: KubeObject = { ...rest, metadata: meta };
  if (opts.keepStatus && status !== undefined) out.status = status;
  return out;
}

export const hasFinalizer = (o: KubeObject, f: string): boolean => (o.metadata.finalizers ?? []).includes(f);
export const isDeleting = (o: KubeObject | undefined): boolean => !!o?.metadata.deletionTimestamp;

/**
 * Adds or removes one finalizer with a JSON patch guarded by the object's resourceVersion (a concurrent
 * change makes the patch fail instead of being overwritten). Returns the patched object; undefined when
 * nothing had to change or, on removal, when the object is already gone.
 */
export async function setFinalizer<T extends KubeObject>(
  client: Pick<KubeClient, 'jsonPatch'>,
  r: ResourceRef,
  o: T,
  finalizer: string,
  present: boolean,
): Promise<T | undefined> {
  const cur = o.metadata.finalizers ?? [];
  if (cur.includes(finalizer) === present) return undefined;
  const value = present ? [...cur, finalizer] : cur.filter((f) => f !== finalizer);
  try {
    return await client.jsonPatch<T>(r, o.metadata.namespace, o.metadata.name!, [
      { op: 'test', path: '/metadata/resourceVersion', value: o.metadata.resourceVersion },
      { op: 'add', path: '/metadata/finalizers', value },
    ]);
  } catch (e) {
    if (!present && isNotFound(e)) return undefined;
    throw e;
  }
}
