/**
 * `klutch-kit image build --base local` for real: the package packed as users get it, the runtime
 * peers installed with npm, a Node.js base from npm's node-linux-* and Debian's libraries. Then:
 *  - a second build from the same tarball gives the same digests (npm install included);
 *  - the amd64 image's layers, extracted into a root filesystem, run the backend and the konnector
 *    entrypoints (`--help`) as user 65532 under chroot, with the image's own node and environment,
 *    and every runtime module in the image imports; without a file the runtime imports (a contract
 *    module, a peer library) the entrypoint fails — what the retired Dockerfiles got wrong;
 *  - with runc (Debian's, as the harness's node uses it), the image runs as a real container: read-only root
 *    filesystem, user 65532, no capabilities, its own network namespace — and the entrypoints still start;
 *  - the arm64 image holds an aarch64 node and loader; no image has a shell;
 *  - both images are pushed (OCI index + manifests + blobs) to a real registry (crane, as the
 *    Crossplane harness runs it) on 127.0.0.1, which `crane validate` checks and pullBase reads back.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  closeSync,
  renameSync,
  rmSync,
  readdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildRuntimeImages, packPackage, PACKAGE_DIR, RUNTIME_ENTRIES, type ImageBuildResult } from '../../../runtime/image/build.js';
import { RUNTIME_NODE_FLAGS } from '../../../runtime/image/node-flags.js';
import { layoutIndex, readLayoutBlob, type ImageConfig } from '../../../runtime/image/oci.js';
import { pullBase, pushLayoutImage } from '../../../runtime/image/registry.js';
import { ensureComponent } from '../../../runtime/realinfra/build.js';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..', '..', '..');
const work = mkdtempSync(join(tmpdir(), 'klutch-image-it-'));
const log = (l: string) => process.stderr.write(`  ${l}\n`);
let first: ImageBuildResult;
let second: ImageBuildResult;
const layout = join(work, 'layout');

/** The platform image of a layout image: its config and layer digests. */
function platformOf(dir: string, name: string, arch: string): { config: ImageConfig; layers: string[] } {
  const index = JSON.parse(readLayoutBlob(dir, layoutIndex(dir)[name]!.digest).toString()) as {
    manifests: Array<{ digest: string; platform: { architecture: string } }>;
  };
  const m = index.manifests.find((x) => x.platform.architecture === arch)!;
  const manifest = JSON.parse(readLayoutBlob(dir, m.digest).toString()) as { config: { digest: string }; layers: Array<{ digest: string }> };
  return { config: JSON.parse(readLayoutBlob(dir, manifest.config.digest).toString()) as ImageConfig, layers: manifest.layers.map((l) => l.digest) };
}

/** Extracts the layers of an image into a new folder (as root: owners and modes as in the image). */
function rootfs(name: string, arch: string): string {
  const dir = join(work, `rootfs-${name}-${arch}`);
  mkdirSync(dir);
  for (const l of platformOf(layout, name, arch).layers) execFileSync('tar', ['-xzf', join(layout, 'blobs', 'sha256', l.slice(7)), '-C', dir]);
  return dir;
}

