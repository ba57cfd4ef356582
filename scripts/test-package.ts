/**
 * `npm run test:package`: klutch-kit as its users get it. Packs the tarball (`npm pack`, which builds
 * lib/ through `prepack`), checks what it ships, installs it into fresh projects made from
 * examples/ in a temporary folder, and runs the README's "Adding a data service" block in each:
 *
 *   esm-nodenext  ES module project: type-checked with `module: NodeNext` and with `Bundler`
 *                 resolution, compiled by tsc, run by node (synthTopology)
 *   cdk8s-app     the layout of `cdk8s init typescript-app` (CommonJS, classic resolution, its
 *                 tsconfig.json and cdk8s.yaml `app: npx ts-node main.ts`), run by `cdk8s synth`
 *   cdk8s-plus-33 an ES module project on cdk8s-plus-33 (klutch-kit is built on cdk8s-plus-28, its peer):
 *                 cdk8s-plus-33 constructs in klutch-kit's cluster charts, synthTopology, klutch-kit validate
 *   pulumi-app    Pulumi's TypeScript template (CommonJS under ts-node) deploying the chart with
 *                 klutch-kit/stacks' ControlPlane under Pulumi's mocks
 *   init-esm,     README's "Start a project" as written: `klutch-kit init my-topology [--layout cjs]`
 *   init-cjs      from the tarball, the files compared with the README's blocks byte for byte, then
 *                 `npm run synth` and `npm run validate` in the new project
 *   init-pulumi   `klutch-kit init my-topology --pulumi` from the tarball, the files compared with the README's
 *                 blocks, `npm run typecheck` (tsc --noEmit), then a real `pulumi preview` of the project against
 *                 two harness clusters (runtime/realinfra startCluster; the Pulumi CLI and kubernetes provider of
 *                 ensurePulumiBinaries, a local file backend, passphrase secrets, no plugin downloads)
 *
 * It also checks that the tarball's README is the npm one (docs/npm-readme.md, swapped in at `prepack` by
 * scripts/npm-readme.mjs; the repository's README.md is back after the pack) and that its links resolve on npm
 * (scripts/_readme-links.ts).
 *
 * Offline: the tarball is unpacked into `<project>/node_modules/klutch-kit`, and every other package
 * the project or klutch-kit names (dependencies, the peers the project lists) is linked from this
 * repository's node_modules — one copy of cdk8s, and nothing the project does not list (a
 * construct-only project has no Pulumi and no runtime libraries).
 *
 * Options: --keep (leave the temporary folder), --only <project>, --tarball <file> (skip npm pack),
 * --no-preview (init-pulumi: type-check only, no harness clusters and no Pulumi binaries).
 */
import { execFileSync, type ExecFileSyncOptions } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type { InitLayout } from '../runtime/cli/init.js';
import { startCluster, type RealCluster } from '../runtime/realinfra/index.js';
import { ensurePulumiBinaries, pulumiEnv } from '../runtime/realinfra/pulumi-build.js';
import { generateStackSecrets } from '../stacks/secrets.js';
import { readmeInitFiles } from './_init-blocks.js';
import { brokenReadmeLinks } from './_readme-links.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const NODE_MODULES = join(ROOT, 'node_modules');
const args = process.argv.slice(2);
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
const keep = args.includes('--keep');
const preview = !args.includes('--no-preview');
const givenTarball = args.includes('--tarball') ? resolve(args[args.indexOf('--tarball') + 1]!) : undefined;

type Pkg = {
  name: string;
  version: string;
  bin?: string | Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  exports: Record<string, string | Record<string, string>>;
  typesVersions?: Record<string, Record<string, string[]>>;
};
const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

const times: string[] = [];
function step<T>(name: string, fn: () => T): T {
  const t = Date.now();
  process.stdout.write(`▶ ${name}\n`);
  const r = fn();
  times.push(`${name}: ${((Date.now() - t) / 1000).toFixed(1)} s`);
  return r;
}
async function stepAsync<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const t = Date.now();
  process.stdout.write(`▶ ${name}\n`);
  const r = await fn();
  times.push(`${name}: ${((Date.now() - t) / 1000).toFixed(1)} s`);
  return r;
}

/** Runs a command; on failure prints its output and throws one line naming the command. */
function run(cmd: string, argv: string[], opts: ExecFileSyncOptions & { cwd: string }): string {
  try {
    return execFileSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts, env: { ...process.env, ...opts.env } }) as string;
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; status?: number };
    process.stderr.write(`${err.stdout ?? ''}${err.stderr ?? ''}`);
    throw new Error(`\`${cmd} ${argv.join(' ')}\` in ${opts.cwd} failed (exit ${err.status})`, { cause: e });
  }
}

