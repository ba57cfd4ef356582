/** `klutch-kit package build` on a synthesized package source; source and reference errors. */
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findPackageSources, resolveSource, runBuild, runPush } from '../../runtime/cli/package.js';
import { buildPackageImage, packageYamlFromDir, readXpkg } from '../../runtime/xpkg/image.js';

const dir = mkdtempSync(join(tmpdir(), 'klutch-xpkg-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const lines: string[] = [];
const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };

function source(cluster: string, name: string): string {
  const src = join(dir, 'dist', `${cluster}.packages`, name);
  mkdirSync(src, { recursive: true });
  writeFileSync(join(src, 'crossplane.yaml'), `apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: ${name}\n`);
  writeFileSync(join(src, 'composition.yaml'), 'apiVersion: apiextensions.crossplane.io/v1\nkind: Composition\nmetadata:\n  name: c\n');
  return src;
}

describe('klutch-kit package', () => {
  it('build writes <source>.xpkg with the image of the source', () => {
    const src = source('control-plane', 'klutch-catalogue');
    const { image, file } = runBuild(src, {}, io);
    expect(file).toBe(`${src}.xpkg`);
    expect(readXpkg(readFileSync(file)).digest).toBe(image.digest);
    expect(image.digest).toBe(buildPackageImage(packageYamlFromDir(src)).digest);
    expect(lines.at(-1)).toContain(image.digest);
  });

  it('finds the only package source under an outdir, and says what is wrong otherwise', () => {
    expect(findPackageSources(join(dir, 'dist'))).toEqual([join(dir, 'dist', 'control-plane.packages', 'klutch-catalogue')]);
    expect(resolveSource(undefined, join(dir, 'dist'))).toBe(join(dir, 'dist', 'control-plane.packages', 'klutch-catalogue'));
    expect(() => resolveSource(undefined, join(dir, 'empty'))).toThrow(/no package source under .*empty/);
    source('other', 'second');
    expect(() => resolveSource(undefined, join(dir, 'dist'))).toThrow(/several package sources under/);
  });

  it('push rejects a bad reference and conflicting options before any request', async () => {
    const src = join(dir, 'dist', 'control-plane.packages', 'klutch-catalogue');
    await expect(runPush('catalogue', { from: src }, io)).rejects.toThrow('image reference "catalogue" is not "<registry>/<repository>:<tag>"');
    await expect(runPush('127.0.0.1:1/k/c:v1', { from: src, file: 'x.xpkg' }, io)).rejects.toThrow('give either --file or --from, not both');
  });
});
