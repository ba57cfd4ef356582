/**
 * `manifests: topology` (the default): the stack deploys the ControlPlaneCluster / AppCluster charts of
 * constructs/topology — the same objects `npm run synth` writes — with Crossplane installed by a Helm chart
 * resource, its packages awaited until Healthy, then everything else. Checked under `setMocks` on the
 * RegisterResource requests the SDK sends.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { App } from 'cdk8s';
import * as pulumi from '@pulumi/pulumi';
import type * as StacksModule from '../../stacks/index.js';
import { AppCluster as AppClusterChart, ControlPlaneCluster } from '../../constructs/topology/index.js';

interface Registration {
  type: string;
  name: string;
  urn: string;
  provider: string;
  dependencies: string[];
  raw: Record<string, any>;
}

const registrations: Registration[] = [];
let stacks: typeof StacksModule;

const KUBECONFIG = (server: string) =>
  `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: t}}]\n`;

function byName(name: string): Registration {
  const r = registrations.find((x) => x.name === name);
  if (!r) throw new Error(`no resource named ${name}; have ${registrations.map((x) => x.name).join(', ')}`);
  return r;
}
const objs = (name: string) => byName(name).raw['objs'] as StacksModule.KubeObject[];

beforeAll(async () => {
  await pulumi.runtime.setMocks(
    { newResource: (args) => ({ id: `${args.name}-id`, state: { ...args.inputs } }), call: (args) => ({ ...args.inputs }) },
    'klutch-kit',
    'topology',
    false,
  );
  const monitor = (pulumi.runtime as unknown as { getMonitor(): any }).getMonitor();
  const original = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req: any, cb: any) => {
    const raw = (req.getObject()?.toJavaScript() ?? {}) as Record<string, any>;
    original(req, (err: unknown, resp: any) => {
      if (!err) {
        registrations.push({
          type: req.getType(),
          name: req.getName(),
          urn: resp.getUrn(),
          provider: req.getProvider(),
          dependencies: req.getDependenciesList(),
          raw,
        });
      }
      cb(err, resp);
    });
  };
  pulumi.runtime.setAllConfig(
    {
      'klutch-kit:controlPlane': JSON.stringify({ name: 'control-plane' }),
      'klutch-kit:appClusters': JSON.stringify([{ name: 'app-shop' }]),
      'klutch-kit:backend': JSON.stringify({ url: 'https://bind.klutch.example.com' }),
      'klutch-kit:dexConnectors': JSON.stringify([{ type: 'github', id: 'github', name: 'GitHub', config: { clientID: '$GITHUB_CLIENT_ID' } }]),
      'klutch-kit:anynines': JSON.stringify({ baseDomain: 'a9s.klutch.example.com' }),
      'klutch-kit:kubeconfig-control-plane': KUBECONFIG('https://127.0.0.1:6441'),
      'klutch-kit:kubeconfig-app-shop': KUBECONFIG('https://127.0.0.1:6442'),
      'klutch-kit:oidcClientSecret': 'a-client-secret-of-some-length',
      'klutch-kit:cookieSigningKey': Buffer.alloc(32, 7).toString('base64'),
    },
    ['klutch-kit:kubeconfig-control-plane', 'klutch-kit:kubeconfig-app-shop', 'klutch-kit:oidcClientSecret', 'klutch-kit:cookieSigningKey'],
  );
  stacks = await import('../../stacks/index.js');
  const out = await stacks.klutchProgram();
  await new Promise((r) => pulumi.all([out.backendUrl, out.bindCommands]).apply(r));
  for (let i = 0; i < 100 && !registrations.some((r) => r.name === 'control-plane-objects'); i++) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 200));
}, 120_000);

describe('topology manifests', () => {
  it('deploys exactly the chart objects of the topology constructs (minus the GitOps Crossplane install and the claims)', () => {
    // The same charts, built directly: what `npm run synth` renders for this config.
    const app = new App({ outdir: '/nonexistent' });
    const cp = new ControlPlaneCluster(app, 'ControlPlane', {
      clusterName: 'control-plane',
      host: 'bind.klutch.example.com',
      oidcClientSecret: { name: 'klutch-backend-oidc', key: 'client-secret' },
      cookieSecretName: 'klutch-backend-cookies',
      dex: { connectors: [{ type: 'github', id: 'github', name: 'GitHub', config: { clientID: '$GITHUB_CLIENT_ID' } }] },
      backend: { prettyName: 'klutch-kit' },
      anynines: { baseDomain: 'a9s.klutch.example.com' },
    });
    const shop = new AppClusterChart(app, 'App-app-shop', { clusterName: 'app-shop', controlPlane: cp });
    const ids = (list: Array<{ apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }>) =>
      list.map((o) => `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort();

    const deployedCp = [...objs('control-plane-foundation'), ...objs('control-plane-packages'), ...objs('control-plane-objects')];
    const expectedCp = (cp.toJson() as StacksModule.KubeObject[]).filter((o) => o.apiVersion !== 'argoproj.io/v1alpha1');
    expect(ids(deployedCp)).toEqual(ids(expectedCp));
    expect(deployedCp.length).toBeGreaterThan(50);

    const deployedApp = [...objs('app-shop-foundation'), ...objs('app-shop-objects')];
    expect(ids(deployedApp)).toEqual(ids(shop.toJson() as StacksModule.KubeObject[]));
    expect(deployedApp.some((o) => o.kind === 'APIServiceBinding')).toBe(true);
  });

  it('installs Crossplane with a Helm chart after the foundation, then the packages (awaited Healthy), then the rest', () => {
    const chart = byName('control-plane-crossplane');
    expect(chart.type).toBe('kubernetes:helm.sh/v4:Chart');
    expect(chart.raw['chart']).toBe('crossplane');
    expect(chart.raw['repositoryOpts']).toEqual({ repo: 'https://charts.crossplane.io/stable' });
    expect(chart.raw['version']).toMatch(/^\d+\.\d+\.\d+$/);
    expect(chart.raw['namespace']).toBe('crossplane-system');
    expect(chart.dependencies).toContain(byName('control-plane-foundation').urn);

    const packages = byName('control-plane-packages');
    expect(packages.dependencies).toEqual(expect.arrayContaining([byName('control-plane-foundation').urn, chart.urn]));
    const pkgs = packages.raw['objs'] as StacksModule.KubeObject[];
    expect(pkgs.map((o) => o.kind).sort()).toEqual(expect.arrayContaining(['Function', 'Provider']));
    for (const p of pkgs.filter((o) => o.kind === 'Provider' || o.kind === 'Function')) {
      expect((p.metadata['annotations'] as Record<string, string>)['pulumi.com/waitFor']).toBe('condition=Healthy');
    }

    const objects = byName('control-plane-objects');
    expect(objects.dependencies).toEqual(expect.arrayContaining([byName('control-plane-foundation').urn, chart.urn, packages.urn]));
    const kinds = new Set((objects.raw['objs'] as StacksModule.KubeObject[]).map((o) => o.kind));
    for (const k of ['CompositeResourceDefinition', 'Composition', 'ProviderConfig', 'APIServiceExportTemplate', 'Deployment']) expect(kinds.has(k)).toBe(true);
    expect(objects.raw['skipAwait']).toBe(false);
  });

  it('never deploys a CRD after an object that needs it: every custom kind of a cluster is defined in its foundation or installed by Crossplane', () => {
    const builtin =
      /^(v1|apps\/v1|rbac\.authorization\.k8s\.io\/v1|policy\/v1|networking\.k8s\.io\/v1|coordination\.k8s\.io\/v1|admissionregistration\.k8s\.io\/v1)$/;
    const byPlatform = /^(pkg|apiextensions)\.crossplane\.io\/|^kubernetes\.crossplane\.io\/|^dataservices\.anynines\.com\//;
    for (const cluster of ['control-plane', 'app-shop']) {
      const defined = stacks.definedKinds(objs(`${cluster}-foundation`));
      const rest = registrations
        .filter((r) => r.name === `${cluster}-objects` || r.name === `${cluster}-packages`)
        .flatMap((r) => r.raw['objs'] as StacksModule.KubeObject[]);
      for (const o of rest) {
        if (builtin.test(o.apiVersion) || byPlatform.test(o.apiVersion)) continue;
        expect(`${o.kind} ${o.apiVersion}: ${defined.has(`${o.apiVersion.split('/')[0]}/${o.kind}`)}`).toBe(`${o.kind} ${o.apiVersion}: true`);
      }
    }
  });
});
