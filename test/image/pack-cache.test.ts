/**
 * The packed-package cache of `klutch-kit image build` (runtime/image/build.ts packPackage): a clone's tarball is
 * reused while nothing that goes into it changed, and compiled again when a source, a packed file or a compiler
 * option did; the key is remembered by the files' metadata (runtime/image/pack-memo.ts) and computed again when a file
 * appears, changes or goes away. Run on a small clone-shaped package with the real TypeScript compiler and the real npm.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { PACK_CACHE_KEEP, packPackage } from '../../runtime/image/build.js';
import { readTar } from '../../runtime/image/tar.js';
import { writeUnder } from './_tree.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

let dir: string;
let root: string;
let cache: string;
const write = (rel: string, text: string) => writeUnder(root, rel, text);

async function pack(): Promise<{ lines: string[]; files: Map<string, string> }> {
  const lines: string[] = [];
  const dest = mkdtempSync(join(dir, 'out-'));
  const tarball = await packPackage(root, dest, (l) => lines.push(l), cache);
  const files = new Map<string, string>();
  for (const e of readTar(gunzipSync(readFileSync(tarball)), tarball)) if (e.type === 'file') files.set(e.path, e.data.toString('utf8'));
  return { lines, files };
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'klutch-kit-pack-cache-'));
  root = join(dir, 'clone');
  cache = join(dir, 'cache');
  write('package.json', JSON.stringify({ name: 'klutch-kit', version: '0.0.1', type: 'module', files: ['lib/**/*.js', 'NOTES.md'] }));
  write('tsconfig.json', JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: [] } }));
  write('tsconfig.build.json', JSON.stringify({ extends: './tsconfig.json', compilerOptions: { outDir: 'lib', rootDir: '.' }, include: ['runtime/**/*.ts'] }));
  write('runtime/a.ts', 'export const a: number = 1;\n');
  write('NOTES.md', 'one\n');
  mkdirSync(join(root, 'node_modules'));
  symlinkSync(join(REPO, 'node_modules', 'typescript'), join(root, 'node_modules', 'typescript'));
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('packPackage cache', () => {
  it('compiles once per tree: the same tree is served from the cache, a change to what goes in is compiled again', async () => {
    const first = await pack();
    expect(first.lines.some((l) => l.includes('compiling'))).toBe(true);
    expect(first.files.get('package/lib/runtime/a.js')).toContain('export const a = 1');

    const second = await pack();
    expect(second.lines.some((l) => l.includes('compiling'))).toBe(false);
    expect(second.lines.some((l) => l.includes('is cached'))).toBe(true);
    expect(second.files).toEqual(first.files);

    write('runtime/a.ts', 'export const a: number = 2;\n'); // a source
    const third = await pack();
    expect(third.lines.some((l) => l.includes('compiling'))).toBe(true);
    expect(third.files.get('package/lib/runtime/a.js')).toContain('export const a = 2');

    write('NOTES.md', 'two\n'); // a packed file that is not compiled
    expect((await pack()).files.get('package/NOTES.md')).toBe('two\n');

    write(
      'tsconfig.json',
      JSON.stringify({ compilerOptions: { target: 'ES2015', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: [] } }),
    );
    const fifth = await pack();
    expect(fifth.lines.some((l) => l.includes('compiling'))).toBe(true);

    // only the newest keys stay
    expect(readdirSync(join(cache, 'pack')).length).toBeLessThanOrEqual(PACK_CACHE_KEEP);
  }, 120_000);

  it('remembers the key by file metadata: an unchanged tree needs no listing, a new, edited or removed file is noticed', async () => {
    expect((await pack()).lines.some((l) => l.includes('compiling'))).toBe(true);
    const unchanged = await pack();
    expect(unchanged.lines.some((l) => l.includes('no file changed since'))).toBe(true);
    expect(unchanged.lines.some((l) => l.includes('compiling'))).toBe(false);

    write('runtime/sub/b.ts', 'export const b: number = 1;\n'); // a new file in a new folder
    const added = await pack();
    expect(added.lines.some((l) => l.includes('compiling'))).toBe(true);
    expect(added.files.get('package/lib/runtime/sub/b.js')).toContain('export const b = 1');
    expect((await pack()).lines.some((l) => l.includes('no file changed since'))).toBe(true);

    write('runtime/sub/b.ts', 'export const b: number = 2;\n'); // the same size
    expect((await pack()).files.get('package/lib/runtime/sub/b.js')).toContain('export const b = 2');

    rmSync(join(root, 'runtime', 'sub', 'b.ts'));
    const removed = await pack(); // the first tree again: its tarball, found by its key (not by the memo)
    expect(removed.lines.some((l) => l.includes('no file changed since'))).toBe(false);
    expect(removed.files.has('package/lib/runtime/sub/b.js')).toBe(false);
    expect(removed.files.get('package/lib/runtime/a.js')).toContain('export const a = 1');
  }, 180_000);

  it('packs without the cache when told to', async () => {
    const lines: string[] = [];
    await packPackage(root, mkdtempSync(join(dir, 'out-')), (l) => lines.push(l), false);
    expect(lines.some((l) => l.includes('compiling'))).toBe(true);
    expect(existsSync(cache)).toBe(false);
  }, 120_000);
});
