/** Object copying and comparison helpers shared by the sync reconcilers. */
import { createHash } from 'node:crypto';
import { isNotFound, type KubeClient, type KubeObject, type ObjectMeta, type ResourceRef } from '../core/client.js';
import { keyPatternMatches, MetadataKeyPolicy } from '../../contract/metadata-keys.js';
import type { AcceptablePermissionClaim } from './types.js';

// The three helpers below run several times per synced object (bench:konnector): plain loops, no
// closures or intermediate arrays, so they cost little to run and little for V8 to optimize.

/** Deep equality for JSON values (a key whose value is undefined counts as absent). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  const aa = Array.isArray(a);
  if (aa !== Array.isArray(b)) return false;
  if (aa) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!deepEqual(x[i], y[i])) return false;
    return true;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  let n = 0;
  for (const k in ao) {
    if (ao[k] === undefined) continue;
    if (!Object.prototype.hasOwnProperty.call(bo, k) || !deepEqual(ao[k], bo[k])) return false;
    n++;
  }
  for (const k in bo) if (bo[k] !== undefined) n--;
  return n === 0;
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
  const w = want as Record<string, unknown>;
  const h = have as Record<string, unknown>;
  for (const k in w) if (!isSubset(w[k], Object.prototype.hasOwnProperty.call(h, k) ? h[k] : undefined)) return false;
  return true;
}

/** Stable JSON (sorted keys; a key whose value is undefined is left out, as JSON.stringify does). */
export function stableStringify(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) out += (i > 0 ? ',' : '') + stableStringify(v[i]);
    return out + ']';
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort();
  let out = '{';
  let first = true;
  for (const k of keys) {
    if (o[k] === undefined) continue;
    out += (first ? '' : ',') + JSON.stringify(k) + ':' + stableStringify(o[k]);
    first = false;
  }
  return out + '}';
}

export const hashOf = (v: unknown): string => createHash('sha256').update(stableStringify(v)).digest('hex').slice(0, 32);

/** Which keys of a source's labels and annotations go onto its copy on the other cluster (one direction). */
export interface MetadataFilter {
  label(key: string): boolean;
  annotation(key: string): boolean;
}

/** The keys the policy lets cross (contract/metadata-keys.ts), the same in both directions. */
export function policyFilter(policy: MetadataKeyPolicy): MetadataFilter {
  return { label: (k) => policy.crosses('label', k), annotation: (k) => policy.crosses('annotation', k) };
}

/** The documented defaults of contract/metadata-keys.ts, nothing added. */
export const DEFAULT_METADATA_FILTER: MetadataFilter = policyFilter(MetadataKeyPolicy.DEFAULT);

type KeyPatterns = ReadonlyArray<{ pattern?: string }> | undefined;

/** `base` narrowed to the claim's patterns (when the claim lists any: an empty list lets nothing through). */
function narrowed(base: (k: string) => boolean, patterns: KeyPatterns): (k: string) => boolean {
  if (patterns === undefined) return base;
  const ps = patterns.map((p) => p?.pattern).filter((p): p is string => typeof p === 'string' && p !== '');
  return (k) => base(k) && ps.some((p) => keyPatternMatches(p, k));
}

/**
 * The metadata filters of one permission claim, by direction of the copy: `up` (a consumer-owned
 * object to its provider-side copy) narrowed by the claim's `read.labels` / `read.annotations`,
 * `down` (a provider-owned object to its app-cluster copy) by `update.labels` / `update.annotations`.
 * A claim narrows the policy, never widens it: a key the policy does not let cross does not cross
 * whatever the claim lists. `read.labelsOnProviderOwnedObjects`, `read.overrideAnnotations`,
 * `update.labelsOnConsumerOwnedObjects` and `update.annotationsOnConsumerOwnedObjects` concern
 * metadata the konnector never copies (an owner's object is never written from its copy), so nothing
 * crosses that way.
 */
export function claimMetadataFilters(
  policy: MetadataKeyPolicy,
  claim: Pick<AcceptablePermissionClaim, 'read' | 'update'>,
): { up: MetadataFilter; down: MetadataFilter } {
  const base = policyFilter(policy);
  return {
    up: { label: narrowed(base.label, claim.read?.labels), annotation: narrowed(base.annotation, claim.read?.annotations) },
    down: { label: narrowed(base.label, claim.update?.labels), annotation: narrowed(base.annotation, claim.update?.annotations) },
  };
}

const pick = (m: Record<string, string> | undefined, keep: (k: string) => boolean): Record<string, string> =>
  Object.fromEntries(Object.entries(m ?? {}).filter(([k]) => keep(k) && !MetadataKeyPolicy.isKonnectorKey(k)));

/**
 * Metadata for a copy on the other cluster: name/namespace as given, the labels and annotations the
 * filter lets through (never the konnector's own keys: a source's values of those are dropped, the
 * konnector sets them through `extraAnnotations`), everything server-managed dropped (uid,
 * resourceVersion, generation, ownerReferences, finalizers, managedFields, timestamps).
 */
export function cleanMeta(
  m: ObjectMeta,
  name: string,
  namespace: string | undefined,
  extraAnnotations: Record<string, string> = {},
  filter: MetadataFilter = DEFAULT_METADATA_FILTER,
): ObjectMeta {
  const out: ObjectMeta = { name };
  if (namespace) out.namespace = namespace;
  const labels = pick(m.labels, (k) => filter.label(k));
  if (Object.keys(labels).length) out.labels = labels;
  const ann = { ...pick(m.annotations, (k) => filter.annotation(k)), ...extraAnnotations };
  if (Object.keys(ann).length) out.annotations = ann;
  return out;
}

/**
 * Whether a copy's metadata already is what the konnector would write (`want`, from cleanMeta): the
 * same labels, every wanted annotation with its value, and no annotation that never crosses (one an
 * older konnector copied, or someone set on the copy later). Other annotations on the copy (set in its
 * own cluster) are not a difference; they go with the copy's next update.
 */
export function copyMetadataInSync(have: ObjectMeta, want: ObjectMeta): boolean {
  const ann = have.annotations ?? {};
  return (
    deepEqual(have.labels ?? {}, want.labels ?? {}) &&
    Object.entries(want.annotations ?? {}).every(([k, v]) => ann[k] === v) &&
    Object.keys(ann).every((k) => want.annotations?.[k] !== undefined || !MetadataKeyPolicy.isNeverCrossing(k))
  );
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
