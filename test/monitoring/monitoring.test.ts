import { describe, expect, it } from '@jest/globals';
import { parser } from '@prometheus-io/lezer-promql';
import { Registry } from 'prom-client';
import {
  GrafanaDashboard,
  GRAFANA_DASHBOARD_LABEL,
  KlutchAlerts,
  klutchAlertRules,
  klutchDashboard,
  KlutchMonitoring,
  MetricsComponent,
  MetricsScrape,
  MetricsTarget,
  ScrapeKind,
} from '../../constructs/monitoring/index.js';
import { BindBackend, Konnector } from '../../constructs/runtime/index.js';
import { defaultRegistry } from '../../constructs/validate/index.js';
import { BackendMetrics } from '../../runtime/backend/metrics.js';
import { controllerMetrics, newProcessRegistry } from '../../runtime/core/metrics.js';
import { konnectorMetrics } from '../../runtime/konnector/metrics.js';
import { chart, find, synth, type Obj } from '../runtime-constructs/_helpers.js';

const backendProps = {
  oidc: { issuerUrl: 'https://bind.example.com/dex', clientId: 'klutch-backend', clientSecret: { name: 'oidc', key: 'client-secret' } },
  cookies: { signingKey: { name: 'cookies', key: 'signing' }, encryptionKey: { name: 'cookies', key: 'encryption' } },
  externalAddress: 'https://api.control-plane.example.com:6443',
  externalCa: { name: 'external-ca', key: 'ca.crt' },
};

/** Series names a registry exposes (histograms as _bucket/_sum/_count, as Prometheus stores them). */
async function seriesNames(r: Registry): Promise<Set<string>> {
  const out = new Set<string>();
  for (const m of await r.getMetricsAsJSON()) {
    const type = String(m.type);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) out.add(m.name + s);
    else if (type === 'summary') for (const s of ['', '_sum', '_count']) out.add(m.name + s);
    else out.add(m.name);
  }
  return out;
}

/** What the konnector process exports: runtime/konnector/main.ts builds this registry. */
async function konnectorSeries(): Promise<Set<string>> {
  const r = newProcessRegistry();
  controllerMetrics(r);
  konnectorMetrics(r);
  return seriesNames(r);
}

/** What the backend exports: BackendMetrics with process metrics; its controllers register on the same registry. */
async function backendSeries(): Promise<Set<string>> {
  const m = new BackendMetrics(true);
  controllerMetrics(m.registry);
  return seriesNames(m.registry);
}

/** Parses PromQL (Grafana's $__rate_interval replaced by a duration); throws on a syntax error; returns the metric names. */
function metricsOf(expr: string): string[] {
  const src = expr.replaceAll('$__rate_interval', '5m');
  const tree = parser.parse(src);
  const names: string[] = [];
  const errors: number[] = [];
  tree.iterate({
    enter(n) {
      if (n.type.isError) errors.push(n.from);
      if (n.type.name === 'Identifier' && n.node.parent?.type.name === 'VectorSelector') names.push(src.slice(n.from, n.to));
    },
  });
  if (errors.length) throw new Error(`PromQL syntax error at ${errors[0]} in: ${src}`);
  return names;
}

describe('PromQL check helper', () => {
  it('finds metric names and rejects syntax errors', () => {
    expect(metricsOf('sum by (a) (rate(x_total{job=~"$konnector_job"}[$__rate_interval])) / on() group_left up')).toEqual(['x_total', 'up']);
    expect(() => metricsOf('sum(rate(x_total[5m])')).toThrow(/syntax error/);
  });
});

