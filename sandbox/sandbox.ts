/**
 * The local sandbox: a whole Klutch on this machine, no Docker and no cloud (`npm run sandbox`, docs/sandbox.md).
 *
 * 1. clusters: a control plane and two app clusters — real etcd + kube-apiserver + kube-controller-manager
 *    from the real-cluster harness (runtime/realinfra);
 * 2. the OIDC provider: the real `oidc-provider` instance of test/support (in this process, on 127.0.0.1);
 * 3. `pulumi up` of the stack program (stacks/main.ts) in `runtime` manifests mode with the Pulumi toolchain
 *    built from Go (binding CRDs, backend and konnector objects; no pod runs them here);
 * 4. the data services on the control plane: the PostgresqlInstance / ServiceBinding claim CRDs derived from the
 *    catalogue's XRDs (as Crossplane would) and their APIServiceExportTemplates, plus the sandbox stand-in that
 *    answers claims in place of Crossplane (runtime/sandbox/claim-stand-in.ts);
 * 5. the backend and one konnector per app cluster as local processes (tsx);
 * 6. both app clusters bound with the `kubectl-bind` binary (non-interactive `--token` path);
 * then `provisionDemo()` creates a PostgresqlInstance and a ServiceBinding in app-1 and waits until they reach
 * the control plane and their status and credentials Secret come back down.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'cdk8s';
import type { KubernetesObject } from '@kubernetes/client-node';
import { LocalWorkspace, PulumiCommand, Stack } from '@pulumi/pulumi/automation/index.js';
import { exampleTopology } from '../../constructs/app/example.js';
import { deriveClaimCrd, type CompositeResourceDefinitionLike } from '../../constructs/validate/index.js';
import { CoreResources, KubeClient, type KubeObject } from '../core/client.js';
import { getCondition, type Condition } from '../core/conditions.js';
import { applyManifests, freePort, startCluster, waitForCrdsEstablished, type RealCluster } from '../realinfra/index.js';
import { ensurePulumiBinaries, pulumiEnv } from '../realinfra/pulumi-build.js';
import { generateStackSecrets } from '../../stacks/secrets.js';
// The sandbox's issuer is the test OP (a real, OpenID-certified oidc-provider instance), reused, not copied.
import { OidcTestProvider } from '../../test/support/oidc-provider.js';
import { ClaimStandIn, credentialsSecretName, SANDBOX_CLAIMS } from './claim-stand-in.js';
import { SANDBOX_DIR, STATE_FILE, type SandboxState } from './state.js';

export { SANDBOX_DIR, STATE_FILE, type SandboxState };

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TSX_CLI = path.join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const TSX_LOADER = path.join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs');

export const BACKEND_CLIENT_ID = 'klutch-backend';
export const BACKEND_RESOURCE = 'urn:klutch:backend';
export const BIND_APIS = ['postgresqlinstances.anynines.com', 'servicebindings.anynines.com'] as const;
/** Steps printed by startSandbox (6) and provisionDemo (the 7th). */
export const SANDBOX_STEPS = 7;
export const DEMO = { namespace: 'shop', instance: 'orders-db', binding: 'orders-db-binding' } as const;


export interface SandboxOptions {
  /** A line per completed step (and a few details). */
  log?: (line: string) => void;
  /** Where logs, the Pulumi project/state and the state file go. @default a fresh folder under SANDBOX_DIR */
  dir?: string;
  /** Write `STATE_FILE` (the CLI does; the test does not). */
  writeState?: boolean;
}

export interface Sandbox {
  readonly controlPlane: RealCluster;
  readonly apps: readonly [RealCluster, RealCluster];
  readonly backendUrl: string;
  readonly op: OidcTestProvider;
  readonly stack: Stack;
  readonly processes: ReadonlyArray<{ name: string; child: ChildProcess; log: string }>;
  /** Seconds per step. */
  readonly timings: Record<string, number>;
  /** What `kubectl-bind` printed per app cluster and API. */
  readonly bindOutput: Record<string, string>;
  readonly dir: string;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function eventually<T>(what: string, fn: () => Promise<T | undefined | false | null>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false && v !== null) return v;
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() > end) throw new Error(`sandbox: timed out after ${timeoutMs / 1000}s waiting for ${what}${last ? ` (last error: ${last})` : ''}`);
    await sleep(200);
  }
}

