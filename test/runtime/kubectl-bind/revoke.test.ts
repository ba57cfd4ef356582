import { describe, expect, it } from '@jest/globals';
import { PassThrough } from 'node:stream';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../../runtime/kubectl-bind/main.js';

const io = () => {
  const out = new PassThrough();
  const err = new PassThrough();
  let o = '';
  let e = '';
  out.on('data', (d) => (o += d));
  err.on('data', (d) => (e += d));
  return { io: { out, err, in: new PassThrough() }, text: () => ({ out: o, err: e }) };
};

describe('kubectl bind revoke: bad input', () => {
  const dir = mkdtempSync(join(tmpdir(), 'revoke-unit-'));

  it('takes one source of the provider kubeconfig', async () => {
    const a = io();
    expect(await run(['revoke', '--remote-kubeconfig', 'a', '--remote-kubeconfig-name', 'b'], a.io, {})).toBe(2);
    expect(a.text().err).toContain('--remote-kubeconfig and --remote-kubeconfig-name are exclusive; pass one of them');
  });

  it('names an unreadable file, and a kubeconfig that is no provider kubeconfig', async () => {
    const a = io();
    expect(await run(['revoke', '--remote-kubeconfig', join(dir, 'missing')], a.io, {})).toBe(2);
    expect(a.text().err).toContain(`--remote-kubeconfig: cannot read "${join(dir, 'missing')}"`);
    const noNs = join(dir, 'no-namespace');
    writeFileSync(
      noNs,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'c',
        clusters: [{ name: 'p', cluster: { server: 'https://127.0.0.1:1' } }],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [{ name: 'c', context: { cluster: 'p', user: 'u' } }],
      }),
    );
    const b = io();
    expect(await run(['revoke', '--remote-kubeconfig', noNs], b.io, {})).toBe(2);
    expect(b.text().err).toContain(`${noNs}: its context names no namespace (the cluster namespace on the provider); is it a provider kubeconfig?`);
    const tokenFile = join(dir, 'token-file');
    writeFileSync(
      tokenFile,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'c',
        clusters: [{ name: 'p', cluster: { server: 'https://127.0.0.1:1' } }],
        users: [{ name: 'u', user: { tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token' } }],
        contexts: [{ name: 'c', context: { cluster: 'p', user: 'u', namespace: 'cluster-a' } }],
      }),
    );
    const c = io();
    expect(await run(['revoke', '--remote-kubeconfig', tokenFile], c.io, {})).toBe(2);
    expect(c.text().err).toContain('tokenFile');
  });
});
