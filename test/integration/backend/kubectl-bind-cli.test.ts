// The kubectl-bind binary (bin shim), run as a user would, against a real provider (backend + OIDC
// provider + cluster) and a real app cluster.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { writeFileSync } from 'node:fs';
import { KubeClient, type KubeObject } from '../../../runtime/core/index.js';
import { startCluster, applyManifests, type RealCluster } from '../../../runtime/realinfra/index.js';
import { FetchBrowser } from '../../support/oidc-provider.js';
import { BACKEND_RESOURCE, MACHINE_ID, MACHINE_SECRET, SECRETS_CLAIM, USERS, clickBind, startProvider, template, type ProviderEnv } from './_fixture.js';

jest.setTimeout(180_000);

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = `${repo}bin/kubectl-bind.js`;

let env: ProviderEnv;
let app: RealCluster;
let appKube: KubeClient;

const SECRETS = { group: '', version: 'v1', plural: 'secrets', namespaced: true, kind: 'Secret' };
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
  await applyManifests(env.cluster.kubeConfig, [template('ghosts', 'example.klutch.test', 'ghosts') as never]);
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

  it('--token (CI): binds without a browser, and --dry-run prints the request without binding', async () => {
    const { access_token } = await env.op.clientCredentials(MACHINE_ID, MACHINE_SECRET, { resource: BACKEND_RESOURCE, scope: 'bind' });
    const dry = await runCli([`${env.backend.url}/export`, '--kubeconfig', app.kubeconfigPath, '--resource', 'widgets.example.klutch.test', '--dry-run'], {
      env: { KLUTCH_BIND_TOKEN: access_token },
    });
    expectExit(dry, 0);
    expect(dry.stdout).toMatch(/kind: APIServiceExportRequest\nmetadata:\n {2}name: widgets\.example\.klutch\.test/);
    expect(await appKube.getOrNull(BINDINGS, 'klutch-bind', 'widgets.example.klutch.test')).toBeUndefined();
    const r = await runCli([
      `${env.backend.url}/export`,
      '--kubeconfig',
      app.kubeconfigPath,
      '--resource',
      'widgets.example.klutch.test',
      '--token',
      access_token,
      '--timeout',
      '60s',
    ]);
    expect(r.stderr).toContain(`Authenticated as ${env.op.issuer}/${MACHINE_ID}`);
    expectExit(r, 0);
    expect((await appKube.get(BINDINGS, 'klutch-bind', 'widgets.example.klutch.test')).metadata.name).toBe('widgets.example.klutch.test');
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

  it('usage errors: exit code 2 with what to do; an unreachable backend: 1', async () => {
    const b = await runCli(['--kubeconfig', app.kubeconfigPath, '--context', 'nope', `${env.backend.url}/export`]);
    expect({ code: b.code, stderr: b.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/--context: "nope" is not a context/) });
    const c = await runCli(['--kubeconfig', app.kubeconfigPath, 'http://127.0.0.1:1/export']);
    expect({ code: c.code, stderr: c.stderr }).toEqual({ code: 1, stderr: expect.stringMatching(/cannot reach http:\/\/127\.0\.0\.1:1\/export/) });
  });
});
