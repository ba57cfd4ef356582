// @realinfra pulumi (the sandbox runs `pulumi up`)
/**
 * First contact, as README's first screen promises it: an ordinary user (no root, no sudo), in a fresh clone without
 * node_modules, runs `npm run sandbox` and gets to the psql line; the credentials it prints write and read a row.
 * The bootstrap (scripts/bootstrap.mjs) runs `npm ci` itself; the Crossplane harness runs in the user's own user
 * namespaces (runtime/realinfra/userns.ts). `npm run sandbox -- --down`, as that user, leaves no process of the user.
 *
 * Run as root (CI), the suite makes the user `klutch-kit-newcomer` (and removes it again when it made it) and runs the
 * commands as that user with `runuser`; run as an ordinary user, it runs them as itself. What is shared, read-only:
 * the Go-built binaries, as hard links (a copy across file systems) of this machine's cache entries in a root-owned
 * folder the user can read but not write (`KLUTCH_KIT_CACHE`), so that the run is the warm one a user has after the
 * first builds; and npm's cache, copied (npm writes to it), so that `npm ci` does not download again. The Go module
 * sources the harness reads (Crossplane's CRDs, the packages' `package/` folders) are the user's own download.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensureBinaries, ensureCrossplaneBinaries, isCached, planComponent, type ComponentName } from '../../../runtime/realinfra/build.js';
import { ensurePulumiBinaries, isPulumiCached, planPulumiComponent, type PulumiComponentName } from '../../../runtime/realinfra/pulumi-build.js';
import { SANDBOX_GO_COMPONENTS } from '../../../sandbox/prerequisites.js';
import { REPO_ROOT, eventually } from '../../../sandbox/sandbox.js';
import type { SandboxState } from '../../../sandbox/state.js';
import { psqlLines, writeAndRead } from './_cli.js';

jest.setTimeout(1_200_000);

const USER = 'klutch-kit-newcomer';
const started = Date.now();
const log = (line: string) => process.stderr.write(`[first contact +${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);
const asRoot = process.getuid?.() === 0;

let base: string;
let madeUser = false;
let uid: number;
let env: Record<string, string>;
let clone: string;
let up: { child: ChildProcess; output: () => string; exited: Promise<number | null> } | undefined;

/** `cmd args` as the user (runuser when root), with exactly `env`, in the clone. */
function asUser(cmd: string, args: string[]): ChildProcess {
  const argv = asRoot ? ['runuser', '-u', USER, '--', 'env', '-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), cmd, ...args] : [cmd, ...args];
  // runuser itself is found on the test's PATH; what the user's commands see is `env` alone
  return spawn(argv[0]!, argv.slice(1), {
    cwd: clone,
    env: asRoot ? { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin' } : env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
}

function run(cmd: string, args: string[]) {
  const child = asUser(cmd, args);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => {
    child.on('exit', (code) => r(code));
    child.on('error', (e) => {
      out += `\n(${cmd} did not start: ${e.message})`;
      r(null);
    });
  });
  return { child, output: () => out, exited };
}

/** PIDs of the user's processes (when root: of USER; else none is checked, the test's own processes are the user's). */
function userProcesses(): number[] {
  const r = spawnSync('pgrep', ['-u', String(uid)], { encoding: 'utf8' });
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map(Number)
    .filter((p) => p !== process.pid);
}

/** Hard links of `from` (a cache entry) in `to`, or a copy when they are on different file systems. */
function linkTree(from: string, to: string): void {
  try {
    execFileSync('cp', ['-al', from, to]);
  } catch {
    execFileSync('cp', ['-a', from, to]);
  }
}

beforeAll(async () => {
  // what the sandbox runs, built (or found) in this machine's cache: the run below is a warm one
  await ensureBinaries({ log });
  await ensureCrossplaneBinaries('2.3', { log });
  await ensurePulumiBinaries({ log });
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-first-contact-'));
  fs.chmodSync(base, 0o755);
  if (asRoot) {
    if (spawnSync('id', ['-u', USER]).status !== 0) {
      execFileSync('useradd', ['--no-create-home', '--shell', '/bin/sh', USER]);
      madeUser = true;
    }
    uid = Number(execFileSync('id', ['-u', USER], { encoding: 'utf8' }).trim());
  } else uid = process.getuid!();
  const owned = (d: string) => {
    fs.mkdirSync(d, { recursive: true });
    if (asRoot) execFileSync('chown', ['-R', `${uid}:${uid}`, d]);
    return d;
  };

  // the shared binaries: root's entries, read-only for the user
  const shared = path.join(base, 'shared-cache');
  fs.mkdirSync(path.join(shared, 'realinfra'), { recursive: true });
  for (const c of SANDBOX_GO_COMPONENTS) {
    const pulumi = c === 'pulumi-cli' || c === 'pulumi-resource-kubernetes';
    const plan = pulumi ? planPulumiComponent(c as PulumiComponentName) : planComponent(c as ComponentName);
    const cached = pulumi ? isPulumiCached(plan as ReturnType<typeof planPulumiComponent>) : isCached(plan as ReturnType<typeof planComponent>);
    if (!cached) throw new Error(`${c} is not in the cache after the builds above (${plan.dir})`);
    linkTree(plan.dir, path.join(shared, 'realinfra', path.basename(plan.dir))); // <cache>/realinfra/<name>-<key>, as build.ts lays it out
  }
  execFileSync('chmod', ['-R', 'a+rX', shared]);

  // npm's cache, the user's copy
  const npmCache = owned(path.join(base, 'npm-cache'));
  const rootCache = execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).trim();
  if (fs.existsSync(path.join(rootCache, '_cacache'))) {
    execFileSync('cp', ['-a', path.join(rootCache, '_cacache'), npmCache]);
    if (asRoot) execFileSync('chown', ['-R', `${uid}:${uid}`, npmCache]);
  }

  // the fresh clone: HEAD, no node_modules, the user's
  clone = path.join(base, 'clone');
  execFileSync('git', ['clone', '--quiet', '--depth', '1', `file://${REPO_ROOT}`, clone]);
  owned(clone);
  // the host-wide reservations of loopback addresses (sandbox/a8s-operator/loopback.ts), shared with root's sandboxes
  // and tests running beside this one; made every user's when an older run made it root's only
  const loopbackDir = process.env.KLUTCH_KIT_LOOPBACK_DIR ?? path.join(os.tmpdir(), 'klutch-kit-loopback');
  fs.mkdirSync(loopbackDir, { recursive: true });
  if (asRoot) fs.chmodSync(loopbackDir, 0o1777);
  const home = owned(path.join(base, 'home'));
  env = {
    HOME: home,
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    TMPDIR: owned(path.join(base, 'tmp')),
    KLUTCH_KIT_CACHE: shared,
    KLUTCH_KIT_LOOPBACK_DIR: loopbackDir,
    npm_config_cache: npmCache,
    npm_config_prefer_offline: 'true',
    ...(process.env.KLUTCH_KIT_USE_PATH_TOOLS !== undefined ? { KLUTCH_KIT_USE_PATH_TOOLS: process.env.KLUTCH_KIT_USE_PATH_TOOLS } : {}),
    ...(process.env.KLUTCH_KIT_GO !== undefined ? { KLUTCH_KIT_GO: process.env.KLUTCH_KIT_GO } : {}),
    ...(process.env.GOPROXY !== undefined ? { GOPROXY: process.env.GOPROXY } : {}),
  };
  log(`${asRoot ? `user ${USER} (uid ${uid})` : `this user (uid ${uid})`}, clone ${clone}, shared binaries ${shared}`);
}, 3_600_000);

afterAll(async () => {
  if (up && up.child.exitCode === null) {
    process.kill(-up.child.pid!, 'SIGTERM');
    await Promise.race([up.exited, new Promise((r) => setTimeout(r, 60_000))]);
  }
  if (asRoot && uid !== undefined) {
    for (const p of userProcesses()) process.kill(p, 'SIGKILL');
    if (madeUser) spawnSync('userdel', [USER]);
  }
  if (base) {
    spawnSync('chmod', ['-R', 'u+w', base]); // Go's module cache (in the user's home) is read-only
    fs.rmSync(base, { recursive: true, force: true });
  }
}, 180_000);

describe('an ordinary user, a fresh clone: npm run sandbox', () => {
  it('installs node_modules itself, reaches the psql line without root, and its credentials write and read a row; --down leaves nothing', async () => {
    expect(fs.existsSync(path.join(clone, 'node_modules'))).toBe(false);
    const t0 = Date.now();
    up = run('npm', ['run', 'sandbox']);
    const cli = up;
    let ended: { code: number | null } | undefined;
    void cli.exited.then((code) => (ended = { code }));
    await eventually('npm run sandbox up, as the user', async () => ended !== undefined || cli.output().includes('Klutch sandbox is up.'), 1_080_000);
    if (ended) throw new Error(`npm run sandbox ended (exit ${ended.code}) before it was up:\n${cli.output()}`);
    const out = cli.output();
    log(`fresh clone → psql line in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    // the bootstrap installed node_modules (nothing did before), and nothing asked for root
    expect(out).toContain('[bootstrap] node_modules is missing (no node_modules/.package-lock.json): npm ci');
    expect(out).not.toMatch(/needs root|prerequisite\(s\) missing/);
    const { a8s } = psqlLines(out);
    expect(await writeAndRead(a8s, 'visits', 'newcomer')).toEqual([{ item: 'newcomer', u: a8s.user }]);

    // everything runs as the user; Crossplane in a network namespace of its own
    const stateFile = path.join(env.HOME!, '.cache', 'klutch-kit', 'sandbox', 'state.json');
    const state = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as SandboxState;
    const uidOf = (pid: number) => Number(/^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
    const pids = [state.supervisorPid, ...state.clusters.flatMap((c) => c.pids), ...state.processes.map((p) => p.pid)];
    expect(pids.map(uidOf).filter((u) => u !== uid)).toEqual([]);
    const hostNet = fs.readlinkSync('/proc/self/ns/net');
    const inNamespace = state.clusters[0]!.pids.filter((p) => fs.readlinkSync(`/proc/${p}/ns/net`) !== hostNet);
    expect(inNamespace.length).toBeGreaterThanOrEqual(3); // Crossplane core, the function, provider-kubernetes (and the namespace forwarder)

    const down = run('npm', ['run', 'sandbox', '--', '--down']);
    expect(await down.exited).toBe(0);
    expect(down.output()).toContain('sandbox stopped');
    expect(await cli.exited).toBe(0);
    if (asRoot) await eventually('no process of the user left', async () => userProcesses().length === 0, 30_000);
    else expect(pids.filter((p) => fs.existsSync(`/proc/${p}`))).toEqual([]);
  });
});
