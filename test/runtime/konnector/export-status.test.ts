import { describe, expect, it } from '@jest/globals';
import { RequeueError } from '../../../runtime/core/controller.js';
import { silentLogger } from '../../../runtime/core/logger.js';
import { isolationFor, type Loc } from '../../../runtime/konnector/export-isolation.js';
import { StatusDownReconciler } from '../../../runtime/konnector/export-status.js';
import { BOUND_ANNOTATION } from '../../../runtime/konnector/types.js';
import type { KubeObject } from '../../../runtime/core/client.js';
import { ObjectStore } from '../../../runtime/core/object-cache.js';
import { FakeApiServer } from '../../support/fake-api-server.js';
import { widget, WIDGETS } from './_export-fixtures.js';

const isolation = isolationFor(true, undefined, {
  clusterNamespace: 'cluster-a',
  providerNamespaceFor: (ns) => ({ shop: 'cluster-a-shop' })[ns],
  consumerNamespaceFor: (ns) => ({ 'cluster-a-shop': 'shop' })[ns],
});
const bound = { annotations: { [BOUND_ANNOTATION]: 'true' } };

function setup(up: KubeObject[], down: KubeObject[]) {
  const app = new FakeApiServer().seed(WIDGETS, ...down);
  const provider = new FakeApiServer().seed(WIDGETS, ...up);
  const adopted: Array<{ up: KubeObject; c: Loc }> = [];
  const r = new StatusDownReconciler({
    resource: WIDGETS,
    providerResource: WIDGETS,
    isolation,
    consumers: ObjectStore.of(...down),
    providers: ObjectStore.of(...up),
    app: app.client,
    provider: provider.client,
    adoption: {
      adopt: async (u, c) => {
        adopted.push({ up: u, c });
        return 'adopt';
      },
    },
    log: silentLogger,
  });
  return { app, provider, adopted, r };
}

describe('StatusDownReconciler', () => {
  it('copies the upstream status onto the consumer object', async () => {
    const down = widget('shop', 'db', { spec: { size: 1 }, status: { phase: 'Pending' } });
    const { app, provider, r } = setup([widget('cluster-a-shop', 'db', { metadata: bound, status: { phase: 'Ready' } })], [down]);
    await expect(r.reconcile('cluster-a-shop/db')).resolves.toBe('status');
    expect(app.writes()).toEqual([{ verb: 'updateStatus', resource: 'widgets', namespace: 'shop', name: 'db', body: { ...down, status: { phase: 'Ready' } } }]);
    expect(provider.writes()).toEqual([]);
  });

  it('writes nothing when the status is already equal, absent upstream, or the consumer object is being deleted', async () => {
    const up = widget('cluster-a-shop', 'db', { metadata: bound, status: { phase: 'Ready' } });
    for (const [u, d] of [
      [up, widget('shop', 'db', { status: { phase: 'Ready' } })],
      [widget('cluster-a-shop', 'db', { metadata: bound }), widget('shop', 'db', { status: { phase: 'Pending' } })],
      [up, widget('shop', 'db', { metadata: { deletionTimestamp: '2026-01-01T00:00:00Z' as never } })],
    ]) {
      const { app, provider, r } = setup([u], [d]);
      await expect(r.reconcile('cluster-a-shop/db')).resolves.toBeUndefined();
      expect([...app.writes(), ...provider.writes()]).toEqual([]);
    }
  });

  it('ignores provider objects that are not this consumer’s, and keys with no upstream object', async () => {
    const { app, provider, r } = setup([widget('cluster-b-shop', 'db', { metadata: bound, status: { a: 1 } })], [widget('shop', 'db')]);
    await expect(r.reconcile('cluster-b-shop/db')).resolves.toBeUndefined();
    await expect(r.reconcile('cluster-a-shop/gone')).resolves.toBeUndefined();
    expect([...app.writes(), ...provider.writes()]).toEqual([]);
  });

  it('deletes a bound upstream object whose consumer object is gone (an orphan), by uid', async () => {
    const { provider, adopted, r } = setup([widget('cluster-a-shop', 'db', { metadata: bound })], []);
    await expect(r.reconcile('cluster-a-shop/db')).resolves.toBe('delete-orphan');
    expect(provider.writes()).toEqual([{ verb: 'delete', resource: 'widgets', namespace: 'cluster-a-shop', name: 'db', opts: { uid: 'uid-db' } }]);
    expect(adopted).toEqual([]);
  });

  it('hands an unbound upstream object without a consumer object to adoption, and leaves a terminating one alone', async () => {
    const up = widget('cluster-a-shop', 'made-by-provider');
    const { provider, adopted, r } = setup([up, widget('cluster-a-shop', 'going', { metadata: { deletionTimestamp: 'x' as never } })], []);
    await expect(r.reconcile('cluster-a-shop/made-by-provider')).resolves.toBe('adopt');
    expect(adopted).toEqual([{ up, c: { namespace: 'shop', name: 'made-by-provider' } }]);
    await expect(r.reconcile('cluster-a-shop/going')).resolves.toBeUndefined();
    expect(provider.writes()).toEqual([]);
  });

  it('retries soon on a conflict, gives up quietly on a vanished object, fails on other errors', async () => {
    const up = widget('cluster-a-shop', 'db', { metadata: bound, status: { phase: 'Ready' } });
    const down = widget('shop', 'db');
    const { app, r } = setup([up], [down]);
    app.seed(WIDGETS, widget('shop', 'db', { metadata: { resourceVersion: '2' } })); // changed since the cache saw it: 409 Conflict
    const err = await r.reconcile('cluster-a-shop/db').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RequeueError);
    expect((err as RequeueError).afterMs).toBe(50);
    await app.client.delete(WIDGETS, 'shop', 'db'); // gone meanwhile: 404
    await expect(r.reconcile('cluster-a-shop/db')).resolves.toBeUndefined();
    app.seed(WIDGETS, down).fail('updateStatus', FakeApiServer.error(500, 'InternalError'));
    await expect(r.reconcile('cluster-a-shop/db')).rejects.toThrow('InternalError');
    expect(app.writes().map((c) => c.verb)).toEqual(['updateStatus', 'delete', 'updateStatus', 'updateStatus']);
  });
});
