// Per-identity bind rate (one bucket for all replicas), the sweeper's decisions (incomplete binds, silent konnectors, dry run),
// unexpected errors on /readyz and in a metric, and the new flags.
import { describe, expect, it } from '@jest/globals';
import { BIND_RATE_LABEL, BIND_TOKENS_ANNOTATION, LeaseBindRateLimiter, LeaseIdentityLock, LimitError, refill } from '../../../runtime/backend/limits.js';
import { ABANDONED_CONDITION, ClusterSweeper } from '../../../runtime/backend/sweeper.js';
import { BackendMetrics } from '../../../runtime/backend/metrics.js';
import { BackendServer } from '../../../runtime/backend/server.js';
import { UnexpectedErrors, isNetworkError, isProgrammingError } from '../../../runtime/backend/unexpected.js';
import { parseBackendOptions } from '../../../runtime/backend/options.js';
import { BackendControllers } from '../../../runtime/backend/controllers.js';
import { ApiServerReplayStore, ReplayStoreUnavailable, loginStateLeaseName } from '../../../runtime/backend/login-state.js';
import { ApiError, CoreResources } from '../../../runtime/core/client.js';
import { FakeApiServer } from '../../support/fake-api-server.js';
import { ObjectStore } from '../../../runtime/core/object-cache.js';
import type { ClusterBinding } from '../../../runtime/core/binding-objects.js';
import { silentLogger, type KubeClient, type KubeObject } from '../../../runtime/core/index.js';

/** Leases on a FakeApiServer (resourceVersion conflicts, AlreadyExists); the real API server is test/integration/backend/ha-and-limits.test.ts. */
function leaseStore() {
  const api = new FakeApiServer();
  return { kube: api.client, leases: () => api.cache(CoreResources.leases).list() };
}

describe('refill', () => {
  it('starts full, refills at the rate, never above the burst', () => {
    expect(refill(undefined, 5000, 6, 2)).toEqual({ tokens: 2, at: 5000 });
    expect(refill({ tokens: 0, at: 0 }, 5000, 6, 2)).toEqual({ tokens: 0.5, at: 5000 }); // 6/min = one per 10 s
    expect(refill({ tokens: 1.5, at: 0 }, 60_000, 6, 2)).toEqual({ tokens: 2, at: 60_000 });
    expect(refill({ tokens: Number.NaN, at: 0 }, 1, 6, 2)).toEqual({ tokens: 2, at: 1 }); // an unreadable Lease is a new bucket
  });
});

