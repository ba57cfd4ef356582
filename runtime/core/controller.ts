/**
 * Controller runner: a work queue of string keys, N workers calling a Reconciler, per-key
 * exponential backoff on errors, `requeueAfterMs` for periodic work, metrics and logs.
 */
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { controllerMetrics, type ControllerMetrics } from './metrics.js';
import { ExponentialBackoff, WorkQueue } from './queue.js';
import { silentLogger } from './logger.js';

export interface ReconcileResult {
  /** Reconcile this key again after the delay (success path; backoff is reset). */
  requeueAfterMs?: number;
}

export interface ReconcileContext {
  log: Logger;
  signal: AbortSignal;
}

export interface Reconciler {
  reconcile(key: string, ctx: ReconcileContext): Promise<ReconcileResult | void>;
}

/** Errors that should be retried after a fixed delay rather than with backoff, without an error log. */
export class RequeueError extends Error {
  constructor(
    message: string,
    readonly afterMs: number,
  ) {
    super(message);
    this.name = 'RequeueError';
  }
}

export interface ControllerOptions {
  name: string;
  reconciler: Reconciler | ((key: string, ctx: ReconcileContext) => Promise<ReconcileResult | void>);
  /** @default 2 */
  workers?: number;
  logger?: Logger;
  registry?: Registry;
  /** Backoff for failed keys. @default 5 ms … 60 s */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /**
   * Called for a reconcile that failed with a programming error (TypeError, RangeError, …) instead of
   * logging it here; it is counted in `klutch_reconcile_unexpected_errors_total` either way.
   * @default - logged at error level with the stack, and kept as the last unexpected error of the registry
   */
  onUnexpectedError?: (err: Error, key: string) => void;
}

/** An error that only a bug produces (as opposed to an API answer or a network failure a retry may cure). */
export function isProgrammingError(e: unknown): e is Error {
  return e instanceof TypeError || e instanceof RangeError || e instanceof ReferenceError || e instanceof SyntaxError || e instanceof EvalError;
}

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue<string>;
  private readonly reconciler: Reconciler;
  private readonly workers: number;
  private readonly log: Logger;
  private readonly metrics: ControllerMetrics;
  private readonly onUnexpectedError: ((err: Error, key: string) => void) | undefined;
  private running: Promise<void>[] = [];
  private readonly ac = new AbortController();
  /** The label sets of this controller's reconcile metrics, built once rather than per reconcile. */
  private readonly resultLabels: Record<'success' | 'requeue' | 'error', { controller: string; result: string }>;

  constructor(opts: ControllerOptions) {
    this.name = opts.name;
    this.workers = opts.workers ?? 2;
    if (!Number.isInteger(this.workers) || this.workers < 1) {
      throw new Error(`ControllerOptions.workers: ${opts.workers} must be an integer >= 1`);
    }
    this.reconciler = typeof opts.reconciler === 'function' ? { reconcile: opts.reconciler } : opts.reconciler;
    this.log = (opts.logger ?? silentLogger).child({ controller: opts.name });
    this.metrics = controllerMetrics(opts.registry ?? new Registry());
    this.onUnexpectedError = opts.onUnexpectedError;
    this.resultLabels = {
      success: { controller: this.name, result: 'success' },
      requeue: { controller: this.name, result: 'requeue' },
      error: { controller: this.name, result: 'error' },
    };
    this.queue = new WorkQueue<string>({
      rateLimiter: new ExponentialBackoff<string>(opts.backoffBaseMs ?? 5, opts.backoffMaxMs ?? 60_000),
    });
    const queue = this.queue;
    this.metrics.queueDepths.set(this.name, () => queue.depth); // read on scrape
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }
  enqueueAfter(key: string, ms: number): void {
    this.queue.addAfter(key, ms);
  }

  start(): this {
    for (let i = 0; i < this.workers; i++) this.running.push(this.worker());
    return this;
  }

  /** Stops taking keys, waits for in-flight reconciles to finish. */
  async stop(): Promise<void> {
    this.ac.abort();
    this.queue.shutdown();
    await Promise.all(this.running);
    this.running = [];
  }

  get stopped(): boolean {
    return this.ac.signal.aborted;
  }

  private unexpected(e: Error, key: string, log: Logger): void {
    this.metrics.reconcileUnexpected.inc({ controller: this.name });
    const u = this.metrics.unexpected;
    u.total++;
    u.last = { at: new Date(), controller: this.name, key, message: `${e.name}: ${e.message}` };
    if (this.onUnexpectedError) this.onUnexpectedError(e, key);
    else log.error({ err: e.stack ?? e.message }, 'unexpected error in reconcile (a bug); retrying with backoff');
  }

  private async worker(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      const t0 = performance.now();
      const end = (result: 'success' | 'requeue' | 'error') => {
        this.metrics.reconcileDuration.observe(this.resultLabels[result], (performance.now() - t0) / 1000);
        this.metrics.reconcileTotal.inc(this.resultLabels[result]);
      };
      // The key's child logger only when something logs: most reconciles log nothing, and a pino child
      // per reconcile was a measurable part of the konnector's CPU per synced object (bench:konnector).
      let keyLog: Logger | undefined;
      const parent = this.log;
      const ctx: ReconcileContext = {
        get log() {
          return (keyLog ??= parent.child({ key }));
        },
        signal: this.ac.signal,
      };
      try {
        const res = await this.reconciler.reconcile(key, ctx);
        this.queue.forget(key);
        if (res?.requeueAfterMs !== undefined) {
          this.queue.addAfter(key, res.requeueAfterMs);
          end('requeue');
        } else {
          end('success');
        }
      } catch (e) {
        if (e instanceof RequeueError) {
          ctx.log.debug({ reason: e.message, afterMs: e.afterMs }, 'requeue');
          this.queue.addAfter(key, e.afterMs);
          end('requeue');
        } else {
          const retries = this.queue.numRequeues(key);
          const log = ctx.log;
          if (isProgrammingError(e)) this.unexpected(e, key, log);
          else if (!this.ac.signal.aborted) {
            (retries < 3 ? log.info.bind(log) : log.error.bind(log))({ err: (e as Error).message, retries }, 'reconcile failed; retrying with backoff');
          }
          this.queue.addRateLimited(key);
          end('error');
          this.metrics.reconcileErrors.inc({ controller: this.name });
        }
      } finally {
        this.queue.done(key);
      }
    }
  }
}
