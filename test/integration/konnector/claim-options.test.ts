// Permission-claim options on real clusters: one control plane, one app cluster, the konnector
// in-process. Each claim selects its own Secret names (claims with disjoint names do not touch each
// other's objects), so every option is exercised by one binding.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { CoreResources, KubeClient, type KubeObject } from '../../../runtime/core/client.js';
import { RESOURCE_OWNER_ANNOTATION, SOURCE_RESOURCE_VERSION_ANNOTATION, SOURCE_UID_ANNOTATION, type Secret } from '../../../runtime/konnector/types.js';
import { BINDING_RESOURCES } from '../../../contract/index.js';
import { ensure, eventually, never, startBoundPair, WIDGETS, WIDGETS_NAME, type BoundPair } from './fixture.js';

jest.setTimeout(180_000);

const CNS = 'team-a';
const PNS = 'cluster-co-team-a';

let cpc: KubeClient;
let ac: KubeClient;

const claim = (names: string[], extra: Record<string, unknown> = {}, owner: 'Provider' | 'Consumer' = 'Provider') => ({
  group: '',
  resource: 'secrets',
  version: 'v1',
  selector: { names, owner },
  state: 'Accepted',
  ...extra,
});

const CLAIMS = [
  claim(['def-creds', 'def-existing', 'def-control']),
  claim(['rep-existing'], { create: { replaceExisting: true } }),
  claim(['keep-deleted'], { onConflict: { recreateWhenConsumerSideDeleted: false } }),
  claim(['recreated'], { update: { alwaysRecreate: true } }),
  claim(['preserved'], { update: { preserving: ['data.keep', 'metadata.labels.team', 'metadata.name'] } }),
  claim(['def-up', 'meta-up-default'], {}, 'Consumer'),
  // metadata: the konnector's allow-list decides (ALLOWED below), a claim's key patterns narrow it per direction
  claim(['meta-down']),
  claim(['meta-narrow'], { update: { labels: [{ pattern: 'app.kubernetes.io/*' }, { pattern: 'argocd.argoproj.io/*' }], annotations: [] } }),
  claim(['meta-up-narrow'], { read: { labels: [{ pattern: 'example.com/*' }, { pattern: 'random-app-key' }] } }, 'Consumer'),
  claim(['up-recreated'], { update: { alwaysRecreate: true } }, 'Consumer'),
];

/**
 * The app cluster admin's additions to the default allow-list (contract/metadata-keys.ts): the plain
 * labels the other tests use, and one domain for the metadata tests.
 */
const ALLOWED = { labels: ['team', 'app', 'from', 'example.com/*'], annotations: ['example.com/*'] };

/** What the probe set on a claimed Secret: Argo CD, Grafana sidecar, replicator, reflector, kubed, Helm keys. */
const HOSTILE_LABELS = {
  'argocd.argoproj.io/secret-type': 'cluster',
  grafana_dashboard: '1',
  'app.kubernetes.io/managed-by': 'Helm',
  'kustomize.toolkit.fluxcd.io/name': 'apps',
};
const HOSTILE_ANNOTATIONS = {
  'replicator.v1.mittwald.de/replicate-to': '.*',
  'reflector.v1.k8s.emberstack.com/reflection-allowed': 'true',
  'reflector.v1.k8s.emberstack.com/reflection-auto-enabled': 'true',
  'kubed.appscode.com/sync': 'app=all',
  'meta.helm.sh/release-name': 'r',
  grafana_folder: 'x',
  'klutch.anynines.com/planted': 'x', // a key of the konnector's own domain: only the konnector writes those
};
/** The keys of a copy that are not the konnector's own. */
const foreignKeys = (m: Record<string, string> | undefined) => Object.keys(m ?? {}).filter((k) => !k.startsWith('klutch.anynines.com/'));

/** The konnector's --upstream-deletion-timeout in this suite. */
const DELETION_TIMEOUT_MS = 3000;
type Binding = KubeObject & { status?: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> } };

const dec = (s: Secret | undefined, k: string): string | undefined => (s?.data?.[k] === undefined ? undefined : Buffer.from(s.data[k], 'base64').toString());
const getDown = (name: string) => ac.getOrNull<Secret>(CoreResources.secrets, CNS, name);
const getUp = (name: string) => cpc.getOrNull<Secret>(CoreResources.secrets, PNS, name);
const upSecret = (name: string, stringData: Record<string, string>, labels?: Record<string, string>) =>
  cpc.create(CoreResources.secrets, { metadata: { name, namespace: PNS, labels }, stringData });