describe('LeaseBindRateLimiter', () => {
  it('allows the burst, then refuses with 429 and Retry-After until the rate refills, per identity', async () => {
    let t = Date.parse('2026-01-01T00:00:00Z');
    const { kube } = leaseStore();
    const l = new LeaseBindRateLimiter({ kube, namespace: 'klutch-system', ratePerMinute: 6, burst: 2, now: () => t });
    await l.take('a', 'alice');
    await l.take('a', 'alice');
    const err = await l.take('a', 'alice').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LimitError);
    expect(err).toMatchObject({ status: 429, limit: 'bind_rate', retryAfterSeconds: 10 });
    expect((err as Error).message).toMatch(/alice made more than 2 binds in a row; at most 6 per minute/);
    await l.take('b', 'bob'); // another identity has its own bucket
    t += 10_000;
    await l.take('a', 'alice');
    await expect(l.take('a', 'alice')).rejects.toThrow(LimitError);
  });

  it('is one bucket for every replica: two limiters on the same Leases share the burst, also when racing', async () => {
    const t = Date.parse('2026-01-01T00:00:00Z');
    const { kube, leases } = leaseStore();
    const replicas = [0, 1].map(() => new LeaseBindRateLimiter({ kube, namespace: 'klutch-system', ratePerMinute: 6, burst: 3, now: () => t }));
    const results = await Promise.all(
      Array.from({ length: 10 }, (_v, i) =>
        replicas[i % 2]!.take('a', 'alice').then(
          () => 'ok',
          (e: LimitError) => e.limit,
        ),
      ),
    );
    expect(results.filter((r) => r === 'ok')).toHaveLength(3);
    expect(results.filter((r) => r !== 'ok').every((r) => r === 'bind_rate' || r === 'concurrent')).toBe(true);
    expect(leases()).toHaveLength(1);
    const [lease] = leases();
    expect(lease!.metadata.labels).toMatchObject({ [BIND_RATE_LABEL]: 'bucket' });
    expect(Number(lease!.metadata.annotations![BIND_TOKENS_ANNOTATION])).toBe(0);
  });

  it('sweeps the Leases of buckets that refilled completely; 0 is unlimited; bad settings name the flag', async () => {
    let t = Date.parse('2026-01-01T00:00:00Z');
    const { kube, leases } = leaseStore();
    const l = new LeaseBindRateLimiter({ kube, namespace: 'ns', ratePerMinute: 60, burst: 5, now: () => t, sweepIntervalMs: 1000 });
    await l.take('a', 'alice');
    t += 10_000; // alice's bucket is full again after 5 s
    await l.take('b', 'bob');
    expect(leases().map((x) => x.metadata.annotations![BIND_TOKENS_ANNOTATION])).toEqual(['4.0000']);
    const free = new LeaseBindRateLimiter({ kube, namespace: 'ns', ratePerMinute: 0, burst: 0 });
    for (let i = 0; i < 50; i++) await free.take('c', 'carol');
    expect(leases()).toHaveLength(1);
    expect(() => new LeaseBindRateLimiter({ kube, namespace: 'ns', ratePerMinute: -1, burst: 1 })).toThrow('--bind-rate: -1');
    expect(() => new LeaseBindRateLimiter({ kube, namespace: 'ns', ratePerMinute: 5, burst: 0 })).toThrow('--bind-burst: 0');
  });
});

/** Records the writes the sweeper makes (a unit-test stand-in for the API client). */
function recorder() {
  const calls: Array<{ op: string; obj?: KubeObject; name?: string }> = [];
  const kube = {
    create: async (_r: unknown, obj: KubeObject) => (calls.push({ op: 'create', obj }), obj),
    delete: async (_r: unknown, _ns: unknown, name: string) => void calls.push({ op: 'delete', name }),
    updateStatus: async (_r: unknown, obj: KubeObject) => (calls.push({ op: 'status', obj }), obj),
  } as unknown as KubeClient;
  return { kube, calls };
}

const T0 = Date.parse('2026-01-01T00:00:00Z');
const nsObj = (name: string, createdMsAgo: number, now: number): KubeObject => ({
  metadata: {
    name,
    uid: `uid-${name}`,
    creationTimestamp: new Date(now - createdMsAgo).toISOString(),
    labels: { 'example-backend.klutch.anynines.com/subject-hash': 'h1' },
    annotations: { 'example-backend.klutch.anynines.com/identity': 'alice#c1' },
  },
});

/** The objects the sweeper's caches hold. */
interface Cached {
  namespaces?: KubeObject[];
  clusterBindings?: ClusterBinding[];
  kubeconfigSecrets?: KubeObject[];
}

function sweeper(cached: Cached, opts: { dryRun?: boolean; staleAfterMs?: number; now: () => number }) {
  const cache = {
    namespaces: ObjectStore.of(...(cached.namespaces ?? [])),
    clusterBindings: ObjectStore.of(...(cached.clusterBindings ?? [])),
    kubeconfigSecrets: ObjectStore.of(...(cached.kubeconfigSecrets ?? [])),
  };
  const { kube, calls } = recorder();
  const metrics = new BackendMetrics();
  const s = new ClusterSweeper({
    kube,
    logger: silentLogger,
    metrics,
    orphanGraceMs: 60_000,
    staleAfterMs: opts.staleAfterMs ?? 0,
    noticeMs: 30_000,
    dryRun: opts.dryRun ?? false,
    now: opts.now,
    cache,
  });
  return { s, calls, metrics, cache };
}

