// The boundary between the two clusters, attacked from the provider's side, on real clusters with the
// real bind backend (real OIDC provider, real kube-apiserver) and the real konnector: what a provider
// (or anyone holding the consumer kubeconfig on the control plane) writes must not reach into the app
// cluster beyond what the app cluster bound. Each attack was first run against the konnector before the
// fix and got through (see docs/bind.md, "Threat model").
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { responseKubeconfig, responseRequests } from '../../../contract/wire.js';
import { CoreResources, KubeClient, parseKubeconfig, type KubeObject } from '../../../runtime/core/index.js';
import { loadKubeconfigFile } from '../../../runtime/core/kubeconfig.js';
import { createLogger } from '../../../runtime/core/logger.js';
import { Konnector } from '../../../runtime/konnector/konnector.js';
import { EVENTS } from '../../../runtime/core/events.js';
import { CLAIM_REFUSED_CONDITION } from '../../../runtime/konnector/claim-refusals.js';
import { BINDING_UID_ANNOTATION, CLAIM_CONFLICT_CONDITION, RESOURCE_OWNER_ANNOTATION, SOURCE_UID_ANNOTATION } from '../../../runtime/konnector/types.js';
import { BINDING_RESOURCES } from '../../../contract/index.js';
import { bindApiService, type ExportRequestDoc } from '../../../runtime/kubectl-bind/apiservice.js';
import { SEALED_KUBECONFIG_ANNOTATION, rotationKeyOf, sealKubeconfig } from '../../../contract/credential.js';
import { applyManifests, startCluster, type RealCluster } from '../../../runtime/realinfra/index.js';
import { konnectorManifests } from '../../../constructs/runtime/konnector.js';
import { KonnectorNamespaces } from '../../../constructs/runtime/konnector-namespaces.js';
import { CLIENT_ID, startProvider, type ProviderEnv } from '../backend/_fixture.js';
import {
  admin,
  bindOnApp,
  createCRDs,
  eventually,
  installBindingCRDs,
  MiniBackend,
  never,
  setUpConsumerOnProvider,
  tokenFor,
  widgetCRD,
  WIDGETS,
  WIDGETS_NAME,
  type ConsumerOnProvider,
} from './fixture.js';

jest.setTimeout(240_000);

const MANGO = { group: 'mangodb.com', version: 'v1alpha1', plural: 'mangodbs', namespaced: true, kind: 'MangoDB' };
type Cond = { type: string; status: string; reason?: string; message?: string };
type Binding = KubeObject & { status?: { conditions?: Cond[] } };
type Secret = KubeObject & { data?: Record<string, string> };

let env: ProviderEnv;
let app: RealCluster;
let ac: KubeClient;
let consumer: KubeClient; // the consumer kubeconfig the backend handed out (what a konnector and a CLI hold)
let clusterNs: string;
let konnector: Konnector;
const BINDING = 'mangodbs.mangodb.com';
const LIMIT = 5;
/** The per-binding cache cap and write budget of the suite's konnector (low, so that a test reaches them). */
const CACHE_CAP = 60;
const WRITE_BUDGET = 5;

const kubeconfig = (server: string, user: Record<string, unknown>, namespace: string) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'p',
    clusters: [{ name: 'p', cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'p', user }],
    contexts: [{ name: 'p', context: { cluster: 'p', user: 'p', namespace } }],
  });

