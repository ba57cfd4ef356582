/**
 * Internal helpers shared by the Crossplane constructs. Not exported from the barrel.
 */

import { fail } from '../_errors.js';

export { fail, show } from '../_errors.js';
export { checkDnsLabel, checkDnsSubdomain, isDnsLabel, isDnsSubdomain } from '../_names.js';

export function checkNonEmpty(prop: string, v: unknown): string {
  if (typeof v !== 'string' || v.trim() === '') fail(prop, v, 'must be a non-empty string');
  return v;
}

/** Crossplane field paths: `spec.a.b`, `metadata.labels[crossplane.io/claim-name]`, `spec.list[0].x`. */
const FIELD_PATH = /^([^.[\]\s]+|\[[^[\]]+\])(\.[^.[\]\s]+|\[[^[\]]+\])*$/;

export function checkFieldPath(prop: string, v: unknown): string {
  if (typeof v !== 'string' || !FIELD_PATH.test(v)) {
    fail(
      prop,
      v,
      'is not a Crossplane field path (dot-separated segments, bracketed keys or indices such as metadata.labels[crossplane.io/claim-name] or spec.items[0].name)',
    );
  }
  return v;
}

export function checkInteger(prop: string, v: unknown, min?: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || (min !== undefined && v < min)) {
    fail(prop, v, min === undefined ? 'must be an integer' : `must be an integer >= ${min}`);
  }
  return v;
}

export function checkOneOf<T extends string>(prop: string, v: unknown, allowed: readonly T[]): T {
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    fail(prop, v, `must be one of ${allowed.join(', ')}`);
  }
  return v as T;
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Deep copy of plain JSON data (drops undefined values). */
export function copyJson<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Removes keys whose value is undefined, an empty array or an empty object (shallow). */
export function compact<T extends Record<string, unknown>>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (isPlainObject(v) && Object.keys(v).length === 0) continue;
    out[k] = v;
  }
  return out as T;
}

/** A semantic version `MAJOR.MINOR.PATCH` (optionally `v`-prefixed and with a pre-release). */
export const SEMVER = /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;
