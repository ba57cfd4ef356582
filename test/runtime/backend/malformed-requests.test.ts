// Request targets and cookies that Node's HTTP parser accepts but that are no valid URL or
// percent-encoding: each is answered 400 and the server keeps serving (before, `GET //[` made the
// backend exit with an unhandled rejection).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import net from 'node:net';
import { BackendServer, parseTarget } from '../../../runtime/backend/server.js';
import { BackendMetrics } from '../../../runtime/backend/metrics.js';
import { silentLogger } from '../../../runtime/core/logger.js';
import { CallbackServer } from '../../../runtime/kubectl-bind/callback.js';

/** Sends raw bytes (fetch cannot send an invalid target) and returns the status line. */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.end(request));
    let out = '';
    s.on('data', (d) => (out += d.toString()));
    s.on('end', () => resolve(out.split('\r\n')[0]));
    s.on('error', reject);
  });
}

describe('malformed request targets', () => {
  let server: BackendServer;
  let port: number;
  beforeAll(async () => {
    server = new BackendServer(
      {
        listenHost: '127.0.0.1',
        listenPort: 0,
        prettyName: 'test',
        // discovery of an issuer that does not answer only logs a warning; these paths need none
        oidc: { issuerUrl: 'http://127.0.0.1:9/', clientId: 'c', scopes: ['openid'], bearerAudiences: [] },
        sessionTtl: 60,
        stateTtl: 60,
      },
      { metrics: new BackendMetrics(), logger: silentLogger } as never,
    );
    port = Number(new URL(await server.start()).port);
  });
  afterAll(() => server.stop());

  it.each(['GET //[ HTTP/1.1', 'GET http://[/ HTTP/1.1', 'GET //[::1 HTTP/1.1'])('%s → 400 and /healthz still answers', async (line) => {
    expect(await raw(port, `${line}\r\nHost: x\r\nConnection: close\r\n\r\n`)).toBe('HTTP/1.1 400 Bad Request');
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
  });

  it('parseTarget names the target in its error', () => {
    expect(() => parseTarget('//[')).toThrow(/request target "\/\/\[" is not a valid URL path/);
    expect(parseTarget('/export?x=1').pathname).toBe('/export');
  });
});

describe('the CLI callback server', () => {
  it('answers 400 to an invalid target and goes on waiting', async () => {
    const cb = new CallbackServer('sid-1');
    await cb.start();
    try {
      expect(await raw(cb.port, 'GET //[ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toBe('HTTP/1.1 400 Bad Request');
      expect(cb.refused).toEqual(['request target "//[" is not a valid URL path']);
      const again = await fetch(`${cb.url}?response=junk`);
      expect(again.status).toBe(400);
    } finally {
      await cb.stop();
    }
  });
});
