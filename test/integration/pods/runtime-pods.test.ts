/**
 * klutch-kit's runtime as pods on the harness's real node (issue 22, items 3 and 4): the images that
 * `klutch-kit image build --base local` writes (amd64 only: the node's platform), pushed to the node's
 * registry, run as the Deployments our constructs render.
 *
 *  - The bind backend: the BindBackend construct's objects (2 replicas, own ServiceAccount and RBAC,
 *    probes, hardened security context) applied unchanged except for the image and one env var (below);
 *    pods Ready; its ClusterIP Service answers /healthz and a bearer-token /bind from the host.
 *  - The security context holds in the running process (read from /proc of the container's process:
 *    uid 65532, no effective capabilities, no_new_privs, seccomp filter, read-only root mount).
 *  - RBAC of the backend's ServiceAccount: SubjectAccessReviews for a granted and a denied request.
 *  - Deleting a backend pod loses nothing: the Deployment replaces it and an earlier binding stays.
 *  - Figures (image build, time to Ready, pod memory from the pod cgroups) go to stderr for the docs.
 *
 * The OIDC issuer: the backend's /readyz waits for OIDC discovery (there is no flag that defers it),
 * and it accepts plain http only for a loopback issuer, which a pod cannot reach on the host. So the
 * repo's test OIDC provider runs in this process with TLS on the node IP (10.250.0.1, the CNI bridge's
 * host address: only the host and its pods reach it), with a certificate from a CA made here; the pods
 * trust that CA through NODE_EXTRA_CA_CERTS from a ConfigMap, added to the rendered Deployment with a
 * cdk8s JSON patch (the way a user adds a private CA).
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, Chart, JsonPatch } from 'cdk8s';
import type { KubernetesObject } from '@kubernetes/client-node';
import { BindBackend } from '../../../constructs/runtime/bind-backend.js';
import { bindingCrds } from '../../../contract/api/index.js';
import { responseKubeconfig } from '../../../contract/wire.js';
import { buildRuntimeImages, packPackage, type ImageBuildResult } from '../../../runtime/image/build.js';
import { pushLayoutImage } from '../../../runtime/image/registry.js';
import { applyManifests, waitForCrdsEstablished } from '../../../runtime/realinfra/apply.js';
import { clientOf } from '../../../runtime/realinfra/client.js';
import { type RealCluster, startCluster } from '../../../runtime/realinfra/cluster.js';
import { parseKubeconfig } from '../../../runtime/core/index.js';
import { OidcTestProvider } from '../../support/oidc-provider.js';
import { bindApiService } from '../../../runtime/kubectl-bind/apiservice.js';
import { KubeClient } from '../../../runtime/core/index.js';
import { PassThrough } from 'node:stream';
import { eventually, uniqueName } from '../../realinfra/util.js';
import { makeTls, podMemoryMiB, podPids } from './_support.js';

jest.setTimeout(300_000);

const ROOT = path.join(fileURLToPath(import.meta.url), '..', '..', '..', '..');
const log = (line: string) => process.stderr.write(`  ${line}\n`);
const work = fs.mkdtempSync(path.join(tmpdir(), 'klutch-pods-it-'));

const BACKEND_NS = 'klutch-system';
const BACKEND = 'klutch-backend';
const CLIENT_ID = 'klutch-backend';
const CLIENT_SECRET = 'backend-secret-' + randomBytes(6).toString('hex');

interface Obj {
  metadata: { name: string; namespace?: string; uid?: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec?: Record<string, any>;
  status?: Record<string, any> & { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> };
}

let cluster: RealCluster;
let op: OidcTestProvider;
let images: ImageBuildResult;
let backendImage: string;
let konnectorImage: string;
let backendServiceIp: string;
let issuerCaPem: string;
const figures: Record<string, string> = {};

const api = () => clientOf(cluster.kubeConfig);

function httpGet(url: string, headers: Record<string, string> = {}, method = 'GET', body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, timeout: 10_000, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('timeout', () => req.destroy(new Error(`timeout: ${method} ${url}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** A data-service CRD shaped like Klutch's example (test/integration/backend/_fixture.ts). */
const dataServiceCrd = (group: string, plural: string, kind: string) =>
  ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase() },
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
                spec: { type: 'object', properties: { tier: { type: 'string', enum: ['Dedicated', 'Shared'], default: 'Shared' } } },
                status: { type: 'object', properties: { phase: { type: 'string' } } },
              },
            },
          },
          subresources: { status: {} },
        },
      ],
    },
  }) as KubernetesObject;

