// @realinfra late (Crossplane 1.20: built in the background on a new machine; scripts/_lanes.ts)
// Real Crossplane (2.3 and 1.20) on the harness: the Function and Provider our constructs synthesize are
// installed by Crossplane's package manager from the harness's registry, a claim goes through an XRD and a
// function-patch-and-transform Composition to a provider-kubernetes Object (v1alpha1, as the catalogue's
// Compositions use: kube-apiserver converts through the provider's webhook) and a ConfigMap, its status comes
// back, and deleting the claim deletes everything it composed. stop() leaves no process or namespace.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify as toYaml } from 'yaml';
import { App, Chart } from 'cdk8s';
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  Function as XpFunction,
  KubernetesProviderConfig,
  PATCH_AND_TRANSFORM_PACKAGE,
  PROVIDER_KUBERNETES_PACKAGE,
  Provider,
} from '../../../constructs/crossplane/index.js';
import {
  type CrossplaneVersion,
  CrossplaneStartError,
  type RealCluster,
  applyManifests,
  clientOf,
  planComponent,
  startCluster,
} from '../../../runtime/realinfra/index.js';
import { pidAlive } from '../../../runtime/realinfra/registry.js';
import { isNotFound } from '../../../runtime/core/client.js';
import { eventually, uniqueName } from '../../realinfra/util.js';

jest.setTimeout(600_000);

const execFileAsync = promisify(execFile);

type Obj = KubernetesObject & {
  spec?: Record<string, unknown>;
  status?: { conditions?: Array<{ type: string; status: string; message?: string }> } & Record<string, unknown>;
};

const GROUP = 'harness.klutch.test';

function constructObjects(): Obj[] {
  const chart = new Chart(new App(), 'packages');
  XpFunction.patchAndTransform(chart, 'Fn', { name: 'function-patch-and-transform' });
  new Provider(chart, 'Provider', { package: PROVIDER_KUBERNETES_PACKAGE, name: 'provider-kubernetes' });
  return chart.toJson() as Obj[];
}

function providerConfig(): Obj {
  const chart = new Chart(new App(), 'pc');
  new KubernetesProviderConfig(chart, 'Pc', { name: 'default' });
  return (chart.toJson() as Obj[])[0]!;
}

const xrd: Obj = {
  apiVersion: 'apiextensions.crossplane.io/v1',
  kind: 'CompositeResourceDefinition',
  metadata: { name: `xgreetings.${GROUP}` },
  spec: {
    group: GROUP,
    names: { kind: 'XGreeting', plural: 'xgreetings' },
    claimNames: { kind: 'Greeting', plural: 'greetings' },
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        referenceable: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } },
              status: { type: 'object', properties: { configMapName: { type: 'string' } } },
            },
          },
        },
      },
    ],
  },
};

const composition: Obj = {
  apiVersion: 'apiextensions.crossplane.io/v1',
  kind: 'Composition',
  metadata: { name: 'xgreetings-configmap' },
  spec: {
    compositeTypeRef: { apiVersion: `${GROUP}/v1alpha1`, kind: 'XGreeting' },
    mode: 'Pipeline',
    pipeline: [
      {
        step: 'patch-and-transform',
        functionRef: { name: 'function-patch-and-transform' },
        input: {
          apiVersion: 'pt.fn.crossplane.io/v1beta1',
          kind: 'Resources',
          resources: [
            {
              name: 'configmap',
              base: {
                apiVersion: 'kubernetes.crossplane.io/v1alpha1',
                kind: 'Object',
                spec: {
                  providerConfigRef: { name: 'default' },
                  forProvider: { manifest: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'default' }, data: {} } },
                },
              },
              patches: [
                { type: 'FromCompositeFieldPath', fromFieldPath: 'spec.message', toFieldPath: 'spec.forProvider.manifest.data.message' },
                {
                  type: 'FromCompositeFieldPath',
                  fromFieldPath: 'spec.claimRef.name',
                  toFieldPath: 'spec.forProvider.manifest.metadata.name',
                  transforms: [{ type: 'string', string: { type: 'Format', fmt: 'greeting-%s' } }],
                },
                { type: 'ToCompositeFieldPath', fromFieldPath: 'status.atProvider.manifest.metadata.name', toFieldPath: 'status.configMapName' },
              ],
            },
          ],
        },
      },
    ],
  },
};

