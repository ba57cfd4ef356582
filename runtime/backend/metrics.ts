/** Prometheus metrics of the bind backend (one registry per backend instance). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The values of `klutch_backend_auth_failures_total{field}`: a closed set, so no request can add a
 * series (before, a malformed cookie's name became a label value: 2,000 requests, 2,004 series).
 */
export const AUTH_FAILURE_FIELDS = [
  'Authorization',
  'state',
  'session',
  'csrf',
  'code',
  'error',
  'id_token',
  'issuer',
  'cookie',
  'body',
  'request',
  'other',
] as const;
export type AuthFailureField = (typeof AUTH_FAILURE_FIELDS)[number];

/** Request parameters and headers a refusal may name; all count as `request`. */
const REQUEST_FIELDS = new Set(['s', 'c', 'u', 'p', 'q', 'sessionID', 'clusterID', 'group', 'resource', 'Content-Type', 'method', 'path', 'target']);

/** Maps the field an error names (`cookie klutch-bind-x`, `id_token.nonce`, `s`, …) to one of {@link AUTH_FAILURE_FIELDS}. */
export function authFailureField(field: string): AuthFailureField {
  if (field.startsWith('cookie')) return 'cookie';
  const head = field.split('.')[0];
  if ((AUTH_FAILURE_FIELDS as readonly string[]).includes(head)) return head as AuthFailureField;
  if (REQUEST_FIELDS.has(head)) return 'request';
  return 'other';
}

export class BackendMetrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'klutch_backend_http_requests_total',
    help: 'HTTP requests by route and status code',
    labelNames: ['route', 'code'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'klutch_backend_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly binds = new Counter({
    name: 'klutch_backend_binds_total',
    help: 'Bind attempts by flow (browser|bearer) and result',
    labelNames: ['flow', 'result'] as const,
    registers: [this.registry],
  });
  readonly authFailures = new Counter({
    name: 'klutch_backend_auth_failures_total',
    help: `Refused logins, states, sessions, bearer tokens and requests, by field (one of ${AUTH_FAILURE_FIELDS.join(', ')})`,
    labelNames: ['field'] as const,
    registers: [this.registry],
  });
  readonly reconciles = new Counter({
    name: 'klutch_backend_reconciles_total',
    help: 'Controller reconciles by controller and result',
    labelNames: ['controller', 'result'] as const,
    registers: [this.registry],
  });
  readonly tokenRotations = new Counter({
    name: 'klutch_backend_token_rotations_total',
    help: 'ServiceAccount tokens re-issued before expiry',
    registers: [this.registry],
  });

  readonly unexpectedErrors = new Counter({
    name: 'klutch_backend_unexpected_errors_total',
    help: 'Unexpected errors (bugs) by source (http, controller, process); each is logged with its context',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });
  readonly limitRefusals = new Counter({
    name: 'klutch_backend_limit_refusals_total',
    help: 'Requests refused by a limit (clusters: 403, bind_rate and concurrent: 429, api_queue and draining: 503)',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });
  readonly limits = new Gauge({
    name: 'klutch_backend_limit',
    help: 'Configured per-identity limits (0: unlimited): clusters (app clusters per identity), bind_rate_per_minute, bind_burst',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });
  readonly clusterNamespaces = new Gauge({
    name: 'klutch_backend_cluster_namespaces',
    help: 'Cluster namespaces by state (bound, incomplete, stale), as the sweeper last saw them',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });
  readonly maxClustersPerIdentity = new Gauge({
    name: 'klutch_backend_max_clusters_per_identity',
    help: 'The largest number of app clusters bound by one identity, as the sweeper last saw it',
    registers: [this.registry],
  });
  readonly sweeps = new Counter({
    name: 'klutch_backend_sweeps_total',
    help: 'Cluster namespaces the sweeper deleted (or would delete in dry-run), by reason and mode',
    labelNames: ['reason', 'mode'] as const,
    registers: [this.registry],
  });

  constructor(defaultMetrics = false) {
    if (defaultMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'klutch_backend_' });
  }
}