/** The control plane's data-service objects: claim CRDs derived from the catalogue XRDs, export templates. */
export function dataServiceObjects(): { crds: KubeObject[]; templates: KubeObject[] } {
  const app = new App();
  const topology = exampleTopology(app);
  const objs = app.charts.flatMap((c) => c.toJson()) as KubeObject[];
  const target = topology.controlPlane.crossplane.version.isV1 ? '1.20' : '2';
  const xrds = objs.filter((o) => o.kind === 'CompositeResourceDefinition' && ['xpostgresqlinstances.anynines.com', 'xservicebindings.anynines.com'].includes(o.metadata.name!));
  const crds = xrds.map((x) => deriveClaimCrd(x as unknown as CompositeResourceDefinitionLike, { crossplane: target }) as unknown as KubeObject);
  const templates = objs.filter((o) => o.kind === 'APIServiceExportTemplate' && ['postgresqlinstances', 'servicebindings'].includes(o.metadata.name!));
  if (crds.length !== 2 || templates.length !== 2) throw new Error(`sandbox: expected 2 claim CRDs and 2 export templates from the catalogue, got ${crds.length} and ${templates.length}`);
  return { crds, templates };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], opts: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: { ...process.env, KUBECONFIG: '', ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    const t = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(t);
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const started = Date.now();
  const say = opts.log ?? ((l: string) => process.stdout.write(`${l}\n`));
  fs.mkdirSync(SANDBOX_DIR, { recursive: true });
  const dir = opts.dir ?? fs.mkdtempSync(path.join(SANDBOX_DIR, 'run-'));
  fs.mkdirSync(path.join(dir, 'logs'), { recursive: true });
  const timings: Record<string, number> = {};
  const stops: Array<() => Promise<void>> = [];
  const processes: Array<{ name: string; child: ChildProcess; log: string }> = [];
  const clusters: RealCluster[] = [];
  const bindOutput: Record<string, string> = {};
  let n = 0;
  const step = async <T>(what: string, fn: () => Promise<T>, detail?: (v: T) => string): Promise<T> => {
    const t = Date.now();
    const v = await fn();
    timings[what] = (Date.now() - t) / 1000;
    n++;
    say(`[${n}/${SANDBOX_STEPS}] ${what} … done in ${timings[what]!.toFixed(1)} s (+${((Date.now() - started) / 1000).toFixed(1)} s)${detail ? `\n      ${detail(v).split('\n').join('\n      ')}` : ''}`);
    return v;
  };
  const stopAll = async () => {
    for (const p of processes) await stopChild(p.child).catch(() => undefined);
    for (const s of stops.reverse()) await s().catch(() => undefined);
    await Promise.all(clusters.map((c) => c.stop().catch(() => undefined)));
    if (opts.writeState) fs.rmSync(STATE_FILE, { force: true });
    if (!opts.dir) fs.rmSync(dir, { recursive: true, force: true });
  };
  const writeState = (backendUrl: string, issuer: string) => {
    if (!opts.writeState) return;
    const state: SandboxState = {
      supervisorPid: process.pid,
      dir,
      backendUrl,
      issuer,
      clusters: clusters.map((c) => ({ name: c.name, server: c.server, kubeconfigPath: c.kubeconfigPath, dir: c.dir, pids: Object.values(c.pids()).filter((p): p is number => p !== undefined) })),
      processes: processes.map((p) => ({ name: p.name, pid: p.child.pid!, log: p.log })),
    };
    fs.writeFileSync(STATE_FILE, JSON.stringify(state, null, 2));
  };
  const spawnLocal = (name: string, file: string, args: string[]) => {
    const log = path.join(dir, 'logs', `${name}.log`);
    const fd = fs.openSync(log, 'a');
    const child = spawn(process.execPath, [TSX_CLI, file, ...args], { cwd: REPO_ROOT, env: { ...process.env, KUBECONFIG: '' }, stdio: ['ignore', fd, fd] });
    fs.closeSync(fd);
    processes.push({ name, child, log });
    return child;
  };

  try {
    // 1. clusters (and the Pulumi toolchain, warm: a few stat calls)
    const [bins, cp, app1, app2] = await step('clusters: control plane + 2 app clusters (real kube-apiserver, etcd, kube-controller-manager)', async () => {
      const bins = ensurePulumiBinaries({});
      const cs = ['sandbox-cp', 'sandbox-app-1', 'sandbox-app-2'].map((name) => startCluster({ name }).then((c) => (clusters.push(c), c)));
      return [await bins, ...(await Promise.all(cs))] as const;
    }, (v) => v.slice(1).map((c) => `${(c as RealCluster).name}: ${(c as RealCluster).server}  kubeconfig ${(c as RealCluster).kubeconfigPath}`).join('\n'));
    const apps = [app1, app2] as const;

    // 2. the OIDC provider (listening; clients registered once the backend URL is known, right below)
    const backendPort = await freePort();
    const backendUrl = `http://127.0.0.1:${backendPort}`;
    const clientSecret = randomBytes(18).toString('base64url');
    const machine = apps.map((a) => ({ id: `sandbox-${a.name.replace(/^sandbox-/, '')}`, secret: randomBytes(18).toString('base64url') }));
    const op = await step('OIDC provider (oidc-provider, in this process)', async () => {
      const op = await OidcTestProvider.listen([{ username: 'dev', password: randomBytes(9).toString('base64url'), sub: 'sandbox-dev', email: 'dev@sandbox.test' }]);
      stops.push(() => op.stop());
      op.start(
        [
          { client_id: BACKEND_CLIENT_ID, client_secret: clientSecret, redirect_uris: [`${backendUrl}/callback`] },
          ...machine.map((m) => ({ client_id: m.id, client_secret: m.secret, grant_types: ['client_credentials'], response_types: [], redirect_uris: [] })),
        ],
        { [BACKEND_RESOURCE]: { audience: BACKEND_RESOURCE, scope: 'bind' } },
      );
      return op;
    }, (op) => `issuer ${op.issuer}`);
    writeState(backendUrl, op.issuer);

    // 3. pulumi up of the stack program, runtime manifests mode
    const stack = await step('pulumi up (stacks/main.ts, manifests: runtime)', async () => {
      const projectDir = path.join(dir, 'pulumi', 'project');
      fs.mkdirSync(projectDir, { recursive: true });
      const rootProject = fs.readFileSync(path.join(REPO_ROOT, 'Pulumi.yaml'), 'utf8');
      fs.writeFileSync(
        path.join(projectDir, 'Pulumi.yaml'),
        rootProject
          .replace(/^main: .*$/m, `main: ${path.relative(projectDir, path.join(REPO_ROOT, 'stacks', 'main.ts'))}`)
          .replace(/^(\s*nodeargs:) .*$/m, `$1 --import ${TSX_LOADER} --no-warnings`),
      );
      const home = path.join(dir, 'pulumi', 'home');
      const state = path.join(dir, 'pulumi', 'state');
      fs.mkdirSync(home, { recursive: true });
      fs.mkdirSync(state, { recursive: true });
      const env = pulumiEnv(bins, { home, backendDir: state, passphrase: 'klutch-kit sandbox' });
      const ws = await LocalWorkspace.create({ workDir: projectDir, pulumiHome: env['PULUMI_HOME']!, envVars: env, secretsProvider: 'passphrase', pulumiCommand: await PulumiCommand.get({ root: bins.pulumiRoot }) });
      const stack = await Stack.create('sandbox', ws);
      const secrets = generateStackSecrets();
      const kc = (c: RealCluster) => fs.readFileSync(c.kubeconfigPath, 'utf8');
      await stack.setAllConfig({
        'klutch-kit:controlPlane': { value: JSON.stringify({ name: 'control-plane', access: { kind: 'kubeconfig' } }) },
        'klutch-kit:appClusters': { value: JSON.stringify([{ name: 'app-1', access: { kind: 'kubeconfig' } }, { name: 'app-2', access: { kind: 'kubeconfig' } }]) },
        'klutch-kit:backend': { value: JSON.stringify({ url: backendUrl, prettyName: 'Klutch sandbox' }) },
        'klutch-kit:oidc': { value: JSON.stringify({ issuerUrl: op.issuer, clientId: BACKEND_CLIENT_ID }) },
        'klutch-kit:skipAwait': { value: 'true' },
        'klutch-kit:manifests': { value: 'runtime' },
        'klutch-kit:kubeconfig-control-plane': { value: kc(cp), secret: true },
        'klutch-kit:kubeconfig-app-1': { value: kc(app1), secret: true },
        'klutch-kit:kubeconfig-app-2': { value: kc(app2), secret: true },
        'klutch-kit:oidcClientSecret': { value: clientSecret, secret: true },
        'klutch-kit:cookieSigningKey': { value: secrets['cookieSigningKey']!, secret: true },
        'klutch-kit:cookieEncryptionKey': { value: secrets['cookieEncryptionKey']!, secret: true },
      });
      const out = fs.openSync(path.join(dir, 'logs', 'pulumi-up.log'), 'a');
      try {
        const res = await stack.up({ color: 'never', onOutput: (s) => fs.writeSync(out, s) });
        if (res.summary.result !== 'succeeded') throw new Error(`pulumi up: ${res.summary.result}`);
        (stack as Stack & { upSummary?: unknown }).upSummary = res.summary.resourceChanges;
      } finally {
        fs.closeSync(out);
      }
      return stack;
    }, (s) => `resources: ${JSON.stringify((s as Stack & { upSummary?: unknown }).upSummary)}  (log ${path.join(dir, 'logs', 'pulumi-up.log')})`);

    // 4. data services on the control plane + the stand-in for Crossplane
    const ds = dataServiceObjects();
    await step('data services on the control plane (derived claim CRDs, export templates) + sandbox stand-in for Crossplane', async () => {
      await applyManifests(cp.kubeConfig, [...ds.crds, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'crossplane-system' } }] as KubernetesObject[]);
      await waitForCrdsEstablished(cp.kubeConfig, ds.crds.map((c) => c.metadata.name!));
      await applyManifests(cp.kubeConfig, ds.templates as KubernetesObject[]);
      const standIn = new ClaimStandIn({ client: new KubeClient(cp.kubeConfig) });
      await standIn.start();
      stops.push(() => standIn.stop());
    }, () => `${ds.crds.map((c) => c.metadata.name).join(', ')}; templates ${ds.templates.map((t) => `${t.metadata.namespace}/${t.metadata.name}`).join(', ')}`);

    // 5. backend + konnectors as local processes
    await step('backend + 2 konnectors as local processes (tsx)', async () => {
      const backend = spawnLocal('klutch-backend', path.join(REPO_ROOT, 'runtime', 'backend', 'main.ts'), [
        '--kubeconfig', cp.kubeconfigPath,
        `--listen-address=127.0.0.1:${backendPort}`,
        `--oidc-issuer-url=${op.issuer}`,
        `--oidc-issuer-client-id=${BACKEND_CLIENT_ID}`,
        `--oidc-issuer-client-secret=${clientSecret}`,
        '--oidc-bearer-audience', BACKEND_CLIENT_ID, BACKEND_RESOURCE,
        `--cookie-signing-key=${randomBytes(32).toString('base64')}`,
        '--no-leader-elect',
        '--pretty-name=Klutch sandbox',
      ]);
      for (const a of apps) {
        spawnLocal(`konnector-${a.name}`, path.join(REPO_ROOT, 'runtime', 'konnector', 'main.ts'), [
          '--kubeconfig', a.kubeconfigPath, '--no-leader-elect', `--health-address=127.0.0.1:${await freePort()}`, '--heartbeat-interval=10s',
        ]);
      }
      writeState(backendUrl, op.issuer);
      await eventually('backend /readyz', async () => {
        if (backend.exitCode !== null) throw new Error(`klutch-backend exited with ${backend.exitCode}; see ${processes[0]!.log}`);
        return (await fetch(`${backendUrl}/readyz`)).ok;
      }, 90_000);
    }, () => processes.map((p) => `${p.name}: pid ${p.child.pid}  log ${p.log}`).join('\n'));

    // 6. kubectl-bind, non-interactive (--token from a client-credentials grant)
    await step('kubectl-bind: both app clusters bound (postgresqlinstances, servicebindings)', async () => {
      await Promise.all(apps.map(async (a, i) => {
        const { access_token } = await op.clientCredentials(machine[i]!.id, machine[i]!.secret, { resource: BACKEND_RESOURCE, scope: 'bind' });
        for (const api of BIND_APIS) {
          const r = await run([path.join(REPO_ROOT, 'bin', 'kubectl-bind.js'), `${backendUrl}/export`, '--kubeconfig', a.kubeconfigPath, '--resource', api, '--token', access_token, '--yes', '--skip-konnector', '--timeout', '90s']);
          if (r.code !== 0) throw new Error(`kubectl-bind ${api} on ${a.name}: exit ${r.code}\n${r.stderr}\n${r.stdout}`);
          bindOutput[`${a.name} ${api}`] = r.stdout.trim();
        }
      }));
      const appKube = apps.map((a) => new KubeClient(a.kubeConfig));
      try {
        for (const [i, a] of apps.entries()) {
          for (const api of BIND_APIS) await eventually(`CRD ${api} on ${a.name}`, () => appKube[i]!.getOrNull(CoreResources.crds, undefined, api), 60_000);
        }
      } finally {
        appKube.forEach((k) => k.close());
      }
    }, () => Object.entries(bindOutput).map(([k, v]) => `${k}: ${v.split('\n').slice(-1)[0]}`).join('\n'));

    return {
      controlPlane: cp,
      apps,
      backendUrl,
      op,
      stack,
      processes,
      timings,
      bindOutput,
      dir,
      stop: stopAll,
    };
  } catch (e) {
    say(`sandbox: failed: ${(e as Error).message}`);
    for (const p of processes) say(`  ${p.name} log: ${p.log}`);
    await stopAll();
    throw e;
  }
}

