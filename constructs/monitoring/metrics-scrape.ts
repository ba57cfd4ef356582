/**
 * A `ServiceMonitor` or `PodMonitor` (Prometheus Operator) that scrapes `/metrics` of one klutch-kit
 * runtime component. The job label is the component's `app.kubernetes.io/name` (`konnector`,
 * `klutch-backend`) with either kind, so the dashboard and the alerts select the same series
 * whichever kind you pick.
 */
import { Construct } from 'constructs';
import { PodMonitor, ServiceMonitor } from '../../imports/prometheus-operator-monitoring.coreos.com.js';
import { fail } from '../_errors.js';
import { checkDnsLabel } from '../runtime/_pod.js';
import { standardLabels } from '../runtime/_defaults.js';
import { MetricsTarget } from './metrics-target.js';
import { ScrapeKind } from './scrape-kind.js';

/** The label whose value becomes the `job` label of the scraped series. */
export const JOB_LABEL = 'app.kubernetes.io/name';

/** A Prometheus duration, e.g. `30s`, `1m`, `1m30s`. */
const DURATION = /^(\d+(ms|s|m|h|d|w|y))+$/;

export interface MetricsScrapeProps {
  /** The component to scrape. */
  readonly target: MetricsTarget;
  /** ServiceMonitor or PodMonitor. @default ScrapeKind.SERVICE_MONITOR */
  readonly kind?: ScrapeKind;
  /** Scrape interval. @default "30s" */
  readonly interval?: string;
  /**
   * Labels on the monitor object, for the Prometheus resource's `serviceMonitorSelector` /
   * `podMonitorSelector` (e.g. `{ release: "kube-prometheus-stack" }`). @default - none
   */
  readonly labels?: Record<string, string>;
  /** Namespace of the monitor object. @default - the target's namespace */
  readonly namespace?: string;
}

export class MetricsScrape extends Construct {
  /** The monitor object (a ServiceMonitor or a PodMonitor). */
  public readonly monitor: ServiceMonitor | PodMonitor;
  public readonly kind: ScrapeKind;
  /** The `job` label value of the scraped series. */
  public readonly job: string;

  constructor(scope: Construct, id: string, props: MetricsScrapeProps) {
    super(scope, id);
    const P = 'MetricsScrapeProps';
    if (!props || !(props.target instanceof MetricsTarget))
      fail(`${P}.target`, props?.target, 'must be a MetricsTarget (MetricsTarget.konnector(), .backend(), .fromKonnector(), .fromBindBackend())');
    const t = props.target;
    const kind = props.kind ?? ScrapeKind.SERVICE_MONITOR;
    if (!(kind instanceof ScrapeKind)) fail(`${P}.kind`, kind, `must be one of ${ScrapeKind.all.join(', ')}`);
    this.kind = kind;
    const interval = props.interval ?? '30s';
    if (typeof interval !== 'string' || !DURATION.test(interval)) fail(`${P}.interval`, interval, 'is not a Prometheus duration (e.g. "30s", "1m")');
    const namespace = checkDnsLabel(`${P}.namespace`, props.namespace ?? t.namespace);
    for (const [k, v] of Object.entries(props.labels ?? {})) {
      if (typeof v !== 'string' || v.length > 63) fail(`${P}.labels["${k}"]`, v, 'must be a label value (a string of at most 63 characters)');
    }
    this.job = t.selector[JOB_LABEL];
    const metadata = {
      name: t.name,
      namespace,
      labels: { ...standardLabels(t.name, `${t.component}-monitoring`), ...props.labels },
    };
    const namespaceSelector = namespace === t.namespace ? undefined : { matchNames: [t.namespace] };
    const selector = { matchLabels: { ...t.selector } };
    this.monitor =
      kind === ScrapeKind.SERVICE_MONITOR
        ? new ServiceMonitor(this, 'ServiceMonitor', {
            metadata,
            spec: {
              jobLabel: JOB_LABEL,
              selector,
              namespaceSelector,
              endpoints: [{ port: t.servicePort, path: '/metrics', interval }],
            },
          })
        : new PodMonitor(this, 'PodMonitor', {
            metadata,
            spec: {
              jobLabel: JOB_LABEL,
              selector,
              namespaceSelector,
              podMetricsEndpoints: [{ port: t.podPort, path: '/metrics', interval }],
            },
          });
  }
}
