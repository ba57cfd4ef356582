/**
 * `$KUBECONFIG` with several files is merged as kubectl merges it: the first file that defines a
 * cluster, user or context name wins, current-context comes from the first file that sets it, missing
 * files are skipped, and relative paths stay relative to the file that holds them.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { KubeconfigLoadError } from '../../../runtime/core/kubeconfig.js';
import { loadDefaultKubeconfig } from '../../../runtime/core/kubeconfig-default.js';
import { kubeconfigContextNames, kubeconfigPaths, loadKubeconfigFiles, mergeKubeconfigs } from '../../../runtime/core/kubeconfig-merge.js';
import { loadKubeConfig } from '../../../runtime/kubectl-bind/util.js';

let root: string;
const kc = (o: {
  current?: string;
  clusters?: Record<string, string>;
  users?: Record<string, Record<string, unknown>>;
  contexts?: Record<string, [string, string, string?]>;
}) => ({
  apiVersion: 'v1',
  kind: 'Config',
  ...(o.current ? { 'current-context': o.current } : {}),
  clusters: Object.entries(o.clusters ?? {}).map(([name, server]) => ({ name, cluster: { server } })),
  users: Object.entries(o.users ?? {}).map(([name, user]) => ({ name, user })),
  contexts: Object.entries(o.contexts ?? {}).map(([name, [cluster, user, namespace]]) => ({
    name,
    context: { cluster, user, ...(namespace ? { namespace } : {}) },
  })),
});
const write = (rel: string, config: unknown) => {
  const p = join(root, rel);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, stringify(config));
  return p;
};

let a: string;
let b: string;
let c: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'kk-kubeconfig-merge-'));
  // a: no current-context; defines cluster "shared" (wins) and context "dev"
  a = write(
    'a/config',
    kc({ clusters: { shared: 'https://a.example:6443' }, users: { alice: { token: 'token-a' } }, contexts: { dev: ['shared', 'alice', 'team-a'] } }),
  );
  // b: sets current-context "prod"; redefines "shared" (ignored) and "dev" (ignored); its user reads a token file relative to b/
  mkdirSync(join(root, 'b'), { recursive: true });
  writeFileSync(join(root, 'b', 'token'), 'token-from-b-file\n');
  b = write(
    'b/config',
    kc({
      current: 'prod',
      clusters: { shared: 'https://b.example:6443', prod: 'https://prod.example:6443' },
      users: { alice: { token: 'token-b' }, bob: { tokenFile: 'token' } },
      contexts: { dev: ['prod', 'bob'], prod: ['prod', 'bob', 'team-p'] },
    }),
  );
  // c: sets current-context "dev" too late to count
  c = write(
    'c/config',
    kc({ current: 'dev', clusters: { other: 'https://c.example:6443' }, users: { carol: { token: 'token-c' } }, contexts: { other: ['other', 'carol'] } }),
  );
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('$KUBECONFIG with several files', () => {
  const env = { KUBECONFIG: process.env.KUBECONFIG, HOST: process.env.KUBERNETES_SERVICE_HOST };
  afterEach(() => {
    process.env.KUBECONFIG = env.KUBECONFIG;
    if (env.KUBECONFIG === undefined) delete process.env.KUBECONFIG;
    if (env.HOST !== undefined) process.env.KUBERNETES_SERVICE_HOST = env.HOST;
  });

  it('splits the list, dropping empty entries and repeats', () => {
    expect(kubeconfigPaths(`${a}::${b}:${a}:`, ':')).toEqual([a, b]);
    expect(kubeconfigPaths('x;y', ';')).toEqual(['x', 'y']);
    expect(kubeconfigPaths(undefined)).toEqual([]);
  });

  it('takes current-context from the first file that sets it; the first definition of a name wins', () => {
    const prod = loadKubeconfigFiles([a, b, c]);
    expect(prod).toMatchObject({ context: 'prod', server: 'https://prod.example:6443', namespace: 'team-p', tokenFile: join(root, 'b', 'token') });
    // "dev" and cluster "shared" and user "alice" come from a, not b
    expect(loadKubeconfigFiles([a, b, c], 'dev')).toMatchObject({ context: 'dev', server: 'https://a.example:6443', token: 'token-a', namespace: 'team-a' });
    expect(loadKubeconfigFiles([a, b, c], 'other')).toMatchObject({ server: 'https://c.example:6443', token: 'token-c' });
    // in the other order, b's definitions win
    expect(loadKubeconfigFiles([b, a], 'dev')).toMatchObject({ server: 'https://prod.example:6443', tokenFile: join(root, 'b', 'token') });
    expect(kubeconfigContextNames([a, b, c])).toEqual(['dev', 'prod', 'other']);
  });

  it('resolves relative paths against the file that names them, and keeps exec commands on PATH bare', () => {
    const m = mergeKubeconfigs([
      {
        dir: '/x',
        config: {
          clusters: [{ name: 'k', cluster: { server: 's', 'certificate-authority': 'ca.crt' } }],
          users: [{ name: 'u', user: { exec: { command: './bin/auth' } } }],
        },
      },
      { dir: '/y', config: { users: [{ name: 'v', user: { 'client-key': 'k.pem', 'client-certificate': '/abs/c.pem', exec: { command: 'kubelogin' } } }] } },
    ]);
    expect(m.clusters[0].cluster).toEqual({ server: 's', 'certificate-authority': '/x/ca.crt' });
    expect(m.users.map((u) => u.user)).toEqual([
      { exec: { command: '/x/bin/auth' } },
      { 'client-key': '/y/k.pem', 'client-certificate': '/abs/c.pem', exec: { command: 'kubelogin' } },
    ]);
    expect(m['current-context']).toBeUndefined();
  });

  it('skips missing files; none at all is an error naming them', () => {
    expect(loadKubeconfigFiles([join(root, 'missing'), b])).toMatchObject({ context: 'prod' });
    expect(() => loadKubeconfigFiles([join(root, 'missing'), join(root, 'gone')])).toThrow(KubeconfigLoadError);
    expect(() => loadKubeconfigFiles([join(root, 'missing')])).toThrow(`$KUBECONFIG: none of its files exists (${join(root, 'missing')})`);
  });

  it('names the file that is not valid YAML', () => {
    writeFileSync(join(root, 'broken'), 'clusters: [');
    expect(() => loadKubeconfigFiles([a, join(root, 'broken')])).toThrow(`kubeconfig ${join(root, 'broken')} (from $KUBECONFIG): not valid YAML`);
  });

  it('is what loadDefaultKubeconfig and kubectl-bind read from $KUBECONFIG (not only its first file)', () => {
    delete process.env.KUBERNETES_SERVICE_HOST;
    process.env.KUBECONFIG = [a, b].join(':');
    expect(loadDefaultKubeconfig()).toMatchObject({ context: 'prod', server: 'https://prod.example:6443' });
    expect(loadDefaultKubeconfig('dev')).toMatchObject({ server: 'https://a.example:6443' });
    expect(loadKubeConfig({})).toMatchObject({ context: 'prod' });
    expect(() => loadKubeConfig({ context: 'nope' })).toThrow(`--context: "nope" is not a context of the kubeconfig ${a}:${b} (have: dev, prod)`);
  });
});