type Claim = KubeObject & { status?: { conditions?: Condition[] } };
type Secret = KubeObject & { type?: string; data?: Record<string, string> };

export interface DemoResult {
  /** The provider namespace on the control plane the claims were synced to. */
  upstreamNamespace: string;
  instanceUp: Claim;
  bindingUp: Claim;
  instanceDown: Claim;
  bindingDown: Claim;
  secretDown: Secret;
  seconds: number;
}

/** Provisions a PostgresqlInstance and a ServiceBinding in app-1 and follows them up and back down. */
export async function provisionDemo(sb: Sandbox, say: (l: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<DemoResult> {
  const t = Date.now();
  const app = new KubeClient(sb.apps[0].kubeConfig);
  const cp = new KubeClient(sb.controlPlane.kubeConfig);
  const { namespace: ns, instance, binding } = DEMO;
  try {
    if (!(await app.getOrNull(CoreResources.namespaces, undefined, ns))) await app.create(CoreResources.namespaces, { metadata: { name: ns } });
    await app.create(SANDBOX_CLAIMS.postgresqlInstances, { metadata: { name: instance, namespace: ns }, spec: { service: 'a9s-postgresql14', plan: 'postgresql-single-nano', expose: 'Internal', compositionRef: { name: 'a8s-postgresql' } } });
    await app.create(SANDBOX_CLAIMS.serviceBindings, { metadata: { name: binding, namespace: ns }, spec: { instanceRef: instance, serviceInstanceType: 'postgresql', compositionRef: { name: 'a8s-servicebinding' } } });
    say(`[7/${SANDBOX_STEPS}] PostgresqlInstance + ServiceBinding in ${sb.apps[0].name}: up to the control plane, status and credentials back down`);
    say(`      created in ${sb.apps[0].name}: PostgresqlInstance ${ns}/${instance}, ServiceBinding ${ns}/${binding}`);
    const found = await eventually('the claims on the control plane', async () => {
      const all = (await cp.list<Claim>(SANDBOX_CLAIMS.postgresqlInstances)).items.filter((o) => o.metadata.name === instance);
      const b = (await cp.list<Claim>(SANDBOX_CLAIMS.serviceBindings)).items.filter((o) => o.metadata.name === binding);
      return all[0] && b[0] ? { instanceUp: all[0], bindingUp: b[0] } : undefined;
    });
    const upstreamNamespace = found.instanceUp.metadata.namespace!;
    say(`      reached the control plane in namespace ${upstreamNamespace}`);
    const ready = (c: Claim) => getCondition(c.status?.conditions, 'Ready')?.status === 'True';
    const instanceDown = await eventually('PostgresqlInstance Ready in app-1', async () => {
      const c = await app.get<Claim>(SANDBOX_CLAIMS.postgresqlInstances, ns, instance);
      return ready(c) ? c : undefined;
    });
    const bindingDown = await eventually('ServiceBinding Ready in app-1', async () => {
      const c = await app.get<Claim>(SANDBOX_CLAIMS.serviceBindings, ns, binding);
      return ready(c) ? c : undefined;
    });
    const secretName = credentialsSecretName(bindingDown);
    const secretDown = await eventually(`Secret ${secretName} in app-1`, () => app.getOrNull<Secret>(CoreResources.secrets, ns, secretName));
    const seconds = (Date.now() - t) / 1000;
    say(`      status came back down: PostgresqlInstance Ready=True, ServiceBinding Ready=True; Secret ${ns}/${secretName} (${Object.keys(secretDown.data ?? {}).sort().join(', ')}) in ${seconds.toFixed(1)} s`);
    return { upstreamNamespace, instanceUp: found.instanceUp, bindingUp: found.bindingUp, instanceDown, bindingDown, secretDown, seconds };
  } finally {
    app.close();
    cp.close();
  }
}
