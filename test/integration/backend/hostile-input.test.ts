// No input takes the backend down. A property-based fuzz test (fast-check) sends thousands of
// generated request lines, headers, cookies and bodies over raw sockets (so invalid targets reach
// the server) to the real backend on a real provider cluster with a real OIDC provider, and checks:
// every request gets an answer, no client error is a 5xx, /healthz answers throughout, and nothing
// is created on the control plane without a valid identity. Then the specific cases of issue 13.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import net from 'node:net';
import http from 'node:http';
import { CallbackServer } from '../../../runtime/kubectl-bind/callback.js';
import { CLIENT_ID, clusterNamespaces, startProvider, type ProviderEnv } from './_fixture.js';

jest.setTimeout(600_000);

let env: ProviderEnv;
let port: number;
const RUNS = Number(process.env.FUZZ_RUNS ?? 2500);
const BEARER_RUNS = Number(process.env.FUZZ_BEARER_RUNS ?? 600);

beforeAll(async () => {
  env = await startProvider('hostile-input');
  port = Number(new URL(env.backend.url).port);
}, 180_000);
afterAll(async () => {
  await env?.stop();
});

interface RawAnswer {
  status?: number;
  error?: string;
  head: string;
}

/** Writes `bytes` on a fresh connection and reads the answer until the server closes it. */
function raw(p: number, bytes: Buffer | string, timeoutMs = 30_000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const s = net.connect(p, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const done = (error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: m ? Number(m[1]) : undefined, error, head: text.slice(0, 300) });
      s.destroy();
    };
    const timer = setTimeout(() => done('no answer within the timeout'), timeoutMs);
    // write without half-closing: Node's server ends a connection on the client's FIN, dropping an
    // answer still being computed; `Connection: close` makes the server close after answering
    s.on('connect', () => s.write(bytes));
    s.on('data', (d) => chunks.push(d));
    s.on('end', () => done());
    s.on('close', () => done());
    s.on('error', (e) => done(chunks.length ? undefined : (e as NodeJS.ErrnoException).code));
  });
}

// ---------------------------------------------------------------- generators

const ROUTES = ['/export', '/authorize', '/callback', '/resources', '/bind', '/healthz', '/readyz', '/metrics', '/', '/nope'];
/** Printable text without CR/LF (a header value or a cookie value), sometimes with non-ASCII. */
const text = (maxLength: number) =>
  fc
    .oneof({ arbitrary: fc.string({ maxLength, unit: 'grapheme-ascii' }), weight: 4 }, { arbitrary: fc.string({ maxLength, unit: 'grapheme' }), weight: 1 })
    .map((s) => s.replace(/[\r\n]/g, ''));
const token = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,20}$/);
const targetChar = fc.constantFrom(...'abcxyz019/?&=%[]:@!$\'()*+,;#~._-{}|\\^`"<>'.split(''), '%zz', '%', '%E0%A4%A', '%00', 'é', '..');
// weighted so that most requests get past Node's HTTP parser to the backend's handlers
const target = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.tuple(fc.constantFrom(...ROUTES), fc.dictionary(text(10), text(40), { maxKeys: 5 })).map(([r, q]) => {
      const qs = Object.entries(q)
        .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
        .join('&');
      return qs ? `${r}?${qs}` : r;
    }),
  },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...ROUTES), fc.array(targetChar, { maxLength: 30 })).map(([r, cs]) => r + cs.join('')) },
  { weight: 1, arbitrary: fc.array(targetChar, { minLength: 1, maxLength: 40 }).map((cs) => cs.join('')) },
  fc.constantFrom('//[', 'http://[/', '//[::1', '*', '%', '/%', '/%zz', 'http://evil.example/bind', '//evil.example/export', '/bind?' + 'a'.repeat(9000)),
);
const sid = fc.stringMatching(/^[A-Za-z0-9]{1,12}$/);
const cookie = fc
  .array(
    fc.tuple(
      fc.oneof(
        sid.map((s) => `klutch-bind-${s}`),
        sid.map((s) => `klutch-bind-auth-${s}`),
        token,
      ),
      fc.oneof(text(60), fc.constantFrom('%', '%E0%A4%A', '%zz', '"', 'a;b', '=', 'eyJ.x.y.z.w')),
    ),
    { maxLength: 5 },
  )
  .map((kv) => kv.map(([k, v]) => `${k}=${v}`).join('; '));
