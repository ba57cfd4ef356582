/**
 * The cache of built runtime images (`<cache>/built/<key>/`): an OCI layout and the build's result, kept under a key
 * of exactly what goes into the images, so a build whose inputs did not change copies the earlier layout instead of
 * installing and packing again. The key ({@link imageBuildKey}) covers the packed package (its tarball's bytes), the
 * runtime peers' versions and the lock file they were resolved from, the base (its reference pinned by digest, or the
 * local base's downloaded inputs per platform), the platforms, node's path in the base, the zlib that compresses the
 * layers and {@link IMAGE_BUILD_FORMAT}. The newest {@link BUILT_CACHE_KEEP} builds are kept.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Bumped when the build writes something else for the same inputs, so earlier builds are not reused. */
export const IMAGE_BUILD_FORMAT = 1;
/** How many built layouts `<cache>/built/` keeps (the newest). */
export const BUILT_CACHE_KEEP = 3;

/** Everything that decides the bytes of a build; equal inputs give equal images (see docs/runtime-images.md). */
export interface ImageBuildInputs {
  /** sha256 of the packed klutch-kit tarball. */
  readonly packageSha256: string;
  /** The runtime peers as installed, `name@version`. */
  readonly peers: readonly string[];
  /** sha256 of the package-lock.json the peers' versions were taken from, or null when there is none (an installed copy). */
  readonly lockSha256: string | null;
  /** The base: `<registry>/<repository>@sha256:<hex>`, or `local` followed by the key of each platform's local base. */
  readonly base: string;
  /** `linux/amd64`, … in build order. */
  readonly platforms: readonly string[];
  /** node's path in the base when given, else null (the base's entrypoint decides). */
  readonly nodePath: string | null;
  /** `process.versions.zlib`: another zlib can compress the same tar to other bytes. */
  readonly zlib: string;
}

/** The key of a build: sha256 of the inputs in a fixed order, with {@link IMAGE_BUILD_FORMAT}. */
export function imageBuildKey(i: ImageBuildInputs): string {
  const fields = [IMAGE_BUILD_FORMAT, i.packageSha256, [...i.peers], i.lockSha256, i.base, [...i.platforms], i.nodePath, i.zlib];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

/** sha256 (hex) of a file's bytes. */
export const fileSha256 = (f: string): string => createHash('sha256').update(readFileSync(f)).digest('hex');

const keyDir = (cacheDir: string, key: string) => join(cacheDir, 'built', key);

/**
 * The build of `key` copied to `output` (replacing an OCI layout there), with its stored result; undefined when the
 * cache has none. `R` is the result as {@link storeBuilt} stored it.
 */
export function restoreBuilt<R extends { layout: string }>(cacheDir: string, key: string, output: string): R | undefined {
  const dir = keyDir(cacheDir, key);
  const resultFile = join(dir, 'result.json');
  if (!existsSync(resultFile)) return undefined;
  const st = statSync(output, { throwIfNoEntry: false });
  if (st && !statSync(join(output, 'oci-layout'), { throwIfNoEntry: false })?.isFile()) {
    throw new Error(`image layout ${JSON.stringify(output)} exists and is not an OCI image layout (no oci-layout file); choose another --output`);
  }
  rmSync(output, { recursive: true, force: true });
  cpSync(join(dir, 'layout'), output, { recursive: true });
  const now = new Date();
  utimesSync(dir, now, now); // the newest keys are kept
  return { ...(JSON.parse(readFileSync(resultFile, 'utf8')) as R), layout: output };
}

/** Stores the layout at `layout` and its result under `key` (whole, by rename); keeps the newest {@link BUILT_CACHE_KEEP}. */
export function storeBuilt(cacheDir: string, key: string, layout: string, result: object): void {
  const built = join(cacheDir, 'built');
  const tmp = join(built, `.tmp-${key}-${process.pid}`);
  try {
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    cpSync(layout, join(tmp, 'layout'), { recursive: true });
    writeFileSync(join(tmp, 'result.json'), JSON.stringify(result, null, 2) + '\n');
    rmSync(keyDir(cacheDir, key), { recursive: true, force: true });
    renameSync(tmp, keyDir(cacheDir, key));
    const keys = readdirSync(built)
      .filter((k) => !k.startsWith('.tmp-'))
      .map((k) => ({ k, t: statSync(join(built, k)).mtimeMs }))
      .sort((a, b) => b.t - a.t);
    for (const { k } of keys.slice(BUILT_CACHE_KEEP)) rmSync(join(built, k), { recursive: true, force: true });
  } catch {
    // a cache that cannot be written only costs the next build its install
    rmSync(tmp, { recursive: true, force: true });
  }
}
