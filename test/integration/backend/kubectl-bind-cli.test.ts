// The kubectl-bind binary (bin shim), run as a user would, against a real provider (backend + OIDC
// provider + cluster) and a real app cluster.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { writeFileSync } from 'node:fs';
import { KubeClient, type KubeObject } from '../../../runtime/core/index.js';
import { startCluster, applyManifests, type RealCluster } from '../../../runtime/realinfra/index.js';
import { FetchBrowser } from '../../support/oidc-provider.js';
import { eventually } from '../konnector/fixture.js';
import {
  BACKEND_RESOURCE,
  MACHINE_ID,
  MACHINE_SECRET,
  SECRETS_CLAIM,
  USERS,
  clickBind,
  openCrd,
  startProvider,
  template,
  type ProviderEnv,
} from './_fixture.js';

jest.setTimeout(180_000);

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = `${repo}bin/kubectl-bind.js`;

let env: ProviderEnv;
let app: RealCluster;
let appKube: KubeClient;

const SECRETS = { group: '', version: 'v1', plural: 'secrets', namespaced: true, kind: 'Secret' };
const WRITE_POLICY_BINDINGS = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural: 'validatingadmissionpolicybindings',
  namespaced: false,
  kind: 'ValidatingAdmissionPolicyBinding',
};
const BINDINGS = { group: 'klutch.anynines.com', version: 'v1alpha1', plural: 'apiservicebindings', namespaced: true, kind: 'APIServiceBinding' };
const REQS = { group: 'klutch.anynines.com', version: 'v1alpha1', plural: 'apiserviceexportrequests', namespaced: true, kind: 'APIServiceExportRequest' };
const EXPORTS = { group: 'klutch.anynines.com', version: 'v1alpha1', plural: 'apiserviceexports', namespaced: true, kind: 'APIServiceExport' };
const DEPLOYMENTS = { group: 'apps', version: 'v1', plural: 'deployments', namespaced: true, kind: 'Deployment' };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], opts: { env?: Record<string, string>; stdin?: string; onStderr?: (text: string) => void } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: repo,
      env: { ...process.env, KUBECONFIG: '', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      opts.onStderr?.(stderr);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (opts.stdin !== undefined) child.stdin.end(opts.stdin);
    else child.stdin.end();
    setTimeout(() => child.kill('SIGKILL'), 150_000).unref();
  });
}

/** Asserts the exit code; on a mismatch the failure shows the command's output. */
function expectExit(r: Run, code: number): void {
  if (r.code !== code) throw new Error(`exit code ${r.code}, expected ${code}\n--- stderr ---\n${r.stderr}\n--- stdout ---\n${r.stdout}`);
}

/** Runs `kubectl bind <url>` and plays the user in the "browser": login, click Bind on `api`. */
async function bindInteractively(args: string[], user = USERS[0], api = 'mangodbs.mangodb.com'): Promise<Run> {
  let started = false;
  let browserDone: Promise<void> = Promise.resolve();
  const run = runCli(args, {
    onStderr: (text) => {
      const m = /visit in your browser:\s+(\S+)/.exec(text);
      if (!m || started) return;
      started = true;
      browserDone = (async () => {
        const browser = new FetchBrowser();
        const first = await browser.request(m[1]);
        const login = await browser.follow(first.headers.get('location')!);
        const done = await browser.signIn(login.url, await login.res!.text(), user);
        const html = await done.res!.text();
        const bind = await clickBind(env, { browser, resourcesUrl: done.url, resourcesHtml: html }, api);
        expect(bind.status).toBe(303);
        const cb = await browser.request(bind.location!);
        expect(cb.status).toBe(200);
        expect(await cb.text()).toContain('authenticated successfully');
      })();
    },
  });
  const r = await run;
  await browserDone;
  return r;
}

beforeAll(async () => {
  const [p, a] = await Promise.all([startProvider('cli-provider'), startCluster({ name: 'cli-app' })]);
  env = p;
  app = a;
  appKube = new KubeClient(app.kubeConfig);
  // gizmos: a second API (claiming Secrets), bound together with widgets by one --token command
  const gizmos = openCrd('example.klutch.test', 'gizmos', 'Gizmo');
  await applyManifests(env.cluster.kubeConfig, [gizmos as never]);
  await applyManifests(env.cluster.kubeConfig, [
    template('ghosts', 'example.klutch.test', 'ghosts') as never,
    template('gizmos', 'example.klutch.test', 'gizmos', [SECRETS_CLAIM]) as never,
  ]);
}, 240_000);
afterAll(async () => {
  appKube?.close();
  await Promise.all([env?.stop(), app?.stop()]);
});

