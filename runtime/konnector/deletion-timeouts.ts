/**
 * Provider deletions that timed out, konnector-wide. Deleting an app-cluster object of a bound API
 * deletes its upstream copy first, and the konnector's finalizer (`klutch.anynines.com/syncer`) keeps
 * the app-cluster object until that copy is gone (export-spec.ts). A provider that never lets its
 * copy go (a finalizer it never removes) would keep the app's object Terminating for ever, and with it
 * an unbind, which waits for the CRD's objects. So after the konnector's `--upstream-deletion-timeout`
 * the app-cluster object is released anyway, and its binding says so here:
 *
 * - condition `ProviderDeletionTimedOut` (status `True`, reason `ProviderFinalizers`) on the
 *   APIServiceBinding while such a copy still exists upstream, naming the objects and the finalizers
 *   that held them; removed once the provider deleted them (or the konnector restarted). Not part of
 *   `Ready`: the binding works, the provider just has objects it did not delete.
 *
 * Records are keyed by binding name (the export's `<plural>.<group>`; bindings are served in one
 * namespace, see konnector.ts) and upstream object, at most {@link MAX_PER_BINDING} per binding.
 */
import type { ConditionInput } from '../core/conditions.js';

/** Condition type on an APIServiceBinding whose provider kept an upstream copy past the timeout. */
export const DELETION_TIMED_OUT_CONDITION = 'ProviderDeletionTimedOut';
/** @default of `--upstream-deletion-timeout`: how long a provider may keep an upstream copy terminating. */
export const DEFAULT_UPSTREAM_DELETION_TIMEOUT_MS = 10 * 60_000;
/** Records kept per binding (the oldest go first). */
export const MAX_PER_BINDING = 1000;

/** An app-cluster object released while its upstream copy was still terminating. */
export interface TimedOutDeletion {
  /** The upstream copy: `namespace/name` (or `name`) on the provider. */
  readonly upstream: string;
  /** The released app-cluster object: `namespace/name` (or `name`). */
  readonly consumer: string;
  /** The finalizers the upstream copy still had. */
  readonly finalizers: readonly string[];
}

/** What an export's spec-up reconciler uses (SyncContext.deletionTimeouts). */
export interface DeletionTimeoutSink {
  /** The app-cluster object of binding `binding` was released; its upstream copy is still there. */
  report(binding: string, d: TimedOutDeletion): void;
  /** The upstream copy is gone. */
  resolve(binding: string, upstream: string): void;
}

export class DeletionTimeouts implements DeletionTimeoutSink {
  private readonly byBinding = new Map<string, Map<string, TimedOutDeletion>>();

  /** `changed`: the records of this binding changed, its condition needs rewriting. */
  constructor(private readonly changed: (binding: string) => void) {}

  report(binding: string, d: TimedOutDeletion): void {
    let m = this.byBinding.get(binding);
    if (!m) this.byBinding.set(binding, (m = new Map()));
    m.delete(d.upstream);
    m.set(d.upstream, d);
    while (m.size > MAX_PER_BINDING) m.delete(m.keys().next().value!);
    this.changed(binding);
  }

  resolve(binding: string, upstream: string): void {
    const m = this.byBinding.get(binding);
    if (!m?.delete(upstream)) return;
    if (m.size === 0) this.byBinding.delete(binding);
    this.changed(binding);
  }

  /** The records of a binding, oldest first. */
  of(binding: string): TimedOutDeletion[] {
    return [...(this.byBinding.get(binding)?.values() ?? [])];
  }
}

/** The binding's `ProviderDeletionTimedOut` condition, or undefined when it has no record. */
export function deletionTimedOutCondition(records: readonly TimedOutDeletion[], timeoutMs: number): ConditionInput | undefined {
  if (records.length === 0) return undefined;
  const shown = records
    .slice(0, 5)
    .map((r) => `${r.consumer} (upstream ${r.upstream}, finalizers ${r.finalizers.length ? r.finalizers.join(', ') : 'none'})`)
    .join('; ');
  const more = records.length > 5 ? ` and ${records.length - 5} more` : '';
  return {
    type: DELETION_TIMED_OUT_CONDITION,
    status: 'True',
    severity: 'Warning',
    reason: 'ProviderFinalizers',
    message:
      `the provider did not delete its copies within ${Math.round(timeoutMs / 1000)} s (--upstream-deletion-timeout); ` +
      `the app-cluster objects were released, the copies are still on the provider: ${shown}${more}. Ask the provider to remove its finalizers`,
  };
}
