/**
 * The konnector's client defaults, shared by `klutch-konnector`, the Konnector class and
 * `npm run bench:konnector` (which runs the konnector at these unless told otherwise).
 *
 * QPS/burst per cluster connection: 500/1000. Measured beside Klutch's konnector (same API servers
 * and 2-core machine, medians of 3): the former default 100 synced 121 objects/s at 1,000
 * objects and 104 at 3,000, against 154 and 163 at 500 — the client limiter, not the API servers,
 * was the limit. Protecting the control plane from a busy konnector is left to the API server's
 * Priority and Fairness (KonnectorFlowControl: one fair-queued flow per konnector), which, unlike a
 * client limit, also protects the other app clusters. Workers: 16 per sync controller. On the idle
 * machine 4 and 32 synced alike (CPU was the limit), but with the API servers busy — as a remote
 * control plane's round trips make them for a konnector — 4 workers trailed the unthrottled konnector
 * (QPS 0, 32 workers) by 16 % up and 37 % down at 1,000 objects, while 16 matched it within the run's
 * noise; the QPS limit of 500 made no request wait in any run (bench:konnector's
 * `waited for QPS limit` column; docs/konnector.md).
 */
export const DEFAULT_QPS = 500;
export const DEFAULT_BURST = 1000;
export const DEFAULT_WORKERS = 16;
