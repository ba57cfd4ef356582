/**
 * `status.conditions` helpers (cluster-api style, as Klutch's binding API uses them:
 * type, status, severity, reason, message, lastTransitionTime). lastTransitionTime only changes
 * when `status` changes; `Ready` is a summary of the others.
 */
export type ConditionStatus = 'True' | 'False' | 'Unknown';
export type ConditionSeverity = '' | 'Error' | 'Warning' | 'Info';

export interface Condition {
  type: string;
  status: ConditionStatus;
  severity?: ConditionSeverity;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

export type ConditionInput = Omit<Condition, 'lastTransitionTime'>;

/** Kubernetes time format: RFC 3339, seconds precision. */
export const nowRfc3339 = (d: Date = new Date()): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

export function getCondition(conds: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conds?.find((c) => c.type === type);
}

export function isTrue(conds: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conds, type)?.status === 'True';
}

/**
 * Returns a new list with `c` set. lastTransitionTime is kept when the status is unchanged, and set to
 * `now` when it changes or the condition is new. Severity is cleared for True conditions.
 */
export function setCondition(conds: readonly Condition[] | undefined, c: ConditionInput, now: Date = new Date()): Condition[] {
  const list = [...(conds ?? [])];
  const i = list.findIndex((x) => x.type === c.type);
  const prev = i >= 0 ? list[i] : undefined;
  const next: Condition = {
    type: c.type,
    status: c.status,
    ...(c.status !== 'True' && c.severity ? { severity: c.severity } : {}),
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
    ...(c.observedGeneration !== undefined ? { observedGeneration: c.observedGeneration } : {}),
    lastTransitionTime: prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : nowRfc3339(now),
  };
  if (i >= 0) list[i] = next;
  else list.push(next);
  list.sort((a, b) => (a.type === 'Ready' ? -1 : b.type === 'Ready' ? 1 : a.type.localeCompare(b.type)));
  return list;
}

export function removeCondition(conds: readonly Condition[] | undefined, type: string): Condition[] {
  return (conds ?? []).filter((c) => c.type !== type);
}

/**
 * Sets `Ready` from `types`: True when all are True; otherwise False (or Unknown when none is False)
 * with the reason and message of the first condition that is not True (a missing one counts as Unknown).
 */
export function setSummary(conds: readonly Condition[] | undefined, types: readonly string[], now: Date = new Date()): Condition[] {
  let firstFalse: Condition | undefined;
  let firstUnknown: Condition | undefined;
  for (const t of types) {
    const c = getCondition(conds, t) ?? { type: t, status: 'Unknown' as const, reason: `${t}Unknown`, message: `${t} has not been reported yet` };
    if (c.status === 'False' && !firstFalse) firstFalse = c;
    if (c.status === 'Unknown' && !firstUnknown) firstUnknown = c;
  }
  const bad = firstFalse ?? firstUnknown;
  if (!bad) return setCondition(conds, { type: 'Ready', status: 'True', reason: 'AllConditionsTrue' }, now);
  return setCondition(
    conds,
    {
      type: 'Ready',
      status: bad.status,
      severity: bad.severity,
      reason: bad.reason ?? `${bad.type}NotTrue`,
      message: bad.message ?? `${bad.type} is ${bad.status}`,
    },
    now,
  );
}

/** Same conditions ignoring order (to skip no-op status writes). */
export function conditionsEqual(a: readonly Condition[] | undefined, b: readonly Condition[] | undefined): boolean {
  const norm = (l: readonly Condition[] | undefined) =>
    JSON.stringify(
      [...(l ?? [])]
        .sort((x, y) => x.type.localeCompare(y.type))
        .map((c) => [c.type, c.status, c.severity ?? '', c.reason ?? '', c.message ?? '', c.lastTransitionTime ?? '', c.observedGeneration ?? null]),
    );
  return norm(a) === norm(b);
}
