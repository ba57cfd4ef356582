// KubeClient's bodies on the wire: the request body's Content-Length counts bytes (not characters), a
// response in many chunks is read whole, and the TLS server name is the host's (none for an address).
import { describe, expect, test } from '@jest/globals';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeClient, serverNameOf } from '../../../runtime/core/client.js';

const WIDGETS = { group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true };

describe('KubeClient bodies', () => {
  test('a body with multi-byte characters arrives whole, and a long response is read whole', async () => {
    const received: Array<{ length: string | undefined; body: string }> = [];
    const long = 'x'.repeat(300_000); // several chunks on the way back
    const srv = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        received.push({ length: req.headers['content-length'], body });
        const o = JSON.parse(body) as { metadata: { name: string } };
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ ...o, metadata: { ...o.metadata, resourceVersion: '2' }, status: { note: long } }));
      });
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const c = new KubeClient({ server: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, token: 't' });
    try {
      const obj = { metadata: { name: 'w', namespace: 'a' }, spec: { text: 'Größe ✓ 数据' } };
      const back = await c.update<typeof obj & { status: { note: string } }>(WIDGETS, obj);
      expect(received).toHaveLength(1);
      expect(Number(received[0]!.length)).toBe(Buffer.byteLength(received[0]!.body));
      expect(JSON.parse(received[0]!.body)).toEqual({ apiVersion: 'example.com/v1', kind: 'Widget', ...obj });
      expect(back.spec.text).toBe('Größe ✓ 数据');
      expect(back.status.note).toBe(long);
    } finally {
      c.close();
      await new Promise<void>((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      });
    }
  });

  test('the TLS server name is the host name, and none for an IP address', () => {
    expect(serverNameOf(new URL('https://api.example.com:6443'))).toBe('api.example.com');
    expect(serverNameOf(new URL('https://127.0.0.1:6443'))).toBe('');
    expect(serverNameOf(new URL('https://[::1]:6443'))).toBe('');
  });
});