describe('kubectl bind <url>', () => {
  it('logs in through the loopback callback, stores the kubeconfig, creates the request, konnector and binding', async () => {
    const r = await bindInteractively([`${env.backend.url}/export`, '--kubeconfig', app.kubeconfigPath, '--yes', '--timeout', '90s']);
    expect(r.stderr).toContain('Test Provider');
    expectExit(r, 0);
    expect(r.stderr).toMatch(/Authenticated as http:\/\/127\.0\.0\.1:\d+\/user-alice/);
    expect(r.stderr).toMatch(/accepted permission claim of mangodbs\.mangodb\.com: secrets created by the provider/);
    expect(r.stdout).toMatch(/^NAME\tSECRET\tCLAIMS\nmangodbs\.mangodb\.com\tkubeconfig-\w+\tsecrets:Accepted\n$/);
    // app cluster: Secret with the provider kubeconfig, binding, konnector
    const secrets = (await appKube.list(SECRETS, 'klutch-bind', { labelSelector: 'klutch.anynines.com/provider-kubeconfig=true' })).items;
    expect(secrets).toHaveLength(1);
    const binding = (await appKube.get(BINDINGS, 'klutch-bind', 'mangodbs.mangodb.com')) as KubeObject & { spec: Record<string, unknown> };
    expect(binding.spec.kubeconfigSecretRef).toEqual({ namespace: 'klutch-bind', name: secrets[0].metadata.name, key: 'kubeconfig' });
    expect(binding.spec.permissionClaims).toEqual([
      expect.objectContaining({ group: '', resource: 'secrets', version: 'v1', state: 'Accepted', selector: expect.objectContaining({ owner: 'Provider' }) }),
    ]);
    const dep = (await appKube.get(DEPLOYMENTS, 'klutch-bind', 'konnector')) as KubeObject & {
      spec: { template: { spec: { containers: Array<{ image: string }> } } };
    };
    expect(dep.spec.template.spec.containers[0].image).toMatch(/konnector:/);
    // …with the admission policy bounding its Secret/ConfigMap writes (tested below)
    expect((await appKube.get(WRITE_POLICY_BINDINGS, undefined, 'klutch-konnector-klutch-bind-writes')).metadata.name).toBeDefined();
    // provider: the request succeeded and the export exists in the consumer's cluster namespace
    const kubeconfig = Buffer.from((secrets[0] as KubeObject & { data: { kubeconfig: string } }).data.kubeconfig, 'base64').toString();
    const clusterNs = /namespace: (\S+)/.exec(kubeconfig)![1];
    expect((await env.kube.get(EXPORTS, clusterNs, 'mangodbs.mangodb.com')).metadata.name).toBe('mangodbs.mangodb.com');
  });

  it('binding again reuses the Secret and the binding (idempotent)', async () => {
    const r = await bindInteractively([`${env.backend.url}/export`, '--kubeconfig', app.kubeconfigPath, '--yes', '--timeout', '90s', '-o', 'json']);
    expectExit(r, 0);
    expect(r.stderr).toMatch(/already existed/);
    expect(JSON.parse(r.stdout)).toMatchObject({ kind: 'APIServiceBinding', metadata: { name: 'mangodbs.mangodb.com' } });
    expect((await appKube.list(SECRETS, 'klutch-bind', { labelSelector: 'klutch.anynines.com/provider-kubeconfig=true' })).items).toHaveLength(1);
    expect((await appKube.list(BINDINGS, 'klutch-bind')).items).toHaveLength(1);
  });

  it('--token (CI): binds without a browser (two APIs in one command, one kubeconfig Secret), and --dry-run binds nothing', async () => {
    const { access_token } = await env.op.clientCredentials(MACHINE_ID, MACHINE_SECRET, { resource: BACKEND_RESOURCE, scope: 'bind' });
    const dry = await runCli([`${env.backend.url}/export`, '--kubeconfig', app.kubeconfigPath, '--resource', 'widgets.example.klutch.test', '--dry-run'], {
      env: { KLUTCH_BIND_TOKEN: access_token },
    });
    expectExit(dry, 0);
    expect(dry.stdout).toMatch(/kind: APIServiceExportRequest\nmetadata:\n {2}name: widgets\.example\.klutch\.test/);
    expect(await appKube.getOrNull(BINDINGS, 'klutch-bind', 'widgets.example.klutch.test')).toBeUndefined();
    // `kubectl bind <url> --resource A --resource B --token … [more]` against the app cluster
    const bindApis = (apis: string[], ...more: string[]) =>
      runCli([
        `${env.backend.url}/export`,
        '--kubeconfig',
        app.kubeconfigPath,
        ...apis.flatMap((a) => ['--resource', a]),
        '--token',
        access_token,
        '--timeout',
        '60s',
        ...more,
      ]);
    // two APIs, the second with a claim nobody accepted (no --yes, no terminal): exit 5 and neither is bound
    const refused = await bindApis(['widgets.example.klutch.test', 'gizmos.example.klutch.test']);
    expectExit(refused, 5);
    expect(refused.stderr).toMatch(/gizmos\.example\.klutch\.test asks for access to secrets/);
    expect(await appKube.getOrNull(BINDINGS, 'klutch-bind', 'widgets.example.klutch.test')).toBeUndefined();
    // accepted, but mangodbs is bound here already for another provider kubeconfig (the browser login's): exit 1, still nothing bound
    const taken = await bindApis(['widgets.example.klutch.test', 'mangodbs.mangodb.com'], '--yes');
    expectExit(taken, 1);
    expect(taken.stderr).toMatch(/APIServiceBinding mangodbs\.mangodb\.com already exists for another provider .*Nothing was bound/);
    expect(await appKube.getOrNull(BINDINGS, 'klutch-bind', 'widgets.example.klutch.test')).toBeUndefined();
    const r = await bindApis(['widgets.example.klutch.test', 'gizmos.example.klutch.test'], '--yes');
    expect(r.stderr).toContain(`Authenticated as ${env.op.issuer}/${MACHINE_ID}`);
    expectExit(r, 0);
    // a line per binding; both name the one provider kubeconfig Secret
    const lines = r.stdout.split('\n').filter((l) => /^(widgets|gizmos)\./.test(l));
    expect(lines.map((l) => l.split('\t')[0]).sort()).toEqual(['gizmos.example.klutch.test', 'widgets.example.klutch.test']);
    const secretOf = async (name: string) =>
      (await appKube.get<KubeObject & { spec: { kubeconfigSecretRef: { name: string } } }>(BINDINGS, 'klutch-bind', name)).spec.kubeconfigSecretRef.name;
    expect(await secretOf('widgets.example.klutch.test')).toBe(await secretOf('gizmos.example.klutch.test'));
    // a bad token: exit code 3, nothing more
    const bad = await runCli([
      `${env.backend.url}/export`,
      '--kubeconfig',
      app.kubeconfigPath,
      '--resource',
      'widgets.example.klutch.test',
      '--token',
      'a.b.c',
    ]);
    expectExit(bad, 3);
    expect(bad.stderr).toMatch(/the backend refused the token/);
  });
});