const exportTemplate = (group: string, plural: string) =>
  ({
    apiVersion: 'example-backend.klutch.anynines.com/v1alpha1',
    kind: 'APIServiceExportTemplate',
    metadata: { name: plural, namespace: 'crossplane-system' },
    spec: { APIServiceSelector: { group, resource: plural }, permissionClaims: [] },
  }) as KubernetesObject;

/** What a provider needs before its backend: the binding CRDs, a data service and its template. */
async function prepareProvider(c: RealCluster, group: string, plural: string, kind: string): Promise<void> {
  const crds = bindingCrds() as unknown as KubernetesObject[];
  await applyManifests(c.kubeConfig, [
    ...crds,
    dataServiceCrd(group, plural, kind),
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'crossplane-system' } },
  ]);
  await waitForCrdsEstablished(c.kubeConfig, [...crds.map((x) => x.metadata!.name!), `${plural}.${group}`]);
  await applyManifests(c.kubeConfig, [exportTemplate(group, plural)]);
}

/** Waits until the Deployment has `replicas` ready, updated, available replicas and no others. */
async function deploymentReady(ns: string, name: string, replicas: number, timeoutMs = 180_000): Promise<Obj> {
  return eventually(
    `Deployment ${ns}/${name} with ${replicas} ready replicas`,
    async () => {
      const d = await api().request<Obj>('GET', `/apis/apps/v1/namespaces/${ns}/deployments/${name}`);
      const s = d.status ?? {};
      const ok =
        s['observedGeneration'] === (d.metadata as { generation?: number }).generation &&
        s['readyReplicas'] === replicas &&
        s['updatedReplicas'] === replicas &&
        s['availableReplicas'] === replicas &&
        s['replicas'] === replicas &&
        s.conditions?.some((c) => c.type === 'Available' && c.status === 'True');
      return ok ? d : undefined;
    },
    { timeoutMs, intervalMs: 500 },
  );
}

async function podsOf(ns: string, selector: string): Promise<Obj[]> {
  const list = await api().request<{ items: Obj[] }>('GET', `/api/v1/namespaces/${ns}/pods`, { query: { labelSelector: selector } });
  return list.items.filter((p) => !p.metadata.deletionTimestamp);
}

/** The first container's memory request in MiB (the constructs write Mi or Gi). */
function memoryRequestMiB(pod: Obj): number {
  const q = String(pod.spec!['containers'][0].resources?.requests?.memory ?? '');
  const m = /^(\d+)(Mi|Gi)$/.exec(q);
  if (!m) throw new Error(`pod ${pod.metadata.name}: memory request "${q}" is not in Mi or Gi`);
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
}

async function canI(user: string, attrs: Record<string, string>): Promise<boolean> {
  const r = await api().request<Obj>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user, groups: ['system:serviceaccounts', `system:serviceaccounts:${user.split(':')[2]}`, 'system:authenticated'], resourceAttributes: attrs },
    },
  });
  return r.status!['allowed'] === true;
}

/** POST /bind through a backend's Service with a bearer token of the test issuer; the consumer's kubeconfig. */
async function bindViaService(
  clusterID: string,
  serviceIp = backendServiceIp,
  group = 'kiwi.example',
  resource = 'kiwidbs',
  sub = 'pods-test-user',
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const tok = await op.signAsIssuer({ iss: op.issuer, sub, aud: CLIENT_ID, iat: now, exp: now + 300 });
  const res = await httpGet(
    `http://${serviceIp}/bind`,
    { Authorization: `Bearer ${tok}`, 'Content-Type': 'application/json' },
    'POST',
    JSON.stringify({ group, resource, clusterID }),
  );
  if (res.status !== 200) throw new Error(`/bind answered ${res.status}: ${res.body.slice(0, 500)}`);
  return responseKubeconfig(JSON.parse(res.body) as never);
}

interface BackendShape {
  readonly namespace: string;
  readonly replicas: number;
  readonly exported: { group: string; resource: string };
  readonly extraArgs?: string[];
  /** Secret volumes to mount: name → mount path. */
  readonly secretMounts?: Record<string, string>;
}

