// `klutch-kit package build [source]` and `klutch-kit package push <ref>`: the catalogue (or any
// package source the synth wrote to <outdir>/<cluster>.packages/<name>/) as a Crossplane `.xpkg`
// image, built and pushed without Docker (runtime/xpkg).
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { Command } from 'commander';
import { buildPackageImage, packageYamlFromDir, readXpkg, writeXpkg, type PackageImage } from '../xpkg/image.js';
import { pushPackageImage, type PushResult } from '../xpkg/push.js';
import { UsageError } from './errors.js';

/** Output streams (injectable for tests). */
export interface PackageIo {
  out(line: string): void;
  err(line: string): void;
}

const stdio: PackageIo = { out: (l) => process.stdout.write(l + '\n'), err: (l) => process.stderr.write(l + '\n') };

/** The package source folders under an outdir (`<outdir>/<cluster>.packages/<name>/`). */
export function findPackageSources(outdir: string): string[] {
  if (!statSync(outdir, { throwIfNoEntry: false })?.isDirectory()) return [];
  const out: string[] = [];
  for (const c of readdirSync(outdir, { withFileTypes: true })) {
    if (!c.isDirectory() || !c.name.endsWith('.packages')) continue;
    for (const p of readdirSync(join(outdir, c.name), { withFileTypes: true })) {
      if (p.isDirectory()) out.push(join(outdir, c.name, p.name));
    }
  }
  return out.sort();
}

/** The source folder: the one given, else the only package source under `dist/`. */
export function resolveSource(source: string | undefined, outdir = 'dist'): string {
  if (source !== undefined) {
    if (!statSync(source, { throwIfNoEntry: false })?.isDirectory())
      throw new UsageError(`package: ${JSON.stringify(source)} is not a directory; name a package source folder holding crossplane.yaml`);
    return resolve(source);
  }
  const found = findPackageSources(resolve(outdir));
  if (found.length === 1) return found[0];
  if (found.length === 0)
    throw new UsageError(
      `package: no package source under ${outdir}/ (no <cluster>.packages/<name>/ folder). The synth writes one only for a ControlPlaneCluster ` +
        `with the prop catalogueInstall: CatalogueInstall.configurationPackage({ package: '<registry>/<repository>:<tag>' }); by default ` +
        `(CatalogueInstall.OBJECTS, as in the example topology of \`npm run synth\`) the catalogue is applied as objects and there is nothing to package. ` +
        `Set that prop in your program and synth again (docs/topology.md, "The catalogue as a Crossplane Configuration package"), ` +
        `or name a folder holding crossplane.yaml: klutch-kit package build <folder>`,
    );
  throw new UsageError(`package: several package sources under ${outdir}/ (${found.join(', ')}); name one: klutch-kit package build <folder>`);
}

export interface BuildOptions {
  readonly output?: string;
}

/** Builds the `.xpkg` of a package source folder; returns the image and the file written. */
export function runBuild(source: string | undefined, opts: BuildOptions = {}, io: PackageIo = stdio): { image: PackageImage; file: string } {
  const dir = resolveSource(source);
  const image = buildPackageImage(packageYamlFromDir(dir));
  const file = resolve(opts.output ?? join(dirname(dir), `${basename(dir)}.xpkg`));
  writeFileSync(file, writeXpkg(image));
  io.out(`package build ${dir}: ${file} (${image.digest}, layer ${image.layer.length} bytes)`);
  return { image, file };
}

export interface PushCliOptions {
  readonly file?: string;
  readonly from?: string;
}

/** Pushes a `.xpkg` file, or the package built from a source folder, as `ref`. */
export async function runPush(ref: string, opts: PushCliOptions = {}, io: PackageIo = stdio): Promise<PushResult> {
  if (opts.file && opts.from) throw new UsageError('package push: give either --file or --from, not both');
  const image = opts.file ? readXpkg(readFileSync(resolve(opts.file)), opts.file) : buildPackageImage(packageYamlFromDir(resolveSource(opts.from)));
  const r = await pushPackageImage(image, ref, { log: (l) => io.err(l) });
  io.out(`package push: ${ref} = ${r.pinned}`);
  return r;
}

/** The `package` command with `build` and `push`. */
export function packageCommand(): Command {
  const cmd = new Command('package').description('Build and push the Crossplane Configuration package (.xpkg) of a package source the synth wrote');
  cmd
    .command('build')
    .description('Build the .xpkg image of a package source folder (default: the only <cluster>.packages/<name>/ under dist/)')
    .argument('[source]', 'package source folder holding crossplane.yaml, e.g. dist/control-plane.packages/klutch-catalogue')
    .option('-o, --output <file>', 'the .xpkg file to write (default: <source>.xpkg beside the folder)')
    .action((source: string | undefined, opts: BuildOptions) => {
      runBuild(source, opts);
    });
  cmd
    .command('push')
    .description('Push the package to an OCI registry (plain HTTP on loopback, HTTPS elsewhere; no authentication)')
    .argument('<ref>', 'image reference <registry>/<repository>:<tag>, e.g. 127.0.0.1:5000/klutch/catalogue:v0.1.0')
    .option('-f, --file <xpkg>', 'push this .xpkg file')
    .option('--from <source>', 'build from this package source folder (default: the only one under dist/)')
    .action(async (ref: string, opts: PushCliOptions) => {
      await runPush(ref, opts);
    });
  return cmd;
}
