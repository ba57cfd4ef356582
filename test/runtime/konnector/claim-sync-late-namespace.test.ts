// A namespace bound after a ClaimSync started: its two informers (app and provider side) list at different
// times. A provider object enqueued while the app side had not synced yet is dropped by the reconcile (it
// cannot tell "absent" from "not listed yet"); ClaimSync enqueues the pair again once both sides synced, so
// the copy comes down at once instead of at the next resync (issue: migration.test.ts lost shop-creds).
// The two API servers are small HTTP servers on loopback that answer lists and hold watches open.
import { afterEach, describe, expect, test } from '@jest/globals';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Registry } from 'prom-client';
import { KubeClient } from '../../../runtime/core/client.js';
import { ClaimSync } from '../../../runtime/konnector/claims.js';
import type { SyncContext } from '../../../runtime/konnector/context.js';
import { MetadataKeyPolicy } from '../../../contract/metadata-keys.js';
import { konnectorMetrics } from '../../../runtime/konnector/metrics.js';

interface Server {
  client: KubeClient;
  posts: Array<{ url: string; body: unknown }>;
  close(): Promise<void>;
}

/** Answers `GET …/secrets` lists with `items` once `gate` resolves, holds watches open, records POSTs. */
async function apiServer(items: unknown[], gate: Promise<void> = Promise.resolve()): Promise<Server> {
  const posts: Server['posts'] = [];
  const srv = http.createServer((req, res) => {
    res.setHeader('Content-Type', 'application/json');
    if (req.method === 'POST') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const obj = JSON.parse(body) as { metadata: Record<string, unknown> };
        posts.push({ url: req.url!, body: obj });
        res.writeHead(201).end(JSON.stringify({ ...obj, metadata: { ...obj.metadata, uid: 'u-copy', resourceVersion: '2' } }));
      });
      return;
    }
    if (req.url?.includes('watch=true')) {
      res.writeHead(200).flushHeaders(); // held open until the server closes
      return;
    }
    void gate.then(() => res.end(JSON.stringify({ metadata: { resourceVersion: '1' }, items })));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const client = new KubeClient({ server: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, token: 't' });
  return {
    client,
    posts,
    close: async () => {
      client.close();
      srv.closeAllConnections();
      await new Promise<void>((r) => srv.close(() => r()));
    },
  };
}

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const s of stops.splice(0).reverse()) await s();
});

describe('ClaimSync and a namespace bound after it started', () => {
  test('a provider Secret listed before the app side synced still comes down once both have', async () => {
    let releaseApp!: () => void;
    const appListed = new Promise<void>((r) => (releaseApp = r));
    const app = await apiServer([], appListed);
    stops.push(app.close);
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'shop-creds', namespace: 'p-shop', uid: 'u1', resourceVersion: '1' },
      data: { a: 'Yg==' },
    };
    const provider = await apiServer([secret]);
    stops.push(provider.close);

    let bound: Array<{ consumer: string; provider: string }> = [];
    let changed: ((ns: string[]) => void) | undefined;
    const registry = new Registry();
    const ctx: SyncContext = {
      clusterNamespace: 'cluster-ns',
      provider: provider.client,
      app: app.client,
      log: pino({ level: 'silent' }),
      registry,
      metrics: konnectorMetrics(registry),
      workers: 1,
      resyncMs: 3_600_000, // no resync within the test: only the fix brings the Secret down
      maxProviderObjectsPerNamespace: 100,
      claimConflicts: { report: () => false, resolve: () => undefined, resolveAll: () => undefined },
      upstreamDeletionTimeoutMs: 60_000,
      deletionTimeouts: { report: () => undefined, resolve: () => undefined },
      metadataKeys: MetadataKeyPolicy.DEFAULT,
      providerNamespaceFor: (c) => bound.find((b) => b.consumer === c)?.provider,
      consumerNamespaceFor: (p) => bound.find((b) => b.provider === p)?.consumer,
      ensureAPIServiceNamespace: async (c) => bound.find((b) => b.consumer === c)?.provider,
      boundNamespaces: () => bound,
      noteConsumerObject: () => undefined,
      isReservedNamespace: () => false,
      onNamespacesChanged: (cb) => {
        changed = cb;
        return () => (changed = undefined);
      },
    };
    const sync = new ClaimSync(ctx, { group: '', resource: 'secrets', version: 'v1', selector: { names: ['shop-creds'] } } as never, {
      name: 'postgresqlinstances',
      uid: 'binding-uid-1',
    });
    stops.push(() => sync.stop());
    await sync.start(5_000);

    bound = [{ consumer: 'shop', provider: 'p-shop' }];
    changed!(['shop']);
    // The provider side lists at once and its Secret is reconciled while the app side is still listing.
    const reconciles = async () => (await registry.getSingleMetric('klutch_reconcile_total')!.get()).values.reduce((n, v) => n + v.value, 0);
    for (let i = 0; i < 200 && (await reconciles()) === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(await reconciles()).toBeGreaterThan(0);
    expect(app.posts).toEqual([]);

    releaseApp();
    for (let i = 0; i < 200 && app.posts.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(app.posts.map((p) => p.url)).toEqual(['/api/v1/namespaces/shop/secrets']);
    expect(app.posts[0]!.body).toMatchObject({ metadata: { name: 'shop-creds', namespace: 'shop' }, data: { a: 'Yg==' } });
  });
});