const deepArray = fc.integer({ min: 1, max: 6000 }).map((n) => '['.repeat(n) + ']'.repeat(n));
const body = fc.oneof(
  fc.constant(''),
  text(200),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'),
  fc
    .record(
      { group: text(20), resource: text(20), clusterID: fc.oneof(text(30), fc.jsonValue({ maxDepth: 2 })), sessionID: fc.jsonValue({ maxDepth: 2 }) },
      { requiredKeys: [] },
    )
    .map((o) => JSON.stringify(o)),
  fc.dictionary(fc.constantFrom('s', 'csrf', 'group', 'resource', 'x'), text(40)).map((o) => new URLSearchParams(o).toString()),
  deepArray,
  fc.integer({ min: 65_000, max: 80_000 }).map((n) => 'x'.repeat(n)),
);

interface GenRequest {
  method: string;
  target: string;
  headers: Array<[string, string]>;
  body: string;
  chunked: boolean;
}

const request = (authorization: fc.Arbitrary<string | undefined>) =>
  fc
    .record({
      method: fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom('GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'PATCH') },
        { weight: 1, arbitrary: fc.stringMatching(/^[A-Z]{1,10}$/) },
      ),
      target,
      cookie: fc.option(cookie, { nil: undefined }),
      authorization,
      contentType: fc.option(fc.oneof(fc.constantFrom('application/x-www-form-urlencoded', 'application/json', 'text/plain; charset=utf-8'), text(40)), {
        nil: undefined,
      }),
      accept: fc.option(fc.constantFrom('application/json', 'text/html', '*/*'), { nil: undefined }),
      extra: fc.array(fc.tuple(token, text(80)), { maxLength: 4 }),
      body,
      chunked: fc.boolean(),
    })
    .map((r): GenRequest => {
      const headers: Array<[string, string]> = [['Host', `127.0.0.1:${port}`]];
      if (r.cookie !== undefined) headers.push(['Cookie', r.cookie]);
      if (r.authorization !== undefined) headers.push(['Authorization', r.authorization]);
      if (r.contentType !== undefined) headers.push(['Content-Type', r.contentType]);
      if (r.accept !== undefined) headers.push(['Accept', r.accept]);
      for (const [k, v] of r.extra) if (!/^(host|content-length|transfer-encoding|connection|expect|upgrade)$/i.test(k)) headers.push([k, v]);
      return { method: r.method, target: r.target, headers, body: r.body, chunked: r.chunked };
    });

