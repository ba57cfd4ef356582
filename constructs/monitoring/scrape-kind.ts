/**
 * `ScrapeKind`: how Prometheus finds the metrics endpoints (ServiceMonitor or PodMonitor).
 */
import { EnumLike, enumMembers } from '../_enum-like.js';

/** How Prometheus (through the Prometheus Operator) finds the metrics endpoints (enum-like: static instances). */
export class ScrapeKind extends EnumLike {
  /** A `ServiceMonitor` on the component's Service (every ready endpoint is scraped). */
  public static readonly SERVICE_MONITOR = new ScrapeKind('ServiceMonitor');
  /** A `PodMonitor` on the component's Pods (also the ones not ready, e.g. a standby konnector replica). */
  public static readonly POD_MONITOR = new ScrapeKind('PodMonitor');

  /** Every instance, in declaration order. */
  public static get all(): readonly ScrapeKind[] {
    return enumMembers(ScrapeKind);
  }

  private constructor(
    /** The monitor kind, `ServiceMonitor` or `PodMonitor`. */
    value: string,
  ) {
    super(value);
  }
}
