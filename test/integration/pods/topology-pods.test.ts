/**
 * The topology as pods on the harness's real node (issue 22, item 3), driven by a real `pulumi up` of the stack
 * program (stacks/main.ts, the Go-built Pulumi CLI and kubernetes provider, runtime/realinfra/pulumi-build.ts):
 *
 *  1. `pulumi up` with `images.registry` set to the node's registry (and `images.base: local`): the stack's
 *     RuntimeImages builds the backend and konnector images with `klutch-kit image build` and pushes them; the
 *     backend (2 replicas) and Dex (our Dex construct, the image runtime/image/dex.ts writes from the binary
 *     tools/dex builds) run from those images as pods; both become Ready.
 *  2. Login through the Dex pod: `kubectl bind` (runtime/kubectl-bind, in-process) against the backend's Service
 *     prints the login URL; a fetch "browser" follows it: backend /authorize → Dex (mockCallback connector, no
 *     approval screen) → backend /callback (the backend pods exchange the code with Dex over TLS) → the
 *     catalogue page → Bind → kubectl bind's loopback callback; kubectl bind then stores the kubeconfig, installs
 *     the konnector objects and creates the APIServiceBinding; the backend pods answer the export request.
 *  3. The konnector from the stack-built image as a pod, syncing a claim of the app cluster to the control plane
 *     and its status back.
 *  4. The data path: the stack also installs the catalogue as a Configuration package (`klutch-kit:catalogue`),
 *     which real Crossplane installs; a PostgresqlInstance and a ServiceBinding created in the app cluster go
 *     through the konnector pod and the backend's binding to Crossplane and the sandbox's a8s operator stand-in
 *     (sandbox/a8s-operator: a real PostgreSQL server), and the credentials Secret that comes down to the app
 *     cluster opens a PostgreSQL connection.
 *
 * Where things run, and the stand-ins (each for something this machine cannot have):
 *  - The control plane `cp` has the node (one per host: the node takes a host-wide lock). The app cluster has
 *    none, so the stack runs with `skipAwait` and this test waits for the pods itself; the konnector the stack
 *    and kubectl bind install there stays at 0 replicas, and the same konnector objects (image, ServiceAccount,
 *    args) run on cp's node with `--kubeconfig` for the app cluster (a token of the app cluster's konnector
 *    ServiceAccount), reaching its API server through a TCP forwarder of this process on the node IP.
 *  - Dex's issuer is `https://10.250.0.1:<port>/dex`: a TCP forwarder of this process on the node IP (only the
 *    host and its pods reach it) to the Dex Service, standing in for the load balancer address a Dex Service
 *    gets in a cloud. Dex serves the TLS itself (`klutch-kit:dex.tlsSecretName`, a certificate from a CA made
 *    here) and the backend trusts the CA (`klutch-kit:dex.caConfigMap`). The backend URL is a loopback forwarder
 *    to the backend Service (the backend accepts a plain-http URL only on loopback): the browser and kubectl
 *    bind run on the host.
 *  - Crossplane core, function-patch-and-transform and provider-kubernetes run as the harness's host processes
 *    (startCrossplane, `install: false`: the packages come from pulumi up), not as pods; the a8s operator is the
 *    sandbox's stand-in. A plain CRD with an APIServiceExportTemplate is bound too, for the status round trip.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { KubernetesObject } from '@kubernetes/client-node';
import { LocalWorkspace, PulumiCommand, Stack } from '@pulumi/pulumi/automation/index.js';
import { BINDER_EXPORTS_AGGREGATION_LABEL } from '../../../constructs/runtime/_defaults.js';
import { buildDexImage, DEX_IMAGE_NAME } from '../../../runtime/image/dex.js';
import { pushLayoutImage } from '../../../runtime/image/registry.js';
import { KubeClient } from '../../../runtime/core/index.js';
import { bind } from '../../../runtime/kubectl-bind/bind.js';
import { applyManifests, waitForCrdsEstablished } from '../../../runtime/realinfra/apply.js';
import { DEX_SOURCE, ensureDexBinary } from '../../../runtime/realinfra/build.js';
import { clientOf } from '../../../runtime/realinfra/client.js';
import { type RealCluster, startCluster } from '../../../runtime/realinfra/cluster.js';
import { ensurePulumiBinaries, pulumiEnv } from '../../../runtime/realinfra/pulumi-build.js';
import { generateStackSecrets } from '../../../stacks/secrets.js';
import { FetchBrowser } from '../../support/oidc-provider.js';
import pg from 'pg';
import { startCrossplane, type CrossplaneHarness } from '../../../runtime/realinfra/index.js';
import { awaitCatalogue, pushCatalogue, synthSandboxControlPlane } from '../../../sandbox/catalogue.js';
import { SandboxA8sOperator } from '../../../sandbox/a8s-operator/index.js';
import { eventually, uniqueName } from '../../realinfra/util.js';
import { makeTls, podMemoryMiB, processOf } from './_support.js';

jest.setTimeout(600_000);

const ROOT = path.join(fileURLToPath(import.meta.url), '..', '..', '..', '..');
const t0 = Date.now();
const log = (line: string) => process.stderr.write(`  [topology-pods +${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}\n`);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-topology-pods-'));
const figures: Record<string, string> = {};
const secs = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

const NS = 'klutch-system';
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
const servers: net.Server[] = [];
const sockets = new Set<net.Socket>();
let upResult: Awaited<ReturnType<Stack['up']>>;
let xp: CrossplaneHarness | undefined;
let a8s: SandboxA8sOperator | undefined;
const a8sDir = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-topology-pods-a8s-'));
fs.chmodSync(a8sDir, 0o777);

const api = () => clientOf(cp.kubeConfig);
const appApi = () => clientOf(app.kubeConfig);

/** A TCP forwarder on `host` to wherever `target()` says at connection time (a Service's ClusterIP, known after `pulumi up`). */
async function forwarder(host: string, target: () => Promise<{ host: string; port: number }>): Promise<number> {
  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.pause();
    target().then(
      (t) => {
        const up = net.connect(t.port, t.host);
        sockets.add(up);
        up.on('close', () => sockets.delete(up));
        sock.pipe(up).pipe(sock);
        sock.resume();
        sock.on('error', () => up.destroy());
        up.on('error', () => sock.destroy());
      },
      () => sock.destroy(),
    );
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, host, r));
  return (server.address() as net.AddressInfo).port;
}

