/**
 * The konnector's client defaults, shared by `klutch-konnector`, the Konnector class and
 * `npm run bench:konnector` (which runs the konnector at these unless told otherwise).
 *
 * QPS/burst per cluster connection: 500/1000. Measured beside Klutch's konnector (same API servers
 * and 2-core machine, medians of 3): the former default 100 synced 121 objects/s at 1,000
 * objects and 104 at 3,000, against 154 and 163 at 500 — the client limiter, not the API servers,
 * was the limit. Protecting the control plane from a busy konnector is left to the API server's
 * Priority and Fairness (KonnectorFlowControl: one fair-queued flow per konnector), which, unlike a
 * client limit, also protects the other app clusters. Workers: 4 per sync controller; 32 did not
 * change the throughput (docs/konnector.md: the limit is CPU, not concurrency).
 */
export const DEFAULT_QPS = 500;
export const DEFAULT_BURST = 1000;
export const DEFAULT_WORKERS = 4;
