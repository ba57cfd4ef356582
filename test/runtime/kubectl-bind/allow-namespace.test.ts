// `kubectl bind --allow-namespace` / `--all-namespaces`: where the konnector may touch Secrets and
// ConfigMaps, decided at bind time. Narrow by default (the kubeconfig context's namespace, else
// `default`); checked as the konnector checks its own flag, merged with the installed konnector's
// (never dropped); cluster-wide only with the explicit flag, each time; said on the consent screen.
import { describe, expect, it } from '@jest/globals';
import type { KubeClient, KubeObject, ResourceRef } from '../../../runtime/core/index.js';
import { bindApiService, konnectorNamespaces, type ApiServiceOptions } from '../../../runtime/kubectl-bind/apiservice.js';
import { contextNamespace, namespaceScopeLine, parseAllowNamespaces } from '../../../runtime/kubectl-bind/consent.js';
import { run } from '../../../runtime/kubectl-bind/main.js';
import { io } from './_io.js';

/** A consumer cluster that has the namespaces `have`, and records every call. */
function consumerWith(have: string[]) {
  const calls: string[] = [];
  const kube = {
    getOrNull: async (r: ResourceRef, ns: string | undefined, name: string): Promise<KubeObject | undefined> => {
      calls.push(`get ${r.plural} ${ns ?? ''}/${name}`);
      return r.plural === 'namespaces' && have.includes(name) ? { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } : undefined;
    },
  } as unknown as KubeClient;
  return { kube, calls };
}

const options = (kube: KubeClient, extra: Partial<ApiServiceOptions>): ApiServiceOptions => ({
  consumer: kube,
  remoteKubeconfig: '',
  dryRun: false,
  yes: true,
  skipKonnector: false,
  output: undefined,
  timeoutMs: 1000,
  io: io().io,
  ...extra,
});

const installed = (args: string[]) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'konnector' },
  spec: { template: { spec: { containers: [{ args }] } } },
});

