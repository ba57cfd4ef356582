/**
 * A test CA and a serving certificate for an IP address, and a fetch that trusts such a CA (the pod suites and
 * `npm run sandbox -- --pods`: the browser's view of Dex).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';

/** A CA (`/CN=<caName>`) and a serving certificate for `ip`, made with openssl (as the harness makes its PKI). */
export function makeTls(dir: string, ip: string, caName = 'klutch-kit pods test CA'): { caPem: string; key: string; cert: string } {
  fs.mkdirSync(dir, { recursive: true });
  const p = (f: string) => path.join(dir, f);
  const ossl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ossl(['req', '-x509', ...ec, '-keyout', p('ca.key'), '-out', p('ca.crt'), '-days', '2', '-subj', `/CN=${caName}`]);
  ossl(['req', '-new', ...ec, '-keyout', p('tls.key'), '-out', p('tls.csr'), '-subj', `/CN=${ip}`]);
  fs.writeFileSync(p('ext.cnf'), `basicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:${ip}\n`);
  ossl([
    'x509',
    '-req',
    '-in',
    p('tls.csr'),
    '-CA',
    p('ca.crt'),
    '-CAkey',
    p('ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    p('ext.cnf'),
    '-out',
    p('tls.crt'),
  ]);
  return { caPem: fs.readFileSync(p('ca.crt'), 'utf8'), key: fs.readFileSync(p('tls.key'), 'utf8'), cert: fs.readFileSync(p('tls.crt'), 'utf8') };
}

/** fetch, except that https requests trust `ca` (e.g. the CA of Dex's certificate): the browser's view of Dex. */
export function fetchTrusting(ca: string): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : input);
    if (url.protocol !== 'https:') return fetch(input, init);
    return new Promise<Response>((resolve, reject) => {
      const req = https.request(url, { method: init?.method ?? 'GET', headers: init?.headers as Record<string, string>, ca, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) for (const x of Array.isArray(v) ? v : v === undefined ? [] : [v]) headers.append(k, x);
          resolve(new Response(res.statusCode === 204 || res.statusCode === 304 ? null : Buffer.concat(chunks), { status: res.statusCode ?? 0, headers }));
        });
      });
      req.on('error', reject);
      req.end(init?.body as string | undefined);
    });
  }) as typeof fetch;
}
