// Crossplane package images for the harness's registry. A package image is one layer whose only file is
// `package.yaml`: the package's `crossplane.yaml` followed by its CRDs (`---` separated). The layer is a
// plain tar written here; `crane append` turns it into an image and pushes it, `crane push` pushes an
// existing `.xpkg` (an OCI image tarball).
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/**
 * `package.yaml` of a package source folder (like a function's or provider's `package/`): `crossplane.yaml`
 * first, then every other `*.yaml`/`*.yml` under the folder in path order.
 */
export function packageYamlFromDir(dir: string): string {
  const meta = path.join(dir, 'crossplane.yaml');
  if (!fs.existsSync(meta)) throw new Error(`realinfra: package source ${dir} has no crossplane.yaml`);
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.ya?ml$/i.test(e.name) && p !== meta) files.push(p);
    }
  };
  walk(dir);
  return (
    [meta, ...files]
      .map((f) =>
        fs
          .readFileSync(f, 'utf8')
          .replace(/^---\s*\n/, '')
          .replace(/\s+$/, ''),
      )
      .join('\n---\n') + '\n'
  );
}

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

/** A POSIX (ustar) tar holding the given regular files (mode 0644, owner root, mtime 0: reproducible). */
export function tarFiles(files: Readonly<Record<string, string | Buffer>>): Buffer {
  const blocks: Buffer[] = [];
  for (const [name, content] of Object.entries(files)) {
    if (Buffer.byteLength(name) > 100) throw new Error(`realinfra: tar entry name "${name}" is longer than 100 bytes`);
    const data = typeof content === 'string' ? Buffer.from(content) : content;
    const h = Buffer.alloc(512);
    h.write(name, 0, 'utf8');
    h.write(octal(0o644, 8), 100);
    h.write(octal(0, 8), 108);
    h.write(octal(0, 8), 116);
    h.write(octal(data.length, 12), 124);
    h.write(octal(0, 12), 136);
    h.write('        ', 148); // checksum placeholder
    h.write('0', 156);
    h.write('ustar\u000000', 257, 'binary');
    let sum = 0;
    for (const b of h) sum += b;
    h.write(octal(sum, 7) + ' ', 148);
    blocks.push(h, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

async function crane(craneBin: string, args: string[], what: string): Promise<string> {
  try {
    const { stdout } = await execFileAsync(craneBin, args, { timeout: 120_000 });
    return stdout.trim();
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    throw new Error(`realinfra: ${what}: crane ${args.join(' ')} failed: ${(err.stderr ?? err.message).trim()}`, { cause: e });
  }
}

/** Pushes a package whose `package.yaml` is `packageYaml` as `ref`; returns the pushed digest reference. */
export async function pushPackageYaml(craneBin: string, ref: string, packageYaml: string, workDir: string): Promise<string> {
  fs.mkdirSync(workDir, { recursive: true });
  const layer = path.join(workDir, `layer-${process.pid}-${Date.now()}-${Math.random().toString(16).slice(2)}.tar`);
  fs.writeFileSync(layer, tarFiles({ 'package.yaml': packageYaml }));
  try {
    return await crane(craneBin, ['append', '--insecure', '-f', layer, '-t', ref], `pushing package ${ref}`);
  } finally {
    fs.rmSync(layer, { force: true });
  }
}

/** Pushes an `.xpkg` file (an OCI image tarball, as `crossplane xpkg build` writes) as `ref`. */
export async function pushXpkgFile(craneBin: string, ref: string, file: string): Promise<string> {
  if (!fs.existsSync(file)) throw new Error(`realinfra: pushing package ${ref}: ${file} does not exist`);
  return crane(craneBin, ['push', '--insecure', file, ref], `pushing package ${ref}`);
}
