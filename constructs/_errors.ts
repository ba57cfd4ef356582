/**
 * Error-message helpers shared by the construct modules (crossplane, dataservice). Internal: not
 * exported from any barrel.
 */

/**
 * Renders a received value for an error message: functions as `[function <name>]`, objects with
 * a `toJson()` method (cdk8s/imports objects) through it, everything else as JSON.
 */
export function show(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return `[function ${value.name || 'anonymous'}]`;
  const t = value as { toJson?: () => unknown };
  if (typeof value === 'object' && value !== null && typeof t.toJson === 'function') value = t.toJson();
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/** Throws `<prop>: <value> <problem>`. */
export function fail(prop: string, value: unknown, problem: string): never {
  throw new Error(`${prop}: ${show(value)} ${problem}`);
}
