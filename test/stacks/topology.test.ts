/**
 * The resource graph of the stack program under `pulumi.runtime.setMocks`: one provider per cluster, CRDs
 * before the objects that use them (real `dependsOn` URNs as sent to the engine), secrets sent as secrets,
 * every app cluster wired to the control plane, component tokens and parenting.
 *
 * The mock monitor's registerResource is wrapped to record each RegisterResourceRequest as the SDK serialised it
 * (type, name, parent, provider, dependencies, the raw property struct with secret markers).
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import * as pulumi from '@pulumi/pulumi';
import type * as StacksModule from '../../stacks/index.js';

type Stacks = typeof StacksModule;

interface Registration {
  type: string;
  name: string;
  urn: string;
  parent: string;
  provider: string;
  dependencies: string[];
  /** Property struct as sent on the wire (secrets keep their signature wrapper). */
  raw: Record<string, unknown>;
  inputs: Record<string, any>;
}

const SECRET_SIG = '4dabf18193072939515e22adb298388d';
const SECRET_VALUE_SIG = '1b47061264138c4ac30d75fd1eb44270';

const registrations: Registration[] = [];
let stacks: Stacks;

const KUBECONFIG = (server: string) =>
  `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: t}}]\n`;

function isWireSecret(v: unknown): boolean {
  return typeof v === 'object' && v !== null && (v as Record<string, unknown>)[SECRET_SIG] === SECRET_VALUE_SIG;
}

function byName(name: string): Registration {
  const r = registrations.find((x) => x.name === name);
  if (!r) throw new Error(`no resource named ${name}; have ${registrations.map((x) => x.name).join(', ')}`);
  return r;
}

/** The provider reference (`<provider urn>::<provider id>`) of a cluster's provider. */
function providerRef(cluster: string): string {
  const p = registrations.find((r) => r.type === 'pulumi:providers:kubernetes' && r.name === cluster);
  if (!p) throw new Error(`no provider for cluster ${cluster}`);
  return `${p.urn}::${cluster}-id`;
}

function outputOf<T>(o: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => o.apply((v) => resolve(v)));
}

let outputs: StacksModule.StackOutputs;

beforeAll(async () => {
  await pulumi.runtime.setMocks(
    {
      newResource: (args) => ({ id: `${args.name}-id`, state: { ...args.inputs } }),
      call: (args) => ({ ...args.inputs }),
    },
    'klutch-kit',
    'unit',
    false,
  );
  const monitor = (pulumi.runtime as unknown as { getMonitor(): any }).getMonitor();
  const original = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req: any, cb: any) => {
    const type = req.getType();
    const name = req.getName();
    const raw = (req.getObject()?.toJavaScript() ?? {}) as Record<string, unknown>;
    original(req, (err: unknown, resp: any) => {
      if (!err) {
        registrations.push({
          type,
          name,
          urn: resp.getUrn(),
          parent: req.getParent(),
          provider: req.getProvider(),
          dependencies: req.getDependenciesList(),
          raw,
          inputs: raw,
        });
      }
      cb(err, resp);
    });
  };
  pulumi.runtime.setAllConfig(
    {
      'klutch-kit:controlPlane': JSON.stringify({ name: 'cp', access: { kind: 'kubeconfig' } }),
      'klutch-kit:appClusters': JSON.stringify([
        { name: 'app-1', access: { kind: 'kubeconfig' } },
        { name: 'app-2', access: { kind: 'kubeconfig', secretKey: 'app2Kubeconfig' }, binding: 'controlPlane' },
      ]),
      'klutch-kit:backend': JSON.stringify({ url: 'https://bind.example.com' }),
      'klutch-kit:dexConnectors': JSON.stringify([{ type: 'mockCallback', id: 'mock', name: 'Mock' }]),
      'klutch-kit:skipAwait': 'true',
      'klutch-kit:manifests': 'runtime',
      'klutch-kit:kubeconfig-cp': KUBECONFIG('https://127.0.0.1:6441'),
      'klutch-kit:kubeconfig-app-1': KUBECONFIG('https://127.0.0.1:6442'),
      'klutch-kit:app2Kubeconfig': KUBECONFIG('https://127.0.0.1:6443'),
      'klutch-kit:oidcClientSecret': 'a-client-secret-of-some-length',
      'klutch-kit:cookieSigningKey': Buffer.alloc(32, 7).toString('base64'),
    },
    ['klutch-kit:kubeconfig-cp', 'klutch-kit:kubeconfig-app-1', 'klutch-kit:app2Kubeconfig', 'klutch-kit:oidcClientSecret', 'klutch-kit:cookieSigningKey'],
  );
  stacks = await import('../../stacks/index.js');
  outputs = await stacks.klutchProgram();
  // Let every registration (including the dependsOn-delayed ones) reach the mock monitor.
  await outputOf(pulumi.all([outputs.backendUrl, outputs.kubeconfigs, outputs.bindCommands]));
  for (let i = 0; i < 50 && !registrations.some((r) => r.name === 'app-2-binding-on-cp'); i++) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 200));
}, 120_000);

