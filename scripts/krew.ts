/**
 * Release artifacts for the kubectl plugin manager krew:
 *
 * 1. `kubectl-bind-v<version>.tar.gz`: `kubectl-bind` (the CLI bundled into one Node.js file with
 *    esbuild; runs with Node.js >= 20 on PATH, on every OS and architecture) and LICENSE;
 * 2. `bind.yaml`: the krew `Plugin` manifest (krew.googlecontainertools.github.com/v1alpha2) with
 *    one platform entry per OS/architecture, all pointing at that archive and its sha256.
 *
 *   npm run krew -- --version 0.1.0 \
 *     --base-url https://github.com/acme/klutch-kit/releases/download/v0.1.0 [--out dist/krew]
 *
 * Upload the archive to the release and submit bind.yaml to a krew index (or install it directly:
 * `kubectl krew install --manifest=bind.yaml --archive=kubectl-bind-v0.1.0.tar.gz`).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { stringify } from 'yaml';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The OS/architecture pairs krew offers the plugin for (the archive is the same for all). */
export const KREW_PLATFORMS: ReadonlyArray<{ os: string; arch: string }> = [
  { os: 'linux', arch: 'amd64' },
  { os: 'linux', arch: 'arm64' },
  { os: 'darwin', arch: 'amd64' },
  { os: 'darwin', arch: 'arm64' },
];

export interface KrewManifestOptions {
  /** Plugin name (`kubectl <name>`). @default "bind" */
  readonly name?: string;
  /** Semantic version without or with the leading `v`. */
  readonly version: string;
  /** Download URL of the archive. */
  readonly uri: string;
  /** sha256 (hex) of the archive. */
  readonly sha256: string;
  /** @default "https://github.com/anynines/klutch-kit" */
  readonly homepage?: string;
}

const SEMVER = /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?$/;

/** The krew Plugin manifest; throws naming the option and value when one is wrong. */
export function krewManifest(o: KrewManifestOptions): Record<string, unknown> {
  if (!SEMVER.test(o.version)) throw new Error(`krew: --version "${o.version}" is not a semantic version such as 0.1.0`);
  if (!/^https:\/\/\S+\.tar\.gz$/.test(o.uri)) throw new Error(`krew: uri "${o.uri}" must be an https URL of a .tar.gz archive`);
  if (!/^[0-9a-f]{64}$/.test(o.sha256)) throw new Error(`krew: sha256 "${o.sha256}" is not 64 lowercase hex digits`);
  const name = o.name ?? 'bind';
  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(name)) throw new Error(`krew: --name "${name}" is not a krew plugin name (lowercase words joined by -)`);
  return {
    apiVersion: 'krew.googlecontainertools.github.com/v1alpha2',
    kind: 'Plugin',
    metadata: { name },
    spec: {
      version: o.version.startsWith('v') ? o.version : `v${o.version}`,
      homepage: o.homepage ?? 'https://github.com/anynines/klutch-kit',
      shortDescription: 'Bind data-service APIs of a Klutch provider',
      description: [
        'kubectl bind connects this cluster to a Klutch (klutch-kit or anynines Klutch) bind backend:',
        'it logs in through the browser (or with --token in CI), stores the provider kubeconfig, creates',
        'the export request, installs the konnector and creates APIServiceBindings for the chosen APIs.',
        'Requires Node.js 20 or newer on PATH.',
      ].join('\n'),
      caveats: 'kubectl bind needs Node.js >= 20 on PATH (the plugin is a single JavaScript file).\n',
      platforms: KREW_PLATFORMS.map((p) => ({
        selector: { matchLabels: { os: p.os, arch: p.arch } },
        uri: o.uri,
        sha256: o.sha256,
        files: [
          { from: 'kubectl-bind', to: '.' },
          { from: 'LICENSE', to: '.' },
        ],
        bin: 'kubectl-bind',
      })),
    },
  };
}

