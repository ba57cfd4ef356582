// The konnector against real clusters: a control plane and two app clusters, the objects the bind
// backend would create, and the konnector in-process per app cluster.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { CoreResources, KubeClient, type KubeObject } from '../../../runtime/core/client.js';
import { getCondition, type Condition } from '../../../runtime/core/conditions.js';
import { createLogger } from '../../../runtime/core/logger.js';
import { AppClusterBindingController, bindingRootNamespace } from '../../../runtime/konnector/appclusterbinding.js';
import { BINDING_FINALIZER, Konnector } from '../../../runtime/konnector/konnector.js';
import {
  BOUND_ANNOTATION,
  RESOURCE_OWNER_ANNOTATION,
  SYNCER_FINALIZER,
  type APIServiceBinding,
  type ClusterBinding,
  type Secret,
} from '../../../runtime/konnector/types.js';
import { BINDING_RESOURCES } from '../../../contract/index.js';
import { startCluster, type RealCluster } from '../../../runtime/realinfra/index.js';
import {
  admin,
  bindOnApp,
  createCRDs,
  countDelta,
  CREDS_LABEL,
  ensure,
  eventually,
  installBindingCRDs,
  kubeconfigText,
  MiniBackend,
  never,
  requestCounts,
  setUpConsumerOnProvider,
  sleep,
  tokenFor,
  widgetCRD,
  widgetExport,
  WIDGETS,
  WIDGETS_NAME,
  type ConsumerOnProvider,
} from './fixture.js';

jest.setTimeout(120_000);

type Widget = KubeObject & { spec?: { size?: number; color?: string; tags?: string[]; resourceRef?: unknown }; status?: { phase?: string; message?: string } };

let cp: RealCluster;
let app1: RealCluster;
let app2: RealCluster;
let cpc: KubeClient;
let a1: KubeClient;
let a2: KubeClient;
let backend: MiniBackend;
let p1: ConsumerOnProvider;
let p2: ConsumerOnProvider;
const konnectors: Konnector[] = [];
const log = (name: string) => createLogger(name, process.env.KONNECTOR_TEST_LOG ?? 'silent');

function startKonnector(app: RealCluster, name: string): Konnector {
  const k = new Konnector({ appKubeConfig: app.kubeConfig, heartbeatIntervalMs: 4000, providerSyncTimeoutMs: 10_000, resyncMs: 0, logger: log(name) });
  konnectors.push(k);
  return k;
}

const condition = async (c: KubeClient, name: string, type: string, ns = 'klutch-bind'): Promise<Condition | undefined> => {
  const b = await c.getOrNull<APIServiceBinding>(BINDING_RESOURCES.apiServiceBindings, ns, name);
  return getCondition(b?.status?.conditions as Condition[] | undefined, type);
};

// Every test starts from what it needs (appReady, syncedWidget, boundNamespace), whatever ran before
// it: each passes alone (-t) and in any order. The clusters, CRDs and consumers of beforeAll are shared.

