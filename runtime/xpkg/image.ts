/**
 * Crossplane package (`.xpkg`) images, written by hand: an OCI image with one layer, a tar holding
 * `package.yaml` (the package's `crossplane.yaml` followed by its objects, `---`-separated). The layer
 * descriptor carries the annotation `io.crossplane.xpkg: base` and the config the label
 * `io.crossplane.xpkg:<layer digest>: base`, as `crossplane xpkg build` writes them, so Crossplane's
 * package manager reads that layer directly. Everything is deterministic (no timestamps): the same
 * package source gives the same digests.
 *
 * Files: `buildPackageImage()` (bytes and digests), `writeXpkg()` / `readXpkg()` (the `.xpkg` file:
 * a `docker save`-style tarball as go-containerregistry's `tarball` package writes it, what
 * `crossplane xpkg push -f` reads), `packageYamlFromDir()` (a package source folder → package.yaml).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { parseAllDocuments } from 'yaml';

export const OCI_MANIFEST_MEDIA_TYPE = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_CONFIG_MEDIA_TYPE = 'application/vnd.oci.image.config.v1+json';
export const OCI_LAYER_MEDIA_TYPE = 'application/vnd.oci.image.layer.v1.tar+gzip';
/** Annotation (on the layer descriptor) and label prefix (in the config) marking the package layer. */
export const XPKG_LAYER_ANNOTATION = 'io.crossplane.xpkg';
export const XPKG_BASE_LAYER = 'base';
/** Name of the file in the layer. */
export const PACKAGE_FILE = 'package.yaml';
/** The metadata file of a package source folder. */
export const PACKAGE_META_FILE = 'crossplane.yaml';

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly annotations?: Record<string, string>;
}

/** A built package image: every blob with its digest. */
export interface PackageImage {
  /** The package.yaml text. */
  readonly packageYaml: string;
  /** Uncompressed layer (tar) and its digest (the config's diff_id). */
  readonly layerTar: Buffer;
  readonly diffId: string;
  /** Compressed layer (gzip) and its descriptor. */
  readonly layer: Buffer;
  readonly layerDescriptor: Descriptor;
  readonly config: Buffer;
  readonly configDescriptor: Descriptor;
  readonly manifest: Buffer;
  /** Digest of the manifest (the image digest, `<ref>@<digest>`). */
  readonly digest: string;
}

export const sha256 = (b: Buffer | string): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** A ustar archive of regular files (mode 0644, uid/gid 0, mtime 0). */
export function tarFiles(files: ReadonlyArray<{ name: string; data: Buffer }>): Buffer {
  const blocks: Buffer[] = [];
  for (const f of files) {
    if (Buffer.byteLength(f.name) > 100) throw new Error(`tar: file name ${JSON.stringify(f.name)} is longer than 100 bytes`);
    const h = Buffer.alloc(512);
    h.write(f.name, 0, 'utf8');
    h.write('0000644\0', 100, 'ascii');
    h.write('0000000\0', 108, 'ascii');
    h.write('0000000\0', 116, 'ascii');
    h.write(`${f.data.length.toString(8).padStart(11, '0')}\0`, 124, 'ascii');
    h.write('00000000000\0', 136, 'ascii');
    h.write('        ', 148, 'ascii'); // checksum placeholder
    h.write('0', 156, 'ascii');
    h.write('ustar\0', 257, 'ascii');
    h.write('00', 263, 'ascii');
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
    blocks.push(h, f.data, Buffer.alloc((512 - (f.data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

/** The regular files of a ustar archive. */
export function untarFiles(tar: Buffer): Array<{ name: string; data: Buffer }> {
  const out: Array<{ name: string; data: Buffer }> = [];
  let off = 0;
  while (off + 512 <= tar.length) {
    const h = tar.subarray(off, off + 512);
    if (h.every((b) => b === 0)) break;
    const name = h.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '');
    const prefix = h.subarray(345, 500).toString('utf8').replace(/\0.*$/s, '');
    const size = parseInt(h.subarray(124, 136).toString('ascii').replace(/\0.*$/s, '').trim() || '0', 8);
    const type = String.fromCharCode(h[156] || 48);
    off += 512;
    if (type === '0') out.push({ name: prefix ? `${prefix}/${name}` : name, data: Buffer.from(tar.subarray(off, off + size)) });
    off += Math.ceil(size / 512) * 512;
  }
  return out;
}

/** package.yaml from the metadata text and the object texts: `---`-separated documents. */
export function joinPackageYaml(meta: string, objects: readonly string[]): string {
  const docs = [meta, ...objects].map((d) => d.replace(/^---\s*\n/, '').trimEnd());
  return `${docs.map((d) => `---\n${d}\n`).join('')}`;
}

/**
 * package.yaml of a package source folder: `crossplane.yaml` first, then every other `*.yaml` /
 * `*.yml` file of the folder tree in path order. Throws naming the folder when `crossplane.yaml` is
 * missing or is not a `meta.pkg.crossplane.io` package, and naming the file of a document that is
 * not a Kubernetes object.
 */
export function packageYamlFromDir(dir: string): string {
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new Error(`package source ${JSON.stringify(dir)} is not a directory`);
  const metaPath = join(dir, PACKAGE_META_FILE);
  if (!statSync(metaPath, { throwIfNoEntry: false })?.isFile()) {
    throw new Error(`package source ${JSON.stringify(dir)} has no ${PACKAGE_META_FILE} (synth writes package sources to <outdir>/<cluster>.packages/<name>/)`);
  }
  const meta = readFileSync(metaPath, 'utf8');
  const metaDocs = parseAllDocuments(meta)
    .map((d) => d.toJS() as Record<string, any> | null)
    .filter((d) => d);
  if (metaDocs.length !== 1 || !/^meta\.pkg\.crossplane\.io\//.test(String(metaDocs[0]!.apiVersion))) {
    throw new Error(
      `${metaPath}: must hold exactly one meta.pkg.crossplane.io package (Configuration, Provider or Function), got ${JSON.stringify(metaDocs.map((d) => `${d!.apiVersion}/${d!.kind}`))}`,
    );
  }
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.name.startsWith('.')) continue;
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.ya?ml$/i.test(e.name) && p !== metaPath) files.push(p);
    }
  };
  walk(dir);
  const objects: string[] = [];
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    parseAllDocuments(text).forEach((doc, i) => {
      if (doc.errors.length > 0) throw new Error(`${f} document ${i + 1}: ${doc.errors[0]!.message}`);
      const o = doc.toJS() as Record<string, unknown> | null;
      if (o === null || o === undefined) return;
      if (typeof o.apiVersion !== 'string' || typeof o.kind !== 'string')
        throw new Error(`${f} document ${i + 1} is not a Kubernetes object (needs apiVersion and kind)`);
      objects.push(String(doc).trimEnd());
    });
  }
  return joinPackageYaml(meta.trimEnd(), objects);
}

