/**
 * The topology as pods on the harness's real node (issue 22, item 3), driven by a real `pulumi up` of the stack
 * program (stacks/main.ts, the Go-built Pulumi CLI and kubernetes provider, runtime/realinfra/pulumi-build.ts), with
 * no klutch-kit component a host process: what `npm run sandbox -- --pods` does (the shared steps are sandbox/pods.ts).
 *
 *  1. Crossplane as pods on the control plane's node (`startCrossplane(cp, { runtime: 'pods', install: false })`):
 *     core and its RBAC manager from our CrossplaneInstall, function-patch-and-transform and provider-kubernetes
 *     through Crossplane's default package runtime, from images the harness writes without Docker.
 *  2. `pulumi up` with `images.registry` set to the node's registry (and `images.base: local`): the stack's
 *     RuntimeImages builds the backend and konnector images with `klutch-kit image build` (once) and pushes them; the
 *     backend (2 replicas) and Dex (our Dex construct, the image runtime/image/dex.ts writes from the binary
 *     tools/dex builds) run from those images as pods; both become Ready. The stack also installs the catalogue as a
 *     Configuration package (`klutch-kit:catalogue`) with the Function and the Provider, which Crossplane's package
 *     manager installs and its runtime runs as pods.
 *  3. Login through the Dex pod: `kubectl bind` (runtime/kubectl-bind, in-process) against the backend's Service
 *     prints the login URL; a fetch "browser" follows it: backend /authorize → Dex (mockCallback connector, no
 *     approval screen) → backend /callback (the backend pods exchange the code with Dex over TLS) → the catalogue
 *     page → Bind → kubectl bind's loopback callback; kubectl bind then stores the kubeconfig, installs the
 *     konnector objects and creates the APIServiceBinding; the backend pods answer the export request.
 *  4. The konnector from the stack-built image as a pod, syncing a claim of the app cluster to the control plane
 *     and its status back.
 *  5. The data path: a PostgresqlInstance and a ServiceBinding created in the app cluster go through the konnector
 *     pod and the backend's binding to the Crossplane pods and the sandbox's a8s operator stand-in
 *     (sandbox/a8s-operator: a real PostgreSQL server), and the credentials Secret that comes down to the app
 *     cluster opens a PostgreSQL connection.
 *
 * Where things run, and the stand-ins (each for something this machine cannot have):
 *  - The control plane `cp` has the node (one per host: the node takes a host-wide lock), with the cluster DNS
 *    Crossplane's function endpoint needs. The app cluster has none, so the stack runs with `skipAwait` and this test
 *    waits for the pods itself; the konnector the stack and kubectl bind install there stays at 0 replicas, and the
 *    same konnector objects (image, ServiceAccount, args) run on cp's node with `--kubeconfig` for the app cluster
 *    (a token of the app cluster's konnector ServiceAccount), reaching its API server through a TCP forwarder of
 *    this process on the node IP.
 *  - Dex's issuer is `https://10.250.0.1:<port>/dex`: a TCP forwarder of this process on the node IP (only the
 *    host and its pods reach it) to the Dex Service, standing in for the load balancer address a Dex Service
 *    gets in a cloud. Dex serves the TLS itself (`klutch-kit:dex.tlsSecretName`, a certificate from a CA made
 *    here) and the backend trusts the CA (`klutch-kit:dex.caConfigMap`). The backend URL is a loopback forwarder
 *    to the backend Service (the backend accepts a plain-http URL only on loopback): the browser and kubectl
 *    bind run on the host.
 *  - provider-kubernetes polls every 3 s: the harness puts `--poll=3s` on the DeploymentRuntimeConfig pulumi up
 *    applies (its default, 10 min, would hold the claims' status). The a8s operator is the sandbox's stand-in.
 *    A plain CRD with an APIServiceExportTemplate is bound too, for the status round trip.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Stack } from '@pulumi/pulumi/automation/index.js';
import pg from 'pg';
import { BINDER_EXPORTS_AGGREGATION_LABEL } from '../../../constructs/runtime/_defaults.js';
import { KubeClient } from '../../../runtime/core/index.js';
import { applyManifests, waitForCrdsEstablished } from '../../../runtime/realinfra/apply.js';
import { ensureDexBinary, ensureKubectl } from '../../../runtime/realinfra/build.js';
import { clientOf } from '../../../runtime/realinfra/client.js';
import { type RealCluster, startCluster } from '../../../runtime/realinfra/cluster.js';
import { clusterDnsKubeletConfig } from '../../../runtime/realinfra/cluster-dns.js';
import { type CrossplanePodsHarness, podsRegistry } from '../../../runtime/realinfra/crossplane-pods.js';
import { startCrossplane } from '../../../runtime/realinfra/index.js';
import { ensurePulumiBinaries } from '../../../runtime/realinfra/pulumi-build.js';
import { generateStackSecrets } from '../../../stacks/secrets.js';
import { awaitCatalogue, binderExportRoles, pushCatalogue } from '../../../sandbox/catalogue.js';
import { SandboxA8sOperator } from '../../../sandbox/a8s-operator/index.js';
import {
  bindThroughDex,
  createLocalStack,
  type DexBindResult,
  deploymentReady,
  podsStackConfig,
  prepareDex,
  runKonnectorOnNode,
  serviceAddress,
  TcpForwarders,
} from '../../../sandbox/pods.js';
import { eventually, uniqueName } from '../../realinfra/util.js';
import { fetchTrusting } from '../../support/tls.js';
import { podMemoryMiB, podProcesses, processOf } from './_support.js';

jest.setTimeout(600_000);

const t0 = Date.now();
const log = (line: string) => process.stderr.write(`  [topology-pods +${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}\n`);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-topology-pods-'));
const figures: Record<string, string> = {};
const secs = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

const NS = 'klutch-system';
const XP_NS = 'crossplane-system';
const GROUP = 'kiwi.example';
const PLURAL = 'kiwidbs';

interface Obj {
  metadata: { name: string; namespace?: string; uid?: string; generation?: number; deletionTimestamp?: string; labels?: Record<string, string> };
  spec?: Record<string, any>;
  status?: Record<string, any> & { conditions?: Array<{ type: string; status: string }> };
}

let cp: RealCluster;
let app: RealCluster;
let stack: Stack;
let dexImage: string;
let caPem: string;
let backendUrl: string;
let issuer: string;
const forwarders = new TcpForwarders();
let upResult: Awaited<ReturnType<Stack['up']>>;
let xp: CrossplanePodsHarness | undefined;
let xpStarting: Promise<CrossplanePodsHarness> | undefined;
let a8s: SandboxA8sOperator | undefined;
const a8sDir = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-topology-pods-a8s-'));
fs.chmodSync(a8sDir, 0o777);

const api = () => clientOf(cp.kubeConfig);
const appApi = () => clientOf(app.kubeConfig);

async function podsOf(ns: string, selector: string): Promise<Obj[]> {
  const list = await api().request<{ items: Obj[] }>('GET', `/api/v1/namespaces/${ns}/pods`, { query: { labelSelector: selector } });
  return list.items.filter((p) => !p.metadata.deletionTimestamp);
}

/** The exported API on cp: its CRD, the export template and the aggregated role that lets the backend hand it out. */
function providerObjects(): KubernetesObject[] {
  return [
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${PLURAL}.${GROUP}` },
      spec: {
        group: GROUP,
        names: { kind: 'KiwiDB', listKind: 'KiwiDBList', plural: PLURAL, singular: 'kiwidb' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1alpha1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: { type: 'object', properties: { tier: { type: 'string' } } },
                  status: { type: 'object', properties: { phase: { type: 'string' } } },
                },
              },
            },
            subresources: { status: {} },
          },
        ],
      },
    } as KubernetesObject,
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'crossplane-system' } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: `klutch-binder-exports-${PLURAL}`, labels: { [BINDER_EXPORTS_AGGREGATION_LABEL]: 'true' } },
      rules: [{ apiGroups: [GROUP], resources: [PLURAL, `${PLURAL}/status`], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }],
    } as KubernetesObject,
  ];
}

beforeAll(async () => {
  const [dexBinary, bins, c1, c2] = await Promise.all([
    ensureDexBinary({ log }).then((b) => (log(`dex binary ${b}`), b)),
    ensurePulumiBinaries({ log }),
    // the cluster DNS the Crossplane pods need (their function endpoint is a Service name)
    startCluster({ name: uniqueName('topo-cp'), nodes: 1, node: { kubeletConfig: clusterDnsKubeletConfig() }, log }).then(
      (c) => ((figures['control plane + node start'] = secs(t0)), c),
    ),
    startCluster({ name: uniqueName('topo-app'), log }),
  ]);
  cp = c1;
  app = c2;

  // Crossplane as pods (core from CrossplaneInstall; the packages are pulumi up's: klutch-kit:catalogue). It starts
  // while Dex's image is written and the catalogue is pushed; pulumi up starts once it is Available (the packages it
  // applies at once need Crossplane's CRDs and its image rewrites), and builds the runtime images beside their install.
  const tXp = Date.now();
  xpStarting = startCrossplane(cp, { version: '2.3', runtime: 'pods', providerPollInterval: '3s', install: false, log }).then((h) => {
    xp = h as CrossplanePodsHarness;
    figures['Crossplane as pods: core Available (beside the Dex image and the catalogue push)'] = secs(tXp);
    return xp;
  });
  xpStarting.catch(() => undefined);

  // Dex's image from the harness's binary, its TLS and the CA the backend trusts, the issuer's forwarder on the node IP.
  const tImage = Date.now();
  const dex = await prepareDex(cp, dexBinary, work, forwarders, 'klutch-kit topology pods test CA');
  dexImage = dex.image;
  caPem = dex.caPem;
  issuer = dex.issuer;
  figures['dex image build + push'] = secs(tImage);
  figures['dex binary'] = `${(fs.statSync(dexBinary).size / 1048576).toFixed(1)} MiB`;
  await applyManifests(cp.kubeConfig, providerObjects());
  await waitForCrdsEstablished(cp.kubeConfig, [`${PLURAL}.${GROUP}`]);

  // The catalogue package in the node registry (at the address the Crossplane pods pull from), the sandbox's a8s
  // operator stand-in (real PostgreSQL servers).
  const pushed = await pushCatalogue(cp, { registry: podsRegistry(cp) });
  a8s = new SandboxA8sOperator({ client: new KubeClient(cp.kubeConfig), dataDir: path.join(a8sDir, 'data') });
  await a8s.start();
  // the binder roles the control plane gives its exports (the backend pods hand out only what these grant)
  await applyManifests(cp.kubeConfig, binderExportRoles(pushed.packageRef));

  const backendPort = await forwarders.listen('127.0.0.1', () => serviceAddress(cp.kubeConfig, NS, 'klutch-backend', 'http'));
  backendUrl = `http://127.0.0.1:${backendPort}`;

  // The stack: a project folder outside the tree whose program is stacks/main.ts (as test/integration/stacks does).
  stack = await createLocalStack(path.join(work, 'pulumi'), bins, 'pods', 'klutch-kit topology pods');
  await stack.setAllConfig(
    podsStackConfig({
      controlPlane: { name: 'cp', cluster: cp },
      appClusters: [{ name: 'app', cluster: app }],
      backend: { url: backendUrl, prettyName: 'Klutch on pods', replicas: 2 },
      dex,
      catalogue: { package: pushed.packageRef },
      secrets: generateStackSecrets(),
    }),
  );
  const upLog = path.join(work, 'pulumi-up.log');
  const out = fs.openSync(upLog, 'a');
  const tUp = Date.now();
  try {
    await xpStarting;
    upResult = await stack.up({ color: 'never', onOutput: (s) => fs.writeSync(out, s) });
  } catch (e) {
    throw new Error(`pulumi up (or Crossplane's start beside it) failed: ${(e as Error).message}\n${fs.readFileSync(upLog, 'utf8').slice(-4000)}`, {
      cause: e,
    });
  } finally {
    fs.closeSync(out);
  }
  figures['pulumi up (image build + push + deploy)'] = secs(tUp);
  // one build for both runtime images and both platforms (pulumi repeats its info lines under "Diagnostics:")
  const progress = fs.readFileSync(upLog, 'utf8').split(/^Diagnostics:/m)[0]!;
  figures['runtime image builds in pulumi up'] =
    `${(progress.match(/image build: npm install /g) ?? []).length} built, ${(progress.match(/image build: the images of these inputs are cached/g) ?? []).length} reused from the cache`;
  const tCat = Date.now();
  await awaitCatalogue(cp, xp!, pushed);
  figures['pulumi up done → catalogue installed by Crossplane'] = secs(tCat);
  // the export template of the API (its CRD came with the stack's binding CRDs)
  await applyManifests(cp.kubeConfig, [
    {
      apiVersion: 'example-backend.klutch.anynines.com/v1alpha1',
      kind: 'APIServiceExportTemplate',
      metadata: { name: PLURAL, namespace: XP_NS },
      spec: { APIServiceSelector: { group: GROUP, resource: PLURAL }, permissionClaims: [] },
    } as KubernetesObject,
  ]);
  const tReady = Date.now();
  await Promise.all([deploymentReady(cp.kubeConfig, NS, 'klutch-backend', 2), deploymentReady(cp.kubeConfig, NS, 'dex', 1)]);
  figures['pulumi up done → backend 2/2 + Dex 1/1 Ready'] = secs(tReady);
  // the host reaches both through their Services (the forwarders): kube-proxy programs them a moment after Ready
  await Promise.all([cp.node!.waitForService(NS, 'klutch-backend', { port: 'http' }), cp.node!.waitForService(NS, 'dex', { port: 'http' })]);
}, 3_600_000);

