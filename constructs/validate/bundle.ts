/**
 * The schema bundle: the vendored reference CRDs (`imports/crds/`) as one JSON file
 * (`imports/schema-bundle.json`, built by `npm run import`), so validation needs neither the
 * reference folder nor YAML parsing of megabytes of CRDs at run time.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type { JSONSchemaProps } from '../../contract/api/_schema.js';
import { bindingCrds } from '../../contract/api/crds.js';
import { SchemaRegistry, type CrdLike } from './registry.js';
import type { CrossplaneTarget } from './xcrd.js';

/** One CRD of the bundle. */
export interface BundleEntry {
  /** File under `imports/crds/`. */
  readonly file: string;
  /** The Crossplane release for CRDs that exist in several releases. */
  readonly target?: CrossplaneTarget;
  readonly crd: CrdLike;
}

export interface SchemaBundle {
  readonly entries: readonly BundleEntry[];
}

/** Folders of `imports/crds/` that go into the bundle, with their Crossplane release. */
export const BUNDLED_DIRS: ReadonlyArray<{ dir: string; target?: CrossplaneTarget }> = [
  { dir: 'crossplane/v2', target: '2' },
  { dir: 'crossplane/v1.20', target: '1.20' },
  { dir: 'provider-kubernetes' },
  { dir: 'function-patch-and-transform' },
  { dir: 'provider-anynines' },
  { dir: 'prometheus-operator' },
  { dir: 'argo-cd' },
];

/** Removes `description` keys (documentation only) to keep the bundle small. */
export function stripDescriptions<T>(v: T): T {
  if (Array.isArray(v)) return v.map(stripDescriptions) as T;
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      // `description` is a property *name* inside `properties`: keep those.
      if (k === 'description' && typeof x === 'string') continue;
      out[k] = stripDescriptions(x);
    }
    return out as T;
  }
  return v;
}

/**
 * Closes a known gap of function-patch-and-transform's published input schema: the function
 * accepts string transforms `Join` and `Replace` and the conversion `ToAdler32`, which the CRD's
 * enums leave out (see imports/crds/SOURCES.md).
 */
export function patchPatchAndTransformEnums(v: unknown): void {
  if (Array.isArray(v)) v.forEach(patchPatchAndTransformEnums);
  else if (v && typeof v === 'object') {
    const o = v as JSONSchemaProps;
    if (Array.isArray(o.enum)) {
      const e = o.enum as unknown[];
      if (e.includes('TrimPrefix') && e.includes('Regexp')) o.enum = [...e, ...['Join', 'Replace'].filter((x) => !e.includes(x))];
      if (e.includes('ToSha256') && !e.includes('ToAdler32')) o.enum = [...e, 'ToAdler32'];
    }
    Object.values(o).forEach(patchPatchAndTransformEnums);
  }
}

/** Builds the bundle from an `imports/crds` folder. */
export function buildSchemaBundle(crdsDir: string): SchemaBundle {
  const entries: BundleEntry[] = [];
  for (const { dir, target } of BUNDLED_DIRS) {
    const abs = join(crdsDir, dir);
    if (!existsSync(abs)) throw new Error(`schema bundle: folder ${abs} is missing; run \`npx tsx scripts/vendor-reference.ts\` first`);
    for (const f of readdirSync(abs)
      .filter((x) => x.endsWith('.yaml'))
      .sort()) {
      const file = relative(crdsDir, join(abs, f)).split('\\').join('/');
      for (const doc of parseAllDocuments(readFileSync(join(abs, f), 'utf8'))) {
        const crd = doc.toJS() as CrdLike | null;
        if (!crd || crd.kind !== 'CustomResourceDefinition') continue;
        const stripped = stripDescriptions(crd);
        if (dir === 'function-patch-and-transform') patchPatchAndTransformEnums(stripped);
        entries.push({ file, ...(target ? { target } : {}), crd: stripped });
      }
    }
  }
  return { entries };
}

/** Finds `imports/schema-bundle.json` from this module (source tree or `lib/` build). */
export function findBundleFile(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const p = join(dir, 'imports', 'schema-bundle.json');
    if (existsSync(p)) return p;
    dir = dirname(dir);
  }
  throw new Error('schema bundle imports/schema-bundle.json not found next to klutch-kit; run `npm run import`');
}

let cached: SchemaBundle | undefined;

/** Loads the committed bundle (cached). */
export function loadSchemaBundle(): SchemaBundle {
  cached ??= JSON.parse(readFileSync(findBundleFile(), 'utf8')) as SchemaBundle;
  return cached;
}

export interface DefaultRegistryOptions {
  /** Crossplane releases to check Crossplane kinds against. @default ['2', '1.20'] */
  readonly crossplane?: readonly CrossplaneTarget[];
}

/**
 * A registry with every bundled schema (Crossplane 2.x and 1.20, provider-kubernetes,
 * function-patch-and-transform input, provider-anynines, prometheus-operator monitoring kinds) and
 * klutch-kit's binding API.
 */
export function defaultRegistry(opts: DefaultRegistryOptions = {}): SchemaRegistry {
  const targets = opts.crossplane ?? ['2', '1.20'];
  const reg = new SchemaRegistry();
  for (const e of loadSchemaBundle().entries) {
    if (e.target && !targets.includes(e.target)) continue;
    reg.addCrd(e.crd, `bundle:${e.file}`, { target: targets.length > 1 ? e.target : undefined });
  }
  for (const crd of bindingCrds()) reg.addCrd(crd as unknown as CrdLike, 'binding-api');
  return reg;
}
