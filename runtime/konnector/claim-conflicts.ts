/**
 * Claim conflicts, konnector-wide: two bindings (of one provider or of two) whose claims select the
 * same object name in one app-cluster namespace. The copy stays with the binding that made it
 * (claim-ownership.ts); the other binding's claim syncer reports the name here instead of writing, and
 * the conflict becomes visible on **both** bindings:
 *
 * - the `ClaimConflict` condition (status `True`, reason `ClaimConflict`) on each involved
 *   APIServiceBinding, naming the object and the other binding; removed once no conflict is left
 *   (`claimConflictCondition`, written by the konnector's binding reconciler);
 * - a `Warning` Event `ClaimConflict` on both bindings when a conflict appears, a `Normal` Event
 *   `ClaimConflictResolved` when it goes.
 *
 * Reports are keyed by reporter (one claim syncer) and object, so a syncer that stops takes its
 * conflicts with it. Dependencies are injected: the binding lookup, the change callback and the Event
 * writer.
 */
import type { ConditionInput } from '../core/conditions.js';
import type { RecordedEvent } from '../core/events.js';
import { CLAIM_CONFLICT_CONDITION, type APIServiceBinding } from './types.js';

export interface ClaimConflict {
  /** uid of the binding whose claim selects the name but does not hold it. */
  readonly claimant: string;
  /** uid of the binding whose copy holds the name; `''` when the copy has no binding record (an older konnector made it). */
  readonly holder: string;
  /** The claimed resource: `secrets`, `configmaps`, `<plural>.<group>`. */
  readonly resource: string;
  /** The app-cluster namespace and name. */
  readonly namespace: string;
  readonly name: string;
}

/** What a claim syncer uses (SyncContext.claimConflicts). */
export interface ClaimConflictSink {
  /** Records (or keeps) the conflict `c` found by `reporter`; true when it is new. */
  report(reporter: string, c: ClaimConflict): boolean;
  /** The reporter no longer sees a conflict at namespace/name. */
  resolve(reporter: string, namespace: string, name: string): void;
  /** The reporter stopped: all its conflicts go (without an Event: a restarted syncer reports what is still there). */
  resolveAll(reporter: string): void;
}

export interface ClaimConflictsDeps {
  /** The APIServiceBinding with this uid, if the konnector sees it. */
  binding(uid: string): APIServiceBinding | undefined;
  /** The conflicts of these bindings changed: their condition needs rewriting. */
  changed(bindingUids: string[]): void;
  /** Writes an Event about a binding (best effort; failures are the callee's to log). */
  event(binding: APIServiceBinding, e: RecordedEvent): void;
}

const objectOf = (c: ClaimConflict) => `${c.resource} ${c.namespace}/${c.name}`;

/** How a binding is named in messages: `namespace/name`, or by uid when the konnector does not see it. */
export function describeBinding(uid: string, b: APIServiceBinding | undefined): string {
  if (!uid) return 'a konnector before binding records (the copy has no klutch.anynines.com/binding-uid)';
  if (b) return `binding ${b.metadata.namespace ? `${b.metadata.namespace}/` : ''}${b.metadata.name}`;
  return `binding uid ${uid} (not seen by this konnector: deleted, or outside its binding namespace)`;
}

const RESOLVE_HINT =
  "each copy stays with the binding that made it; remove the name from one binding's claim (or the object from that binding's provider), or delete a copy whose binding is gone";