describe('ClusterSweeper', () => {
  it('waits out the grace for a namespace without ClusterBinding, then records an event and deletes it', async () => {
    let now = T0;
    const ns = nsObj('cluster-a', 10_000, T0);
    const { s, calls, metrics } = sweeper({ namespaces: [ns] }, { now: () => now });
    expect(await s.reconcile('cluster-a')).toEqual({ requeueAfterMs: 51_000 });
    expect(calls).toEqual([]);
    now = T0 + 50_000;
    await s.reconcile('cluster-a');
    expect(calls.map((c) => c.op)).toEqual(['create', 'delete']);
    expect(calls[0].obj).toMatchObject({ reason: 'IncompleteBinding', type: 'Warning', involvedObject: { kind: 'Namespace', name: 'cluster-a' } });
    expect((calls[0].obj as unknown as { message: string }).message).toMatch(/ClusterBinding cluster missing 60s after the namespace was created/);
    expect(calls[1].name).toBe('cluster-a');
    expect(await metrics.registry.getSingleMetricAsString('klutch_backend_sweeps_total')).toContain('reason="incomplete",mode="delete"} 1');
  });

  it('leaves a completed bind alone and, in dry run, reports an incomplete one once without deleting', async () => {
    const now = T0;
    const done = nsObj('cluster-done', 999_000, now);
    const cb: ClusterBinding = {
      metadata: { name: 'cluster', namespace: 'cluster-done' },
      spec: { kubeconfigSecretRef: { name: 'kubeconfig', key: 'kubeconfig' }, providerPrettyName: 'provider' },
    };
    const secret = { metadata: { name: 'kubeconfig', namespace: 'cluster-done' } };
    const ok = sweeper({ namespaces: [done], clusterBindings: [cb], kubeconfigSecrets: [secret] }, { now: () => now });
    expect(await ok.s.reconcile('cluster-done')).toBeUndefined();
    expect(ok.calls).toEqual([]);

    const orphan = nsObj('cluster-b', 999_000, now);
    const dry = sweeper({ namespaces: [orphan] }, { dryRun: true, now: () => now });
    await dry.s.reconcile('cluster-b');
    await dry.s.reconcile('cluster-b');
    expect(dry.calls.map((c) => c.op)).toEqual(['create']);
    expect((dry.calls[0].obj as unknown as { message: string }).message).toMatch(/dry run \(--sweep-dry-run\): not deleted/);
  });

  it('marks a silent konnector Abandoned with an event, deletes after the notice, and cancels on a heartbeat', async () => {
    let now = T0;
    const ns = nsObj('cluster-c', 999_000, T0);
    let cb: ClusterBinding = {
      metadata: { name: 'cluster', namespace: 'cluster-c' },
      spec: { kubeconfigSecretRef: { name: 'kubeconfig', key: 'kubeconfig' }, providerPrettyName: 'provider' },
      status: { lastHeartbeatTime: new Date(T0 - 200_000).toISOString() },
    };
    const secret = { metadata: { name: 'kubeconfig', namespace: 'cluster-c' } };
    const { s, calls, cache } = sweeper({ namespaces: [ns], clusterBindings: [cb], kubeconfigSecrets: [secret] }, { staleAfterMs: 100_000, now: () => now });
    const cached = (o: typeof cb) => void cache.clusterBindings.put((cb = o));
    expect(await s.reconcile('cluster-c')).toEqual({ requeueAfterMs: 31_000 });
    expect(calls.map((c) => c.op)).toEqual(['status', 'create']);
    const cond = (calls[0].obj as unknown as { status: { conditions: Array<Record<string, string>> } }).status.conditions.find(
      (c) => c.type === ABANDONED_CONDITION,
    )!;
    expect(cond).toMatchObject({ status: 'True', reason: 'KonnectorSilent' });
    expect(cond.message).toMatch(/last konnector heartbeat 200s ago \(limit 100s\); the cluster namespace will be deleted at 2026-01-01T00:00:30Z/);
    cached(calls[0].obj as typeof cb);
    now = T0 + 10_000;
    expect(await s.reconcile('cluster-c')).toEqual({ requeueAfterMs: 21_000 });
    // a heartbeat in between cancels
    cached({ ...cb, status: { ...cb.status, lastHeartbeatTime: new Date(now).toISOString() } });
    await s.reconcile('cluster-c');
    expect(calls.map((c) => c.op)).toEqual(['status', 'create', 'status', 'create']);
    expect((calls[3].obj as unknown as { reason: string }).reason).toBe('HeartbeatResumed');
    // silent again for longer than the limit plus the notice: deleted
    cb = calls[2].obj as typeof cb;
    cached({ ...cb, status: { ...cb.status, lastHeartbeatTime: new Date(now - 150_000).toISOString() } });
    await s.reconcile('cluster-c');
    cached(calls[4].obj as typeof cb);
    now += 31_000;
    await s.reconcile('cluster-c');
    expect(calls.map((c) => c.op).slice(4)).toEqual(['status', 'create', 'create', 'delete']);
  });
});