describe('components', () => {
  it('registers Topology, ControlPlane and AppCluster with klutch-kit tokens, children parented', () => {
    const topo = byName('klutch');
    expect(topo.type).toBe('klutch-kit:stacks:Topology');
    expect(byName('cp').type).toBe('klutch-kit:stacks:ControlPlane');
    const cpComponent = registrations.find((r) => r.type === 'klutch-kit:stacks:ControlPlane')!;
    const apps = registrations.filter((r) => r.type === 'klutch-kit:stacks:AppCluster');
    expect(apps.map((a) => a.name).sort()).toEqual(['app-1', 'app-2']);
    expect(cpComponent.parent).toBe(topo.urn);
    for (const a of apps) expect(a.parent).toBe(topo.urn);
    // Every custom resource is a child of a cluster component.
    const componentUrns = new Set([cpComponent.urn, ...apps.map((a) => a.urn)]);
    const custom = registrations.filter((r) => !r.type.startsWith('klutch-kit:'));
    expect(custom.length).toBeGreaterThan(0);
    for (const r of custom) expect(componentUrns.has(r.parent)).toBe(true);
  });
});

describe('providers', () => {
  it('creates exactly one kubernetes provider per cluster, each with a secret kubeconfig and the cluster as identity', () => {
    const providers = registrations.filter((r) => r.type === 'pulumi:providers:kubernetes');
    expect(providers.map((p) => p.name).sort()).toEqual(['app-1', 'app-2', 'cp']);
    for (const p of providers) {
      expect(isWireSecret(p.raw['kubeconfig'])).toBe(true);
      expect(p.raw['clusterIdentifier']).toBe(p.name);
    }
  });

  it('deploys every kubernetes resource through an explicit provider (no default provider)', () => {
    const k8sResources = registrations.filter((r) => r.type.startsWith('kubernetes:'));
    expect(k8sResources.length).toBeGreaterThan(0);
    for (const r of k8sResources) {
      expect(['cp', 'app-1', 'app-2'].map(providerRef)).toContain(r.provider);
      expect(r.provider).not.toMatch(/default/);
    }
  });

  it('routes each cluster ConfigGroup to its own cluster provider', () => {
    for (const cluster of ['cp', 'app-1']) {
      for (const g of [`${cluster}-foundation`, `${cluster}-objects`]) {
        expect(byName(g).type).toBe('kubernetes:yaml/v2:ConfigGroup');
        expect(byName(g).provider).toBe(providerRef(cluster));
      }
    }
    // app-2 is bound in control-plane mode: nothing is installed into it, its objects live on the control plane.
    expect(registrations.some((r) => r.name.startsWith('app-2-foundation') || r.name.startsWith('app-2-objects'))).toBe(false);
  });
});

