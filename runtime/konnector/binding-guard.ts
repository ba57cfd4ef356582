/**
 * The per-binding limits one binding's syncers share (its export syncer and its claim syncers): the cap
 * on cached provider objects (object-cap.ts) and the write budget per object (write-budget.ts), both
 * reported on the binding through SyncContext.limits (binding-limits.ts).
 */
import { RequeueError } from '../core/controller.js';
import type { InformerAdmission } from '../core/informer.js';
import type { SyncContext } from './context.js';
import { DEFAULT_MAX_CACHED_OBJECTS_PER_BINDING, ObjectCap } from './object-cap.js';
import { DEFAULT_WRITE_BUDGET, WriteBudget, describeBudget } from './write-budget.js';

export interface GuardedBinding {
  readonly name: string;
  readonly uid: string;
}

export class BindingGuard {
  private readonly cap: ObjectCap;
  private readonly budget: WriteBudget;

  constructor(
    private readonly ctx: Pick<SyncContext, 'limits' | 'maxCachedObjectsPerBinding' | 'writeBudget' | 'log'>,
    readonly binding: GuardedBinding,
    now?: () => number,
  ) {
    const max = ctx.maxCachedObjectsPerBinding ?? DEFAULT_MAX_CACHED_OBJECTS_PER_BINDING;
    const subject = 'provider objects';
    this.cap = new ObjectCap(max, {
      frozen: (first) => {
        const message = `the provider has more than ${max} objects in the namespaces binding ${binding.name} watches: its cache is frozen at ${max} (those keep syncing, new ones are not cached or synced; first refused: ${first}); raise --max-cached-objects-per-binding (KonnectorProps.maxCachedObjectsPerBinding) or have the provider delete objects`;
        ctx.log.warn({ binding: binding.name, max, first }, 'binding cache frozen: the provider has more objects than the cap');
        ctx.limits?.report({ binding: binding.uid, kind: 'CacheLimitReached', subject, message });
      },
      thawed: () => ctx.limits?.resolve(binding.uid, 'CacheLimitReached', subject),
      refused: () => ctx.limits?.count('CacheLimitReached'),
    });
    this.budget = new WriteBudget(ctx.writeBudget ?? DEFAULT_WRITE_BUDGET, now);
  }

  /** The admission of one of the binding's provider informers (see ObjectCap). */
  admission(source: string): InformerAdmission {
    return this.cap.admission(source);
  }

  /** Objects the binding's provider informers hold. */
  get cached(): number {
    return this.cap.size;
  }

  /**
   * About to write `what` (e.g. `status of mangodbs team-a/db`, the subject of the report) in direction
   * `dir`: returns when the write budget allows it, else reports the exhausted budget and throws a
   * RequeueError that retries once the window lets the next write through.
   */
  write(dir: 'up' | 'down', what: string): void {
    const wait = this.budget.take(`${dir}\0${what}`);
    if (wait === undefined) return;
    const b = this.budget.opts;
    this.ctx.limits?.count('WriteBudgetExhausted');
    const isNew = this.ctx.limits?.report({
      binding: this.binding.uid,
      kind: 'WriteBudgetExhausted',
      subject: `${dir} ${what}`,
      message: `the konnector spent its write budget (${describeBudget(b)}) on ${what} (${dir === 'down' ? 'to the app cluster' : 'to the provider'}): something keeps rewriting it (a fight); it backs off until the window allows the next write; find what rewrites it, or raise --write-budget / --write-budget-window`,
    });
    if (isNew !== false)
      this.ctx.log.warn({ binding: this.binding.name, object: what, direction: dir, retryInMs: wait }, 'write budget of the object exhausted; backing off');
    throw new RequeueError(`write budget of ${what} exhausted`, wait);
  }

  /** A reconcile of `what` found nothing to write: a fight over it, if any, ended. */
  settled(dir: 'up' | 'down', what: string): void {
    this.ctx.limits?.resolve(this.binding.uid, 'WriteBudgetExhausted', `${dir} ${what}`);
  }

  /** `what` is gone. */
  forget(dir: 'up' | 'down', what: string): void {
    this.budget.forget(`${dir}\0${what}`);
    this.settled(dir, what);
  }
}