/** The ClusterIP and port `name` of a Service on cp. */
async function serviceAddress(ns: string, name: string, port: string): Promise<{ host: string; port: number }> {
  const svc = await api().request<Obj>('GET', `/api/v1/namespaces/${ns}/services/${name}`);
  const p = (svc.spec!['ports'] as Array<{ name: string; port: number }>).find((x) => x.name === port);
  if (!p) throw new Error(`Service ${ns}/${name} has no port ${port}`);
  return { host: svc.spec!['clusterIP'] as string, port: p.port };
}

/** fetch, except that https requests trust `ca` (the test CA of Dex's certificate) — the browser's view of Dex. */
function fetchTrusting(ca: string): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : input);
    if (url.protocol !== 'https:') return fetch(input, init);
    return new Promise<Response>((resolve, reject) => {
      const req = https.request(url, { method: init?.method ?? 'GET', headers: init?.headers as Record<string, string>, ca, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) for (const x of Array.isArray(v) ? v : v === undefined ? [] : [v]) headers.append(k, x);
          resolve(new Response(res.statusCode === 204 || res.statusCode === 304 ? null : Buffer.concat(chunks), { status: res.statusCode ?? 0, headers }));
        });
      });
      req.on('error', reject);
      req.end(init?.body as string | undefined);
    });
  }) as typeof fetch;
}

