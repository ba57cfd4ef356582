/**
 * The provider connection's reconcilers with their injected dependencies faked (caches as Maps, the
 * API calls they make recorded); the real-cluster behaviour stays in test/integration/konnector.
 */
import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { CoreResources, type KubeObject, type ResourceRef } from '../../../runtime/core/client.js';
import { silentLogger } from '../../../runtime/core/logger.js';
import { ObjectStore } from '../../../runtime/core/object-cache.js';
import { konnectorMetrics } from '../../../runtime/konnector/metrics.js';
import { HeartbeatReconciler, goDuration, heartbeatRequeueMs } from '../../../runtime/konnector/provider-heartbeat.js';
import { NamespaceReconciler } from '../../../runtime/konnector/provider-namespaces.js';
import type { AttachedBindings } from '../../../runtime/konnector/provider-state.js';
import type { APIServiceBinding, APIServiceNamespace, ClusterBinding } from '../../../runtime/konnector/types.js';
import { BINDING_RESOURCES } from '../../../contract/index.js';
import { FakeApiServer, type Verb } from '../../support/fake-api-server.js';
import { ApiError } from '../../../runtime/core/client.js';
import { CREDENTIAL_EXPIRY_ANNOTATION, SEALED_KUBECONFIG_ANNOTATION, sealKubeconfig } from '../../../contract/credential.js';

/** The resources the planted objects are of, by plural. */
const RESOURCES: Record<string, ResourceRef> = {
  secrets: CoreResources.secrets,
  clusterbindings: BINDING_RESOURCES.clusterBindings,
  apiservicenamespaces: BINDING_RESOURCES.apiServiceNamespaces,
};

/** A FakeApiServer holding `objects` (by `plural/namespace/name`), whose calls `fail` (by `verb plural`) throw. */
function fakeClient(objects: Record<string, KubeObject> = {}, fail: Record<string, Error> = {}): FakeApiServer {
  const api = new FakeApiServer();
  for (const [k, o] of Object.entries(objects)) {
    const [plural, namespace, name] = k.split('/');
    api.seed(RESOURCES[plural], { ...o, metadata: { ...o.metadata, name, ...(namespace ? { namespace } : {}) } });
  }
  for (const [k, e] of Object.entries(fail)) {
    const [verb, plural] = k.split(' ');
    api.fail(verb as Verb, e, { resource: plural });
  }
  return api;
}

/** A provider kubeconfig as the Secret carries it (base64). */
const kc = (o: { server?: string; token?: string; namespace?: string; user?: string } = {}) =>
  Buffer.from(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'p',
      clusters: [{ name: 'p', cluster: { server: o.server ?? 'https://cp.example:6443' } }],
      users: [{ name: 'p', user: o.user ? JSON.parse(o.user) : { token: o.token ?? 't1' } }],
      contexts: [{ name: 'p', context: { cluster: 'p', user: 'p', namespace: o.namespace ?? 'cluster-a' } }],
    }),
  ).toString('base64');
const NEW = kc({ token: 'new' });
const OLD = kc({ token: 'old' });
const V1 = kc({ token: 'v1' });
const V2 = kc({ token: 'v2' });

const attached = (...keys: string[]): AttachedBindings => ({
  has: (k) => keys.includes(k),
  keys: () => keys,
  named: (n) => keys.filter((k) => k.endsWith(`/${n}`)),
});

