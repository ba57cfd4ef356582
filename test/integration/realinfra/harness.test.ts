// The harness itself: start failures name the component and show its log, no process outlives its
// owner (exit hook, registry + killLeftovers), builds are keyed by content and fail with go's output.
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ClusterStartError,
  RealInfraBuildError,
  ensureBinaries,
  ensureComponent,
  isCached,
  killLeftovers,
  planComponent,
  startCluster,
} from '../../../runtime/realinfra/index.js';
import { pidAlive } from '../../../runtime/realinfra/registry.js';
import { eventually } from '../../realinfra/util.js';

jest.setTimeout(120_000);

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const temps: string[] = [];
const children: ChildProcess[] = [];

function tempDir(prefix: string): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `klutch-kit-test-${prefix}-`));
  temps.push(d);
  return d;
}

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of temps.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

interface ChildReport {
  dir: string;
  pids: Record<string, number>;
}

/** Runs test/realinfra/fixtures/start-cluster-child.ts; resolves with its report once the cluster is up. */
function startChild(
  name: string,
  mode: 'exit' | 'wait',
  registry: string,
): Promise<{ child: ChildProcess; report: ChildReport; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repo, 'test/realinfra/fixtures/start-cluster-child.ts'), name, mode], {
    cwd: repo,
    env: { ...process.env, KLUTCH_KIT_REALINFRA_REGISTRY: registry },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve({ child, report: JSON.parse(line) as ChildReport, exited });
    });
    child.on('exit', (code) => {
      if (!out.includes('{')) reject(new Error(`child exited with ${code} before reporting a cluster:\n${err}`));
    });
  });
}

describe('startCluster() failures', () => {
  it('rejects a name that is not a DNS label, naming the value', async () => {
    await expect(startCluster({ name: 'Bad_Name' })).rejects.toThrow(/name must be a DNS label.*"Bad_Name"/);
  });

  it('names the component that failed, shows the tail of its log, and leaves nothing behind', async () => {
    const base = tempDir('fail');
    const registry = tempDir('registry');
    process.env['KLUTCH_KIT_REALINFRA_REGISTRY'] = registry;
    let err: unknown;
    try {
      await startCluster({ name: 'broken', baseDir: base, apiServerArgs: { 'authorization-mode': 'NoSuchMode' } });
    } catch (e) {
      err = e;
    } finally {
      delete process.env['KLUTCH_KIT_REALINFRA_REGISTRY'];
    }
    expect(err).toBeInstanceOf(ClusterStartError);
    const e = err as ClusterStartError;
    expect(e.component).toBe('kube-apiserver');
    expect(e.message).toContain('cluster "broken": kube-apiserver exited with code');
    expect(e.logTail).toContain('NoSuchMode');
    // etcd, already started, was stopped; the folder and the registry entry are gone.
    expect(fs.readdirSync(base)).toEqual([]);
    expect(fs.readdirSync(registry)).toEqual([]);
  });
});

describe('no process outlives its owner', () => {
  it('ends the cluster of a process that exits without calling stop() (exit hook)', async () => {
    const registry = tempDir('registry');
    const { report, exited } = await startChild('exits', 'exit', registry);
    expect(await exited).toBe(0);
    const pids = Object.values(report.pids);
    expect(pids).toHaveLength(3);
    // The hook SIGKILLs them synchronously; the kernel needs a moment to finish them off.
    await eventually('the components to die', async () => pids.every((p) => !pidAlive(p)), { timeoutMs: 10_000 });
    expect(fs.existsSync(report.dir)).toBe(false);
    expect(fs.readdirSync(registry)).toEqual([]);
  });

  it('ends the cluster of a process killed by SIGTERM that has no handler of its own', async () => {
    const registry = tempDir('registry');
    const { child, report, exited } = await startChild('terminated', 'wait', registry);
    child.kill('SIGTERM');
    expect(await exited).toBeNull(); // re-raised: the process still dies of the signal
    expect(child.signalCode).toBe('SIGTERM');
    const pids = Object.values(report.pids);
    await eventually('the components to die', async () => pids.every((p) => !pidAlive(p)), { timeoutMs: 10_000 });
    expect(fs.existsSync(report.dir)).toBe(false);
    expect(fs.readdirSync(registry)).toEqual([]);
  });

  it('lets killLeftovers() (the jest globalTeardown) end the cluster of a SIGKILLed process', async () => {
    const registry = tempDir('registry');
    const { child, report, exited } = await startChild('orphaned', 'wait', registry);
    // A live owner's clusters are not touched.
    expect(killLeftovers({ registryDir: registry, runId: 'another-run' })).toEqual([]);
    child.kill('SIGKILL');
    await exited;
    const pids = Object.values(report.pids);
    expect(pids).toHaveLength(3);
    // The components survive their owner …
    for (const pid of pids) expect(pidAlive(pid)).toBe(true);
    // … until the teardown finds them in the registry.
    const killed = killLeftovers({ registryDir: registry, runId: 'another-run' });
    expect(killed.map((k) => k.name)).toEqual(['orphaned']);
    expect(killed[0]!.killed.map((p) => p.pid).sort()).toEqual([...pids].sort());
    await eventually('the orphaned components to die', async () => pids.every((p) => !pidAlive(p)), { timeoutMs: 10_000 });
    expect(fs.existsSync(report.dir)).toBe(false);
    expect(fs.readdirSync(registry)).toEqual([]);
  });
});

