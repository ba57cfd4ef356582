/**
 * The README route "Adding a data service": the block in README.md, added to a ControlPlaneCluster
 * with `new DataService(cp, …)` (what the block does) or `cp.addDataService`, is exported without any
 * extra call — it registers itself: binder ClusterRole, the control plane's ProviderConfig — and its
 * backends' ProviderConfigs are references, checked to be this cluster's.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { App } from 'cdk8s';
import * as constructs from 'constructs';
import ts from 'typescript';
import {
  AnyninesServiceType,
  type IProviderConfig,
  KubernetesProviderConfig,
  type PatchAndTransformStep,
  ProviderConfig,
} from '../../constructs/crossplane/index.js';
import * as dataservice from '../../constructs/dataservice/index.js';
import { ApiServiceExportTemplate } from '../../constructs/runtime/index.js';
import { AppCluster, ControlPlaneCluster, type ControlPlaneClusterProps, renderTopology } from '../../constructs/topology/index.js';

type Obj = Record<string, any>;
const README = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
const CODE = /```ts\n([\s\S]*?)```/.exec(README.slice(README.indexOf('## Adding a data service')))![1];

/** Compiles and runs the README block; its imports resolve to this repository's modules. */
function readmeBlock(overrides: Record<string, unknown> = {}): {
  addClickHouse: (scope: constructs.Construct, broker: IProviderConfig) => dataservice.DataService;
} {
  const js = ts.transpileModule(CODE, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
  const modules: Record<string, unknown> = { 'klutch-kit/dataservice': { ...dataservice, ...overrides }, constructs };
  const module = { exports: {} as Record<string, unknown> };
  new Function('require', 'module', 'exports', js)(
    (id: string) => {
      if (!(id in modules)) throw new Error(`the README block imports ${id}, which the test does not provide`);
      return modules[id];
    },
    module,
    module.exports,
  );
  return module.exports as never;
}

const dex: ControlPlaneClusterProps['dex'] = { connectors: [{ type: 'mockCallback', id: 'mock', name: 'Mock', config: {} }] };
function controlPlane(props: Partial<ControlPlaneClusterProps> = {}): { app: App; cp: ControlPlaneCluster } {
  const app = new App({ outdir: '/nonexistent' });
  const cp = new ControlPlaneCluster(app, 'CP', { host: 'bind.example.com', dex, catalogue: false, anynines: { baseDomain: 'a9s.example.com' }, ...props });
  return { app, cp };
}
const files = (app: App, cluster = 'control-plane'): Obj[] =>
  renderTopology(app)
    .find((c) => c.name === cluster)!
    .files.map((f) => f.object);
const broker = (cp: ControlPlaneCluster) => cp.addProviderConfig('clickhouse-service-broker', AnyninesServiceType.SERVICE_BROKER);
const named = (objs: Obj[], kind: string, name: string) => objs.filter((o) => o.kind === kind && o.metadata.name === name);
const ROLE = 'klutch-binder-exports-clickhouseinstances.analytics.example.com';

describe('a data service added to a ControlPlaneCluster', () => {
  it('as the README shows (new DataService(cp, …)) is exported with its binder ClusterRole and ProviderConfig', () => {
    const { app, cp } = controlPlane();
    readmeBlock().addClickHouse(cp, broker(cp));
    expect(cp.exports.map((e) => e.name)).toEqual(['clickhouseinstances.analytics.example.com']);
    const shop = new AppCluster(app, 'Shop', { clusterName: 'app-shop', controlPlane: cp });
    shop.addClaim({ kind: 'ClickhouseInstance', name: 'events', namespace: 'shop', spec: { service: 'clickhouse24', plan: 'clickhouse-single-small' } });
    const objs = files(app);
    expect(named(objs, 'ClusterRole', ROLE)).toHaveLength(1);
    const pc = named(objs, 'ProviderConfig', 'clickhouse-service-broker');
    expect(pc).toHaveLength(1);
    expect(pc[0].spec).toMatchObject({ url: 'https://clickhouse-service-broker.a9s.example.com' });
    expect(named(objs, 'ProviderConfig', 'kubernetes-provider')).toHaveLength(1);
    expect(named(files(app, 'app-shop'), 'APIServiceBinding', 'clickhouseinstances.analytics.example.com')).toHaveLength(1);
  });

  it('renders the same objects through cdk8s (chart.toJson, as app.synth() does), twice', () => {
    const { cp } = controlPlane();
    readmeBlock().addClickHouse(cp, broker(cp));
    for (let i = 0; i < 2; i++) {
      const objs = cp.toJson() as Obj[];
      expect(named(objs, 'ClusterRole', ROLE)).toHaveLength(1);
      expect(named(objs, 'ProviderConfig', 'clickhouse-service-broker')).toHaveLength(1);
    }
  });

  it('with cp.addDataService gives the same manifests', () => {
    const render = (app: App) =>
      files(app)
        .map((o) => JSON.stringify(o))
        .sort();
    const a = controlPlane();
    readmeBlock().addClickHouse(a.cp, broker(a.cp));
    const b = controlPlane();
    // the README block with `new DataService(scope, id, props)` routed to b.cp.addDataService(id, props)
    readmeBlock({
      DataService: function (_scope: unknown, id: string, props: dataservice.DataServiceProps) {
        return b.cp.addDataService(id, props);
      },
    }).addClickHouse(b.cp, broker(b.cp));
    expect(b.cp.backend.exportedApis).toEqual([{ group: 'analytics.example.com', resource: 'clickhouseinstances' }]);
    expect(render(b.app)).toEqual(render(a.app));
  });

  it('an a9s ProviderConfig the control plane cannot emit is an error naming the prop and the ProviderConfig', () => {
    const { cp } = controlPlane({ anynines: undefined });
    expect(() => broker(cp)).toThrow(
      /ControlPlaneClusterProps\.anynines: undefined; the a9s ProviderConfig "clickhouse-service-broker" needs endpoints \(baseDomain\) and credentials/,
    );
  });

  it('a backend of another automation references its ProviderConfig: of this cluster, or made elsewhere — not of another cluster', () => {
    class CustomBackend extends dataservice.Backend {
      public readonly automation = 'custom';
      constructor(private readonly pc: IProviderConfig) {
        super('CustomBackend', { name: 'custom-widgets' });
      }
      public providerConfigs(): IProviderConfig[] {
        return [this.pc];
      }
      public compose(step: PatchAndTransformStep): void {
        step.addResource('widget', {
          base: { apiVersion: 'widgets.example.com/v1', kind: 'Widget', spec: { providerConfigRef: { name: this.pc.name } } },
        });
      }
    }
    const props: dataservice.DataServiceProps = {
      group: 'widgets.example.com',
      kind: 'XWidget',
      claimKind: 'Widget',
      plans: [
        new dataservice.Plan({
          name: 'widget-single-small',
          topology: dataservice.PlanTopology.SINGLE,
          size: { name: 'small', cpu: '1', memory: '1Gi', storage: '1Gi' },
        }),
      ],
      services: [{ name: 'widget1' }],
      backends: [],
    };
    const other = controlPlane({ clusterName: 'other-cp' }).cp;
    const foreign = new KubernetesProviderConfig(other, 'Foreign', { name: 'my-config' });
    const { cp } = controlPlane();
    expect(() => new dataservice.DataService(cp, 'widgets', { ...props, backends: [new CustomBackend(foreign)] })).toThrow(
      /DataService CP\/widgets: backend "custom-widgets" \(custom\) references ProviderConfig "my-config" of cluster "other-cp", not of control plane "control-plane"/,
    );
    const { app: app2, cp: cp2 } = controlPlane();
    new dataservice.DataService(cp2, 'widgets', { ...props, backends: [new CustomBackend(new KubernetesProviderConfig(cp2, 'Mine', { name: 'my-config' }))] });
    expect(named(files(app2), 'ProviderConfig', 'my-config')).toHaveLength(1);
    const { app: app3, cp: cp3 } = controlPlane();
    const elsewhere = ProviderConfig.fromName(cp3, 'MyConfig', 'my-config', { apiVersion: 'widgets.example.com/v1' });
    const ds = new dataservice.DataService(cp3, 'widgets', { ...props, backends: [new CustomBackend(elsewhere)] });
    const objs = files(app3);
    expect(named(objs, 'ClusterRole', 'klutch-binder-exports-widgets.widgets.example.com')).toHaveLength(1);
    expect(named(objs, 'ProviderConfig', 'my-config')).toHaveLength(0);
    expect(ds.composition('custom-widgets').apiObject.toJson().spec.pipeline[0].input.resources[0].base.spec.providerConfigRef).toEqual({ name: 'my-config' });
  });

  it('an export template added by hand is exported too', () => {
    const { app, cp } = controlPlane();
    new ApiServiceExportTemplate(cp, 'Gadgets', { group: 'gadgets.example.com', resource: 'gadgets' });
    expect(named(files(app), 'ClusterRole', 'klutch-binder-exports-gadgets.gadgets.example.com')).toHaveLength(1);
  });
});
