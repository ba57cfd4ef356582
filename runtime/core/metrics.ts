/**
 * prom-client metrics shared by all controllers of a process. Metrics are created once per
 * Registry (so several konnectors in one test process each get their own registry).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface ControllerMetrics {
  registry: Registry;
  /** Set on scrape from {@link ControllerMetrics.queueDepths}, not on every queue change. */
  queueDepth: Gauge<'controller'>;
  /** Each controller's queue depth by controller name, read when the registry is scraped. */
  queueDepths: Map<string, () => number>;
  reconcileDuration: Histogram<'controller' | 'result'>;
  reconcileErrors: Counter<'controller'>;
  reconcileTotal: Counter<'controller' | 'result'>;
  /** Reconciles that failed with a programming error (TypeError and kin): bugs, not weather. */
  reconcileUnexpected: Counter<'controller'>;
  /** How many such bugs, and the last one (shown on /readyz). */
  unexpected: { total: number; last?: { at: Date; controller: string; key: string; message: string } };
}

const cache = new WeakMap<Registry, ControllerMetrics>();

export function controllerMetrics(registry: Registry): ControllerMetrics {
  let m = cache.get(registry);
  if (m) return m;
  const queueDepths = new Map<string, () => number>();
  m = {
    registry,
    queueDepths,
    queueDepth: new Gauge({
      name: 'klutch_workqueue_depth',
      help: 'Keys waiting in the work queue',
      labelNames: ['controller'],
      registers: [registry],
      collect() {
        for (const [controller, depth] of queueDepths) this.set({ controller }, depth());
      },
    }),
    reconcileDuration: new Histogram({
      name: 'klutch_reconcile_duration_seconds',
      help: 'Time spent in one reconcile',
      labelNames: ['controller', 'result'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    reconcileErrors: new Counter({
      name: 'klutch_reconcile_errors_total',
      help: 'Reconciles that returned an error',
      labelNames: ['controller'],
      registers: [registry],
    }),
    reconcileTotal: new Counter({
      name: 'klutch_reconcile_total',
      help: 'Reconciles by result (success, error, requeue)',
      labelNames: ['controller', 'result'],
      registers: [registry],
    }),
    reconcileUnexpected: new Counter({
      name: 'klutch_reconcile_unexpected_errors_total',
      help: 'Reconciles that failed with a programming error (a bug); each is logged with its stack',
      labelNames: ['controller'],
      registers: [registry],
    }),
    unexpected: { total: 0 },
  };
  cache.set(registry, m);
  return m;
}

/** A fresh registry with Node process metrics (RSS, event-loop lag, …) registered. */
export function newProcessRegistry(prefix = 'klutch_'): Registry {
  const r = new Registry();
  collectDefaultMetrics({ register: r, prefix });
  return r;
}
