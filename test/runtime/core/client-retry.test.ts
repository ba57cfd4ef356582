// KubeClient sends a request again when the API server asks for it with Retry-After, as client-go does: a 429
// (kube-apiserver's "storage is (re)initializing" right after a CRD is established, API Priority and Fairness
// shedding load) for any method, a 5xx for a GET; never without the header, never more than maxRetries times.
import { describe, expect, test } from '@jest/globals';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, CoreResources, KubeClient, retryAfterSeconds } from '../../../runtime/core/client.js';

/** A loopback server that answers each request with the next of `answers` (then 200 with an empty list). */
async function server(answers: Array<{ code: number; retryAfter?: string }>) {
  const seen: string[] = [];
  const srv = http.createServer((req, res) => {
    seen.push(req.method!);
    const a = answers.shift();
    res.setHeader('Content-Type', 'application/json');
    if (a) {
      if (a.retryAfter !== undefined) res.setHeader('Retry-After', a.retryAfter);
      res.statusCode = a.code;
      res.end(JSON.stringify({ kind: 'Status', status: 'Failure', reason: a.code === 429 ? 'TooManyRequests' : 'InternalError', message: `answer ${a.code}` }));
      return;
    }
    res.end(JSON.stringify({ metadata: { resourceVersion: '1' }, items: [], kind: 'SecretList', apiVersion: 'v1' }));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      }),
  };
}

async function withClient(
  answers: Array<{ code: number; retryAfter?: string }>,
  opts: { maxRetries?: number },
  fn: (c: KubeClient, seen: string[]) => Promise<void>,
) {
  const s = await server(answers);
  const c = new KubeClient({ server: s.url, token: 't' }, opts);
  try {
    await fn(c, s.seen);
  } finally {
    c.close();
    await s.close();
  }
}

describe('KubeClient Retry-After', () => {
  test('a 429 with Retry-After is sent again until it succeeds', async () => {
    await withClient(
      [
        { code: 429, retryAfter: '0' },
        { code: 429, retryAfter: '0' },
      ],
      {},
      async (c, seen) => {
        expect((await c.list(CoreResources.secrets, 'x')).items).toEqual([]);
        expect(seen).toEqual(['GET', 'GET', 'GET']);
      },
    );
  });

  test('a 429 to a write is sent again too (the server did not act on it)', async () => {
    await withClient([{ code: 429, retryAfter: '0' }], {}, async (c, seen) => {
      await c.request('POST', '/api/v1/namespaces/x/secrets', { body: { metadata: { name: 's' } } });
      expect(seen).toEqual(['POST', 'POST']);
    });
  });

  test('a 5xx with Retry-After is sent again for a GET only', async () => {
    await withClient([{ code: 503, retryAfter: '0' }], {}, async (c, seen) => {
      await c.request('GET', '/api/v1/namespaces/x/secrets');
      expect(seen).toEqual(['GET', 'GET']);
    });
    await withClient([{ code: 503, retryAfter: '0' }], {}, async (c, seen) => {
      const err = await c.request('POST', '/api/v1/namespaces/x/secrets', { body: {} }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe(503);
      expect(seen).toEqual(['POST']);
    });
  });

  test('without Retry-After the error is the caller’s at once', async () => {
    await withClient([{ code: 429 }], {}, async (c, seen) => {
      const err = await c.request('GET', '/api/v1/namespaces/x/secrets').catch((e: unknown) => e);
      expect((err as ApiError).code).toBe(429);
      expect((err as ApiError).retryAfterSeconds).toBeUndefined();
      expect(seen).toEqual(['GET']);
    });
  });

  test('gives up after maxRetries with the last answer, naming it', async () => {
    const answers = Array.from({ length: 5 }, () => ({ code: 429, retryAfter: '0' }));
    await withClient(answers, { maxRetries: 2 }, async (c, seen) => {
      const err = await c.request('GET', '/api/v1/namespaces/x/secrets').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).message).toBe('GET /api/v1/namespaces/x/secrets: 429 TooManyRequests: answer 429');
      expect((err as ApiError).retryAfterSeconds).toBe(0);
      expect(seen).toHaveLength(3);
    });
    await withClient([{ code: 429, retryAfter: '0' }], { maxRetries: 0 }, async (c, seen) => {
      await expect(c.request('GET', '/api/v1/namespaces/x/secrets')).rejects.toThrow('429 TooManyRequests');
      expect(seen).toHaveLength(1);
    });
  });

  test('an abort while waiting ends the request with the server’s answer', async () => {
    await withClient([{ code: 429, retryAfter: '5' }], {}, async (c, seen) => {
      const ac = new AbortController();
      const pending = c.request('GET', '/api/v1/namespaces/x/secrets', { signal: ac.signal }).catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 100));
      ac.abort();
      const err = await pending;
      expect((err as ApiError).code).toBe(429);
      expect(seen).toEqual(['GET']);
    });
  });

  test('retryAfterSeconds reads delta-seconds and HTTP dates', () => {
    expect(retryAfterSeconds('1')).toBe(1);
    expect(retryAfterSeconds(' 3 ')).toBe(3);
    expect(retryAfterSeconds(undefined)).toBeUndefined();
    expect(retryAfterSeconds('soon')).toBeUndefined();
    expect(retryAfterSeconds(new Date(Date.now() - 60_000).toUTCString())).toBe(0);
    const inTwo = retryAfterSeconds(new Date(Date.now() + 2_500).toUTCString())!;
    expect(inTwo).toBeGreaterThanOrEqual(1);
    expect(inTwo).toBeLessThanOrEqual(3);
  });
});
