/**
 * Deterministic tar archives for image layers: entries sorted by path, every missing parent folder
 * added, mtime 0, owner uid/gid 0 unless an entry says otherwise, no user or group names, file
 * modes normalised (0755 for executables, 0644 for other files; see normalMode). Paths that do not fit ustar's
 * 100 + 155 bytes get a PAX header. Also a reader (ustar, GNU long names, PAX) for the tar streams
 * this module reads: `dpkg-deb --fsys-tarfile` output and npm package tarballs.
 */

/** One entry of a layer. `path` is relative, without a leading `./` or `/`, folders without a trailing `/`. */
export type TarEntry =
  | { readonly type: 'file'; readonly path: string; readonly data: Buffer; readonly mode?: number; readonly uid?: number; readonly gid?: number }
  | { readonly type: 'dir'; readonly path: string; readonly mode?: number; readonly uid?: number; readonly gid?: number }
  | { readonly type: 'symlink'; readonly path: string; readonly target: string };

/** `a/./b/` → `a/b`; rejects `..` and empty paths. */
export function cleanPath(p: string): string {
  const parts = p.split('/').filter((s) => s !== '' && s !== '.');
  if (parts.length === 0 || parts.includes('..')) throw new Error(`tar: path ${JSON.stringify(p)} is empty or leaves the archive root`);
  return parts.join('/');
}

/**
 * Files: 0755 when any execute bit is set, else 0644 (special bits kept). Folders: the mode given
 * (0700 for a home, 1777 for /tmp), else 0755.
 */
export function normalMode(type: 'file' | 'dir', mode: number | undefined): number {
  if (type === 'dir') return mode !== undefined ? mode & 0o7777 : 0o755;
  if (mode !== undefined && (mode & 0o7000) !== 0) return mode & 0o7777;
  return mode !== undefined && (mode & 0o111) !== 0 ? 0o755 : 0o644;
}

const octal = (n: number, width: number) => `${n.toString(8).padStart(width - 1, '0')}\0`;

