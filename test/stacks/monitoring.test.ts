import { describe, expect, it } from '@jest/globals';
import { parseStackConfig, type RawStackConfig, StackConfigError } from '../../stacks/config.js';
import { defaultManifestSource } from '../../stacks/manifests.js';
import { topologyManifestSource } from '../../stacks/topology-source.js';
import { defaultRegistry } from '../../constructs/validate/index.js';

const base: RawStackConfig = {
  controlPlane: { name: 'cp' },
  appClusters: [{ name: 'app-1' }],
  backend: { url: 'https://bind.example.com' },
  oidc: { issuerUrl: 'https://issuer.example.com' },
};
const MONITORING_KINDS = ['ServiceMonitor', 'PodMonitor', 'PrometheusRule'];
const summary = (objs: Array<{ kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, unknown> } }>) =>
  objs
    .filter((o) => MONITORING_KINDS.includes(o.kind) || o.metadata.labels?.['grafana_dashboard'] === '1')
    .map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`)
    .sort();

describe('stack config `monitoring`', () => {
  it('off by default; parsed and checked, naming the key and the value', () => {
    expect(parseStackConfig(base).monitoring).toBeUndefined();
    expect(parseStackConfig({ ...base, monitoring: {} }).monitoring).toEqual({});
    expect(parseStackConfig({ ...base, monitoring: { scrapeKind: 'PodMonitor', labels: { release: 'kps' }, dashboard: false } }).monitoring).toEqual({
      scrapeKind: 'PodMonitor',
      labels: { release: 'kps' },
      dashboard: false,
    });
    const err = (m: unknown) => {
      try {
        parseStackConfig({ ...base, monitoring: m });
      } catch (e) {
        expect(e).toBeInstanceOf(StackConfigError);
        return (e as Error).message;
      }
      return '';
    };
    expect(err({ scrapeKind: 'Probe' })).toContain('monitoring.scrapeKind');
    expect(err({ scrapeKind: 'Probe' })).toContain('"Probe"');
    expect(err({ interval: 'often' })).toContain('monitoring.interval');
    expect(err({ alerts: 'yes' })).toContain('monitoring.alerts');
    expect(err({ colour: 'red' })).toContain('colour');
  });

  for (const [name, source] of [
    ['runtime manifests', defaultManifestSource],
    ['topology manifests', topologyManifestSource({ anynines: { baseDomain: 'a9s.example.com' } })],
  ] as const) {
    it(`${name}: the backend's and each konnector's monitors, alerts and dashboard, valid against the prometheus-operator CRDs`, () => {
      const config = parseStackConfig({ ...base, monitoring: { scrapeKind: 'PodMonitor', labels: { release: 'kps' } } });
      const cp = source.controlPlane({ config, images: { backend: 'b:1' }, hasCookieEncryptionKey: false } as never);
      const app = source.appCluster({ config, cluster: config.appClusters[0], images: { konnector: 'k:1' } } as never);
      expect(summary(cp)).toEqual([
        'ConfigMap monitoring/klutch-kit-dashboard',
        'PodMonitor klutch-system/klutch-backend',
        'PrometheusRule monitoring/klutch-kit',
      ]);
      expect(summary(app)).toEqual(['ConfigMap monitoring/klutch-kit-dashboard', 'PodMonitor klutch-bind/konnector', 'PrometheusRule monitoring/klutch-kit']);
      const reg = defaultRegistry();
      for (const o of [...cp, ...app].filter((x) => MONITORING_KINDS.includes(x.kind))) {
        expect(o.metadata.labels).toMatchObject({ release: 'kps' });
        expect({ kind: o.kind, errors: reg.validate(o).errors }).toEqual({ kind: o.kind, errors: [] });
      }
      const plain = parseStackConfig(base);
      expect(summary(source.controlPlane({ config: plain, images: { backend: 'b:1' }, hasCookieEncryptionKey: false } as never))).toEqual([]);
    });
  }
});
