/**
 * The one error-message helper of klutch-kit: the constructs, the topology, the stacks and the
 * runtime's option checks report a bad value as `<field>: <value as JSON> <problem>` through
 * `fail()`. It lives in contract/ because both sides use it (the constructs through
 * constructs/_errors.ts, the backend's binder directly) and the runtime imports nothing from
 * constructs/. Name checks (DNS labels and subdomains) are in `_names.ts`. Internal: not exported
 * from any barrel.
 */

/**
 * Renders a received value for an error message: functions as `[function <name>]`, objects with
 * a `toJson()` method (cdk8s/imports objects) through it, everything else as JSON. With
 * `maxLength`, longer renderings are cut to that length, ending in `...`.
 */
export function show(value: unknown, maxLength?: number): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return `[function ${value.name || 'anonymous'}]`;
  const t = value as { toJson?: () => unknown };
  if (typeof value === 'object' && value !== null && typeof t.toJson === 'function') value = t.toJson();
  let s: string;
  try {
    s = JSON.stringify(value) ?? String(value);
  } catch {
    s = String(value);
  }
  return maxLength !== undefined && s.length > maxLength ? `${s.slice(0, maxLength - 3)}...` : s;
}

/** Throws `<prop>: <value> <problem>`. */
export function fail(prop: string, value: unknown, problem: string): never {
  throw new Error(`${prop}: ${show(value)} ${problem}`);
}