/** The `ClaimConflict` condition of binding `uid` for its `conflicts` (ClaimConflicts.of); undefined when there are none. */
export function claimConflictCondition(
  uid: string,
  conflicts: readonly ClaimConflict[],
  lookup: (uid: string) => APIServiceBinding | undefined,
  max = 5,
): ConditionInput | undefined {
  if (conflicts.length === 0) return undefined;
  const parts = conflicts.map((c) =>
    c.claimant === uid
      ? `${objectOf(c)} is claimed by this binding but held by the copy of ${describeBinding(c.holder, lookup(c.holder))}`
      : `${objectOf(c)} is held by this binding's copy and also claimed by ${describeBinding(c.claimant, lookup(c.claimant))}`,
  );
  const shown = parts.slice(0, max).join('; ') + (parts.length > max ? `; and ${parts.length - max} more` : '');
  return {
    type: CLAIM_CONFLICT_CONDITION,
    status: 'True',
    reason: 'ClaimConflict',
    message: `${conflicts.length} claimed object name${conflicts.length === 1 ? '' : 's'} in conflict with another binding: ${shown}. ${RESOLVE_HINT}`,
  };
}

export class ClaimConflicts implements ClaimConflictSink {
  private readonly entries = new Map<string, ClaimConflict>();

  constructor(private readonly deps: ClaimConflictsDeps) {}

  private static key(reporter: string, namespace: string, name: string): string {
    return `${reporter}\u0000${namespace}/${name}`;
  }

  report(reporter: string, c: ClaimConflict): boolean {
    const k = ClaimConflicts.key(reporter, c.namespace, c.name);
    const prev = this.entries.get(k);
    if (prev && prev.claimant === c.claimant && prev.holder === c.holder && prev.resource === c.resource) return false;
    if (prev) this.gone(prev);
    this.entries.set(k, c);
    const claimant = this.deps.binding(c.claimant);
    const holder = c.holder ? this.deps.binding(c.holder) : undefined;
    const what = objectOf(c);
    if (claimant) {
      this.deps.event(claimant, {
        type: 'Warning',
        reason: 'ClaimConflict',
        message: `${what} is selected by this binding's claim but held by the copy of ${describeBinding(c.holder, holder)}: not copied. ${RESOLVE_HINT}`,
      });
    }
    if (holder) {
      this.deps.event(holder, {
        type: 'Warning',
        reason: 'ClaimConflict',
        message: `${what} (this binding's copy) is also claimed by ${describeBinding(c.claimant, claimant)}: the copy stays this binding's. ${RESOLVE_HINT}`,
      });
    }
    this.deps.changed(c.holder ? [c.claimant, c.holder] : [c.claimant]);
    return true;
  }

  resolve(reporter: string, namespace: string, name: string): void {
    const k = ClaimConflicts.key(reporter, namespace, name);
    const c = this.entries.get(k);
    if (!c) return;
    this.entries.delete(k);
    this.gone(c);
  }

  resolveAll(reporter: string): void {
    const prefix = `${reporter}\u0000`;
    for (const [k, c] of [...this.entries]) {
      if (!k.startsWith(prefix)) continue;
      this.entries.delete(k);
      this.gone(c, false);
    }
  }

  /** The conflicts binding `uid` is part of (as claimant or holder), sorted by object. */
  of(uid: string): ClaimConflict[] {
    return [...this.entries.values()]
      .filter((c) => c.claimant === uid || (c.holder !== '' && c.holder === uid))
      .sort((a, b) => objectOf(a).localeCompare(objectOf(b)) || a.claimant.localeCompare(b.claimant));
  }

  private gone(c: ClaimConflict, event = true): void {
    if (!event) {
      this.deps.changed(c.holder ? [c.claimant, c.holder] : [c.claimant]);
      return;
    }
    const message = `${objectOf(c)}: no longer in conflict between ${describeBinding(c.claimant, this.deps.binding(c.claimant))} and ${describeBinding(c.holder, c.holder ? this.deps.binding(c.holder) : undefined)}`;
    for (const uid of c.holder ? [c.claimant, c.holder] : [c.claimant]) {
      const b = this.deps.binding(uid);
      if (b) this.deps.event(b, { type: 'Normal', reason: 'ClaimConflictResolved', message });
    }
    this.deps.changed(c.holder ? [c.claimant, c.holder] : [c.claimant]);
  }
}
