import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, KubeClient } from '../../../runtime/core/client.js';
import { isKindNotServed, ResourcePaths } from '../../../runtime/core/discovery.js';

/** A loopback server answering discovery like an API server; counts requests per path. */
async function discoveryServer(groups: Record<string, Array<{ name: string; kind: string; namespaced: boolean }>>) {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    const resources = groups[req.url ?? ''];
    res.setHeader('Content-Type', 'application/json');
    if (!resources) {
      res.statusCode = 404;
      res.end(JSON.stringify({ kind: 'Status', reason: 'NotFound', message: 'the server could not find the requested resource' }));
      return;
    }
    res.end(JSON.stringify({ kind: 'APIResourceList', resources }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const client = new KubeClient({ server: `http://127.0.0.1:${port}` }, { qps: 0 });
  return {
    client,
    hits,
    groups,
    close: () =>
      new Promise<void>((r) => {
        client.close();
        server.close(() => r());
      }),
  };
}

describe('ResourcePaths', () => {
  test('object and collection paths for namespaced, cluster-scoped and core kinds', async () => {
    const s = await discoveryServer({
      '/apis/example.org/v1': [
        { name: 'widgets', kind: 'Widget', namespaced: true },
        { name: 'widgets/status', kind: 'Widget', namespaced: true },
        { name: 'gadgets', kind: 'Gadget', namespaced: false },
      ],
      '/api/v1': [{ name: 'configmaps', kind: 'ConfigMap', namespaced: true }],
    });
    try {
      const paths = new ResourcePaths(s.client);
      expect(await paths.objectPath({ apiVersion: 'example.org/v1', kind: 'Widget', metadata: { name: 'w 1', namespace: 'team-a' } })).toBe(
        '/apis/example.org/v1/namespaces/team-a/widgets/w%201',
      );
      expect(await paths.objectPath({ apiVersion: 'example.org/v1', kind: 'Widget', metadata: { name: 'w' } }, 'dflt')).toBe(
        '/apis/example.org/v1/namespaces/dflt/widgets/w',
      );
      expect(await paths.objectPath({ apiVersion: 'example.org/v1', kind: 'Gadget', metadata: { name: 'g', namespace: 'ignored' } })).toBe(
        '/apis/example.org/v1/gadgets/g',
      );
      expect(await paths.objectPath({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } })).toBe('/api/v1/namespaces/default/configmaps/c');
      expect(await paths.collectionPath('example.org/v1', 'Widget', 'team-a')).toBe('/apis/example.org/v1/namespaces/team-a/widgets');
      // one discovery request per group version: the answers are cached
      expect(s.hits.filter((h) => h === '/apis/example.org/v1')).toHaveLength(1);
    } finally {
      await s.close();
    }
  });

  test('a kind that appears later is found by one refresh; a missing kind or group is a DISCOVER 404 naming it', async () => {
    const s = await discoveryServer({ '/apis/example.org/v1': [{ name: 'widgets', kind: 'Widget', namespaced: true }] });
    try {
      const paths = new ResourcePaths(s.client);
      await paths.resource('example.org/v1', 'Widget');
      s.groups['/apis/example.org/v1'] = [...s.groups['/apis/example.org/v1']!, { name: 'sprockets', kind: 'Sprocket', namespaced: true }];
      expect((await paths.resource('example.org/v1', 'Sprocket')).name).toBe('sprockets');

      const missingKind = await paths.resource('example.org/v1', 'Nope').catch((e: unknown) => e);
      expect(missingKind).toBeInstanceOf(ApiError);
      expect(isKindNotServed(missingKind)).toBe(true);
      expect((missingKind as ApiError).message).toContain('serves example.org/v1 but has no kind Nope');

      const missingGroup = await paths.resource('other.org/v2', 'Thing').catch((e: unknown) => e);
      expect(isKindNotServed(missingGroup)).toBe(true);
      expect((missingGroup as ApiError).apiMessage).toBe('the API server does not serve other.org/v2 (kind Thing); is its CRD installed?');
    } finally {
      await s.close();
    }
  });

  test('an ordinary 404 of a request is not mistaken for a kind that is not served', async () => {
    const s = await discoveryServer({});
    try {
      const e = await s.client.request('GET', '/api/v1/namespaces/x/configmaps/y').catch((err: unknown) => err);
      expect(e).toBeInstanceOf(ApiError);
      expect((e as ApiError).code).toBe(404);
      expect((e as ApiError).apiMessage).toBe('the server could not find the requested resource');
      expect(isKindNotServed(e)).toBe(false);
    } finally {
      await s.close();
    }
  });
});
