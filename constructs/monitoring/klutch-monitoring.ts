/**
 * Everything an operator needs to watch klutch-kit's runtime on one cluster: a ServiceMonitor or
 * PodMonitor per component, the PrometheusRule and the Grafana dashboard ConfigMap, all selecting
 * the same `job` labels. On an app cluster pass the konnector, on the control plane the backend
 * (or both where one Prometheus sees both).
 */
import { Construct } from 'constructs';
import { fail } from '../_errors.js';
import type { BindBackend } from '../runtime/bind-backend.js';
import type { Konnector } from '../runtime/konnector.js';
import { GrafanaDashboard } from './grafana-dashboard.js';
import { KlutchAlerts } from './klutch-alerts.js';
import { MetricsScrape } from './metrics-scrape.js';
import { MetricsComponent, MetricsTarget } from './metrics-target.js';
import { ScrapeKind } from './scrape-kind.js';
import type { AlertOptions } from './alert-rules.js';

/** Options shared by the topology charts and the Pulumi components. */
export interface MonitoringOptions {
  /** ServiceMonitor or PodMonitor. @default ScrapeKind.SERVICE_MONITOR */
  readonly scrapeKind?: ScrapeKind;
  /** Scrape interval. @default "30s" */
  readonly interval?: string;
  /** Namespace of the PrometheusRule and the dashboard ConfigMap. @default "monitoring" */
  readonly namespace?: string;
  /** Labels on the monitors and the PrometheusRule, for the Prometheus resource's selectors. @default - none */
  readonly labels?: Record<string, string>;
  /** Emit the PrometheusRule. @default true */
  readonly alerts?: boolean;
  /** Alert thresholds. @default - the defaults of AlertOptions */
  readonly thresholds?: Pick<AlertOptions, 'missedHeartbeats' | 'queueDepth' | 'loginFailures' | 'syncErrorsFor'>;
  /** Emit the Grafana dashboard ConfigMap. @default true */
  readonly dashboard?: boolean;
  /** Namespace of the dashboard ConfigMap. @default - `namespace` */
  readonly dashboardNamespace?: string;
}

export interface KlutchMonitoringProps extends MonitoringOptions {
  /** The konnector to scrape. @default - none */
  readonly konnector?: Konnector;
  /** The backend to scrape. @default - none */
  readonly backend?: BindBackend;
}

export class KlutchMonitoring extends Construct {
  public readonly scrapes: readonly MetricsScrape[];
  public readonly alerts?: KlutchAlerts;
  public readonly dashboard?: GrafanaDashboard;

  constructor(scope: Construct, id: string, props: KlutchMonitoringProps) {
    super(scope, id);
    const P = 'KlutchMonitoringProps';
    if (!props || (!props.konnector && !props.backend)) fail(P, props, 'must name a konnector, a backend or both');
    const scrapes: MetricsScrape[] = [];
    const common = { kind: props.scrapeKind, interval: props.interval, labels: props.labels };
    if (props.konnector) scrapes.push(new MetricsScrape(this, 'Konnector', { ...common, target: MetricsTarget.fromKonnector(props.konnector) }));
    if (props.backend) scrapes.push(new MetricsScrape(this, 'Backend', { ...common, target: MetricsTarget.fromBindBackend(props.backend) }));
    this.scrapes = scrapes;
    const components = [...(props.konnector ? [MetricsComponent.KONNECTOR] : []), ...(props.backend ? [MetricsComponent.BACKEND] : [])];
    const jobs = {
      konnectorJob: props.konnector ? scrapes[0].job : undefined,
      backendJob: props.backend ? scrapes[scrapes.length - 1].job : undefined,
    };
    if (props.alerts ?? true) {
      this.alerts = new KlutchAlerts(this, 'Alerts', { ...props.thresholds, ...jobs, components, namespace: props.namespace, labels: props.labels });
    }
    if (props.dashboard ?? true) {
      this.dashboard = new GrafanaDashboard(this, 'Dashboard', { ...jobs, components, namespace: props.dashboardNamespace ?? props.namespace });
    }
  }
}