beforeAll(async () => {
  env = await startProvider('hostile-cp');
  app = await startCluster({ name: 'hostile-app' });
  ac = new KubeClient(app.kubeConfig);
  await installBindingCRDs(ac);
  // bind as kubectl-bind does: a bearer token of the issuer → BindingResponse → export request → APIServiceBinding
  const now = Math.floor(Date.now() / 1000);
  const tok = await env.op.signAsIssuer({ iss: env.op.issuer, sub: 'hostile-test', aud: CLIENT_ID, iat: now, exp: now + 300 });
  const res = await fetch(`${env.backend.url}/bind`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${tok}` },
    body: JSON.stringify({ group: 'mangodb.com', resource: 'mangodbs', clusterID: 'hostile' + randomBytes(3).toString('hex') }),
  });
  expect(res.status).toBe(200);
  const response = (await res.json()) as Parameters<typeof responseKubeconfig>[0];
  const remoteKubeconfig = responseKubeconfig(response);
  const access = parseKubeconfig(remoteKubeconfig);
  clusterNs = access.namespace!;
  consumer = new KubeClient(access);
  const sink = new PassThrough();
  sink.resume();
  await bindApiService(responseRequests(response)[0] as unknown as ExportRequestDoc, {
    consumer: ac,
    remoteKubeconfig,
    dryRun: false,
    yes: true,
    skipKonnector: true,
    output: undefined,
    timeoutMs: 60_000,
    io: { out: sink, err: sink, in: new PassThrough() },
  });
  konnector = await startKonnector();
  await eventually('the bound CRD on the app cluster', () => ac.getOrNull(CoreResources.crds, undefined, BINDING), 120_000);
}, 300_000);

afterAll(async () => {
  await konnector?.stop().catch(() => undefined);
  consumer?.close();
  ac?.close();
  await app?.stop();
  await env?.stop();
});

/** The suite's konnector (admin credentials unless `opts` say otherwise). */
async function startKonnector(opts: Partial<ConstructorParameters<typeof Konnector>[0]> = {}): Promise<Konnector> {
  const k = new Konnector({
    appKubeConfig: app.kubeConfig,
    heartbeatIntervalMs: 2000,
    providerSyncTimeoutMs: 10_000,
    resyncMs: 0,
    namespaceLingerMs: 0,
    maxProviderObjectsPerNamespace: LIMIT,
    maxCachedObjectsPerBinding: CACHE_CAP,
    writeBudget: WRITE_BUDGET,
    writeBudgetWindowMs: 10 * 60_000,
    logger: createLogger('konnector-hostile', process.env.KONNECTOR_TEST_LOG ?? 'silent'),
    ...opts,
  });
  await k.start();
  return k;
}

const bindingNamed = (name: string) => ac.get<Binding>(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', name);
const conditionOf = async (name: string, type: string) => (await bindingNamed(name)).status?.conditions?.find((c) => c.type === type);
const bindingEvents = async (name: string) => {
  const b = await bindingNamed(name);
  return (
    await ac.list<KubeObject & { reason?: string; message?: string; type?: string }>(EVENTS, 'klutch-bind', {
      fieldSelector: `involvedObject.uid=${b.metadata.uid}`,
    })
  ).items;
};
/** The value of a konnector metric with these labels (0 when absent). */
const metricValue = async (k: Konnector, name: string, labels: Record<string, string>) =>
  ((await k.registry.getSingleMetric(name)?.get())?.values ?? []).find((v) => Object.entries(labels).every(([l, x]) => v.labels[l] === x))?.value ?? 0;

/** A namespace of the app cluster with a claim in it: bound by the app developer. */
async function boundNamespace(name: string): Promise<string> {
  await ac.create(CoreResources.namespaces, { metadata: { name } });
  await ac.create(MANGO, { apiVersion: 'mangodb.com/v1alpha1', kind: 'MangoDB', metadata: { name: 'db', namespace: name }, spec: { tier: 'Shared' } });
  return eventually(`provider namespace of ${name}`, async () => {
    const ans = await consumer.getOrNull<KubeObject & { status?: { namespace?: string } }>(BINDING_RESOURCES.apiServiceNamespaces, clusterNs, name);
    return ans?.status?.namespace;
  });
}

describe('a hostile provider', () => {
  it('cannot make the konnector send its own token: a kubeconfig Secret with tokenFile is refused, never followed', async () => {
    // The listener the provider points the kubeconfig at, and the "ServiceAccount token" file it names.
    const seen: string[] = [];
    const listener: Server = createServer((req, res) => {
      seen.push(req.headers.authorization ?? '');
      res.writeHead(401).end();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    const dir = mkdtempSync(join(tmpdir(), 'hostile-'));
    const marker = `marker-${randomBytes(8).toString('hex')}`;
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, marker);
    const bindingSecretBefore = await appKubeconfigSecret();
    let restore: (() => Promise<unknown>) | undefined;
    try {
      // The backend hands rotated kubeconfigs to the konnector sealed in the ClusterBinding, under the
      // rotation key inside the kubeconfig it handed out at bind time (contract/credential.ts): the
      // provider knows that key, so it can seal whatever it likes.
      const cb = await env.kube.get(BINDING_RESOURCES.clusterBindings, clusterNs, 'cluster');
      const original = cb.metadata.annotations![SEALED_KUBECONFIG_ANNOTATION]!;
      restore = () =>
        env.kube.mergePatch(BINDING_RESOURCES.clusterBindings, clusterNs, 'cluster', {
          metadata: { annotations: { [SEALED_KUBECONFIG_ANNOTATION]: original } },
        });
      const key = rotationKeyOf(Buffer.from(bindingSecretBefore!, 'base64').toString('utf8'))!;
      const url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
      const hostile = sealKubeconfig(key, clusterNs, kubeconfig(url, { tokenFile }, clusterNs));
      await env.kube.mergePatch(BINDING_RESOURCES.clusterBindings, clusterNs, 'cluster', {
        metadata: { annotations: { [SEALED_KUBECONFIG_ANNOTATION]: hostile } },
      });
      const stolen = () => seen.filter((a) => a.includes(marker));
      const refused = async () => {
        const b = await ac.get<Binding>(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', BINDING);
        return b.status?.conditions?.find((c) => c.type === 'Heartbeating' && c.message?.includes('credential rotation refused'));
      };
      // Whichever comes first: the konnector refuses the kubeconfig, or it sends the token file's content.
      await eventually('the rotation refused or the token sent', async () => stolen().length > 0 || (await refused()));
      expect(stolen()).toEqual([]);
      expect((await refused())?.message).toContain(`tokenFile: ${JSON.stringify(tokenFile)}`);
      // a few more heartbeats (2 s interval): none of them follows the kubeconfig
      await never('a request at the provider-chosen server', async () => seen.length > 0, 5000);
      expect(await appKubeconfigSecret()).toBe(bindingSecretBefore);
    } finally {
      await restore?.();
      listener.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('cannot write into kube-system: an APIServiceNamespace the app cluster did not bind maps nothing', async () => {
    // With the consumer kubeconfig, announce the app cluster's kube-system; the backend assigns it a provider namespace.
    await consumer.create(BINDING_RESOURCES.apiServiceNamespaces, { metadata: { name: 'kube-system', namespace: clusterNs }, spec: {} });
    const hostileNs = await eventually('a provider namespace for kube-system', async () => {
      const ans = await consumer.getOrNull<KubeObject & { status?: { namespace?: string } }>(BINDING_RESOURCES.apiServiceNamespaces, clusterNs, 'kube-system');
      return ans?.status?.namespace;
    });
    await env.kube.create(CoreResources.secrets, { metadata: { name: 'y-service-binding', namespace: hostileNs }, stringData: { password: 'planted' } });

    // The barrier: a namespace the app developer bound gets the provider's Secret.
    const teamNs = await boundNamespace('team-a');
    await env.kube.create(CoreResources.secrets, { metadata: { name: 'db-creds', namespace: teamNs }, stringData: { password: 'legit' } });
    await eventually('the credentials Secret in team-a', () => ac.getOrNull(CoreResources.secrets, 'team-a', 'db-creds'));

    await never('the planted Secret in the app cluster kube-system', () => ac.getOrNull(CoreResources.secrets, 'kube-system', 'y-service-binding'), 3000);
    // … nor a claim object adopted into kube-system from the hostile provider namespace
    await env.kube.create(MANGO, {
      apiVersion: 'mangodb.com/v1alpha1',
      kind: 'MangoDB',
      metadata: { name: 'planted', namespace: hostileNs },
      spec: { tier: 'Shared' },
    });
    await env.kube.create(MANGO, {
      apiVersion: 'mangodb.com/v1alpha1',
      kind: 'MangoDB',
      metadata: { name: 'adopted', namespace: teamNs },
      spec: { tier: 'Shared' },
    });
    await eventually('a provider-created object adopted into team-a', () => ac.getOrNull(MANGO, 'team-a', 'adopted'));
    expect(await ac.getOrNull(MANGO, 'kube-system', 'planted')).toBeUndefined();
  });

  it('cannot pull app-cluster Secrets up or claim them, with or without an owner annotation', async () => {
    const teamNs = await boundNamespace('team-b');
    // the app's own Secrets: one with no provider counterpart, one whose name the provider also uses
    await ac.create(CoreResources.secrets, { metadata: { name: 'app-only', namespace: 'team-b' }, stringData: { k: 'app-secret-1' } });
    await ac.create(CoreResources.secrets, { metadata: { name: 'shared-name', namespace: 'team-b' }, stringData: { k: 'app-secret-2' } });
    await env.kube.create(CoreResources.secrets, {
      metadata: { name: 'shared-name', namespace: teamNs, annotations: { [RESOURCE_OWNER_ANNOTATION]: 'Consumer' } },
      stringData: { k: 'provider-value' },
    });
    // the barrier: provider-owned credentials still arrive
    await env.kube.create(CoreResources.secrets, { metadata: { name: 'db-creds', namespace: teamNs }, stringData: { password: 'legit' } });
    await eventually('the credentials Secret in team-b', () => ac.getOrNull(CoreResources.secrets, 'team-b', 'db-creds'));
    await never('the app-only Secret upstream', () => env.kube.getOrNull(CoreResources.secrets, teamNs, 'app-only'), 2000);
    const up = await env.kube.get<Secret>(CoreResources.secrets, teamNs, 'shared-name');
    expect(Buffer.from(up.data!.k!, 'base64').toString()).toBe('provider-value');
    const down = await ac.get<Secret>(CoreResources.secrets, 'team-b', 'shared-name');
    expect(Buffer.from(down.data!.k!, 'base64').toString()).toBe('app-secret-2');
  });
});

describe('a provider that floods a bound namespace', () => {
  it(`gets at most ${LIMIT} copies of claimed objects and ${LIMIT} adopted objects into it`, async () => {
    const teamNs = await boundNamespace('team-c');
    for (let i = 0; i < LIMIT + 3; i++) {
      await env.kube.create(CoreResources.secrets, { metadata: { name: `flood-${i}`, namespace: teamNs }, stringData: { i: String(i) } });
      await env.kube.create(MANGO, {
        apiVersion: 'mangodb.com/v1alpha1',
        kind: 'MangoDB',
        metadata: { name: `flood-${i}`, namespace: teamNs },
        spec: { tier: 'Shared' },
      });
    }
    const copies = async () => (await ac.list(CoreResources.secrets, 'team-c')).items.filter((o) => o.metadata.name!.startsWith('flood-')).length;
    const adopted = async () => (await ac.list(MANGO, 'team-c')).items.filter((o) => o.metadata.name!.startsWith('flood-')).length;
    await eventually(`${LIMIT} copies and ${LIMIT} adopted objects`, async () => (await copies()) === LIMIT && (await adopted()) === LIMIT);
    await never('more than the limit', async () => (await copies()) > LIMIT || (await adopted()) > LIMIT, 3000);
  });
});

describe('a provider claiming a resource outside the allow-list', () => {
  // What an old kubectl-bind wrote for a hostile backend: an accepted claim on daemonsets.apps (with
  // create.replaceExisting) on the binding; the provider lets the consumer credential read its DaemonSets.
  const DAEMONSETS = { group: 'apps', version: 'v1', plural: 'daemonsets', namespaced: true, kind: 'DaemonSet' };
  const RBAC = (plural: string, kind: string) => ({ group: 'rbac.authorization.k8s.io', version: 'v1', plural, namespaced: false, kind });
  const CLAIM = { group: 'apps', resource: 'daemonsets', version: 'v1', selector: { owner: 'Provider' }, create: { replaceExisting: true }, state: 'Accepted' };

  it('gets no DaemonSet into a bound namespace; the binding says ResourcesAllowed=False naming it and the flag', async () => {
    const teamNs = await boundNamespace('team-ds');
    await env.kube.create(RBAC('clusterroles', 'ClusterRole'), {
      metadata: { name: 'hostile-daemonsets' },
      rules: [{ apiGroups: ['apps'], resources: ['daemonsets'], verbs: ['get', 'list', 'watch'] }],
    } as KubeObject);
    await env.kube.create(RBAC('clusterrolebindings', 'ClusterRoleBinding'), {
      metadata: { name: 'hostile-daemonsets' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'hostile-daemonsets' },
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: `system:serviceaccounts:${clusterNs}` }],
    } as KubeObject);
    await env.kube.create(DAEMONSETS, {
      metadata: { name: 'node-agent', namespace: teamNs },
      spec: {
        selector: { matchLabels: { app: 'node-agent' } },
        template: { metadata: { labels: { app: 'node-agent' } }, spec: { hostPID: true, containers: [{ name: 'a', image: 'registry.example/agent:1' }] } },
      },
    } as KubeObject);
    const before = await ac.get<KubeObject & { spec: { permissionClaims?: unknown[] } }>(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', BINDING);
    const claims = before.spec.permissionClaims ?? [];
    await ac.mergePatch(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', BINDING, { spec: { permissionClaims: [...claims, CLAIM] } });
    try {
      const cond = await eventually('ResourcesAllowed=False on the binding', async () =>
        (await ac.get<Binding>(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', BINDING)).status?.conditions?.find(
          (c) => c.type === 'ResourcesAllowed' && c.status === 'False',
        ),
      );
      expect(cond.reason).toBe('ResourceNotAllowed');
      expect(cond.message).toMatch(
        /the permission claim on daemonsets\.apps is outside the allow-list: workloads .*--allow-resource=daemonsets\.apps on the konnector/,
      );
      // the barrier: the binding's Secret claim still syncs into that namespace
      await env.kube.create(CoreResources.secrets, { metadata: { name: 'db-creds', namespace: teamNs }, stringData: { password: 'legit' } });
      await eventually('the credentials Secret in team-ds', () => ac.getOrNull(CoreResources.secrets, 'team-ds', 'db-creds'));
      await never("the provider's DaemonSet in team-ds", () => ac.getOrNull(DAEMONSETS, 'team-ds', 'node-agent'), 3000);
    } finally {
      await ac.mergePatch(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', BINDING, { spec: { permissionClaims: claims } });
      await env.kube.delete(RBAC('clusterrolebindings', 'ClusterRoleBinding'), undefined, 'hostile-daemonsets').catch(() => undefined);
      await env.kube.delete(RBAC('clusterroles', 'ClusterRole'), undefined, 'hostile-daemonsets').catch(() => undefined);
    }
  });
});

describe('a provider offering a ServiceAccount token Secret', () => {
  // A Secret of type kubernetes.io/service-account-token in the app cluster makes its token controller
  // mint a token of the ServiceAccount the annotation names (here the app's deployer in the bound
  // namespace) into it: the provider would have a Secret of its making turned into a credential of the app cluster.
  const SERVICEACCOUNTS = { group: '', version: 'v1', plural: 'serviceaccounts', namespaced: true, kind: 'ServiceAccount' };
  const binding = () => ac.get<Binding>(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', BINDING);
  const refusedOn = async () => (await binding()).status?.conditions?.find((c) => c.type === CLAIM_REFUSED_CONDITION);

  it('is not copied down; the binding names it (condition ClaimedObjectsRefused and a Warning Event) until the provider deletes it', async () => {
    const teamNs = await boundNamespace('team-sa');
    await ac.create(SERVICEACCOUNTS, { metadata: { name: 'deployer', namespace: 'team-sa' } });
    await env.kube.create(SERVICEACCOUNTS, { metadata: { name: 'deployer', namespace: teamNs } });
    await env.kube.create(CoreResources.secrets, {
      metadata: { name: 'deployer-token', namespace: teamNs, annotations: { 'kubernetes.io/service-account.name': 'deployer' } },
      type: 'kubernetes.io/service-account-token',
    } as KubeObject);
    // the barrier: an ordinary credentials Secret of the same claim arrives
    await env.kube.create(CoreResources.secrets, { metadata: { name: 'db-creds', namespace: teamNs }, stringData: { password: 'legit' } });
    await eventually('the credentials Secret in team-sa', () => ac.getOrNull(CoreResources.secrets, 'team-sa', 'db-creds'));
    const cond = await eventually('ClaimedObjectsRefused on the binding', refusedOn);
    expect(cond).toMatchObject({ status: 'True', reason: 'SecretTypeNotAllowed' });
    expect(cond.message).toContain(
      `the provider's Secret team-sa/deployer-token (type kubernetes.io/service-account-token, for ServiceAccount "deployer"): the token controller mints a token`,
    );
    const b = await binding();
    const ev = await eventually('a SecretTypeRefused Event on the binding', async () =>
      (
        await ac.list<KubeObject & { reason?: string; message?: string; type?: string }>(EVENTS, 'klutch-bind', {
          fieldSelector: `involvedObject.uid=${b.metadata.uid}`,
        })
      ).items.find((e) => e.reason === 'SecretTypeRefused' && e.message?.includes('team-sa/deployer-token')),
    );
    expect(ev.type).toBe('Warning');
    await never('a token Secret in team-sa', () => ac.getOrNull(CoreResources.secrets, 'team-sa', 'deployer-token'), 2000);
    expect(
      (await ac.list(CoreResources.secrets, 'team-sa')).items.filter((s) => (s as { type?: string }).type === 'kubernetes.io/service-account-token'),
    ).toEqual([]);

    // The provider deletes it: the refusal goes from the binding.
    await env.kube.delete(CoreResources.secrets, teamNs, 'deployer-token');
    await eventually('ClaimedObjectsRefused gone', async () => !(await refusedOn()));
  });
});