describe('--allow-namespace', () => {
  it('takes DNS-1123 labels, sorted and without repeats', () => {
    expect(parseAllowNamespaces(['team-b', 'team-a', 'team-b'])).toEqual(['team-a', 'team-b']);
    expect(parseAllowNamespaces(undefined)).toEqual([]);
  });

  it('refuses a bad name, a system namespace and the konnector’s own namespace, naming the flag and the value', () => {
    expect(() => parseAllowNamespaces(['Team_A'])).toThrow('--allow-namespace: "Team_A" is not a namespace name (a DNS-1123 label)');
    expect(() => parseAllowNamespaces(['kube-system'])).toThrow(/--allow-namespace: "kube-system" is a system namespace .*remove it/);
    expect(() => parseAllowNamespaces(['klutch-bind'])).toThrow('--allow-namespace: "klutch-bind" is the konnector\'s own namespace');
  });

  it('is a usage error (exit 2) on the command line, before any cluster is touched', async () => {
    const t = io();
    expect(await run(['https://bind.example.com/export', '--allow-namespace', 'Team_A', '--kubeconfig', '/nonexistent'], t.io, {})).toBe(2);
    expect(t.err()).toContain('--allow-namespace: "Team_A" is not a namespace name');
    const u = io();
    expect(await run(['apiservice', '-f', '/nonexistent.yaml', '--remote-kubeconfig', 'x', '--allow-namespace', 'kube-public'], u.io, {})).toBe(2);
    expect(u.err()).toContain('--allow-namespace: "kube-public" is a system namespace');
  });

  it('is merged with the installed konnector’s namespaces, never dropping one', async () => {
    const { kube } = consumerWith(['default', 'team-a', 'team-c']);
    const o = options(kube, { allowNamespaces: ['team-c', 'team-a'] });
    expect(await konnectorNamespaces(kube, installed(['--allow-namespace=team-b', '--allow-namespace=team-a']), o)).toEqual(['team-a', 'team-b', 'team-c']);
    // no flag this time: the installed ones stay, beside the context's namespace
    expect(await konnectorNamespaces(kube, installed(['--allow-namespace=team-b']), options(kube, { contextNamespace: 'team-c' }))).toEqual([
      'team-b',
      'team-c',
    ]);
  });

  it('without a flag: the kubeconfig context’s namespace, else "default" — never cluster-wide', async () => {
    const { kube } = consumerWith(['default', 'team-a']);
    expect(await konnectorNamespaces(kube, undefined, options(kube, { contextNamespace: 'team-a' }))).toEqual(['team-a']);
    expect(await konnectorNamespaces(kube, undefined, options(kube, {}))).toEqual(['default']);
    expect(contextNamespace(undefined)).toBe('default');
    expect(contextNamespace('')).toBe('default');
    expect(() => contextNamespace('kube-system')).toThrow(
      /the kubeconfig context's namespace: "kube-system" is a system namespace .*; pass --allow-namespace <namespace> \(or --all-namespaces\)/,
    );
    expect(() => contextNamespace('klutch-bind')).toThrow('"klutch-bind" is the konnector\'s own namespace');
    const { kube: empty } = consumerWith([]);
    await expect(konnectorNamespaces(empty, undefined, options(empty, { contextNamespace: 'team-z' }))).rejects.toThrow(
      'namespace "team-z" (the kubeconfig context\'s namespace, the konnector\'s default) does not exist in this cluster; create it first',
    );
  });

  it('--all-namespaces: every namespace, only when asked for; an installed cluster-wide konnector is narrowed without it, with a warning', async () => {
    const { kube } = consumerWith(['default']);
    expect(await konnectorNamespaces(kube, installed(['--allow-namespace=team-b']), options(kube, { allNamespaces: true }))).toBeUndefined();
    for (const args of [['--all-namespaces'], ['--lease-name=klutch-bind']]) {
      const t = io();
      expect(await konnectorNamespaces(kube, installed(args), options(kube, { io: t.io }))).toEqual(['default']);
      expect(t.err()).toContain(
        '⚠️  the installed konnector may read and write Secrets and ConfigMaps in every namespace; this bind narrows it to default: objects of bindings elsewhere stop syncing (condition NamespaceNotAllowed). To keep it cluster-wide, bind again with --all-namespaces',
      );
    }
  });

  it('refuses a namespace that does not exist (its RoleBinding goes there), naming the flag and the value', async () => {
    const { kube } = consumerWith(['team-a']);
    await expect(konnectorNamespaces(kube, undefined, options(kube, { allowNamespaces: ['team-a', 'team-x'] }))).rejects.toThrow(
      '--allow-namespace: namespace "team-x" does not exist in this cluster; create it first',
    );
  });

  it('the consent screen says where the konnector may touch Secrets, or flags that it is cluster-wide', () => {
    expect(namespaceScopeLine(['team-a'])).toBe(
      '🔒 the konnector may read and write Secrets and ConfigMaps only in namespace team-a (--allow-namespace) and its own, klutch-bind; it syncs nothing elsewhere (more with --allow-namespace <namespace>)',
    );
    expect(namespaceScopeLine(['team-a', 'team-b'])).toContain('only in namespaces team-a, team-b');
    expect(namespaceScopeLine(['default'], "the kubeconfig context's namespace")).toContain("only in namespace default (the kubeconfig context's namespace)");
    expect(namespaceScopeLine(undefined)).toBe(
      "⚠️  the konnector may read and write Secrets and ConfigMaps in EVERY namespace (--all-namespaces): whoever holds its token reads every Secret of this cluster; without the flag it is narrowed to the context's namespace or --allow-namespace",
    );
  });

  it('is said before the claims on a dry run, and refused with --skip-konnector (which installs no konnector to narrow)', async () => {
    const request = { metadata: { name: 'x' }, spec: { resources: [{ group: 'example.com', resource: 'widgets', versions: ['v1'] }] } };
    const { kube } = consumerWith(['team-a']);
    const t = io();
    await bindApiService(request as never, options(kube, { dryRun: true, allowNamespaces: ['team-a'], io: t.io, remoteKubeconfig: KUBECONFIG }));
    expect(t.err()).toContain('only in namespace team-a (--allow-namespace)');
    const u = io();
    await bindApiService(request as never, options(kube, { dryRun: true, allNamespaces: true, io: u.io, remoteKubeconfig: KUBECONFIG }));
    expect(u.err()).toContain('⚠️  the konnector may read and write Secrets and ConfigMaps in EVERY namespace (--all-namespaces)');
    const { kube: untouched, calls } = consumerWith([]);
    await expect(
      bindApiService(request as never, options(untouched, { skipKonnector: true, allowNamespaces: ['team-a'], remoteKubeconfig: KUBECONFIG })),
    ).rejects.toThrow('--allow-namespace sets the namespaces of the konnector this command installs; drop --skip-konnector or the flag');
    await expect(
      bindApiService(request as never, options(untouched, { skipKonnector: true, allNamespaces: true, remoteKubeconfig: KUBECONFIG })),
    ).rejects.toThrow('--all-namespaces sets the namespaces of the konnector this command installs; drop --skip-konnector or the flag');
    await expect(
      bindApiService(request as never, options(untouched, { allNamespaces: true, allowNamespaces: ['team-a'], remoteKubeconfig: KUBECONFIG })),
    ).rejects.toThrow('--all-namespaces and --allow-namespace contradict each other: pass one of them');
    expect(calls).toEqual([]);
  });
});

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{ name: p, cluster: { server: 'https://127.0.0.1:6443' } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: c, context: { cluster: p, user: u, namespace: cluster-1 } }]
current-context: c
`;
