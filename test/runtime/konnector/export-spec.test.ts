import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../../../runtime/core/client.js';
import { RequeueError } from '../../../runtime/core/controller.js';
import { silentLogger } from '../../../runtime/core/logger.js';
import { isolationFor } from '../../../runtime/konnector/export-isolation.js';
import { APPLIED_TTL_MS, SpecUpReconciler } from '../../../runtime/konnector/export-spec.js';
import { DEFAULT_UPSTREAM_DELETION_TIMEOUT_MS, type TimedOutDeletion } from '../../../runtime/konnector/deletion-timeouts.js';
import { DEFAULT_METADATA_FILTER, hashOf } from '../../../runtime/konnector/metadata.js';
import { BOUND_ANNOTATION, CLUSTER_NAMESPACE_ANNOTATION, SPEC_HASH_ANNOTATION, SYNCER_FINALIZER } from '../../../runtime/konnector/types.js';
import { KONNECTOR_FIELD_MANAGER } from '../../../contract/index.js';
import { ObjectStore } from '../../../runtime/core/object-cache.js';
import { FakeApiServer } from '../../support/fake-api-server.js';
import { GADGETS, widget, WIDGETS } from './_export-fixtures.js';
import { BindingGuard } from '../../../runtime/konnector/binding-guard.js';

const ctx = {
  clusterNamespace: 'cluster-a',
  providerNamespaceFor: (ns: string) => ({ shop: 'cluster-a-shop' })[ns],
  consumerNamespaceFor: (ns: string) => ({ 'cluster-a-shop': 'shop' })[ns],
};
const DELETING = { deletionTimestamp: '2026-01-01T00:00:00Z' as never };

function setup(
  opts: {
    down?: KubeObject[];
    up?: KubeObject[];
    cluster?: 'Prefixed' | 'None' | 'Namespaced';
    assign?: string;
    reserved?: string[];
    timeoutMs?: number;
    guard?: BindingGuard;
  } = {},
) {
  const consumers = ObjectStore.of(...(opts.down ?? []));
  const providers = ObjectStore.of(...(opts.up ?? []));
  const ensured: string[] = [];
  const warnings: unknown[] = [];
  const reported: TimedOutDeletion[] = [];
  const resolved: string[] = [];
  let t = 1_000;
  const namespaced = opts.cluster === undefined;
  const isolation = isolationFor(namespaced, opts.cluster, ctx);
  const resource = namespaced ? WIDGETS : GADGETS;
  const app = new FakeApiServer().seed(resource, ...(opts.down ?? []));
  const provider = new FakeApiServer().seed(resource, ...(opts.up ?? []));
  const r = new SpecUpReconciler({
    resource,
    providerResource: { ...resource, namespaced: isolation.providerNamespaced },
    isolation,
    consumers,
    providers,
    app: app.client,
    provider: provider.client,
    ensureAPIServiceNamespace: async (ns) => {
      ensured.push(ns);
      return opts.assign;
    },
    isReservedNamespace: (ns) => (opts.reserved ?? []).includes(ns),
    metadata: DEFAULT_METADATA_FILTER,
    deletionTimeoutMs: opts.timeoutMs,
    deletionTimeouts: { report: (d) => reported.push(d), resolve: (u) => resolved.push(u) },
    guard: opts.guard,
    log: { ...silentLogger, warn: (...a: unknown[]) => warnings.push(a) } as never,
    now: () => t,
  });
  return { app, provider, consumers, providers, ensured, warnings, reported, resolved, r, advance: (ms: number) => (t += ms) };
}

const withFinalizer = (o: KubeObject): KubeObject => ({ ...o, metadata: { ...o.metadata, finalizers: [SYNCER_FINALIZER] } });

