// `klutch-kit cluster start` (through bin/klutch-kit.js) runs a real cluster until SIGINT, then
// stops every component and removes its folder and the kubeconfig copy.
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { pidAlive } from '../../../runtime/realinfra/registry.js';
import { eventually } from '../../realinfra/util.js';

jest.setTimeout(120_000);

const repo = fileURLToPath(new URL('../../../', import.meta.url));
let child: ChildProcess | undefined;
let tmp: string | undefined;

afterEach(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('klutch-kit cluster start', () => {
  it('prints a working kubeconfig, stays up, and cleans up on Ctrl-C', async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-test-cli-'));
    const copy = path.join(tmp, 'kube', 'config');
    child = spawn(process.execPath, [path.join(repo, 'bin/klutch-kit.js'), 'cluster', 'start', '--name', 'cli', '--json', '--quiet', '--kubeconfig', copy], {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((r) => child!.on('exit', (code) => r(code)));
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    const report = await new Promise<{ name: string; server: string; kubeconfig: string; dir: string; pids: Record<string, number> }>((resolve, reject) => {
      let out = '';
      child!.stdout!.on('data', (b: Buffer) => {
        out += b.toString();
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve(JSON.parse(line));
      });
      child!.on('exit', (code) => reject(new Error(`klutch-kit exited with ${code} before the cluster was ready:\n${stderr}`)));
    });
    expect(report.name).toBe('cli');
    expect(report.kubeconfig).toBe(copy);
    const kc = new KubeConfig();
    kc.loadFromFile(report.kubeconfig);
    expect(kc.getCurrentCluster()?.server).toBe(report.server);
    const names = (await kc.makeApiClient(CoreV1Api).listNamespace()).items.map((n) => n.metadata?.name);
    expect(names).toContain('kube-system');

    child.kill('SIGINT');
    expect(await exited).toBe(0);
    const pids = Object.values(report.pids);
    expect(pids).toHaveLength(3);
    await eventually('the components to be gone', async () => pids.every((p) => !pidAlive(p)), { timeoutMs: 10_000 });
    expect(fs.existsSync(report.dir)).toBe(false);
    expect(fs.existsSync(copy)).toBe(false);
  });

  it('rejects an invalid cluster name with a clear message and exit code 2 (usage)', async () => {
    child = spawn(process.execPath, [path.join(repo, 'bin/klutch-kit.js'), 'cluster', 'start', '--name', 'No_Such', '--quiet'], {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    const code = await new Promise<number | null>((r) => child!.on('exit', (c) => r(c)));
    expect(code).toBe(2);
    expect(stderr).toContain('klutch-kit: --name: must be a DNS label');
    expect(stderr).toContain('"No_Such"');
  });
});