describe('ordering', () => {
  it('puts every CRD (and Namespace) into the foundation group and nothing else', () => {
    for (const cluster of ['cp', 'app-1']) {
      const foundation = byName(`${cluster}-foundation`).inputs['objs'] as StacksModule.KubeObject[];
      const objects = byName(`${cluster}-objects`).inputs['objs'] as StacksModule.KubeObject[];
      expect(foundation.every((o) => o.kind === 'CustomResourceDefinition' || o.kind === 'Namespace')).toBe(true);
      expect(foundation.filter((o) => o.kind === 'CustomResourceDefinition').length).toBe(7);
      // CRDs come before Namespaces inside the group.
      const lastCrd = foundation.map((o) => o.kind).lastIndexOf('CustomResourceDefinition');
      const firstNs = foundation.map((o) => o.kind).indexOf('Namespace');
      if (firstNs >= 0) expect(firstNs).toBeGreaterThan(lastCrd);
      expect(objects.some((o) => o.kind === 'CustomResourceDefinition' || o.kind === 'Namespace')).toBe(false);
    }
  });

  it('makes each objects group depend on its foundation group (CRDs before CRs), and the control plane objects on the Secrets', () => {
    for (const cluster of ['cp', 'app-1']) {
      expect(byName(`${cluster}-objects`).dependencies).toContain(byName(`${cluster}-foundation`).urn);
    }
    const cpDeps = byName('cp-objects').dependencies;
    expect(cpDeps).toContain(byName('cp-klutch-backend-oidc').urn);
    expect(cpDeps).toContain(byName('cp-klutch-backend-cookies').urn);
    expect(byName('cp-klutch-backend-oidc').dependencies).toContain(byName('cp-foundation').urn);
  });

  it('only uses custom kinds in the objects groups that a foundation CRD of the same cluster defines', () => {
    const builtin =
      /^(v1|apps\/v1|rbac\.authorization\.k8s\.io\/v1|policy\/v1|networking\.k8s\.io\/v1|coordination\.k8s\.io\/v1|flowcontrol\.apiserver\.k8s\.io\/v1|admissionregistration\.k8s\.io\/v1)$/;
    for (const cluster of ['cp', 'app-1']) {
      const defined = stacks.definedKinds(byName(`${cluster}-foundation`).inputs['objs']);
      for (const o of byName(`${cluster}-objects`).inputs['objs'] as StacksModule.KubeObject[]) {
        if (builtin.test(o.apiVersion)) continue;
        expect(defined.has(`${o.apiVersion.split('/')[0]}/${o.kind}`)).toBe(true);
      }
    }
  });
});

describe('secrets', () => {
  it('sends the OIDC client secret and cookie keys as secrets', () => {
    const oidc = byName('cp-klutch-backend-oidc');
    expect(oidc.type).toBe('kubernetes:core/v1:Secret');
    const sd = oidc.raw['stringData'] as Record<string, unknown>;
    expect(isWireSecret(sd) || isWireSecret(sd['client-secret'])).toBe(true);
    const cookies = byName('cp-klutch-backend-cookies');
    const cd = cookies.raw['stringData'] as Record<string, unknown>;
    expect(isWireSecret(cd) || isWireSecret(cd['signing-key'])).toBe(true);
    // The secret values never appear in the manifests handed to the ConfigGroups.
    const text = JSON.stringify(registrations.filter((r) => r.type === 'kubernetes:yaml/v2:ConfigGroup').map((r) => r.raw));
    expect(text).not.toContain('a-client-secret-of-some-length');
    expect(text).not.toContain(Buffer.alloc(32, 7).toString('base64'));
  });

  it('keeps kubeconfigs secret in the stack outputs', async () => {
    expect(await pulumi.isSecret(outputs.kubeconfigs)).toBe(true);
    const k = await outputOf(outputs.kubeconfigs);
    expect(Object.keys(k).sort()).toEqual(['app-1', 'app-2', 'cp']);
    expect(k['app-1']).toContain('127.0.0.1:6442');
    expect(await pulumi.isSecret(outputs.backendUrl)).toBe(false);
  });
});

