/**
 * Crossplane as pods on the harness's real node (issue 22, item 3, the Crossplane part):
 * `startCrossplane(cluster, { version: '2.3', runtime: 'pods' })`, one cluster with one node for the suite.
 *
 *  - Crossplane core and its RBAC manager run as the Deployments OUR CrossplaneInstall construct renders from
 *    Crossplane's chart, from the image the harness writes without Docker from the binary it builds; `core init`
 *    created the CRDs and the TLS CA as on any cluster.
 *  - Crossplane's package manager pulls the Function and the Provider our constructs synthesize (named
 *    xpkg.crossplane.io/…, rewritten by ImageConfigs to the node's registry) and its DEFAULT package runtime
 *    creates their Deployments from the package images themselves; their processes run inside the pods' cgroups.
 *  - A claim goes through an XRD and a function-patch-and-transform Composition (gRPC over TLS to the function's
 *    headless Service, resolved by the cluster DNS) to a provider-kubernetes Object (read in v1alpha1: kube-apiserver
 *    converts through the provider's webhook Service) and a ConfigMap; its status comes back; delete cascades.
 *  - stop() removes every pod it deployed and its forwarder. The node's own teardown is node-harness.test.ts's.
 *  - Figures (image build time and size, time to Available/Healthy, pod memory) go to stderr for the docs.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { PATCH_AND_TRANSFORM_PACKAGE, PROVIDER_KUBERNETES_PACKAGE } from '../../../constructs/crossplane/index.js';
import { applyManifests, clientOf, type RealCluster, startCluster } from '../../../runtime/realinfra/index.js';
import { CLUSTER_DNS, clusterDnsKubeletConfig } from '../../../runtime/realinfra/cluster-dns.js';
import type { CrossplanePodsHarness } from '../../../runtime/realinfra/crossplane-pods.js';
import { pidAlive } from '../../../runtime/realinfra/registry.js';
import { isNotFound } from '../../../runtime/core/client.js';
import { eventually, uniqueName } from '../../realinfra/util.js';
import { podMemoryMiB, podProcesses } from './_support.js';

jest.setTimeout(600_000);

type Obj = KubernetesObject & {
  spec?: Record<string, any>;
  status?: Record<string, any> & { conditions?: Array<{ type: string; status: string; message?: string }> };
};

const NS = 'crossplane-system';
const GROUP = 'pods.klutch.test';
const log = (line: string) => process.stderr.write(`  ${line}\n`);
const figures: Record<string, string> = {};

let cluster: RealCluster;
let xp: CrossplanePodsHarness;
const api = () => clientOf(cluster.kubeConfig);
const cond = (o: Obj | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);

async function getOrUndefined(p: string): Promise<Obj | undefined> {
  try {
    return await api().request<Obj>('GET', p);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

async function pods(ns: string, selector: string): Promise<Obj[]> {
  const list = await api().request<{ items: Obj[] }>('GET', `/api/v1/namespaces/${ns}/pods`, { query: { labelSelector: selector } });
  return list.items.filter((p) => !p.metadata?.deletionTimestamp);
}

beforeAll(async () => {
  const t0 = Date.now();
  cluster = await startCluster({
    name: uniqueName('xppods'),
    nodes: 1,
    node: { kubeletConfig: clusterDnsKubeletConfig() },
    crossplane: { version: '2.3', runtime: 'pods' },
    log,
  });
  xp = cluster.crossplane as CrossplanePodsHarness;
  figures['cluster + node + Crossplane as pods, Healthy'] = `${((Date.now() - t0) / 1000).toFixed(1)} s`;
  const f = xp.figures;
  for (const [name, i] of Object.entries(f.images)) figures[`image ${name}`] = `${(i.bytes / 1e6).toFixed(1)} MB compressed, written in ${i.buildMs} ms`;
  figures['harness start → cluster DNS Ready'] = `${(f.clusterDnsReadyMs / 1000).toFixed(1)} s`;
  figures['harness start → crossplane Available'] = `${(f.crossplaneAvailableMs / 1000).toFixed(1)} s`;
  figures['harness start → Function + Provider Healthy'] = `${((f.packagesHealthyMs ?? 0) / 1000).toFixed(1)} s`;
});

afterAll(async () => {
  if (Object.keys(figures).length > 0)
    log(
      `crossplane as pods figures:\n${Object.entries(figures)
        .map(([k, v]) => `    ${k}: ${v}`)
        .join('\n')}`,
    );
  await cluster?.stop();
});

describe('Crossplane as pods on the real node (runtime: pods)', () => {
  it('runs Crossplane core from the objects CrossplaneInstall renders, from the image the harness writes', async () => {
    expect(xp.runtime).toBe('pods');
    expect(xp.versions.crossplane).toBe('v2.3.4');
    expect(xp.registry).toBe(`${cluster.node!.ip}:${cluster.node!.registry.split(':')[1]}`);
    // The construct's output, rendered from Crossplane's own chart: core, RBAC manager, their RBAC.
    const kinds = xp.installObjects.map((o) => `${o.kind}/${o.metadata?.name}`);
    expect(kinds).toEqual(
      expect.arrayContaining([
        'Namespace/crossplane-system',
        'Deployment/crossplane',
        'Deployment/crossplane-rbac-manager',
        'ServiceAccount/crossplane',
        'ClusterRole/crossplane',
      ]),
    );
    const rendered = xp.installObjects.find((o) => o.kind === 'Deployment' && o.metadata?.name === 'crossplane') as Obj;
    const live = (await getOrUndefined(`/apis/apps/v1/namespaces/${NS}/deployments/crossplane`))!;
    expect(live.spec!['template'].spec.containers[0].image).toBe(rendered.spec!['template'].spec.containers[0].image);
    expect(live.spec!['template'].spec.containers[0].image).toBe(`${xp.registry}/crossplane/crossplane:v2.3.4`);
    expect(live.spec!['template'].spec.containers[0].args).toEqual(['core', 'start']);
    expect(cond(live, 'Available')?.status).toBe('True');

    const [pod] = await pods(NS, 'app=crossplane');
    expect(pod).toBeDefined();
    // The digest the node pulled is the image the harness wrote.
    const status = (pod!.status!['containerStatuses'] as Array<{ name: string; imageID: string; ready: boolean }>).find((c) => c.name === 'crossplane')!;
    expect(status.ready).toBe(true);
    expect(status.imageID.endsWith(xp.images.crossplane.split('@')[1]!)).toBe(true);
    // The chart's security context holds in the running process: Crossplane runs as 65532 inside the pod's cgroup.
    const procs = podProcesses(pod!.metadata!.uid!);
    expect(procs.filter((p) => p.comm === 'crossplane').map((p) => p.uids[0])).toEqual(['65532']);
    // `crossplane core init` (the init container) did what it does on any cluster.
    expect(
      cond(await getOrUndefined('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/compositions.apiextensions.crossplane.io'), 'Established')?.status,
    ).toBe('True');
    expect(await getOrUndefined(`/api/v1/namespaces/${NS}/secrets/crossplane-root-ca`)).toBeDefined();
  });

  it('installs our constructs\u2019 Function and Provider; the default package runtime runs them as Deployments of the package images', async () => {
    for (const [kind, plural, name, pkg] of [
      ['Function', 'function', 'function-patch-and-transform', PATCH_AND_TRANSFORM_PACKAGE],
      ['Provider', 'provider', 'provider-kubernetes', PROVIDER_KUBERNETES_PACKAGE],
    ] as const) {
      const p = (await getOrUndefined(`/apis/pkg.crossplane.io/v1/${plural}s/${name}`))!;
      expect(p.spec!['package']).toBe(pkg);
      expect([cond(p, 'Installed')?.status, cond(p, 'Healthy')?.status]).toEqual(['True', 'True']);
      const revs = await api().request<{ items: Obj[] }>('GET', `/apis/pkg.crossplane.io/v1/${plural}revisions`, {
        query: { labelSelector: `pkg.crossplane.io/package=${name}` },
      });
      const rev = revs.items.find((r) => r.spec!['desiredState'] === 'Active')!;
      const resolved = `${xp.registry}/crossplane-contrib/${name}:${pkg.slice(pkg.lastIndexOf(':') + 1)}`;
      expect(rev.status!['resolvedImage']).toBe(resolved);
      expect(cond(rev, 'RuntimeHealthy')?.status).toBe('True');
      // The Deployment Crossplane made: owned by the revision, the package image as the runtime image.
      const d = (await getOrUndefined(`/apis/apps/v1/namespaces/${NS}/deployments/${rev.metadata!.name}`))!;
      expect(d.metadata!.ownerReferences?.[0]).toMatchObject({ kind: `${kind}Revision`, name: rev.metadata!.name, controller: true });
      expect(d.spec!['template'].spec.containers[0].image).toBe(resolved);
      expect(cond(d, 'Available')?.status).toBe('True');
      const [pod] = await pods(NS, `pkg.crossplane.io/${plural}=${name}`);
      const procs = podProcesses(pod!.metadata!.uid!);
      // Crossplane's runtime runs packages as uid 2000; the image's entrypoint is the binary.
      expect(procs.filter((x) => x.comm === (plural === 'function' ? 'function' : 'provider')).map((x) => x.uids[0])).toEqual(['2000']);
      if (plural === 'function') {
        // Reached by its headless Service's DNS name, which the cluster DNS answers.
        expect(rev.status!['endpoint']).toBe(`dns:///${name}.${NS}:9443`);
        expect((await getOrUndefined(`/api/v1/namespaces/${NS}/services/${name}`))!.spec!['clusterIP']).toBe('None');
      } else {
        // The DeploymentRuntimeConfig our constructs ship: ServiceAccount provider-kubernetes, the harness's --poll.
        expect(d.spec!['template'].spec.serviceAccountName).toBe('provider-kubernetes');
        expect(d.spec!['template'].spec.containers[0].args).toEqual(['--poll=10s']);
      }
    }
    // The cluster DNS the function endpoint needs.
    expect((await getOrUndefined(`/api/v1/namespaces/${CLUSTER_DNS.namespace}/services/kube-dns`))!.spec!['clusterIP']).toBe(CLUSTER_DNS.ip);

    for (const [label, ns, selector] of [
      ['crossplane', NS, 'app=crossplane'],
      ['crossplane-rbac-manager', NS, 'app=crossplane-rbac-manager'],
      ['function-patch-and-transform', NS, 'pkg.crossplane.io/function=function-patch-and-transform'],
      ['provider-kubernetes', NS, 'pkg.crossplane.io/provider=provider-kubernetes'],
      ['coredns', CLUSTER_DNS.namespace, 'k8s-app=kube-dns'],
    ] as const) {
      const [pod] = await pods(ns, selector);
      figures[`memory ${label} pod`] = `${podMemoryMiB(pod!.metadata!.uid!).toFixed(0)} MiB`;
    }
  });

  it('composes a claim through P&T into a provider-kubernetes Object and a ConfigMap; delete cascades', async () => {
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
      metadata: { name: 'xgreetings-pods' },
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
                      transforms: [{ type: 'string', string: { type: 'Format', fmt: 'pods-greeting-%s' } }],
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
    // InjectedIdentity: the provider's pod acts as ServiceAccount provider-kubernetes, which has only this.
    const rbac: Obj[] = [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'pods-provider-kubernetes-configmaps' },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }],
      } as Obj,
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'pods-provider-kubernetes-configmaps' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'pods-provider-kubernetes-configmaps' },
        subjects: [{ kind: 'ServiceAccount', name: 'provider-kubernetes', namespace: NS }],
      } as Obj,
    ];
    await applyManifests(cluster.kubeConfig, [xrd, ...rbac]);
    await eventually(
      'the XRD to be Established with its claim CRD',
      async () =>
        cond(await getOrUndefined(`/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions/xgreetings.${GROUP}`), 'Established')?.status === 'True' &&
        cond(await getOrUndefined(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/greetings.${GROUP}`), 'Established')?.status === 'True',
      { timeoutMs: 120_000 },
    );
    await applyManifests(cluster.kubeConfig, [composition]);

    const claimPath = `/apis/${GROUP}/v1alpha1/namespaces/default/greetings/hello`;
    const created = Date.now();
    await applyManifests(cluster.kubeConfig, [
      { apiVersion: `${GROUP}/v1alpha1`, kind: 'Greeting', metadata: { name: 'hello', namespace: 'default' }, spec: { message: 'hi from pods' } } as Obj,
    ]);
    const cm = await eventually('the composed ConfigMap', () => getOrUndefined('/api/v1/namespaces/default/configmaps/pods-greeting-hello'), {
      timeoutMs: 180_000,
    });
    figures['claim → ConfigMap'] = `${((Date.now() - created) / 1000).toFixed(1)} s`;
    expect((cm as unknown as { data: Record<string, string> }).data).toEqual({ message: 'hi from pods' });
    const claim = await eventually(
      'the claim to be Ready with the status patched back',
      async () => {
        const c = await getOrUndefined(claimPath);
        return cond(c, 'Ready')?.status === 'True' && c?.status?.['configMapName'] === 'pods-greeting-hello' ? c : undefined;
      },
      { timeoutMs: 180_000 },
    );
    figures['claim → Ready'] = `${((Date.now() - created) / 1000).toFixed(1)} s`;
    const xrName = (claim.spec!['resourceRef'] as { name: string }).name;
    const xr = await getOrUndefined(`/apis/${GROUP}/v1alpha1/xgreetings/${xrName}`);
    const objectRef = (xr?.spec?.['resourceRefs'] as Array<{ kind: string; name: string }>).find((r) => r.kind === 'Object')!;
    // Read in v1alpha1: kube-apiserver converts through the provider pod's webhook (its Service, made by Crossplane).
    const obj = await getOrUndefined(`/apis/kubernetes.crossplane.io/v1alpha1/objects/${objectRef.name}`);
    expect(obj?.apiVersion).toBe('kubernetes.crossplane.io/v1alpha1');
    expect([cond(obj, 'Ready')?.status, cond(obj, 'Synced')?.status]).toEqual(['True', 'True']);

    await api().request('DELETE', claimPath);
    await eventually(
      'the claim, XR, Object and ConfigMap to be deleted',
      async () =>
        !(await getOrUndefined(claimPath)) &&
        !(await getOrUndefined(`/apis/${GROUP}/v1alpha1/xgreetings/${xrName}`)) &&
        !(await getOrUndefined(`/apis/kubernetes.crossplane.io/v1alpha2/objects/${objectRef.name}`)) &&
        !(await getOrUndefined('/api/v1/namespaces/default/configmaps/pods-greeting-hello')),
      { timeoutMs: 180_000 },
    );
  });

  it('stop() removes every pod it deployed and its forwarder; the node stays usable', async () => {
    const forwarder = xp.pids().forwarder!;
    expect(pidAlive(forwarder)).toBe(true);
    const hostsToml = path.join(cluster.node!.dir, 'containerd', 'certs.d', xp.registry, 'hosts.toml');
    expect(fs.existsSync(hostsToml)).toBe(true);
    await xp.stop();
    expect(await pods(NS, '')).toEqual([]);
    expect(await pods(CLUSTER_DNS.namespace, 'k8s-app=kube-dns')).toEqual([]);
    expect(pidAlive(forwarder)).toBe(false);
    expect(fs.existsSync(hostsToml)).toBe(false);
    const node = await api().request<Obj>('GET', `/api/v1/nodes/${cluster.node!.name}`);
    expect(cond(node, 'Ready')?.status).toBe('True');
  });
});