/** Runs the image's entrypoint (plus args) in `fs` as the image's user, with only the image's environment. */
function runIn(fs: string, config: ImageConfig, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env = Object.fromEntries((config.config.Env ?? []).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  const r = spawnSyncChroot(fs, config.config.User!, [...config.config.Entrypoint!, ...args], env);
  return r;
}

function spawnSyncChroot(fs: string, user: string, argv: string[], env: Record<string, string>) {
  try {
    const stdout = execFileSync('/usr/sbin/chroot', [`--userspec=${user}`, fs, ...argv], {
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    });
    return { status: 0, stdout, stderr: '' };
  } catch (e) {
    const err = e as { status: number | null; stdout?: string; stderr?: string };
    return { status: err.status, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

beforeAll(async () => {
  const tarball = await packPackage(ROOT, work, log);
  // reuse: false — both build for real (a cached build of the same inputs would make the second a copy of the first)
  first = await buildRuntimeImages({ output: layout, packageTarball: tarball, base: 'local', packageRoot: ROOT, log, reuse: false });
  second = await buildRuntimeImages({ output: join(work, 'layout-2'), packageTarball: tarball, base: 'local', packageRoot: ROOT, log, reuse: false });
}, 1_200_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('klutch-kit image build --base local', () => {
  it('is reproducible: a second build from the same tarball gives the same digests', () => {
    expect([first.reused, second.reused]).toEqual([false, false]);
    expect(first.images.backend.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(second.images).toEqual(first.images);
    expect(second.appLayer).toEqual(first.appLayer);
    expect(first.images.backend.platforms.map((p) => p.platform)).toEqual(['linux/amd64', 'linux/arm64']);
    expect(first.peers.map((p) => p.replace(/@[^@]+$/, ''))).toEqual(['@kubernetes/client-node', 'jose', 'openid-client', 'pino', 'prom-client']);
    log(
      `backend ${first.images.backend.digest} konnector ${first.images.konnector.digest}; ${first.images.backend.platforms.map((p) => `${p.platform} ${p.compressedSize} B`).join(', ')}`,
    );
  });

  it.each(Object.keys(RUNTIME_ENTRIES))('the %s entrypoint starts as user 65532 in the extracted amd64 image and prints its usage', (name) => {
    const fs = rootfs(name, 'amd64');
    const { config } = platformOf(layout, name, 'amd64');
    expect(config.config).toMatchObject({
      User: '65532:65532',
      WorkingDir: '/app',
      // the component's Node.js flags (the konnector's --single-threaded-gc) before its program
      Entrypoint: ['/nodejs/bin/node', ...RUNTIME_NODE_FLAGS[name as keyof typeof RUNTIME_NODE_FLAGS], `${PACKAGE_DIR}/lib/runtime/${name}/main.js`],
    });
    const r = runIn(fs, config, ['--help']);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(new RegExp(`^Usage: klutch-${name} \\[options\\]`));
    expect(r.status).toBe(0);
    // No shell in the image; the app is root's, read-only to the user.
    for (const sh of ['bin/sh', 'bin/bash', 'usr/bin/sh', 'usr/bin/bash']) expect(existsSync(join(fs, sh))).toBe(false);
    expect(statSync(join(fs, PACKAGE_DIR.slice(1), RUNTIME_ENTRIES[name as keyof typeof RUNTIME_ENTRIES])).uid).toBe(0);
    rmSync(fs, { recursive: true, force: true });
  });

  it('every runtime module in the image imports; a missing contract file or peer library fails the entrypoint', () => {
    const fs = rootfs('backend', 'amd64');
    const { config } = platformOf(layout, 'backend', 'amd64');
    const lib = join(fs, PACKAGE_DIR.slice(1), 'lib');
    const modules: string[] = [];
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(d, e.name));
        else if (e.name.endsWith('.js') && e.name !== 'main.js') modules.push(`/${relative(fs, join(d, e.name))}`);
      }
    };
    for (const part of ['runtime/backend', 'runtime/konnector', 'runtime/core', 'runtime/kubectl-bind', 'contract']) walk(join(lib, part));
    expect(modules.length).toBeGreaterThan(50);
    const script = `for (const m of ${JSON.stringify(modules)}) await import(m); console.log('imported ' + ${modules.length})`;
    const all = runIn(fs, { ...config, config: { ...config.config, Entrypoint: [config.config.Entrypoint![0]!] } }, ['--input-type=module', '-e', script]);
    expect(all.stderr).toBe('');
    expect(all.stdout.trim()).toBe(`imported ${modules.length}`);
    // Take away a file the backend imports: the entrypoint no longer starts.
    for (const missing of [join(lib, 'contract', 'wire.js'), join(fs, 'app', 'node_modules', 'pino')]) {
      renameSync(missing, `${missing}.away`);
      const r = runIn(fs, config, ['--help']);
      renameSync(`${missing}.away`, missing);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(/ERR_MODULE_NOT_FOUND|Cannot find (module|package)/);
    }
    rmSync(fs, { recursive: true, force: true });
  });

  it('runs as a container under runc: read-only root, user 65532, no capabilities, no network; both entrypoints start', () => {
    const bundle = join(work, 'bundle');
    mkdirSync(bundle);
    const fs = rootfs('konnector', 'amd64');
    renameSync(fs, join(bundle, 'rootfs'));
    const state = join(work, 'runc-state');
    const runc = (id: string, config: ImageConfig, args: string[]) => {
      const spec = {
        ociVersion: '1.0.2',
        process: {
          terminal: false,
          user: { uid: 65532, gid: 65532 },
          args: [...config.config.Entrypoint!, ...args],
          env: config.config.Env,
          cwd: config.config.WorkingDir,
          capabilities: { bounding: [], effective: [], permitted: [], inheritable: [], ambient: [] },
          noNewPrivileges: true,
        },
        root: { path: 'rootfs', readonly: true },
        hostname: id,
        mounts: [
          { destination: '/proc', type: 'proc', source: 'proc' },
          { destination: '/dev', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'] },
          { destination: '/tmp', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'nodev', 'mode=1777'] },
        ],
        linux: { namespaces: [{ type: 'pid' }, { type: 'network' }, { type: 'ipc' }, { type: 'uts' }, { type: 'mount' }] },
      };
      writeFileSync(join(bundle, 'config.json'), JSON.stringify(spec));
      try {
        return execFileSync('runc', ['--root', state, 'run', '--bundle', bundle, id], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
          timeout: 120_000,
        });
      } finally {
        execFileSync('runc', ['--root', state, 'delete', '--force', id], { stdio: 'ignore' });
      }
    };
    for (const name of Object.keys(RUNTIME_ENTRIES)) {
      expect(runc(`klutch-${name}-help`, platformOf(layout, name, 'amd64').config, ['--help'])).toMatch(new RegExp(`^Usage: klutch-${name} \\[options\\]`));
    }
    const { config } = platformOf(layout, 'konnector', 'amd64');
    const probe = `const fs = await import('node:fs');
      let write = 'written';
      try { fs.writeFileSync('/app/x', 'x'); } catch (e) { write = e.code; }
      const capEff = fs.readFileSync('/proc/self/status', 'utf8').match(/^CapEff:\\s*(\\S+)/m)[1];
      const nets = Object.keys((await import('node:os')).networkInterfaces());
      console.log(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), write, capEff, nets, node: process.version }));`;
    const seen = JSON.parse(
      runc('klutch-probe', { ...config, config: { ...config.config, Entrypoint: [config.config.Entrypoint![0]!] } }, ['--input-type=module', '-e', probe]),
    );
    expect(seen).toEqual({
      uid: 65532,
      gid: 65532,
      write: 'EROFS',
      capEff: '0000000000000000',
      nets: expect.any(Array),
      node: expect.stringMatching(/^v22\./),
    });
    expect(seen.nets.filter((n: string) => n !== 'lo')).toEqual([]);
    rmSync(bundle, { recursive: true, force: true });
  });

  it('the arm64 image holds an aarch64 node and its loader', () => {
    const fs = rootfs('konnector', 'arm64');
    const fd = openSync(join(fs, 'nodejs', 'bin', 'node'), 'r');
    const head = Buffer.alloc(20);
    readSync(fd, head, 0, 20, 0);
    closeSync(fd);
    expect(head.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
    expect(head.readUInt16LE(18)).toBe(183); // EM_AARCH64
    expect(existsSync(join(fs, 'lib', 'ld-linux-aarch64.so.1'))).toBe(true);
    expect(existsSync(join(fs, 'lib', 'aarch64-linux-gnu', 'libc.so.6'))).toBe(true);
    expect(readFileSync(join(fs, 'etc', 'passwd'), 'utf8')).toContain('nonroot:x:65532:65532:');
    rmSync(fs, { recursive: true, force: true });
  });
});

describe('push to a registry', () => {
  let registry: ChildProcess | undefined;
  let crane = '';
  let address = '';

  beforeAll(async () => {
    crane = await ensureComponent('crane', { log });
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    address = `127.0.0.1:${port}`;
    registry = spawn(crane, ['registry', 'serve', '--address', address], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      const ok = await fetch(`http://${address}/v2/`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 900_000);

  afterAll(async () => {
    if (registry && registry.exitCode === null) {
      const exited = new Promise((r) => registry!.once('exit', r));
      registry.kill('SIGTERM');
      await exited;
    }
  });

  it('pushes both images as multi-platform indexes that crane validates and pullBase reads back', async () => {
    for (const name of ['backend', 'konnector'] as const) {
      const ref = `${address}/klutch-kit/${name}:0.1.0`;
      const r = await pushLayoutImage(layout, name, ref);
      expect(r.digest).toBe(first.images[name].digest);
      expect(execFileSync(crane, ['digest', '--insecure', ref], { encoding: 'utf8' }).trim()).toBe(r.digest);
      execFileSync(crane, ['validate', '--insecure', '--remote', `${address}/klutch-kit/${name}@${r.digest}`]);
      const pulled = await pullBase(`${address}/klutch-kit/${name}@${r.digest}`, [{ os: 'linux', architecture: 'arm64' }]);
      const arm = pulled.get('arm64')!;
      expect(arm.manifestDigest).toBe(first.images[name].platforms[1]!.digest);
      expect(arm.layers.map((l) => l.descriptor.digest)).toEqual(platformOf(layout, name, 'arm64').layers);
      expect(arm.config.config.Entrypoint).toEqual([
        '/nodejs/bin/node',
        ...RUNTIME_NODE_FLAGS[name as keyof typeof RUNTIME_NODE_FLAGS],
        `${PACKAGE_DIR}/lib/runtime/${name}/main.js`,
      ]);
    }
    // Blobs the repository has are not uploaded again.
    expect((await pushLayoutImage(layout, 'konnector', `${address}/klutch-kit/konnector:again`)).uploaded).toBe(0);
  }, 300_000);
});