describe('kubectl bind apiservice', () => {
  let remoteKubeconfigFile: string;
  let clusterNs: string;
  beforeAll(async () => {
    const secret = (await appKube.list(SECRETS, 'klutch-bind', { labelSelector: 'klutch.anynines.com/provider-kubeconfig=true' })).items[0] as KubeObject & {
      data: { kubeconfig: string };
    };
    const text = Buffer.from(secret.data.kubeconfig, 'base64').toString();
    clusterNs = /namespace: (\S+)/.exec(text)![1];
    remoteKubeconfigFile = `${app.dir}/provider-kubeconfig.yaml`;
    writeFileSync(remoteKubeconfigFile, text);
  });

  it("a request for a missing CRD: exit code 4 with the provider's message", async () => {
    const req =
      'apiVersion: klutch.anynines.com/v1alpha1\nkind: APIServiceExportRequest\nmetadata:\n  name: ghosts.example.klutch.test\nspec:\n  resources:\n  - group: example.klutch.test\n    resource: ghosts\n';
    // the request comes from a URL (served here on loopback), as `kubectl bind apiservice <url>`
    const http = await import('node:http');
    const srv = http.createServer((_q, res) => res.writeHead(200, { 'Content-Type': 'application/yaml' }).end(req));
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(srv.address() as { port: number }).port}/ghosts.yaml`;
    let r: Run;
    try {
      r = await runCli(['apiservice', url, '--remote-kubeconfig', remoteKubeconfigFile, '--kubeconfig', app.kubeconfigPath, '--timeout', '60s']);
    } finally {
      srv.close();
    }
    expectExit(r, 4);
    expect(r.stderr).toMatch(
      /the provider refused export request ghosts\.example\.klutch\.test: CustomResourceDefinition ghosts\.example\.klutch\.test not found on the provider within 3s/,
    );
    expect(await appKube.getOrNull(BINDINGS, 'klutch-bind', 'ghosts.example.klutch.test')).toBeUndefined();
  });

  it('claims need consent: without --yes on a non-interactive stdin, exit 5 and nothing is created', async () => {
    const before = (await env.kube.list(REQS, clusterNs)).items.length;
    const req = JSON.stringify({
      apiVersion: 'klutch.anynines.com/v1alpha1',
      kind: 'APIServiceExportRequest',
      metadata: { name: 'mangodbs.mangodb.com' },
      spec: { resources: [{ group: 'mangodb.com', resource: 'mangodbs', permissionClaims: [SECRETS_CLAIM] }] },
    });
    const file = `${app.dir}/req.json`;
    writeFileSync(file, req);
    const r = await runCli(['apiservice', '-f', file, '--remote-kubeconfig-name', 'does-not-matter-yet', '--kubeconfig', app.kubeconfigPath]);
    expectExit(r, 2); // the Secret does not exist
    expect(r.stderr).toMatch(/Secret klutch-bind\/does-not-matter-yet does not exist/);
    const r2 = await runCli(['apiservice', '-f', file, '--remote-kubeconfig', remoteKubeconfigFile, '--kubeconfig', app.kubeconfigPath]);
    expectExit(r2, 5);
    expect(r2.stderr).toMatch(/pass --yes to accept them/);
    expect((await env.kube.list(REQS, clusterNs)).items.length).toBe(before);
  });

  const rbac = (plural: string, kind: string, namespaced: boolean) => ({ group: 'rbac.authorization.k8s.io', version: 'v1', plural, namespaced, kind });
  const NAMESPACES = { group: '', version: 'v1', plural: 'namespaces', namespaced: false, kind: 'Namespace' };
  /** No konnector installed: its Deployment and its namespaced RBAC gone (the next bind installs them again). */
  async function removeKonnector(): Promise<void> {
    await appKube.delete(DEPLOYMENTS, 'klutch-bind', 'konnector').catch(() => undefined);
    await appKube.delete(rbac('clusterroles', 'ClusterRole', false), undefined, 'klutch-konnector-klutch-bind-claims').catch(() => undefined);
    for (const b of (await appKube.list(rbac('rolebindings', 'RoleBinding', true))).items.filter((x) => x.metadata.name === 'klutch-konnector-claims')) {
      await appKube.delete(rbac('rolebindings', 'RoleBinding', true), b.metadata.namespace, b.metadata.name!).catch(() => undefined);
    }
    await appKube.delete(rbac('rolebindings', 'RoleBinding', true), 'klutch-bind', 'konnector-kubeconfig-secrets').catch(() => undefined);
    await appKube.delete(rbac('roles', 'Role', true), 'klutch-bind', 'konnector-kubeconfig-secrets').catch(() => undefined);
  }
  /** The namespaces the installed konnector's claims RoleBindings are in, and its namespace flags. */
  async function konnectorReach(): Promise<{ roleBindings: string[]; flags: string[]; clusterWideSecrets: boolean }> {
    const dep = (await appKube.get(DEPLOYMENTS, 'klutch-bind', 'konnector')) as KubeObject & {
      spec: { template: { spec: { containers: Array<{ args: string[] }> } } };
    };
    const roleBindings = (await appKube.list(rbac('rolebindings', 'RoleBinding', true))).items
      .filter((b) => (b as KubeObject & { roleRef: { name: string } }).roleRef.name === 'klutch-konnector-klutch-bind-claims')
      .map((b) => b.metadata.namespace!)
      .sort();
    const role = (await appKube.get(rbac('clusterroles', 'ClusterRole', false), undefined, 'klutch-konnector-klutch-bind')) as KubeObject & {
      rules: Array<{ resources: string[] }>;
    };
    return {
      roleBindings,
      flags: dep.spec.template.spec.containers[0].args.filter((a) => a.startsWith('--allow-namespace') || a === '--all-namespaces'),
      clusterWideSecrets: role.rules.some((x) => x.resources.includes('secrets') || x.resources.includes('configmaps')),
    };
  }

  /**
   * `kubectl bind apiservice --yes` of mangodbs (with the secrets claim) into the app cluster with `kubeconfig`, with the
   * provider credential the first test bound mangodbs with (there may be others: --token binds another identity).
   */
  async function mangodbsBinder(kubeconfig: string): Promise<(extra: string[]) => Promise<Run>> {
    const file = `${app.dir}/req-mangodbs-secrets.json`;
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: 'klutch.anynines.com/v1alpha1',
        kind: 'APIServiceExportRequest',
        metadata: { name: 'mangodbs.mangodb.com' },
        spec: { resources: [{ group: 'mangodb.com', resource: 'mangodbs', permissionClaims: [SECRETS_CLAIM] }] },
      }),
    );
    const bound = (await appKube.get(BINDINGS, 'klutch-bind', 'mangodbs.mangodb.com')) as KubeObject & { spec: { kubeconfigSecretRef: { name: string } } };
    return (extra) =>
      runCli([
        'apiservice',
        '-f',
        file,
        '--remote-kubeconfig-name',
        bound.spec.kubeconfigSecretRef.name,
        '--kubeconfig',
        kubeconfig,
        '--yes',
        '--timeout',
        '60s',
        ...extra,
      ]);
  }

  it("no namespace flag: the konnector gets Secret rights in the kubeconfig context's namespace only; --all-namespaces, flagged, cluster-wide", async () => {
    const CONTEXT_NS = 'cli-context-ns';
    const YAML = (await import('yaml')).default;
    const { readFileSync } = await import('node:fs');
    const kc = YAML.parse(readFileSync(app.kubeconfigPath, 'utf8'));
    for (const c of kc.contexts) c.context.namespace = CONTEXT_NS;
    const kubeconfig = `${app.dir}/kubeconfig-context-ns.yaml`;
    writeFileSync(kubeconfig, YAML.stringify(kc));
    const bindWith = await mangodbsBinder(kubeconfig);
    await removeKonnector();
    try {
      // the context's namespace must exist (its RoleBinding goes there)
      const missing = await bindWith([]);
      expectExit(missing, 2);
      expect(missing.stderr).toContain(
        `namespace "${CONTEXT_NS}" (the kubeconfig context's namespace, the konnector's default) does not exist in this cluster`,
      );
      await appKube.create(NAMESPACES, { metadata: { name: CONTEXT_NS } });
      const r = await bindWith([]);
      expectExit(r, 0);
      expect(r.stderr).toContain(
        `🔒 the konnector may read and write Secrets and ConfigMaps only in namespace ${CONTEXT_NS} (the kubeconfig context's namespace)`,
      );
      expect(await konnectorReach()).toEqual({ roleBindings: [CONTEXT_NS], flags: [`--allow-namespace=${CONTEXT_NS}`], clusterWideSecrets: false });
      // the explicit cluster-wide choice: flagged in the consent text, rendered as such
      const wide = await bindWith(['--all-namespaces']);
      expectExit(wide, 0);
      expect(wide.stderr).toContain('⚠️  the konnector may read and write Secrets and ConfigMaps in EVERY namespace (--all-namespaces)');
      expect(await konnectorReach()).toMatchObject({ flags: ['--all-namespaces'], clusterWideSecrets: true });
      // … and only as long as it is asked for: the next bind without it narrows, saying so first
      const again = await bindWith([]);
      expectExit(again, 0);
      expect(again.stderr).toContain(
        `⚠️  the installed konnector may read and write Secrets and ConfigMaps in every namespace; this bind narrows it to ${CONTEXT_NS}`,
      );
      expect(await konnectorReach()).toMatchObject({ flags: [`--allow-namespace=${CONTEXT_NS}`], clusterWideSecrets: false });
    } finally {
      await removeKonnector();
      await appKube.delete(NAMESPACES, undefined, CONTEXT_NS).catch(() => undefined);
    }
  });

  it('--allow-namespace: the konnector gets Secret and ConfigMap rights by a RoleBinding in that namespace only', async () => {
    const TEAM = 'cli-team';
    const bindWith = async (ns: string) => (await mangodbsBinder(app.kubeconfigPath))(['--allow-namespace', ns]);
    await removeKonnector();
    try {
      // a namespace that does not exist: refused before anything is written
      const before = (await env.kube.list(REQS)).items.length;
      const missing = await bindWith(TEAM);
      expectExit(missing, 2);
      expect(missing.stderr).toContain(`--allow-namespace: namespace "${TEAM}" does not exist in this cluster; create it first`);
      expect((await env.kube.list(REQS)).items.length).toBe(before);

      await appKube.create(NAMESPACES, { metadata: { name: TEAM } });
      const r = await bindWith(TEAM);
      expectExit(r, 0);
      expect(r.stderr).toContain(`🔒 the konnector may read and write Secrets and ConfigMaps only in namespace ${TEAM} (--allow-namespace)`);
      const dep = (await appKube.get(DEPLOYMENTS, 'klutch-bind', 'konnector')) as KubeObject & {
        spec: { template: { spec: { containers: Array<{ args: string[] }> } } };
      };
      expect(dep.spec.template.spec.containers[0].args.filter((a) => a.startsWith('--allow-namespace'))).toEqual([`--allow-namespace=${TEAM}`]);
      // the claimed Secrets' rules: bound in the team's namespace only, none in the cluster-wide ClusterRole
      const rb = (await appKube.get(rbac('rolebindings', 'RoleBinding', true), TEAM, 'klutch-konnector-claims')) as KubeObject & {
        roleRef: { name: string };
        subjects: Array<{ name: string; namespace: string }>;
      };
      expect(rb.roleRef.name).toBe('klutch-konnector-klutch-bind-claims');
      expect(rb.subjects).toEqual([expect.objectContaining({ name: 'konnector', namespace: 'klutch-bind' })]);
      const claimBindings = (await appKube.list(rbac('rolebindings', 'RoleBinding', true))).items.filter(
        (b) => (b as KubeObject & { roleRef: { name: string } }).roleRef.name === 'klutch-konnector-klutch-bind-claims',
      );
      expect(claimBindings.map((b) => b.metadata.namespace)).toEqual([TEAM]);
      const role = (await appKube.get(rbac('clusterroles', 'ClusterRole', false), undefined, 'klutch-konnector-klutch-bind')) as KubeObject & {
        rules: Array<{ resources: string[] }>;
      };
      expect(role.rules.filter((x) => x.resources.includes('secrets') || x.resources.includes('configmaps'))).toEqual([]);
    } finally {
      // no konnector left: the next bind installs it again
      await removeKonnector();
      await appKube.delete(NAMESPACES, undefined, TEAM).catch(() => undefined);
    }
  });

  it('usage errors: exit code 2 with what to do; an unreachable backend: 1', async () => {
    const b = await runCli(['--kubeconfig', app.kubeconfigPath, '--context', 'nope', `${env.backend.url}/export`]);
    expect({ code: b.code, stderr: b.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/--context: "nope" is not a context/) });
    const c = await runCli(['--kubeconfig', app.kubeconfigPath, 'http://127.0.0.1:1/export']);
    expect({ code: c.code, stderr: c.stderr }).toEqual({ code: 1, stderr: expect.stringMatching(/cannot reach http:\/\/127\.0\.0\.1:1\/export/) });
  });
});