describe('wiring to the control plane', () => {
  it('gives a CLI-bound app cluster the konnector and a bind command against the control plane backend', async () => {
    const objs = byName('app-1-objects').inputs['objs'] as StacksModule.KubeObject[];
    expect(objs.some((o) => o.kind === 'Deployment' && /konnector/.test(o.metadata.name))).toBe(true);
    const cmds = await outputOf(outputs.bindCommands);
    expect(cmds['app-1']).toBe('kubectl bind https://bind.example.com/export --kubeconfig <kubeconfig of app-1>');
  });

  it('binds a control-plane-mode app cluster by an AppClusterBinding and a secret kubeconfig Secret on the control plane', () => {
    const secret = byName('app-2-kubeconfig-on-cp');
    const binding = byName('app-2-binding-on-cp');
    expect(secret.provider).toBe(providerRef('cp'));
    expect(binding.provider).toBe(providerRef('cp'));
    expect(secret.parent).toBe(byName('app-2').urn);
    expect(binding.type).toBe('kubernetes:klutch.anynines.com/v1alpha1:AppClusterBinding');
    expect(binding.dependencies).toEqual(expect.arrayContaining([byName('cp-foundation').urn, secret.urn]));
    expect(secret.dependencies).toContain(byName('cp-foundation').urn);
    const sd = secret.raw['stringData'] as Record<string, unknown>;
    expect(isWireSecret(sd) || isWireSecret(sd['kubeconfig'])).toBe(true);
    expect(binding.raw['spec']).toEqual({
      kubeconfigSecretRef: { namespace: 'klutch-app-clusters', name: 'app-2-kubeconfig', key: 'kubeconfig' },
      konnector: { deploy: true },
    });
    // The namespace of the binding is created in the control plane's foundation group.
    const cpFoundation = byName('cp-foundation').inputs['objs'] as StacksModule.KubeObject[];
    expect(cpFoundation.some((o) => o.kind === 'Namespace' && o.metadata.name === 'klutch-app-clusters')).toBe(true);
  });

  it('deploys the bind backend and Dex on the control plane, referencing the stack Secrets', () => {
    const objs = byName('cp-objects').inputs['objs'] as StacksModule.KubeObject[];
    const deployments = objs.filter((o) => o.kind === 'Deployment').map((o) => o.metadata.name);
    expect(deployments).toEqual(expect.arrayContaining(['klutch-backend', 'dex']));
    const text = JSON.stringify(objs);
    expect(text).toContain('"klutch-backend-oidc"');
    expect(text).toContain('"klutch-backend-cookies"');
    expect(text).toContain('https://bind.example.com/dex');
    expect(byName('cp-objects').raw['skipAwait']).toBe(true);
    expect(byName('cp-foundation').raw['skipAwait']).toBeUndefined();
  });

  it('runs the bind backend HA: 2 replicas and a PodDisruptionBudget', () => {
    const objs = byName('cp-objects').inputs['objs'] as StacksModule.KubeObject[];
    const dep = objs.find((o) => o.kind === 'Deployment' && o.metadata.name === 'klutch-backend') as unknown as { spec: { replicas: number } };
    expect(dep.spec.replicas).toBe(2);
    const pdb = objs.find((o) => o.kind === 'PodDisruptionBudget' && o.metadata.name === 'klutch-backend') as unknown as { spec: { maxUnavailable: number } };
    expect(pdb.spec.maxUnavailable).toBe(1);
  });

  it('ships API Priority and Fairness for konnectors on the control plane', () => {
    const objs = byName('cp-objects').inputs['objs'] as StacksModule.KubeObject[];
    const apf = objs.filter((o) => o.apiVersion === 'flowcontrol.apiserver.k8s.io/v1').map((o) => `${o.kind}/${o.metadata.name}`);
    expect(apf.sort()).toEqual(['FlowSchema/klutch-konnectors', 'FlowSchema/klutch-konnectors-control-plane', 'PriorityLevelConfiguration/klutch-konnectors']);
  });
});