function heartbeat(o: {
  cb?: ClusterBinding;
  provider?: FakeApiServer;
  consumer?: FakeApiServer;
  bindings?: Record<string, APIServiceBinding>;
  controlPlaneMode?: boolean;
  intervalMs?: number;
  random?: () => number;
  now?: () => number;
  rotationKey?: Buffer;
}) {
  const provider = o.provider ?? fakeClient();
  const consumer = o.consumer ?? fakeClient();
  if (o.cb) provider.seed(BINDING_RESOURCES.clusterBindings, o.cb);
  let changes = 0;
  const r = new HeartbeatReconciler({
    provider: provider.client,
    bindingClient: consumer.client,
    clusterNamespace: 'cluster-a',
    clusterBindings: ObjectStore.of(...(o.cb ? [o.cb] : [])),
    bindings: attached(...Object.keys(o.bindings ?? {})),
    getBinding: (k) => o.bindings?.[k],
    log: silentLogger,
    metrics: konnectorMetrics(new Registry()),
    heartbeatIntervalMs: o.intervalMs ?? 300_000,
    version: 'v1.2.3',
    controlPlaneMode: o.controlPlaneMode ?? false,
    rotationKey: o.rotationKey,
    changed: () => void changes++,
    random: o.random ?? (() => 0.5),
    now: o.now,
  });
  return { r, provider, consumer, changes: () => changes };
}

const cb = (status: ClusterBinding['status'] = {}, spec: Partial<ClusterBinding['spec']> = {}): ClusterBinding =>
  ({ metadata: { name: 'cluster', namespace: 'cluster-a' }, spec: { providerPrettyName: 'Provider', ...spec }, status }) as ClusterBinding;