describe('dashboard', () => {
  const model = klutchDashboard();
  const panels = model.panels.filter((p) => p.type !== 'row');

  it('every query parses and names a metric the right component really exports', async () => {
    const [kn, be] = await Promise.all([konnectorSeries(), backendSeries()]);
    let checked = 0;
    for (const p of panels) {
      expect(p.targets?.length).toBeGreaterThan(0);
      for (const t of p.targets!) {
        const names = metricsOf(t.expr);
        expect(names.length).toBeGreaterThan(0);
        const exported = t.expr.includes('$konnector_job') ? kn : t.expr.includes('$backend_job') ? be : undefined;
        expect({ panel: p.title, exported: exported !== undefined }).toEqual({ panel: p.title, exported: true });
        for (const n of names) {
          expect({ panel: p.title, metric: n, exported: exported!.has(n) }).toEqual({ panel: p.title, metric: n, exported: true });
          checked++;
        }
      }
    }
    const variable = model.templating.list.find((v) => v.name === 'cluster_namespace') as { query: { query: string } };
    const m = /^label_values\((.*), cluster_namespace\)$/.exec(variable.query.query);
    expect(metricsOf(m![1]).every((n) => kn.has(n))).toBe(true);
    expect(checked).toBeGreaterThanOrEqual(panels.length);
  });

  it('covers what the issue asks: sync latency per direction, queue depth, errors, objects synced, bind flows, token rotations, heartbeats per app cluster', () => {
    const exprs = panels.flatMap((p) => p.targets!.map((t) => t.expr)).join('\n');
    expect(exprs).toMatch(/sum by \(direction, le\) \(rate\(klutch_konnector_sync_duration_seconds_bucket/);
    for (const m of [
      'klutch_workqueue_depth',
      'klutch_konnector_sync_errors_total',
      'klutch_konnector_objects_synced_total',
      'klutch_backend_binds_total',
      'klutch_backend_token_rotations_total',
      'klutch_backend_auth_failures_total',
    ]) {
      expect(exprs).toContain(m);
    }
    expect(exprs).toMatch(/max by \(cluster_namespace\) \(klutch_konnector_last_heartbeat_timestamp_seconds/);
    // Panels lie on a 24-column grid without overlapping.
    const cells = new Set<string>();
    for (const p of model.panels) {
      const g = p.gridPos as { x: number; y: number; w: number; h: number };
      expect(g.x + g.w).toBeLessThanOrEqual(24);
      for (let x = g.x; x < g.x + g.w; x++)
        for (let y = g.y; y < g.y + g.h; y++) {
          expect(cells.has(`${x},${y}`)).toBe(false);
          cells.add(`${x},${y}`);
        }
    }
    expect(new Set(model.panels.map((p) => p.id)).size).toBe(model.panels.length);
  });

  it('rows follow the components; options are validated', () => {
    const only = klutchDashboard({ components: [MetricsComponent.BACKEND] });
    expect(only.panels.filter((p) => p.type === 'row').map((p) => p.title)).toEqual(['Bind backend (control plane)']);
    expect(() => klutchDashboard({ uid: 'no spaces please' })).toThrow('DashboardOptions.uid: "no spaces please" must be 1-40 characters');
    expect(() => klutchDashboard({ components: [] })).toThrow('DashboardOptions.components: [] must list at least one MetricsComponent');
    expect(() => klutchDashboard({ konnectorJob: 'a"b' })).toThrow('DashboardOptions.konnectorJob: "a\\"b" must be a non-empty job name');
  });

  it('GrafanaDashboard: a ConfigMap with the sidecar label and the model as JSON', () => {
    const c = chart();
    const d = new GrafanaDashboard(c, 'D', { namespace: 'grafana', folder: 'Klutch' });
    const cm = find(synth(c), 'ConfigMap');
    expect(cm.metadata).toMatchObject({
      name: 'klutch-kit-dashboard',
      namespace: 'grafana',
      labels: GRAFANA_DASHBOARD_LABEL,
      annotations: { grafana_folder: 'Klutch' },
    });
    expect(JSON.parse(cm.data['klutch-kit.json'])).toEqual(d.model);
    expect(() => new GrafanaDashboard(chart(), 'D', { sidecarLabel: {} })).toThrow('GrafanaDashboardProps.sidecarLabel: {} must be one label');
  });
});

describe('alerts', () => {
  it("every expression parses and reads metrics its component exports (or Prometheus's up)", async () => {
    const [kn, be] = await Promise.all([konnectorSeries(), backendSeries()]);
    const groups = klutchAlertRules();
    expect(groups.map((g) => g.name)).toEqual(['klutch-konnector', 'klutch-backend']);
    for (const g of groups) {
      const exported = g.name === 'klutch-konnector' ? kn : be;
      for (const r of g.rules) {
        for (const n of metricsOf(r.expr))
          expect({ alert: r.alert, metric: n, ok: n === 'up' || exported.has(n) }).toEqual({ alert: r.alert, metric: n, ok: true });
        expect(r.annotations.summary).toBeTruthy();
        expect(r.labels.severity).toMatch(/^(warning|critical)$/);
      }
    }
    const names = groups.flatMap((g) => g.rules.map((r) => r.alert));
    expect(names).toEqual(
      expect.arrayContaining([
        'KlutchKonnectorNotHeartbeating',
        'KlutchKonnectorSyncErrors',
        'KlutchKonnectorQueueBackingUp',
        'KlutchBackendLoginFailures',
        'KlutchKonnectorBug',
        'KlutchBackendBug',
      ]),
    );
  });

  it('thresholds and jobs go into the expressions; bad options name the option', () => {
    const [g] = klutchAlertRules({ components: [MetricsComponent.KONNECTOR], konnectorJob: 'kn', missedHeartbeats: 5, queueDepth: 7 });
    const by = Object.fromEntries(g.rules.map((r) => [r.alert, r.expr]));
    expect(by.KlutchKonnectorNotHeartbeating).toContain('> 5 * max by (namespace, cluster_namespace) (klutch_konnector_heartbeat_interval_seconds{job="kn"})');
    expect(by.KlutchKonnectorQueueBackingUp).toBe('max by (namespace, controller) (klutch_workqueue_depth{job="kn"}) > 7');
    expect(() => klutchAlertRules({ queueDepth: 0 })).toThrow('AlertOptions.queueDepth: 0 must be a positive number');
    expect(() => klutchAlertRules({ syncErrorsFor: '15 minutes' })).toThrow('AlertOptions.syncErrorsFor: "15 minutes" is not a Prometheus duration');
  });
});

describe('scrape configuration and validation against the prometheus-operator CRDs', () => {
  const reg = defaultRegistry();
  const expectValid = (o: Obj) => {
    const v = reg.validate(o);
    expect({ kind: o.kind, schemas: v.schemas.length }).toEqual({ kind: o.kind, schemas: 1 });
    expect({ kind: o.kind, errors: v.errors }).toEqual({ kind: o.kind, errors: [] });
  };

  for (const kind of [ScrapeKind.SERVICE_MONITOR, ScrapeKind.POD_MONITOR]) {
    it(`${kind}s select the Service/Pods and the port the runtime constructs emit`, () => {
      const c = chart();
      const k = new Konnector(c, 'K', { namespace: 'kb' });
      const b = new BindBackend(c, 'B', { ...backendProps, name: 'bind' });
      b.exposeViaIngress({ host: 'bind.example.com' });
      const mon = new KlutchMonitoring(c, 'M', { konnector: k, backend: b, scrapeKind: kind, labels: { release: 'kps' } });
      expect(mon.scrapes.map((s) => s.job)).toEqual(['konnector', 'bind']);
      const objs = synth(c);
      for (const [ns, svcName] of [
        ['kb', 'konnector-metrics'],
        ['klutch-system', 'bind'],
      ]) {
        const m = objs.find((o) => o.kind === kind.value && o.metadata.namespace === ns)!;
        expect(m.metadata.labels.release).toBe('kps');
        expectValid(m);
        const sel = m.spec.selector.matchLabels as Record<string, string>;
        const matches = (labels: Record<string, string>) => Object.entries(sel).every(([key, v]) => labels?.[key] === v);
        const dep = objs.find((o) => o.kind === 'Deployment' && o.metadata.namespace === ns)!;
        if (kind === ScrapeKind.SERVICE_MONITOR) {
          const svcs = objs.filter((o) => o.kind === 'Service' && o.metadata.namespace === ns && matches(o.metadata.labels));
          expect(svcs.map((s) => s.metadata.name)).toEqual([svcName]);
          expect(svcs[0].spec.ports.map((p: Obj) => p.name)).toContain(m.spec.endpoints[0].port);
          expect(svcs[0].metadata.labels[m.spec.jobLabel]).toBe(m.metadata.name === 'konnector' ? 'konnector' : 'bind');
        } else {
          expect(matches(dep.spec.template.metadata.labels)).toBe(true);
          expect(dep.spec.template.spec.containers[0].ports.map((p: Obj) => p.name)).toContain(m.spec.podMetricsEndpoints[0].port);
        }
      }
      expectValid(find(objs, 'PrometheusRule'));
      expect(find(objs, 'PrometheusRule').spec.groups.map((g: Obj) => g.name)).toEqual(['klutch-konnector', 'klutch-backend']);
      // The dashboard and the alerts use the jobs the monitors produce.
      const model = JSON.parse(find(objs, 'ConfigMap').data['klutch-kit.json']);
      expect(model.templating.list.find((v: Obj) => v.name === 'backend_job').query).toBe('bind');
    });
  }

  it('the schema catches a broken monitor (validation is real)', () => {
    const c = chart();
    new MetricsScrape(c, 'S', { target: MetricsTarget.konnector() });
    const sm = find(synth(c), 'ServiceMonitor');
    const broken = { ...sm, spec: { ...sm.spec, endpoints: [{ ...sm.spec.endpoints[0], scheme: 'gopher' }] } };
    expect(reg.validate(broken).errors.map((e) => e.path)).toEqual(['spec.endpoints[0].scheme']);
  });

  it('RE2 patterns with inline flags are honoured (PrometheusRule partial_response_strategy is (?i)(abort|warn)?)', () => {
    const c = chart();
    new KlutchAlerts(c, 'A');
    const pr = find(synth(c), 'PrometheusRule');
    const withStrategy = (v: string) => ({ ...pr, spec: { groups: [{ ...pr.spec.groups[0], partial_response_strategy: v }] } });
    expect(reg.validate(withStrategy('WARN')).errors).toEqual([]);
    expect(reg.validate(withStrategy('sometimes')).errors.map((e) => e.path)).toEqual(['spec.groups[0].partial_response_strategy']);
  });

  it('bad props name the prop and the value', () => {
    expect(() => new MetricsScrape(chart(), 'S', { target: MetricsTarget.konnector(), interval: 'often' })).toThrow(
      'MetricsScrapeProps.interval: "often" is not a Prometheus duration',
    );
    expect(() => new MetricsScrape(chart(), 'S', { target: MetricsTarget.backend(), kind: 'Probe' as unknown as ScrapeKind })).toThrow(
      'MetricsScrapeProps.kind: "Probe" must be one of ServiceMonitor, PodMonitor',
    );
    expect(() => new MetricsScrape(chart(), 'S', { target: {} as MetricsTarget })).toThrow('MetricsScrapeProps.target: {} must be a MetricsTarget');
    expect(() => MetricsTarget.konnector({ namespace: 'Bad_NS' })).toThrow('MetricsTargetOptions.namespace: "Bad_NS" is not a DNS-1123 label');
    expect(() => new KlutchMonitoring(chart(), 'M', {})).toThrow('KlutchMonitoringProps: {} must name a konnector, a backend or both');
    expect(() => new KlutchAlerts(chart(), 'A', { labels: { release: 5 as never } })).toThrow('KlutchAlertsProps.labels["release"]: 5 must be a label value');
  });
});
