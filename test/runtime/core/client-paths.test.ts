// KubeClient builds ordinary request paths without a URL object; what reaches the server must be what a
// URL would have made of the same path and query, for plain paths and for the ones it hands to a URL.
import { describe, expect, test } from '@jest/globals';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeClient } from '../../../runtime/core/client.js';

describe('KubeClient request paths', () => {
  test('path and query arrive as a URL would encode them, under the server URL path', async () => {
    const seen: string[] = [];
    const srv = http.createServer((req, res) => {
      seen.push(req.url!);
      res.setHeader('Content-Type', 'application/json');
      res.end('{}');
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const server = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/prefix/`;
    const c = new KubeClient({ server, token: 't' });
    const cases: Array<[string, Record<string, string | number | boolean | undefined> | undefined]> = [
      ['/api/v1/namespaces/a/secrets/b', undefined],
      ['/apis/example.com/v1/namespaces/a/widgets/w-1', { fieldManager: 'klutch konnector', force: 'true', dryRun: undefined }],
      ['/api/v1/secrets', { labelSelector: 'a in (x,y),b!=z', limit: 500, continue: 'eyJ+/=' }],
      ['/api/v1/namespaces/a b/secrets', { x: 'ü&=#' }],
      ['/api/v1/namespaces/a/../secrets', undefined],
      ['/api/v1/namespaces/a/%2E/secrets', undefined],
      ['/api/v1/namespaces/a/secrets?watch=1', { limit: 1 }],
    ];
    try {
      for (const [path, query] of cases) await c.request('GET', path, { query });
      const expected = cases.map(([path, query]) => {
        const u = new URL('/prefix' + path, server);
        for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
        return u.pathname + u.search;
      });
      expect(seen).toEqual(expected);
      expect(seen[1]).toBe('/prefix/apis/example.com/v1/namespaces/a/widgets/w-1?fieldManager=klutch+konnector&force=true');
    } finally {
      c.close();
      await new Promise<void>((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      });
    }
  });
});