const json = (o: unknown): Buffer => Buffer.from(JSON.stringify(o));

/** Builds the package image of a package.yaml. */
export function buildPackageImage(packageYaml: string): PackageImage {
  const layerTar = tarFiles([{ name: PACKAGE_FILE, data: Buffer.from(packageYaml, 'utf8') }]);
  const diffId = sha256(layerTar);
  const layer = gzipSync(layerTar, { level: 9 });
  const layerDescriptor: Descriptor = {
    mediaType: OCI_LAYER_MEDIA_TYPE,
    digest: sha256(layer),
    size: layer.length,
    annotations: { [XPKG_LAYER_ANNOTATION]: XPKG_BASE_LAYER },
  };
  const config = json({
    architecture: '',
    os: '',
    config: { Labels: { [`${XPKG_LAYER_ANNOTATION}:${layerDescriptor.digest}`]: XPKG_BASE_LAYER } },
    rootfs: { type: 'layers', diff_ids: [diffId] },
  });
  const configDescriptor: Descriptor = { mediaType: OCI_CONFIG_MEDIA_TYPE, digest: sha256(config), size: config.length };
  const manifest = json({ schemaVersion: 2, mediaType: OCI_MANIFEST_MEDIA_TYPE, config: configDescriptor, layers: [layerDescriptor] });
  return { packageYaml, layerTar, diffId, layer, layerDescriptor, config, configDescriptor, manifest, digest: sha256(manifest) };
}

const hex = (digest: string) => digest.replace(/^sha256:/, '');

/**
 * The `.xpkg` file of an image: a tarball with `manifest.json` (`[{Config, RepoTags, Layers}]`),
 * the config blob named by its digest and the layer as `<hex>.tar.gz` — go-containerregistry's
 * `tarball` layout, which `crossplane xpkg build` writes and `crossplane xpkg push -f` reads. The
 * OCI manifest is kept too (`oci-manifest.json`), so `readXpkg` gives back the same digests.
 */
export function writeXpkg(image: PackageImage, repoTags: readonly string[] = []): Buffer {
  const layerFile = `${hex(image.layerDescriptor.digest)}.tar.gz`;
  return tarFiles([
    { name: 'manifest.json', data: json([{ Config: image.configDescriptor.digest, RepoTags: [...repoTags], Layers: [layerFile] }]) },
    { name: image.configDescriptor.digest, data: image.config },
    { name: layerFile, data: image.layer },
    { name: 'oci-manifest.json', data: image.manifest },
  ]);
}

/** Reads a `.xpkg` file written by `writeXpkg` (or any single-layer tarball image) back into an image. */
export function readXpkg(file: Buffer, where = '.xpkg'): PackageImage {
  const files = new Map(untarFiles(file).map((f) => [f.name, f.data]));
  const m = files.get('manifest.json');
  if (!m) throw new Error(`${where}: not a package image tarball (no manifest.json)`);
  const entries = JSON.parse(m.toString('utf8')) as Array<{ Config: string; Layers: string[] }>;
  if (!Array.isArray(entries) || entries.length !== 1 || entries[0].Layers?.length !== 1) {
    throw new Error(`${where}: expected one image with one layer, got ${JSON.stringify(entries.map((e) => e.Layers))}`);
  }
  const layer = files.get(entries[0].Layers[0]);
  if (!layer) throw new Error(`${where}: layer ${entries[0].Layers[0]} is missing`);
  const layerTar = layer[0] === 0x1f && layer[1] === 0x8b ? gunzipSync(layer) : layer;
  const pkg = untarFiles(layerTar).find((f) => f.name === PACKAGE_FILE || f.name === `./${PACKAGE_FILE}`);
  if (!pkg) throw new Error(`${where}: the layer holds no ${PACKAGE_FILE}`);
  const rebuilt = buildPackageImage(pkg.data.toString('utf8'));
  // Only images this module wrote are byte-identical when rebuilt; others are re-packed.
  return rebuilt;
}
