#!/usr/bin/env node
// An exec credential plugin as EKS's `aws eks get-token` or GKE's `gke-gcloud-auth-plugin` are: it
// asks an authority for a short-lived token and prints it as an ExecCredential. Here the authority
// is the real API server's TokenRequest API (`POST …/serviceaccounts/<sa>/token`), called with the
// admin client certificate of the harness kubeconfig.
//
// env: ADMIN_KUBECONFIG (path), SA_NAMESPACE, SA_NAME, RUNS_FILE (one "x" appended per run),
//      PLUGIN_MODE: token (default) | bogus-first (the first run prints an invalid token) |
//                   expired (expirationTimestamp in the past) | fail | hang |
//                   cert (prints the admin client certificate instead of a token)
import { appendFileSync, readFileSync } from 'node:fs';
import https from 'node:https';

const env = process.env;
appendFileSync(env.RUNS_FILE, 'x');
const runs = readFileSync(env.RUNS_FILE, 'utf8').length;
const info = JSON.parse(env.KUBERNETES_EXEC_INFO ?? '{}');
const mode = env.PLUGIN_MODE ?? 'token';

if (mode === 'fail') {
  process.stderr.write('error: the token service refused the request (403)\n');
  process.exit(2);
}
if (mode === 'hang') {
  process.stderr.write('waiting for the browser login…\n');
  setInterval(() => {}, 1000);
} else {
  const text = readFileSync(env.ADMIN_KUBECONFIG, 'utf8');
  const field = (name) => new RegExp(`${name}: (\\S+)`).exec(text)?.[1];
  const server = new URL(field('server'));
  const b64 = (v) => Buffer.from(v, 'base64');
  if (mode === 'cert') {
    const status = { clientCertificateData: b64(field('client-certificate-data')).toString(), clientKeyData: b64(field('client-key-data')).toString() };
    process.stdout.write(JSON.stringify({ apiVersion: info.apiVersion, kind: 'ExecCredential', status }));
    process.exit(0);
  }
  const body = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } });
  const req = https.request(
    {
      host: server.hostname,
      port: server.port,
      method: 'POST',
      path: `/api/v1/namespaces/${env.SA_NAMESPACE}/serviceaccounts/${env.SA_NAME}/token`,
      ca: b64(field('certificate-authority-data')),
      cert: b64(field('client-certificate-data')),
      key: b64(field('client-key-data')),
      headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
    },
    (res) => {
      let out = '';
      res.on('data', (d) => (out += d));
      res.on('end', () => {
        if (res.statusCode !== 201) {
          process.stderr.write(`TokenRequest answered ${res.statusCode}: ${out}\n`);
          process.exit(1);
        }
        const tr = JSON.parse(out);
        const token = mode === 'bogus-first' && runs === 1 ? 'not-a-valid-token' : tr.status.token;
        const expirationTimestamp = mode === 'expired' ? '2000-01-01T00:00:00Z' : tr.status.expirationTimestamp;
        process.stdout.write(JSON.stringify({ apiVersion: info.apiVersion, kind: 'ExecCredential', status: { token, expirationTimestamp } }));
      });
    },
  );
  req.on('error', (e) => {
    process.stderr.write(`cannot reach ${server.href}: ${e.message}\n`);
    process.exit(1);
  });
  req.end(body);
}