afterAll(async () => {
  for (const [k, v] of Object.entries(figures)) log(`figure: ${k}: ${v}`);
  await a8s?.stop().catch(() => undefined);
  await xpStarting?.catch(() => undefined);
  await xp?.stop().catch(() => undefined);
  fs.rmSync(a8sDir, { recursive: true, force: true });
  await forwarders.stop();
  await Promise.all([cp?.stop(), app?.stop()]);
  fs.rmSync(work, { recursive: true, force: true });
}, 180_000);

describe('pulumi up of the control plane, from the images it built, as pods', () => {
  it('built and pushed the runtime images and runs 2 backend pods and a Dex pod from the node registry', async () => {
    expect(upResult.summary.result).toBe('succeeded');
    const backendPods = await podsOf(NS, 'app.kubernetes.io/name=klutch-backend');
    expect(backendPods).toHaveLength(2);
    for (const p of backendPods) {
      const c = p.spec!['containers'][0];
      expect(c.image).toMatch(new RegExp(`^${cp.node!.registry.replace(/\./g, '\\.')}/klutch-kit/backend:[^@]+@sha256:[0-9a-f]{64}$`));
      expect(c.env).toContainEqual({ name: 'NODE_EXTRA_CA_CERTS', value: '/etc/klutch/issuer-ca/ca.crt' });
      expect(c.args).toContain(`--oidc-issuer-url=${issuer}`);
      expect(p.status!.conditions!.find((x) => x.type === 'Ready')?.status).toBe('True');
      expect(processOf(p.metadata.uid!, 'node')).toEqual({ uids: ['65532', '65532', '65532', '65532'], capEff: '0000000000000000' });
      figures[`memory backend pod ${p.metadata.name}`] = `${podMemoryMiB(p.metadata.uid!).toFixed(1)} MiB RSS`;
    }
    const [dex] = await podsOf(NS, 'app.kubernetes.io/name=dex');
    expect(dex!.spec!['containers'][0].image).toBe(dexImage);
    expect(dex!.spec!['nodeName']).toBe(cp.node!.name);
    expect(dex!.status!.conditions!.find((x) => x.type === 'Ready')?.status).toBe('True');
    // the image's non-root user and the construct's hardened security context hold in the running Dex
    expect(processOf(dex!.metadata.uid!, 'dex')).toEqual({ uids: ['65532', '65532', '65532', '65532'], capEff: '0000000000000000' });
    figures['memory Dex pod'] = `${podMemoryMiB(dex!.metadata.uid!).toFixed(1)} MiB RSS`;
  });

  it('Dex serves the issuer over TLS with the certificate of the test CA (discovery from the host, through the node IP)', async () => {
    const res = await fetchTrusting(caPem)(`${issuer}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { issuer: string; authorization_endpoint: string };
    expect(doc.issuer).toBe(issuer);
    expect(doc.authorization_endpoint).toBe(`${issuer}/auth`);
    // without the CA the certificate is refused: the TLS is Dex's own, not a pass-through of something else
    await expect(fetch(`${issuer}/.well-known/openid-configuration`)).rejects.toThrow();
  });
});

describe('Crossplane as pods on the control plane\u2019s node, its packages from pulumi up', () => {
  it('runs core, function-patch-and-transform and provider-kubernetes as pods from the harness\u2019s images, none as a host process', async () => {
    expect(xp!.runtime).toBe('pods');
    // the harness runs no Crossplane process on the host: only its registry forwarder
    const pids = xp!.pids();
    expect([pids.crossplane, pids['function-patch-and-transform'], pids['provider-kubernetes']]).toEqual([undefined, undefined, undefined]);
    for (const [component, comm, uid] of [
      ['crossplane', 'crossplane', '65532'],
      ['function-patch-and-transform', 'function', '2000'],
      ['provider-kubernetes', 'provider', '2000'],
    ] as const) {
      const [pod] = (await xp!.podsOf(component)) as unknown as Obj[];
      expect(pod).toBeDefined();
      expect(pod!.spec!['nodeName']).toBe(cp.node!.name);
      expect(pod!.status!.conditions!.find((x) => x.type === 'Ready')?.status).toBe('True');
      expect(pod!.spec!['containers'][0].image).toMatch(new RegExp(`^${xp!.registry.replace(/\./g, '\\.')}/`));
      // the component's process runs inside the pod's cgroup, as the pod's user
      expect(
        podProcesses(pod!.metadata.uid!)
          .filter((p) => p.comm === comm)
          .map((p) => p.uids[0]),
      ).toEqual([uid]);
      figures[`memory ${component} pod`] = `${podMemoryMiB(pod!.metadata.uid!).toFixed(1)} MiB RSS`;
    }
    // the Provider pulumi up applied, with the DeploymentRuntimeConfig the control plane ships and the harness's --poll
    const [provider] = (await xp!.podsOf('provider-kubernetes')) as unknown as Obj[];
    expect(provider!.spec!['serviceAccountName']).toBe('provider-kubernetes');
    expect(provider!.spec!['containers'][0].args).toEqual(['--poll=3s']);
  });
});

describe('kubectl bind through the backend pods, logged in at the Dex pod', () => {
  const appNs = uniqueName('shop');
  let clusterNs = '';
  let konnectorImage = '';
  const logins: DexBindResult[] = [];

  beforeAll(async () => {
    // the image the stack built and put into the app cluster's konnector Deployment: kubectl bind keeps it
    const installed = await appApi().request<Obj>('GET', '/apis/apps/v1/namespaces/klutch-bind/deployments/konnector');
    konnectorImage = installed.spec!['template'].spec.containers[0].image as string;
    // the namespace of this suite's claims: the konnector may bind it (--allow-namespace), so it exists first
    await appApi().request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: appNs } } });
    const tBind = Date.now();
    for (const [group, plural] of [
      [GROUP, PLURAL],
      ['anynines.com', 'postgresqlinstances'],
      ['anynines.com', 'servicebindings'],
    ] as const) {
      logins.push(await bindThroughDex({ app, backendUrl, caPem, group, plural, konnectorImage, allowNamespaces: [appNs] }));
    }
    figures['kubectl bind (login at Dex → binding)'] = secs(tBind);
  }, 300_000);

  it('logged in at the Dex pod through the backend pods\u2019 OIDC flow (the browser\u2019s path)', () => {
    expect(logins).toHaveLength(3);
    for (const l of logins) {
      expect(l.catalogueUrl).toMatch(new RegExp(`^${backendUrl}/resources\\?s=`));
      // Dex's mockCallback connector signs in "Kilgore Trout"
      expect(l.catalogueHtml).toContain('kilgore@kilgore.trout');
      const visited = l.visited.join('\n');
      expect(visited).toContain(`GET ${issuer}/auth?`);
      expect(visited).toContain(`GET ${backendUrl}/callback?code=`);
    }
  });

  it('bound the API: the consumer namespace on cp, the CRD and an APIServiceBinding in the app cluster', async () => {
    const bindings = await appApi().request<{ items: Obj[] }>('GET', '/apis/klutch.anynines.com/v1alpha1/namespaces/klutch-bind/apiservicebindings');
    expect(bindings.items.map((b) => b.metadata.name)).toEqual(
      expect.arrayContaining([`${PLURAL}.${GROUP}`, 'postgresqlinstances.anynines.com', 'servicebindings.anynines.com']),
    );
    const nss = await api().request<{ items: Obj[] }>('GET', '/api/v1/namespaces');
    clusterNs = nss.items.map((n) => n.metadata.name).find((n) => /^cluster-/.test(n))!;
    expect(clusterNs).toBeDefined();
  });

  describe('the konnector from the stack-built image, as a pod on the node, for the app cluster', () => {
    const M = (ns: string, name = '') => `/apis/${GROUP}/v1alpha1/namespaces/${ns}/${PLURAL}${name ? `/${name}` : ''}`;

    beforeAll(async () => {
      // The app cluster has no node: its konnector Deployment (what the stack and kubectl bind installed) goes to 0
      // replicas, and the same Deployment runs on cp's node with a kubeconfig for the app cluster.
      const tKonnector = Date.now();
      await runKonnectorOnNode(cp, app, forwarders, { namespace: 'klutch-bind' });
      figures['konnector Deployment applied → 1/1 Ready'] = secs(tKonnector);
      // A Ready konnector has yet to make the bound CRDs; what docs/bind.md tells a developer to run before the first
      // claim, as written (the cluster's kubectl, asynchronously: this process runs the forwarders the konnector uses).
      const kubectl = await ensureKubectl();
      const [, ...args] = /`(kubectl wait --for=condition=Ready apiservicebinding [^`]+)`/
        .exec(fs.readFileSync(path.join(process.cwd(), 'docs', 'bind.md'), 'utf8'))![1]!
        .split(/\s+/);
      await promisify(execFile)(kubectl, ['--kubeconfig', app.kubeconfigPath, ...args]);
      figures['konnector Deployment applied → bindings Ready (kubectl wait)'] = secs(tKonnector);
    }, 300_000);

    it('runs from the stack-built image as uid 65532 and is Ready', async () => {
      const [pod] = await podsOf('klutch-bind', 'app.kubernetes.io/name=konnector');
      expect(pod!.spec!['containers'][0].image).toBe(konnectorImage);
      expect(konnectorImage).toMatch(/\/klutch-kit\/konnector:[^@]+@sha256:[0-9a-f]{64}$/);
      expect(pod!.status!.conditions!.find((x) => x.type === 'Ready')?.status).toBe('True');
      expect(processOf(pod!.metadata.uid!, 'node')).toEqual({ uids: ['65532', '65532', '65532', '65532'], capEff: '0000000000000000' });
      figures['memory konnector pod'] = `${podMemoryMiB(pod!.metadata.uid!).toFixed(1)} MiB RSS`;
    });

    it('syncs a claim of the app cluster up to the control plane and its status back down', async () => {
      await appApi().request('POST', M(appNs), {
        body: { apiVersion: `${GROUP}/v1alpha1`, kind: 'KiwiDB', metadata: { name: 'orders', namespace: appNs }, spec: { tier: 'Dedicated' } },
      });
      const up = await eventually(
        'the claim on the control plane',
        async () => {
          const all = await api().request<{ items: Obj[] }>('GET', `/apis/${GROUP}/v1alpha1/${PLURAL}`);
          return all.items.find((o) => o.metadata.name === 'orders' && o.metadata.namespace!.startsWith(`${clusterNs}-`));
        },
        { timeoutMs: 90_000, intervalMs: 500 },
      );
      expect(up.spec!['tier']).toBe('Dedicated');
      await api().request('PATCH', `${M(up.metadata.namespace!, 'orders')}/status`, {
        body: { status: { phase: 'Ready' } },
        contentType: 'application/merge-patch+json',
      });
      await eventually(
        'status.phase Ready of the claim in the app cluster',
        async () => (await appApi().request<Obj>('GET', M(appNs, 'orders'))).status?.['phase'] === 'Ready',
        {
          timeoutMs: 90_000,
          intervalMs: 500,
        },
      );
    });

    it('provisions PostgreSQL through Crossplane and the a8s stand-in; the credentials Secret in the app cluster connects', async () => {
      const t = Date.now();
      const base = `/apis/anynines.com/v1/namespaces/${appNs}`;
      await appApi().request('POST', `${base}/postgresqlinstances`, {
        body: {
          apiVersion: 'anynines.com/v1',
          kind: 'PostgresqlInstance',
          metadata: { name: 'orders-db', namespace: appNs },
          spec: { service: 'a9s-postgresql14', plan: 'postgresql-single-nano', expose: 'Internal', compositionRef: { name: 'a8s-postgresql' } },
        },
      });
      await appApi().request('POST', `${base}/servicebindings`, {
        body: {
          apiVersion: 'anynines.com/v1',
          kind: 'ServiceBinding',
          metadata: { name: 'orders-db-binding', namespace: appNs },
          spec: { instanceRef: 'orders-db', serviceInstanceType: 'postgresql', compositionRef: { name: 'a8s-servicebinding' } },
        },
      });
      const secret = await eventually(
        'a credentials Secret in the app cluster',
        async () => {
          const list = await appApi().request<{ items: Array<Obj & { data?: Record<string, string> }> }>('GET', `/api/v1/namespaces/${appNs}/secrets`);
          return list.items.find((x) => x.data?.['password'] && x.data['instance_service']);
        },
        { timeoutMs: 240_000, intervalMs: 1000 },
      );
      const d = (k: string) => Buffer.from(secret.data?.[k] ?? '', 'base64').toString('utf8');
      await eventually(
        'a PostgreSQL connection with the credentials from the app cluster',
        async () => {
          const c = new pg.Client({ host: d('instance_service'), port: 5432, user: d('username'), password: d('password'), database: d('database') });
          c.on('error', () => undefined);
          await c.connect();
          try {
            return (await c.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one === 1;
          } finally {
            await c.end();
          }
        },
        { timeoutMs: 60_000, intervalMs: 1000 },
      );
      figures['claims → credentials Secret in the app cluster → PostgreSQL connection'] = secs(t);
    });
  });
});
