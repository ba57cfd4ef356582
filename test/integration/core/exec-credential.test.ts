// Kubeconfigs with exec credential plugins (as EKS, GKE and AKS hand out) against a real
// kube-apiserver: the plugin (_token-request-plugin.mjs) is a real process that gets a service
// account token from the API server's TokenRequest API and prints it as an ExecCredential; the
// loader the backend, konnector and kubectl-bind share (runtime/core/kubeconfig.ts) runs it.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreResources, KubeClient } from '../../../runtime/core/client.js';
import { ExecCredentialError } from '../../../runtime/core/exec-credential.js';
import { loadKubeconfigFile } from '../../../runtime/core/kubeconfig.js';
import { loadKubeConfig } from '../../../runtime/kubectl-bind/util.js';
import { useCluster } from '../../realinfra/util.js';

jest.setTimeout(120_000);

const cluster = useCluster({ name: 'exec-plugin' });
const PLUGIN = join(fileURLToPath(new URL('.', import.meta.url)), '_token-request-plugin.mjs');
const dir = mkdtempSync(join(tmpdir(), 'exec-plugin-it-'));
const clients: KubeClient[] = [];
let admin: KubeClient;
let n = 0;

beforeAll(async () => {
  admin = new KubeClient(cluster().kubeConfig);
  await admin.create(CoreResources.namespaces, { metadata: { name: 'plugin-users' } });
  await admin.create(CoreResources.serviceaccounts, { metadata: { name: 'deployer', namespace: 'plugin-users' } });
  // the service account may read ConfigMaps of its namespace (and nothing else)
  await admin.create({ group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'rolebindings', namespaced: true, kind: 'RoleBinding' }, {
    metadata: { name: 'deployer-view', namespace: 'plugin-users' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: 'plugin-users' }],
  } as never);
  await admin.create(CoreResources.configmaps, { metadata: { name: 'hello', namespace: 'plugin-users' }, data: { a: '1' } });
});
afterAll(() => {
  for (const c of clients) c.close();
  admin?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes a kubeconfig whose user runs the plugin; returns its path and the plugin's run counter. */
function kubeconfig(mode: string, apiVersion = 'client.authentication.k8s.io/v1'): { path: string; runs: () => number } {
  const i = ++n;
  const runsFile = join(dir, `runs-${i}`);
  writeFileSync(runsFile, '');
  const ca = /certificate-authority-data: (\S+)/.exec(readFileSync(cluster().kubeconfigPath, 'utf8'))![1];
  const path = join(dir, `kubeconfig-${i}`);
  const env = { ADMIN_KUBECONFIG: cluster().kubeconfigPath, SA_NAMESPACE: 'plugin-users', SA_NAME: 'deployer', RUNS_FILE: runsFile, PLUGIN_MODE: mode };
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'eks-like',
      clusters: [{ name: 'c', cluster: { server: cluster().server, 'certificate-authority-data': ca } }],
      users: [
        {
          name: 'plugin-user',
          user: {
            exec: {
              apiVersion,
              command: process.execPath,
              args: [PLUGIN],
              env: Object.entries(env).map(([name, value]) => ({ name, value })),
              interactiveMode: 'Never',
              provideClusterInfo: true,
            },
          },
        },
      ],
      contexts: [{ name: 'eks-like', context: { cluster: 'c', user: 'plugin-user', namespace: 'plugin-users' } }],
    }),
  );
  return { path, runs: () => readFileSync(runsFile, 'utf8').length };
}

const client = (path: string, execTimeoutMs?: number) => {
  const c = new KubeClient(loadKubeconfigFile(path, undefined, { execTimeoutMs }));
  clients.push(c);
  return c;
};

