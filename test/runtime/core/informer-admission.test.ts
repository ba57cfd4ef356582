// An Informer with an admission (a cap on what it may cache): refused objects are neither cached nor
// handed to handlers, while listing too; cached ones keep syncing; what leaves the cache is forgotten.
import { describe, expect, test } from '@jest/globals';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreResources, KubeClient, type KubeObject } from '../../../runtime/core/client.js';
import { Informer, type InformerAdmission } from '../../../runtime/core/informer.js';

const secret = (name: string, rv: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'x', resourceVersion: rv } });

describe('Informer with an admission', () => {
  test('caches at most what the admission admits and keeps the admitted ones in sync', async () => {
    let release: (() => void) | undefined;
    const srv = http.createServer((req, res) => {
      res.setHeader('Content-Type', 'application/json');
      if (req.url?.includes('watch=true')) {
        res.writeHead(200);
        const ev = (type: string, o: object) => res.write(JSON.stringify({ type, object: o }) + '\n');
        ev('ADDED', secret('s4', '11')); // refused: the cap is reached
        ev('MODIFIED', secret('s1', '12')); // admitted before: kept in sync
        ev('DELETED', secret('s2', '13')); // leaves the cache: forgotten
        ev('ADDED', secret('s5', '14')); // room again: admitted
        release = () => res.end();
        return;
      }
      res.end(JSON.stringify({ metadata: { resourceVersion: '10' }, items: ['s1', 's2', 's3', 'sX'].map((n, i) => secret(n, String(i + 1))) }));
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const client = new KubeClient({ server: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, token: 't' });
    const held = new Set<string>();
    const refused: string[] = [];
    const admission: InformerAdmission = {
      admit: (o: KubeObject) => {
        if (held.has(o.metadata.name!)) return true;
        if (held.size >= 3) {
          refused.push(o.metadata.name!);
          return false;
        }
        held.add(o.metadata.name!);
        return true;
      },
      forget: (o: KubeObject) => void held.delete(o.metadata.name!),
    };
    const added: string[] = [];
    const inf = new Informer(client, CoreResources.secrets, { namespace: 'x', admission });
    inf.addEventHandler({ onAdd: (o) => added.push(o.metadata.name!) });
    try {
      inf.start();
      await inf.waitForSync(5000);
      for (let i = 0; i < 100 && !inf.getByName('x', 's5'); i++) await new Promise((r) => setTimeout(r, 20));
      expect(refused).toEqual(['sX', 's4']);
      expect(added).toEqual(['s1', 's2', 's3', 's5']);
      expect(
        inf
          .list()
          .map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`)
          .sort(),
      ).toEqual(['s1@12', 's3@3', 's5@14']);
      expect([...held].sort()).toEqual(['s1', 's3', 's5']);
    } finally {
      release?.();
      await inf.stop();
      client.close();
      srv.closeAllConnections();
      await new Promise<void>((r) => srv.close(() => r()));
    }
    expect(held.size).toBe(0); // a stopped informer holds nothing
  });
});
