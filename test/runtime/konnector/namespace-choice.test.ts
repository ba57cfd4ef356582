// The konnector program refuses to start without a namespace choice: `--allow-namespace <ns>` (only those) or
// `--all-namespaces` (every namespace, the weaker choice). Its deployers always pass one; a konnector started
// without is a mistake, never silently cluster-wide.
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { buildCommand, namespaceChoice } from '../../../runtime/konnector/main.js';

const parse = (...args: string[]) =>
  buildCommand()
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: () => undefined })
    .parse(['node', 'klutch-konnector', ...args])
    .opts() as { allowNamespace: string[]; allNamespaces: boolean; appClusterBindingController: boolean };

describe('the konnector namespace choice', () => {
  it('--allow-namespace: only those; --all-namespaces: every namespace (undefined)', () => {
    expect(namespaceChoice(parse('--allow-namespace', 'team-a,team-b'))).toEqual(['team-a', 'team-b']);
    expect(namespaceChoice(parse('--all-namespaces'))).toBeUndefined();
  });

  it('neither or both is an error naming both flags', () => {
    expect(() => namespaceChoice(parse())).toThrow(
      'no namespace choice: pass --allow-namespace <ns> (repeatable; the namespaces whose Secrets and ConfigMaps the konnector may sync) or --all-namespaces (every namespace, the weaker choice)',
    );
    expect(() => namespaceChoice(parse('--all-namespaces', '--allow-namespace=team-a'))).toThrow(
      '--all-namespaces and --allow-namespace=team-a contradict each other',
    );
  });

  it('the AppClusterBinding controller syncs nothing and needs neither', () => {
    expect(namespaceChoice(parse('--app-cluster-binding-controller'))).toBeUndefined();
  });

  it('the program exits 1 at start, before reading any kubeconfig, naming both flags', () => {
    const repo = join(import.meta.dirname, '..', '..', '..');
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(repo, 'runtime', 'konnector', 'main.ts'), '--kubeconfig', '/nonexistent/kubeconfig'], {
      cwd: repo,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('klutch-konnector: no namespace choice: pass --allow-namespace <ns>');
    expect(r.stderr).toContain('or --all-namespaces');
    expect(r.stderr).not.toContain('/nonexistent/kubeconfig');
  });
});