const whoami = async (c: KubeClient) =>
  (
    await c.request<{ status: { userInfo: { username: string } } }>('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    })
  ).status.userInfo.username;

describe('exec credential plugins against a real API server', () => {
  it.each(['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'])(
    '%s: the TokenRequest token authenticates; one run serves every request until it expires',
    async (apiVersion) => {
      const kc = kubeconfig('token', apiVersion);
      const c = client(kc.path);
      expect(await whoami(c)).toBe('system:serviceaccount:plugin-users:deployer');
      const cm = await c.get(CoreResources.configmaps, 'plugin-users', 'hello');
      expect(cm.metadata.name).toBe('hello');
      const list = await c.list(CoreResources.configmaps, 'plugin-users');
      expect(list.items.map((o) => o.metadata.name)).toContain('hello');
      expect(kc.runs()).toBe(1);
      // the identity is the service account's, not the admin's: it may not read Secrets
      await expect(c.list(CoreResources.secrets, 'plugin-users')).rejects.toMatchObject({ code: 403 });
    },
  );

  it('a credential whose expirationTimestamp has passed is fetched again for the next request', async () => {
    const kc = kubeconfig('expired');
    const c = client(kc.path);
    await c.get(CoreResources.configmaps, 'plugin-users', 'hello');
    await c.get(CoreResources.configmaps, 'plugin-users', 'hello');
    expect(kc.runs()).toBe(2);
  });

  it('a 401 drops the credential and the request goes through with a fresh one (requests and watches)', async () => {
    const kc = kubeconfig('bogus-first');
    const c = client(kc.path);
    expect(await whoami(c)).toBe('system:serviceaccount:plugin-users:deployer');
    expect(kc.runs()).toBe(2);

    const kc2 = kubeconfig('bogus-first');
    const w = client(kc2.path);
    const seen: string[] = [];
    const handle = await w.watch(CoreResources.configmaps, 'plugin-users', {}, (ev) => seen.push(`${ev.type} ${ev.object.metadata.name}`));
    try {
      expect(kc2.runs()).toBe(2);
      const deadline = Date.now() + 10_000;
      while (!seen.includes('ADDED hello') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(seen).toContain('ADDED hello');
    } finally {
      handle.abort();
    }
  });

  it('a plugin that answers with a client certificate: requests use it for TLS', async () => {
    const kc = kubeconfig('cert');
    const c = client(kc.path);
    expect(await whoami(c)).toBe(await whoami(admin));
    await c.list(CoreResources.secrets, 'plugin-users'); // the admin may
    expect(kc.runs()).toBe(1);
  });

  it('a failing plugin: the request fails with an error naming the command and its stderr', async () => {
    const c = client(kubeconfig('fail').path);
    const e = await c.get(CoreResources.configmaps, 'plugin-users', 'hello').catch((err: unknown) => err as Error);
    expect(e).toBeInstanceOf(ExecCredentialError);
    expect((e as Error).message).toBe(
      `exec credential plugin "${process.execPath} ${PLUGIN}" (kubeconfig user "plugin-user") failed (exit code 2): error: the token service refused the request (403)`,
    );
  });

  it('a hanging plugin: stopped after the timeout, the error names the command', async () => {
    const c = client(kubeconfig('hang').path, 1500);
    await expect(c.get(CoreResources.configmaps, 'plugin-users', 'hello')).rejects.toThrow(
      `exec credential plugin "${process.execPath} ${PLUGIN}" (kubeconfig user "plugin-user") did not finish within 1.5 s and was stopped; check that it runs without a terminal (try it in a shell); its stderr: waiting for the browser login…`,
    );
  });

  it("kubectl-bind loads the same kubeconfig with the same loader (the backend's and konnector's)", async () => {
    const kc = kubeconfig('token');
    const access = loadKubeConfig({ kubeconfig: kc.path });
    expect(access.exec?.commandLine).toBe(`${process.execPath} ${PLUGIN}`);
    const c = new KubeClient(access);
    clients.push(c);
    expect(await whoami(c)).toBe('system:serviceaccount:plugin-users:deployer');
  });
});
