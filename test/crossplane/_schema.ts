// Test helper: ajv validators built from the real upstream CRDs vendored in imports/crds
// (origins in imports/crds/SOURCES.md); Klutch's XRDs and Compositions are in test/fixtures/klutch.
// Objects with declared `properties` reject unknown fields (as kubectl --validate=strict does),
// unless the schema preserves unknown fields.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import { parse } from 'yaml';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The vendored upstream CRDs: `<folder>/<file>` as listed in imports/crds/SOURCES.md. */
export const CRDS = path.join(ROOT, 'imports', 'crds');
/** Klutch's XRDs and Compositions (test/fixtures/klutch/SOURCES.md). */
export const KLUTCH_FIXTURES = path.join(ROOT, 'test', 'fixtures', 'klutch');

type Schema = Record<string, any>;

function strictify(s: unknown): void {
  if (Array.isArray(s)) {
    s.forEach(strictify);
    return;
  }
  if (typeof s !== 'object' || s === null) return;
  const o = s as Schema;
  if (o.properties && o.additionalProperties === undefined && !o['x-kubernetes-preserve-unknown-fields']) {
    o.additionalProperties = false;
  }
  for (const v of Object.values(o)) strictify(v);
}

const cache = new Map<string, ValidateFunction>();

/**
 * A validator for `file` (relative to imports/crds) at CRD version `version`
 * (default: the storage version). `patch` may adjust the schema first.
 */
export function crdValidator(file: string, version?: string, patch?: (schema: Schema) => void): ValidateFunction {
  const key = `${file}@${version ?? ''}@${patch ? 'p' : ''}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const crd = parse(readFileSync(path.join(CRDS, file), 'utf8')) as Schema;
  const versions = crd.spec.versions as Schema[];
  const v = version ? versions.find((x) => x.name === version) : (versions.find((x) => x.storage) ?? versions[0]);
  if (!v) throw new Error(`${file} has no version ${version}`);
  const schema = JSON.parse(JSON.stringify(v.schema.openAPIV3Schema)) as Schema;
  if (patch) patch(schema);
  strictify(schema);
  // apiVersion/kind/metadata are checked by the API server, not by the schema.
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  const fn = ajv.compile(schema);
  cache.set(key, fn);
  return fn;
}

/** Validates and returns a readable error list ([] when valid). */
export function schemaErrors(file: string, obj: unknown, version?: string, patch?: (schema: Schema) => void): string[] {
  const fn = crdValidator(file, version, patch);
  if (fn(obj)) return [];
  return (fn.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ' ' + JSON.stringify(e.params) : ''}`);
}

/**
 * The P&T input schema, with its enum gap closed: the function accepts string transforms Join
 * and Replace and the ToAdler32 conversion although the CRD enum omits them (as
 * imports/crds/SOURCES.md notes for function-patch-and-transform).
 */
export function ptInputErrors(input: unknown): string[] {
  return schemaErrors('function-patch-and-transform/pt.fn.crossplane.io_resources.yaml', input, 'v1beta1', (schema) => {
    const visit = (s: unknown): void => {
      if (Array.isArray(s)) {
        s.forEach(visit);
        return;
      }
      if (typeof s !== 'object' || s === null) return;
      const o = s as Schema;
      if (o.properties?.string?.properties?.type?.enum) {
        const str = o.properties.string.properties;
        for (const t of ['Join', 'Replace']) if (!str.type.enum.includes(t)) str.type.enum.push(t);
        if (str.convert?.enum && !str.convert.enum.includes('ToAdler32')) str.convert.enum.push('ToAdler32');
      }
      for (const v of Object.values(o)) visit(v);
    };
    visit(schema);
  });
}
