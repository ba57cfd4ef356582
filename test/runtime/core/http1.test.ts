// The HTTP/1.1 pool of KubeClient (runtime/core/http1.ts) against a loopback server that writes its answers byte by
// byte where framing matters: bodies by length, chunked and to the end of the connection; interim answers; limits;
// timeouts, aborts, stale keep-alive connections and the connection cap.
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { headerLines, Http1Pool, MAX_HEAD_BYTES, ResponseTooLargeError, type Http1Request } from '../../../runtime/core/http1.js';

interface Received {
  readonly head: string;
  readonly body: string;
  readonly conn: number;
}

/**
 * A server that hands each complete request (head and Content-Length body) to `answer` with its socket; counts
 * connections. `answer` writes whatever bytes the test needs.
 */
async function scripted(answer: (r: Received, s: net.Socket) => void | Promise<void>) {
  const received: Received[] = [];
  const sockets: net.Socket[] = [];
  const srv = net.createServer((s) => {
    const conn = sockets.push(s);
    let buf = Buffer.alloc(0);
    s.on('data', (c) => {
      buf = Buffer.concat([buf, c]);
      for (;;) {
        const i = buf.indexOf('\r\n\r\n');
        if (i < 0) return;
        const head = buf.toString('latin1', 0, i);
        const len = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < i + 4 + len) return;
        const r = { head, body: buf.toString('utf8', i + 4, i + 4 + len), conn };
        buf = buf.subarray(i + 4 + len);
        received.push(r);
        void answer(r, s);
      }
    });
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  return {
    port,
    received,
    connections: () => sockets.length,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        srv.close(() => r());
      }),
  };
}

/** Writes `text` one byte at a time (each its own TCP segment as far as the client can tell). */
async function dribble(s: net.Socket, text: string): Promise<void> {
  for (const b of Buffer.from(text)) {
    s.write(Buffer.from([b]));
    await new Promise((r) => setImmediate(r));
  }
}

const pool = (port: number, o: Partial<ConstructorParameters<typeof Http1Pool>[0]> = {}) =>
  new Http1Pool({ protocol: 'http:', host: '127.0.0.1', port, hostHeader: `127.0.0.1:${port}`, maxSockets: 8, idleTimeoutMs: 0, ...o });

/** Runs `f` with a pool against a scripted server; closes both. */
async function withPool(
  answer: Parameters<typeof scripted>[0],
  f: (p: Http1Pool, srv: Awaited<ReturnType<typeof scripted>>) => Promise<void>,
  o: Partial<ConstructorParameters<typeof Http1Pool>[0]> = {},
): Promise<void> {
  const srv = await scripted(answer);
  const p = pool(srv.port, o);
  try {
    await f(p, srv);
  } finally {
    p.destroy();
    await srv.close();
  }
}

const req = (o: Partial<Http1Request> = {}): Http1Request => ({
  method: 'GET',
  path: '/api/v1/namespaces',
  headers: headerLines({ Accept: 'application/json' }),
  timeoutMs: 5000,
  maxBodyBytes: 1 << 20,
  ...o,
});

