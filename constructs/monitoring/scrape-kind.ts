/** How Prometheus (through the Prometheus Operator) finds the metrics endpoints (enum-like: static instances). */
export class ScrapeKind {
  /** A `ServiceMonitor` on the component's Service (every ready endpoint is scraped). */
  public static readonly SERVICE_MONITOR = new ScrapeKind('ServiceMonitor');
  /** A `PodMonitor` on the component's Pods (also the ones not ready, e.g. a standby konnector replica). */
  public static readonly POD_MONITOR = new ScrapeKind('PodMonitor');

  /** Every instance, in declaration order. */
  public static get all(): readonly ScrapeKind[] {
    return Object.values(ScrapeKind).filter((v): v is ScrapeKind => v instanceof ScrapeKind);
  }

  private constructor(
    /** The monitor kind, `ServiceMonitor` or `PodMonitor`. */
    public readonly value: string,
  ) {}

  public toString(): string {
    return this.value;
  }

  /** The value (error messages render it through this). */
  public toJson(): string {
    return this.value;
  }
}
