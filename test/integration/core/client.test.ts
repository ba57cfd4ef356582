// The runtime's REST client against a real kube-apiserver: behaviour that only shows with many
// long-running watches on one client (as the konnector has: one watch per bound namespace and claim).
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { CoreResources, KubeClient, type KubeObject, type WatchHandle } from '../../../runtime/core/client.js';
import { Informer, stripManagedFields } from '../../../runtime/core/informer.js';
import { useCluster } from '../../realinfra/util.js';

jest.setTimeout(120_000);

const cluster = useCluster({ name: 'client-watches' });
const handles: WatchHandle[] = [];
let client: KubeClient | undefined;

afterEach(async () => {
  for (const h of handles.splice(0)) h.abort();
  client?.close();
  client = undefined;
});

const within = <T>(what: string, p: Promise<T>, ms: number): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms).unref())]);

describe('KubeClient', () => {
  it('keeps serving requests while more watches are open than its request pool has sockets', async () => {
    client = new KubeClient(cluster().kubeConfig, { qps: 0, burst: 1 });
    await client.create(CoreResources.namespaces, { metadata: { name: 'many-watches' } });
    // 100 watches: more than the 64 pooled sockets for ordinary requests.
    for (let i = 0; i < 100; i++) {
      handles.push(
        await within(
          `watch ${i}`,
          client.watch(CoreResources.configmaps, 'many-watches', { allowWatchBookmarks: true }, () => undefined),
          10_000,
        ),
      );
    }
    const seen: string[] = [];
    handles.push(await client.watch(CoreResources.configmaps, 'many-watches', {}, (ev) => seen.push(`${ev.type} ${ev.object.metadata.name}`)));
    // Ordinary requests still go through, in parallel.
    await within(
      '20 creates with 101 watches open',
      Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          client!.create(CoreResources.configmaps, { metadata: { name: `cm-${i}`, namespace: 'many-watches' }, data: { i: String(i) } }),
        ),
      ),
      15_000,
    );
    const list = await within('list', client.list(CoreResources.configmaps, 'many-watches'), 5_000);
    expect(list.items.map((o) => o.metadata.name).filter((n) => n!.startsWith('cm-'))).toHaveLength(20);
    // And the watches are live: the last one saw every create.
    const deadline = Date.now() + 10_000;
    while (seen.filter((s) => s.startsWith('ADDED cm-')).length < 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(seen.filter((s) => s.startsWith('ADDED cm-')).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `ADDED cm-${i}`).sort());
  });

  it('an informer with stripManagedFields caches objects without managedFields, and a PUT of a cached object keeps the live ones', async () => {
    client = new KubeClient(cluster().kubeConfig, { qps: 0, burst: 1 });
    await client.create(CoreResources.namespaces, { metadata: { name: 'stripped' } });
    await client.create(CoreResources.configmaps, { metadata: { name: 'listed', namespace: 'stripped' }, data: { a: '1' } });
    const inf = new Informer(client, CoreResources.configmaps, { namespace: 'stripped', transform: stripManagedFields });
    const delivered: KubeObject[] = [];
    inf.addEventHandler({ onAdd: (o) => delivered.push(o), onUpdate: (_, o) => delivered.push(o) });
    inf.start();
    try {
      await inf.waitForSync(10_000);
      await client.create(CoreResources.configmaps, { metadata: { name: 'watched', namespace: 'stripped' }, data: { a: '1' } });
      const deadline = Date.now() + 10_000;
      while (!inf.getByName('stripped', 'watched') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const listed = inf.getByName('stripped', 'listed')!;
      const watched = inf.getByName('stripped', 'watched')!;
      expect(listed.metadata.resourceVersion).toBeDefined();
      expect(watched.metadata.resourceVersion).toBeDefined();
      for (const o of [listed, watched, ...delivered]) expect(o.metadata.managedFields).toBeUndefined();
      // The server still has them, and a PUT of the stripped copy does not erase them.
      const before = await client.get(CoreResources.configmaps, 'stripped', 'watched');
      expect((before.metadata.managedFields as unknown[]).length).toBeGreaterThan(0);
      const after = await client.update(CoreResources.configmaps, { ...watched, data: { a: '2' } });
      expect((after.metadata.managedFields as Array<{ manager: string }>).length).toBeGreaterThan(0);
      expect(after.data).toEqual({ a: '2' });
    } finally {
      await inf.stop();
    }
  });
});
