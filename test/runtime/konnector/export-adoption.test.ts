import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '../../../runtime/core/logger.js';
import { RequeueError } from '../../../runtime/core/controller.js';
import { AdoptionReconciler } from '../../../runtime/konnector/export-adoption.js';
import { NamespaceBudget } from '../../../runtime/konnector/namespace-budget.js';
import { policyFilter } from '../../../runtime/konnector/metadata.js';
import { MetadataKeyPolicy } from '../../../contract/metadata-keys.js';
import {
  ADOPTED_ANNOTATION,
  BOUND_ANNOTATION,
  CLUSTER_NAMESPACE_ANNOTATION,
  SPEC_HASH_ANNOTATION,
  SYNCER_FINALIZER,
} from '../../../runtime/konnector/types.js';
import { ObjectStore } from '../../../runtime/core/object-cache.js';
import { FakeApiServer } from '../../support/fake-api-server.js';
import { widget, WIDGETS } from './_export-fixtures.js';

function setup(max = 5, ...cached: ReturnType<typeof widget>[]) {
  const app = new FakeApiServer();
  const provider = new FakeApiServer().seed(WIDGETS, providerMade());
  const budget = new NamespaceBudget(max);
  const r = new AdoptionReconciler({
    resource: WIDGETS,
    providerResource: WIDGETS,
    consumers: ObjectStore.of(...cached),
    app: app.client,
    provider: provider.client,
    budget,
    // the admin lets label `tier` and annotation `note` cross besides the defaults
    metadata: policyFilter(MetadataKeyPolicy.create({ labels: ['tier'], annotations: ['note'] })),
    log: silentLogger,
  });
  return { app, provider, budget, r };
}

const providerMade = () =>
  widget('cluster-a-shop', 'db', {
    metadata: {
      labels: { tier: 'data', 'argocd.argoproj.io/secret-type': 'cluster', 'app.kubernetes.io/name': 'db', other: 'x' },
      annotations: {
        [CLUSTER_NAMESPACE_ANNOTATION]: 'cluster-a',
        [SPEC_HASH_ANNOTATION]: 'x',
        note: 'kept',
        'meta.helm.sh/release-name': 'r',
        'replicator.v1.mittwald.de/replicate-to': '.*',
        other: 'x',
      },
      finalizers: ['provider/finalizer'],
    },
    spec: { size: 3 },
    status: { ready: true },
  });

describe('AdoptionReconciler', () => {
  it('creates the provider-made object downstream (allow-listed labels and annotations only), marked bound and adopted with the syncer finalizer, then marks it bound upstream', async () => {
    const { app, provider, r } = setup();
    await expect(r.adopt(providerMade(), { namespace: 'shop', name: 'db' })).resolves.toBe('adopt');
    expect(app.writes()).toEqual([
      {
        verb: 'create',
        resource: 'widgets',
        namespace: 'shop',
        name: 'db',
        body: {
          apiVersion: 'example.com/v1',
          kind: 'Widget',
          metadata: {
            name: 'db',
            namespace: 'shop',
            labels: { tier: 'data', 'app.kubernetes.io/name': 'db' },
            annotations: { note: 'kept', [BOUND_ANNOTATION]: 'true', [ADOPTED_ANNOTATION]: 'true' },
            finalizers: [SYNCER_FINALIZER],
          },
          spec: { size: 3 },
        },
      },
    ]);
    expect(provider.writes()).toEqual([
      { verb: 'mergePatch', resource: 'widgets', namespace: 'cluster-a-shop', name: 'db', body: { metadata: { annotations: { [BOUND_ANNOTATION]: 'true' } } } },
    ]);
  });

  it('adopts no more than the budget per namespace, and says when to retry', async () => {
    const already = widget('shop', 'old', { metadata: { annotations: { [ADOPTED_ANNOTATION]: 'true' } } });
    const { app, provider, r } = setup(1, already);
    const err = await r.adopt(providerMade(), { namespace: 'shop', name: 'db' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RequeueError);
    expect((err as RequeueError).message).toBe('at most 1 provider-created objects per namespace');
    expect((err as RequeueError).afterMs).toBe(60_000);
    expect(app.writes()).toEqual([]);
    expect(provider.writes()).toEqual([]);
    // the same budget in another namespace is untouched
    await expect(r.adopt(providerMade(), { namespace: 'other', name: 'db' })).resolves.toBe('adopt');
  });

  it('an object that already exists downstream still gets marked upstream', async () => {
    const { app, provider, r } = setup();
    app.seed(WIDGETS, widget('shop', 'db')); // created downstream meanwhile: 409 AlreadyExists
    await expect(r.adopt(providerMade(), { namespace: 'shop', name: 'db' })).resolves.toBe('adopt');
    expect(provider.writes().map((c) => c.verb)).toEqual(['mergePatch']);
  });

  it('a failed create gives the budget back and fails', async () => {
    const { app, provider, budget, r } = setup(1);
    app.fail('create', FakeApiServer.error(500, 'InternalError'));
    await expect(r.adopt(providerMade(), { namespace: 'shop', name: 'db' })).rejects.toThrow('InternalError');
    expect(provider.writes()).toEqual([]);
    expect(budget.tryTake('shop', 'another', [])).toBe(true); // the failed one no longer counts
  });
});
