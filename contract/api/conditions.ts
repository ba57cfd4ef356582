/** Helpers for the cluster-api style conditions in every binding-API status. */
import type { Condition } from './common.js';
import { ConditionType } from './constants.js';

/** Any object whose status carries a conditions list (the binding APIs, Crossplane claims). */
export interface WithConditions {
  status?: { conditions?: Condition[] };
}

/** The condition of `type`, if any. Accepts an object or a condition list. */
export function getCondition(o: WithConditions | readonly Condition[] | undefined, type: string): Condition | undefined {
  const list = Array.isArray(o) ? (o as readonly Condition[]) : (o as WithConditions | undefined)?.status?.conditions;
  return list?.find((c) => c.type === type);
}

/** True when the condition `type` exists with status `True`. */
export function isConditionTrue(o: WithConditions | readonly Condition[] | undefined, type: string): boolean {
  return getCondition(o, type)?.status === 'True';
}

/** True when the condition `type` exists with status `False`. */
export function isConditionFalse(o: WithConditions | readonly Condition[] | undefined, type: string): boolean {
  return getCondition(o, type)?.status === 'False';
}

/** Input of setCondition: lastTransitionTime is filled in. */
export type ConditionInput = Omit<Condition, 'lastTransitionTime'> & { lastTransitionTime?: string };

/**
 * Returns a new list with `c` set: `lastTransitionTime` is kept when the status did not change,
 * and set to `now` otherwise. The list stays sorted with `Ready` first, then by type.
 */
export function setCondition(list: readonly Condition[] | undefined, c: ConditionInput, now: Date = new Date()): Condition[] {
  const prev = list?.find((x) => x.type === c.type);
  const lastTransitionTime = c.lastTransitionTime ?? (prev && prev.status === c.status ? prev.lastTransitionTime : rfc3339(now));
  const next: Condition = { ...c, lastTransitionTime };
  if (next.status !== 'False') delete next.severity;
  const out = (list ?? []).filter((x) => x.type !== c.type).concat(next);
  return out.sort((a, b) => (a.type === ConditionType.Ready ? -1 : b.type === ConditionType.Ready ? 1 : a.type.localeCompare(b.type)));
}

/**
 * Computes the `Ready` summary over `types` (cluster-api `SetSummary`): True when all are True;
 * otherwise False (or Unknown when none is False) with the reason and message of the first
 * non-True condition.
 */
export function summarize(list: readonly Condition[] | undefined, types: readonly string[], now: Date = new Date()): Condition[] {
  let firstBad: Condition | undefined;
  let anyFalse = false;
  for (const t of types) {
    const c = list?.find((x) => x.type === t);
    const status = c?.status ?? 'Unknown';
    if (status !== 'True') {
      if (status === 'False') anyFalse = true;
      if (!firstBad || (status === 'False' && firstBad.status !== 'False'))
        firstBad = c ?? { type: t, status: 'Unknown', lastTransitionTime: '', reason: `${t}Missing`, message: `condition ${t} not set yet` };
    }
  }
  const ready: ConditionInput = firstBad
    ? {
        type: ConditionType.Ready,
        status: anyFalse ? 'False' : 'Unknown',
        reason: firstBad.reason ?? firstBad.type,
        message: firstBad.message ?? '',
        ...(anyFalse ? { severity: firstBad.severity || 'Error' } : {}),
      }
    : { type: ConditionType.Ready, status: 'True' };
  return setCondition(list, ready, now);
}

/** RFC 3339 with second precision, as metav1.Time serialises. */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