function check(ok: unknown, message: string): void {
  if (!ok) throw new Error(message);
}

/** The README's "Adding a data service" block. */
function readmeBlock(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Adding a data service'));
  const m = /```ts\n([\s\S]*?)```/.exec(section);
  check(m, 'README.md: no ```ts block in "## Adding a data service"');
  return m![1]!;
}

// ---------------------------------------------------------------------------------------------
const work = mkdtempSync(join(tmpdir(), 'klutch-kit-package-'));
let failed = false;
try {
  const tarball =
    givenTarball ??
    step('npm pack (prepack: build lib/, the npm README)', () => {
      const repoReadme = readFileSync(join(ROOT, 'README.md'), 'utf8');
      const out = run('npm', ['pack', '--json', '--pack-destination', work], { cwd: ROOT, env: { npm_config_loglevel: 'error' } });
      const info = JSON.parse(out.slice(out.indexOf('['))) as Array<{ filename: string; size: number; unpackedSize: number; entryCount: number }>;
      console.log(
        `  ${info[0]!.filename}: ${info[0]!.entryCount} files, ${(info[0]!.size / 1024).toFixed(0)} kB packed, ${(info[0]!.unpackedSize / 1024 / 1024).toFixed(1)} MB unpacked`,
      );
      check(readFileSync(join(ROOT, 'README.md'), 'utf8') === repoReadme, "README.md differs after npm pack: postpack did not restore the repository's README");
      return join(work, info[0]!.filename);
    });

  const unpacked = join(work, 'unpacked');
  const pkg = step('tarball contents', () => {
    mkdirSync(unpacked);
    run('tar', ['xzf', tarball, '-C', unpacked], { cwd: work });
    const dir = join(unpacked, 'package');
    const files = run('tar', ['tzf', tarball], { cwd: work })
      .split('\n')
      .filter(Boolean)
      .map((f) => f.replace(/^package\//, ''));
    const p = readJson<Pkg>(join(dir, 'package.json'));
    for (const [key, entry] of Object.entries(p.exports)) {
      for (const target of typeof entry === 'string' ? [entry] : Object.values(entry)) {
        check(existsSync(join(dir, target)), `exports["${key}"] → ${target} is not in the tarball`);
      }
      if (typeof entry === 'object' && key !== '.') {
        const types = p.typesVersions?.['*']?.[key.slice(2)]?.[0];
        check(types && existsSync(join(dir, types)), `typesVersions for "${key}" is missing or not in the tarball`);
      }
    }
    const bad = files.filter((f) => /(^|\/)test\/|\.test\.|__tests__|\.map$|^(constructs|stacks|runtime|scripts)\/|\.ts$/.test(f) && !f.endsWith('.d.ts'));
    check(bad.length === 0, `the tarball ships tests, sources or maps: ${bad.slice(0, 5).join(', ')}`);
    for (const f of ['LICENSE', 'CHANGELOG.md', 'README.md', 'imports/schema-bundle.json', 'bin/kubectl-bind.js', 'cjs/_node.cjs'])
      check(files.includes(f), `${f} is not in the tarball`);
    check(readFileSync(join(dir, 'LICENSE'), 'utf8').includes('Apache License'), 'LICENSE is not the Apache-2.0 text');
    check(
      readFileSync(join(dir, 'README.md'), 'utf8') === readFileSync(join(ROOT, 'docs', 'npm-readme.md'), 'utf8'),
      "the tarball's README.md is not docs/npm-readme.md (package.json prepack: node scripts/npm-readme.mjs swap)",
    );
    // npm shows this README and resolves its relative links against `repository`: each must name a file of the repository.
    const broken = brokenReadmeLinks(readFileSync(join(dir, 'README.md'), 'utf8'), p as Pkg & { repository?: { url?: string } }, (f) => {
      const abs = join(ROOT, f);
      if (!existsSync(abs)) return undefined;
      return statSync(abs).isDirectory() ? '' : readFileSync(abs, 'utf8');
    });
    check(broken.length === 0, `the README's links would not resolve on npm:\n  ${broken.join('\n  ')}`);
    for (const n of ['cdk8s', 'cdk8s-plus-28', 'constructs', '@pulumi/pulumi', '@pulumi/kubernetes']) {
      check(!p.dependencies?.[n] && p.peerDependencies?.[n], `${n} must be a peer dependency, not a dependency`);
    }
    console.log(`  ${files.length} files; ${Object.keys(p.exports).length} exports entries with .js, .d.ts and a CommonJS entry; no tests`);
    return p;
  });

  // -------------------------------------------------------------------------------------------
  /** A fresh project from examples/<name>, with klutch-kit from the tarball and the rest linked. */
  function project(name: string): string {
    const dir = join(work, name);
    cpSync(join(ROOT, 'examples', name), dir, { recursive: true });
    const block = readmeBlock();
    check(
      readFileSync(join(dir, 'clickhouse.ts'), 'utf8') === block,
      `examples/${name}/clickhouse.ts differs from the README's "Adding a data service" block; copy the block over`,
    );
    return install(dir, `examples/${name}`);
  }
  /** klutch-kit from the tarball into `dir`/node_modules, and every package its package.json lists linked from the repository's. */
  function install(dir: string, name: string): string {
    const own = readJson<Pkg>(join(dir, 'package.json'));
    const nm = join(dir, 'node_modules');
    mkdirSync(join(nm, '.bin'), { recursive: true });
    cpSync(join(unpacked, 'package'), join(nm, 'klutch-kit'), { recursive: true });
    const wanted = new Set([...Object.keys(own.dependencies ?? {}), ...Object.keys(own.devDependencies ?? {}), ...Object.keys(pkg.dependencies ?? {})]);
    wanted.delete('klutch-kit');
    // Required peers must be listed by the project (npm would warn, and lib/ could not load them).
    for (const [peer] of Object.entries(pkg.peerDependencies ?? {})) {
      if (!pkg.peerDependenciesMeta?.[peer]?.optional) check(wanted.has(peer), `${name}/package.json lacks the peer dependency ${peer}`);
    }
    const link = (n: string) => {
      const target = join(NODE_MODULES, n);
      check(existsSync(target), `${n} is not installed in ${NODE_MODULES} (run npm ci)`);
      mkdirSync(dirname(join(nm, n)), { recursive: true });
      symlinkSync(target, join(nm, n), 'dir');
      const p = readJson<Pkg>(join(target, 'package.json'));
      const bins = typeof p.bin === 'string' ? { [n.split('/').pop()!]: p.bin } : (p.bin ?? {});
      for (const [b, rel] of Object.entries(bins)) if (!existsSync(join(nm, '.bin', b))) symlinkSync(join(target, rel), join(nm, '.bin', b));
    };
    for (const n of wanted) link(n);
    for (const [b, rel] of Object.entries(typeof pkg.bin === 'object' ? pkg.bin : {})) symlinkSync(join(nm, 'klutch-kit', rel), join(nm, '.bin', b));
    return dir;
  }
  const bin = (dir: string, b: string) => join(dir, 'node_modules', '.bin', b);
  // Node resolves packages from the project only (no NODE_PATH), npx finds the project's bins, no network.
  const env = { NODE_PATH: '', npm_config_offline: 'true', npm_config_update_notifier: 'false' };
  delete process.env['CDK8S_OUTDIR'];

  function outputOf(dir: string): Array<Record<string, any>> {
    const objs: Array<Record<string, any>> = [];
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(d, e.name));
        else if (/\.ya?ml$/.test(e.name) && e.name !== 'kustomization.yaml') {
          for (const doc of parseAllDocuments(readFileSync(join(d, e.name), 'utf8'))) {
            const o = doc.toJS() as Record<string, any> | null;
            if (o?.kind) objs.push(o);
          }
        }
      }
    };
    walk(dir);
    return objs;
  }
  function expectClickHouse(objs: Array<Record<string, any>>, where: string): void {
    const has = (kind: string, n: string) => objs.some((o) => o.kind === kind && o.metadata?.name === n);
    for (const [kind, n] of [
      ['CompositeResourceDefinition', 'xclickhouseinstances.analytics.example.com'],
      ['Composition', 'k8s-clickhouse'],
      ['Composition', 'vm-clickhouse'],
      ['APIServiceExportTemplate', 'clickhouseinstances'],
      ['ClusterRole', 'klutch-binder-exports-clickhouseinstances.analytics.example.com'],
      ['ProviderConfig', 'clickhouse-service-broker'],
      ['APIServiceBinding', 'clickhouseinstances.analytics.example.com'],
      ['ClickhouseInstance', 'events'],
    ])
      check(has(kind!, n!), `${where}: no ${kind} ${n} among ${objs.length} objects`);
    console.log(`  ${where}: ${objs.length} objects, the ClickHouse data service exported and bound`);
  }

  if (!only || only === 'esm-nodenext') {
    step('esm-nodenext: tsc (NodeNext), tsc (Bundler), node build/main.js, klutch-kit validate', () => {
      const dir = project('esm-nodenext');
      run(bin(dir, 'tsc'), ['-p', 'tsconfig.json'], { cwd: dir, env });
      run(bin(dir, 'tsc'), ['-p', 'tsconfig.bundler.json'], { cwd: dir, env });
      run(process.execPath, ['build/main.js'], { cwd: dir, env });
      expectClickHouse(outputOf(join(dir, 'dist')), 'esm-nodenext dist/');
      // The package's command, without the runtime peers (a construct-only project has none).
      const report = run(bin(dir, 'klutch-kit'), ['validate', 'dist/control-plane'], { cwd: dir, env });
      console.log(`  npx klutch-kit validate dist/control-plane: ${report.trim().split('\n').pop()}`);
    });
  }
  if (!only || only === 'cdk8s-app') {
    step('cdk8s-app: cdk8s synth (npx ts-node main.ts, CommonJS), jest', () => {
      const dir = project('cdk8s-app');
      // --check-upgrade=false: the CLI would ask the registry for a newer cdk8s-cli (no network here).
      run(bin(dir, 'cdk8s'), ['synth', '--check-upgrade=false'], { cwd: dir, env });
      expectClickHouse(outputOf(join(dir, 'dist')), 'cdk8s-app dist/');
      // the template's `npm test` (jest + ts-jest), in jest's ES module mode (examples/cdk8s-app/jest.config.js)
      run(process.execPath, ['--experimental-vm-modules', '--no-warnings', join(dir, 'node_modules', 'jest', 'bin', 'jest.js'), '--ci'], { cwd: dir, env });
      console.log('  cdk8s-app npm test (jest, ES module mode): passed');
    });
  }
  if (!only || only === 'cdk8s-plus-33') {
    step('cdk8s-plus-33: tsc (NodeNext), node build/main.js (synthTopology validates), klutch-kit validate', () => {
      const dir = project('cdk8s-plus-33');
      run(bin(dir, 'tsc'), ['-p', 'tsconfig.json'], { cwd: dir, env });
      const out = run(process.execPath, ['build/main.js'], { cwd: dir, env });
      const cp = outputOf(join(dir, 'dist', 'control-plane'));
      const shop = outputOf(join(dir, 'dist', 'app-shop'));
      expectClickHouse([...cp, ...shop], 'cdk8s-plus-33 dist/');
      // cdk8s-plus-33's objects, in klutch-kit's cluster folders, as cdk8s-plus-33 renders them
      const has = (objs: Array<Record<string, any>>, kind: string, n: string) => objs.find((o) => o.kind === kind && o.metadata?.name === n);
      check(has(cp, 'NetworkPolicy', 'klutch-backend-ingress'), 'cdk8s-plus-33 dist/control-plane: no NetworkPolicy klutch-backend-ingress');
      const deploy = has(shop, 'Deployment', 'events-app');
      check(deploy?.spec?.template?.spec?.serviceAccountName === 'events-app', 'cdk8s-plus-33 dist/app-shop: no Deployment events-app with its ServiceAccount');
      const role = has(shop, 'Role', 'read-clickhouse');
      check(
        JSON.stringify(role?.rules?.[0]?.resources) === JSON.stringify(['clickhouseinstances']) && role?.rules?.[0]?.apiGroups?.[0] === 'analytics.example.com',
        `cdk8s-plus-33 dist/app-shop: Role read-clickhouse does not name the bound API: ${JSON.stringify(role?.rules)}`,
      );
      check(has(shop, 'RoleBinding', 'read-clickhouse')?.roleRef?.name === 'read-clickhouse', 'cdk8s-plus-33 dist/app-shop: no RoleBinding read-clickhouse');
      // the app cluster's claims are checked against the control plane's XRDs
      for (const argv of [['dist/control-plane'], ['dist/app-shop', '--schemas', 'dist/control-plane']]) {
        const report = run(bin(dir, 'klutch-kit'), ['validate', ...argv], { cwd: dir, env });
        console.log(`  npx klutch-kit validate ${argv.join(' ')}: ${report.trim().split('\n').pop()}`);
      }
      console.log(
        `  ${out.trim()}; cdk8s-plus ${readJson<Pkg>(join(dir, 'node_modules', 'cdk8s-plus-33', 'package.json')).version} beside cdk8s-plus-28 ${readJson<Pkg>(join(dir, 'node_modules', 'cdk8s-plus-28', 'package.json')).version}`,
      );
    });
  }
  if (!only || only === 'pulumi-app') {
    step('pulumi-app: ts-node test.ts (CommonJS, Pulumi mocks)', () => {
      const dir = project('pulumi-app');
      const out = run(bin(dir, 'ts-node'), ['test.ts'], { cwd: dir, env });
      process.stdout.write(`  ${out.trim()}\n`);
    });
  }
  /**
   * As README says: `npx klutch-kit init my-topology <flags>` in an empty folder, the files compared with the
   * README's blocks of the layout byte for byte; then the project installed. npx installs klutch-kit with its
   * dependencies and (npm >= 7) its required peers into a folder of its own, then runs the bin from there.
   */
  function initFromTarball(layout: InitLayout, flags: string[]): string {
    const parent = join(work, `init-${layout}`);
    mkdirSync(parent);
    const npxHome = join(work, `npx-${layout}`);
    mkdirSync(npxHome);
    const peers = Object.keys(pkg.peerDependencies ?? {}).filter((n) => !pkg.peerDependenciesMeta?.[n]?.optional);
    writeFileSync(join(npxHome, 'package.json'), JSON.stringify({ dependencies: Object.fromEntries(['klutch-kit', ...peers].map((n) => [n, '*'])) }));
    install(npxHome, `npx-${layout}`);
    const out = run(bin(npxHome, 'klutch-kit'), ['init', 'my-topology', ...flags], { cwd: parent, env });
    console.log(`  ${out.trim().split('\n')[0]}`);
    const dir = join(parent, 'my-topology');
    const shown = readmeInitFiles(readFileSync(join(ROOT, 'README.md'), 'utf8'), layout);
    const written = readdirSync(dir).sort();
    check(
      JSON.stringify(written) === JSON.stringify([...shown.keys()].sort()),
      `init ${flags.join(' ')} wrote ${written.join(', ')}; README shows ${[...shown.keys()].join(', ')}`,
    );
    for (const f of written) check(readFileSync(join(dir, f), 'utf8') === shown.get(f), `init ${flags.join(' ')}: ${f} differs from README's block`);
    return install(dir, `init-${layout}/my-topology`);
  }
  for (const layout of ['esm', 'cjs'] as const satisfies readonly InitLayout[]) {
    if (only && only !== `init-${layout}`) continue;
    step(`init-${layout}: klutch-kit init my-topology --layout ${layout}, README's files, npm run synth, npm run validate`, () => {
      const dir = initFromTarball(layout, ['--layout', layout]);
      // npm run puts node_modules/.bin on PATH, as for a user; cdk8s-cli must not ask the registry for upgrades
      const synth = run('npm', ['run', '--silent', 'synth'], { cwd: dir, env: { ...env, CDK8S_CHECK_UPGRADE: 'false' } });
      const objs = outputOf(join(dir, 'dist'));
      check(
        objs.some((o) => o.kind === 'PostgresqlInstance' && o.metadata?.name === 'orders-db') && objs.some((o) => o.kind === 'CompositeResourceDefinition'),
        `init-${layout}: dist/ lacks the claim or the XRDs (${objs.length} objects)`,
      );
      console.log(
        `  npm run synth: ${objs.length} objects; ${synth
          .trim()
          .split('\n')
          .filter((l) => !l.trim().startsWith('- '))
          .join('; ')}`,
      );
      const validate = run('npm', ['run', '--silent', 'validate'], { cwd: dir, env });
      console.log(`  npm run validate: ${validate.trim().split('\n').pop()}`);
    });
  }
  if (!only || only === 'init-pulumi') {
    await stepAsync(
      `init-pulumi: klutch-kit init my-topology --pulumi, README's files, npm run typecheck${preview ? ', pulumi preview on two harness clusters' : ''}`,
      async () => {
        const dir = initFromTarball('pulumi', ['--pulumi']);
        run('npm', ['run', '--silent', 'typecheck'], { cwd: dir, env });
        console.log('  npm run typecheck (tsc --noEmit, CommonJS): passed');
        if (!preview) return;
        const log = (line: string) => process.stdout.write(`  [pulumi] ${line}\n`);
        const bins = await ensurePulumiBinaries({ log });
        const clusters: RealCluster[] = [];
        try {
          const [cp, app] = await Promise.all([startCluster({ name: 'package-cp' }), startCluster({ name: 'package-app' })]);
          clusters.push(cp!, app!);
          const state = join(work, 'pulumi-state');
          const home = join(work, 'pulumi-home');
          mkdirSync(state);
          mkdirSync(home);
          // README's steps with the harness' kubeconfigs; Dex with a mockCallback connector logs users in; the
          // binding runtime only (`manifests: runtime`: no Crossplane runs here) and no workload awaits (no kubelet).
          const penv = { ...env, ...pulumiEnv(bins, { home, backendDir: state, passphrase: 'test-package' }) };
          const pulumi = (argv: string[], input?: string) =>
            run(bins.pulumi, ['--non-interactive', ...argv], {
              cwd: dir,
              env: penv,
              ...(input !== undefined ? { input, stdio: ['pipe', 'pipe', 'pipe'] } : {}),
            });
          pulumi(['stack', 'init', 'dev', '--secrets-provider', 'passphrase']);
          const secrets = generateStackSecrets();
          for (const [key, value] of [
            ['kubeconfig-control-plane', readFileSync(cp!.kubeconfigPath, 'utf8')],
            ['kubeconfig-app-shop', readFileSync(app!.kubeconfigPath, 'utf8')],
            ['oidcClientSecret', secrets.oidcClientSecret],
            ['cookieSigningKey', secrets.cookieSigningKey],
          ] as const)
            pulumi(['config', 'set', '--secret', key], value); // from stdin, as `< file`: no secret on a command line
          pulumi(['config', 'set', 'dexConnectors', JSON.stringify([{ type: 'mockCallback', id: 'mock', name: 'Mock' }])]);
          pulumi(['config', 'set', 'manifests', 'runtime']);
          pulumi(['config', 'set', 'skipAwait', 'true']);
          const out = pulumi(['preview', '--json']);
          const steps = (JSON.parse(out.slice(out.indexOf('{'))) as { steps?: Array<{ op: string; urn: string; newState?: { type?: string } }> }).steps ?? [];
          const typeOf = (urn: string) => urn.split('::')[2]!.split('$').pop()!;
          const nameOf = (urn: string) => urn.split('::')[3]!;
          const creates = steps.filter((s) => s.op === 'create');
          const has = (type: string, name: string) => creates.some((s) => typeOf(s.urn) === type && nameOf(s.urn) === name);
          for (const [type, name] of [
            ['klutch-kit:stacks:Topology', 'klutch'],
            ['klutch-kit:stacks:ControlPlane', 'control-plane'],
            ['klutch-kit:stacks:AppCluster', 'app-shop'],
            ['pulumi:providers:kubernetes', 'control-plane'],
            ['pulumi:providers:kubernetes', 'app-shop'],
          ])
            check(has(type!, name!), `init-pulumi: pulumi preview does not create ${type} ${name}; it creates ${creates.map((s) => typeOf(s.urn)).join(', ')}`);
          const objects = creates.filter((s) => typeOf(s.urn).startsWith('kubernetes:') && !typeOf(s.urn).startsWith('kubernetes:yaml'));
          check(
            objects.some((s) => typeOf(s.urn) === 'kubernetes:apps/v1:Deployment' && /klutch-backend/.test(nameOf(s.urn))),
            `init-pulumi: pulumi preview creates no bind backend Deployment among ${objects.length} objects`,
          );
          check(
            steps.every((s) => s.op === 'create' || s.op === 'same'),
            `init-pulumi: pulumi preview of a new stack has steps ${[...new Set(steps.map((s) => s.op))].join(', ')}`,
          );
          console.log(
            `  pulumi preview (${bins.cliVersion}, ${bins.cliFrom}): ${creates.length} to create, ${objects.length} of them Kubernetes objects in 2 clusters`,
          );
        } finally {
          await Promise.all(clusters.map((c) => c.stop()));
        }
      },
    );
  }
} catch (e) {
  failed = true;
  console.error(`test:package: ${e instanceof Error ? e.message : String(e)}`);
} finally {
  // a pack that died between prepack and postpack leaves the npm README in place of the repository's
  if (!givenTarball) execFileSync(process.execPath, [join(ROOT, 'scripts', 'npm-readme.mjs'), 'restore']);
  console.log(times.map((t) => `  ${t}`).join('\n'));
  if (keep) console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
if (failed) process.exit(1);
console.log('test:package: passed');
