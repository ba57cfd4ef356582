/**
 * Limits the konnector holds a binding to, konnector-wide, and how each shows on the binding it was hit for:
 *
 * - `NamespaceNotAllowed`: an object of the binding's API sits in an app-cluster namespace outside the
 *   konnector's namespace allow-list (`--allow-namespace`, `KonnectorProps.allowedNamespaces`); the
 *   konnector syncs nothing there and its ServiceAccount has no Secret or ConfigMap rights there.
 * - `CacheLimitReached`: the provider has more objects in the binding's watched namespaces than the
 *   konnector caches for one binding (`--max-cached-objects-per-binding`); its informers are frozen:
 *   they keep the objects they hold in sync and admit no new one (object-cap.ts).
 * - `WriteBudgetExhausted`: the konnector wrote one object more often than its write budget allows
 *   (`--write-budget`, per object per window; write-budget.ts) because something on the other side keeps
 *   rewriting it (a status or spec fight); it stopped writing that object until the window ends.
 *
 * Each is a condition of that type on the binding (status `True`, reason the type, the message naming
 * the namespace or object and the flag), a `Warning` Event of that reason when a report appears and a
 * `Normal` Event `<type>Resolved` when the last one of its kind goes, and the metrics
 * `klutch_konnector_limited_total{limit}` (each refused object, write or namespace) and
 * `klutch_konnector_bindings_limited{limit}` (bindings showing the condition). None is part of `Ready`:
 * what stays within the limits keeps syncing. Reports are keyed by binding uid, kind and subject.
 * Dependencies are injected.
 */
import type { ConditionInput } from '../core/conditions.js';
import type { RecordedEvent } from '../core/events.js';
import type { KonnectorMetrics } from './metrics.js';
import type { APIServiceBinding } from './types.js';

/** The limits, each its condition type, Event reason and metric label. */
export const LIMIT_KINDS = ['NamespaceNotAllowed', 'CacheLimitReached', 'WriteBudgetExhausted'] as const;
export type LimitKind = (typeof LIMIT_KINDS)[number];

/** Reports kept per binding and kind (the oldest go first). */
export const MAX_REPORTS = 1000;

export interface LimitReport {
  /** uid of the binding the limit was hit for. */
  readonly binding: string;
  readonly kind: LimitKind;
  /** What hit it: an app-cluster namespace, or an object (`<resource> <namespace>/<name>`). */
  readonly subject: string;
  /** Says what happened, naming the subject and the flag or prop that moves the limit. */
  readonly message: string;
}

/** What the syncers use (SyncContext.limits). */
export interface BindingLimitSink {
  /** Records (or keeps) a report; true when it is new. The metric counts through count() only. */
  report(r: LimitReport): boolean;
  /** The subject is within the limit again. */
  resolve(binding: string, kind: LimitKind, subject: string): void;
  /** Counts one refused object or write (the metric), without a report. */
  count(kind: LimitKind): void;
}

export interface BindingLimitsDeps {
  binding(uid: string): APIServiceBinding | undefined;
  /** The reports of this binding changed: its conditions need rewriting. */
  changed(bindingUid: string): void;
  /** Writes an Event about a binding (best effort). */
  event(binding: APIServiceBinding, e: RecordedEvent): void;
  /** The two metrics (metrics.ts). */
  metrics?: Pick<KonnectorMetrics, 'limited' | 'bindingsLimited'>;
}

export class BindingLimits implements BindingLimitSink {
  /** `<uid>\0<kind>` → subject → report. */
  private readonly reports = new Map<string, Map<string, LimitReport>>();
  constructor(private readonly deps: BindingLimitsDeps) {}

  report(r: LimitReport): boolean {
    const k = `${r.binding}\0${r.kind}`;
    let m = this.reports.get(k);
    if (m?.get(r.subject)?.message === r.message) return false;
    if (!m) this.reports.set(k, (m = new Map()));
    const isNew = !m.has(r.subject);
    m.delete(r.subject);
    m.set(r.subject, r);
    while (m.size > MAX_REPORTS) m.delete(m.keys().next().value!);
    if (isNew) {
      const b = this.deps.binding(r.binding);
      if (b) this.deps.event(b, { type: 'Warning', reason: r.kind, message: r.message });
    }
    this.gauge(r.kind);
    this.deps.changed(r.binding);
    return isNew;
  }

  resolve(binding: string, kind: LimitKind, subject: string): void {
    const k = `${binding}\0${kind}`;
    const m = this.reports.get(k);
    if (!m?.delete(subject)) return;
    if (m.size === 0) {
      this.reports.delete(k);
      const b = this.deps.binding(binding);
      if (b) this.deps.event(b, { type: 'Normal', reason: `${kind}Resolved`, message: `${subject}: within the limit again` });
    }
    this.gauge(kind);
    this.deps.changed(binding);
  }

  count(kind: LimitKind): void {
    this.deps.metrics?.limited.inc({ limit: kind });
  }

  /** The reports of binding `uid` of one kind, in the order they came. */
  of(uid: string, kind: LimitKind): LimitReport[] {
    return [...(this.reports.get(`${uid}\0${kind}`)?.values() ?? [])];
  }

  private gauge(kind: LimitKind): void {
    if (!this.deps.metrics) return;
    const n = [...this.reports.keys()].filter((k) => k.endsWith(`\0${kind}`)).length;
    this.deps.metrics.bindingsLimited.set({ limit: kind }, n);
  }
}

/** The condition of one limit kind on a binding, or undefined when it holds no report of that kind. */
export function limitCondition(kind: LimitKind, reports: readonly LimitReport[], max = 5): ConditionInput | undefined {
  if (reports.length === 0) return undefined;
  const shown = reports
    .slice(0, max)
    .map((r) => r.message)
    .join('; ');
  const more = reports.length > max ? `; and ${reports.length - max} more` : '';
  return { type: kind, status: 'True', severity: 'Warning', reason: kind, message: `${shown}${more}` };
}