const downSecret = (name: string, stringData: Record<string, string>, labels?: Record<string, string>) =>
  ac.create(CoreResources.secrets, { metadata: { name, namespace: CNS, labels }, stringData });
const patchUp = (name: string, stringData: Record<string, string>) => cpc.mergePatch(CoreResources.secrets, PNS, name, { stringData });
const patchDown = (name: string, patch: Record<string, unknown>) => ac.mergePatch(CoreResources.secrets, CNS, name, patch);

let pair: BoundPair | undefined;

beforeAll(async () => {
  pair = await startBoundPair('clo', {
    clusterNamespace: 'cluster-co',
    claims: CLAIMS,
    konnector: { allowedMetadataKeys: ALLOWED, upstreamDeletionTimeoutMs: DELETION_TIMEOUT_MS },
  });
  ({ cpc, ac } = pair);
  // A bound object makes team-a a bound namespace (APIServiceNamespace → provider namespace).
  await ensure(ac, CoreResources.namespaces, { metadata: { name: CNS } });
  await eventually('widget created', () => ensure(ac, WIDGETS, { metadata: { name: 'w', namespace: CNS }, spec: { size: 1 } }), 60_000);
  await eventually(
    'provider namespace bound',
    async () => {
      const o = await cpc.getOrNull<KubeObject & { status?: { namespace?: string } }>(BINDING_RESOURCES.apiServiceNamespaces, 'cluster-co', CNS);
      return o?.status?.namespace === PNS && (await cpc.getOrNull(WIDGETS, PNS, 'w'));
    },
    120_000,
  );
}, 400_000);

afterAll(async () => {
  await pair?.stop();
}, 120_000);

