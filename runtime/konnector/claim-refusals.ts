/**
 * Claimed objects the konnector refuses to copy, konnector-wide: today Secrets whose `type` is not on
 * the Secret type allow-list (contract/secret-types.ts), in either direction — above all
 * `kubernetes.io/service-account-token`, which would make the app cluster's token controller mint a
 * ServiceAccount token into a Secret the provider wrote. The claim syncer writes nothing for such an
 * object (no create, no update of an existing copy) and reports it here; the refusal is visible on the
 * binding whose claim selected it:
 *
 * - the `ClaimedObjectsRefused` condition (status `True`, reason `SecretTypeNotAllowed`) naming each
 *   refused object, its type (and the ServiceAccount a token Secret names), and what allows it;
 *   removed once none is left (`claimRefusalCondition`, written by the konnector's binding reconciler);
 * - a `Warning` Event `SecretTypeRefused` on the binding when a refusal appears.
 *
 * Reports are keyed by reporter (one claim syncer) and app-cluster object, so a syncer that stops takes
 * its refusals with it; at most {@link MAX_PER_REPORTER} per reporter. Dependencies are injected.
 */
import type { ConditionInput } from '../core/conditions.js';
import type { RecordedEvent } from '../core/events.js';
import type { APIServiceBinding } from './types.js';

/** Condition type on an APIServiceBinding one of whose claims selects objects the konnector refuses to copy. */
export const CLAIM_REFUSED_CONDITION = 'ClaimedObjectsRefused';
/** Records kept per reporter (the oldest go first). */
export const MAX_PER_REPORTER = 1000;

export interface ClaimRefusal {
  /** uid of the binding whose claim selected the object. */
  readonly binding: string;
  /** The claimed resource: `secrets`. */
  readonly resource: string;
  /** The app-cluster namespace and name (the copy's place, or the source's when going up). */
  readonly namespace: string;
  readonly name: string;
  /** `down`: a provider object refused; `up`: an app-cluster object refused. */
  readonly direction: 'up' | 'down';
  /** The Secret's type. */
  readonly type: string;
  /** For a ServiceAccount token Secret: the ServiceAccount its annotation names. */
  readonly serviceAccount?: string;
  /** Why, and what allows it (if anything). */
  readonly why: string;
}

/** What a claim syncer uses (SyncContext.claimRefusals). */
export interface ClaimRefusalSink {
  /** Records (or keeps) a refusal; true when it is new. */
  report(reporter: string, r: ClaimRefusal): boolean;
  /** The object at namespace/name is no longer refused by this reporter (gone, or its type changed). */
  resolve(reporter: string, namespace: string, name: string): void;
  /** The reporter stopped. */
  resolveAll(reporter: string): void;
}

export interface ClaimRefusalsDeps {
  binding(uid: string): APIServiceBinding | undefined;
  /** The refusals of this binding changed: its condition needs rewriting. */
  changed(bindingUid: string): void;
  /** Writes an Event about a binding (best effort). */
  event(binding: APIServiceBinding, e: RecordedEvent): void;
}

/** `Secret team-a/db (type …, ServiceAccount …) from the provider`. */
export function describeRefusal(r: ClaimRefusal): string {
  const kind = r.resource === 'secrets' ? 'Secret' : r.resource;
  const sa = r.serviceAccount !== undefined ? `, for ServiceAccount ${JSON.stringify(r.serviceAccount)}` : '';
  const from = r.direction === 'down' ? "the provider's" : "the app cluster's";
  return `${from} ${kind} ${r.namespace}/${r.name} (type ${r.type}${sa})`;
}

export class ClaimRefusals implements ClaimRefusalSink {
  private readonly byReporter = new Map<string, Map<string, ClaimRefusal>>();

  constructor(private readonly deps: ClaimRefusalsDeps) {}

  report(reporter: string, r: ClaimRefusal): boolean {
    let m = this.byReporter.get(reporter);
    if (!m) this.byReporter.set(reporter, (m = new Map()));
    const k = `${r.namespace}/${r.name}`;
    const prev = m.get(k);
    if (prev && prev.type === r.type && prev.serviceAccount === r.serviceAccount && prev.direction === r.direction && prev.why === r.why) return false;
    m.delete(k);
    m.set(k, r);
    while (m.size > MAX_PER_REPORTER) m.delete(m.keys().next().value!);
    const b = this.deps.binding(r.binding);
    if (b) {
      this.deps.event(b, { type: 'Warning', reason: 'SecretTypeRefused', message: `${describeRefusal(r)} is not copied: ${r.why}` });
    }
    this.deps.changed(r.binding);
    return true;
  }

  resolve(reporter: string, namespace: string, name: string): void {
    const m = this.byReporter.get(reporter);
    const k = `${namespace}/${name}`;
    const r = m?.get(k);
    if (!m || !r) return;
    m.delete(k);
    if (m.size === 0) this.byReporter.delete(reporter);
    this.deps.changed(r.binding);
  }

  resolveAll(reporter: string): void {
    const m = this.byReporter.get(reporter);
    if (!m) return;
    this.byReporter.delete(reporter);
    for (const uid of new Set([...m.values()].map((r) => r.binding))) this.deps.changed(uid);
  }

  /** The refusals of binding `uid`, sorted by object. */
  of(uid: string): ClaimRefusal[] {
    return [...this.byReporter.values()]
      .flatMap((m) => [...m.values()])
      .filter((r) => r.binding === uid)
      .sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
  }
}

/** The binding's `ClaimedObjectsRefused` condition, or undefined when nothing is refused. */
export function claimRefusalCondition(refusals: readonly ClaimRefusal[], max = 5): ConditionInput | undefined {
  if (refusals.length === 0) return undefined;
  const shown = refusals
    .slice(0, max)
    .map((r) => `${describeRefusal(r)}: ${r.why}`)
    .join('; ');
  const more = refusals.length > max ? `; and ${refusals.length - max} more` : '';
  return {
    type: CLAIM_REFUSED_CONDITION,
    status: 'True',
    severity: 'Warning',
    reason: 'SecretTypeNotAllowed',
    message: `${refusals.length} claimed object${refusals.length === 1 ? '' : 's'} not copied because of their Secret type: ${shown}${more}`,
  };
}
