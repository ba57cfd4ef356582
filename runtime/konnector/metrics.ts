/** Konnector-specific metrics (on top of the controller metrics of runtime/core). */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ClientStats } from '../core/client.js';

export interface KonnectorMetrics {
  syncDuration: Histogram<'direction' | 'resource'>;
  objectsSynced: Counter<'direction' | 'resource' | 'operation'>;
  syncErrors: Counter<'direction' | 'resource'>;
  heartbeats: Counter<'cluster_namespace' | 'result'>;
  lastHeartbeat: Gauge<'cluster_namespace'>;
  heartbeatInterval: Gauge<'cluster_namespace'>;
  /** Objects, writes or namespaces refused because a binding hit a limit (binding-limits.ts). */
  limited: Counter<'limit'>;
  /** Bindings that show the condition of a limit (binding-limits.ts). */
  bindingsLimited: Gauge<'limit'>;
  /** Shared by the konnector's clients of each side, read by the two client metrics on every scrape. */
  clientStats: { app: ClientStats; provider: ClientStats };
}

const cache = new WeakMap<Registry, KonnectorMetrics>();

export function konnectorMetrics(registry: Registry): KonnectorMetrics {
  let m = cache.get(registry);
  if (m) return m;
  const clientStats = { app: { requests: 0, throttledMs: 0 }, provider: { requests: 0, throttledMs: 0 } };
  new Counter({
    name: 'klutch_konnector_client_requests_total',
    help: 'API requests the konnector sent, by cluster (app: the app cluster, provider: the control plane)',
    labelNames: ['cluster'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [cluster, s] of Object.entries(clientStats)) this.inc({ cluster }, s.requests);
    },
  });
  new Counter({
    name: 'klutch_konnector_client_throttled_seconds_total',
    help: 'Time requests waited for the client-side rate limit (--qps/--burst), by cluster; growing means the limit, not the API server, sets the pace',
    labelNames: ['cluster'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [cluster, s] of Object.entries(clientStats)) this.inc({ cluster }, s.throttledMs / 1000);
    },
  });
  m = {
    clientStats,
    syncDuration: new Histogram({
      name: 'klutch_konnector_sync_duration_seconds',
      help: 'Time from observing a change to writing it to the other cluster, by direction (up = app cluster to provider, down = provider to app cluster)',
      labelNames: ['direction', 'resource'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    objectsSynced: new Counter({
      name: 'klutch_konnector_objects_synced_total',
      help: 'Writes done by the konnector to keep both clusters in sync, by direction and operation',
      labelNames: ['direction', 'resource', 'operation'],
      registers: [registry],
    }),
    syncErrors: new Counter({
      name: 'klutch_konnector_sync_errors_total',
      help: 'Failed sync attempts (retried with backoff), by direction',
      labelNames: ['direction', 'resource'],
      registers: [registry],
    }),
    heartbeats: new Counter({
      name: 'klutch_konnector_heartbeats_total',
      help: "Heartbeats written into the ClusterBinding on the provider, by the app cluster's cluster namespace there and result (success, error)",
      labelNames: ['cluster_namespace', 'result'],
      registers: [registry],
    }),
    lastHeartbeat: new Gauge({
      name: 'klutch_konnector_last_heartbeat_timestamp_seconds',
      help: 'Unix time of the last heartbeat in the ClusterBinding on the provider, by cluster namespace',
      labelNames: ['cluster_namespace'],
      registers: [registry],
    }),
    limited: new Counter({
      name: 'klutch_konnector_limited_total',
      help: 'Objects, writes or namespaces the konnector refused because a binding hit a limit (NamespaceNotAllowed, CacheLimitReached, WriteBudgetExhausted)',
      labelNames: ['limit'],
      registers: [registry],
    }),
    bindingsLimited: new Gauge({
      name: 'klutch_konnector_bindings_limited',
      help: 'Bindings that show the condition of a limit (NamespaceNotAllowed, CacheLimitReached, WriteBudgetExhausted)',
      labelNames: ['limit'],
      registers: [registry],
    }),
    heartbeatInterval: new Gauge({
      name: 'klutch_konnector_heartbeat_interval_seconds',
      help: 'Configured heartbeat interval (the provider considers a konnector gone after it passes without a heartbeat), by cluster namespace',
      labelNames: ['cluster_namespace'],
      registers: [registry],
    }),
  };
  cache.set(registry, m);
  return m;
}
