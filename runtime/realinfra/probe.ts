// Health probes of the harness's processes (etcd `/health`, `/readyz` of the API server, the
// controller manager, Crossplane and its provider, the registry's `/v2/`) while they start. These are
// single GETs of a status code with no credentials beyond TLS, before any client is useful; requests to
// the Kubernetes API go through the runtime's one REST client (`clientOf`).
import * as http from 'node:http';
import * as https from 'node:https';

export interface ProbeResult {
  readonly status: number;
  readonly body: string;
}

/** GETs `url` once (no connection reuse); resolves with status and body, rejects on transport errors or after `timeoutMs`. */
export function probe(url: string, tls: https.RequestOptions = {}, timeoutMs = 5000): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    const mod = url.startsWith('https:') ? https : http;
    const req = mod.get(url, { ...tls, timeout: timeoutMs, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs / 1000} s: GET ${url}`)));
    req.on('error', reject);
  });
}