// InjectedIdentity: provider-kubernetes acts as its ServiceAccount, which has only what is granted here.
const rbac: Obj[] = [
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'harness-provider-kubernetes-configmaps' },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }],
  } as Obj,
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'harness-provider-kubernetes-configmaps' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'harness-provider-kubernetes-configmaps' },
    subjects: [{ kind: 'ServiceAccount', name: 'provider-kubernetes', namespace: 'crossplane-system' }],
  } as Obj,
];

const cond = (o: Obj | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);

async function getOrUndefined(cluster: RealCluster, p: string): Promise<Obj | undefined> {
  try {
    return await clientOf(cluster.kubeConfig).request<Obj>('GET', p);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** The network namespaces some process of this user is in (`net:[…]`, the targets of /proc/<pid>/ns/net). */
function netNamespacesInUse(): Set<string> {
  const inUse = new Set<string>();
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      inUse.add(fs.readlinkSync(`/proc/${pid}/ns/net`));
    } catch {
      // gone, or another user's
    }
  }
  return inUse;
}

describe.each<[CrossplaneVersion, string]>([
  ['2.3', 'v2.3.4'],
  ['1.20', 'v1.20.13'],
])('real Crossplane %s on the harness', (version, exact) => {
  let cluster: RealCluster;
  const name = uniqueName(`xp${version.replace('.', '')}`);
  const lines: string[] = [];

  beforeAll(async () => {
    cluster = await startCluster({ name, crossplane: { version, install: false }, log: (l) => lines.push(l) });
  });

  afterAll(async () => {
    await cluster?.stop();
  });

  it('runs the versions the constructs name, with a registry on loopback', async () => {
    const xp = cluster.crossplane!;
    expect(xp.versions.crossplane).toBe(exact);
    expect(PATCH_AND_TRANSFORM_PACKAGE.endsWith(`:${xp.versions.functionPatchAndTransform}`)).toBe(true);
    expect(PROVIDER_KUBERNETES_PACKAGE.endsWith(`:${xp.versions.providerKubernetes}`)).toBe(true);
    expect(xp.registry).toMatch(/^127\.0\.0\.1:\d+$/);
    // core lists, then watches, a just-Established XR kind (CROSSPLANE_CORE_ENV): a watch-list would wait a 429's second
    expect(fs.readFileSync(`/proc/${xp.pids().crossplane}/environ`, 'utf8').split('\0')).toContain('KUBE_FEATURE_WatchListClient=false');
    const catalog = (await (await fetch(`http://${xp.registry}/v2/_catalog`)).json()) as { repositories: string[] };
    expect(catalog.repositories).toEqual(expect.arrayContaining(['crossplane-contrib/function-patch-and-transform', 'crossplane-contrib/provider-kubernetes']));
  });

  it('installs the Function and Provider our constructs synthesize through the package manager', async () => {
    const xp = cluster.crossplane!;
    const objs = constructObjects();
    // Applied unchanged: the packages name xpkg.crossplane.io; ImageConfigs point Crossplane at the local registry.
    expect(objs.map((o) => o.spec?.['package'])).toEqual([PATCH_AND_TRANSFORM_PACKAGE, PROVIDER_KUBERNETES_PACKAGE]);
    await applyManifests(cluster.kubeConfig, [...objs, ...rbac]);
    await xp.waitForPackage('Function', 'function-patch-and-transform');
    await xp.waitForPackage('Provider', 'provider-kubernetes');
    const crd = (n: string) => getOrUndefined(cluster, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${n}`);
    await eventually('the ProviderConfig kind', async () => cond(await crd('providerconfigs.kubernetes.crossplane.io'), 'Established')?.status === 'True', {
      timeoutMs: 120_000,
    });
    await applyManifests(cluster.kubeConfig, [providerConfig()]);

    const revs = await clientOf(cluster.kubeConfig).request<{ items: Obj[] }>('GET', '/apis/pkg.crossplane.io/v1/functionrevisions');
    const rev = revs.items.find((r) => r.metadata?.labels?.['pkg.crossplane.io/package'] === 'function-patch-and-transform')!;
    expect(rev.spec?.['image']).toBe(PATCH_AND_TRANSFORM_PACKAGE);
    // The ImageConfig's rewrite is where Crossplane pulled it from.
    expect(rev.status?.['resolvedImage']).toBe(`${xp.registry}/crossplane-contrib/function-patch-and-transform:${xp.versions.functionPatchAndTransform}`);
    expect(rev.status?.['endpoint']).toBe(`unix://${xp.dir}/fn.sock`);
    // The package manager installed the provider's CRDs from its package (Established a moment after the
    // Provider is Healthy on a loaded machine: waited for, as the ProviderConfig kind above).
    await eventually('the Object kind', async () => cond(await crd('objects.kubernetes.crossplane.io'), 'Established')?.status === 'True', {
      timeoutMs: 120_000,
    });
    await eventually('provider-kubernetes running', async () => xp.pids()['provider-kubernetes'] !== undefined, { timeoutMs: 120_000 });
  });

  it('composes a claim through P&T into a provider-kubernetes Object and a ConfigMap; delete cascades', async () => {
    await applyManifests(cluster.kubeConfig, [xrd]);
    await eventually(
      'the XRD to be Established with its claim CRD',
      async () =>
        cond(await getOrUndefined(cluster, `/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions/xgreetings.${GROUP}`), 'Established')?.status ===
          'True' &&
        cond(await getOrUndefined(cluster, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/greetings.${GROUP}`), 'Established')?.status === 'True',
      { timeoutMs: 120_000 },
    );
    await applyManifests(cluster.kubeConfig, [composition]);

    const claimPath = `/apis/${GROUP}/v1alpha1/namespaces/default/greetings/hello`;
    const created = Date.now();
    await applyManifests(cluster.kubeConfig, [
      { apiVersion: `${GROUP}/v1alpha1`, kind: 'Greeting', metadata: { name: 'hello', namespace: 'default' }, spec: { message: 'hi from a claim' } } as Obj,
    ]);
    const cm = await eventually('the composed ConfigMap', () => getOrUndefined(cluster, '/api/v1/namespaces/default/configmaps/greeting-hello'), {
      timeoutMs: 180_000,
    });
    lines.push(`claim → ConfigMap: ${((Date.now() - created) / 1000).toFixed(1)} s`);
    expect((cm as unknown as { data: Record<string, string> }).data).toEqual({ message: 'hi from a claim' });

    const claim = await eventually(
      'the claim to be Ready with the status patched back',
      async () => {
        const c = await getOrUndefined(cluster, claimPath);
        return cond(c, 'Ready')?.status === 'True' && c?.status?.['configMapName'] === 'greeting-hello' ? c : undefined;
      },
      { timeoutMs: 180_000 },
    );
    const xrName = (claim.spec?.['resourceRef'] as { name: string }).name;
    const xr = await getOrUndefined(cluster, `/apis/${GROUP}/v1alpha1/xgreetings/${xrName}`);
    // v1 XRDs (legacy on 2.x) keep the composed references in spec.resourceRefs.
    const objectRef = (xr?.spec?.['resourceRefs'] as Array<{ kind: string; name: string }>).find((r) => r.kind === 'Object')!;
    expect(objectRef).toBeDefined();
    // Read in v1alpha1 (the catalogue's version): kube-apiserver converts through the provider's webhook.
    const obj = await getOrUndefined(cluster, `/apis/kubernetes.crossplane.io/v1alpha1/objects/${objectRef.name}`);
    expect(obj?.apiVersion).toBe('kubernetes.crossplane.io/v1alpha1');
    expect(cond(obj, 'Ready')?.status).toBe('True');
    expect(cond(obj, 'Synced')?.status).toBe('True');
    lines.push(`claim → Ready: ${((Date.now() - created) / 1000).toFixed(1)} s`);

    await clientOf(cluster.kubeConfig).request('DELETE', claimPath);
    await eventually(
      'the claim, XR, Object and ConfigMap to be deleted',
      async () =>
        !(await getOrUndefined(cluster, claimPath)) &&
        !(await getOrUndefined(cluster, `/apis/${GROUP}/v1alpha1/xgreetings/${xrName}`)) &&
        !(await getOrUndefined(cluster, `/apis/kubernetes.crossplane.io/v1alpha2/objects/${objectRef.name}`)) &&
        !(await getOrUndefined(cluster, '/api/v1/namespaces/default/configmaps/greeting-hello')),
      { timeoutMs: 180_000 },
    );
  });

  it('installs a Configuration pushed with pushPackage under a rewritten prefix; .xpkg files push too', async () => {
    const xp = cluster.crossplane!;
    const cfgXrd = JSON.parse(
      JSON.stringify(xrd).replaceAll(GROUP, `cfg.${GROUP}`).replace('"claimNames":{"kind":"Greeting","plural":"greetings"},', ''),
    ) as Obj;
    const packageYaml = `${toYaml({ apiVersion: 'meta.pkg.crossplane.io/v1', kind: 'Configuration', metadata: { name: 'harness-config' } })}---\n${toYaml(cfgXrd)}`;
    const pushed = await xp.pushPackage('harness/config:v0.1.0', { packageYaml });
    expect(pushed).toBe(`${xp.registry}/harness/config:v0.1.0`);
    expect(await xp.rewriteImages('xpkg.example.test/harness')).toBe(`${xp.registry}/harness`);
    // Named as a real registry would name it: the ImageConfig sends Crossplane to the local one.
    await applyManifests(cluster.kubeConfig, [
      {
        apiVersion: 'pkg.crossplane.io/v1',
        kind: 'Configuration',
        metadata: { name: 'harness-config' },
        spec: { package: 'xpkg.example.test/harness/config:v0.1.0' },
      } as Obj,
    ]);
    await xp.waitForPackage('Configuration', 'harness-config');
    await eventually(
      'the packaged XRD to be Established',
      async () =>
        cond(await getOrUndefined(cluster, `/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions/xgreetings.cfg.${GROUP}`), 'Established')
          ?.status === 'True',
      { timeoutMs: 120_000 },
    );

    // An .xpkg (OCI image tarball) pushes unchanged: same digest.
    const crane = planComponent('crane').binary;
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-xpkg-')), 'config.xpkg');
    // Asynchronously: the host side of the registry is a forwarder in this process's event loop.
    const run = async (args: string[]) => (await execFileAsync(crane, args, { timeout: 60_000 })).stdout.trim();
    try {
      await run(['pull', '--insecure', pushed, file]);
      const again = await xp.pushPackage('harness/config-file:v0.1.0', { xpkgFile: file });
      expect(await run(['digest', '--insecure', again])).toBe(await run(['digest', '--insecure', pushed]));
    } finally {
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    }
  });

  it('stop() leaves no process or network namespace', async () => {
    const xp = cluster.crossplane!;
    const pids = Object.values(xp.pids()).filter((p): p is number => p !== undefined);
    expect(pids).toHaveLength(6);
    // two namespaces of their own (core and provider; the function), neither the host's
    const host = fs.readlinkSync('/proc/self/ns/net');
    expect(new Set([host, ...xp.networkNamespaces]).size).toBe(3);
    for (const n of xp.networkNamespaces) expect(netNamespacesInUse()).toContain(n);
    expect(fs.readlinkSync(`/proc/${xp.pids().crossplane}/ns/net`)).toBe(xp.networkNamespaces[0]);
    await cluster.stop();
    for (const p of pids) expect(pidAlive(p)).toBe(false);
    for (const n of xp.networkNamespaces) expect(netNamespacesInUse()).not.toContain(n);
    expect(fs.existsSync(cluster.dir)).toBe(false);
    process.stderr.write(`${lines.join('\n')}\n`);
  });
});

describe('a Crossplane component that does not come up', () => {
  it('fails the start with an error naming it and its log, and leaves no process or namespace', async () => {
    const lines: string[] = [];
    const bin = (c: Parameters<typeof planComponent>[0]) => planComponent(c).binary;
    // `false` exits at once with code 1: what a crashing Crossplane looks like to the harness.
    const binaries = {
      crossplane: '/bin/false',
      functionPatchAndTransform: bin('function-patch-and-transform'),
      providerKubernetes: bin('provider-kubernetes'),
      crane: bin('crane'),
    };
    let error: unknown;
    try {
      await startCluster({ name: uniqueName('xpfail'), crossplane: { version: '2.3', binaries }, log: (l) => lines.push(l) });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CrossplaneStartError);
    expect((error as CrossplaneStartError).component).toBe('crossplane');
    expect((error as Error).message).toContain('realinfra: crossplane: crossplane exited with code 1 before GET http://');
    expect((error as Error).message).toContain("--- last lines of crossplane's log ---");
    expect((error as Error).message).toContain('/bin/false core start --namespace=crossplane-system');
    // The namespace it had made (named in its progress line) is gone again: no process is in it.
    const made = /namespace (net:\[\d+\]), its ports on 127\.231\./.exec(lines.join('\n'));
    expect(made).not.toBeNull();
    expect(netNamespacesInUse()).not.toContain(made![1]);
  });
});
