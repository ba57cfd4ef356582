// `klutch-kit image build`: the backend and konnector images (OCI layout, amd64 + arm64), built
// from the packed package without Docker (runtime/image), optionally pushed to a registry.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command } from 'commander';
import { buildRuntimeImages, DEFAULT_BASE, RUNTIME_ENTRIES, type ImageBuildResult, type RuntimeImageName } from '../image/build.js';
import { parsePlatform } from '../image/oci.js';
import { parseDigestRef, pushLayoutImage } from '../image/registry.js';
import { parseImageRef } from '../xpkg/push.js';
import { UsageError } from './errors.js';

/** Output streams (injectable for tests). */
export interface ImageIo {
  out(line: string): void;
  err(line: string): void;
}

const stdio: ImageIo = { out: (l) => process.stdout.write(l + '\n'), err: (l) => process.stderr.write(l + '\n') };

export interface ImageBuildCliOptions {
  readonly output?: string;
  readonly from?: string;
  readonly base?: string;
  readonly platform?: string;
  readonly push?: string;
  readonly cache?: string;
  readonly nodePath?: string;
  /** Build from scratch: neither reuse a cached build of the same inputs nor store this one. */
  readonly rebuild?: boolean;
}

/**
 * `--push <registry>/<prefix>[:<tag>]` → `<registry>/<prefix>/<image>:<tag>` for each image; the tag
 * defaults to the package version. Throws naming the value.
 */
export function pushRefs(target: string, version: string): Record<RuntimeImageName, string> {
  const m = /^(.*?)(?::([\w][\w.-]{0,127}))?$/.exec(target.replace(/\/+$/, ''))!;
  const prefix = m[1]!;
  const tag = m[2] ?? version;
  const refs = Object.fromEntries(Object.keys(RUNTIME_ENTRIES).map((n) => [n, `${prefix}/${n}:${tag}`])) as Record<RuntimeImageName, string>;
  for (const r of Object.values(refs)) {
    try {
      if (!prefix.includes('/')) throw new Error('no registry');
      parseImageRef(r);
    } catch {
      throw new Error(
        `image build --push ${JSON.stringify(target)}: expected "<registry>/<prefix>[:<tag>]" such as "127.0.0.1:5000/klutch-kit:0.1.0" (gives ${r})`,
      );
    }
  }
  if (tag === 'latest') throw new Error(`image build --push ${JSON.stringify(target)}: use a pinned tag, not "latest"`);
  return refs;
}

export interface ImageBuildCliResult extends ImageBuildResult {
  /** Image → `<ref>@<digest>` when pushed. */
  readonly pushed?: Readonly<Record<RuntimeImageName, string>>;
}

/** Checks the command line before any work; a bad option is a UsageError (exit code 2). */
function checkOptions(opts: ImageBuildCliOptions): void {
  try {
    if (opts.platform) opts.platform.split(',').forEach(parsePlatform);
    if (opts.push) pushRefs(opts.push, '0.0.0');
    if (opts.base && opts.base !== 'local') parseDigestRef(opts.base);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (opts.from && !existsSync(opts.from))
    throw new UsageError(`image build --from ${JSON.stringify(opts.from)}: no such file; pass an \`npm pack\` tarball of klutch-kit`);
}

/** Builds the images (and pushes them with `push`). */
export async function runImageBuild(opts: ImageBuildCliOptions = {}, io: ImageIo = stdio): Promise<ImageBuildCliResult> {
  checkOptions(opts);
  const platforms = opts.platform ? opts.platform.split(',').map(parsePlatform) : undefined;
  const t = Date.now();
  const r = await buildRuntimeImages({
    output: resolve(opts.output ?? 'dist/images'),
    ...(opts.from ? { packageTarball: opts.from } : {}),
    ...(opts.base ? { base: opts.base } : {}),
    ...(platforms ? { platforms } : {}),
    ...(opts.cache ? { cacheDir: resolve(opts.cache) } : {}),
    ...(opts.nodePath ? { nodePath: opts.nodePath } : {}),
    ...(opts.rebuild ? { reuse: false } : {}),
    log: (l) => io.err(l),
  });
  io.out(
    `image build: ${r.layout} (klutch-kit ${r.version}, base ${r.base}, ${((Date.now() - t) / 1000).toFixed(1)} s${r.reused ? ', reused from the cache' : ''})`,
  );
  for (const [name, img] of Object.entries(r.images)) {
    io.out(`  ${name} ${img.digest}  ${img.platforms.map((p) => `${p.platform} ${(p.compressedSize / 1e6).toFixed(1)} MB`).join(', ')}`);
  }
  if (!opts.push) return r;
  const refs = pushRefs(opts.push, r.version);
  const pushed = {} as Record<RuntimeImageName, string>;
  for (const [name, ref] of Object.entries(refs) as Array<[RuntimeImageName, string]>) {
    const p = await pushLayoutImage(r.layout, name, ref, { log: (l) => io.err(l) });
    pushed[name] = p.pinned;
    io.out(`image push: ${p.pinned}`);
  }
  return { ...r, pushed };
}

/** The `image` command with `build`. */
export function imageCommand(): Command {
  const cmd = new Command('image').description('Build the backend and konnector container images without Docker');
  cmd
    .command('build')
    .description(
      'Write OCI images of the backend and the konnector (linux/amd64 + linux/arm64, user 65532, no shell) from the packed package and its runtime peers, onto a base named by digest',
    )
    .option('-o, --output <dir>', 'OCI image layout folder to write', 'dist/images')
    .option('--from <tgz>', 'an `npm pack` tarball of klutch-kit (default: pack this package)')
    .option('--base <ref>', `base image "<registry>/<repo>@sha256:<digest>", or "local" (Node.js from npm + Debian libraries) (default: ${DEFAULT_BASE})`)
    .option('--platform <list>', 'comma-separated platforms (default: linux/amd64,linux/arm64)')
    .option(
      '--push <target>',
      'push as <target>/backend:<tag> and <target>/konnector:<tag>; target "<registry>/<prefix>[:<tag>]", tag default the package version',
    )
    .option('--cache <dir>', 'downloads, layers, packed packages and built images (default: ~/.cache/klutch-kit/image)')
    .option('--rebuild', 'build from scratch: do not reuse a cached build of the same inputs, and do not store this one')
    .option('--node-path <path>', 'node inside the base (default: the base entrypoint, else /nodejs/bin/node)')
    .action(async (opts: ImageBuildCliOptions) => {
      await runImageBuild(opts);
    });
  return cmd;
}
