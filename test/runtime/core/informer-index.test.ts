// Informer indexes: byIndex lists an index value's objects, findByIndex finds the first one a predicate
// accepts without listing them; a handler that throws does not keep the next handler from its event.
import { describe, expect, test } from '@jest/globals';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreResources, KubeClient } from '../../../runtime/core/client.js';
import { Informer } from '../../../runtime/core/informer.js';

const cm = (name: string, team: string, deleting = false) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'x', resourceVersion: '1', labels: { team }, ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
});

describe('Informer indexes', () => {
  test('findByIndex returns the first object of the value that the predicate accepts', async () => {
    const srv = http.createServer((req, res) => {
      res.setHeader('Content-Type', 'application/json');
      if (req.url?.includes('watch=true')) {
        res.writeHead(200); // a watch that stays open without events
        return;
      }
      res.end(JSON.stringify({ metadata: { resourceVersion: '10' }, items: [cm('a', 'red', true), cm('b', 'red'), cm('c', 'blue')] }));
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const client = new KubeClient({ server: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, token: 't' });
    const inf = new Informer(client, CoreResources.configmaps, { namespace: 'x' });
    inf.addIndex('team', (o) => [o.metadata.labels?.team ?? '']);
    const seen: string[] = [];
    inf.addEventHandler({
      onAdd: () => {
        throw new Error('a broken handler');
      },
    });
    inf.addEventHandler({ onAdd: (o) => seen.push(o.metadata.name!) });
    try {
      inf.start();
      await inf.waitForSync(5000);
      expect(inf.byIndex('team', 'red').map((o) => o.metadata.name)).toEqual(['a', 'b']);
      expect(inf.findByIndex('team', 'red', (o) => !o.metadata.deletionTimestamp)?.metadata.name).toBe('b');
      expect(inf.findByIndex('team', 'red', () => true)?.metadata.name).toBe('a');
      expect(inf.findByIndex('team', 'green', () => true)).toBeUndefined();
      expect(() => inf.findByIndex('owner', 'x', () => true)).toThrow('no index "owner"; call addIndex first');
      expect(seen).toEqual(['a', 'b', 'c']);
    } finally {
      await inf.stop();
      client.close();
      await new Promise<void>((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      });
    }
  });
});
