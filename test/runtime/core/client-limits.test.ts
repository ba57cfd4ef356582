// KubeClient bounds what the other side can make it hold: a response body past maxResponseBytes and a
// watch line past maxWatchLineBytes (a provider's server is the other side of a konnector's connection).
import { describe, expect, test } from '@jest/globals';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, CoreResources, KubeClient } from '../../../runtime/core/client.js';

/** A loopback server whose handler the test gives; stops everything it opened. */
async function server(handler: http.RequestListener) {
  const srv = http.createServer(handler);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      }),
  };
}

describe('KubeClient size limits', () => {
  test('a response body past maxResponseBytes fails the request with ResponseTooLarge, naming the limit', async () => {
    let written = 0;
    const s = await server((_req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.write('{"items":["');
      // an endless body: stops only when the client goes away
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const more = () => {
        while (!res.destroyed && written < 64 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end('"]}');
      };
      more();
    });
    const c = new KubeClient({ server: s.url, token: 't' }, { maxResponseBytes: 1024 * 1024 });
    try {
      const err = await c.list(CoreResources.secrets, 'x').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).reason).toBe('ResponseTooLarge');
      expect((err as ApiError).message).toContain('exceeded 1048576 bytes (ClientOptions.maxResponseBytes)');
      expect(written).toBeLessThan(64 * 1024 * 1024); // the client hung up long before the server was done
    } finally {
      c.close();
      await s.close();
    }
  });

  test('a response within the limit is read as before', async () => {
    const s = await server((_req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ metadata: { resourceVersion: '1' }, items: [{ metadata: { name: 'a' } }] }));
    });
    const c = new KubeClient({ server: s.url, token: 't' }, { maxResponseBytes: 1024 });
    try {
      expect((await c.list(CoreResources.secrets, 'x')).items.map((o) => o.metadata.name)).toEqual(['a']);
    } finally {
      c.close();
      await s.close();
    }
  });

  test('a watch line past maxWatchLineBytes closes the stream; the events before it were delivered', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'first' } } }) + '\n');
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const more = () => {
        while (!res.destroyed) if (!res.write(chunk)) return void res.once('drain', more);
      };
      more();
    });
    const c = new KubeClient({ server: s.url, token: 't' }, { maxWatchLineBytes: 512 * 1024 });
    const names: string[] = [];
    try {
      const h = await c.watch(CoreResources.secrets, 'x', {}, (ev) => names.push(ev.object.metadata.name!));
      await h.done; // resolves only because the client closed the endless line
      expect(names).toEqual(['first']);
    } finally {
      c.close();
      await s.close();
    }
  });
});
