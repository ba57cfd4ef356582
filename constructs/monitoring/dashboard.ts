/**
 * The Grafana dashboard of klutch-kit's runtime, as a Grafana JSON model (schemaVersion 39): one row
 * for the konnector (sync latency per direction, objects synced, sync errors, work-queue depth,
 * heartbeats per app cluster) and one for the bind backend (bind flows, login failures, token
 * rotations, HTTP traffic, reconciles). Every query reads a metric the runtime registers
 * (runtime/core/metrics.ts, runtime/konnector/metrics.ts, runtime/backend/metrics.ts); a unit
 * test checks that against those registries.
 */
import { fail } from '../_errors.js';
import { MetricsComponent } from './metrics-target.js';

export interface DashboardOptions {
  /** Dashboard title. @default "klutch-kit" */
  readonly title?: string;
  /** Dashboard uid (stable across imports). @default "klutch-kit" */
  readonly uid?: string;
  /** `job` label of the konnector series. @default "konnector" */
  readonly konnectorJob?: string;
  /** `job` label of the backend series. @default "klutch-backend" */
  readonly backendJob?: string;
  /** Which rows to include. @default both */
  readonly components?: readonly MetricsComponent[];
}

/** One Grafana panel target. */
export interface DashboardTarget {
  readonly refId: string;
  readonly expr: string;
  readonly legendFormat: string;
  readonly datasource: { readonly type: 'prometheus'; readonly uid: '${datasource}' };
}

/** The parts of the Grafana JSON model klutch-kit writes (Grafana accepts the rest as defaults). */
export interface DashboardModel {
  readonly uid: string;
  readonly title: string;
  readonly tags: string[];
  readonly schemaVersion: number;
  readonly editable: boolean;
  readonly time: { from: string; to: string };
  readonly refresh: string;
  readonly templating: { list: Record<string, unknown>[] };
  readonly panels: Array<Record<string, unknown> & { type: string; title: string; targets?: DashboardTarget[] }>;
}

const DS = { type: 'prometheus', uid: '${datasource}' } as const;
const UID = /^[a-zA-Z0-9_-]{1,40}$/;
const RI = '$__rate_interval';

interface PanelSpec {
  title: string;
  description: string;
  unit: string;
  queries: Array<[expr: string, legend: string]>;
  stack?: boolean;
}

