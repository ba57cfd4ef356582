import { describe, expect, it } from '@jest/globals';
import { App } from 'cdk8s';
import { ScrapeKind } from '../../constructs/monitoring/index.js';
import { AppCluster, ControlPlaneCluster, renderTopology } from '../../constructs/topology/index.js';
import { defaultRegistry } from '../../constructs/validate/index.js';

const dex = { connectors: [{ type: 'mockCallback', id: 'mock', name: 'Mock', config: {} }] };

describe('monitoring on the topology charts', () => {
  it('is off by default; with `monitoring` each cluster gets its scrape object, alerts and dashboard, valid against the vendored CRDs', () => {
    const app = new App({ outdir: '/nonexistent' });
    const cp = new ControlPlaneCluster(app, 'CP', {
      host: 'bind.example.com',
      dex,
      anynines: { baseDomain: 'a9s.example.com' },
      monitoring: { scrapeKind: ScrapeKind.POD_MONITOR, labels: { release: 'kps' }, thresholds: { loginFailures: 50 } },
    });
    const shop = new AppCluster(app, 'Shop', { clusterName: 'app-shop', controlPlane: cp, monitoring: { namespace: 'observability' } });
    new AppCluster(app, 'Plain', { clusterName: 'app-plain', controlPlane: cp });
    expect(shop.monitoring?.scrapes.map((s) => s.kind)).toEqual([ScrapeKind.SERVICE_MONITOR]);

    const clusters = renderTopology(app);
    const kinds = (name: string) =>
      clusters
        .find((c) => c.name === name)!
        .files.map((f) => f.object)
        .filter((o) => ['ServiceMonitor', 'PodMonitor', 'PrometheusRule'].includes(o.kind) || o.metadata?.labels?.grafana_dashboard === '1');
    const reg = defaultRegistry();
    const summary = (name: string) =>
      kinds(name)
        .map((o) => {
          expect({ kind: o.kind, errors: reg.validate(o).errors }).toEqual({ kind: o.kind, errors: [] });
          return `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`;
        })
        .sort();
    expect(summary('control-plane')).toEqual([
      'ConfigMap monitoring/klutch-kit-dashboard',
      'PodMonitor klutch-system/klutch-backend',
      'PrometheusRule monitoring/klutch-kit',
    ]);
    expect(summary('app-shop')).toEqual([
      'ConfigMap observability/klutch-kit-dashboard',
      'PrometheusRule observability/klutch-kit',
      'ServiceMonitor klutch-bind/konnector',
    ]);
    expect(summary('app-plain')).toEqual([]);

    const cpRule = kinds('control-plane').find((o) => o.kind === 'PrometheusRule')!;
    expect(cpRule.metadata.labels.release).toBe('kps');
    expect(cpRule.spec.groups.map((g: { name: string }) => g.name)).toEqual(['klutch-backend']);
    expect(JSON.stringify(cpRule)).toContain('increase(klutch_backend_auth_failures_total{job=\\"klutch-backend\\"}[10m])) > 50');
    // The synth declares the namespaces the monitoring objects use.
    const ns = clusters
      .find((c) => c.name === 'app-shop')!
      .files.map((f) => f.object)
      .filter((o) => o.kind === 'Namespace')
      .map((o) => o.metadata.name);
    expect(ns).toContain('observability');
  });
});
