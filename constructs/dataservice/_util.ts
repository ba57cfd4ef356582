/**
 * Internal helpers of the dataservice module (validation messages, CEL literals). Not exported
 * from the barrel.
 */

import { fail } from '../_errors.js';

export { fail, show } from '../_errors.js';
export { checkDnsLabel, isDnsSubdomain } from '../_names.js';

export function checkString(prop: string, v: unknown): string {
  if (typeof v !== 'string' || v.trim() === '') fail(prop, v, 'must be a non-empty string');
  return v;
}

export function checkStringList(prop: string, v: unknown): readonly string[] {
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x === '')) fail(prop, v, 'must be a list of non-empty strings');
  const seen = new Set<string>();
  for (const x of v as string[]) {
    if (seen.has(x)) fail(prop, x, 'is listed twice');
    seen.add(x);
  }
  return [...(v as string[])];
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A CEL string literal (single-quoted, escaped). */
export function celString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** A CEL list literal of strings. */
export function celList(items: readonly string[]): string {
  return `[${items.map(celString).join(', ')}]`;
}

/** Deep copy of plain JSON data. */
export function copyJson<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

/** camelCase → snake_case (`maxConnections` → `max_connections`). */
export function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/** camelCase → kebab-case (`replBacklogSize` → `repl-backlog-size`). */
export function kebabCase(name: string): string {
  return snakeCase(name).replace(/_/g, '-');
}
