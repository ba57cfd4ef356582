// KubeClient.apply with `result: false` does not decode the applied object, but a refusal still
// comes back as an ApiError with the server's reason and message.
import { describe, expect, test } from '@jest/globals';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, KubeClient } from '../../../runtime/core/client.js';

const WIDGETS = { group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true };

describe('KubeClient.apply result: false', () => {
  test('resolves with undefined on success and with the parsed object otherwise; errors keep their reason', async () => {
    const srv = http.createServer((req, res) => {
      res.setHeader('Content-Type', 'application/json');
      if (req.url!.includes('/widgets/bad')) {
        res.statusCode = 422;
        res.end(JSON.stringify({ kind: 'Status', reason: 'Invalid', message: 'spec.size: must be positive' }));
        return;
      }
      res.end(JSON.stringify({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'a', resourceVersion: '7' } }));
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const c = new KubeClient({ server: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, token: 't' });
    try {
      const obj = { metadata: { name: 'w', namespace: 'a' }, spec: { size: 1 } };
      await expect(c.apply(WIDGETS, obj, 'm', { force: true, result: false })).resolves.toBeUndefined();
      const parsed = await c.apply(WIDGETS, obj, 'm', { force: true });
      expect(parsed.metadata.resourceVersion).toBe('7');
      const err = await c.apply(WIDGETS, { ...obj, metadata: { name: 'bad', namespace: 'a' } }, 'm', { result: false }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe(422);
      expect((err as ApiError).reason).toBe('Invalid');
      expect((err as ApiError).message).toContain('spec.size: must be positive');
    } finally {
      c.close();
      await new Promise<void>((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      });
    }
  });
});
