// An Informer whose watches the server ends at once (a broken proxy, a hostile server) backs off
// instead of reopening them in a tight loop.
import { describe, expect, test } from '@jest/globals';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreResources, KubeClient } from '../../../runtime/core/client.js';
import { Informer } from '../../../runtime/core/informer.js';

describe('Informer with watches that end at once', () => {
  test('reopens them with backoff, not in a loop', async () => {
    let watches = 0;
    const srv = http.createServer((req, res) => {
      res.setHeader('Content-Type', 'application/json');
      if (req.url?.includes('watch=true')) {
        watches++;
        res.writeHead(200).end(); // a clean, immediate end of the stream
        return;
      }
      res.end(JSON.stringify({ metadata: { resourceVersion: '1' }, items: [] }));
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const client = new KubeClient({ server: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, token: 't' });
    const inf = new Informer(client, CoreResources.secrets, { namespace: 'x' });
    try {
      inf.start();
      await inf.waitForSync(5000);
      await new Promise((r) => setTimeout(r, 2000));
      // backoff 0, 0.4, 0.8, 1.6 s …: a handful in 2 s; without it, hundreds
      expect(watches).toBeGreaterThan(0);
      expect(watches).toBeLessThanOrEqual(10);
    } finally {
      await inf.stop();
      client.close();
      srv.closeAllConnections();
      await new Promise<void>((r) => srv.close(() => r()));
    }
  });
});