describe('HeartbeatReconciler', () => {
  it('reports a missing ClusterBinding and writes nothing', async () => {
    const t = heartbeat({});
    await t.r.reconcile();
    expect(t.r.state).toMatchObject({ status: 'False', reason: 'ClusterBindingNotFound' });
    expect(t.provider.calls).toEqual([]);
    expect(t.changes()).toBe(1);
  });

  it('writes interval, version and time into the ClusterBinding status, then reports HeartbeatSent', async () => {
    const t = heartbeat({ cb: cb(), controlPlaneMode: true });
    const res = await t.r.reconcile();
    const [patch] = t.provider.calls;
    expect(patch).toMatchObject({ verb: 'mergePatch', resource: 'clusterbindings', namespace: 'cluster-a', name: 'cluster' });
    expect(patch.body).toEqual({
      status: { heartbeatInterval: '5m0s', konnectorVersion: 'v1.2.3', lastHeartbeatTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) },
    });
    expect(t.r.state).toEqual({ status: 'True', reason: 'HeartbeatSent', message: 'heartbeat every 2m30s (±10 % jitter)' });
    expect(t.r.providerPrettyName).toBe('Provider');
    expect(t.r.lastHeartbeat).toBeInstanceOf(Date);
    expect(res.requeueAfterMs).toBe(150_000);
  });

  it('does not rewrite a fresh heartbeat', async () => {
    const fresh = cb({ lastHeartbeatTime: new Date().toISOString(), heartbeatInterval: goDuration(300_000), konnectorVersion: 'v1.2.3' });
    const t = heartbeat({ cb: fresh, controlPlaneMode: true });
    await t.r.reconcile();
    expect(t.provider.calls).toEqual([]);
    expect(t.r.state.reason).toBe('HeartbeatSent');
  });

  it('names the ClusterBinding and the missing permission when the patch fails', async () => {
    const t = heartbeat({ cb: cb(), controlPlaneMode: true, provider: fakeClient({}, { 'mergePatch clusterbindings': new Error('forbidden') }) });
    await expect(t.r.reconcile()).rejects.toThrow('forbidden');
    expect(t.r.state).toMatchObject({
      status: 'False',
      reason: 'ClusterBindingUpdateFailed',
      message: expect.stringContaining('ClusterBinding cluster-a/cluster: forbidden; check that the provider credentials may patch clusterbindings/status'),
    });
  });

  it('rotates the provider kubeconfig into the consumer Secret of each attached binding when it differs', async () => {
    const provider = fakeClient({ 'secrets/cluster-a/kc': { metadata: { name: 'kc' }, data: { kubeconfig: NEW } } as KubeObject });
    const consumer = fakeClient({ 'secrets/klutch-bind/kubeconfig-x': { metadata: { name: 'kubeconfig-x' }, data: { kubeconfig: OLD } } as KubeObject });
    const binding = {
      metadata: { name: 'pgs.a.com' },
      spec: { kubeconfigSecretRef: { namespace: 'klutch-bind', name: 'kubeconfig-x', key: 'kubeconfig' } },
    } as APIServiceBinding;
    const t = heartbeat({
      cb: cb({}, { kubeconfigSecretRef: { name: 'kc', key: 'kubeconfig' } }),
      provider,
      consumer,
      bindings: { 'klutch-bind/pgs.a.com': binding },
    });
    await t.r.reconcile();
    expect(consumer.calls.filter((c) => c.verb === 'mergePatch')).toEqual([
      { verb: 'mergePatch', resource: 'secrets', namespace: 'klutch-bind', name: 'kubeconfig-x', body: { data: { kubeconfig: NEW } } },
    ]);
  });

  it('requeues after interval/2 × 0.9, 1 and 1.1 for random() = 0, 0.5 and 1, never below 1000 ms', async () => {
    const requeueFor = async (random: number, intervalMs = 300_000) => {
      const t = heartbeat({ cb: cb(), controlPlaneMode: true, random: () => random, intervalMs });
      return (await t.r.reconcile()).requeueAfterMs;
    };
    expect(await requeueFor(0)).toBe(135_000);
    expect(await requeueFor(0.5)).toBe(150_000);
    expect(await requeueFor(1)).toBe(165_000);
    expect(await requeueFor(0.25)).toBe(142_500);
    // the floor: 1 s interval → 500 ms × 0.9 … 1.1, raised to 1000 ms
    expect(await requeueFor(0, 1000)).toBe(1000);
    expect(await requeueFor(1, 1000)).toBe(1000);
    // a random source out of range is clamped to ±10 %
    expect(heartbeatRequeueMs(300_000, () => 7)).toBe(165_000);
    expect(heartbeatRequeueMs(300_000, () => -1)).toBe(135_000);
    expect(heartbeatRequeueMs(300_000, () => NaN)).toBe(150_000);
  });

  it('keeps the shortest jittered period above the "fresh" threshold: every timer reconcile writes a heartbeat', async () => {
    let now = Date.parse('2030-01-01T00:00:00Z');
    const c = cb();
    const t = heartbeat({ cb: c, controlPlaneMode: true, random: () => 0, now: () => now });
    const patches = () => t.provider.calls.filter((x) => x.verb === 'mergePatch').length;
    for (let i = 1; i <= 3; i++) {
      const { requeueAfterMs } = await t.r.reconcile();
      expect(patches()).toBe(i);
      c.status = (t.provider.calls.at(-1)!.body as { status: ClusterBinding['status'] }).status; // the watch echo
      await t.r.reconcile();
      expect(patches()).toBe(i);
      now += requeueAfterMs!;
    }
  });

  it('writes over a lastHeartbeatTime in the future (written with the consumer kubeconfig) instead of keeping it', async () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    const future = cb();
    future.status = { lastHeartbeatTime: '2099-01-01T00:00:00Z', heartbeatInterval: '5m0s', konnectorVersion: 'v1.2.3' };
    const t = heartbeat({ cb: future, controlPlaneMode: true, now: () => now });
    await t.r.reconcile();
    const patch = t.provider.calls.find((x) => x.verb === 'mergePatch')?.body as { status: ClusterBinding['status'] } | undefined;
    expect(patch?.status?.lastHeartbeatTime).toBe('2030-01-01T00:00:00Z');
    // within a minute of skew it is still taken as fresh
    const skewed = cb();
    skewed.status = { lastHeartbeatTime: '2030-01-01T00:00:30Z', heartbeatInterval: '5m0s', konnectorVersion: 'v1.2.3' };
    const t2 = heartbeat({ cb: skewed, controlPlaneMode: true, now: () => now });
    await t2.r.reconcile();
    expect(t2.provider.calls.filter((x) => x.verb === 'mergePatch')).toEqual([]);
  });

  describe('a sealed rotation (klutch-backend: the consumer credential cannot read the kubeconfig Secret)', () => {
    const KEY = Buffer.alloc(32, 1);
    const sealedCb = (sealed: string, extra: Record<string, string> = {}) => {
      const c = cb({}, { kubeconfigSecretRef: { name: 'kc', key: 'kubeconfig' } });
      c.metadata.annotations = { [SEALED_KUBECONFIG_ANNOTATION]: sealed, ...extra };
      return c;
    };
    const run = async (sealed: string, o: { rotationKey?: Buffer; extra?: Record<string, string>; now?: () => number; provider?: FakeApiServer } = {}) => {
      const provider =
        o.provider ?? fakeClient({ 'secrets/cluster-a/kc': { metadata: { name: 'kc' }, data: { kubeconfig: kc({ token: 'from-secret' }) } } as KubeObject });
      const consumer = fakeClient({ 'secrets/klutch-bind/kubeconfig-x': { metadata: { name: 'kubeconfig-x' }, data: { kubeconfig: OLD } } as KubeObject });
      const binding = {
        metadata: { name: 'pgs.a.com', namespace: 'klutch-bind' },
        spec: { kubeconfigSecretRef: { namespace: 'klutch-bind', name: 'kubeconfig-x', key: 'kubeconfig' } },
      } as APIServiceBinding;
      const t = heartbeat({
        cb: sealedCb(sealed, o.extra),
        provider,
        consumer,
        bindings: { 'klutch-bind/pgs.a.com': binding },
        rotationKey: 'rotationKey' in o ? o.rotationKey : KEY,
        now: o.now,
      });
      await t.r.reconcile().catch(() => undefined);
      return { t, provider, consumer, patches: consumer.calls.filter((c) => c.verb === 'mergePatch') };
    };
    const open = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');

    it('opens the ClusterBinding annotation with the rotation key and never reads the provider Secret', async () => {
      const { provider, patches, t } = await run(sealKubeconfig(KEY, 'cluster-a', open(NEW)));
      expect(patches).toEqual([
        { verb: 'mergePatch', resource: 'secrets', namespace: 'klutch-bind', name: 'kubeconfig-x', body: { data: { kubeconfig: NEW } } },
      ]);
      expect(provider.calls.filter((c) => c.resource === 'secrets')).toEqual([]);
      expect(t.r.state.message).toBe('heartbeat every 2m30s (±10 % jitter)');
    });

    it('refuses a seal of another key or another cluster namespace, and a kubeconfig without a rotation key, keeping the working one', async () => {
      const other = await run(sealKubeconfig(Buffer.alloc(32, 2), 'cluster-a', open(NEW)));
      expect(other.patches).toEqual([]);
      expect(other.t.r.state.message).toContain('credential rotation refused: ClusterBinding cluster-a/cluster: annotation');
      const otherNs = await run(sealKubeconfig(KEY, 'cluster-b', open(NEW)));
      expect(otherNs.patches).toEqual([]);
      const noKey = await run(sealKubeconfig(KEY, 'cluster-a', open(NEW)), { rotationKey: undefined });
      expect(noKey.patches).toEqual([]);
      expect(noKey.t.r.state.message).toContain("credential rotation unavailable: this binding's kubeconfig has no rotation key");
    });

    it('checks an opened kubeconfig as strictly as a Secret (no token file)', async () => {
      const bad = open(kc({ user: JSON.stringify({ tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token' }) }));
      const { patches, t } = await run(sealKubeconfig(KEY, 'cluster-a', bad));
      expect(patches).toEqual([]);
      expect(t.r.state.message).toContain('credential rotation refused');
    });

    it('says when the maximum life ends within a week, and why a 401 came after it', async () => {
      const now = Date.parse('2030-01-10T00:00:00Z');
      const soon = await run(sealKubeconfig(KEY, 'cluster-a', open(OLD)), {
        extra: { [CREDENTIAL_EXPIRY_ANNOTATION]: '2030-01-12T00:00:00.000Z' },
        now: () => now,
      });
      expect(soon.t.r.state.message).toBe(
        'heartbeat every 2m30s (±10 % jitter); the provider credential reaches its maximum life at 2030-01-12T00:00:00.000Z: run kubectl bind again before then',
      );
      const far = await run(sealKubeconfig(KEY, 'cluster-a', open(OLD)), {
        extra: { [CREDENTIAL_EXPIRY_ANNOTATION]: '2030-02-12T00:00:00.000Z' },
        now: () => now,
      });
      expect(far.t.r.state.message).toBe('heartbeat every 2m30s (±10 % jitter)');
      const unauthorized = new ApiError(401, 'Unauthorized', 'Unauthorized', 'PATCH', '/x');
      const ended = await run(sealKubeconfig(KEY, 'cluster-a', open(OLD)), {
        extra: { [CREDENTIAL_EXPIRY_ANNOTATION]: '2030-01-09T00:00:00.000Z' },
        now: () => now,
        provider: fakeClient({}, { 'mergePatch clusterbindings': unauthorized }),
      });
      expect(ended.t.r.state).toMatchObject({
        status: 'False',
        reason: 'CredentialRejected',
        message: expect.stringContaining('(its maximum life ended at 2030-01-09T00:00:00.000Z); run kubectl bind again'),
      });
    });
  });

  describe('a hostile provider kubeconfig in the rotation', () => {
    const rotate = async (value: string) => {
      const provider = fakeClient({ 'secrets/cluster-a/kc': { metadata: { name: 'kc' }, data: { kubeconfig: value } } as KubeObject });
      const consumer = fakeClient({ 'secrets/klutch-bind/kubeconfig-x': { metadata: { name: 'kubeconfig-x' }, data: { kubeconfig: OLD } } as KubeObject });
      const binding = {
        apiVersion: 'klutch.anynines.com/v1alpha1',
        metadata: { name: 'pgs.a.com', namespace: 'klutch-bind', uid: 'b-uid' },
        spec: { kubeconfigSecretRef: { namespace: 'klutch-bind', name: 'kubeconfig-x', key: 'kubeconfig' } },
      } as APIServiceBinding;
      const t = heartbeat({
        cb: cb({}, { kubeconfigSecretRef: { name: 'kc', key: 'kubeconfig' } }),
        provider,
        consumer,
        bindings: { 'klutch-bind/pgs.a.com': binding },
      });
      await t.r.reconcile();
      return { t, consumer };
    };

    it('refuses a kubeconfig that names a token file (the konnector would send its own ServiceAccount token)', async () => {
      const { t, consumer } = await rotate(
        kc({ server: 'https://attacker.example', user: '{"tokenFile":"/var/run/secrets/kubernetes.io/serviceaccount/token"}' }),
      );
      expect(consumer.calls.filter((c) => c.verb === 'mergePatch')).toEqual([]);
      expect(t.r.state.status).toBe('True'); // the heartbeat itself went out
      expect(t.r.state.message).toContain('credential rotation refused');
      expect(t.r.state.message).toContain('tokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token"');
    });

    it('refuses a kubeconfig for another cluster namespace', async () => {
      const { t, consumer } = await rotate(kc({ namespace: 'cluster-b' }));
      expect(consumer.calls.filter((c) => c.verb === 'mergePatch')).toEqual([]);
      expect(t.r.state.message).toContain('names cluster namespace "cluster-b", not "cluster-a"');
    });

    it('copies a kubeconfig for another server and records a ProviderServerChanged Warning event on the binding', async () => {
      const { consumer } = await rotate(kc({ server: 'https://elsewhere.example:443', token: 'new' }));
      expect(consumer.calls.filter((c) => c.verb === 'mergePatch')).toHaveLength(1);
      const ev = consumer.calls.find((c) => c.verb === 'create' && c.resource === 'events')?.body as Record<string, any>;
      expect(ev).toMatchObject({
        type: 'Warning',
        reason: 'ProviderServerChanged',
        metadata: { namespace: 'klutch-bind' },
        involvedObject: { kind: 'APIServiceBinding', name: 'pgs.a.com', namespace: 'klutch-bind', uid: 'b-uid' },
      });
      expect(ev.message).toContain('from API server https://cp.example:6443 to https://elsewhere.example:443');
    });

    it('records no event when only the credentials changed', async () => {
      const { consumer } = await rotate(NEW);
      expect(consumer.calls.filter((c) => c.verb === 'mergePatch')).toHaveLength(1);
      expect(consumer.calls.filter((c) => c.verb === 'create')).toEqual([]);
    });
  });

  describe('credential rotation on the echo of its own heartbeat', () => {
    const secret = (kubeconfig: string) => ({ metadata: { name: 'kc' }, data: { kubeconfig } }) as KubeObject;
    const setup = () => {
      let now = Date.parse('2030-01-01T00:00:00Z');
      const src = secret(V1);
      const provider = fakeClient({ 'secrets/cluster-a/kc': src });
      const consumer = fakeClient({ 'secrets/klutch-bind/kubeconfig-x': secret(OLD) });
      const binding = {
        metadata: { name: 'pgs.a.com' },
        spec: { kubeconfigSecretRef: { namespace: 'klutch-bind', name: 'kubeconfig-x', key: 'kubeconfig' } },
      } as APIServiceBinding;
      const c = cb({}, { kubeconfigSecretRef: { name: 'kc', key: 'kubeconfig' } });
      const t = heartbeat({ cb: c, provider, consumer, bindings: { 'klutch-bind/pgs.a.com': binding }, now: () => now });
      return {
        t,
        c,
        binding,
        provider,
        consumer,
        advance: (ms: number) => void (now += ms),
        /** The informer delivers the status the konnector just patched. */
        echo: () => void (c.status = (provider.calls.filter((x) => x.verb === 'mergePatch').at(-1)!.body as { status: ClusterBinding['status'] }).status),
        secretGets: () => provider.calls.filter((x) => x.verb === 'getOrNull' && x.resource === 'secrets').length,
        consumerPatches: () => consumer.calls.filter((x) => x.verb === 'mergePatch').map((x) => x.body),
      };
    };

    it('reads the provider Secret once per heartbeat: the reconcile on the echo makes no second GET', async () => {
      const s = setup();
      await s.t.r.reconcile();
      expect(s.secretGets()).toBe(1);
      expect(s.consumerPatches()).toEqual([{ data: { kubeconfig: V1 } }]);
      s.echo();
      s.advance(200);
      await s.t.r.reconcile();
      expect(s.secretGets()).toBe(1);
      expect(s.consumer.calls.length).toBe(2); // the first reconcile's GET and PATCH, nothing since
      expect(s.provider.calls.filter((x) => x.verb === 'mergePatch').length).toBe(1);
      expect(s.t.r.state).toEqual({ status: 'True', reason: 'HeartbeatSent', message: 'heartbeat every 2m30s (±10 % jitter)' });
    });

    it('keeps the note of the skipped check', async () => {
      const s = setup();
      s.c.spec.kubeconfigSecretRef = { name: 'kc', key: 'other' };
      await s.t.r.reconcile();
      s.echo();
      await s.t.r.reconcile();
      expect(s.secretGets()).toBe(1);
      expect(s.t.r.state.message).toBe(
        'heartbeat every 2m30s (±10 % jitter); credential rotation unavailable: Secret cluster-a/kc on the provider has no key "other"',
      );
    });

    it('reads it again on the next timer heartbeat and copies a changed kubeconfig to the consumer Secret', async () => {
      const s = setup();
      const { requeueAfterMs } = await s.t.r.reconcile();
      s.echo();
      await s.t.r.reconcile();
      expect(s.secretGets()).toBe(1);
      s.provider.seed(CoreResources.secrets, { metadata: { name: 'kc', namespace: 'cluster-a' }, data: { kubeconfig: V2 } } as KubeObject); // the provider kubeconfig is rotated between two heartbeats
      s.advance(requeueAfterMs!);
      await s.t.r.reconcile();
      expect(s.secretGets()).toBe(2);
      expect(s.consumerPatches()).toEqual([{ data: { kubeconfig: V1 } }, { data: { kubeconfig: V2 } }]);
    });

    it('reads it again on the echo when the Secret reference or the attached consumer Secrets changed', async () => {
      const s = setup();
      await s.t.r.reconcile();
      s.echo();
      s.c.spec.kubeconfigSecretRef = { name: 'kc', key: 'renamed' };
      await s.t.r.reconcile();
      expect(s.secretGets()).toBe(2);
      s.binding.spec.kubeconfigSecretRef = { namespace: 'klutch-bind', name: 'kubeconfig-y', key: 'kubeconfig' };
      await s.t.r.reconcile();
      expect(s.secretGets()).toBe(3);
      await s.t.r.reconcile();
      expect(s.secretGets()).toBe(3);
    });

    it('retries a failed read on the echo instead of remembering it', async () => {
      const provider = fakeClient({}, { 'getOrNull secrets': new Error('connection reset') });
      const c = cb({}, { kubeconfigSecretRef: { name: 'kc', key: 'kubeconfig' } });
      const t = heartbeat({ cb: c, provider });
      await t.r.reconcile();
      c.status = (provider.calls.find((x) => x.verb === 'mergePatch')!.body as { status: ClusterBinding['status'] }).status;
      await t.r.reconcile();
      expect(provider.calls.filter((x) => x.verb === 'getOrNull').length).toBe(2);
      expect(t.r.state.message).toContain('credential rotation unavailable: cannot read Secret cluster-a/kc on the provider');
    });
  });
});

describe('NamespaceReconciler', () => {
  const ans = (name: string, extra: Partial<APIServiceNamespace['metadata']> = {}) =>
    ({ metadata: { name, namespace: 'cluster-a', uid: `u-${name}`, ...extra } }) as APIServiceNamespace;
  const setup = (o: { ans?: APIServiceNamespace; appNamespaces?: string[]; synced?: boolean }) => {
    const provider = fakeClient(o.ans ? { [`apiservicenamespaces/cluster-a/${o.ans.metadata.name}`]: o.ans } : {});
    const r = new NamespaceReconciler({
      provider: provider.client,
      clusterNamespace: 'cluster-a',
      apiNamespaces: ObjectStore.of(...(o.ans ? [o.ans] : [])),
      appNamespaces: Object.assign(ObjectStore.of(...(o.appNamespaces ?? []).map((name) => ({ metadata: { name } }))), { hasSynced: () => o.synced ?? true }),
      log: silentLogger,
    });
    return { r, calls: provider.calls };
  };

  it('deletes the APIServiceNamespace (uid precondition) once the app-cluster Namespace is gone', async () => {
    const t = setup({ ans: ans('team-a'), appNamespaces: [] });
    await t.r.reconcile('team-a');
    expect(t.calls).toEqual([{ verb: 'delete', resource: 'apiservicenamespaces', namespace: 'cluster-a', name: 'team-a', opts: { uid: 'u-team-a' } }]);
  });

  it('keeps it while the Namespace exists or the APIServiceNamespace is already being deleted', async () => {
    const exists = setup({ ans: ans('team-a'), appNamespaces: ['team-a'] });
    await exists.r.reconcile('team-a');
    const deleting = setup({ ans: ans('team-a', { deletionTimestamp: new Date().toISOString() }) });
    await deleting.r.reconcile('team-a');
    expect([...exists.calls, ...deleting.calls]).toEqual([]);
  });

  it('waits for the app-cluster Namespace informer to sync', async () => {
    await expect(setup({ ans: ans('team-a'), synced: false }).r.reconcile('team-a')).rejects.toThrow('app-cluster Namespace informer not synced yet');
  });
});