async function deploymentReady(c: () => ReturnType<typeof clientOf>, ns: string, name: string, replicas: number, timeoutMs = 240_000): Promise<Obj> {
  return eventually(
    `Deployment ${ns}/${name} with ${replicas} ready replicas`,
    async () => {
      const d = await c().request<Obj>('GET', `/apis/apps/v1/namespaces/${ns}/deployments/${name}`);
      const s = d.status ?? {};
      const ok =
        s['observedGeneration'] === d.metadata.generation &&
        s['readyReplicas'] === replicas &&
        s['updatedReplicas'] === replicas &&
        s['availableReplicas'] === replicas &&
        s['replicas'] === replicas;
      return ok ? d : undefined;
    },
    { timeoutMs, intervalMs: 500 },
  );
}

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
    startCluster({ name: uniqueName('topo-cp'), nodes: 1, log }).then((c) => ((figures['control plane + node start'] = secs(t0)), c)),
    startCluster({ name: uniqueName('topo-app'), log }),
  ]);
  cp = c1;
  app = c2;
  const node = cp.node!;

  // Dex's image from the harness's binary, pushed to the node's registry.
  const tImage = Date.now();
  const layout = path.join(work, 'dex-layout');
  buildDexImage(layout, { binary: dexBinary, version: DEX_SOURCE.version });
  dexImage = (await pushLayoutImage(layout, DEX_IMAGE_NAME, `${node.registry}/klutch-kit/dex:${DEX_SOURCE.version}`)).pinned;
  figures['dex image build + push'] = secs(tImage);
  figures['dex binary'] = `${(fs.statSync(dexBinary).size / 1048576).toFixed(1)} MiB`;

  // Dex's TLS and the CA the backend trusts, in the namespace the stack deploys to (it adopts the namespace).
  const tls = makeTls(path.join(work, 'tls'), node.ip, 'klutch-kit topology pods test CA');
  caPem = tls.caPem;
  await applyManifests(cp.kubeConfig, [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'dex-tls', namespace: NS },
      type: 'kubernetes.io/tls',
      stringData: { 'tls.crt': tls.cert, 'tls.key': tls.key },
    } as KubernetesObject,
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dex-ca', namespace: NS }, data: { 'ca.crt': tls.caPem } } as KubernetesObject,
    ...providerObjects(),
  ]);
  await waitForCrdsEstablished(cp.kubeConfig, [`${PLURAL}.${GROUP}`]);

  // Crossplane (host processes of the harness), the catalogue package in its registry, the sandbox's a8s operator
  // stand-in (real PostgreSQL servers); the packages are pulumi up's (klutch-kit:catalogue).
  const tXp = Date.now();
  xp = await startCrossplane(cp, { version: '2.3', providerPollInterval: '3s', install: false });
  const pushed = await pushCatalogue(cp, xp);
  a8s = new SandboxA8sOperator({ client: new KubeClient(cp.kubeConfig), dataDir: path.join(a8sDir, 'data') });
  await a8s.start();
  // the binder roles the control plane gives its exports (the backend pods hand out only what these grant)
  const roles = synthSandboxControlPlane(pushed.packageRef)
    .cluster.files.map((f) => f.object as KubernetesObject)
    .filter((o) => o.kind === 'ClusterRole' && o.metadata?.labels?.[BINDER_EXPORTS_AGGREGATION_LABEL] === 'true');
  await applyManifests(cp.kubeConfig, roles);
  figures['Crossplane + catalogue package + a8s stand-in'] = secs(tXp);

  const dexPort = await forwarder(node.ip, () => serviceAddress(NS, 'dex', 'http'));
  issuer = `https://${node.ip}:${dexPort}/dex`;
  const backendPort = await forwarder('127.0.0.1', () => serviceAddress(NS, 'klutch-backend', 'http'));
  backendUrl = `http://127.0.0.1:${backendPort}`;

  // The stack: a project folder outside the tree whose program is stacks/main.ts (as test/integration/stacks does).
  const projectDir = path.join(work, 'project');
  fs.mkdirSync(projectDir);
  const tsx = path.join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs');
  fs.writeFileSync(
    path.join(projectDir, 'Pulumi.yaml'),
    fs
      .readFileSync(path.join(ROOT, 'Pulumi.yaml'), 'utf8')
      .replace(/^main: .*$/m, `main: ${path.relative(projectDir, path.join(ROOT, 'stacks', 'main.ts'))}`)
      .replace(/^(\s*nodeargs:) .*$/m, `$1 --import ${tsx} --no-warnings`),
  );
  const env = pulumiEnv(bins, { home: path.join(work, 'home'), backendDir: path.join(work, 'state'), passphrase: 'klutch-kit topology pods' });
  fs.mkdirSync(path.join(work, 'home'));
  fs.mkdirSync(path.join(work, 'state'));
  const ws = await LocalWorkspace.create({
    workDir: projectDir,
    pulumiHome: env['PULUMI_HOME']!,
    envVars: env,
    secretsProvider: 'passphrase',
    pulumiCommand: await PulumiCommand.get({ root: bins.pulumiRoot }),
  });
  stack = await Stack.create('pods', ws);
  const secrets = generateStackSecrets();
  const kc = (c: RealCluster) => fs.readFileSync(c.kubeconfigPath, 'utf8');
  await stack.setAllConfig({
    'klutch-kit:controlPlane': { value: JSON.stringify({ name: 'cp', access: { kind: 'kubeconfig' } }) },
    'klutch-kit:appClusters': { value: JSON.stringify([{ name: 'app', access: { kind: 'kubeconfig' } }]) },
    'klutch-kit:backend': { value: JSON.stringify({ url: backendUrl, prettyName: 'Klutch on pods', replicas: 2 }) },
    'klutch-kit:dex': { value: JSON.stringify({ issuerUrl: issuer, tlsSecretName: 'dex-tls', caConfigMap: 'dex-ca' }) },
    'klutch-kit:dexConnectors': { value: JSON.stringify([{ type: 'mockCallback', id: 'mock', name: 'Mock' }]) },
    'klutch-kit:images': { value: JSON.stringify({ registry: `${node.registry}/klutch-kit`, base: 'local', dex: dexImage }) },
    // the app cluster has no node (one per host): its konnector cannot become Ready there; this test waits itself
    'klutch-kit:skipAwait': { value: 'true' },
    'klutch-kit:manifests': { value: 'runtime' },
    'klutch-kit:catalogue': { value: JSON.stringify({ install: 'ConfigurationPackage', package: pushed.packageRef }) },
    'klutch-kit:kubeconfig-cp': { value: kc(cp), secret: true },
    'klutch-kit:kubeconfig-app': { value: kc(app), secret: true },
    'klutch-kit:oidcClientSecret': { value: secrets['oidcClientSecret']!, secret: true },
    'klutch-kit:cookieSigningKey': { value: secrets['cookieSigningKey']!, secret: true },
    'klutch-kit:cookieEncryptionKey': { value: secrets['cookieEncryptionKey']!, secret: true },
  });
  const out = fs.openSync(path.join(work, 'pulumi-up.log'), 'a');
  const tUp = Date.now();
  try {
    upResult = await stack.up({ color: 'never', onOutput: (s) => fs.writeSync(out, s) });
  } catch (e) {
    throw new Error(`pulumi up failed: ${(e as Error).message}\n${fs.readFileSync(path.join(work, 'pulumi-up.log'), 'utf8').slice(-4000)}`, { cause: e });
  } finally {
    fs.closeSync(out);
  }
  figures['pulumi up (image build + push + deploy)'] = secs(tUp);
  const tCat = Date.now();
  await awaitCatalogue(cp, xp, pushed);
  figures['pulumi up done → catalogue installed by Crossplane'] = secs(tCat);
  // the export template of the API (its CRD came with the stack's binding CRDs)
  await applyManifests(cp.kubeConfig, [
    {
      apiVersion: 'example-backend.klutch.anynines.com/v1alpha1',
      kind: 'APIServiceExportTemplate',
      metadata: { name: PLURAL, namespace: 'crossplane-system' },
      spec: { APIServiceSelector: { group: GROUP, resource: PLURAL }, permissionClaims: [] },
    } as KubernetesObject,
  ]);
  const tReady = Date.now();
  await Promise.all([deploymentReady(api, NS, 'klutch-backend', 2), deploymentReady(api, NS, 'dex', 1)]);
  figures['pulumi up done → backend 2/2 + Dex 1/1 Ready'] = secs(tReady);
}, 3_600_000);

