/**
 * Reads a Helm chart's name and version from its folder or packaged `.tgz` (internal to `CrossplaneInstall`).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'yaml';

/** name and version from a chart folder's Chart.yaml or a packaged chart (.tgz). */
export function readChartMeta(chartPath: string): { name?: string; version?: string } | undefined {
  if (!existsSync(chartPath)) return undefined;
  let text: string | undefined;
  if (statSync(chartPath).isDirectory()) {
    const f = path.join(chartPath, 'Chart.yaml');
    if (existsSync(f)) text = readFileSync(f, 'utf8');
  } else {
    text = chartYamlFromTarball(readFileSync(chartPath));
  }
  if (text === undefined) return {};
  const doc = parse(text) as { name?: unknown; version?: unknown } | null;
  return { name: typeof doc?.name === 'string' ? doc.name : undefined, version: doc?.version !== undefined ? String(doc.version) : undefined };
}

/** Finds `<chart>/Chart.yaml` at depth one in a (gzipped) tar archive. */
function chartYamlFromTarball(buf: Buffer): string | undefined {
  let tar: Buffer;
  try {
    tar = buf[0] === 0x1f && buf[1] === 0x8b ? gunzipSync(buf) : buf;
  } catch {
    return undefined;
  }
  let off = 0;
  while (off + 512 <= tar.length) {
    const header = tar.subarray(off, off + 512);
    if (header.every((b) => b === 0)) break;
    const cstr = (b: Buffer) => b.toString('utf8').replace(/\0.*$/s, '');
    const name = cstr(header.subarray(0, 100));
    const prefix = cstr(header.subarray(345, 500));
    const full = prefix ? `${prefix}/${name}` : name;
    const size = parseInt(cstr(header.subarray(124, 136)).trim() || '0', 8);
    const typeflag = String.fromCharCode(header[156]);
    if ((typeflag === '0' || typeflag === '\0') && /^[^/]+\/Chart\.yaml$/.test(full)) {
      return tar.subarray(off + 512, off + 512 + size).toString('utf8');
    }
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return undefined;
}