describe('binary cache', () => {
  it('keys each component by the content of its wrapper module', () => {
    const tools = tempDir('tools');
    fs.cpSync(path.join(repo, 'tools/etcd'), path.join(tools, 'etcd'), { recursive: true });
    fs.cpSync(path.join(repo, 'tools/kube'), path.join(tools, 'kube'), { recursive: true });
    const cacheRoot = tempDir('cache');
    const before = planComponent('etcd', { toolsDir: tools, cacheRoot });
    expect(before.dir).toBe(path.join(cacheRoot, 'realinfra', `etcd-${before.key}`));
    expect(before.key).toMatch(/^[0-9a-f]{64}$/);
    // Same content in another place: same key (the repo's own copy).
    expect(planComponent('etcd', { cacheRoot }).key).toBe(before.key);
    // The two kube components share a module but not a key.
    expect(planComponent('kube-apiserver', { toolsDir: tools, cacheRoot }).key).not.toBe(
      planComponent('kube-controller-manager', { toolsDir: tools, cacheRoot }).key,
    );
    // Editing go.sum changes the key of that module's components only.
    const apiBefore = planComponent('kube-apiserver', { toolsDir: tools, cacheRoot }).key;
    fs.appendFileSync(path.join(tools, 'etcd', 'go.sum'), 'example.invalid/x v0.0.1 h1:AAAA=\n');
    expect(planComponent('etcd', { toolsDir: tools, cacheRoot }).key).not.toBe(before.key);
    expect(planComponent('kube-apiserver', { toolsDir: tools, cacheRoot }).key).toBe(apiBefore);
  });

  it('returns the cached binaries, stamped with the pinned versions', async () => {
    const bins = await ensureBinaries();
    expect(bins.kubeApiServer).toBe(planComponent('kube-apiserver').binary);
    expect(isCached(planComponent('etcd'))).toBe(true);
    const { execFileSync } = await import('node:child_process');
    expect(execFileSync(bins.kubeApiServer, ['--version'], { encoding: 'utf8' })).toMatch(/^Kubernetes v1\.\d+\.\d+\s*$/);
    expect(execFileSync(bins.kubeControllerManager, ['--version'], { encoding: 'utf8' })).toMatch(/^Kubernetes v1\.\d+\.\d+\s*$/);
    expect(execFileSync(bins.etcd, ['--version'], { encoding: 'utf8' })).toMatch(/etcd Version: 3\.6\.\d+/);
  });

  it("names the component and shows go's output when a build fails", async () => {
    const tools = tempDir('tools');
    fs.mkdirSync(path.join(tools, 'etcd'), { recursive: true });
    fs.copyFileSync(path.join(repo, 'tools/etcd/go.mod'), path.join(tools, 'etcd', 'go.mod'));
    fs.writeFileSync(path.join(tools, 'etcd', 'go.sum'), ''); // -mod=readonly: go refuses to build without checksums
    const cacheRoot = tempDir('cache');
    const lines: string[] = [];
    let err: unknown;
    try {
      await ensureComponent('etcd', { toolsDir: tools, cacheRoot, log: (l) => lines.push(l) });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RealInfraBuildError);
    expect((err as RealInfraBuildError).component).toBe('etcd');
    expect((err as Error).message).toMatch(/^realinfra: building etcd failed/);
    expect((err as RealInfraBuildError).outputTail).toMatch(/go\.sum/);
    expect(lines.some((l) => l.startsWith('etcd: FAILED'))).toBe(true);
    // Nothing half-built stays in the cache.
    expect(fs.readdirSync(path.join(cacheRoot, 'realinfra'))).toEqual([]);
  });
});