/** Bundles kubectl-bind into `<dir>/kubectl-bind` (one executable JavaScript file). */
export async function bundleKubectlBind(dir: string, version: string): Promise<string> {
  const out = join(dir, 'kubectl-bind');
  await build({
    stdin: {
      contents: [
        "import { run } from './runtime/kubectl-bind/main.ts';",
        'run(process.argv.slice(2), { out: process.stdout, err: process.stderr, in: process.stdin }).then((code) => { process.exitCode = code; });',
      ].join('\n'),
      resolveDir: root,
      loader: 'ts',
      sourcefile: 'kubectl-bind-entry.ts',
    },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile: out,
    banner: { js: '#!/usr/bin/env node' },
    define: { __KLUTCH_KIT_VERSION__: JSON.stringify(version.replace(/^v/, '')) },
    legalComments: 'none',
    logLevel: 'error',
  });
  chmodSync(out, 0o755);
  return out;
}

/** Writes the archive and the manifest into `outDir`; returns their paths and the archive's sha256. */
export async function buildKrewRelease(o: {
  version: string;
  baseUrl: string;
  outDir: string;
  name?: string;
}): Promise<{ archive: string; manifest: string; sha256: string }> {
  if (!SEMVER.test(o.version)) throw new Error(`krew: --version "${o.version}" is not a semantic version such as 0.1.0`);
  if (!/^https:\/\/\S+$/.test(o.baseUrl)) throw new Error(`krew: --base-url "${o.baseUrl}" must be an https URL (the release's download folder)`);
  const v = o.version.startsWith('v') ? o.version : `v${o.version}`;
  mkdirSync(o.outDir, { recursive: true });
  const stage = mkdtempSync(join(tmpdir(), 'klutch-kit-krew-'));
  try {
    await bundleKubectlBind(stage, v);
    const license = join(root, 'LICENSE');
    if (existsSync(license)) copyFileSync(license, join(stage, 'LICENSE'));
    else writeFileSync(join(stage, 'LICENSE'), 'Apache-2.0 (see https://www.apache.org/licenses/LICENSE-2.0)\n');
    const archiveName = `kubectl-bind-${v}.tar.gz`;
    const archive = resolve(o.outDir, archiveName);
    // fixed owner and mtime: the same sources give the same archive bytes on one machine
    const tar = spawnSync('tar', ['--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '-czf', archive, '-C', stage, 'kubectl-bind', 'LICENSE'], {
      encoding: 'utf8',
    });
    if (tar.status !== 0) throw new Error(`krew: tar failed (${tar.status}): ${tar.stderr || tar.error?.message}`);
    const sha256 = createHash('sha256').update(readFileSync(archive)).digest('hex');
    const manifest = join(o.outDir, `${o.name ?? 'bind'}.yaml`);
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { homepage?: string; repository?: string | { url?: string } };
    const repo = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
    const homepage = pkg.homepage ?? repo?.replace(/^git\+/, '').replace(/\.git$/, '');
    const doc = krewManifest({
      name: o.name,
      version: v,
      uri: `${o.baseUrl.replace(/\/+$/, '')}/${archiveName}`,
      sha256,
      homepage: homepage?.startsWith('https://') ? homepage : undefined,
    });
    writeFileSync(manifest, stringify(doc, { lineWidth: 0 }));
    return { archive, manifest, sha256 };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

if (process.argv[1] && /scripts[\\/]krew\.ts$/.test(process.argv[1])) {
  const version = arg('version') ?? (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  const baseUrl = arg('base-url');
  if (!baseUrl) {
    console.error('krew: --base-url is required (the release download folder, e.g. https://github.com/acme/klutch-kit/releases/download/v0.1.0)');
    process.exit(2);
  }
  buildKrewRelease({ version, baseUrl, outDir: resolve(arg('out') ?? 'dist/krew'), name: arg('name') }).then(
    (r) => console.log(`krew: wrote ${r.archive} (sha256 ${r.sha256}) and ${r.manifest}`),
    (e: unknown) => {
      console.error(e instanceof Error ? e.message : String(e));
      process.exit(1);
    },
  );
}