/** The BindBackend construct's objects, pointed at the harness registry and the test issuer's CA. */
function backendManifests(image: string, issuerUrl: string, shape: BackendShape): KubernetesObject[] {
  const app = new App({ outdir: path.join(work, 'cdk8s.out') });
  const chart = new Chart(app, 'backend');
  const backend = new BindBackend(chart, 'Backend', {
    image,
    namespace: shape.namespace,
    replicas: shape.replicas,
    oidc: {
      issuerUrl,
      clientId: CLIENT_ID,
      clientSecret: { name: 'backend-oidc', key: 'client-secret' },
      callbackUrl: `http://${BACKEND}.${shape.namespace}.svc/callback`,
    },
    cookies: { signingKey: { name: 'backend-cookies', key: 'signing-key' } },
    exportedApis: [shape.exported],
    ...(shape.extraArgs ? { extraArgs: shape.extraArgs } : {}),
  });
  const c = '/spec/template/spec/containers/0';
  backend.deployment.addJsonPatch(
    JsonPatch.add(`${c}/env/-`, { name: 'NODE_EXTRA_CA_CERTS', value: '/etc/klutch/issuer-ca/ca.crt' }),
    JsonPatch.add(`${c}/volumeMounts/-`, { name: 'issuer-ca', mountPath: '/etc/klutch/issuer-ca', readOnly: true }),
    JsonPatch.add('/spec/template/spec/volumes/-', { name: 'issuer-ca', configMap: { name: 'issuer-ca' } }),
  );
  for (const [secret, mountPath] of Object.entries(shape.secretMounts ?? {})) {
    backend.deployment.addJsonPatch(
      JsonPatch.add(`${c}/volumeMounts/-`, { name: secret, mountPath, readOnly: true }),
      JsonPatch.add('/spec/template/spec/volumes/-', { name: secret, secret: { secretName: secret } }),
    );
  }
  return chart.toJson() as KubernetesObject[];
}

/** The Secrets and ConfigMap a backend's Deployment references (never in the construct's output). */
function backendInputs(ns: string, caPem: string): KubernetesObject[] {
  return [
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'backend-oidc', namespace: ns }, stringData: { 'client-secret': CLIENT_SECRET } },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'backend-cookies', namespace: ns },
      stringData: { 'signing-key': randomBytes(32).toString('base64') },
    },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'issuer-ca', namespace: ns }, data: { 'ca.crt': caPem } },
  ] as unknown as KubernetesObject[];
}

beforeAll(async () => {
  // The node and the image build run side by side; both are needed before anything else.
  const t0 = Date.now();
  const built = (async () => {
    const tarball = await packPackage(ROOT, work, log);
    const r = await buildRuntimeImages({
      output: path.join(work, 'layout'),
      packageTarball: tarball,
      base: 'local',
      packageRoot: ROOT,
      platforms: [{ os: 'linux', architecture: 'amd64' }],
      log,
    });
    figures['image build (pack + amd64 backend and konnector, local base)'] = `${((Date.now() - t0) / 1000).toFixed(1)} s`;
    return r;
  })();
  const started = startCluster({ name: uniqueName('pods'), nodes: 1, log }).then((c) => {
    figures['cluster + node start'] = `${((Date.now() - t0) / 1000).toFixed(1)} s`;
    return c;
  });
  const [b, c] = await Promise.allSettled([built, started]);
  if (c.status === 'fulfilled') cluster = c.value;
  if (b.status === 'rejected') throw b.reason;
  if (c.status === 'rejected') throw c.reason;
  images = b.value;
  const registry = cluster.node!.registry;
  backendImage = (await pushLayoutImage(images.layout, 'backend', `${registry}/klutch-kit/backend:${images.version}`)).pinned;
  konnectorImage = (await pushLayoutImage(images.layout, 'konnector', `${registry}/klutch-kit/konnector:${images.version}`)).pinned;

  // The issuer on the node IP, with TLS.
  const tls = makeTls(path.join(work, 'issuer-tls'), cluster.node!.ip);
  op = await OidcTestProvider.listen([], { host: cluster.node!.ip, tls: { key: tls.key, cert: tls.cert } });
  op.start([{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [`http://${BACKEND}.${BACKEND_NS}.svc/callback`] }]);

  await prepareProvider(cluster, 'kiwi.example', 'kiwidbs', 'KiwiDB');

  // The backend: Secrets by reference, the issuer's CA, then the construct's objects.
  issuerCaPem = tls.caPem;
  const manifests = backendManifests(backendImage, op.issuer, { namespace: BACKEND_NS, replicas: 2, exported: { group: 'kiwi.example', resource: 'kiwidbs' } });
  const tReady = Date.now();
  await applyManifests(cluster.kubeConfig, [
    ...manifests.filter((m) => m.kind === 'Namespace'),
    ...backendInputs(BACKEND_NS, tls.caPem),
    ...manifests.filter((m) => m.kind !== 'Namespace'),
  ]);
  await deploymentReady(BACKEND_NS, BACKEND, 2);
  figures['backend Deployment applied → 2/2 Ready'] = `${((Date.now() - tReady) / 1000).toFixed(1)} s`;
  // kube-proxy programs the Service a moment after its endpoints are Ready.
  backendServiceIp = (await cluster.node!.waitForService(BACKEND_NS, BACKEND, { port: 80 })).host;
}, 1_500_000);