describe('Http1Pool', () => {
  test('reads a Content-Length body written byte by byte, and sends the next request on the same connection', async () => {
    await withPool(
      (_r, s) => dribble(s, 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"a":"bcd"}'),
      async (p, srv) => {
        const a = await p.request(req({ method: 'PUT', body: '{"x":1}' }));
        expect(a.status).toBe(200);
        expect(a.headers['content-type']).toBe('application/json');
        expect(a.body?.toString()).toBe('{"a":"bcd"}');
        await p.request(req());
        expect(srv.connections()).toBe(1);
        expect(srv.received[0]!.head).toBe(`PUT /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nAccept: application/json\r\nContent-Length: 7`);
        expect(srv.received[0]!.body).toBe('{"x":1}');
      },
    );
  });

  test('reads a chunked body with chunk extensions and a trailer, split at every byte', async () => {
    const chunked = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\n{"a"\r\nA\r\n:"0123456"\r\n1\r\n}\r\n0\r\nX-Trailer: t\r\n\r\n';
    await withPool(
      (_r, s) => dribble(s, chunked),
      async (p, srv) => {
        for (let i = 0; i < 2; i++) expect((await p.request(req())).body?.toString()).toBe('{"a":"0123456"}');
        expect(srv.connections()).toBe(1);
      },
    );
  });

  test('skips an interim 1xx answer; a 204 and a HEAD answer have no body', async () => {
    await withPool(
      (r, s) => {
        if (r.head.startsWith('HEAD')) s.write('HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n');
        else if (r.head.startsWith('DELETE')) s.write('HTTP/1.1 204 No Content\r\n\r\n');
        else s.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}');
      },
      async (p, srv) => {
        const created = await p.request(req({ method: 'POST', body: '{}' }));
        expect([created.status, created.body?.toString()]).toEqual([201, '{}']);
        const gone = await p.request(req({ method: 'DELETE' }));
        expect([gone.status, gone.body]).toEqual([204, undefined]);
        const head = await p.request(req({ method: 'HEAD' }));
        expect([head.status, head.body]).toEqual([200, undefined]);
        expect(srv.connections()).toBe(1);
      },
    );
  });

  test('a body without length or chunking ends with the connection, and `Connection: close` is honoured: neither connection is reused', async () => {
    await withPool(
      async (r, s) => {
        if (r.head.includes('/close-delimited')) {
          await dribble(s, 'HTTP/1.1 200 OK\r\n\r\n{"to":"the end"}');
          s.end();
        } else s.write('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}');
      },
      async (p, srv) => {
        expect((await p.request(req({ path: '/close-delimited' }))).body?.toString()).toBe('{"to":"the end"}');
        expect((await p.request(req({ path: '/close' }))).body?.toString()).toBe('{}');
        expect((await p.request(req({ path: '/close' }))).body?.toString()).toBe('{}');
        expect(srv.connections()).toBe(3);
      },
    );
  });

  test('limits: a head over MAX_HEAD_BYTES, a body over maxBodyBytes (announced or chunked); malformed answers name what is wrong', async () => {
    await withPool(
      (r, s) => {
        const path = r.head.split(' ')[1];
        if (path === '/big-head') s.write(`HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(MAX_HEAD_BYTES + 10)}\r\n\r\n`);
        else if (path === '/big-length') s.write('HTTP/1.1 200 OK\r\nContent-Length: 101\r\n\r\n');
        else if (path === '/big-chunked')
          s.write(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n${'x'.repeat(64)}\r\n40\r\n${'x'.repeat(64)}\r\n0\r\n\r\n`);
        else if (path === '/bad-status') s.write('ICY 200 OK\r\n\r\n');
        else if (path === '/bad-length') s.write('HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n');
        else s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n');
      },
      async (p) => {
        await expect(p.request(req({ path: '/big-head' }))).rejects.toThrow(`the response head exceeded ${MAX_HEAD_BYTES} bytes`);
        await expect(p.request(req({ path: '/big-length', maxBodyBytes: 100 }))).rejects.toBeInstanceOf(ResponseTooLargeError);
        await expect(p.request(req({ path: '/big-chunked', maxBodyBytes: 100 }))).rejects.toThrow('the response exceeded 100 bytes');
        await expect(p.request(req({ path: '/bad-status' }))).rejects.toThrow('not an HTTP/1.1 response: "ICY 200 OK"');
        await expect(p.request(req({ path: '/bad-length' }))).rejects.toThrow('malformed Content-Length: "1x"');
        await expect(p.request(req({ path: '/bad-chunk' }))).rejects.toThrow('malformed chunk size: "zz"');
      },
    );
  });

  test('no byte within timeoutMs ends the request; so does its AbortSignal', async () => {
    await withPool(
      () => undefined, // never answers
      async (p) => {
        await expect(p.request(req({ timeoutMs: 100 }))).rejects.toThrow('request timed out after 100 ms');
        const ac = new AbortController();
        const pending = p.request(req({ signal: ac.signal }));
        setTimeout(() => ac.abort(), 50);
        await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
      },
    );
  });

  test('a connection not established within timeoutMs (a TLS handshake never answered) fails as a timed-out request', async () => {
    await withPool(
      () => undefined,
      async (p) => {
        await expect(p.request(req({ timeoutMs: 100 }))).rejects.toThrow('request timed out after 100 ms');
      },
      { protocol: 'https:', tls: { rejectUnauthorized: true } },
    );
  });

  test('a reused connection the server closed before answering: a GET is sent again on a new one, a POST fails', async () => {
    let n = 0;
    await withPool(
      (_r, s) => {
        n++;
        if (n === 2 || n === 4)
          s.destroy(); // the second request of each connection finds it closed
        else s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}');
      },
      async (p, srv) => {
        await p.request(req());
        expect((await p.request(req())).status).toBe(200); // retried on connection 2
        expect(srv.connections()).toBe(2);
        await expect(p.request(req({ method: 'POST', body: '{}' }))).rejects.toMatchObject({ message: 'socket hang up', code: 'ECONNRESET' });
      },
    );
  });

  test('opens at most maxSockets connections; further requests wait for a free one', async () => {
    await withPool(
      async (_r, s) => {
        await new Promise((r) => setTimeout(r, 20));
        s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}');
      },
      async (p, srv) => {
        const all = await Promise.all(Array.from({ length: 7 }, () => p.request(req())));
        expect(all.map((r) => r.status)).toEqual(Array(7).fill(200));
        expect(srv.connections()).toBe(2);
      },
      { maxSockets: 2 },
    );
  });

  test('closes connections idle for idleTimeoutMs', async () => {
    const closed: number[] = [];
    await withPool(
      (r, s) => {
        s.once('end', () => closed.push(r.conn));
        s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}');
      },
      async (p, srv) => {
        await p.request(req());
        for (const end = Date.now() + 5000; closed.length === 0 && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
        expect(closed).toEqual([1]);
        await p.request(req());
        expect(srv.connections()).toBe(2);
      },
      { idleTimeoutMs: 50 },
    );
  });

  test('refuses header values and paths that would break the framing, naming them', async () => {
    expect(() => headerLines({ Authorization: 'Bearer a\r\nX-Injected: 1' })).toThrow('Invalid character in header content ["Authorization"]');
    expect(() => headerLines({ 'Bad Name': 'x' })).toThrow('Header name must be a valid HTTP token ["Bad Name"]');
    const p = pool(1);
    await expect(p.request(req({ path: '/a b' }))).rejects.toThrow('Request path contains unescaped characters: "/a b"');
    p.destroy();
  });
});