describe('permission-claim options on real clusters', () => {
  it('defaults: copy with source annotations, updated in place, recreated when the consumer deletes it; a consumer object of the same name is left alone', async () => {
    await downSecret('def-existing', { v: 'consumer' });
    await upSecret('def-existing', { v: 'provider' });
    const up = await upSecret('def-creds', { v: '1' });
    const down = await eventually('def-creds down', () => getDown('def-creds'));
    expect(dec(down, 'v')).toBe('1');
    expect(down.metadata.annotations).toMatchObject({
      [RESOURCE_OWNER_ANNOTATION]: 'Provider',
      [SOURCE_UID_ANNOTATION]: up.metadata.uid,
      [SOURCE_RESOURCE_VERSION_ANNOTATION]: up.metadata.resourceVersion,
    });
    await never('the consumer def-existing was overwritten', async () => {
      const s = await getDown('def-existing');
      return dec(s, 'v') !== 'consumer' || s?.metadata.annotations?.[RESOURCE_OWNER_ANNOTATION] !== undefined;
    });

    const patched = await patchUp('def-creds', { v: '2' });
    const updated = await eventually('def-creds updated', async () => {
      const s = await getDown('def-creds');
      return dec(s, 'v') === '2' ? s : undefined;
    });
    expect(updated!.metadata.uid).toBe(down.metadata.uid);
    expect(updated!.metadata.annotations?.[SOURCE_RESOURCE_VERSION_ANNOTATION]).toBe(patched.metadata.resourceVersion);

    await ac.delete(CoreResources.secrets, CNS, 'def-creds');
    const again = await eventually('def-creds recreated', async () => {
      const s = await getDown('def-creds');
      return s && s.metadata.uid !== down.metadata.uid ? s : undefined;
    });
    expect(dec(again, 'v')).toBe('2');
  });

  it('create.replaceExisting: a consumer object of the same name is replaced by the provider copy, which then follows the provider', async () => {
    const mine = await downSecret('rep-existing', { v: 'consumer', only: 'consumer' }, { mine: 'yes' });
    await upSecret('rep-existing', { v: 'provider' }, { from: 'provider' });
    const replaced = await eventually('rep-existing replaced', async () => {
      const s = await getDown('rep-existing');
      return s?.metadata.annotations?.[RESOURCE_OWNER_ANNOTATION] === 'Provider' ? s : undefined;
    });
    expect(replaced.data && Object.keys(replaced.data)).toEqual(['v']);
    expect(dec(replaced, 'v')).toBe('provider');
    expect(replaced.metadata.labels).toEqual({ from: 'provider' });
    expect(replaced.metadata.uid).toBe(mine.metadata.uid); // replaced in place
    await patchUp('rep-existing', { v: 'provider-2' });
    await eventually('rep-existing follows the provider', async () => dec(await getDown('rep-existing'), 'v') === 'provider-2');
  });

  it('onConflict.recreateWhenConsumerSideDeleted=false: a consumer-deleted copy stays deleted until the provider object changes', async () => {
    await upSecret('keep-deleted', { v: '1' });
    await upSecret('def-control', { v: '1' });
    const first = await eventually('keep-deleted down', () => getDown('keep-deleted'));
    await patchUp('keep-deleted', { v: '2' });
    await eventually('keep-deleted updated while present', async () => dec(await getDown('keep-deleted'), 'v') === '2');
    const control = await eventually('def-control down', () => getDown('def-control'));

    await Promise.all([ac.delete(CoreResources.secrets, CNS, 'keep-deleted'), ac.delete(CoreResources.secrets, CNS, 'def-control')]);
    // Barrier: the default claim recreates its copy.
    await eventually('def-control recreated', async () => {
      const s = await getDown('def-control');
      return s && s.metadata.uid !== control.metadata.uid;
    });
    await never('keep-deleted was recreated', () => getDown('keep-deleted'), 4000);

    await patchUp('keep-deleted', { v: '3' });
    const back = await eventually('keep-deleted back after a provider change', () => getDown('keep-deleted'));
    expect(back.metadata.uid).not.toBe(first.metadata.uid);
    expect(dec(back, 'v')).toBe('3');
    // A second consumer delete is again not undone.
    await Promise.all([ac.delete(CoreResources.secrets, CNS, 'keep-deleted'), ac.delete(CoreResources.secrets, CNS, 'def-control')]);
    await eventually('def-control recreated again', () => getDown('def-control'));
    await never('keep-deleted was recreated the second time', () => getDown('keep-deleted'), 3000);
    // The provider deleting its object and creating it anew (new uid) brings the copy back too.
    await cpc.delete(CoreResources.secrets, PNS, 'keep-deleted');
    await eventually('provider keep-deleted gone', async () => !(await getUp('keep-deleted')));
    await upSecret('keep-deleted', { v: '4' });
    await eventually('keep-deleted back after the provider recreated it', async () => dec(await getDown('keep-deleted'), 'v') === '4');
  });

  it('update.alwaysRecreate: a change is applied by deleting and recreating the copy; no churn without a change', async () => {
    await upSecret('recreated', { v: '1' });
    const first = await eventually('recreated down', () => getDown('recreated'));
    await never('recreated churned without a change', async () => (await getDown('recreated'))?.metadata.uid !== first.metadata.uid, 2000);
    await patchUp('recreated', { v: '2' });
    const second = await eventually('recreated with v=2', async () => {
      const s = await getDown('recreated');
      return dec(s, 'v') === '2' ? s : undefined;
    });
    expect(second.metadata.uid).not.toBe(first.metadata.uid);
    // A consumer edit is reverted the same way (the copy must change).
    await patchDown('recreated', { stringData: { v: 'hacked' } });
    const third = await eventually('consumer edit reverted', async () => {
      const s = await getDown('recreated');
      return s && s.metadata.uid !== second.metadata.uid && dec(s, 'v') === '2' ? s : undefined;
    });
    expect(third.metadata.annotations?.[RESOURCE_OWNER_ANNOTATION]).toBe('Provider');
  });

  it('update.preserving: preserved data keys and labels of the copy survive updates; other fields follow the provider', async () => {
    await upSecret('preserved', { keep: 'p1', other: 'p1', gone: 'p1' }, { team: 'provider', app: 'a1' });
    const first = await eventually('preserved down', () => getDown('preserved'));
    expect(dec(first, 'keep')).toBe('p1'); // created as a full copy
    expect(first.metadata.labels).toEqual({ team: 'provider', app: 'a1' });

    // Consumer edits: a preserved key, a preserved label, a non-preserved key.
    await patchDown('preserved', { stringData: { keep: 'mine', other: 'mine' }, metadata: { labels: { team: 'consumer' } } });
    await eventually('non-preserved key reverted', async () => dec(await getDown('preserved'), 'other') === 'p1');
    let s = await getDown('preserved');
    expect(dec(s, 'keep')).toBe('mine');
    expect(s!.metadata.labels).toEqual({ team: 'consumer', app: 'a1' });

    await cpc.mergePatch(CoreResources.secrets, PNS, 'preserved', {
      stringData: { keep: 'p2', other: 'p2' },
      metadata: { labels: { app: 'a2', team: 'provider-2' } },
    });
    s = await eventually('provider update applied', async () => {
      const x = await getDown('preserved');
      return dec(x, 'other') === 'p2' && x?.metadata.labels?.app === 'a2' ? x : undefined;
    });
    expect(dec(s, 'keep')).toBe('mine');
    expect(dec(s, 'gone')).toBe('p1');
    expect(s.metadata.labels).toEqual({ team: 'consumer', app: 'a2' });
    expect(s.metadata.uid).toBe(first.metadata.uid);

    // A preserved key the consumer removed stays removed.
    await ac.jsonPatch(CoreResources.secrets, CNS, 'preserved', [{ op: 'remove', path: '/data/keep' }]);
    await patchUp('preserved', { other: 'p3' });
    s = await eventually('provider update p3', async () => {
      const x = await getDown('preserved');
      return dec(x, 'other') === 'p3' ? x : undefined;
    });
    expect(dec(s, 'keep')).toBeUndefined();
  });

  it('Consumer-owned: default updates the provider copy in place; update.alwaysRecreate recreates it', async () => {
    await downSecret('def-up', { v: '1' });
    await downSecret('up-recreated', { v: '1' });
    const [d1, r1] = await Promise.all([eventually('def-up up', () => getUp('def-up')), eventually('up-recreated up', () => getUp('up-recreated'))]);
    expect(r1.metadata.annotations?.[RESOURCE_OWNER_ANNOTATION]).toBe('Consumer');
    await Promise.all([patchDown('def-up', { stringData: { v: '2' } }), patchDown('up-recreated', { stringData: { v: '2' } })]);
    const [d2, r2] = await Promise.all([
      eventually('def-up v2', async () => {
        const s = await getUp('def-up');
        return dec(s, 'v') === '2' ? s : undefined;
      }),
      eventually('up-recreated v2', async () => {
        const s = await getUp('up-recreated');
        return dec(s, 'v') === '2' ? s : undefined;
      }),
    ]);
    expect(d2.metadata.uid).toBe(d1.metadata.uid);
    expect(r2.metadata.uid).not.toBe(r1.metadata.uid);
  });
  it('metadata down: none of the replication/GitOps/ownership keys a provider sets arrive on the app-cluster copy; allow-listed ones do', async () => {
    const metadata = (name: string) => ({
      name,
      namespace: PNS,
      labels: { ...HOSTILE_LABELS, 'app.kubernetes.io/name': 'pg', 'example.com/tier': 'gold', random: 'x' },
      annotations: { ...HOSTILE_ANNOTATIONS, 'example.com/rotated-at': 'today', note: 'x' },
    });
    await cpc.create(CoreResources.secrets, { metadata: metadata('meta-down'), stringData: { password: 'p' } });
    await cpc.create(CoreResources.secrets, { metadata: metadata('meta-narrow'), stringData: { password: 'p' } });
    const [down, narrow] = await Promise.all([
      eventually('meta-down down', () => getDown('meta-down')),
      eventually('meta-narrow down', () => getDown('meta-narrow')),
    ]);
    // the konnector's allow-list (defaults + ALLOWED): app.kubernetes.io/name and example.com/*
    expect(down.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'pg', 'example.com/tier': 'gold' });
    expect(foreignKeys(down.metadata.annotations)).toEqual(['example.com/rotated-at']);
    expect(down.metadata.annotations?.[RESOURCE_OWNER_ANNOTATION]).toBe('Provider');
    expect(down.metadata.annotations?.['klutch.anynines.com/planted']).toBeUndefined();
    // the claim's update.labels / update.annotations narrow it (its Argo CD pattern widens nothing)
    expect(narrow.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'pg' });
    expect(foreignKeys(narrow.metadata.annotations)).toEqual([]);
    // a later provider change of a never-crossing key changes nothing on the copy
    await cpc.mergePatch(CoreResources.secrets, PNS, 'meta-down', {
      metadata: { labels: { 'argocd.argoproj.io/secret-type': 'repository', 'example.com/tier': 'silver' } },
    });
    const updated = await eventually('meta-down follows the allowed label', async () => {
      const x = await getDown('meta-down');
      return x?.metadata.labels?.['example.com/tier'] === 'silver' ? x : undefined;
    });
    expect(updated.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'pg', 'example.com/tier': 'silver' });
    // a never-crossing annotation on the copy (as an older konnector left it) goes with the next reconcile
    await patchDown('meta-down', { metadata: { annotations: { 'reflector.v1.k8s.emberstack.com/reflection-auto-enabled': 'true' } } });
    const cleaned = await eventually('the stale reflector annotation removed', async () => {
      const x = await getDown('meta-down');
      return x && x.metadata.annotations?.['reflector.v1.k8s.emberstack.com/reflection-auto-enabled'] === undefined ? x : undefined;
    });
    expect(foreignKeys(cleaned.metadata.annotations)).toEqual(['example.com/rotated-at']);
    expect(cleaned.metadata.uid).toBe(down.metadata.uid);
  });

  it('metadata up: app-side keys do not leak to the provider, neither of claimed Secrets nor of bound objects; allow-listed ones do', async () => {
    const labels = { 'random-app-key': 'secret-project-name', 'app.kubernetes.io/name': 'shop', 'example.com/tier': 'gold' };
    const annotations = { 'random-app-annotation': 'internal', 'crossplane.io/external-name': 'someone-elses-db', 'example.com/rotated-at': 'today' };
    await ac.create(CoreResources.secrets, { metadata: { name: 'meta-up-default', namespace: CNS, labels, annotations }, stringData: { v: '1' } });
    await ac.create(CoreResources.secrets, { metadata: { name: 'meta-up-narrow', namespace: CNS, labels, annotations }, stringData: { v: '1' } });
    await ac.create(WIDGETS, {
      apiVersion: `${WIDGETS.group}/${WIDGETS.version}`,
      kind: 'Widget',
      metadata: { name: 'meta-w', namespace: CNS, labels, annotations },
      spec: { size: 1 },
    });
    const [def, narrow, w] = await Promise.all([
      eventually('meta-up-default up', () => getUp('meta-up-default')),
      eventually('meta-up-narrow up', () => getUp('meta-up-narrow')),
      eventually('meta-w up', () => cpc.getOrNull(WIDGETS, PNS, 'meta-w')),
    ]);
    for (const o of [def, w]) {
      expect(o.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'shop', 'example.com/tier': 'gold' });
      expect(foreignKeys(o.metadata.annotations)).toEqual(['example.com/rotated-at']);
    }
    // read.labels narrows: only example.com/* (random-app-key is named by the claim but not allowed by the app cluster)
    expect(narrow.metadata.labels).toEqual({ 'example.com/tier': 'gold' });
    expect(foreignKeys(narrow.metadata.annotations)).toEqual(['example.com/rotated-at']);
  });

  it('metadata of a provider-created (adopted) object: only allow-listed keys reach the app cluster', async () => {
    await cpc.create(WIDGETS, {
      apiVersion: `${WIDGETS.group}/${WIDGETS.version}`,
      kind: 'Widget',
      metadata: { name: 'meta-adopted', namespace: PNS, labels: { ...HOSTILE_LABELS, 'example.com/tier': 'gold' }, annotations: HOSTILE_ANNOTATIONS },
      spec: { size: 1 },
    });
    const adopted = await eventually('meta-adopted adopted', () => ac.getOrNull(WIDGETS, CNS, 'meta-adopted'));
    expect(adopted.metadata.labels).toEqual({ 'example.com/tier': 'gold' });
    expect(foreignKeys(adopted.metadata.annotations)).toEqual([]);
  });
});

