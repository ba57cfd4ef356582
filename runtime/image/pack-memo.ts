/**
 * A memo of a clone's pack cache key (./build.ts packCacheKey) by file metadata: the key costs an `npm pack --dry-run`
 * and a `tsc --listFilesOnly` (seconds of CPU), so it is kept beside the files it was computed from and their
 * metadata (size, mtime, ctime, inode), plus every folder above them and every folder under the build's include
 * roots: a file that changed, appeared or went away changes one of those (a folder's mtime moves when an entry is
 * added, removed or renamed in it). While none moved, the tree's packed tarball is found without either command;
 * otherwise the key is computed again. One memo per clone, `<cache>/pack-trees/<hash of its path>.json`.
 */
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** What a memo remembers: the pack key, the tarball's file name, the files both came from and their fingerprint. */
export interface PackMemo {
  readonly key: string;
  readonly filename: string;
  /** Absolute paths of the files the key was computed from. */
  readonly files: readonly string[];
  readonly fingerprint: string;
}

const memoFile = (cacheDir: string, root: string) =>
  join(cacheDir, 'pack-trees', `${createHash('sha256').update(resolve(root)).digest('hex').slice(0, 32)}.json`);

/** Folders under the build's include roots (`tsconfig.build.json` `include`, up to the first wildcard), without node_modules, lib, dist. */
function includeFolders(root: string): string[] {
  let include: unknown;
  try {
    include = (JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')) as { include?: unknown }).include;
  } catch {
    return [];
  }
  const out: string[] = [];
  const walk = (dir: string) => {
    out.push(dir);
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) if (e.isDirectory() && !['node_modules', 'lib', 'dist'].includes(e.name)) walk(join(dir, e.name));
  };
  for (const pattern of Array.isArray(include) ? include : []) {
    const head = String(pattern)
      .split('/')
      .filter((s) => s !== '' && s !== '.');
    const fixed = head.slice(0, head.findIndex((s) => s.includes('*')) === -1 ? head.length : head.findIndex((s) => s.includes('*')));
    if (fixed.length > 0) walk(join(root, ...fixed));
  }
  return out;
}

/** The folders above `file` up to `root`, or for a file under a node_modules folder, up to that folder. */
function folderChain(root: string, file: string): string[] {
  const out: string[] = [];
  const nm = file.lastIndexOf(`${sep}node_modules${sep}`);
  const stop = nm >= 0 ? file.slice(0, nm + `${sep}node_modules`.length) : resolve(root);
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    out.push(dir);
    if (dir === stop || dirname(dir) === dir) break;
  }
  return out;
}

/** The metadata fingerprint of `files`, the folders above them and the folders under the include roots. */
export function treeFingerprint(root: string, files: readonly string[]): string {
  const paths = new Set<string>([...files, ...includeFolders(root)]);
  for (const f of files) for (const d of folderChain(root, f)) paths.add(d);
  const hash = createHash('sha256').update('klutch-kit-pack-memo-v1\0');
  for (const p of [...paths].sort()) {
    const st = lstatSync(p, { throwIfNoEntry: false, bigint: true });
    hash.update(`${relative(root, p)}\0${st ? `${st.isDirectory() ? 'd' : 'f'} ${st.size} ${st.mtimeNs} ${st.ctimeNs} ${st.ino}` : 'missing'}\n`);
  }
  return hash.digest('hex');
}

/** The memo of `root` when none of its files and folders moved since it was written; else undefined. */
export function recallPackKey(cacheDir: string, root: string): PackMemo | undefined {
  let memo: PackMemo;
  try {
    memo = JSON.parse(readFileSync(memoFile(cacheDir, root), 'utf8')) as PackMemo;
  } catch {
    return undefined;
  }
  if (!Array.isArray(memo.files) || typeof memo.key !== 'string' || typeof memo.filename !== 'string') return undefined;
  return treeFingerprint(root, memo.files) === memo.fingerprint ? memo : undefined;
}

/**
 * Remembers `key` and `filename` for `root`, computed from `files`. `before` is the fingerprint taken before the key
 * was computed: when a file moved while it was (an edit during the build), nothing is remembered.
 */
export function rememberPackKey(cacheDir: string, root: string, memo: Omit<PackMemo, 'fingerprint'>, before: string): void {
  try {
    const fingerprint = treeFingerprint(root, memo.files);
    if (fingerprint !== before) return;
    const f = memoFile(cacheDir, root);
    mkdirSync(dirname(f), { recursive: true });
    writeFileSync(`${f}.tmp-${process.pid}`, JSON.stringify({ ...memo, files: [...memo.files], fingerprint }));
    renameSync(`${f}.tmp-${process.pid}`, f);
  } catch {
    // a memo that cannot be written only costs the next build its key
  }
}