afterAll(async () => {
  for (const [k, v] of Object.entries(figures)) log(`figure: ${k}: ${v}`);
  await a8s?.stop().catch(() => undefined);
  await xp?.stop().catch(() => undefined);
  fs.rmSync(a8sDir, { recursive: true, force: true });
  for (const s of sockets) s.destroy();
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
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

/** kubectl bind (in-process) of `plural.group`, its login driven by a fetch browser through Dex. */
async function bindVia(group: string, plural: string, image: string): Promise<void> {
  const consumer = new KubeClient(app.kubeConfig);
  const err = new PassThrough();
  let said = '';
  const loginUrl = new Promise<string>((resolve) => {
    err.on('data', (d) => {
      said += String(d);
      const m = /visit in your browser:\s+(\S+)/.exec(said);
      if (m) resolve(m[1]!);
    });
  });
  const bound = bind({
    url: `${backendUrl}/export`,
    consumer,
    dryRun: false,
    open: false,
    yes: true,
    skipKonnector: false,
    konnectorImage: image,
    output: 'yaml',
    timeoutMs: 120_000,
    io: { out: new PassThrough(), err, in: new PassThrough() },
  });
  try {
    const browser = new FetchBrowser(fetchTrusting(caPem));
    const page = await browser.follow(await Promise.race([loginUrl, bound.then(() => Promise.reject(new Error(`bind ended early:\n${said}`)))]));
    const html = await page.res!.text();
    expect(page.url).toMatch(new RegExp(`^${backendUrl}/resources\\?s=`));
    // Dex's mockCallback connector signs in "Kilgore Trout"
    expect(html).toContain('kilgore@kilgore.trout');
    const visited = browser.visited.join('\n');
    expect(visited).toContain(`GET ${issuer}/auth?`);
    expect(visited).toContain(`GET ${backendUrl}/callback?code=`);
    const form = new RegExp(
      `data-resource="${plural}\\.${group.replace(/\./g, '\\.')}"[^>]*>[\\s\\S]*?<form method="post" action="/bind">([\\s\\S]*?)</form>`,
    ).exec(html);
    if (!form) throw new Error(`no Bind form for ${plural}.${group} on the catalogue page:\n${html.slice(0, 2000)}`);
    const fields: Record<string, string> = {};
    for (const m of form[1]!.matchAll(/name="([^"]+)" value="([^"]*)"/g)) fields[m[1]!] = m[2]!.replace(/&amp;/g, '&');
    // the 303 goes to kubectl bind's loopback callback server; following it hands the response over
    await browser.follow(`${backendUrl}/bind`, { method: 'POST', form: fields });
    await bound;
  } catch (e) {
    throw new Error(`${(e as Error).message}\n--- kubectl bind said ---\n${said}`, { cause: e });
  } finally {
    consumer.close();
  }
}

describe('kubectl bind through the backend pods, logged in at the Dex pod', () => {
  const appNs = uniqueName('shop');
  let clusterNs = '';
  let konnectorImage = '';

  beforeAll(async () => {
    // the image the stack built and put into the app cluster's konnector Deployment: kubectl bind keeps it
    const installed = await appApi().request<Obj>('GET', '/apis/apps/v1/namespaces/klutch-bind/deployments/konnector');
    konnectorImage = installed.spec!['template'].spec.containers[0].image as string;
    const tBind = Date.now();
    for (const [group, plural] of [
      [GROUP, PLURAL],
      ['anynines.com', 'postgresqlinstances'],
      ['anynines.com', 'servicebindings'],
    ] as const) {
      await bindVia(group, plural, konnectorImage);
    }
    figures['kubectl bind (login at Dex → binding)'] = secs(tBind);
  }, 300_000);

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
      await appApi().request('PATCH', '/apis/apps/v1/namespaces/klutch-bind/deployments/konnector', {
        body: { spec: { replicas: 0 } },
        contentType: 'application/merge-patch+json',
      });
      const installed = await appApi().request<Obj>('GET', '/apis/apps/v1/namespaces/klutch-bind/deployments/konnector');
      const appPort = Number(new URL(app.server).port);
      const fwd = await forwarder(cp.node!.ip, async () => ({ host: '127.0.0.1', port: appPort }));
      const token = await appApi().request<Obj>('POST', '/api/v1/namespaces/klutch-bind/serviceaccounts/konnector/token', {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 7200 } },
      });
      const kubeconfig = [
        'apiVersion: v1',
        'kind: Config',
        `clusters:\n- name: app\n  cluster:\n    server: https://${cp.node!.ip}:${fwd}\n    tls-server-name: kubernetes\n    certificate-authority-data: ${Buffer.from(app.caPem).toString('base64')}`,
        `users:\n- name: konnector\n  user:\n    token: ${token.status!['token'] as string}`,
        'contexts:\n- name: app\n  context:\n    cluster: app\n    user: konnector',
        'current-context: app',
        '',
      ].join('\n');
      const tpl = installed.spec!['template'] as { spec: { containers: Array<Record<string, any>>; volumes?: unknown[] } };
      const container = tpl.spec.containers[0]!;
      container['args'] = [...(container['args'] as string[]), '--kubeconfig=/etc/klutch/app/kubeconfig'];
      container['volumeMounts'] = [
        ...((container['volumeMounts'] as unknown[]) ?? []),
        { name: 'app-kubeconfig', mountPath: '/etc/klutch/app', readOnly: true },
      ];
      tpl.spec.volumes = [...(tpl.spec.volumes ?? []), { name: 'app-kubeconfig', secret: { secretName: 'app-kubeconfig' } }];
      const tKonnector = Date.now();
      await applyManifests(cp.kubeConfig, [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'klutch-bind' } },
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'konnector', namespace: 'klutch-bind' } },
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'app-kubeconfig', namespace: 'klutch-bind' }, stringData: { kubeconfig } } as KubernetesObject,
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'konnector', namespace: 'klutch-bind', labels: installed.metadata.labels ?? {} },
          spec: { replicas: 1, selector: installed.spec!['selector'], template: tpl },
        } as KubernetesObject,
      ]);
      await deploymentReady(api, 'klutch-bind', 'konnector', 1);
      figures['konnector Deployment applied → 1/1 Ready'] = secs(tKonnector);
      await appApi().request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: appNs } } });
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