describe('SpecUpReconciler', () => {
  it('the upstream copy carries only the allow-listed labels and annotations of the consumer object, never forged konnector keys', async () => {
    const down = widget('shop', 'db', {
      metadata: {
        finalizers: [SYNCER_FINALIZER],
        labels: { 'app.kubernetes.io/name': 'shop', 'app.kubernetes.io/managed-by': 'Helm', 'team.example.com/cost-center': '42', random: 'x' },
        annotations: {
          'crossplane.io/external-name': 'someone-elses-db',
          'kubectl.kubernetes.io/last-applied-configuration': '{}',
          [SPEC_HASH_ANNOTATION]: 'forged',
          'klutch.anynines.com/binding-uid': 'forged',
          note: 'app-side',
        },
      },
      spec: { size: 1 },
    });
    const { provider, r } = setup({ down: [down] });
    await expect(r.reconcile('shop/db')).resolves.toBe('create');
    expect((provider.writes()[0].body as KubeObject).metadata).toEqual({
      name: 'db',
      namespace: 'cluster-a-shop',
      labels: { 'app.kubernetes.io/name': 'shop' },
      annotations: { [BOUND_ANNOTATION]: 'true', [SPEC_HASH_ANNOTATION]: hashOf({ size: 1 }) },
    });
  });

  it('a new consumer object: finalizer first, then a server-side-applied, annotated copy upstream', async () => {
    const down = widget('shop', 'db', { spec: { size: 1 }, status: { x: 1 } });
    const { app, provider, r } = setup({ down: [down] });
    await expect(r.reconcile('shop/db')).resolves.toBe('create');
    expect(app.writes()).toEqual([
      { verb: 'update', resource: 'widgets', namespace: 'shop', name: 'db', body: { ...down, metadata: { ...down.metadata, finalizers: [SYNCER_FINALIZER] } } },
    ]);
    expect(provider.writes()).toEqual([
      {
        verb: 'apply',
        resource: 'widgets',
        namespace: 'cluster-a-shop',
        name: 'db',
        body: {
          apiVersion: 'example.com/v1',
          kind: 'Widget',
          metadata: { name: 'db', namespace: 'cluster-a-shop', annotations: { [BOUND_ANNOTATION]: 'true', [SPEC_HASH_ANNOTATION]: hashOf({ size: 1 }) } },
          spec: { size: 1 },
        },
        opts: { fieldManager: KONNECTOR_FIELD_MANAGER, force: true, result: false },
      },
    ]);
  });

  it('until the informers catch up: works on the updated object (no second finalizer update) and applies no second copy', async () => {
    const { app, provider, r, advance } = setup({ down: [widget('shop', 'db', { spec: { size: 1 } })] });
    await r.reconcile('shop/db');
    await expect(r.reconcile('shop/db')).resolves.toBeUndefined();
    expect(app.writes().map((c) => c.verb)).toEqual(['update']);
    expect(provider.writes().map((c) => c.verb)).toEqual(['apply']);
    // the upstream create's event never came: after APPLIED_TTL_MS the copy is applied again
    advance(APPLIED_TTL_MS);
    await expect(r.reconcile('shop/db')).resolves.toBe('create');
    expect(provider.writes().map((c) => c.verb)).toEqual(['apply', 'apply']);
  });

  it('an informer event of the upstream location lets the next reconcile apply again', async () => {
    const { provider, r } = setup({ down: [widget('shop', 'db', { spec: { size: 1 } })] });
    await r.reconcile('shop/db');
    r.providerEvent('cluster-a-shop/db');
    await expect(r.reconcile('shop/db')).resolves.toBe('create');
    expect(provider.writes()).toHaveLength(2);
  });

  it('a consumer event newer than the finalizer update replaces the in-flight object', async () => {
    const down = widget('shop', 'db', { spec: { size: 1 } });
    const { app, consumers, r } = setup({ down: [down] });
    await r.reconcile('shop/db');
    const newer = widget('shop', 'db', { metadata: { resourceVersion: '7' }, spec: { size: 2 } }); // finalizer removed by someone
    consumers.put(newer);
    app.seed(WIDGETS, newer);
    r.consumerEvent('shop/db', newer);
    await r.reconcile('shop/db');
    expect(app.writes().map((c) => (c.body as KubeObject).metadata.resourceVersion)).toEqual(['1', '7']);
  });

  it('an update of the same generation keeps the spec hash of the object it replaces (not hashed again)', async () => {
    const prev = withFinalizer(widget('shop', 'db', { metadata: { generation: 3 }, spec: { size: 1 } }));
    const { provider, consumers, r } = setup({ down: [prev] });
    await r.reconcile('shop/db');
    // The same generation means the same spec: the reconciler trusts it, so a spec object that (impossibly)
    // differed would still carry the hash of the one before.
    const next = withFinalizer(widget('shop', 'db', { metadata: { generation: 3, resourceVersion: '2' }, spec: { size: 9 } }));
    consumers.put(next);
    r.consumerEvent('shop/db', next, prev);
    r.providerEvent('cluster-a-shop/db');
    await r.reconcile('shop/db');
    const hashes = provider.writes().map((w) => (w.body as KubeObject).metadata.annotations?.[SPEC_HASH_ANNOTATION]);
    expect(hashes).toEqual([hashOf({ size: 1 }), hashOf({ size: 1 })]);

    // A new generation is hashed.
    const changed = withFinalizer(widget('shop', 'db', { metadata: { generation: 4, resourceVersion: '3' }, spec: { size: 9 } }));
    consumers.put(changed);
    r.consumerEvent('shop/db', changed, next);
    r.providerEvent('cluster-a-shop/db');
    await r.reconcile('shop/db');
    expect((provider.writes()[2].body as KubeObject).metadata.annotations?.[SPEC_HASH_ANNOTATION]).toBe(hashOf({ size: 9 }));
  });

  it('a namespace without a provider namespace: asks for one, and waits until it is assigned', async () => {
    const waiting = setup({ down: [widget('new-ns', 'db')] });
    const err = await waiting.r.reconcile('new-ns/db').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RequeueError);
    expect((err as Error).message).toBe('waiting for the provider to assign a namespace to APIServiceNamespace new-ns');
    expect(waiting.ensured).toEqual(['new-ns']);
    expect([...waiting.app.writes(), ...waiting.provider.writes()]).toEqual([]);

    const assigned = setup({ down: [widget('new-ns', 'db')], assign: 'cluster-a-new-ns' });
    await expect(assigned.r.reconcile('new-ns/db')).resolves.toBe('create');
    expect(assigned.provider.writes()[0]).toMatchObject({ namespace: 'cluster-a-new-ns', name: 'db' });
  });

  it('a reserved namespace is never synced (one warning), and its deleted objects are released', async () => {
    const { app, provider, warnings, ensured, r } = setup({
      down: [widget('kube-system', 'db'), withFinalizer(widget('kube-system', 'gone', { metadata: DELETING }))],
      reserved: ['kube-system'],
    });
    await expect(r.reconcile('kube-system/db')).resolves.toBeUndefined();
    await expect(r.reconcile('kube-system/db')).resolves.toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(ensured).toEqual([]);
    await expect(r.reconcile('kube-system/gone')).resolves.toBe('finalizer-removed');
    expect(app.writes().map((c) => c.verb)).toEqual(['jsonPatch']);
    expect(provider.writes()).toEqual([]);
  });

  it('an upstream copy in sync is left alone; drift in consumer fields is applied back with the spec only', async () => {
    const down = withFinalizer(widget('shop', 'db', { spec: { size: 2 } }));
    const ann = { [BOUND_ANNOTATION]: 'true', [SPEC_HASH_ANNOTATION]: hashOf({ size: 2 }) };
    const inSync = setup({
      down: [down],
      up: [widget('cluster-a-shop', 'db', { metadata: { annotations: ann }, spec: { size: 2, resourceRef: { name: 'x' } } })],
    });
    await expect(inSync.r.reconcile('shop/db')).resolves.toBeUndefined();
    expect([...inSync.app.writes(), ...inSync.provider.writes()]).toEqual([]);

    const drifted = setup({ down: [down], up: [widget('cluster-a-shop', 'db', { metadata: { annotations: ann }, spec: { size: 5 } })] });
    await expect(drifted.r.reconcile('shop/db')).resolves.toBe('apply');
    expect(drifted.provider.writes()).toEqual([
      {
        verb: 'apply',
        resource: 'widgets',
        namespace: 'cluster-a-shop',
        name: 'db',
        body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'db', namespace: 'cluster-a-shop', annotations: ann }, spec: { size: 2 } },
        opts: { fieldManager: KONNECTOR_FIELD_MANAGER, force: true, result: false },
      },
    ]);
  });

  it('a provider that keeps rewriting the spec gets it applied back at most the write budget, then the konnector backs off until it stops', async () => {
    const down = withFinalizer(widget('shop', 'db', { spec: { size: 2 } }));
    const ann = { [BOUND_ANNOTATION]: 'true', [SPEC_HASH_ANNOTATION]: hashOf({ size: 2 }) };
    const reports: string[] = [];
    const limits = {
      report: (r: { subject: string }) => (reports.push(r.subject), true),
      resolve: (_: string, __: string, subject: string) => void reports.splice(reports.indexOf(subject), 1),
      count: () => undefined,
    };
    const guard = new BindingGuard({ limits, writeBudget: { writes: 2, windowMs: 60_000 }, log: silentLogger }, { name: 'widgets', uid: 'u1' }, () => 0);
    const drifted = setup({ down: [down], up: [widget('cluster-a-shop', 'db', { metadata: { annotations: ann }, spec: { size: 5 } })], guard });
    await expect(drifted.r.reconcile('shop/db')).resolves.toBe('apply');
    await expect(drifted.r.reconcile('shop/db')).resolves.toBe('apply');
    await expect(drifted.r.reconcile('shop/db')).rejects.toBeInstanceOf(RequeueError);
    expect(drifted.provider.writes().filter((w) => w.verb === 'apply')).toHaveLength(2);
    expect(reports).toEqual(['up spec of widgets shop/db']);
    // the provider stopped: a reconcile finds the copy in sync, and the report goes
    const inSync = setup({ down: [down], up: [widget('cluster-a-shop', 'db', { metadata: { annotations: ann }, spec: { size: 2 } })], guard });
    await expect(inSync.r.reconcile('shop/db')).resolves.toBeUndefined();
    expect(reports).toEqual([]);
  });

  it('cluster-scoped (Prefixed): the copy is prefixed and annotated, and another consumer’s object is never taken over', async () => {
    const down = withFinalizer(widget(undefined, 'db', { spec: { a: 1 } }));
    const fresh = setup({ down: [down], cluster: 'Prefixed' });
    await expect(fresh.r.reconcile('db')).resolves.toBe('create');
    expect(fresh.provider.writes()[0].body).toMatchObject({ metadata: { name: 'cluster-a-db', annotations: { [CLUSTER_NAMESPACE_ANNOTATION]: 'cluster-a' } } });

    const foreign = widget(undefined, 'cluster-a-db', { metadata: { annotations: { [CLUSTER_NAMESPACE_ANNOTATION]: 'cluster-b' } } });
    const taken = setup({ down: [down], up: [foreign], cluster: 'Prefixed' });
    await expect(taken.r.reconcile('db')).rejects.toThrow(
      'upstream cluster-a-db belongs to cluster namespace "cluster-b", not "cluster-a"; refusing to take it over',
    );
    expect(taken.provider.writes()).toEqual([]);
  });

  it('a deleted consumer object: upstream deleted first, the finalizer released once upstream is gone', async () => {
    const down = withFinalizer(widget('shop', 'db', { metadata: DELETING }));
    const up = widget('cluster-a-shop', 'db');
    const present = setup({ down: [down], up: [up] });
    await expect(present.r.reconcile('shop/db')).resolves.toBe('delete');
    expect(present.provider.writes()).toEqual([
      { verb: 'delete', resource: 'widgets', namespace: 'cluster-a-shop', name: 'db', opts: { uid: 'uid-db', propagationPolicy: 'Background' } },
    ]);
    expect(present.app.writes()).toEqual([]);

    // terminating upstream: wait (its delete event requeues us; at the latest when the timeout is up)
    const terminating = setup({ down: [down], up: [widget('cluster-a-shop', 'db', { metadata: DELETING })] });
    const waiting = await terminating.r.reconcile('shop/db').catch((e: unknown) => e);
    expect(waiting).toBeInstanceOf(RequeueError);
    expect((waiting as RequeueError).afterMs).toBe(DEFAULT_UPSTREAM_DELETION_TIMEOUT_MS);
    expect([...terminating.app.writes(), ...terminating.provider.writes()]).toEqual([]);

    // the cache says gone but a live read finds it: delete and wait
    const stale = setup({ down: [down] });
    stale.provider.seed(WIDGETS, up);
    await expect(stale.r.reconcile('shop/db')).rejects.toBeInstanceOf(RequeueError);
    expect(stale.provider.writes()).toEqual([{ verb: 'delete', resource: 'widgets', namespace: 'cluster-a-shop', name: 'db', opts: { uid: 'uid-db' } }]);
    expect(stale.app.writes()).toEqual([]);

    const gone = setup({ down: [down] });
    await expect(gone.r.reconcile('shop/db')).resolves.toBe('finalizer-removed');
    expect(gone.app.writes()).toEqual([
      {
        verb: 'jsonPatch',
        resource: 'widgets',
        namespace: 'shop',
        name: 'db',
        body: [
          { op: 'test', path: '/metadata/resourceVersion', value: '1' },
          { op: 'add', path: '/metadata/finalizers', value: [] },
        ],
      },
    ]);
  });

  it('a provider that keeps the upstream copy terminating holds the app-cluster object only until the deletion timeout', async () => {
    const down = withFinalizer(widget('shop', 'db', { metadata: DELETING }));
    const held = widget('cluster-a-shop', 'db', { metadata: { ...DELETING, finalizers: ['provider.example.com/never'] } });
    const t = setup({ down: [down], up: [held], timeoutMs: 60_000 });
    const first = await t.r.reconcile('shop/db').catch((e: unknown) => e);
    expect((first as RequeueError).afterMs).toBe(60_000);
    expect((first as RequeueError).message).toBe('waiting for the provider to delete cluster-a-shop/db (finalizers: provider.example.com/never)');
    t.advance(59_000);
    expect(((await t.r.reconcile('shop/db').catch((e: unknown) => e)) as RequeueError).afterMs).toBe(1_000);
    expect([...t.app.writes(), ...t.provider.writes(), ...t.reported]).toEqual([]);
    t.advance(1_000);
    await expect(t.r.reconcile('shop/db')).resolves.toBe('finalizer-removed');
    expect(t.app.writes().map((c) => c.verb)).toEqual(['jsonPatch']);
    expect(t.provider.writes()).toEqual([]); // the copy stays on the provider
    expect(t.reported).toEqual([{ upstream: 'cluster-a-shop/db', consumer: 'shop/db', finalizers: ['provider.example.com/never'] }]);
    expect(t.warnings).toHaveLength(1);
    // once the provider lets it go, the record goes too
    t.r.providerGone('cluster-a-shop/db');
    expect(t.resolved).toEqual(['cluster-a-shop/db']);
  });

  it('the deletion timeout also applies when only a live read finds the terminating upstream copy, and restarts for a new deletion', async () => {
    const down = withFinalizer(widget('shop', 'db', { metadata: DELETING }));
    const t = setup({ down: [down], timeoutMs: 10_000 });
    t.provider.seed(WIDGETS, widget('cluster-a-shop', 'db', { metadata: { ...DELETING, finalizers: ['x/y'] } }));
    expect(((await t.r.reconcile('shop/db').catch((e: unknown) => e)) as RequeueError).afterMs).toBe(10_000);
    t.advance(10_000);
    await expect(t.r.reconcile('shop/db')).resolves.toBe('finalizer-removed');
    expect(t.reported).toEqual([{ upstream: 'cluster-a-shop/db', consumer: 'shop/db', finalizers: ['x/y'] }]);
    // a later deletion of an object of the same name waits the whole timeout again
    t.advance(5_000);
    expect(((await t.r.reconcile('shop/db').catch((e: unknown) => e)) as RequeueError).afterMs).toBe(10_000);
  });

  it('a deleted consumer object that never got a provider namespace is released without asking for one', async () => {
    const { app, ensured, r } = setup({ down: [withFinalizer(widget('new-ns', 'db', { metadata: DELETING }))] });
    await expect(r.reconcile('new-ns/db')).resolves.toBe('finalizer-removed');
    expect(ensured).toEqual([]);
    expect(app.writes().map((c) => c.verb)).toEqual(['jsonPatch']);
  });

  it('a key no longer in the cache writes nothing (the status side deletes orphans)', async () => {
    const { app, provider, r } = setup();
    await expect(r.reconcile('shop/gone')).resolves.toBeUndefined();
    expect([...app.writes(), ...provider.writes()]).toEqual([]);
  });
});
