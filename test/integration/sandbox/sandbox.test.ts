/**
 * The end-to-end test of klutch-kit: the `npm run sandbox` flow (runtime/sandbox/sandbox.ts), run
 * programmatically on this machine with real API servers and real processes, every step asserted:
 *
 * 1. a control plane and two app clusters (real kube-apiserver + etcd + kube-controller-manager);
 * 2. the OIDC provider (a real oidc-provider instance) answers discovery;
 * 3. `pulumi up` of the stack program (runtime manifests mode) put the topology into the right clusters, and a
 *    preview afterwards expects no changes;
 * 4. the data services are offered on the control plane (claim CRDs, export templates);
 * 5. the backend and the konnectors run as local processes;
 * 6. `kubectl-bind` bound both app clusters: bindings Ready, one ClusterBinding per app cluster with heartbeats;
 * 7. a PostgresqlInstance and a ServiceBinding in app-1 reach the control plane, their status and the
 *    credentials Secret come back down — answered by the sandbox stand-in (not Crossplane: no container runtime);
 * then stop() ends every process, and the CLI (`scripts/sandbox.ts`) comes up and goes down with `--down`.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CoreResources, KubeClient, type KubeObject } from '../../../runtime/core/client.js';
import { getCondition, type Condition } from '../../../runtime/core/conditions.js';
import { BindResources, type APIServiceBinding, type ClusterBinding } from '../../../runtime/konnector/types.js';
import { CONNECTION_SECRET_TYPE, SANDBOX_CLAIMS, STAND_IN_REASON } from '../../../runtime/sandbox/claim-stand-in.js';
import { BIND_APIS, DEMO, eventually, provisionDemo, REPO_ROOT, startSandbox, type DemoResult, type Sandbox } from '../../../runtime/sandbox/sandbox.js';
import type { SandboxState } from '../../../runtime/sandbox/state.js';

jest.setTimeout(240_000);

const started = Date.now();
const lines: string[] = [];
const log = (line: string) => {
  lines.push(line);
  process.stderr.write(`[sandbox +${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);
};

let sb: Sandbox | undefined;
let timings: Record<string, number> = {};
let tmp: string;
let cp: KubeClient;
let apps: KubeClient[];

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-sandbox-it-'));
  sb = await startSandbox({ log, dir: path.join(tmp, 'run') });
  timings = sb.timings;
  cp = new KubeClient(sb.controlPlane.kubeConfig);
  apps = sb.apps.map((a) => new KubeClient(a.kubeConfig));
}, 300_000);

afterAll(async () => {
  cp?.close();
  apps?.forEach((a) => a.close());
  await sb?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
  log(`step timings (s): ${JSON.stringify(timings)}`);
});

describe('npm run sandbox, end to end', () => {
  it('printed every step as it completed, in order', () => {
    const steps = lines.filter((l) => /^\[\d\/7\]/.test(l)).map((l) => l.slice(0, 5));
    expect(steps).toEqual(['[1/7]', '[2/7]', '[3/7]', '[4/7]', '[5/7]', '[6/7]']);
  });

  it('1: a control plane and two app clusters, each a real API server of its own', async () => {
    const servers = [sb!.controlPlane, ...sb!.apps].map((c) => c.server);
    expect(new Set(servers).size).toBe(3);
    for (const c of [cp, ...apps]) {
      const ns = await c.list(CoreResources.namespaces);
      expect(ns.items.map((n) => n.metadata.name)).toContain('kube-system');
    }
  });

  it('2: the OIDC provider answers discovery with its issuer', async () => {
    const res = await fetch(`${sb!.op.issuer}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { issuer: string; token_endpoint: string };
    expect(doc.issuer).toBe(sb!.op.issuer);
  });

  it('3: pulumi up put the topology into the right clusters; nothing left to change', async () => {
    const outputs = await sb!.stack.outputs();
    expect(outputs['backendUrl']?.value).toBe(sb!.backendUrl);
    expect(outputs['kubeconfigs']?.secret).toBe(true);
    for (const c of [cp, ...apps]) expect(await c.getOrNull(CoreResources.crds, undefined, 'apiservicebindings.klutch.anynines.com')).toBeDefined();
    const deployments = { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true } as const;
    const backend = await cp.get(deployments, 'klutch-system', 'klutch-backend');
    expect(backend.metadata.annotations?.['pulumi.com/skipAwait']).toBe('true');
    expect(await apps[0]!.getOrNull(deployments, 'klutch-system', 'klutch-backend')).toBeUndefined();
    const preview = await sb!.stack.preview({ expectNoChanges: true, color: 'never' });
    expect(Object.keys(preview.changeSummary).filter((k) => k !== 'same')).toEqual([]);
  });

  it('4: the data services are offered on the control plane', async () => {
    for (const api of BIND_APIS) {
      const crd = (await cp.get(CoreResources.crds, undefined, api)) as KubeObject & { status?: { conditions?: Condition[] } };
      expect(getCondition(crd.status?.conditions, 'Established')?.status).toBe('True');
    }
    const templates = await cp.list({ group: 'example-backend.klutch.anynines.com', version: 'v1alpha1', plural: 'apiserviceexporttemplates', kind: 'APIServiceExportTemplate', namespaced: true }, 'crossplane-system');
    expect(templates.items.map((t) => t.metadata.name).sort()).toEqual(['postgresqlinstances', 'servicebindings']);
  });

  it('5: the backend and one konnector per app cluster run as local processes', async () => {
    expect(sb!.processes.map((p) => p.name).sort()).toEqual(['klutch-backend', 'konnector-sandbox-app-1', 'konnector-sandbox-app-2']);
    for (const p of sb!.processes) expect({ name: p.name, running: p.child.exitCode === null && alive(p.child.pid!) }).toEqual({ name: p.name, running: true });
    expect((await fetch(`${sb!.backendUrl}/readyz`)).status).toBe(200);
  });

  it('6: kubectl-bind bound both app clusters: bindings Ready, one ClusterBinding per app cluster with heartbeats', async () => {
    for (const [i, a] of apps.entries()) {
      for (const api of BIND_APIS) {
        expect(sb!.bindOutput[`${sb!.apps[i]!.name} ${api}`]).toMatch(new RegExp(`^${api.replace(/\./g, '\\.')}\\tkubeconfig-\\w+\\t`, 'm'));
        const b = await eventually(`binding ${api} Ready on ${sb!.apps[i]!.name}`, async () => {
          const x = await a.getOrNull<APIServiceBinding>(BindResources.apiServiceBindings, 'klutch-bind', api);
          return getCondition(x?.status?.conditions as Condition[] | undefined, 'Ready')?.status === 'True' ? x : undefined;
        });
        expect(b.status?.providerPrettyName).toBe('Klutch sandbox');
      }
    }
    expect(sb!.bindOutput[`${sb!.apps[0]!.name} servicebindings.anynines.com`]).toContain('secrets:Accepted');
    const cbs = await eventually('2 ClusterBindings with heartbeats', async () => {
      const l = (await cp.list<ClusterBinding>(BindResources.clusterBindings)).items;
      return l.length === 2 && l.every((c) => c.status?.lastHeartbeatTime) ? l : undefined;
    });
    expect(new Set(cbs.map((c) => c.metadata.namespace)).size).toBe(2);
  });

  let demo: DemoResult;
  it('7: a PostgresqlInstance and a ServiceBinding in app-1 reach the control plane; status and credentials come back down', async () => {
    demo = await provisionDemo(sb!, log);
    // up: in the provider namespace of app-1's shop namespace, spec as written downstream
    expect(demo.upstreamNamespace).toMatch(/^cluster-\w+-shop$/);
    expect(demo.instanceUp.spec).toMatchObject({ service: 'a9s-postgresql14', plan: 'postgresql-single-nano' });
    expect(demo.bindingUp.spec).toMatchObject({ instanceRef: DEMO.instance, serviceInstanceType: 'postgresql' });
    // down: Ready/Synced from the stand-in, visibly so
    for (const c of [demo.instanceDown, demo.bindingDown]) {
      expect(getCondition(c.status?.conditions, 'Ready')).toMatchObject({ status: 'True', reason: STAND_IN_REASON });
      expect(getCondition(c.status?.conditions, 'Synced')?.status).toBe('True');
    }
    // the credentials Secret: written on the control plane, brought down by the konnector, same data
    const up = (await cp.get(CoreResources.secrets, demo.upstreamNamespace, `${DEMO.binding}-creds`)) as KubeObject & { type: string; data: Record<string, string> };
    expect(up.type).toBe(CONNECTION_SECRET_TYPE);
    expect(demo.secretDown.metadata.name).toBe(`${DEMO.binding}-creds`);
    expect(Object.keys(demo.secretDown.data!).sort()).toEqual(['database', 'instance_service', 'password', 'port', 'username']);
    expect(demo.secretDown.data).toEqual(up.data);
    expect(Buffer.from(demo.secretDown.data!['port']!, 'base64').toString()).toBe('5432');
    // app-2 bound the same APIs but has no claims: nothing of app-1's came to it
    expect((await apps[1]!.list(SANDBOX_CLAIMS.postgresqlInstances)).items).toEqual([]);
  });

  it('stop() ends every process it started and removes the clusters', async () => {
    const pids = [...sb!.processes.map((p) => p.child.pid!), ...[sb!.controlPlane, ...sb!.apps].flatMap((c) => Object.values(c.pids()).filter((p): p is number => p !== undefined))];
    const dirs = [sb!.controlPlane, ...sb!.apps].map((c) => c.dir);
    expect(pids.length).toBe(3 + 9);
    cp.close();
    apps.forEach((a) => a.close());
    await sb!.stop();
    sb = undefined;
    expect(pids.filter(alive)).toEqual([]);
    expect(dirs.filter((d) => fs.existsSync(d))).toEqual([]);
  });
});

describe('the CLI: npm run sandbox -- --no-demo, then npm run sandbox -- --down', () => {
  it('comes up, records its processes in the state file, and --down stops every one of them', async () => {
    const dir = path.join(tmp, 'cli');
    const env = { ...process.env, KLUTCH_SANDBOX_DIR: dir, KUBECONFIG: '' };
    const tsx = path.join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
    const script = path.join(REPO_ROOT, 'scripts', 'sandbox.ts');
    const up = spawn(process.execPath, [tsx, script, '--no-demo'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    up.stdout.on('data', (d: Buffer) => (out += d.toString()));
    up.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => up.on('exit', (code) => r(code)));
    try {
      await eventually('the CLI sandbox up', async () => {
        if (up.exitCode !== null) throw new Error(`exited ${up.exitCode}: ${out}`);
        return out.includes('Klutch sandbox is up.');
      }, 180_000);
      for (let i = 1; i <= 6; i++) expect(out).toContain(`[${i}/7]`);
      const state = JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8')) as SandboxState;
      const pids = [state.supervisorPid, ...state.processes.map((p) => p.pid), ...state.clusters.flatMap((c) => c.pids)];
      expect(state.clusters).toHaveLength(3);
      expect(state.processes).toHaveLength(3);
      expect(pids.filter(alive)).toEqual(pids);

      const down = await new Promise<{ code: number | null; out: string }>((resolve) => {
        const d = spawn(process.execPath, [tsx, script, '--down'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
        let o = '';
        d.stdout.on('data', (x: Buffer) => (o += x.toString()));
        d.stderr.on('data', (x: Buffer) => (o += x.toString()));
        d.on('exit', (code) => resolve({ code, out: o }));
      });
      expect(down.code).toBe(0);
      expect(down.out).toContain('sandbox stopped');
      expect(await exited).toBe(0);
      expect(pids.filter(alive)).toEqual([]);
      expect(fs.existsSync(path.join(dir, 'state.json'))).toBe(false);
      expect(state.clusters.map((c) => c.dir).filter((d) => fs.existsSync(d))).toEqual([]);
    } finally {
      if (up.exitCode === null) up.kill('SIGTERM');
    }
  });
});
