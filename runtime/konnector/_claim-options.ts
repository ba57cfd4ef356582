/**
 * Pure helpers for the options of an accepted permission claim (kcp / kube-bind v1alpha2 style) that
 * ClaimSync honours besides the selector:
 *
 * - `create.replaceExisting` (default false): a consumer object of the same name that is not a
 *   konnector copy is replaced by the copy of the provider-owned object (otherwise left alone);
 * - `onConflict.recreateWhenConsumerSideDeleted` (default true): a copy the consumer deleted is
 *   recreated; when false it stays deleted until the provider object changes (new uid or
 *   resourceVersion);
 * - `update.alwaysRecreate` (default false): a copy that must change is deleted and recreated instead
 *   of updated;
 * - `update.preserving`: paths whose value on the target (present or absent) survives updates of the
 *   copy. Grammar: `<field>` (a whole top-level field, e.g. `data`), `<field>.<key>` (one key of a
 *   top-level map field; the key is everything after the first dot, so `data.tls.crt` is key
 *   `tls.crt`), `metadata.labels[.<key>]`, `metadata.annotations[.<key>]`. Anything else
 *   (`metadata.name`, `apiVersion`, `kind`, `status`, empty) is invalid and ignored.
 */
import type { KubeObject } from '../core/client.js';
import type { AcceptablePermissionClaim } from './types.js';

export interface PreservePath {
  /** A top-level field name, or `metadata.labels` / `metadata.annotations`. */
  field: string;
  /** One key of that (map) field; undefined = the whole field. */
  key?: string;
}

export interface ClaimOptions {
  replaceExisting: boolean;
  recreateWhenConsumerSideDeleted: boolean;
  alwaysRecreate: boolean;
  preserving: PreservePath[];
  /** `update.preserving` entries that are not valid paths (ignored; logged by the caller). */
  invalidPreserving: string[];
}

const META_MAPS = ['metadata.labels', 'metadata.annotations'] as const;
const NOT_PRESERVABLE = new Set(['metadata', 'apiVersion', 'kind', 'status']);

/** Parses one `update.preserving` entry (a leading `.` is allowed); undefined when invalid. */
export function parsePreservePath(path: string): PreservePath | undefined {
  const s = path.trim().replace(/^\./, '');
  for (const m of META_MAPS) {
    if (s === m) return { field: m };
    if (s.startsWith(m + '.')) {
      const key = s.slice(m.length + 1);
      return key ? { field: m, key } : undefined;
    }
  }
  const dot = s.indexOf('.');
  const field = dot < 0 ? s : s.slice(0, dot);
  const key = dot < 0 ? undefined : s.slice(dot + 1);
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(field) || NOT_PRESERVABLE.has(field) || key === '') return undefined;
  return key === undefined ? { field } : { field, key };
}

/** The claim's options with their defaults applied. */
export function claimOptions(claim: Pick<AcceptablePermissionClaim, 'create' | 'onConflict' | 'update'>): ClaimOptions {
  const preserving: PreservePath[] = [];
  const invalidPreserving: string[] = [];
  for (const p of claim.update?.preserving ?? []) {
    const parsed = parsePreservePath(p);
    if (parsed) preserving.push(parsed);
    else invalidPreserving.push(p);
  }
  return {
    replaceExisting: claim.create?.replaceExisting === true,
    recreateWhenConsumerSideDeleted: claim.onConflict?.recreateWhenConsumerSideDeleted !== false,
    alwaysRecreate: claim.update?.alwaysRecreate === true,
    preserving,
    invalidPreserving,
  };
}

const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));
const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Sets (value defined) or removes (undefined) `holder[field][key]`; an emptied map is removed. */
function setKey(holder: Record<string, unknown>, field: string, key: string, value: unknown): void {
  const cur = holder[field];
  if (value === undefined) {
    if (!isMap(cur)) return;
    const next = { ...cur };
    delete next[key];
    if (Object.keys(next).length) holder[field] = next;
    else delete holder[field];
    return;
  }
  holder[field] = { ...(isMap(cur) ? cur : {}), [key]: clone(value) };
}

/**
 * `desired` with the values of `target` at the preserved paths (a path absent on the target is
 * removed from the result). `forcedAnnotations` (the konnector's own markers) always keep their
 * desired values. A `<field>.<key>` path whose field is not a map on both sides is skipped. Pure: the
 * inputs are not modified.
 */
export function applyPreserving(
  desired: KubeObject,
  target: KubeObject,
  paths: readonly PreservePath[],
  forcedAnnotations: Record<string, string> = {},
): KubeObject {
  if (paths.length === 0) return desired;
  const out = clone(desired);
  const src = target as unknown as Record<string, unknown>;
  const dst = out as unknown as Record<string, unknown>;
  for (const p of paths) {
    if (p.field === 'metadata.labels' || p.field === 'metadata.annotations') {
      const m = p.field === 'metadata.labels' ? 'labels' : 'annotations';
      const meta = out.metadata as Record<string, unknown>;
      const have = (target.metadata as Record<string, unknown>)[m];
      if (p.key === undefined) {
        if (isMap(have) && Object.keys(have).length) meta[m] = clone(have);
        else delete meta[m];
      } else setKey(meta, m, p.key, isMap(have) ? have[p.key] : undefined);
      continue;
    }
    if (p.key === undefined) {
      if (src[p.field] === undefined) delete dst[p.field];
      else dst[p.field] = clone(src[p.field]);
      continue;
    }
    const have = src[p.field];
    if ((have !== undefined && !isMap(have)) || (dst[p.field] !== undefined && !isMap(dst[p.field]))) continue;
    setKey(dst, p.field, p.key, isMap(have) ? have[p.key] : undefined);
  }
  if (Object.keys(forcedAnnotations).length) out.metadata.annotations = { ...(out.metadata.annotations ?? {}), ...forcedAnnotations };
  return out;
}

/** Identity of the provider object a copy was made from: `<uid>/<resourceVersion>`. */
export const sourceStamp = (uid: string | undefined, resourceVersion: string | undefined): string | undefined =>
  uid && resourceVersion ? `${uid}/${resourceVersion}` : undefined;
