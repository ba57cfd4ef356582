/**
 * `kubectl-bind --help` and `--version` work in a project without the five optional runtime peers
 * (pino, prom-client, jose, openid-client, @kubernetes/client-node): the bin runs with a resolve hook
 * that makes them unresolvable (test/support/hide-runtime-peers.mjs), as in a project that did not
 * install them. A command that needs them says which package to install.
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const repo = process.cwd();
const hide = join(repo, 'test', 'support', 'hide-runtime-peers.mjs');
const kubectlBind = (...args: string[]) => {
  const r = spawnSync(process.execPath, ['--import', hide, join(repo, 'bin', 'kubectl-bind.js'), ...args], {
    cwd: repo,
    encoding: 'utf8',
    env: { ...process.env, KUBECONFIG: join(repo, 'nonexistent-kubeconfig'), KUBECTL_BIND_DEBUG: '' },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

describe('kubectl-bind without the runtime peers', () => {
  it('--help prints the usage and exits 0', () => {
    const r = kubectlBind('--help');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('Usage: kubectl bind [options] [command] [url]');
  });

  it('--version prints the version and exits 0', () => {
    const r = kubectlBind('--version');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^kubectl-bind v\d+\.\d+\.\d+/);
  });

  it('a usage error is still a usage error (exit 2)', () => {
    const r = kubectlBind('--no-such-flag');
    expect(r.code).toBe(2);
    expect(r.err).toContain("unknown option '--no-such-flag'");
  });

  it('binding needs the peers: one line naming what to install (and the hook does hide them)', () => {
    const r = kubectlBind('https://bind.example.com/export', '--dry-run');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/the package (pino|prom-client|jose|openid-client|@kubernetes\/client-node) is not installed/);
    expect(r.err).toContain('npm install @kubernetes/client-node openid-client jose pino prom-client');
  });
});