function header(name: string, prefix: string, typeflag: string, size: number, mode: number, uid: number, gid: number, linkname: string): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 'utf8');
  h.write(octal(mode, 8), 100, 'ascii');
  h.write(octal(uid, 8), 108, 'ascii');
  h.write(octal(gid, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(0, 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write(typeflag, 156, 'ascii');
  h.write(linkname, 157, 'utf8');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  h.write(prefix, 345, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

const pad = (n: number) => Buffer.alloc((512 - (n % 512)) % 512);

/** Splits a path into ustar (prefix, name), or undefined when it does not fit. */
function ustarSplit(p: string): [string, string] | undefined {
  if (Buffer.byteLength(p) <= 100) return ['', p];
  for (let i = p.indexOf('/'); i >= 0; i = p.indexOf('/', i + 1)) {
    const prefix = p.slice(0, i);
    const name = p.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100 && name !== '') return [prefix, name];
  }
  return undefined;
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body) + 1;
  while (Buffer.byteLength(`${len}${body}`) !== len) len++;
  return `${len}${body}`;
}

/**
 * The tar of `entries`: sorted by path (byte order), parents added, later duplicates replace earlier
 * ones (so a layer can override a file of the entries before it). Output depends only on the entries.
 */
export function writeTar(entries: Iterable<TarEntry>): Buffer {
  const byPath = new Map<string, TarEntry>();
  for (const e of entries) {
    const path = cleanPath(e.path);
    byPath.set(path, { ...e, path });
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join('/');
      if (!byPath.has(parent)) byPath.set(parent, { type: 'dir', path: parent });
    }
  }
  const sorted = [...byPath.values()].sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  const out: Buffer[] = [];
  for (const e of sorted) {
    const name = e.type === 'dir' ? `${e.path}/` : e.path;
    const link = e.type === 'symlink' ? e.target : '';
    const split = ustarSplit(name);
    const longLink = Buffer.byteLength(link) > 100;
    if (!split || longLink) {
      const pax = Buffer.from((split ? '' : paxRecord('path', name)) + (longLink ? paxRecord('linkpath', link) : ''), 'utf8');
      out.push(header('PaxHeader', '', 'x', pax.length, 0o644, 0, 0, ''), pax, pad(pax.length));
    }
    const [prefix, short] = split ?? ['', name.slice(0, 99)];
    const shortLink = longLink ? link.slice(0, 99) : link;
    if (e.type === 'file') {
      out.push(header(short, prefix, '0', e.data.length, normalMode('file', e.mode), e.uid ?? 0, e.gid ?? 0, ''), e.data, pad(e.data.length));
    } else if (e.type === 'dir') {
      out.push(header(short, prefix, '5', 0, normalMode('dir', e.mode), e.uid ?? 0, e.gid ?? 0, ''));
    } else {
      out.push(header(short, prefix, '2', 0, 0o777, 0, 0, shortLink));
    }
  }
  out.push(Buffer.alloc(1024));
  return Buffer.concat(out);
}

const str = (b: Buffer) => b.toString('utf8').replace(/\0.*$/s, '');
const num = (b: Buffer) => parseInt(b.toString('ascii').replace(/\0.*$/s, '').trim() || '0', 8);

function parsePax(data: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let off = 0;
  while (off < data.length) {
    const sp = data.indexOf(0x20, off);
    if (sp < 0) break;
    const len = parseInt(data.subarray(off, sp).toString('ascii'), 10);
    if (!(len > 0)) break;
    const rec = data.subarray(sp + 1, off + len - 1).toString('utf8');
    const eq = rec.indexOf('=');
    if (eq > 0) out[rec.slice(0, eq)] = rec.slice(eq + 1);
    off += len;
  }
  return out;
}

/**
 * The entries of a tar: files (hard links resolved to a copy of their target), folders and
 * symlinks, with their modes and owners. Other types (devices, FIFOs) are skipped. `where` names the archive in errors.
 */
export function readTar(tar: Buffer, where = 'tar'): TarEntry[] {
  const out: TarEntry[] = [];
  const files = new Map<string, Buffer>();
  let off = 0;
  let longName: string | undefined;
  let longLink: string | undefined;
  while (off + 512 <= tar.length) {
    const h = tar.subarray(off, off + 512);
    if (h.every((b) => b === 0)) break;
    const size = num(h.subarray(124, 136));
    const type = String.fromCharCode(h[156] || 48);
    const data = tar.subarray(off + 512, off + 512 + size);
    off += 512 + Math.ceil(size / 512) * 512;
    if (type === 'L') {
      longName = str(data);
      continue;
    }
    if (type === 'K') {
      longLink = str(data);
      continue;
    }
    if (type === 'x') {
      const pax = parsePax(data);
      if (pax['path'] !== undefined) longName = pax['path'];
      if (pax['linkpath'] !== undefined) longLink = pax['linkpath'];
      continue;
    }
    if (type === 'g') continue;
    const prefix = str(h.subarray(345, 500));
    const rawName = longName ?? (prefix ? `${prefix}/${str(h.subarray(0, 100))}` : str(h.subarray(0, 100)));
    const link = longLink ?? str(h.subarray(157, 257));
    longName = longLink = undefined;
    const mode = num(h.subarray(100, 108));
    const uid = num(h.subarray(108, 116));
    const gid = num(h.subarray(116, 124));
    const owner = uid !== 0 || gid !== 0 ? { uid, gid } : {};
    const stripped = rawName.replace(/^\.?\/+/, '').replace(/\/+$/, '');
    if (stripped === '' || stripped === '.') continue;
    const path = cleanPath(stripped);
    if (type === '0' || type === '7') {
      const buf = Buffer.from(data);
      files.set(path, buf);
      out.push({ type: 'file', path, data: buf, mode, ...owner });
    } else if (type === '5') out.push({ type: 'dir', path, mode, ...owner });
    else if (type === '2') out.push({ type: 'symlink', path, target: link });
    else if (type === '1') {
      const target = files.get(cleanPath(link.replace(/^\.?\/+/, '')));
      if (!target) throw new Error(`${where}: hard link ${path} → ${link}: target not seen before it`);
      out.push({ type: 'file', path, data: target, mode, ...owner });
    }
  }
  return out;
}