describe('unexpected errors', () => {
  it('classifies bugs and network failures', () => {
    expect(isProgrammingError(new TypeError('x'))).toBe(true);
    expect(isProgrammingError(Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }))).toBe(false);
    expect(isNetworkError(Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isNetworkError(new Error('request timed out after 30000 ms'))).toBe(true);
  });

  it('a bug in a request handler is a 500, counted, logged and shown on /readyz; the server keeps serving', async () => {
    const metrics = new BackendMetrics();
    const unexpected = new UnexpectedErrors(silentLogger, metrics);
    const server = new BackendServer(
      {
        listenHost: '127.0.0.1',
        listenPort: 0,
        prettyName: 'test',
        oidc: { issuerUrl: 'http://127.0.0.1:9/', clientId: 'c', scopes: ['openid'], bearerAudiences: [] },
        sessionTtl: 60,
        stateTtl: 60,
      },
      { metrics, logger: silentLogger, unexpected, status: () => ['limits: 3 app clusters per identity'] } as never,
    );
    const url = await server.start();
    try {
      server.oidc.verifyBearer = () => {
        throw new TypeError("Cannot read properties of undefined (reading 'sub')");
      };
      const r = await fetch(`${url}/bind`, { method: 'POST', headers: { authorization: 'Bearer x' }, body: '{}' });
      expect(r.status).toBe(500);
      expect(await r.json()).toEqual({ error: 'internal error; see the backend log', field: 'internal' });
      const ready = await (await fetch(`${url}/readyz`)).text();
      expect(ready).toMatch(/unexpected-errors: 1, last \d+s ago in http route=\/bind method=POST: TypeError: Cannot read properties of undefined/);
      expect(ready).toContain('limits: 3 app clusters per identity');
      expect(await metrics.registry.getSingleMetricAsString('klutch_backend_unexpected_errors_total')).toContain('source="http"} 1');
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

describe('unexpected errors in controllers', () => {
  it('a bug in a reconciler is recorded with the controller and key; an API refusal is not', async () => {
    const metrics = new BackendMetrics();
    const unexpected = new UnexpectedErrors(silentLogger, metrics);
    const ctl = new BackendControllers({
      kube: {} as KubeClient,
      binder: {} as never,
      logger: silentLogger,
      metrics,
      consumerScope: 'Namespaced',
      exportRequestGraceMs: 0,
      heartbeatTimeoutMs: 0,
      unexpected,
    });
    let calls = 0;
    ctl.sweeper.reconcile = async (key: string) => {
      calls++;
      if (key === 'cluster-bug') throw new TypeError("Cannot read properties of undefined (reading 'metadata')");
      throw Object.assign(new Error('namespaces "x" is forbidden'), { code: 403 });
    };
    const sweep = ctl.controllers.find((c) => c.name === 'backend-sweeper')!;
    sweep.start();
    try {
      sweep.enqueue('cluster-api-refusal');
      sweep.enqueue('cluster-bug');
      for (let i = 0; i < 200 && calls < 2; i++) await new Promise((r) => setTimeout(r, 5));
    } finally {
      await sweep.stop();
    }
    expect(unexpected.count).toBe(1);
    expect(unexpected.last).toMatchObject({ source: 'controller/sweeper', context: { key: 'cluster-bug' } });
    expect(unexpected.summary()).toMatch(/in controller\/sweeper key=cluster-bug: TypeError: Cannot read properties of undefined/);
    expect(await metrics.registry.getSingleMetricAsString('klutch_backend_unexpected_errors_total')).toContain('source="controller"} 1');
  });
});

describe('flags', () => {
  const base = ['--oidc-issuer-url=https://issuer.example', '--oidc-issuer-client-id=c'];
  it('have bounded defaults', () => {
    const o = parseBackendOptions(base, {});
    expect(o).toMatchObject({
      maxClustersPerIdentity: 50,
      bindRate: 30,
      bindBurst: 10,
      orphanGrace: 600,
      staleClusterTimeout: 0,
      sweepNotice: 86400,
      sweepDryRun: false,
    });
  });
  it('name the flag and value when wrong', () => {
    expect(() => parseBackendOptions([...base, '--max-clusters-per-identity=-3'], {})).toThrow('--max-clusters-per-identity: "-3" is not a whole number');
    expect(() => parseBackendOptions([...base, '--stale-cluster-timeout=soon'], {})).toThrow('--stale-cluster-timeout: "soon" is not a duration');
    expect(() => parseBackendOptions([...base, '--bind-burst=0'], {})).toThrow('--bind-burst: 0 must be at least 1');
  });
});

describe('ApiServerReplayStore', () => {
  const lease = (name: string, renewMsAgo: number, durationS: number, uid = name) => ({
    metadata: { name, uid },
    spec: { renewTime: new Date(Date.now() - renewMsAgo).toISOString(), leaseDurationSeconds: durationS },
  });
  function store(create: (obj: KubeObject) => Promise<unknown>, items: KubeObject[] = []) {
    const deleted: string[] = [];
    const kube = {
      create: async (_r: unknown, obj: KubeObject) => create(obj),
      list: async () => ({ items }),
      delete: async (_r: unknown, _ns: string, name: string) => void deleted.push(name),
    } as unknown as KubeClient;
    return { s: new ApiServerReplayStore({ kube, namespace: 'klutch-system', identity: 'replica-1', sweepIntervalMs: 3_600_000 }), deleted };
  }

  it('first use creates a Lease expiring with the state; AlreadyExists is a replay; other failures are 503-worthy', async () => {
    const created: KubeObject[] = [];
    const { s } = store(async (o) => void created.push(o));
    const exp = Math.floor(Date.now() / 1000) + 600;
    expect(await s.use('jti-1', exp)).toBe(true);
    expect(created[0].metadata).toMatchObject({
      name: loginStateLeaseName('jti-1'),
      namespace: 'klutch-system',
      labels: { 'klutch.anynines.com/login-state': 'used' },
    });
    expect((created[0] as unknown as { spec: { leaseDurationSeconds: number; holderIdentity: string } }).spec).toMatchObject({ holderIdentity: 'replica-1' });
    expect((created[0] as unknown as { spec: { leaseDurationSeconds: number } }).spec.leaseDurationSeconds).toBeGreaterThanOrEqual(599);
    await s.idle();
    const replay = store(async () => {
      throw new ApiError(409, 'AlreadyExists', 'leases "x" already exists', 'POST', '/leases');
    });
    expect(await replay.s.use('jti-1', exp)).toBe(false);
    const down = store(async () => {
      throw new ApiError(0, 'ECONNREFUSED', 'connect ECONNREFUSED', 'POST', '/leases');
    });
    await expect(down.s.use('jti-2', exp)).rejects.toBeInstanceOf(ReplayStoreUnavailable);
  });

  it('sweep deletes only the expired records', async () => {
    const { s, deleted } = store(async () => undefined, [lease('old', 700_000, 600), lease('fresh', 10_000, 600)] as KubeObject[]);
    expect(await s.sweep()).toBe(1);
    expect(deleted).toEqual(['old']);
  });
});

describe('LeaseIdentityLock', () => {
  const T = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();
  it('takes over a lock whose holder was killed, releases it, and sweeps other expired locks', async () => {
    const leases = new Map<string, KubeObject & { spec?: Record<string, unknown> }>([
      ['klutch-bind-lock-abc', { metadata: { name: 'klutch-bind-lock-abc', uid: 'u-dead' }, spec: { renewTime: T(60_000), leaseDurationSeconds: 15 } }],
      ['klutch-bind-lock-old', { metadata: { name: 'klutch-bind-lock-old', uid: 'u-old' }, spec: { renewTime: T(600_000), leaseDurationSeconds: 15 } }],
      ['klutch-bind-lock-busy', { metadata: { name: 'klutch-bind-lock-busy', uid: 'u-busy' }, spec: { renewTime: T(1000), leaseDurationSeconds: 15 } }],
    ]);
    let n = 0;
    const kube = {
      create: async (_r: unknown, o: KubeObject) => {
        if (leases.has(o.metadata.name!)) throw new ApiError(409, 'AlreadyExists', 'exists', 'POST', '/leases');
        const l = { ...o, metadata: { ...o.metadata, uid: `u-${++n}` } };
        leases.set(o.metadata.name!, l);
        return l;
      },
      getOrNull: async (_r: unknown, _ns: string, name: string) => leases.get(name),
      delete: async (_r: unknown, _ns: string, name: string) => void leases.delete(name),
      list: async () => ({ items: [...leases.values()] }),
    } as unknown as KubeClient;
    const lock = new LeaseIdentityLock({ kube, namespace: 'klutch-system', holder: 'replica-1', waitMs: 300 });
    let inside = '';
    expect(await lock.withLock('abc', 'alice', async () => ((inside = leases.get('klutch-bind-lock-abc')!.metadata.uid!), 'done'))).toBe('done');
    expect(inside).toBe('u-1'); // the dead holder's lock was replaced by ours
    expect([...leases.keys()]).toEqual(['klutch-bind-lock-busy']); // ours released, the expired one swept
    const busy = lock.withLock('busy', 'bob', async () => 'never');
    await expect(busy).rejects.toMatchObject({ status: 429, field: 'concurrency', retryAfterSeconds: 2 });
    await expect(busy).rejects.toThrow('another bind of bob is still in progress');
  });

  it('keeps its Lease renewed while a slow bind runs: another replica waits instead of taking it over', async () => {
    const { kube, leases } = leaseStore();
    const one = new LeaseIdentityLock({ kube, namespace: 'klutch-system', holder: 'replica-1', ttlSeconds: 2 });
    const two = new LeaseIdentityLock({ kube, namespace: 'klutch-system', holder: 'replica-2', ttlSeconds: 2, waitMs: 2_500 });
    let release!: () => void;
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const slow = one.withLock('abc', 'alice', async () => {
      entered();
      await new Promise<void>((r) => (release = r));
      return 'first';
    });
    await inside;
    // replica 2 waits past the 2 s TTL: without renewals it would take the lock over while replica 1 still holds it
    await expect(two.withLock('abc', 'alice', async () => 'second')).rejects.toMatchObject({ status: 429, field: 'concurrency' });
    expect((leases().find((l) => l.metadata.name === 'klutch-bind-lock-abc') as { spec?: unknown } | undefined)?.spec).toMatchObject({
      holderIdentity: 'replica-1',
    });
    release();
    expect(await slow).toBe('first');
    expect(leases().map((l) => l.metadata.name)).not.toContain('klutch-bind-lock-abc');
    expect(await two.withLock('abc', 'alice', async () => 'second')).toBe('second');
  });
});
