/** How Prometheus (through the Prometheus Operator) finds the metrics endpoints. */
export enum ScrapeKind {
  /** A `ServiceMonitor` on the component's Service (every ready endpoint is scraped). */
  SERVICE_MONITOR = 'ServiceMonitor',
  /** A `PodMonitor` on the component's Pods (also the ones not ready, e.g. a standby konnector replica). */
  POD_MONITOR = 'PodMonitor',
}
