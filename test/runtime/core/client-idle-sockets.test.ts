// KubeClient closes pooled keep-alive connections that stay idle (ClientOptions.idleSocketTimeoutMs).
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { KubeClient } from '../../../runtime/core/client.js';

/** A loopback server that answers every request with `{}`; tracks who closed each connection. */
async function server() {
  const conns: Array<{ socket: Socket; clientClosed: boolean }> = [];
  const srv = http.createServer((_req, res) => {
    res.setHeader('Content-Type', 'application/json');
    res.end('{}');
  });
  srv.keepAliveTimeout = 60_000; // the server never closes first: any close is the client's
  srv.on('connection', (socket: Socket) => {
    const c = { socket, clientClosed: false };
    conns.push(c);
    socket.on('end', () => (c.clientClosed = true));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  return {
    url,
    conns,
    close: () =>
      new Promise<void>((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      }),
  };
}

async function until(what: string, f: () => boolean, deadlineMs = 10_000): Promise<void> {
  for (const end = Date.now() + deadlineMs; !f();) {
    if (Date.now() > end) throw new Error(`not within ${deadlineMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('KubeClient idle keep-alive connections', () => {
  test('closes every pooled connection once it has been idle for idleSocketTimeoutMs, and opens new ones for later requests', async () => {
    const s = await server();
    const c = new KubeClient({ server: s.url }, { qps: 0, idleSocketTimeoutMs: 100 });
    try {
      await Promise.all(Array.from({ length: 4 }, () => c.request('GET', '/version')));
      expect(s.conns.length).toBeGreaterThan(1);
      await until('the client closes all idle connections', () => s.conns.every((x) => x.clientClosed));
      const before = s.conns.length;
      await expect(c.request('GET', '/version')).resolves.toEqual({});
      expect(s.conns.length).toBe(before + 1);
    } finally {
      c.close();
      await s.close();
    }
  });

  test('rejects a negative or non-numeric idleSocketTimeoutMs, naming it', () => {
    expect(() => new KubeClient({ server: 'http://127.0.0.1:1' }, { idleSocketTimeoutMs: -1 })).toThrow(
      'ClientOptions.idleSocketTimeoutMs must be a number of milliseconds >= 0, got -1',
    );
    expect(() => new KubeClient({ server: 'http://127.0.0.1:1' }, { idleSocketTimeoutMs: Number.NaN })).toThrow('got NaN');
  });
});
