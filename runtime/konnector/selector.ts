/**
 * Permission-claim selectors, implemented in full (Klutch only honours `names` and `owner`, so every
 * Secret of a bound namespace reaches the app cluster; klutch-kit does not copy that).
 *
 * - `names`: any entry equal to the object name, or `*` (default `["*"]`); an entry `*<suffix>` selects
 *   names ending in `<suffix>` (a klutch-kit extension: the a8s ServiceBinding Secret is
 *   `<binding>-service-binding`, so a claim can name exactly those Secrets);
 * - `namespaces`: any entry equal to the consumer namespace, or `*` (default `["*"]`);
 * - `labelSelectors`: a list of match-label maps; the object matches if it matches ANY of them (an
 *   empty list matches everything);
 * - `fieldSelectors`: a list of `field=value`, `field==value` or `field!=value` terms (comma-separated
 *   terms in one entry are ANDed, entries are ORed); fields are dotted paths such as `metadata.name`
 *   or `type`;
 * - `owner`: `Provider` or `Consumer`: objects of the other owner are not claimed.
 */
import type { KubeObject } from '../core/client.js';
import type { AcceptablePermissionClaim } from './types.js';

export type ClaimSelector = NonNullable<AcceptablePermissionClaim['selector']>;
export type Owner = 'Provider' | 'Consumer';

const listMatches = (list: readonly string[] | undefined, v: string | undefined): boolean => {
  const l = list ?? ['*'];
  return l.includes('*') || (v !== undefined && l.includes(v));
};

/** `names` also take `*<suffix>` entries (names ending in the suffix). */
const nameMatches = (list: readonly string[] | undefined, v: string | undefined): boolean =>
  listMatches(list, v) || (v !== undefined && (list ?? []).some((e) => e.length > 1 && e.startsWith('*') && v.endsWith(e.slice(1))));

function fieldValue(o: KubeObject, path: string): string | undefined {
  let cur: unknown = o;
  for (const p of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur === undefined || cur === null ? undefined : String(cur);
}

/** Parses one field selector entry; throws with the entry in the message when malformed. */
export function parseFieldSelector(sel: string): Array<{ path: string; op: '=' | '!='; value: string }> {
  return sel
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
    .map((term) => {
      const m = /^([A-Za-z0-9_.-]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
      if (!m) throw new Error(`field selector "${sel}": term "${term}" is not field=value, field==value or field!=value`);
      return { path: m[1], op: m[2] === '!=' ? '!=' : '=', value: m[3] };
    });
}

export function matchesLabels(labels: Record<string, string> | undefined, selectors: readonly Record<string, string>[] | undefined): boolean {
  if (!selectors || selectors.length === 0) return true;
  const l = labels ?? {};
  return selectors.some((s) => Object.entries(s ?? {}).every(([k, v]) => l[k] === v));
}

export function matchesFields(o: KubeObject, selectors: readonly string[] | undefined): boolean {
  if (!selectors || selectors.length === 0) return true;
  return selectors.some((sel) =>
    parseFieldSelector(sel).every(({ path, op, value }) => {
      const v = fieldValue(o, path) ?? '';
      return op === '=' ? v === value : v !== value;
    }),
  );
}

/**
 * Whether `o` (seen in consumer namespace `consumerNamespace`) is selected by the claim's selector,
 * ignoring ownership (see `ownerAllowed`).
 */
export function selects(sel: ClaimSelector | undefined, o: KubeObject, consumerNamespace: string | undefined): boolean {
  const s = sel ?? {};
  if (!nameMatches(s.names, o.metadata.name)) return false;
  if (consumerNamespace !== undefined && !listMatches(s.namespaces, consumerNamespace)) return false;
  if (!matchesLabels(o.metadata.labels, s.labelSelectors)) return false;
  return matchesFields(o, s.fieldSelectors);
}

export function ownerAllowed(sel: ClaimSelector | undefined, owner: Owner): boolean {
  return !sel?.owner || sel.owner === owner;
}
