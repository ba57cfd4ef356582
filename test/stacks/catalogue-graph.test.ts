/**
 * `manifests: runtime` with `klutch-kit:catalogue` and `skipAwait` (the sandbox's config): the Crossplane packages are
 * still awaited Healthy, the ProviderConfig (and in the namespaced style the ClusterProviderConfig) is a single CustomResource after them (a ConfigGroup would have to resolve
 * its kind before the Provider installed the CRD), the rest after both. Checked under `setMocks` on the
 * RegisterResource requests the SDK sends.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import * as pulumi from '@pulumi/pulumi';
import type * as StacksModule from '../../stacks/index.js';

interface Registration {
  type: string;
  name: string;
  urn: string;
  dependencies: string[];
  raw: Record<string, any>;
}

/** What the SDK registered, per stack: `sandbox` (the claims style) and `sandbox-namespaced` (the namespaced style). */
const registered: Record<string, Registration[]> = {};
const PKG = '127.0.0.1:5000/klutch/catalogue:v0.1.0';
const KUBECONFIG = (server: string) =>
  `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: t}}]\n`;

function byName(name: string, stack = 'sandbox'): Registration {
  const r = registered[stack]!.find((x) => x.name === name);
  if (!r) throw new Error(`no resource named ${name} in stack ${stack}; have ${registered[stack]!.map((x) => x.name).join(', ')}`);
  return r;
}

/** Runs the stacks' program under mocks as stack `stack`, with the catalogue in `apiStyle`, recording what it registers. */
async function runProgram(stack: string, apiStyle: 'claims' | 'namespaced'): Promise<void> {
  const registrations: Registration[] = (registered[stack] = []);
  await pulumi.runtime.setMocks(
    { newResource: (args) => ({ id: `${args.name}-id`, state: { ...args.inputs } }), call: (args) => ({ ...args.inputs }) },
    'klutch-kit',
    stack,
    false,
  );
  const monitor = (pulumi.runtime as unknown as { getMonitor(): any }).getMonitor();
  const original = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req: any, cb: any) => {
    const raw = (req.getObject()?.toJavaScript() ?? {}) as Record<string, any>;
    original(req, (err: unknown, resp: any) => {
      if (!err) registrations.push({ type: req.getType(), name: req.getName(), urn: resp.getUrn(), dependencies: req.getDependenciesList(), raw });
      cb(err, resp);
    });
  };
  pulumi.runtime.setAllConfig(
    {
      'klutch-kit:controlPlane': JSON.stringify({ name: 'control-plane' }),
      'klutch-kit:appClusters': JSON.stringify([{ name: 'app-1' }]),
      'klutch-kit:backend': JSON.stringify({ url: 'http://127.0.0.1:8080' }),
      'klutch-kit:oidc': JSON.stringify({ issuerUrl: 'http://127.0.0.1:5556', clientId: 'klutch-backend' }),
      'klutch-kit:manifests': 'runtime',
      'klutch-kit:skipAwait': 'true',
      'klutch-kit:catalogue': JSON.stringify({ install: 'ConfigurationPackage', package: PKG, apiStyle }),
      'klutch-kit:kubeconfig-control-plane': KUBECONFIG('https://127.0.0.1:6441'),
      'klutch-kit:kubeconfig-app-1': KUBECONFIG('https://127.0.0.1:6442'),
      'klutch-kit:oidcClientSecret': 'a-client-secret-of-some-length',
      'klutch-kit:cookieSigningKey': Buffer.alloc(32, 7).toString('base64'),
    },
    ['klutch-kit:kubeconfig-control-plane', 'klutch-kit:kubeconfig-app-1', 'klutch-kit:oidcClientSecret', 'klutch-kit:cookieSigningKey'],
  );
  const stacks: typeof StacksModule = await import('../../stacks/index.js');
  const out = await stacks.klutchProgram();
  await new Promise((r) => pulumi.all([out.backendUrl, out.bindCommands]).apply(r));
  for (let i = 0; i < 100 && !registrations.some((r) => r.name === 'control-plane-objects'); i++) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 200));
}

beforeAll(async () => {
  await runProgram('sandbox', 'claims');
  await runProgram('sandbox-namespaced', 'namespaced');
}, 120_000);

describe('runtime manifests with klutch-kit:catalogue', () => {
  it('awaits the packages Healthy despite skipAwait; the ProviderConfig follows them; the rest does not wait for them', () => {
    const packages = byName('control-plane-packages');
    // Crossplane runs already (no platform) and no package object needs the binding CRDs: the packages install beside them
    expect(packages.dependencies).not.toContain(byName('control-plane-foundation').urn);
    expect(packages.raw['skipAwait']).toBe(false);
    const pkgs = packages.raw['objs'] as StacksModule.KubeObject[];
    expect(pkgs.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'Configuration/klutch-catalogue',
      'DeploymentRuntimeConfig/provider-kubernetes',
      'Function/function-patch-and-transform',
      'Provider/provider-kubernetes',
    ]);
    for (const o of pkgs.filter((x) => x.kind !== 'DeploymentRuntimeConfig')) {
      expect({ kind: o.kind, waitFor: (o.metadata['annotations'] as Record<string, string>)['pulumi.com/waitFor'] }).toEqual({
        kind: o.kind,
        waitFor: 'condition=Healthy',
      });
    }
    expect((pkgs.find((o) => o.kind === 'Configuration')!['spec'] as Record<string, unknown>)['package']).toBe(PKG);

    const pc = byName('control-plane-providerconfig-kubernetes-provider');
    expect(pc.type).toBe('kubernetes:kubernetes.crossplane.io/v1alpha1:ProviderConfig');
    expect(pc.dependencies).toContain(packages.urn);
    const objects = byName('control-plane-objects');
    // nothing in the rest uses a kind a package installs: it follows the foundation and the Secrets, not the packages' install
    expect(objects.dependencies).toEqual(expect.arrayContaining([byName('control-plane-foundation').urn, byName('control-plane-klutch-backend-oidc').urn]));
    expect(objects.dependencies).not.toContain(packages.urn);
    expect(objects.dependencies).not.toContain(pc.urn);
    expect((objects.raw['objs'] as StacksModule.KubeObject[]).filter((o) => o.kind === 'ProviderConfig')).toEqual([]);
    expect(objects.raw['skipAwait']).toBe(true);
  });

  it('namespaced style: the ClusterProviderConfig too is a single CustomResource after the packages, not in the objects group', () => {
    const stack = 'sandbox-namespaced';
    const packages = byName('control-plane-packages', stack);
    const cpc = byName('control-plane-clusterproviderconfig-kubernetes-provider', stack);
    expect(cpc.type).toBe('kubernetes:kubernetes.m.crossplane.io/v1alpha1:ClusterProviderConfig');
    expect(cpc.dependencies).toContain(packages.urn);
    expect(byName('control-plane-providerconfig-kubernetes-provider', stack).dependencies).toContain(packages.urn);
    const objects = byName('control-plane-objects', stack);
    // in a ConfigGroup, its kind would have to resolve when the group registers: racing the CRD the Provider installs
    expect((objects.raw['objs'] as StacksModule.KubeObject[]).filter((o) => o.kind.endsWith('ProviderConfig'))).toEqual([]);
    expect(objects.dependencies).not.toContain(packages.urn);
  });
});