/** The app cluster bound to its consumer with a running konnector and a Ready binding. */
async function appReady(app: RealCluster, p: ConsumerOnProvider, name: string, opts: { claims?: unknown[] } = {}): Promise<Konnector> {
  const c = app === app1 ? a1 : a2;
  await eventually(
    'no binding left terminating',
    async () => !(await c.getOrNull(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', WIDGETS_NAME))?.metadata.deletionTimestamp,
    90_000,
  );
  await bindOnApp(app, p, opts);
  let k = konnectors.find((x) => x.app.server === c.server);
  if (!k) {
    k = startKonnector(app, name);
    await k.start();
  }
  await eventually(`${name}: binding Ready`, async () => (await condition(c, WIDGETS_NAME, 'Ready'))?.status === 'True', 60_000);
  return k;
}
const app1Ready = () => appReady(app1, p1, 'konnector-app1');
const app2Ready = (opts: { claims?: unknown[] } = {}) => appReady(app2, p2, 'konnector-app2', opts);

/** A widget created on the app cluster and synced upstream (into `<clusterNs>-<ns>`). */
async function syncedWidget(c: KubeClient, clusterNs: string, ns: string, name: string, spec: Widget['spec']): Promise<Widget> {
  await ensure(c, CoreResources.namespaces, { metadata: { name: ns } });
  // The CRD may have just been (re)established: retry until the API accepts the object (or has it).
  await eventually(`${name} created`, async () => !!(await ensure(c, WIDGETS, { metadata: { name, namespace: ns }, spec }).catch(() => undefined)));
  return eventually(`${name} upstream`, () => cpc.getOrNull<Widget>(WIDGETS, `${clusterNs}-${ns}`, name));
}

/** Namespace `ns` of app1 is bound (its provider namespace `cluster-app1-<ns>` exists): a widget syncs there. */
async function boundNamespace(ns: string): Promise<string> {
  await app1Ready();
  await ensure(a1, CoreResources.namespaces, { metadata: { name: ns } });
  await eventually(`a widget in ${ns}`, () => ensure(a1, WIDGETS, { metadata: { name: `${ns}-anchor`, namespace: ns }, spec: { size: 1 } }), 60_000);
  await eventually(`${ns} bound`, () => cpc.getOrNull(WIDGETS, `cluster-app1-${ns}`, `${ns}-anchor`));
  return `cluster-app1-${ns}`;
}

beforeAll(async () => {
  [cp, app1, app2] = await Promise.all(['kn-cp', 'kn-app1', 'kn-app2'].map((name) => startCluster({ name })));
  cpc = admin(cp);
  a1 = admin(app1);
  a2 = admin(app2);
  await Promise.all([installBindingCRDs(cpc), createCRDs(cpc, [widgetCRD()]), installBindingCRDs(a1), installBindingCRDs(a2)]);
  backend = new MiniBackend(cp);
  await backend.start();
  [p1, p2] = await Promise.all([setUpConsumerOnProvider(cp, 'cluster-app1'), setUpConsumerOnProvider(cp, 'cluster-app2')]);
}, 240_000);

afterAll(async () => {
  await Promise.all(konnectors.map((k) => k.stop().catch(() => undefined)));
  await backend?.stop();
  for (const c of [cpc, a1, a2]) c?.close();
  await Promise.all([cp, app1, app2].map((c) => c?.stop()));
}, 120_000);

describe('konnector on real clusters', () => {
  it('binds: the CRD appears on the app cluster, owned by the APIServiceBinding; the binding gets Ready; heartbeats reach the ClusterBinding', async () => {
    const k1 = await app1Ready();
    const crd = await eventually('CRD on app1', () => a1.getOrNull(CoreResources.crds, undefined, WIDGETS_NAME));
    const binding = await a1.get<APIServiceBinding>(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', WIDGETS_NAME);
    expect(crd.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'APIServiceBinding', uid: binding.metadata.uid, controller: true })]);
    const spec = crd.spec as { group: string; scope: string; versions: Array<{ name: string; subresources?: unknown; additionalPrinterColumns?: unknown[] }> };
    expect(spec.group).toBe('test.klutch.anynines.com');
    expect(spec.scope).toBe('Namespaced');
    expect(spec.versions[0]).toMatchObject({
      name: 'v1alpha1',
      subresources: { status: {} },
      additionalPrinterColumns: [expect.objectContaining({ name: 'Phase' })],
    });

    const ready = await eventually('binding Ready', async () => {
      const c = await condition(a1, WIDGETS_NAME, 'Ready');
      return c?.status === 'True' ? c : undefined;
    });
    expect(ready.status).toBe('True');
    const b = await a1.get<APIServiceBinding>(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', WIDGETS_NAME);
    const types = Object.fromEntries((b.status?.conditions ?? []).map((c) => [c.type, c.status]));
    expect(types).toMatchObject({ SecretValid: 'True', InformersSynced: 'True', Heartbeating: 'True', Connected: 'True', Ready: 'True' });
    expect(b.status?.providerPrettyName).toBe('Test Provider');
    // The konnector's finalizer keeps a deleted binding until its CRD and objects are cleaned up.
    expect(b.metadata.finalizers).toContain(BINDING_FINALIZER);
    // The provider sees the consumer's state on the export.
    const exp = await eventually('export status', async () => {
      const x = await cpc.get<KubeObject & { status?: { conditions?: Condition[]; acceptedNames?: { kind?: string }; storedVersions?: string[] } }>(
        BINDING_RESOURCES.apiServiceExports,
        'cluster-app1',
        WIDGETS_NAME,
      );
      return getCondition(x.status?.conditions, 'Ready')?.status === 'True' ? x : undefined;
    });
    expect(Object.fromEntries(exp.status!.conditions!.map((c) => [c.type, c.status]))).toMatchObject({
      Connected: 'True',
      ConsumerInSync: 'True',
      Established: 'True',
      NamesAccepted: 'True',
    });
    expect(exp.status?.acceptedNames?.kind).toBe('Widget');
    expect(exp.status?.storedVersions).toEqual(['v1alpha1']);

    const cb = await eventually('heartbeat', async () => {
      const x = await cpc.get<ClusterBinding>(BINDING_RESOURCES.clusterBindings, 'cluster-app1', 'cluster');
      return x.status?.lastHeartbeatTime ? x : undefined;
    });
    expect(cb.status).toMatchObject({ heartbeatInterval: '4s', konnectorVersion: expect.stringMatching(/^v\d+\.\d+\.\d+/) });
    const first = Date.parse(cb.status!.lastHeartbeatTime!);
    await eventually(
      'a later heartbeat',
      async () => {
        const x = await cpc.get<ClusterBinding>(BINDING_RESOURCES.clusterBindings, 'cluster-app1', 'cluster');
        return Date.parse(x.status!.lastHeartbeatTime!) > first;
      },
      15_000,
    );
    // The heartbeat metrics the dashboard and the KlutchKonnectorNotHeartbeating alert read.
    const beats = (await k1.registry.getSingleMetric('klutch_konnector_heartbeats_total')!.get()).values;
    expect(beats.find((v) => v.labels.cluster_namespace === 'cluster-app1' && v.labels.result === 'success')?.value).toBeGreaterThanOrEqual(2);
    const last = (await k1.registry.getSingleMetric('klutch_konnector_last_heartbeat_timestamp_seconds')!.get()).values;
    expect(last.find((v) => v.labels.cluster_namespace === 'cluster-app1')?.value).toBeGreaterThanOrEqual(Math.floor(first / 1000));
    const interval = (await k1.registry.getSingleMetric('klutch_konnector_heartbeat_interval_seconds')!.get()).values;
    expect(interval).toEqual([expect.objectContaining({ labels: { cluster_namespace: 'cluster-app1' }, value: 4 })]);
  });

  it('spec up: a downstream object appears upstream in the assigned provider namespace, with finalizer and bound annotation', async () => {
    await app1Ready();
    await ensure(a1, CoreResources.namespaces, { metadata: { name: 'team-a' } });
    await a1.create(WIDGETS, {
      metadata: { name: 'w1', namespace: 'team-a', labels: { 'app.kubernetes.io/name': 'shop', app: 'shop' } },
      spec: { size: 3, color: 'red', tags: ['a'] },
    });
    const ans = await eventually('APIServiceNamespace team-a', async () => {
      const o = await cpc.getOrNull<KubeObject & { status?: { namespace?: string } }>(BINDING_RESOURCES.apiServiceNamespaces, 'cluster-app1', 'team-a');
      return o?.status?.namespace ? o : undefined;
    });
    expect(ans.status!.namespace).toBe('cluster-app1-team-a');
    const up = await eventually('upstream w1', () => cpc.getOrNull<Widget>(WIDGETS, 'cluster-app1-team-a', 'w1'));
    expect(up.spec).toEqual({ size: 3, color: 'red', tags: ['a'] });
    expect(up.metadata.annotations?.[BOUND_ANNOTATION]).toBe('true');
    expect(up.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'shop' }); // only allow-listed keys go up (contract/metadata-keys.ts)
    expect(up.metadata.ownerReferences).toBeUndefined();
    expect(up.metadata.finalizers).toBeUndefined();
    const down = await a1.get<Widget>(WIDGETS, 'team-a', 'w1');
    expect(down.metadata.finalizers).toContain(SYNCER_FINALIZER);
    expect((up.metadata.managedFields as Array<{ manager: string }> | undefined)?.map((m) => m.manager)).toBeDefined();

    // Consumer spec change goes up.
    await a1.mergePatch(WIDGETS, 'team-a', 'w1', { spec: { size: 5 } });
    await eventually('size 5 upstream', async () => (await cpc.get<Widget>(WIDGETS, 'cluster-app1-team-a', 'w1')).spec?.size === 5);
    // A field the consumer removes is removed upstream too.
    await a1.jsonPatch(WIDGETS, 'team-a', 'w1', [{ op: 'remove', path: '/spec/tags' }]);
    await eventually('tags removed upstream', async () => (await cpc.get<Widget>(WIDGETS, 'cluster-app1-team-a', 'w1')).spec?.tags === undefined);
  });

  it('status down: upstream status is copied to the downstream status subresource', async () => {
    await app1Ready();
    await syncedWidget(a1, 'cluster-app1', 'team-a', 'w-status', { size: 1 });
    await cpc.mergePatch(WIDGETS, 'cluster-app1-team-a', 'w-status', { status: { phase: 'Ready', message: 'provisioned' } }, 'status');
    const down = await eventually('status down', async () => {
      const d = await a1.get<Widget>(WIDGETS, 'team-a', 'w-status');
      return d.status?.phase === 'Ready' ? d : undefined;
    });
    expect(down.status).toEqual({ phase: 'Ready', message: 'provisioned' });
  });

  it('each synced object costs exactly one finalizer update downstream and one apply upstream (no repeated or conflicting writes)', async () => {
    await app1Ready();
    await ensure(a1, CoreResources.namespaces, { metadata: { name: 'team-bulk' } });
    await a1.create(WIDGETS, { metadata: { name: 'first', namespace: 'team-bulk' }, spec: { size: 1 } });
    await eventually('first upstream', () => cpc.getOrNull(WIDGETS, 'cluster-app1-team-bulk', 'first'));
    const [app0, cp0] = await Promise.all([requestCounts(a1, 'widgets'), requestCounts(cpc, 'widgets')]);
    const names = Array.from({ length: 60 }, (_, i) => `bulk-${i}`);
    await Promise.all(names.map((name) => a1.create(WIDGETS, { metadata: { name, namespace: 'team-bulk' }, spec: { size: 2 } })));
    await eventually('all 60 upstream', async () => (await cpc.list(WIDGETS, 'cluster-app1-team-bulk')).items.length === 61);
    await eventually('all 60 carry the finalizer', async () =>
      (await a1.list(WIDGETS, 'team-bulk')).items.every((o) => o.metadata.finalizers?.includes(SYNCER_FINALIZER)),
    );
    await sleep(1000); // late duplicates would show up here
    const [app1d, cp1d] = await Promise.all([requestCounts(a1, 'widgets'), requestCounts(cpc, 'widgets')]);
    const writes = (d: Record<string, number>) => Object.fromEntries(Object.entries(d).filter(([k]) => !/^(GET|LIST|WATCH)\b/.test(k)));
    expect(writes(countDelta(app0, app1d))).toEqual({ POST: 60, PUT: 60 });
    expect(writes(countDelta(cp0, cp1d))).toEqual({ APPLY: 60 });
  });

  it('provider-side spec drift is reverted; fields only the provider sets are left alone', async () => {
    await app1Ready();
    await syncedWidget(a1, 'cluster-app1', 'team-a', 'w-drift', { size: 5, color: 'red' });
    await cpc.mergePatch(WIDGETS, 'cluster-app1-team-a', 'w-drift', { spec: { color: 'blue', resourceRef: { name: 'xr-1' } } });
    const up = await eventually('drift reverted', async () => {
      const u = await cpc.get<Widget>(WIDGETS, 'cluster-app1-team-a', 'w-drift');
      return u.spec?.color === 'red' ? u : undefined;
    });
    expect(up.spec).toEqual({ size: 5, color: 'red', resourceRef: { name: 'xr-1' } });
    const down = await a1.get<Widget>(WIDGETS, 'team-a', 'w-drift');
    expect(down.spec).toEqual({ size: 5, color: 'red' });
  });

  it('upstream deleted by the provider → recreated from the downstream object', async () => {
    await app1Ready();
    const before = await syncedWidget(a1, 'cluster-app1', 'team-a', 'w-recreate', { size: 5, color: 'red' });
    await cpc.delete(WIDGETS, 'cluster-app1-team-a', 'w-recreate');
    const after = await eventually('recreated upstream', async () => {
      const u = await cpc.getOrNull<Widget>(WIDGETS, 'cluster-app1-team-a', 'w-recreate');
      return u && u.metadata.uid !== before.metadata.uid ? u : undefined;
    });
    expect(after.spec).toEqual({ size: 5, color: 'red' });
    // The downstream object was never touched by the delete.
    expect((await a1.get<Widget>(WIDGETS, 'team-a', 'w-recreate')).metadata.deletionTimestamp).toBeUndefined();
  });

  it('claimed Secrets: only the credentials Secret comes down; created, updated, recreated and deleted on the right side', async () => {
    const pns = await boundNamespace('team-a');
    // Unclaimed provider Secrets (no credentials label) and a consumer Secret (claim owner is Provider).
    await cpc.create(CoreResources.secrets, { metadata: { name: 'internal', namespace: pns }, stringData: { password: 'provider-only' } });
    await a1.create(CoreResources.secrets, {
      metadata: { name: 'app-secret', namespace: 'team-a', labels: { [CREDS_LABEL]: 'true' } },
      stringData: { k: 'v' },
    });
    await cpc.create(CoreResources.secrets, {
      metadata: { name: 'w1-creds', namespace: pns, labels: { [CREDS_LABEL]: 'true' } },
      stringData: { username: 'u1', password: 'p1' },
    });
    const down = await eventually('creds down', () => a1.getOrNull<Secret>(CoreResources.secrets, 'team-a', 'w1-creds'));
    expect(Buffer.from(down.data!.password!, 'base64').toString()).toBe('p1');
    expect(down.metadata.annotations?.[RESOURCE_OWNER_ANNOTATION]).toBe('Provider');
    await never('unclaimed provider Secret reached the app cluster', () => a1.getOrNull(CoreResources.secrets, 'team-a', 'internal'));
    await never('consumer Secret went up to the provider', () => cpc.getOrNull(CoreResources.secrets, pns, 'app-secret'), 500);

    // Update upstream → updated downstream.
    await cpc.mergePatch(CoreResources.secrets, pns, 'w1-creds', { stringData: { password: 'p2' } });
    await eventually('rotated password down', async () => {
      const s = await a1.get<Secret>(CoreResources.secrets, 'team-a', 'w1-creds');
      return Buffer.from(s.data!.password!, 'base64').toString() === 'p2';
    });
    // Consumer deletes its copy → recreated (provider owns it).
    const uid = (await a1.get(CoreResources.secrets, 'team-a', 'w1-creds')).metadata.uid;
    await a1.delete(CoreResources.secrets, 'team-a', 'w1-creds');
    await eventually('recreated down', async () => {
      const s = await a1.getOrNull(CoreResources.secrets, 'team-a', 'w1-creds');
      return s && s.metadata.uid !== uid;
    });
    // Consumer edits its copy → reverted.
    await a1.mergePatch(CoreResources.secrets, 'team-a', 'w1-creds', { stringData: { password: 'hacked' } });
    await eventually('consumer edit reverted', async () => {
      const s = await a1.get<Secret>(CoreResources.secrets, 'team-a', 'w1-creds');
      return Buffer.from(s.data!.password!, 'base64').toString() === 'p2';
    });
    // Provider deletes it → deleted downstream; the consumer's own Secret is untouched.
    await cpc.delete(CoreResources.secrets, pns, 'w1-creds');
    await eventually('deleted down', async () => !(await a1.getOrNull(CoreResources.secrets, 'team-a', 'w1-creds')));
    expect(await a1.getOrNull(CoreResources.secrets, 'team-a', 'app-secret')).toBeDefined();
    // Provider recreates it → comes down again.
    await cpc.create(CoreResources.secrets, {
      metadata: { name: 'w1-creds', namespace: pns, labels: { [CREDS_LABEL]: 'true' } },
      stringData: { password: 'p3' },
    });
    await eventually('recreated upstream comes down', () => a1.getOrNull(CoreResources.secrets, 'team-a', 'w1-creds'));
  });

  it('provider-created objects are adopted into the app cluster', async () => {
    await boundNamespace('team-a');
    await cpc.create(WIDGETS, { metadata: { name: 'from-provider', namespace: 'cluster-app1-team-a' }, spec: { size: 1, color: 'green' } });
    const down = await eventually('adopted downstream', () => a1.getOrNull<Widget>(WIDGETS, 'team-a', 'from-provider'));
    expect(down.spec).toEqual({ size: 1, color: 'green' });
    await eventually(
      'upstream marked bound',
      async () => (await cpc.get(WIDGETS, 'cluster-app1-team-a', 'from-provider')).metadata.annotations?.[BOUND_ANNOTATION] === 'true',
    );
    // From now on the app cluster owns it: a consumer change goes up.
    await a1.mergePatch(WIDGETS, 'team-a', 'from-provider', { spec: { size: 2 } });
    await eventually('adopted object syncs up', async () => (await cpc.get<Widget>(WIDGETS, 'cluster-app1-team-a', 'from-provider')).spec?.size === 2);
  });

  it('downstream delete → upstream delete → finalizer released', async () => {
    await app1Ready();
    await syncedWidget(a1, 'cluster-app1', 'team-a', 'w-delete', { size: 1 });
    await eventually('w-delete has the syncer finalizer', async () =>
      (await a1.get(WIDGETS, 'team-a', 'w-delete')).metadata.finalizers?.includes(SYNCER_FINALIZER),
    );
    await a1.delete(WIDGETS, 'team-a', 'w-delete');
    await eventually('upstream deleted', async () => !(await cpc.getOrNull(WIDGETS, 'cluster-app1-team-a', 'w-delete')));
    await eventually('downstream gone', async () => !(await a1.getOrNull(WIDGETS, 'team-a', 'w-delete')));
  });

  it("two app clusters bound to the same export cannot see or touch each other's objects", async () => {
    await Promise.all([app1Ready(), app2Ready()]);
    // Same name and namespace on both app clusters, separate upstream objects.
    await syncedWidget(a1, 'cluster-app1', 'team-iso', 'twin', { size: 1, color: 'white' });
    const up2 = await syncedWidget(a2, 'cluster-app2', 'team-iso', 'twin', { size: 99, color: 'black' });
    expect(up2.spec).toEqual({ size: 99, color: 'black' });
    expect((await cpc.get<Widget>(WIDGETS, 'cluster-app1-team-iso', 'twin')).spec).toEqual({ size: 1, color: 'white' });
    await cpc.mergePatch(WIDGETS, 'cluster-app1-team-iso', 'twin', { status: { phase: 'One' } }, 'status');
    await eventually('app1 status', async () => (await a1.get<Widget>(WIDGETS, 'team-iso', 'twin')).status?.phase === 'One');
    // app2's credentials cannot read or write app1's provider namespace or cluster namespace.
    const app2Creds = KubeClient.fromKubeconfigString(p2.kubeconfig);
    for (const p of [
      app2Creds.get(WIDGETS, 'cluster-app1-team-iso', 'twin'),
      app2Creds.list(WIDGETS, 'cluster-app1-team-iso'),
      app2Creds.list(CoreResources.secrets, 'cluster-app1-team-iso'),
      app2Creds.list(BINDING_RESOURCES.apiServiceNamespaces, 'cluster-app1'),
      app2Creds.mergePatch(WIDGETS, 'cluster-app1-team-iso', 'twin', { spec: { size: 0 } }),
    ]) {
      await expect(p).rejects.toMatchObject({ code: 403 });
    }
    app2Creds.close();
    // app1's claimed Secret comes down to app1 only.
    await cpc.create(CoreResources.secrets, {
      metadata: { name: 'twin-creds', namespace: 'cluster-app1-team-iso', labels: { [CREDS_LABEL]: 'true' } },
      stringData: { password: 'one' },
    });
    await eventually('twin-creds on app1', () => a1.getOrNull(CoreResources.secrets, 'team-iso', 'twin-creds'));
    // app1's objects never appear on app2, and app2's status changes stay on app2.
    await a1.create(WIDGETS, { metadata: { name: 'only-on-app1', namespace: 'team-iso' }, spec: { size: 3 } });
    await eventually('only-on-app1 upstream', () => cpc.getOrNull(WIDGETS, 'cluster-app1-team-iso', 'only-on-app1'));
    await cpc.mergePatch(WIDGETS, 'cluster-app2-team-iso', 'twin', { status: { phase: 'Two' } }, 'status');
    await eventually('app2 status', async () => (await a2.get<Widget>(WIDGETS, 'team-iso', 'twin')).status?.phase === 'Two');
    expect((await a1.get<Widget>(WIDGETS, 'team-iso', 'twin')).status?.phase).toBe('One');
    const a2Widgets = (await a2.list(WIDGETS, 'team-iso')).items.map((w) => w.metadata.name);
    expect(a2Widgets).toEqual(['twin']);
    expect(await a2.getOrNull(CoreResources.secrets, 'team-iso', 'twin-creds')).toBeUndefined();
  });

  it('the CRD follows schema changes of the export', async () => {
    await app1Ready();
    await syncedWidget(a1, 'cluster-app1', 'team-a', 'w-zone', { size: 1 });
    await cpc.mergePatch(BINDING_RESOURCES.apiServiceExports, 'cluster-app1', WIDGETS_NAME, {
      spec: { versions: (widgetExport('cluster-app1', { zone: { type: 'string' } }).spec as { versions: unknown[] }).versions },
    });
    await eventually('zone in local CRD schema', async () => {
      const crd = (await a1.get(CoreResources.crds, undefined, WIDGETS_NAME)) as KubeObject & {
        spec: { versions: Array<{ schema: { openAPIV3Schema: { properties: { spec: { properties: Record<string, unknown> } } } } }> };
      };
      return 'zone' in crd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties;
    });
    // And syncing keeps working with the new field (after the syncer restart on the new export generation).
    await cpc.update(CoreResources.crds, {
      ...(await cpc.get(CoreResources.crds, undefined, WIDGETS_NAME)),
      spec: widgetCRD({ zone: { type: 'string' } }).spec,
    });
    await eventually('new field accepted downstream', async () => {
      await a1.mergePatch(WIDGETS, 'team-a', 'w-zone', { spec: { zone: 'eu' } });
      return (await a1.get<Widget & { spec: { zone?: string } }>(WIDGETS, 'team-a', 'w-zone')).spec.zone === 'eu';
    });
    await eventually(
      'zone upstream',
      async () => (await cpc.get<Widget & { spec: { zone?: string } }>(WIDGETS, 'cluster-app1-team-a', 'w-zone')).spec.zone === 'eu',
    );
  });

  it('refuses to take over a CRD it does not own: condition, no change', async () => {
    await app1Ready();
    const gadgets = widgetExport('cluster-app1');
    const spec = gadgets.spec as { names: Record<string, string>; group: string };
    spec.names = { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' };
    gadgets.metadata.name = `gadgets.${spec.group}`;
    await cpc.create(BINDING_RESOURCES.apiServiceExports, gadgets);
    const human: KubeObject = widgetCRD();
    human.metadata.name = `gadgets.${spec.group}`;
    (human.spec as { names: unknown }).names = { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' };
    await createCRDs(a1, [human]);
    const before = await a1.get(CoreResources.crds, undefined, human.metadata.name!);
    await a1.create(BINDING_RESOURCES.apiServiceBindings, {
      metadata: { name: human.metadata.name, namespace: 'klutch-bind' },
      spec: { kubeconfigSecretRef: { namespace: 'klutch-bind', name: 'kubeconfig-provider', key: 'kubeconfig' } },
    });
    const c = await eventually('Connected False', async () => {
      const x = await condition(a1, human.metadata.name!, 'Connected');
      return x?.status === 'False' ? x : undefined;
    });
    expect(c.reason).toBe('ForeignCustomResourceDefinition');
    expect(c.message).toMatch(/not owned by any APIServiceBinding.*delete that CRD/);
    expect((await condition(a1, human.metadata.name!, 'Ready'))?.status).toBe('False');
    const after = await a1.get(CoreResources.crds, undefined, human.metadata.name!);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.metadata.ownerReferences).toBeUndefined();
  });

  it('a binding with a broken kubeconfig Secret says what to do', async () => {
    await app1Ready();
    await a1.create(CoreResources.secrets, {
      metadata: { name: 'broken', namespace: 'klutch-bind' },
      stringData: { kubeconfig: 'apiVersion: v1\nkind: Config\n' },
    });
    await a1.create(BINDING_RESOURCES.apiServiceBindings, {
      metadata: { name: 'things.example.com', namespace: 'klutch-bind' },
      spec: { kubeconfigSecretRef: { namespace: 'klutch-bind', name: 'broken', key: 'kubeconfig' } },
    });
    const c = await eventually('SecretValid False', async () => {
      const x = await condition(a1, 'things.example.com', 'SecretValid');
      return x?.status === 'False' ? x : undefined;
    });
    expect(c.reason).toBe('KubeconfigSecretInvalid');
    expect(c.message).toContain('klutch-bind/broken');
    expect(c.message).toContain('rerun `kubectl bind`');
    await a1.create(BINDING_RESOURCES.apiServiceBindings, {
      metadata: { name: 'missing.example.com', namespace: 'klutch-bind' },
      spec: { kubeconfigSecretRef: { namespace: 'klutch-bind', name: 'nope', key: 'kubeconfig' } },
    });
    const m = await eventually('SecretValid False (missing)', async () => {
      const x = await condition(a1, 'missing.example.com', 'SecretValid');
      return x?.status === 'False' ? x : undefined;
    });
    expect(m.reason).toBe('KubeconfigSecretNotFound');
  });

  it('credential rotation: the provider kubeconfig Secret is copied over the consumer Secret, and the konnector reconnects with it', async () => {
    await boundNamespace('team-a');
    const token = await tokenFor(cpc, 'cluster-app1', 'konnector', 7200);
    const rotated = kubeconfigText(cp.kubeconfigForToken(token, 'cluster-app1'));
    await cpc.mergePatch(CoreResources.secrets, 'cluster-app1', 'kubeconfig', { data: { kubeconfig: Buffer.from(rotated).toString('base64') } });
    await eventually(
      'consumer Secret rotated',
      async () => {
        const s = await a1.get<Secret>(CoreResources.secrets, 'klutch-bind', 'kubeconfig-provider');
        return Buffer.from(s.data!.kubeconfig!, 'base64').toString() === rotated;
      },
      20_000,
    );
    // Still works on the new connection.
    await a1.create(WIDGETS, { metadata: { name: 'after-rotation', namespace: 'team-a' }, spec: { size: 7 } });
    await eventually('synced after rotation', () => cpc.getOrNull(WIDGETS, 'cluster-app1-team-a', 'after-rotation'));
    expect((await condition(a1, WIDGETS_NAME, 'Ready'))?.status).toBe('True');
  });

  it("cluster-scoped resources with Prefixed isolation: <clusterNs>-<name> upstream, other consumers' objects ignored", async () => {
    await app1Ready();
    const GIZMOS = { group: 'test.klutch.anynines.com', version: 'v1alpha1', plural: 'gizmos', kind: 'Gizmo', namespaced: false };
    const gizmoCRD = widgetCRD();
    gizmoCRD.metadata.name = 'gizmos.test.klutch.anynines.com';
    Object.assign(gizmoCRD.spec as object, { scope: 'Cluster', names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo', listKind: 'GizmoList' } });
    await createCRDs(cpc, [gizmoCRD]);
    // The backend grants cluster-scoped access for cluster-scoped exports.
    await ensure(cpc, CoreResources.clusterroles, {
      metadata: { name: 'konnector-gizmos' },
      rules: [{ apiGroups: ['test.klutch.anynines.com'], resources: ['gizmos', 'gizmos/status'], verbs: ['*'] }],
    });
    await ensure(cpc, CoreResources.clusterrolebindings, {
      metadata: { name: 'konnector-gizmos-app1' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'konnector-gizmos' },
      subjects: [{ kind: 'ServiceAccount', name: 'konnector', namespace: 'cluster-app1' }],
    });
    const exp = widgetExport('cluster-app1');
    exp.metadata.name = 'gizmos.test.klutch.anynines.com';
    Object.assign(exp.spec as object, {
      scope: 'Cluster',
      informerScope: 'Cluster',
      clusterScopedIsolation: 'Prefixed',
      names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo', listKind: 'GizmoList' },
      permissionClaims: [],
    });
    await cpc.create(BINDING_RESOURCES.apiServiceExports, exp);
    // Objects of another consumer and of the provider itself exist upstream before we bind.
    await cpc.create(GIZMOS, {
      metadata: { name: 'cluster-app2-g9', annotations: { 'klutch.anynines.com/cluster-namespace': 'cluster-app2' } },
      spec: { size: 9 },
    });
    await cpc.create(GIZMOS, { metadata: { name: 'provider-own' }, spec: { size: 8 } });
    await a1.create(BINDING_RESOURCES.apiServiceBindings, {
      metadata: { name: 'gizmos.test.klutch.anynines.com', namespace: 'klutch-bind' },
      spec: { kubeconfigSecretRef: { namespace: 'klutch-bind', name: 'kubeconfig-provider', key: 'kubeconfig' } },
    });
    await eventually('gizmo CRD established on app1', async () => {
      const c = (await a1.getOrNull(CoreResources.crds, undefined, 'gizmos.test.klutch.anynines.com')) as
        (KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } }) | undefined;
      return c?.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True');
    });
    await eventually('gizmo binding Ready', async () => (await condition(a1, 'gizmos.test.klutch.anynines.com', 'Ready'))?.status === 'True');
    await eventually('gizmo create accepted', async () => !!(await a1.create(GIZMOS, { metadata: { name: 'g1' }, spec: { size: 1 } }).catch(() => undefined)));
    const up = await eventually('cluster-app1-g1 upstream', () => cpc.getOrNull<Widget>(GIZMOS, undefined, 'cluster-app1-g1'));
    expect(up.metadata.annotations?.['klutch.anynines.com/cluster-namespace']).toBe('cluster-app1');
    expect(up.spec).toEqual({ size: 1 });
    await cpc.mergePatch(GIZMOS, undefined, 'cluster-app1-g1', { status: { phase: 'Up' } }, 'status');
    await eventually('gizmo status down', async () => (await a1.get<Widget>(GIZMOS, undefined, 'g1')).status?.phase === 'Up');
    // Neither the other consumer's object nor the provider's own unprefixed object shows up on app1.
    expect((await a1.list(GIZMOS)).items.map((g) => g.metadata.name)).toEqual(['g1']);
    await a1.delete(GIZMOS, undefined, 'g1');
    await eventually('upstream gizmo deleted', async () => !(await cpc.getOrNull(GIZMOS, undefined, 'cluster-app1-g1')));
    expect(await cpc.getOrNull(GIZMOS, undefined, 'cluster-app2-g9')).toBeDefined();
    expect(await cpc.getOrNull(GIZMOS, undefined, 'provider-own')).toBeDefined();
  });

  it('control-plane mode: an AppClusterBinding sets up the binding root namespace, and a konnector on the control plane syncs the app cluster', async () => {
    const root = bindingRootNamespace('platform', 'app2');
    expect(root).toBe('klutch-bind-platform-app2');
    const GADGETS = { group: 'test.klutch.anynines.com', version: 'v1alpha1', plural: 'gadgets', kind: 'Gadget', namespaced: true };
    const names = { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' };
    const crd = widgetCRD();
    crd.metadata.name = 'gadgets.test.klutch.anynines.com';
    Object.assign(crd.spec as object, { names });
    await createCRDs(cpc, [crd]);
    // What the backend provides in the root namespace: the export (with its credentials claim).
    const exp = widgetExport(root);
    exp.metadata.name = 'gadgets.test.klutch.anynines.com';
    Object.assign(exp.spec as object, { names });
    await ensure(cpc, CoreResources.namespaces, { metadata: { name: root } });
    await ensure(cpc, BINDING_RESOURCES.apiServiceExports, exp);
    // The platform operator: app cluster kubeconfig Secret + AppClusterBinding.
    await ensure(cpc, CoreResources.namespaces, { metadata: { name: 'platform' } });
    await cpc.create(CoreResources.secrets, {
      metadata: { name: 'app2-kubeconfig', namespace: 'platform' },
      stringData: { kubeconfig: kubeconfigText(app2.kubeConfig) },
    });
    const acbCtl = new AppClusterBindingController({ client: cpc, konnectorImage: 'example.com/klutch-konnector:test', logger: log('acb') });
    await acbCtl.start();
    try {
      await cpc.create(BINDING_RESOURCES.appClusterBindings, {
        metadata: { name: 'app2', namespace: 'platform' },
        spec: {
          kubeconfigSecretRef: { namespace: 'platform', name: 'app2-kubeconfig', key: 'kubeconfig' },
          apiExports: [{ group: 'test.klutch.anynines.com', resource: 'gadgets' }],
          konnector: { deploy: true, overrides: { env: [{ name: 'LOG_LEVEL', value: 'debug' }], resources: { limits: { memory: '256Mi' } } } },
        },
      });
      const acb = await eventually('AppClusterBinding Ready', async () => {
        const x = await cpc.get<KubeObject & { status?: { conditions?: Condition[] } }>(BINDING_RESOURCES.appClusterBindings, 'platform', 'app2');
        return getCondition(x.status?.conditions, 'Ready')?.status === 'True' ? x : undefined;
      });
      expect(acb.metadata.finalizers).toContain('klutch.anynines.com/appclusterbinding-cleanup');
      expect(Object.fromEntries(acb.status!.conditions!.map((c) => [c.type, c.status]))).toEqual({
        Ready: 'True',
        SecretValid: 'True',
        KonnectorDeployed: 'True',
      });
      const mirrored = await cpc.get<Secret>(CoreResources.secrets, root, 'app-cluster-kubeconfig');
      expect(Buffer.from(mirrored.data!.kubeconfig!, 'base64').toString()).toBe(kubeconfigText(app2.kubeConfig));
      expect((await cpc.get<ClusterBinding>(BINDING_RESOURCES.clusterBindings, root, 'cluster')).spec).toMatchObject({
        providerPrettyName: 'app2',
        kubeconfigSecretRef: { name: 'app-cluster-kubeconfig' },
      });
      expect(await cpc.getOrNull(CoreResources.rolebindings, root, 'control-plane-connector')).toBeDefined();
      const binding = await cpc.get<APIServiceBinding>(BINDING_RESOURCES.apiServiceBindings, root, 'gadgets.test.klutch.anynines.com');
      expect(binding.spec.kubeconfigSecretRef).toEqual({ namespace: root, name: 'app-cluster-kubeconfig', key: 'kubeconfig' });
      // Unlike Klutch, the credentials claim of the export is on the binding, accepted.
      expect(binding.spec.permissionClaims).toEqual([
        expect.objectContaining({ resource: 'secrets', state: 'Accepted', selector: expect.objectContaining({ owner: 'Provider' }) }),
      ]);
      const dep = await cpc.get<
        KubeObject & {
          spec: {
            template: { spec: { serviceAccountName: string; containers: Array<Record<string, unknown> & { args: string[]; env: Array<{ name: string }> }> } };
          };
        }
      >({ group: 'apps', version: 'v1', plural: 'deployments', namespaced: true, kind: 'Deployment' }, root, 'konnector');
      const ctr = dep.spec.template.spec.containers[0]!;
      expect(dep.spec.template.spec.serviceAccountName).toBe('klutch-binder');
      expect(ctr.image).toBe('example.com/klutch-konnector:test');
      expect(ctr.args).toEqual(
        expect.arrayContaining([
          '--control-plane-mode',
          `--binding-root-namespace=${root}`,
          '--app-cluster-kubeconfig-secret-name=app-cluster-kubeconfig',
          '--all-namespaces',
        ]),
      );
      expect(ctr.env.map((e) => e.name)).toEqual(['POD_NAME', 'POD_NAMESPACE', 'LOG_LEVEL']);
      expect(ctr.resources).toEqual({ limits: { memory: '256Mi' } });

      // The konnector as that Deployment runs it (in-process here: there is no kubelet).
      const k = new Konnector({
        appKubeConfig: app2.kubeConfig,
        bindingKubeConfig: cp.kubeConfig,
        bindingNamespace: root,
        controlPlaneMode: true,
        heartbeatIntervalMs: 4000,
        providerSyncTimeoutMs: 10_000,
        logger: log('konnector-cp-mode'),
      });
      konnectors.push(k);
      await k.start();
      await eventually('gadgets CRD established on app2', async () => {
        const c = (await a2.getOrNull(CoreResources.crds, undefined, 'gadgets.test.klutch.anynines.com')) as
          (KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } }) | undefined;
        return c?.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True');
      });
      await eventually('cp-mode binding Ready', async () => (await condition(cpc, 'gadgets.test.klutch.anynines.com', 'Ready', root))?.status === 'True');
      await ensure(a2, CoreResources.namespaces, { metadata: { name: 'shop' } });
      await eventually(
        'gadget created',
        async () => !!(await a2.create(GADGETS, { metadata: { name: 'gd1', namespace: 'shop' }, spec: { size: 2 } }).catch(() => undefined)),
      );
      const up = await eventually('gadget upstream', () => cpc.getOrNull<Widget>(GADGETS, `${root}-shop`, 'gd1'));
      expect(up.spec).toEqual({ size: 2 });
      await cpc.create(CoreResources.secrets, {
        metadata: { name: 'gd1-creds', namespace: `${root}-shop`, labels: { [CREDS_LABEL]: 'true' } },
        stringData: { password: 'cp' },
      });
      await eventually('credentials reach the app cluster in control-plane mode', () => a2.getOrNull(CoreResources.secrets, 'shop', 'gd1-creds'));
      const cb = await eventually('cp-mode heartbeat', async () => {
        const x = await cpc.get<ClusterBinding>(BINDING_RESOURCES.clusterBindings, root, 'cluster');
        return x.status?.lastHeartbeatTime ? x : undefined;
      });
      expect(cb.status?.konnectorVersion).toMatch(/^v/);

      // Deleting the AppClusterBinding: the bindings go first and the running konnector unbinds them
      // (CRD deleted on the app cluster, objects deleted upstream, its finalizer released); then the
      // Deployment and the root namespace go and the AppClusterBinding is released.
      await cpc.delete(BINDING_RESOURCES.appClusterBindings, 'platform', 'app2');
      await eventually('AppClusterBinding gone', async () => !(await cpc.getOrNull(BINDING_RESOURCES.appClusterBindings, 'platform', 'app2')), 90_000);
      expect(await a2.getOrNull(CoreResources.crds, undefined, 'gadgets.test.klutch.anynines.com')).toBeUndefined();
      expect(await cpc.getOrNull(BINDING_RESOURCES.apiServiceBindings, root, 'gadgets.test.klutch.anynines.com')).toBeUndefined();
      const upAfter = await cpc.getOrNull(GADGETS, `${root}-shop`, 'gd1');
      expect(!upAfter || !!upAfter.metadata.deletionTimestamp).toBe(true);
      const ns = await cpc.getOrNull(CoreResources.namespaces, undefined, root);
      expect(!ns || !!ns.metadata.deletionTimestamp).toBe(true);
      await k.stop();
      konnectors.splice(konnectors.indexOf(k), 1);
    } finally {
      await acbCtl.stop();
    }
  });

  it('namespace deleted on the app cluster → APIServiceNamespace deleted on the provider', async () => {
    await app1Ready();
    await ensure(a1, CoreResources.namespaces, { metadata: { name: 'team-gone' } });
    await a1.create(WIDGETS, { metadata: { name: 'tmp', namespace: 'team-gone' }, spec: { size: 1 } });
    await eventually('tmp upstream', () => cpc.getOrNull(WIDGETS, 'cluster-app1-team-gone', 'tmp'));
    await a1.delete(CoreResources.namespaces, undefined, 'team-gone');
    // The namespace controller deletes tmp; our finalizer waits for the upstream delete; then the namespace goes.
    await eventually(
      'APIServiceNamespace deleted',
      async () => !(await cpc.getOrNull(BINDING_RESOURCES.apiServiceNamespaces, 'cluster-app1', 'team-gone')),
      90_000,
    );
    expect(await cpc.getOrNull(WIDGETS, 'cluster-app1-team-gone', 'tmp')).toBeUndefined();
  });

  it('unbind deletes the CRD and its objects on both sides; re-bind brings the API back', async () => {
    await Promise.all([app1Ready(), app2Ready()]);
    await Promise.all([
      syncedWidget(a2, 'cluster-app2', 'team-a', 'w1', { size: 99, color: 'black' }),
      syncedWidget(a1, 'cluster-app1', 'team-unbind', 'w1', { size: 1 }),
    ]);
    await a2.delete(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', WIDGETS_NAME);
    await eventually('CRD deleted on app2', async () => !(await a2.getOrNull(CoreResources.crds, undefined, WIDGETS_NAME)), 90_000);
    expect(await cpc.getOrNull(WIDGETS, 'cluster-app2-team-a', 'w1')).toBeUndefined();
    // The konnector releases its finalizer once the CRD is gone; only then is the binding deleted.
    await eventually('binding released', async () => !(await a2.getOrNull(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', WIDGETS_NAME)), 30_000);
    // app1 is untouched.
    expect(await cpc.getOrNull(WIDGETS, 'cluster-app1-team-unbind', 'w1')).toBeDefined();
    // Re-bind.
    await a2.create(BINDING_RESOURCES.apiServiceBindings, {
      metadata: { name: WIDGETS_NAME, namespace: 'klutch-bind' },
      spec: { kubeconfigSecretRef: { namespace: 'klutch-bind', name: 'kubeconfig-provider', key: 'kubeconfig' }, permissionClaims: [] },
    });
    await eventually('re-bound binding Ready', async () => (await condition(a2, WIDGETS_NAME, 'Ready'))?.status === 'True', 60_000);
    await eventually(
      'w2 created after re-bind',
      async () => !!(await a2.create(WIDGETS, { metadata: { name: 'w2', namespace: 'team-a' }, spec: { size: 2 } }).catch(() => undefined)),
    );
    await eventually('w2 upstream', () => cpc.getOrNull(WIDGETS, 'cluster-app2-team-a', 'w2'));
  });

  it('a binding deleted while the konnector is down stays (finalizer) and is cleaned up on both sides when the konnector comes back', async () => {
    await app1Ready();
    const k2 = await app2Ready();
    await Promise.all([
      syncedWidget(a2, 'cluster-app2', 'team-a', 'w2', { size: 2 }),
      syncedWidget(a2, 'cluster-app2', 'team-a', 'w3', { size: 3 }),
      syncedWidget(a1, 'cluster-app1', 'team-down', 'w1', { size: 1 }),
    ]);
    await k2.stop();
    konnectors.splice(konnectors.indexOf(k2), 1);

    await a2.delete(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', WIDGETS_NAME);
    // Nobody cleans up while the konnector is down: the binding waits, terminating, and the API stays.
    await never(
      'binding released without the konnector',
      async () => !(await a2.getOrNull(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', WIDGETS_NAME)),
      2000,
    );
    expect((await a2.get(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', WIDGETS_NAME)).metadata.deletionTimestamp).toBeDefined();
    expect(await a2.getOrNull(CoreResources.crds, undefined, WIDGETS_NAME)).toBeDefined();

    await startKonnector(app2, 'konnector-app2-restarted').start();
    await eventually('binding released', async () => !(await a2.getOrNull(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', WIDGETS_NAME)), 90_000);
    await eventually('CRD deleted on app2', async () => !(await a2.getOrNull(CoreResources.crds, undefined, WIDGETS_NAME)), 90_000);
    for (const n of ['w2', 'w3']) expect(await cpc.getOrNull(WIDGETS, 'cluster-app2-team-a', n)).toBeUndefined();
    expect(await cpc.getOrNull(WIDGETS, 'cluster-app1-team-down', 'w1')).toBeDefined();
  });

  it('a binding deleted together with its kubeconfig Secret while the konnector is down: the app-cluster side is released, the upstream copies stay (nothing can reach the provider)', async () => {
    const k2 = await app2Ready({ claims: [] });
    expect(konnectors.filter((k) => k.app.server === a2.server)).toHaveLength(1);
    await syncedWidget(a2, 'cluster-app2', 'team-a', 'w4', { size: 4 });
    await eventually('w4 has the syncer finalizer', async () => (await a2.get(WIDGETS, 'team-a', 'w4')).metadata.finalizers?.includes(SYNCER_FINALIZER));
    await k2.stop();
    konnectors.splice(konnectors.indexOf(k2), 1);

    await a2.delete(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', WIDGETS_NAME);
    await a2.delete(CoreResources.secrets, 'klutch-bind', 'kubeconfig-provider');
    await startKonnector(app2, 'konnector-app2-fourth').start();
    // (The next test that needs app2 bound makes the kubeconfig Secret again: appReady → bindOnApp.)
    await eventually('binding released', async () => !(await a2.getOrNull(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', WIDGETS_NAME)), 90_000);
    expect(await a2.getOrNull(CoreResources.crds, undefined, WIDGETS_NAME)).toBeUndefined();
    // The provider was unreachable, so its copy is still there (the provider cleans it up with the namespace).
    expect(await cpc.getOrNull(WIDGETS, 'cluster-app2-team-a', 'w4')).toBeDefined();
  });

  it('a binding force-removed while the konnector is down and created again: the CRD is adopted, its objects stay and keep syncing', async () => {
    const k1 = await app1Ready();
    await syncedWidget(a1, 'cluster-app1', 'team-adopt', 'w1', { size: 1 });
    const before = await a1.get(CoreResources.crds, undefined, WIDGETS_NAME);
    const oldUid = (await a1.get(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', WIDGETS_NAME)).metadata.uid;
    await k1.stop();
    konnectors.splice(konnectors.indexOf(k1), 1);
    await a1.delete(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', WIDGETS_NAME);
    // An administrator removes the konnector's finalizer by hand: the binding is gone, the CRD stays.
    const b = await a1.get(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', WIDGETS_NAME);
    await a1.jsonPatch(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', WIDGETS_NAME, [
      { op: 'replace', path: '/metadata/finalizers', value: (b.metadata.finalizers ?? []).filter((f) => f !== BINDING_FINALIZER) },
    ]);
    await eventually('binding gone', async () => !(await a1.getOrNull(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', WIDGETS_NAME)));
    await bindOnApp(app1, p1);
    const newUid = (await a1.get(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', WIDGETS_NAME)).metadata.uid;
    expect(newUid).not.toBe(oldUid);

    await startKonnector(app1, 'konnector-app1-restarted').start();
    await eventually('binding Ready', async () => (await condition(a1, WIDGETS_NAME, 'Ready'))?.status === 'True', 60_000);
    const crd = await a1.get(CoreResources.crds, undefined, WIDGETS_NAME);
    expect(crd.metadata.uid).toBe(before.metadata.uid); // the same CRD, not recreated
    expect(crd.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'APIServiceBinding', uid: newUid, controller: true })]);
    expect(await a1.getOrNull(WIDGETS, 'team-adopt', 'w1')).toBeDefined();
    expect(await cpc.getOrNull(WIDGETS, 'cluster-app1-team-adopt', 'w1')).toBeDefined();
    await a1.create(WIDGETS, { metadata: { name: 'after-adopt', namespace: 'team-adopt' }, spec: { size: 9 } });
    await eventually('after-adopt upstream', () => cpc.getOrNull(WIDGETS, 'cluster-app1-team-adopt', 'after-adopt'));
  });
});
