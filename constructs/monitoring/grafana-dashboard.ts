/**
 * klutch-kit's Grafana dashboard as a ConfigMap that Grafana's dashboard sidecar (the Grafana Helm
 * chart's `sidecar.dashboards`, also in kube-prometheus-stack) loads: label `grafana_dashboard: "1"`,
 * the JSON model under key `klutch-kit.json`, the folder in annotation `grafana_folder`.
 */
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { fail } from '../_errors.js';
import { checkDnsLabel } from '../runtime/_pod.js';
import { standardLabels } from '../runtime/_defaults.js';
import { klutchDashboard, type DashboardModel, type DashboardOptions } from './dashboard.js';

/** The Grafana sidecar's default label: every ConfigMap carrying it is loaded as dashboards. */
export const GRAFANA_DASHBOARD_LABEL = { grafana_dashboard: '1' } as const;

export interface GrafanaDashboardProps extends DashboardOptions {
  /** Namespace of the ConfigMap (one the sidecar searches). @default "monitoring" */
  readonly namespace?: string;
  /** ConfigMap name. @default "klutch-kit-dashboard" */
  readonly name?: string;
  /** The sidecar's label (its `sidecar.dashboards.label`/`labelValue`). @default { grafana_dashboard: "1" } */
  readonly sidecarLabel?: Record<string, string>;
  /** Grafana folder (annotation `grafana_folder`, honoured with `sidecar.dashboards.folderAnnotation`). @default "klutch" */
  readonly folder?: string;
}

export class GrafanaDashboard extends Construct {
  public readonly configMap: k8s.KubeConfigMap;
  /** The dashboard's JSON model. */
  public readonly model: DashboardModel;

  constructor(scope: Construct, id: string, props: GrafanaDashboardProps = {}) {
    super(scope, id);
    const P = 'GrafanaDashboardProps';
    const namespace = checkDnsLabel(`${P}.namespace`, props.namespace ?? 'monitoring');
    const name = checkDnsLabel(`${P}.name`, props.name ?? 'klutch-kit-dashboard');
    const sidecar = props.sidecarLabel ?? GRAFANA_DASHBOARD_LABEL;
    if (!sidecar || typeof sidecar !== 'object' || Object.keys(sidecar).length === 0)
      fail(`${P}.sidecarLabel`, sidecar, 'must be one label, e.g. { grafana_dashboard: "1" }');
    const folder = props.folder ?? 'klutch';
    if (typeof folder !== 'string' || folder.trim() === '') fail(`${P}.folder`, folder, 'must be a non-empty folder name');
    this.model = klutchDashboard(props);
    this.configMap = new k8s.KubeConfigMap(this, 'ConfigMap', {
      metadata: {
        name,
        namespace,
        labels: { ...standardLabels(name, 'dashboard'), ...sidecar },
        annotations: { grafana_folder: folder },
      },
      data: { 'klutch-kit.json': JSON.stringify(this.model, null, 2) },
    });
  }
}