describe('a provider that keeps its copy of a deleted object (a finalizer it never removes)', () => {
  it('holds the app-cluster object only until the deletion timeout; the binding says so until the provider lets go', async () => {
    const widget = { apiVersion: `${WIDGETS.group}/${WIDGETS.version}`, kind: 'Widget', metadata: { name: 'held', namespace: CNS }, spec: { size: 1 } };
    await ac.create(WIDGETS, widget);
    await eventually('held upstream', () => cpc.getOrNull(WIDGETS, PNS, 'held'));
    await cpc.mergePatch(WIDGETS, PNS, 'held', { metadata: { finalizers: ['provider.example.com/keep'] } });
    await ac.delete(WIDGETS, CNS, 'held');
    // released after the timeout (3 s), though the provider still has its copy
    await eventually('held released in the app cluster', async () => !(await ac.getOrNull(WIDGETS, CNS, 'held')), 60_000);
    const up = await cpc.getOrNull(WIDGETS, PNS, 'held');
    expect(up?.metadata.deletionTimestamp).toBeDefined();
    const timedOut = async () => {
      const b = await ac.get<Binding>(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', WIDGETS_NAME);
      return b.status?.conditions?.find((c) => c.type === 'ProviderDeletionTimedOut');
    };
    const cond = await eventually('the ProviderDeletionTimedOut condition', timedOut);
    expect(cond).toMatchObject({ status: 'True', reason: 'ProviderFinalizers' });
    expect(cond.message).toContain(`${CNS}/held (upstream ${PNS}/held, finalizers provider.example.com/keep)`);
    // the provider lets go: the copy goes, and so does the condition
    await cpc.mergePatch(WIDGETS, PNS, 'held', { metadata: { finalizers: null } });
    await eventually('the condition removed', async () => (await timedOut()) === undefined);
    expect(await cpc.getOrNull(WIDGETS, PNS, 'held')).toBeUndefined();
  });
});