afterAll(async () => {
  for (const [k, v] of Object.entries(figures)) log(`figure: ${k}: ${v}`);
  await op?.stop().catch(() => undefined);
  await cluster?.stop();
  fs.rmSync(work, { recursive: true, force: true });
}, 180_000);

describe('the bind backend as pods', () => {
  it('runs 2 Ready replicas of the image with its own ServiceAccount, probes and hardened security context', async () => {
    const pods = await podsOf(BACKEND_NS, `app.kubernetes.io/name=${BACKEND}`);
    expect(pods).toHaveLength(2);
    for (const p of pods) {
      expect(p.spec!['nodeName']).toBe(cluster.node!.name);
      expect(p.spec!['serviceAccountName']).toBe(BACKEND);
      const c = p.spec!['containers'][0];
      expect(c.image).toBe(backendImage);
      expect(c.readinessProbe.httpGet.path).toBe('/readyz');
      expect(c.livenessProbe.httpGet.path).toBe('/healthz');
      expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
      expect(p.status!.conditions!.find((x) => x.type === 'Ready')?.status).toBe('True');
      expect(p.status!['containerStatuses'][0].restartCount).toBe(0);
    }
  });

  it('holds the security context in the running process: uid 65532, no capabilities, no_new_privs, seccomp, read-only root', async () => {
    const pods = await podsOf(BACKEND_NS, `app.kubernetes.io/name=${BACKEND}`);
    for (const p of pods) {
      const [pid, ...more] = podPids(p.metadata.uid!, 'node');
      expect(more).toEqual([]);
      const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
      const field = (k: string) => new RegExp(`^${k}:\\s+(.*)$`, 'm').exec(status)![1]!.trim();
      expect(field('Uid').split(/\s+/)).toEqual(['65532', '65532', '65532', '65532']);
      expect(field('Gid').split(/\s+/)).toEqual(['65532', '65532', '65532', '65532']);
      expect(field('CapEff')).toBe('0000000000000000');
      expect(field('CapPrm')).toBe('0000000000000000');
      expect(field('NoNewPrivs')).toBe('1');
      expect(field('Seccomp')).toBe('2');
      const root = fs
        .readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
        .split('\n')
        .map((l) => l.split(' '))
        .find((f) => f[4] === '/');
      expect(root![5]!.split(',')).toContain('ro');
    }
  });

  it('its ClusterIP Service answers /healthz and a bearer-token /bind from the host', async () => {
    const health = await httpGet(`http://${backendServiceIp}/healthz`);
    expect(health.status).toBe(200);
    const kubeconfig = await bindViaService('pods-health');
    const access = parseKubeconfig(kubeconfig);
    // The handed-out kubeconfig names the in-cluster address of the API server (the backend's own view).
    expect(access.server).toBe('https://10.0.0.1:443');
    expect(access.namespace).toMatch(/^cluster-/);
  });

  it("its ServiceAccount's RBAC grants what the backend does and no more", async () => {
    const sa = `system:serviceaccount:${BACKEND_NS}:${BACKEND}`;
    expect(await canI(sa, { verb: 'create', resource: 'namespaces' })).toBe(true);
    expect(await canI(sa, { verb: 'create', resource: 'serviceaccounts', subresource: 'token', name: 'klutch-binder', namespace: 'cluster-x' })).toBe(true);
    expect(await canI(sa, { verb: 'update', resource: 'leases', group: 'coordination.k8s.io', namespace: BACKEND_NS })).toBe(true);
    // Denied: workloads, tokens of other ServiceAccounts, impersonation, escalation, leases elsewhere.
    expect(await canI(sa, { verb: 'create', resource: 'pods', namespace: BACKEND_NS })).toBe(false);
    expect(await canI(sa, { verb: 'create', resource: 'serviceaccounts', subresource: 'token', name: 'default', namespace: 'kube-system' })).toBe(false);
    expect(await canI(sa, { verb: 'impersonate', resource: 'users' })).toBe(false);
    expect(await canI(sa, { verb: 'escalate', resource: 'clusterroles', group: 'rbac.authorization.k8s.io' })).toBe(false);
    expect(await canI(sa, { verb: 'update', resource: 'leases', group: 'coordination.k8s.io', namespace: 'kube-system' })).toBe(false);
  });

  it('loses nothing when a pod is deleted: a new one becomes Ready, the earlier binding stays, /bind works', async () => {
    const before = parseKubeconfig(await bindViaService('pods-delete'));
    const [victim] = await podsOf(BACKEND_NS, `app.kubernetes.io/name=${BACKEND}`);
    await api().request('DELETE', `/api/v1/namespaces/${BACKEND_NS}/pods/${victim!.metadata.name}`);
    await eventually(
      'the deleted backend pod replaced by a Ready one',
      async () => {
        const pods = await podsOf(BACKEND_NS, `app.kubernetes.io/name=${BACKEND}`);
        const ready = pods.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
        return ready.length === 2 && !pods.some((p) => p.metadata.uid === victim!.metadata.uid);
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const ns = await api().request<Obj>('GET', `/api/v1/namespaces/${before.namespace}`);
    expect(ns.metadata.deletionTimestamp).toBeUndefined();
    // the same cluster id binds again into the same cluster namespace
    const again = parseKubeconfig(await bindViaService('pods-delete'));
    expect(again.namespace).toBe(before.namespace);
  });

  it('drains on SIGTERM: binds through the Service during a rolling update all succeed', async () => {
    const selector = `app.kubernetes.io/name=${BACKEND}`;
    const old = await podsOf(BACKEND_NS, selector);
    // Binds one after another through the Service for the whole rollout. Twelve identities in turn, so the
    // per-identity bind rate limit (burst 10, then 30 a minute) never answers 429.
    const failures: string[] = [];
    let served = 0;
    let rolling = true;
    const load = (async () => {
      for (let i = 0; rolling; i++) {
        try {
          await bindViaService(`pods-drain-${i % 12}`, backendServiceIp, 'kiwi.example', 'kiwidbs', `pods-drain-user-${i % 12}`);
          served++;
        } catch (e) {
          failures.push(`bind ${i}: ${(e as Error).message}`);
        }
      }
    })();
    try {
      // as `kubectl rollout restart` does it: a new pod template
      await api().request('PATCH', `/apis/apps/v1/namespaces/${BACKEND_NS}/deployments/${BACKEND}`, {
        body: { spec: { template: { metadata: { annotations: { 'klutch-kit.test/restarted-at': new Date().toISOString() } } } } },
        contentType: 'application/merge-patch+json',
      });
      await eventually(
        'the rollout done: 2 new Ready pods, the old ones gone',
        async () => {
          const pods = await api().request<{ items: Obj[] }>('GET', `/api/v1/namespaces/${BACKEND_NS}/pods`, { query: { labelSelector: selector } });
          const ready = pods.items.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
          return pods.items.length === 2 && ready.length === 2 && !pods.items.some((p) => old.some((o) => o.metadata.uid === p.metadata.uid));
        },
        { timeoutMs: 180_000, intervalMs: 500 },
      );
    } finally {
      rolling = false;
      await load;
    }
    figures['binds through the Service during the rolling update'] = `${served} served, ${failures.length} failed`;
    expect(failures).toEqual([]);
    expect(served).toBeGreaterThan(0);
  });

  it('a pod whose readiness probe fails gets no traffic from the Service', async () => {
    const selector = `app.kubernetes.io/name=${BACKEND}`;
    const [survivor, victim] = await podsOf(BACKEND_NS, selector);
    // The issuer goes down: a backend that has not finished OIDC discovery answers /readyz 503 (server.ts),
    // one that has keeps answering 200. A replacement pod started now stays NotReady.
    const provider = op.provider;
    op.provider = undefined;
    try {
      await api().request('DELETE', `/api/v1/namespaces/${BACKEND_NS}/pods/${victim!.metadata.name}`);
      const fresh = await eventually(
        'a replacement pod answering /readyz 503, not Ready, NotReady in its EndpointSlice',
        async () => {
          const pods = await podsOf(BACKEND_NS, selector);
          const p = pods.find((x) => x.metadata.uid !== survivor!.metadata.uid && x.metadata.uid !== victim!.metadata.uid);
          const running = p?.status?.['containerStatuses']?.[0]?.state?.running !== undefined;
          if (!p || !running || p.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'False') return undefined;
          const slices = await api().request<{ items: Array<{ endpoints?: Array<{ targetRef?: { uid?: string }; conditions?: { ready?: boolean } }> }> }>(
            'GET',
            `/apis/discovery.k8s.io/v1/namespaces/${BACKEND_NS}/endpointslices`,
            { query: { labelSelector: `kubernetes.io/service-name=${BACKEND}` } },
          );
          const ep = slices.items.flatMap((sl) => sl.endpoints ?? []).find((e) => e.targetRef?.uid === p.metadata.uid);
          if (ep?.conditions?.ready !== false) return undefined;
          // up and answering (its process starts a moment after the container), and saying it is not ready
          const own = await httpGet(`http://${p.status!['podIP'] as string}:8080/readyz`).catch(() => undefined);
          return own?.status === 503 ? p : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 500 },
      );
      expect(fresh.status!.conditions!.find((c) => c.type === 'Ready')?.status).toBe('False');
      // Through the Service every answer is the survivor's 200: none reaches the pod that answers 503.
      const answers: number[] = [];
      for (let i = 0; i < 30; i++) answers.push((await httpGet(`http://${backendServiceIp}/readyz`)).status);
      expect(answers.filter((s) => s !== 200)).toEqual([]);
    } finally {
      op.provider = provider;
    }
    // The issuer back: the replacement becomes Ready and joins the Service.
    await deploymentReady(BACKEND_NS, BACKEND, 2);
  });

  it("each pod's memory (resident set of its processes) fits the memory request the construct sets", async () => {
    for (const p of await podsOf(BACKEND_NS, `app.kubernetes.io/name=${BACKEND}`)) {
      const mib = podMemoryMiB(p.metadata.uid!);
      figures[`memory backend pod ${p.metadata.name}`] = `${mib.toFixed(1)} MiB RSS`;
      expect(mib).toBeGreaterThan(0);
      expect(mib).toBeLessThan(memoryRequestMiB(p));
    }
  });
});

describe('the konnector as pods, installed as kubectl bind installs it', () => {
  // Topology: the node cluster is the app cluster (the konnector runs there, in-cluster, as kubectl
  // bind installs it). The provider is a second harness cluster: with one cluster the bound CRD would
  // already exist as the provider's own, and the konnector rightly refuses a CRD it does not own
  // (ForeignCustomResourceDefinition). Pods reach the provider's API server through a forwarder of
  // this process on the node IP; kubeconfigs name it with tls-server-name "kubernetes" (a SAN of the
  // harness's serving certificate). Its backend is the same image and construct, one replica in the
  // node cluster with --kubeconfig for the provider (ServiceAccount token, RBAC applied there).
  const PROVIDER_NS = 'klutch-provider';
  let provider: RealCluster;
  let forwarder: net.Server;
  const sockets = new Set<net.Socket>();
  let providerBackendIp: string;
  let clusterNs: string;
  const appNs = uniqueName('app');
  const KONNECTOR = 'app.kubernetes.io/name=konnector';
  const M = (ns: string, name = '') => `/apis/mangodb.com/v1alpha1/namespaces/${ns}/mangodbs${name ? `/${name}` : ''}`;
  const papi = () => clientOf(provider.kubeConfig);

  beforeAll(async () => {
    provider = await startCluster({ name: uniqueName('provider'), log });
    await prepareProvider(provider, 'mangodb.com', 'mangodbs', 'MangoDB');
    const apiPort = Number(new URL(provider.server).port);
    forwarder = net.createServer((sock) => {
      const up = net.connect(apiPort, '127.0.0.1');
      sockets.add(sock).add(up);
      sock.on('close', () => sockets.delete(sock));
      up.on('close', () => sockets.delete(up));
      sock.pipe(up).pipe(sock);
      sock.on('error', () => up.destroy());
      up.on('error', () => sock.destroy());
    });
    await new Promise<void>((r) => forwarder.listen(0, cluster.node!.ip, r));
    const address = `https://${cluster.node!.ip}:${(forwarder.address() as net.AddressInfo).port}`;

    const manifests = backendManifests(backendImage, op.issuer, {
      namespace: PROVIDER_NS,
      replicas: 1,
      exported: { group: 'mangodb.com', resource: 'mangodbs' },
      extraArgs: ['--kubeconfig=/etc/klutch/provider/kubeconfig', `--external-address=${address}`, '--external-server-name=kubernetes'],
      secretMounts: { 'provider-kubeconfig': '/etc/klutch/provider' },
    });
    const workload = new Set(['Deployment', 'Service', 'PodDisruptionBudget']);
    // identity and RBAC where the backend acts (the provider), the workload on the node
    await applyManifests(
      provider.kubeConfig,
      manifests.filter((m) => !workload.has(m.kind!)),
    );
    const token = await papi().request<Obj>('POST', `/api/v1/namespaces/${PROVIDER_NS}/serviceaccounts/${BACKEND}/token`, {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 7200 } },
    });
    const kubeconfig = [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      `- name: provider\n  cluster:\n    server: ${address}\n    tls-server-name: kubernetes\n    certificate-authority-data: ${Buffer.from(provider.caPem).toString('base64')}`,
      `users:\n- name: backend\n  user:\n    token: ${token.status!['token'] as string}`,
      `contexts:\n- name: provider\n  context:\n    cluster: provider\n    user: backend`,
      'current-context: provider',
      '',
    ].join('\n');
    await applyManifests(cluster.kubeConfig, [
      ...manifests.filter((m) => m.kind === 'Namespace' || m.kind === 'ServiceAccount'),
      ...backendInputs(PROVIDER_NS, issuerCaPem),
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'provider-kubeconfig', namespace: PROVIDER_NS }, stringData: { kubeconfig } } as KubernetesObject,
      ...manifests.filter((m) => workload.has(m.kind!)),
    ]);
    await deploymentReady(PROVIDER_NS, BACKEND, 1);
    providerBackendIp = (await cluster.node!.waitForService(PROVIDER_NS, BACKEND, { port: 80 })).host;

    // kubectl bind: the bearer-token /bind, then the export request, the konnector and the APIServiceBinding.
    const remoteKubeconfig = await bindViaService('pods-app', providerBackendIp, 'mangodb.com', 'mangodbs');
    clusterNs = parseKubeconfig(remoteKubeconfig).namespace!;
    const consumer = new KubeClient(cluster.kubeConfig);
    const err = new PassThrough();
    let said = '';
    err.on('data', (d) => (said += String(d)));
    // the namespace of this suite's claims: the konnector may bind it (--allow-namespace), so it exists first
    await api().request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: appNs } } });
    const tKonnector = Date.now();
    try {
      await bindApiService(
        {
          apiVersion: 'klutch.anynines.com/v1alpha1',
          kind: 'APIServiceExportRequest',
          metadata: { name: 'mangodbs.mangodb.com' },
          spec: { resources: [{ group: 'mangodb.com', resource: 'mangodbs' }] },
        },
        {
          consumer,
          remoteKubeconfig,
          dryRun: false,
          yes: true,
          skipKonnector: false,
          konnectorImage,
          allowNamespaces: [appNs],
          output: undefined,
          timeoutMs: 120_000,
          io: { out: new PassThrough(), err, in: new PassThrough() },
        },
      );
    } catch (e) {
      throw new Error(`bindApiService failed: ${(e as Error).message}\n${said}`, { cause: e });
    } finally {
      consumer.close();
    }
    await deploymentReady('klutch-bind', 'konnector', 2);
    figures['konnector Deployment applied → 2/2 Ready'] = `${((Date.now() - tKonnector) / 1000).toFixed(1)} s`;
  }, 600_000);

  afterAll(async () => {
    await provider?.stop();
    if (forwarder) {
      const closed = new Promise<void>((r) => forwarder.close(() => r()));
      for (const s of sockets) s.destroy();
      await closed;
    }
  }, 120_000);

  /** The provider's copy of an app-cluster claim (in the provider namespace the backend made for appNs). */
  async function upstream(name: string): Promise<Obj> {
    return eventually(
      `MangoDB ${name} on the provider`,
      async () => {
        const all = await papi().request<{ items: Obj[] }>('GET', '/apis/mangodb.com/v1alpha1/mangodbs');
        return all.items.find((o) => o.metadata.name === name && o.metadata.namespace!.startsWith(`${clusterNs}-`));
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
  }

  async function statusComesBack(name: string, phase: string, up: Obj): Promise<void> {
    await papi().request('PATCH', `${M(up.metadata.namespace!, name)}/status`, { body: { status: { phase } }, contentType: 'application/merge-patch+json' });
    await eventually(
      `status.phase ${phase} of ${appNs}/${name} on the app cluster`,
      async () => (await api().request<Obj>('GET', M(appNs, name))).status?.['phase'] === phase,
      { timeoutMs: 90_000, intervalMs: 500 },
    );
  }

  it('runs 2 Ready konnector pods from the image with their ServiceAccount, probes and hardened security context', async () => {
    const pods = await podsOf('klutch-bind', KONNECTOR);
    expect(pods).toHaveLength(2);
    for (const p of pods) {
      expect(p.spec!['serviceAccountName']).toBe('konnector');
      const c = p.spec!['containers'][0];
      expect(c.image).toBe(konnectorImage);
      expect(c.readinessProbe.httpGet.path).toBe('/readyz');
      expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
      const [pid] = podPids(p.metadata.uid!, 'node');
      const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
      expect(/^Uid:\s+(\d+)/m.exec(status)![1]).toBe('65532');
      expect(/^CapEff:\s+(\S+)/m.exec(status)![1]).toBe('0000000000000000');
    }
  });

  it('syncs a claim: spec up to the provider namespace, status back down', async () => {
    await api().request('POST', M(appNs), {
      body: { apiVersion: 'mangodb.com/v1alpha1', kind: 'MangoDB', metadata: { name: 'db1', namespace: appNs }, spec: { tier: 'Dedicated' } },
    });
    const up = await upstream('db1');
    expect(up.spec!['tier']).toBe('Dedicated');
    await statusComesBack('db1', 'Ready', up);
  });

  it("its ServiceAccount's RBAC grants the bound API and no more", async () => {
    const sa = 'system:serviceaccount:klutch-bind:konnector';
    expect(await canI(sa, { verb: 'update', resource: 'mangodbs', group: 'mangodb.com', namespace: appNs })).toBe(true);
    expect(await canI(sa, { verb: 'patch', resource: 'mangodbs', subresource: 'status', group: 'mangodb.com', namespace: appNs })).toBe(true);
    expect(await canI(sa, { verb: 'update', resource: 'customresourcedefinitions', group: 'apiextensions.k8s.io', name: 'mangodbs.mangodb.com' })).toBe(true);
    // Denied: other CRDs, other APIs, workloads, namespaces, bindings it never creates.
    expect(await canI(sa, { verb: 'delete', resource: 'customresourcedefinitions', group: 'apiextensions.k8s.io', name: 'kiwidbs.kiwi.example' })).toBe(false);
    expect(await canI(sa, { verb: 'update', resource: 'kiwidbs', group: 'kiwi.example', namespace: appNs })).toBe(false);
    expect(await canI(sa, { verb: 'create', resource: 'pods', namespace: appNs })).toBe(false);
    expect(await canI(sa, { verb: 'delete', resource: 'namespaces' })).toBe(false);
    expect(await canI(sa, { verb: 'create', resource: 'apiservicebindings', group: 'klutch.anynines.com', namespace: 'klutch-bind' })).toBe(false);
  });

  it('loses nothing when the konnector pods are deleted: the claim keeps syncing once new pods are Ready', async () => {
    const old = await podsOf('klutch-bind', KONNECTOR);
    for (const p of old) await api().request('DELETE', `/api/v1/namespaces/klutch-bind/pods/${p.metadata.name}`);
    await eventually(
      'two new Ready konnector pods',
      async () => {
        const pods = await podsOf('klutch-bind', KONNECTOR);
        const ready = pods.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
        return ready.length === 2 && !pods.some((p) => old.some((o) => o.metadata.uid === p.metadata.uid));
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    // the earlier claim: a new status still comes back; a new claim goes up
    await statusComesBack('db1', 'Updated', await upstream('db1'));
    await api().request('POST', M(appNs), {
      body: { apiVersion: 'mangodb.com/v1alpha1', kind: 'MangoDB', metadata: { name: 'db2', namespace: appNs }, spec: { tier: 'Shared' } },
    });
    await statusComesBack('db2', 'Ready', await upstream('db2'));
    // after the restarts and two claims: each pod's memory still fits its request
    for (const [label, ns, selector] of [
      ['konnector', 'klutch-bind', KONNECTOR],
      ['provider backend', PROVIDER_NS, `app.kubernetes.io/name=${BACKEND}`],
    ] as const) {
      for (const p of await podsOf(ns, selector)) {
        const mib = podMemoryMiB(p.metadata.uid!);
        figures[`memory ${label} pod ${p.metadata.name}`] = `${mib.toFixed(1)} MiB RSS`;
        expect(mib).toBeLessThan(memoryRequestMiB(p));
      }
    }
  });
});