/** Builds the dashboard model. */
export function klutchDashboard(options: DashboardOptions = {}): DashboardModel {
  const P = 'DashboardOptions';
  const uid = options.uid ?? 'klutch-kit';
  if (typeof uid !== 'string' || !UID.test(uid)) fail(`${P}.uid`, uid, 'must be 1-40 characters of letters, digits, "-" and "_" (a Grafana uid)');
  const title = options.title ?? 'klutch-kit';
  if (typeof title !== 'string' || title.trim() === '') fail(`${P}.title`, title, 'must be a non-empty string');
  const components = options.components ?? [MetricsComponent.KONNECTOR, MetricsComponent.BACKEND];
  if (!Array.isArray(components) || components.length === 0) fail(`${P}.components`, components, 'must list at least one MetricsComponent');
  components.forEach((c, i) => {
    if (!(c instanceof MetricsComponent)) fail(`${P}.components[${i}]`, c, `must be one of ${MetricsComponent.all.join(', ')}`);
  });
  const kJob = checkJob(`${P}.konnectorJob`, options.konnectorJob ?? 'konnector');
  const bJob = checkJob(`${P}.backendJob`, options.backendJob ?? 'klutch-backend');

  // Dashboard variables: the job selectors can be changed in Grafana without editing the model.
  const k = 'job=~"$konnector_job"';
  const b = 'job=~"$backend_job"';
  const cn = 'cluster_namespace=~"$cluster_namespace"';

  const konnector: PanelSpec[] = [
    {
      title: 'Sync latency p99 by direction',
      description:
        'From observing a change to writing it to the other cluster; up = app cluster → control plane (spec), down = control plane → app cluster (status, credentials).',
      unit: 's',
      queries: [
        [`histogram_quantile(0.99, sum by (direction, le) (rate(klutch_konnector_sync_duration_seconds_bucket{${k}}[${RI}])))`, 'p99 {{direction}}'],
        [`histogram_quantile(0.5, sum by (direction, le) (rate(klutch_konnector_sync_duration_seconds_bucket{${k}}[${RI}])))`, 'p50 {{direction}}'],
      ],
    },
    {
      title: 'Objects synced',
      description: 'Writes the konnector made to keep both clusters in sync, per second, by direction and operation.',
      unit: 'ops',
      stack: true,
      queries: [[`sum by (direction, operation) (rate(klutch_konnector_objects_synced_total{${k}}[${RI}]))`, '{{direction}} {{operation}}']],
    },
    {
      title: 'Sync errors',
      description: 'Failed sync attempts per second (retried with backoff), by direction and resource.',
      unit: 'ops',
      queries: [[`sum by (direction, resource) (rate(klutch_konnector_sync_errors_total{${k}}[${RI}]))`, '{{direction}} {{resource}}']],
    },
    {
      title: 'Work-queue depth (konnector)',
      description: "Keys waiting in each controller's work queue; a queue that keeps growing means the konnector cannot keep up.",
      unit: 'short',
      queries: [[`sum by (controller) (klutch_workqueue_depth{${k}})`, '{{controller}}']],
    },
    {
      title: 'Time since the last heartbeat, per app cluster',
      description:
        "Age of the heartbeat the konnector last wrote into its ClusterBinding on the control plane, by the app cluster's cluster namespace; the dashed line is the configured interval.",
      unit: 's',
      queries: [
        [`time() - max by (cluster_namespace) (klutch_konnector_last_heartbeat_timestamp_seconds{${k}, ${cn}})`, '{{cluster_namespace}}'],
        [`max by (cluster_namespace) (klutch_konnector_heartbeat_interval_seconds{${k}, ${cn}})`, 'interval {{cluster_namespace}}'],
      ],
    },
    {
      title: 'Heartbeats per app cluster',
      description: 'Heartbeats written per minute, by cluster namespace and result.',
      unit: 'short',
      queries: [[`sum by (cluster_namespace, result) (rate(klutch_konnector_heartbeats_total{${k}, ${cn}}[${RI}])) * 60`, '{{cluster_namespace}} {{result}}']],
    },
    {
      title: 'Reconcile errors (konnector)',
      description: 'Reconciles that returned an error, per second, by controller.',
      unit: 'ops',
      queries: [[`sum by (controller) (rate(klutch_reconcile_errors_total{${k}}[${RI}]))`, '{{controller}}']],
    },
    {
      title: 'Konnector memory',
      description: 'Resident set size per pod.',
      unit: 'bytes',
      queries: [[`max by (pod) (klutch_process_resident_memory_bytes{${k}})`, '{{pod}}']],
    },
  ];

  const backend: PanelSpec[] = [
    {
      title: 'Bind flows',
      description: 'Bind attempts per minute by flow (browser: kubectl bind with a login; bearer: a token) and result.',
      unit: 'short',
      stack: true,
      queries: [[`sum by (flow, result) (rate(klutch_backend_binds_total{${b}}[${RI}])) * 60`, '{{flow}} {{result}}']],
    },
    {
      title: 'Login and token failures',
      description: 'Refused logins, OIDC states, sessions and bearer tokens per minute, by the field that failed.',
      unit: 'short',
      queries: [[`sum by (field) (rate(klutch_backend_auth_failures_total{${b}}[${RI}])) * 60`, '{{field}}']],
    },
    {
      title: 'Token rotations',
      description: 'ServiceAccount tokens of bound clusters re-issued before they expire, per hour.',
      unit: 'short',
      queries: [[`sum(rate(klutch_backend_token_rotations_total{${b}}[${RI}])) * 3600`, 'rotations/h']],
    },
    {
      title: 'HTTP requests',
      description: 'Requests per second by route and status code.',
      unit: 'reqps',
      stack: true,
      queries: [[`sum by (route, code) (rate(klutch_backend_http_requests_total{${b}}[${RI}]))`, '{{route}} {{code}}']],
    },
    {
      title: 'HTTP latency p99 by route',
      description: '99th percentile of the request duration.',
      unit: 's',
      queries: [[`histogram_quantile(0.99, sum by (route, le) (rate(klutch_backend_http_request_duration_seconds_bucket{${b}}[${RI}])))`, '{{route}}']],
    },
    {
      title: 'Backend reconciles',
      description: 'Controller reconciles per second by controller and result.',
      unit: 'ops',
      queries: [[`sum by (controller, result) (rate(klutch_backend_reconciles_total{${b}}[${RI}]))`, '{{controller}} {{result}}']],
    },
    {
      title: 'Work-queue depth (backend)',
      description: "Keys waiting in each controller's work queue.",
      unit: 'short',
      queries: [[`sum by (controller) (klutch_workqueue_depth{${b}})`, '{{controller}}']],
    },
    {
      title: 'Backend memory',
      description: 'Resident set size per pod.',
      unit: 'bytes',
      queries: [[`max by (pod) (klutch_backend_process_resident_memory_bytes{${b}})`, '{{pod}}']],
    },
  ];

  const panels: DashboardModel['panels'] = [];
  let id = 1;
  let y = 0;
  const addRow = (rowTitle: string, specs: PanelSpec[]) => {
    panels.push({ type: 'row', title: rowTitle, id: id++, collapsed: false, gridPos: { h: 1, w: 24, x: 0, y }, panels: [] });
    y += 1;
    specs.forEach((s, i) => {
      panels.push({
        type: 'timeseries',
        id: id++,
        title: s.title,
        description: s.description,
        datasource: DS,
        gridPos: { h: 8, w: 12, x: (i % 2) * 12, y: y + Math.floor(i / 2) * 8 },
        fieldConfig: {
          defaults: { unit: s.unit, custom: { drawStyle: 'line', fillOpacity: s.stack ? 30 : 10, stacking: { mode: s.stack ? 'normal' : 'none' } } },
          overrides: [],
        },
        options: { legend: { displayMode: 'list', placement: 'bottom', showLegend: true }, tooltip: { mode: 'multi', sort: 'desc' } },
        targets: s.queries.map(([expr, legendFormat], j) => ({ refId: String.fromCharCode(65 + j), expr, legendFormat, datasource: DS })),
      });
    });
    y += Math.ceil(specs.length / 2) * 8;
  };
  if (components.includes(MetricsComponent.KONNECTOR)) addRow('Konnector (app clusters)', konnector);
  if (components.includes(MetricsComponent.BACKEND)) addRow('Bind backend (control plane)', backend);

  const textbox = (name: string, label: string, value: string) => ({
    name,
    label,
    type: 'textbox',
    query: value,
    current: { text: value, value },
    hide: 0,
  });
  return {
    uid,
    title,
    tags: ['klutch', 'klutch-kit'],
    schemaVersion: 39,
    editable: true,
    time: { from: 'now-6h', to: 'now' },
    refresh: '30s',
    templating: {
      list: [
        { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', current: {}, hide: 0 },
        textbox('konnector_job', 'Konnector job', kJob),
        textbox('backend_job', 'Backend job', bJob),
        {
          name: 'cluster_namespace',
          label: 'Cluster namespace',
          type: 'query',
          datasource: DS,
          query: { query: `label_values(klutch_konnector_heartbeat_interval_seconds{${k}}, cluster_namespace)`, refId: 'cluster_namespace' },
          includeAll: true,
          multi: true,
          allValue: '.*',
          current: { text: 'All', value: '$__all' },
          refresh: 2,
          hide: 0,
        },
      ],
    },
    panels,
  };
}

function checkJob(prop: string, v: unknown): string {
  if (typeof v !== 'string' || v === '' || /["\\\n]/.test(v))
    fail(prop, v, 'must be a non-empty job name (a regular expression without quotes or backslashes)');
  return v;
}