// Whoever holds the konnector's ServiceAccount token (a compromised konnector, a leaked token): with
// KonnectorNamespaces.all() (the explicit cluster-wide choice) its RBAC writes Secrets cluster-wide, and the
// Konnector construct's ValidatingAdmissionPolicy takes out what the konnector never does. Its own namespace
// and objects: no leftovers.
describe("the konnector's write policy, against a stolen token of a cluster-wide konnector", () => {
  const NS = 'konnector-w';
  const TEAM = 'konnector-w-team';
  const CONFIGMAPS = { group: '', version: 'v1', plural: 'configmaps', namespaced: true, kind: 'ConfigMap' };
  const SERVICEACCOUNTS = { group: '', version: 'v1', plural: 'serviceaccounts', namespaced: true, kind: 'ServiceAccount' };

  it('cannot mint a ServiceAccount token or write in kube-system; an ordinary Secret in an app namespace it can', async () => {
    const { konnectorManifests, KonnectorNamespaces } = await import('../../../constructs/runtime/index.js');
    const { loadKubeconfigFile } = await import('../../../runtime/core/kubeconfig.js');
    const kinds = ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'];
    const objs = konnectorManifests({ namespace: NS, namespaces: KonnectorNamespaces.all() }).filter((o) => kinds.includes(o.kind));
    await applyManifests(app.kubeConfig, [...objs, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: TEAM } }] as never[]);
    const access = loadKubeconfigFile(app.kubeconfigPath);
    let stolen: KubeClient | undefined;
    try {
      await appKube.create(SERVICEACCOUNTS, { metadata: { name: 'deployer', namespace: TEAM } });
      const tr = await appKube.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${NS}/serviceaccounts/konnector/token`, {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } },
      });
      stolen = new KubeClient({
        server: access.server,
        caData: access.caData,
        tlsServerName: access.tlsServerName,
        skipTLSVerify: access.skipTLSVerify,
        token: tr.status.token,
      });
      const s = stolen;
      // The API server loads policies asynchronously: wait until a harmless write it forbids is refused.
      const refusal = (e: unknown) => (e as { code?: number; message?: string }) ?? {};
      await eventually('the write policy in force', async () => {
        try {
          await s.create(CONFIGMAPS, { metadata: { name: 'probe', namespace: 'kube-public' } });
          await appKube.delete(CONFIGMAPS, 'kube-public', 'probe');
          return false;
        } catch (e) {
          return refusal(e).code === 403 && /never writes Secrets or ConfigMaps in kube-system/.test(refusal(e).message ?? '');
        }
      });
      // a token of the app's deployer ServiceAccount: refused, in a namespace RBAC lets it write
      const mint = s.create(SECRETS, {
        metadata: { name: 'deployer-token', namespace: TEAM, annotations: { 'kubernetes.io/service-account.name': 'deployer' } },
        type: 'kubernetes.io/service-account-token',
      } as KubeObject);
      await expect(mint).rejects.toMatchObject({ code: 403 });
      await mint.catch((e: Error) => expect(e.message).toContain('never kubernetes.io/service-account-token'));
      expect(await appKube.getOrNull(SECRETS, TEAM, 'deployer-token')).toBeUndefined();
      // a bootstrap token in kube-system (a node-join credential): refused
      await expect(
        s.create(SECRETS, {
          metadata: { name: 'bootstrap-token-abcdef', namespace: 'kube-system' },
          type: 'bootstrap.kubernetes.io/token',
          stringData: { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true' },
        } as KubeObject),
      ).rejects.toMatchObject({ code: 403 });
      // an Opaque Secret in kube-system: refused too
      await expect(s.create(SECRETS, { metadata: { name: 'planted', namespace: 'kube-system' }, stringData: { k: 'v' } } as KubeObject)).rejects.toMatchObject({
        code: 403,
      });
      // the barrier: what the konnector does (a claimed credentials Secret in an app namespace) still works
      await s.create(SECRETS, {
        metadata: { name: 'db-creds', namespace: TEAM },
        type: 'connection.crossplane.io/v1alpha1',
        stringData: { password: 'p' },
      } as KubeObject);
      await s.delete(SECRETS, TEAM, 'db-creds');
    } finally {
      stolen?.close();
      const rbac = (plural: string, kind: string) => ({ group: 'rbac.authorization.k8s.io', version: 'v1', plural, namespaced: false, kind });
      const vap = { ...WRITE_POLICY_BINDINGS, plural: 'validatingadmissionpolicies', kind: 'ValidatingAdmissionPolicy' };
      const ns = { group: '', version: 'v1', plural: 'namespaces', namespaced: false, kind: 'Namespace' };
      for (const [ref, name] of [
        [WRITE_POLICY_BINDINGS, `klutch-konnector-${NS}-writes`],
        [vap, `klutch-konnector-${NS}-writes`],
        [rbac('clusterrolebindings', 'ClusterRoleBinding'), `klutch-konnector-${NS}`],
        [rbac('clusterroles', 'ClusterRole'), `klutch-konnector-${NS}`],
        [ns, NS],
        [ns, TEAM],
      ] as const) {
        await appKube.delete(ref, undefined, name).catch(() => undefined);
      }
    }
  });
});

// A hostile backend answering the CLI (issue 32): a `--token` bind whose answer asks for an export of
// apps/daemonsets with a claim on daemonsets.apps (create.replaceExisting), and whose "provider"
// answers every export request with Succeeded at once. Its provider cluster is a namespace of the app
// cluster (with the binding CRDs): the hostile side needs no backend of ours.
describe('a hostile backend answering the CLI', () => {
  const HOSTILE_NS = 'hostile-provider';
  const CRDS = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', namespaced: false, kind: 'CustomResourceDefinition' };
  const CLUSTER_ROLES = { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterroles', namespaced: false, kind: 'ClusterRole' };
  const NAMESPACES = { group: '', version: 'v1', plural: 'namespaces', namespaced: false, kind: 'Namespace' };
  const ROLE = 'klutch-konnector-klutch-bind';
  let server: import('node:http').Server;
  let url: string;
  let answering = true;
  let answerer: Promise<void>;
  /** What the hostile backend answers: the request for apps/daemonsets unless a test sets another. */
  let answer: unknown;
  const hostileRequest = {
    metadata: { name: 'daemonsets.apps' },
    spec: {
      resources: [
        {
          group: 'apps',
          resource: 'daemonsets',
          versions: ['v1'],
          permissionClaims: [{ group: 'apps', resource: 'daemonsets', version: 'v1', selector: { owner: 'Provider' }, create: { replaceExisting: true } }],
        },
      ],
    },
  };
  const cli = (extra: string[] = []) =>
    runCli([url, '--kubeconfig', app.kubeconfigPath, '--token', 'hostile.jwt.token', '--resource', 'daemonsets.apps', '--yes', '--timeout', '60s', ...extra]);
  const providerSecrets = async () =>
    (await appKube.list(SECRETS, 'klutch-bind', { labelSelector: 'klutch.anynines.com/provider-kubeconfig=true' })).items.map((s) => s.metadata.name).sort();

  beforeAll(async () => {
    const YAML = (await import('yaml')).default;
    const { bindingCrds } = await import('../../../contract/index.js');
    const { newBindingProvider, newBindingResponse } = await import('../../../contract/wire.js');
    const http = await import('node:http');
    // the hostile provider: the binding CRDs and a namespace on the app cluster, its admin kubeconfig
    await applyManifests(app.kubeConfig, [...(bindingCrds() as never[]), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: HOSTILE_NS } } as never]);
    const kc = YAML.parse((await import('node:fs')).readFileSync(app.kubeconfigPath, 'utf8'));
    for (const c of kc.contexts) c.context.namespace = HOSTILE_NS;
    const kubeconfig = YAML.stringify(kc);
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        res.setHeader('Content-Type', 'application/json');
        if (req.method === 'GET' && req.url === '/export') {
          res.end(JSON.stringify(newBindingProvider('Hostile Provider', 'v0.0.1', `${url.replace(/\/export$/, '')}/authorize`)));
        } else if (req.method === 'POST' && req.url === '/bind') {
          const { sessionID } = JSON.parse(body) as { sessionID: string };
          res.end(JSON.stringify(newBindingResponse({ sessionID, identity: 'hostile', kubeconfig, requests: [(answer ?? hostileRequest) as never] })));
        } else {
          res.statusCode = 404;
          res.end('{}');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/export`;
    // …and its "provider" says Succeeded to every export request at once
    answerer = (async () => {
      while (answering) {
        const reqs = await appKube.list(REQS, HOSTILE_NS).catch(() => ({ items: [] as KubeObject[] }));
        for (const r of reqs.items as Array<KubeObject & { status?: { phase?: string } }>) {
          if (r.status?.phase === 'Succeeded') continue;
          await appKube.mergePatch(REQS, HOSTILE_NS, r.metadata.name!, { status: { phase: 'Succeeded' } }, 'status').catch(() => undefined);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
  });
  afterAll(async () => {
    answering = false;
    await answerer;
    await new Promise((r) => server?.close(r));
    // leave the app cluster as the other tests expect it: one provider kubeconfig, their bindings
    await appKube.delete(BINDINGS, 'klutch-bind', 'daemonsets.apps').catch(() => undefined);
    for (const s of (await appKube.list(SECRETS, 'klutch-bind')).items) {
      const text = Buffer.from((s as KubeObject & { data?: { kubeconfig?: string } }).data?.kubeconfig ?? '', 'base64').toString();
      if (text.includes(`namespace: ${HOSTILE_NS}`)) await appKube.delete(SECRETS, 'klutch-bind', s.metadata.name!);
    }
    await appKube.delete(NAMESPACES, undefined, HOSTILE_NS).catch(() => undefined);
  });

  it('refuses an export of apps/daemonsets and a claim on daemonsets.apps before writing anything: exit 5, ClusterRole unchanged', async () => {
    const before = { role: await appKube.getOrNull(CLUSTER_ROLES, undefined, ROLE), secrets: await providerSecrets() };
    const r = await cli();
    expectExit(r, 5);
    expect(r.stderr).toContain('the export request names resources this cluster does not let a provider touch; nothing was created');
    expect(r.stderr).toMatch(
      /the export of daemonsets\.apps is outside the allow-list: workloads run code .*; if you trust the provider with it, allow it with --allow-resource daemonsets\.apps/,
    );
    expect(r.stderr).toMatch(/the permission claim on daemonsets\.apps is outside the allow-list: .*allow it with --allow-resource daemonsets\.apps/);
    // nothing half-applied: no request upstream, no Secret, no binding, the konnector's ClusterRole as it was
    expect((await appKube.list(REQS, HOSTILE_NS)).items).toEqual([]);
    expect(await providerSecrets()).toEqual(before.secrets);
    expect(await appKube.getOrNull(BINDINGS, 'klutch-bind', 'daemonsets.apps')).toBeUndefined();
    const after = await appKube.getOrNull(CLUSTER_ROLES, undefined, ROLE);
    expect(after?.metadata.resourceVersion).toBe(before.role?.metadata.resourceVersion);
    expect(JSON.stringify(after ?? null)).not.toContain('daemonsets');
  });

  it('with --allow-resource daemonsets.apps: shows the claim with replaceExisting flagged and grants exactly those rules', async () => {
    const r = await cli(['--allow-resource', 'daemonsets.apps']);
    expectExit(r, 0);
    expect(r.stderr).toMatch(
      /⚠️ {2}export of daemonsets\.apps: the konnector gets read\/write on every daemonsets\.apps object, cluster-wide — outside the default allow-list, allowed by --allow-resource daemonsets\.apps/,
    );
    expect(r.stderr).toContain('accepted permission claim of daemonsets.apps: daemonsets.apps created by the provider (synced into your cluster) (--yes)');
    expect(r.stderr).toContain('⚠️  create.replaceExisting: true');
    const role = (await appKube.get(CLUSTER_ROLES, undefined, ROLE)) as KubeObject & {
      rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }>;
    };
    const claims = (await appKube.get(CLUSTER_ROLES, undefined, `${ROLE}-claims`)) as typeof role;
    const rw = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
    // the export (with its status) cluster-wide and the claim in the allowed namespaces' role: nothing more on
    // apps, nothing on other workload groups
    expect(role.rules.filter((x) => x.apiGroups.includes('apps'))).toEqual([
      { apiGroups: ['apps'], resources: ['daemonsets', 'daemonsets/status'], verbs: rw },
    ]);
    expect(claims.rules.filter((x) => x.apiGroups.includes('apps'))).toEqual([{ apiGroups: ['apps'], resources: ['daemonsets'], verbs: rw }]);
    expect(role.rules.flatMap((x) => x.apiGroups).filter((g) => ['batch', 'rbac.authorization.k8s.io', 'admissionregistration.k8s.io'].includes(g))).toEqual(
      [],
    );
    // the konnector keeps the allowance (it refuses anything else), and the CRD check found no foreign CRD
    const dep = (await appKube.get(DEPLOYMENTS, 'klutch-bind', 'konnector')) as KubeObject & {
      spec: { template: { spec: { containers: Array<{ args: string[] }> } } };
    };
    expect(dep.spec.template.spec.containers[0].args.filter((a) => a.startsWith('--allow-resource'))).toEqual(['--allow-resource=daemonsets.apps']);
    expect(await appKube.getOrNull(CRDS, undefined, 'daemonsets.apps')).toBeUndefined();
    expect((await appKube.get(BINDINGS, 'klutch-bind', 'daemonsets.apps')).metadata.name).toBe('daemonsets.apps');
  });

  it('refuses to take over a CRD of the app cluster that no binding made (exit 5), even with --allow-resource', async () => {
    // an API the app cluster already has (say an operator's), in a group the policy would allow
    const name = 'gizmos.tools.example.test';
    await appKube.create(CRDS, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name },
      spec: {
        group: 'tools.example.test',
        names: { plural: 'gizmos', kind: 'Gizmo' },
        scope: 'Namespaced',
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    } as KubeObject);
    answer = { metadata: { name }, spec: { resources: [{ group: 'tools.example.test', resource: 'gizmos', versions: ['v1'] }] } };
    try {
      const before = await appKube.getOrNull(CLUSTER_ROLES, undefined, ROLE);
      for (const extra of [[], ['--allow-resource', name]]) {
        const r = await runCli([
          url,
          '--kubeconfig',
          app.kubeconfigPath,
          '--token',
          'hostile.jwt.token',
          '--resource',
          name,
          '--yes',
          '--timeout',
          '60s',
          ...extra,
        ]);
        expectExit(r, 5);
        expect(r.stderr).toContain(`CustomResourceDefinition ${name} already exists in your cluster and no APIServiceBinding made it`);
      }
      expect((await appKube.list(REQS, HOSTILE_NS)).items.filter((x) => x.metadata.name!.startsWith('gizmos'))).toEqual([]);
      expect(await appKube.getOrNull(BINDINGS, 'klutch-bind', name)).toBeUndefined();
      expect((await appKube.getOrNull(CLUSTER_ROLES, undefined, ROLE))?.metadata.resourceVersion).toBe(before?.metadata.resourceVersion);
    } finally {
      answer = undefined;
      await appKube.delete(CRDS, undefined, name).catch(() => undefined);
    }
  });
});