describe('a second provider bound into the same app cluster', () => {
  // Provider B: its own control plane (the mini backend assigns provider namespaces) and a binding whose
  // claim selects every Secret it creates, so its names overlap with what provider A copies.
  let cp2: RealCluster | undefined;
  let cpc2: KubeClient;
  let backend2: MiniBackend | undefined;
  let p2: ConsumerOnProvider;
  const B_BINDING = WIDGETS_NAME;

  beforeAll(async () => {
    cp2 = await startCluster({ name: 'hostile-cp2' });
    cpc2 = admin(cp2);
    await Promise.all([installBindingCRDs(cpc2), createCRDs(cpc2, [widgetCRD()])]);
    backend2 = new MiniBackend(cp2);
    await backend2.start();
    p2 = await setUpConsumerOnProvider(cp2, 'cluster-second');
    await bindOnApp(app, p2, { claims: [{ group: '', resource: 'secrets', version: 'v1', selector: { owner: 'Provider' }, state: 'Accepted' }] });
    await eventually('the second provider CRD on the app cluster', () => ac.getOrNull(CoreResources.crds, undefined, WIDGETS_NAME), 120_000);
  }, 300_000);

  afterAll(async () => {
    await backend2?.stop();
    cpc2?.close();
    await cp2?.stop();
  });

  const binding = (name: string) => ac.get<Binding>(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', name);
  const conflictOn = async (name: string) => (await binding(name)).status?.conditions?.find((c) => c.type === CLAIM_CONFLICT_CONDITION);
  const eventsOf = async (b: Binding) =>
    (await ac.list<KubeObject & { reason?: string; message?: string }>(EVENTS, 'klutch-bind', { fieldSelector: `involvedObject.uid=${b.metadata.uid}` })).items;

  it("never overwrites, takes over or deletes the first provider's copy of a Secret name both claim; the conflict shows on both bindings", async () => {
    const NAME = 'shared-service-binding';
    const aNs = await boundNamespace('team-d');
    await ac.create(WIDGETS, {
      apiVersion: `${WIDGETS.group}/${WIDGETS.version}`,
      kind: 'Widget',
      metadata: { name: 'w', namespace: 'team-d' },
      spec: { size: 1 },
    });
    const bNs = await eventually('provider B namespace of team-d', async () => {
      const ans = await cpc2.getOrNull<KubeObject & { status?: { namespace?: string } }>(BINDING_RESOURCES.apiServiceNamespaces, p2.clusterNs, 'team-d');
      return ans?.status?.namespace;
    });
    const source = await env.kube.create<Secret>(CoreResources.secrets, { metadata: { name: NAME, namespace: aNs }, stringData: { password: 'from-A' } });
    const copy = await eventually("provider A's copy in team-d", () => ac.getOrNull<Secret>(CoreResources.secrets, 'team-d', NAME));
    const untouched = async () => {
      const s = await ac.getOrNull<Secret>(CoreResources.secrets, 'team-d', NAME);
      return s?.metadata.uid === copy.metadata.uid && s?.metadata.resourceVersion === copy.metadata.resourceVersion;
    };

    // Provider B creates an object of the same name in its namespace of team-d.
    await cpc2.create(CoreResources.secrets, { metadata: { name: NAME, namespace: bNs }, stringData: { password: 'from-B' } });
    // Whichever comes first: the conflict on both bindings, or A's copy changed.
    await eventually(
      'the conflict on both bindings or a changed copy',
      async () => !(await untouched()) || ((await conflictOn(BINDING)) && (await conflictOn(B_BINDING))),
    );
    expect(await untouched()).toBe(true);
    // no write loop: the copy keeps its resourceVersion while both konnector paths keep running (polled every 100 ms)
    await never("provider A's copy written again", async () => !(await untouched()), 3000);
    const kept = await ac.get<Secret>(CoreResources.secrets, 'team-d', NAME);
    expect(Buffer.from(kept.data!.password!, 'base64').toString()).toBe('from-A');
    const [a, b] = await Promise.all([binding(BINDING), binding(B_BINDING)]);
    expect(kept.metadata.annotations).toMatchObject({ [BINDING_UID_ANNOTATION]: a.metadata.uid, [SOURCE_UID_ANNOTATION]: source.metadata.uid });

    // The condition on each binding names the object and the other binding …
    const onA = (await conflictOn(BINDING))!;
    const onB = (await conflictOn(B_BINDING))!;
    expect(onA).toMatchObject({ status: 'True', reason: 'ClaimConflict' });
    expect(onA.message).toContain(`secrets team-d/${NAME}`);
    expect(onA.message).toContain(`klutch-bind/${B_BINDING}`);
    expect(onB).toMatchObject({ status: 'True', reason: 'ClaimConflict' });
    expect(onB.message).toContain(`secrets team-d/${NAME}`);
    expect(onB.message).toContain(`klutch-bind/${BINDING}`);
    // … and so does a Warning Event on each.
    for (const x of [a, b]) {
      const ev = await eventually(`a ClaimConflict Event on ${x.metadata.name}`, async () => (await eventsOf(x)).find((e) => e.reason === 'ClaimConflict'));
      expect(ev.message).toContain(`secrets team-d/${NAME}`);
    }

    // Provider B deletes its object: A's copy stays as it is and the conflict clears on both bindings.
    await cpc2.delete(CoreResources.secrets, bNs, NAME);
    await eventually(
      'the conflict cleared on both bindings or a changed copy',
      async () => !(await untouched()) || (!(await conflictOn(BINDING)) && !(await conflictOn(B_BINDING))),
    );
    expect(await untouched()).toBe(true);
    await never("provider A's copy deleted or written", async () => !(await untouched()), 2000);
  });

  it(`freezes the second binding's cache at ${CACHE_CAP} provider objects when its provider floods it: what it holds keeps syncing, the binding says so`, async () => {
    const widget = (ns: string) => ({
      apiVersion: `${WIDGETS.group}/${WIDGETS.version}`,
      kind: 'Widget',
      metadata: { name: 'w', namespace: ns },
      spec: { size: 1 },
    });
    const providerNs = (ns: string) =>
      eventually(`provider B namespace of ${ns}`, async () => {
        const ans = await cpc2.getOrNull<KubeObject & { status?: { namespace?: string } }>(BINDING_RESOURCES.apiServiceNamespaces, p2.clusterNs, ns);
        return ans?.status?.namespace;
      });
    const data = async (ns: string, name: string) => {
      const s = await ac.getOrNull<Secret>(CoreResources.secrets, ns, name);
      return s?.data?.v ? Buffer.from(s.data.v, 'base64').toString() : undefined;
    };
    await ac.create(CoreResources.namespaces, { metadata: { name: 'team-flood' } });
    await ac.create(WIDGETS, widget('team-flood'));
    const bNs = await providerNs('team-flood');
    await cpc2.create(CoreResources.secrets, { metadata: { name: 'held', namespace: bNs }, stringData: { v: '1' } });
    await eventually('the copy of a Secret the binding holds', async () => (await data('team-flood', 'held')) === '1');
    expect(await conditionOf(B_BINDING, 'CacheLimitReached')).toBeUndefined();

    // The flood: more objects than the cap in the namespaces the binding watches.
    const flood = Array.from({ length: CACHE_CAP + 10 }, (_, i) => `flood-${i}`);
    for (const name of flood) await cpc2.create(CoreResources.secrets, { metadata: { name, namespace: bNs }, stringData: { v: 'x' } });
    const cond = await eventually('CacheLimitReached on the flooded binding', () => conditionOf(B_BINDING, 'CacheLimitReached'));
    expect(cond).toMatchObject({ status: 'True', reason: 'CacheLimitReached' });
    expect(cond.message).toContain(`more than ${CACHE_CAP} objects`);
    expect(cond.message).toContain('--max-cached-objects-per-binding');
    const ev = await eventually('a CacheLimitReached Event on the flooded binding', async () =>
      (await bindingEvents(B_BINDING)).find((e) => e.reason === 'CacheLimitReached'),
    );
    expect(ev.type).toBe('Warning');
    expect(await metricValue(konnector, 'klutch_konnector_limited_total', { limit: 'CacheLimitReached' })).toBeGreaterThan(0);
    expect(await metricValue(konnector, 'klutch_konnector_bindings_limited', { limit: 'CacheLimitReached' })).toBe(1);
    // the other binding is not frozen
    expect(await conditionOf(BINDING, 'CacheLimitReached')).toBeUndefined();

    // What the frozen cache holds keeps syncing …
    await cpc2.mergePatch(CoreResources.secrets, bNs, 'held', { stringData: { v: '2' } });
    await eventually('an update of a held object still comes down', async () => (await data('team-flood', 'held')) === '2');
    // … a new object is not admitted: a Secret in a namespace bound after the freeze does not come down.
    await ac.create(CoreResources.namespaces, { metadata: { name: 'team-flood-late' } });
    await ac.create(WIDGETS, widget('team-flood-late'));
    const lateNs = await providerNs('team-flood-late');
    await cpc2.create(CoreResources.secrets, { metadata: { name: 'late', namespace: lateNs }, stringData: { v: '1' } });
    await never('a Secret the frozen cache did not admit reaches the app cluster', () => data('team-flood-late', 'late'), 3000);

    // The provider cleans up: below the cap the condition goes, and the refused Secret enters with its next change.
    for (const name of flood) await cpc2.delete(CoreResources.secrets, bNs, name);
    await eventually('CacheLimitReached gone', async () => !(await conditionOf(B_BINDING, 'CacheLimitReached')));
    await eventually('a CacheLimitReachedResolved Event', async () => (await bindingEvents(B_BINDING)).find((e) => e.reason === 'CacheLimitReachedResolved'));
    await cpc2.mergePatch(CoreResources.secrets, lateNs, 'late', { stringData: { v: '2' } });
    await eventually('the late Secret comes down once admitted', async () => (await data('team-flood-late', 'late')) === '2');
  });
});

describe('credential rotation through the sealed ClusterBinding annotation', () => {
  it('brings the rotated token into the app cluster although the consumer credential cannot read the kubeconfig Secret', async () => {
    const tokenOf = (b64kc: string) => parseKubeconfig(Buffer.from(b64kc, 'base64').toString('utf8')).token;
    const before = tokenOf((await appKubeconfigSecret())!);
    await expect(consumer.get(CoreResources.secrets, clusterNs, 'kubeconfig')).rejects.toMatchObject({ code: 403 });
    // the backend rotates (2/3 of the token's life "passed")
    const s = await env.kube.get<Secret>(CoreResources.secrets, clusterNs, 'kubeconfig');
    const exp = Date.parse(s.metadata.annotations!['klutch.anynines.com/token-expiration']!);
    await env.kube.mergePatch(CoreResources.secrets, clusterNs, 'kubeconfig', {
      metadata: { annotations: { 'klutch.anynines.com/token-issued': new Date(exp - 86400_000 * 30).toISOString() } },
    });
    const rotated = await eventually('the rotated token on the provider', async () => {
      const t = tokenOf((await env.kube.get<Secret>(CoreResources.secrets, clusterNs, 'kubeconfig')).data!.kubeconfig!);
      return t !== before ? t : undefined;
    });
    // the konnector opens the ClusterBinding's sealed kubeconfig and writes it into the app cluster
    await eventually('the rotated token in the app cluster', async () => tokenOf((await appKubeconfigSecret())!) === rotated);
    await eventually('the binding Ready on the rotated credential', async () => {
      const b = await ac.get<Binding>(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', BINDING);
      return b.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    });
  });
});

describe('a tenant of the app cluster with rights in its own namespace only', () => {
  it("cannot make the konnector load another namespace's kubeconfig Secret, nor act on a binding outside klutch-bind", async () => {
    // The tenant: may write APIServiceBindings in tenant-x, nothing else (no Secrets anywhere).
    const NS = 'tenant-x';
    await ac.create(CoreResources.namespaces, { metadata: { name: NS } });
    await ac.create(CoreResources.serviceaccounts, { metadata: { name: 'tenant', namespace: NS } });
    const rbac = (plural: string, kind: string) => ({ group: 'rbac.authorization.k8s.io', version: 'v1', plural, namespaced: true, kind });
    await ac.create(rbac('roles', 'Role'), {
      metadata: { name: 'bindings', namespace: NS },
      rules: [{ apiGroups: ['klutch.anynines.com'], resources: ['apiservicebindings'], verbs: ['create', 'get', 'list', 'watch'] }],
    });
    await ac.create(rbac('rolebindings', 'RoleBinding'), {
      metadata: { name: 'tenant-bindings', namespace: NS },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'bindings' },
      subjects: [{ kind: 'ServiceAccount', name: 'tenant', namespace: NS }],
    });
    const tr = await ac.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${NS}/serviceaccounts/tenant/token`, {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } },
    });
    const own = loadKubeconfigFile(app.kubeconfigPath);
    const tenant = new KubeClient({ server: own.server, caData: own.caData, token: tr.status.token });
    try {
      const real = await ac.get<KubeObject & { spec: { kubeconfigSecretRef: { namespace: string; name: string; key: string } } }>(
        BINDING_RESOURCES.apiServiceBindings,
        'klutch-bind',
        BINDING,
      );
      const ref = real.spec.kubeconfigSecretRef;
      // the premise: the tenant cannot read the provider kubeconfig itself
      await expect(tenant.get(CoreResources.secrets, ref.namespace, ref.name)).rejects.toMatchObject({ code: 403 });
      const connections = konnector.providerConnections().length;
      // a binding in its own namespace, pointing at klutch-bind's kubeconfig Secret
      await tenant.create(BINDING_RESOURCES.apiServiceBindings, {
        metadata: { name: 'gadgets.evil.example.com', namespace: NS },
        spec: { kubeconfigSecretRef: { namespace: ref.namespace, name: ref.name, key: 'kubeconfig' } },
      });
      const secretValid = async (ns: string, name: string) =>
        (await ac.get<Binding>(BINDING_RESOURCES.apiServiceBindings, ns, name)).status?.conditions?.find((c) => c.type === 'SecretValid');
      const refusedCond = await eventually('SecretValid on the tenant binding', () => secretValid(NS, 'gadgets.evil.example.com'));
      expect(refusedCond).toMatchObject({ status: 'False', reason: 'BindingNamespaceNotAllowed' });
      expect(refusedCond.message).toContain('served only in namespace klutch-bind');
      expect(refusedCond.message).not.toContain('kubeconfig for');
      const b = await ac.get<Binding>(BINDING_RESOURCES.apiServiceBindings, NS, 'gadgets.evil.example.com');
      expect(b.metadata.finalizers ?? []).toEqual([]);
      expect(konnector.providerConnections()).toHaveLength(connections);

      // in klutch-bind (an admin's binding), the kubeconfig Secret must be beside the binding too
      await ac.create(CoreResources.secrets, { metadata: { name: 'elsewhere', namespace: NS }, data: { kubeconfig: (await appKubeconfigSecret())! } });
      await ac.create(BINDING_RESOURCES.apiServiceBindings, {
        metadata: { name: 'gadgets.other.example.com', namespace: 'klutch-bind' },
        spec: { kubeconfigSecretRef: { namespace: NS, name: 'elsewhere', key: 'kubeconfig' } },
      });
      const outside = await eventually('SecretValid on the binding with a Secret elsewhere', () => secretValid('klutch-bind', 'gadgets.other.example.com'));
      expect(outside).toMatchObject({ status: 'False', reason: 'KubeconfigSecretOutsideNamespace' });
      expect(konnector.providerConnections()).toHaveLength(connections);
      await ac.delete(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', 'gadgets.other.example.com');
    } finally {
      tenant.close();
    }
  });
});

/** The provider kubeconfig the app cluster holds (what the konnector uses). */
async function appKubeconfigSecret(): Promise<string | undefined> {
  const b = await ac.get<KubeObject & { spec: { kubeconfigSecretRef: { namespace: string; name: string; key: string } } }>(
    BINDING_RESOURCES.apiServiceBindings,
    'klutch-bind',
    BINDING,
  );
  const r = b.spec.kubeconfigSecretRef;
  return (await ac.get<Secret>(CoreResources.secrets, r.namespace, r.name)).data?.[r.key];
}

describe('a status fight over a bound object', () => {
  /** Writes the app-cluster copy's status, as something in the app cluster fighting the provider would (retried on 409). */
  const writeDownStatus = async (phase: string) => {
    for (;;) {
      const down = await ac.get<KubeObject & { status?: { phase?: string } }>(MANGO, 'team-fight', 'db');
      try {
        await ac.updateStatus(MANGO, { ...down, status: { phase } });
        return;
      } catch (e) {
        if ((e as { code?: number }).code !== 409) throw e;
      }
    }
  };
  const phase = async () => (await ac.get<KubeObject & { status?: { phase?: string } }>(MANGO, 'team-fight', 'db')).status?.phase;

  it(`costs the konnector at most ${WRITE_BUDGET} writes of the object per window; then it backs off and the binding says so until the fight ends`, async () => {
    const teamNs = await boundNamespace('team-fight');
    const up = await eventually('the upstream copy', () => env.kube.getOrNull(MANGO, teamNs, 'db'));
    await env.kube.updateStatus(MANGO, { ...up, status: { phase: 'Ready' } });
    await eventually('the status down', async () => (await phase()) === 'Ready');
    // The app side keeps rewriting the status the provider owns; each time the konnector writes it back,
    // until the object's write budget is spent.
    let rewrites = 0;
    while (!(await conditionOf(BINDING, 'WriteBudgetExhausted')) && rewrites < 3 * WRITE_BUDGET) {
      await writeDownStatus(`fight-${rewrites}`);
      rewrites++;
      await eventually('written back, or the budget spent', async () => (await phase()) === 'Ready' || !!(await conditionOf(BINDING, 'WriteBudgetExhausted')));
    }
    // one write brought the status down, so the budget ran out at the WRITE_BUDGET-th rewrite (one earlier
    // if a write of the konnector met a 409 from a rewrite racing it: an attempt counts)
    expect(rewrites).toBeGreaterThanOrEqual(WRITE_BUDGET - 1);
    expect(rewrites).toBeLessThanOrEqual(WRITE_BUDGET);
    const cond = (await conditionOf(BINDING, 'WriteBudgetExhausted'))!;
    expect(cond).toMatchObject({ status: 'True', reason: 'WriteBudgetExhausted' });
    expect(cond.message).toContain('status of mangodbs team-fight/db');
    expect(cond.message).toContain('--write-budget');
    // it backs off: the rewritten status stays
    const last = await phase();
    expect(last).toBe(`fight-${rewrites - 1}`);
    await never('the konnector writes the status again within the window', async () => (await phase()) !== last, 3000);
    const ev = await eventually('a WriteBudgetExhausted Event', async () => (await bindingEvents(BINDING)).find((e) => e.reason === 'WriteBudgetExhausted'));
    expect(ev.message).toContain('team-fight/db');
    expect(await metricValue(konnector, 'klutch_konnector_limited_total', { limit: 'WriteBudgetExhausted' })).toBeGreaterThan(0);
    // The fight ends (the app side stops rewriting and puts the provider's status back): the condition goes.
    await writeDownStatus('Ready');
    await eventually('WriteBudgetExhausted gone', async () => !(await conditionOf(BINDING, 'WriteBudgetExhausted')));
  });
});

/** The app cluster's API server, as the konnector's ServiceAccount (a TokenRequest token of `klutch-bind/konnector`). */
async function konnectorTokenAccess() {
  const access = loadKubeconfigFile(app.kubeconfigPath);
  return {
    server: access.server,
    caData: access.caData,
    tlsServerName: access.tlsServerName,
    skipTLSVerify: access.skipTLSVerify,
    token: await tokenFor(ac, 'klutch-bind', 'konnector', 600),
  };
}

describe("the Konnector construct's defaults: no namespace named anywhere", () => {
  it("renders --allow-namespace=default and Secret rights there only: its token gets 403 on another namespace's Secrets and cluster-wide", async () => {
    const other = 'team-unnamed';
    await ac.create(CoreResources.namespaces, { metadata: { name: other } });
    await ac.create(CoreResources.secrets, { metadata: { name: 'db-password', namespace: other }, stringData: { password: 'not for the konnector' } });
    const manifests = konnectorManifests({ boundApis: [{ group: 'mangodb.com', resources: ['mangodbs'] }] });
    const deployment = manifests.find((o) => o.kind === 'Deployment')!;
    const args: string[] = deployment.spec.template.spec.containers[0].args;
    expect(args.filter((a) => a.startsWith('--allow-namespace') || a === '--all-namespaces')).toEqual(['--allow-namespace=default']);
    const kinds = ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'];
    await applyManifests(app.kubeConfig, manifests.filter((o) => kinds.includes(o.kind)) as never[]);
    const sa = new KubeClient(await konnectorTokenAccess());
    try {
      await eventually('the RBAC in force', async () => !!(await sa.list(CoreResources.secrets, 'default').catch(() => undefined)));
      await sa.list(CoreResources.secrets, 'klutch-bind');
      await expect(sa.get(CoreResources.secrets, other, 'db-password')).rejects.toMatchObject({ code: 403 });
      await expect(sa.list(CoreResources.secrets, other)).rejects.toMatchObject({ code: 403 });
      await expect(sa.list(CoreResources.secrets)).rejects.toMatchObject({ code: 403 });
      await expect(sa.list(CoreResources.configmaps)).rejects.toMatchObject({ code: 403 });
    } finally {
      sa.close();
    }
  });
});

describe('a konnector with a namespace allow-list, on the RBAC the Konnector construct renders', () => {
  const ALLOWED = 'team-allowed';
  const DENIED = 'team-denied';

  it('has Secret rights only in the allowed namespace (and its own); an object elsewhere syncs nothing and the binding names the namespace and the flag', async () => {
    for (const n of [ALLOWED, DENIED]) await ac.create(CoreResources.namespaces, { metadata: { name: n } });
    const kinds = ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'];
    const rbac = konnectorManifests({ boundApis: [{ group: 'mangodb.com', resources: ['mangodbs'] }], namespaces: KonnectorNamespaces.only(ALLOWED) }).filter(
      (o) => kinds.includes(o.kind),
    );
    await applyManifests(app.kubeConfig, rbac as never[]);
    const saAccess = await konnectorTokenAccess();
    const sa = new KubeClient(saAccess);
    let narrowed: Konnector | undefined;
    await konnector.stop();
    try {
      await eventually('the RBAC in force', async () => !!(await sa.list(CoreResources.secrets, ALLOWED).catch(() => undefined)));
      // What the konnector's own token may do: Secrets in the allowed namespace and in its own, nowhere else.
      await sa.list(CoreResources.secrets, 'klutch-bind');
      await expect(sa.list(CoreResources.secrets, DENIED)).rejects.toMatchObject({ code: 403 });
      await expect(sa.list(CoreResources.secrets)).rejects.toMatchObject({ code: 403 });
      await expect(sa.create(CoreResources.configmaps, { metadata: { name: 'probe', namespace: DENIED } })).rejects.toMatchObject({ code: 403 });

      narrowed = await startKonnector({ appKubeConfig: saAccess, allowedNamespaces: [ALLOWED] });
      // The allowed namespace syncs as before: its object goes up, the provider's credentials come down.
      await ac.create(MANGO, { apiVersion: 'mangodb.com/v1alpha1', kind: 'MangoDB', metadata: { name: 'db', namespace: ALLOWED }, spec: { tier: 'Shared' } });
      const pns = await eventually(`provider namespace of ${ALLOWED}`, async () => {
        const ans = await consumer.getOrNull<KubeObject & { status?: { namespace?: string } }>(BINDING_RESOURCES.apiServiceNamespaces, clusterNs, ALLOWED);
        return ans?.status?.namespace;
      });
      await env.kube.create(CoreResources.secrets, { metadata: { name: 'db-creds', namespace: pns }, stringData: { password: 'ok' } });
      await eventually(`the credentials Secret in ${ALLOWED}`, () => ac.getOrNull(CoreResources.secrets, ALLOWED, 'db-creds'));

      // An object in another namespace: nothing goes up, the binding names the namespace and the flag.
      await ac.create(MANGO, { apiVersion: 'mangodb.com/v1alpha1', kind: 'MangoDB', metadata: { name: 'db', namespace: DENIED }, spec: { tier: 'Shared' } });
      const cond = await eventually('NamespaceNotAllowed on the binding', () => conditionOf(BINDING, 'NamespaceNotAllowed'));
      expect(cond).toMatchObject({ status: 'True', reason: 'NamespaceNotAllowed' });
      const ev = await eventually(`a NamespaceNotAllowed Event naming ${DENIED}`, async () =>
        (await bindingEvents(BINDING)).find((e) => e.reason === 'NamespaceNotAllowed' && e.message?.includes(`namespace ${DENIED} `)),
      );
      expect(ev.message).toContain(`--allow-namespace=${DENIED}`);
      expect(await metricValue(narrowed, 'klutch_konnector_limited_total', { limit: 'NamespaceNotAllowed' })).toBeGreaterThan(0);
      await never(`an APIServiceNamespace for ${DENIED}`, () => consumer.getOrNull(BINDING_RESOURCES.apiServiceNamespaces, clusterNs, DENIED), 3000);
    } finally {
      sa.close();
      await narrowed?.stop();
      konnector = await startKonnector();
    }
  });
});