function encode(r: GenRequest): Buffer {
  const b = Buffer.from(r.body, 'utf8');
  const lines = [`${r.method} ${r.target} HTTP/1.1`, ...r.headers.map(([k, v]) => `${k}: ${v}`), 'Connection: close'];
  if (r.chunked) lines.push('Transfer-Encoding: chunked');
  else lines.push(`Content-Length: ${b.length}`);
  const head = Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'utf8');
  if (!r.chunked) return Buffer.concat([head, b]);
  return Buffer.concat([head, ...(b.length ? [Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')] : []), Buffer.from('0\r\n\r\n')]);
}

// ---------------------------------------------------------------- the control plane's state

const nsRef = { group: '', version: 'v1', plural: 'namespaces', namespaced: false };
const cbRef = { group: 'klutch.anynines.com', version: 'v1alpha1', plural: 'clusterbindings', namespaced: true };
const leaseRef = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true };

async function snapshot() {
  const ns = (await env.kube.list(nsRef)).items.map((n) => n.metadata.name!).sort();
  const cbs = (await env.kube.list(cbRef)).items.map((c) => `${c.metadata.namespace}/${c.metadata.name}`).sort();
  const states = (await env.kube.list(leaseRef, undefined, { labelSelector: 'klutch.anynines.com/login-state' })).items.length;
  return { ns, cbs, states };
}

/** Requests the backend's handlers answered so far (its own metric). */
async function handled(): Promise<number> {
  return (await env.backend.metrics.httpRequests.get()).values.reduce((a, v) => a + v.value, 0);
}

/** Polls /healthz every 200 ms while `fn` runs; returns how many polls failed and how many ran. */
async function whileHealthy<T>(fn: () => Promise<T>): Promise<{ result: T; polls: number; failed: string[] }> {
  const failed: string[] = [];
  let polls = 0;
  let running = true;
  const poller = (async () => {
    while (running) {
      polls++;
      const a = await raw(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 10_000);
      if (a.status !== 200) failed.push(`${a.status ?? a.error}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  try {
    return { result: await fn(), polls, failed };
  } finally {
    running = false;
    await poller;
  }
}

describe('fuzz: generated requests against the real backend', () => {
  it(`${RUNS} requests without a valid identity: all answered, no 5xx, /healthz up, nothing created`, async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: env.op.issuer, sub: 'fuzz-mallory', aud: CLIENT_ID, iat: now, exp: now + 3600 };
    const bad = [
      await env.op.signForged(claims),
      await env.op.signAsIssuer({ ...claims, iat: now - 7200, exp: now - 3600 }),
      await env.op.signAsIssuer({ ...claims, aud: 'other-app' }),
      await env.op.signAsIssuer({ ...claims, iat: now + 3600, exp: now + 7200 }),
      await env.op.signAsIssuer({ ...claims, iss: 'https://evil.example' }),
      `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`,
    ];
    const authorization = fc.option(
      fc.oneof(
        fc.constantFrom(...bad).map((t) => `Bearer ${t}`),
        text(100).map((t) => `Bearer ${t}`),
        text(100),
        fc.constantFrom('Bearer', 'Basic YWxpY2U6cHc=', 'Bearer a.b.c', 'bearer  x'),
      ),
      { nil: undefined },
    );
    const before = await snapshot();
    const handled0 = await handled();
    const byStatus = new Map<number, number>();
    const failures: string[] = [];
    const { polls, failed } = await whileHealthy(() =>
      fc
        .assert(
          fc.asyncProperty(request(authorization), async (r) => {
            const a = await raw(port, encode(r));
            if (a.status) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
            if (a.status === undefined || a.status >= 500) {
              failures.push(`${a.status ?? a.error} for ${JSON.stringify(r).slice(0, 300)}: ${a.head}`);
              return false;
            }
            return true;
          }),
          { numRuns: RUNS, endOnFailure: true },
        )
        .catch((e: Error) => {
          throw new Error(`${failures.join('\n')}\n${e.message}`);
        }),
    );
    console.log(
      `fuzz (no identity): ${RUNS} requests, answers by status ${JSON.stringify(Object.fromEntries([...byStatus].sort()))}; ${(await handled()) - handled0 - polls} reached the backend's handlers (the rest were refused by Node's HTTP parser); /healthz polled ${polls} times`,
    );
    expect(failures).toEqual([]);
    expect(failed).toEqual([]);
    expect(polls).toBeGreaterThan(0);
    expect([...byStatus.values()].reduce((a, b) => a + b, 0)).toBe(RUNS);
    expect(await snapshot()).toEqual(before);
    expect((await fetch(`${env.backend.url}/healthz`)).status).toBe(200);
  });

  it(`${BEARER_RUNS} bearer binds with a valid identity and generated bodies: no 5xx, only that identity's namespaces`, async () => {
    const now = Math.floor(Date.now() / 1000);
    const good = await env.op.signAsIssuer({ iss: env.op.issuer, sub: 'fuzz-robot', aud: CLIENT_ID, iat: now, exp: now + 3600 });
    const offered = fc.constantFrom(['mangodb.com', 'mangodbs'], ['example.klutch.test', 'widgets'], ['', 'secrets']);
    const bindBody = fc.oneof(
      body,
      fc.tuple(offered, fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/)).map(([[group, resource], clusterID]) => JSON.stringify({ group, resource, clusterID })),
    );
    const before = await clusterNamespaces(env.kube);
    const byStatus = new Map<number, number>();
    const failures: string[] = [];
    const { failed } = await whileHealthy(() =>
      fc
        .assert(
          fc.asyncProperty(bindBody, fc.boolean(), async (b, chunked) => {
            const r: GenRequest = {
              method: 'POST',
              target: '/bind',
              headers: [
                ['Host', 'x'],
                ['Authorization', `Bearer ${good}`],
              ],
              body: b,
              chunked,
            };
            const a = await raw(port, encode(r));
            if (a.status) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
            if (a.status === undefined || a.status >= 500) {
              failures.push(`${a.status ?? a.error} for ${b.slice(0, 200)}: ${a.head}`);
              return false;
            }
            return true;
          }),
          { numRuns: BEARER_RUNS, endOnFailure: true },
        )
        .catch((e: Error) => {
          throw new Error(`${failures.join('\n')}\n${e.message}`);
        }),
    );
    console.log(`fuzz (valid bearer): ${BEARER_RUNS} binds, answers by status ${JSON.stringify(Object.fromEntries([...byStatus].sort()))}`);
    expect(failures).toEqual([]);
    expect(failed).toEqual([]);
    const created = (await clusterNamespaces(env.kube)).filter((n) => !before.includes(n));
    for (const name of created) {
      const ns = await env.kube.get(nsRef, undefined, name);
      expect(ns.metadata.annotations?.['example-backend.klutch.anynines.com/identity']).toMatch(/^fuzz-robot#/);
    }
    // the per-identity limits held: bind rate (burst 10) and app clusters (50)
    expect(created.length).toBeLessThanOrEqual(50);
  });

  it('the CLI callback server answers every generated request with a 4xx/2xx and keeps waiting', async () => {
    const cb = new CallbackServer('fuzz-session');
    await cb.start();
    try {
      await fc.assert(
        fc.asyncProperty(request(fc.constant(undefined)), async (r) => {
          const a = await raw(cb.port, encode({ ...r, target: r.target.replace(/^\/[a-z]*/, '/callback') }));
          return a.status !== undefined && a.status < 500;
        }),
        { numRuns: 500 },
      );
      expect((await fetch(`${cb.url}?response=junk`)).status).toBe(400);
    } finally {
      await cb.stop();
    }
  });
});

describe('the cases of issue 13', () => {
  const bearer = async (sub: string, extra: Record<string, number> = {}) => {
    const now = Math.floor(Date.now() / 1000);
    return env.op.signAsIssuer({ iss: env.op.issuer, sub, aud: CLIENT_ID, iat: now, exp: now + 600, ...extra });
  };

  it('a cookie that is not percent-encoded is a 400 naming the cookie', async () => {
    const res = await fetch(`${env.backend.url}/resources?s=abc`, { headers: { Cookie: 'klutch-bind-abc=%', Accept: 'application/json' } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ field: 'cookie klutch-bind-abc', error: 'cookie klutch-bind-abc: value "%" is not percent-encoded correctly' });
  });

  it.each([
    ['null', 'body', /expected a JSON object/],
    ['{"clusterID":{"toString":1}}', 'clusterID', /expected a string, got \{"toString":1\}/],
    ['['.repeat(5000) + ']'.repeat(5000), 'body', /expected a JSON object \{"clusterID": …\}, got an array/],
  ])('bearer body %# is a 400 naming the field', async (b, field, msg) => {
    const before = await clusterNamespaces(env.kube);
    const res = await fetch(`${env.backend.url}/bind`, { method: 'POST', headers: { Authorization: `Bearer ${await bearer('case-robot')}` }, body: b });
    expect(res.status).toBe(400);
    const j = (await res.json()) as { field: string; error: string };
    expect(j.field).toBe(field);
    expect(j.error).toMatch(msg);
    expect(await clusterNamespaces(env.kube)).toEqual(before);
  });

  it('a 4 MB bearer body is a 413 the client reads (no reset), declared or chunked', async () => {
    const tok = await bearer('case-robot');
    for (const chunked of [false, true]) {
      const answer = await new Promise<{ status?: number; body: string; error?: string }>((resolve) => {
        const req = http.request(`${env.backend.url}/bind`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${tok}`, 'Content-Type': 'application/json', ...(chunked ? {} : { 'Content-Length': String(4 * 1024 * 1024) }) },
        });
        req.on('response', (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode, body }));
        });
        req.on('error', (e) => resolve({ body: '', error: (e as NodeJS.ErrnoException).code }));
        const chunk = Buffer.alloc(64 * 1024, 'a');
        for (let i = 0; i < 64; i++) req.write(chunk);
        req.end();
      });
      expect(answer.error).toBeUndefined();
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body)).toMatchObject({ field: 'body', error: expect.stringMatching(/larger than 65536 bytes/) });
    }
    expect((await fetch(`${env.backend.url}/healthz`)).status).toBe(200);
  });

  it('a bearer token issued an hour in the future is a 401', async () => {
    const now = Math.floor(Date.now() / 1000);
    const before = await clusterNamespaces(env.kube);
    const res = await fetch(`${env.backend.url}/bind`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${await bearer('time-traveller', { iat: now + 3600, exp: now + 7200 })}` },
      body: JSON.stringify({ group: 'mangodb.com', resource: 'mangodbs', clusterID: 'c1' }),
    });
    expect(res.status).toBe(401);
    const j = (await res.json()) as { field: string; error: string };
    expect(j.field).toBe('Authorization');
    expect(j.error).toMatch(/iat \d+ is 3[56]\d\d s in the future \(allowed clock skew 30 s\)/);
    expect(await clusterNamespaces(env.kube)).toEqual(before);
  });

  it('request targets that are no URL are a 400 and the backend stays up', async () => {
    for (const line of ['GET //[ HTTP/1.1', 'GET http://[/ HTTP/1.1']) {
      const a = await raw(port, `${line}\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(a.status).toBe(400);
    }
    expect((await fetch(`${env.backend.url}/healthz`)).status).toBe(200);
    const ready = await (await fetch(`${env.backend.url}/readyz`)).text();
    expect(ready).toMatch(/^ok\n/);
    expect(ready).toContain('unexpected-errors: none');
  });
});
