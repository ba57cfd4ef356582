/**
 * Wire compatibility of klutch-kit's binding CRDs (generated from contract/api) with Klutch's
 * (imports/crds/klutch-reference, byte copies of anynines/klutchio `bind/deploy/crd/`):
 *
 * 1. structurally, the two schemas are the same once descriptions are ignored: same properties,
 *    types, enums, defaults, patterns, required lists, CEL rules, list types, printer columns,
 *    names, short names, categories, scope and subresources;
 * 2. behaviourally, every generated example object (valid bases and hundreds of single-field
 *    mutations, plus hand-written CEL cases and update pairs) gets the same verdict from both
 *    schemas, with the same field paths, using the same validator.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import {
  apiServiceExportKind,
  apiServiceNamespaceKind,
  bindingKinds,
  crdFileName,
  renderBindingCrdFiles,
  type JSONSchemaProps,
} from '../../contract/api/index.js';
import { SchemaValidator } from '../../constructs/validate/index.js';
import { baseObject, celCases, mutations, type Example } from './_examples.js';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..');

function klutchCrd(file: string): { spec: { versions: Array<{ schema: { openAPIV3Schema: JSONSchemaProps } }> } } & Record<string, unknown> {
  return parse(readFileSync(join(root, 'imports', 'crds', 'klutch-reference', file), 'utf8'));
}

function stripDocs(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripDocs);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (!(k === 'description' && typeof x === 'string')) out[k] = stripDocs(x);
    return out;
  }
  return v;
}

/** Paths where two JSON values differ. */
function diff(a: unknown, b: unknown, path = ''): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => diff((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}/${k}`));
  }
  return [`${path}: ours=${JSON.stringify(a)} klutch=${JSON.stringify(b)}`];
}

describe('structural comparison with Klutch CRDs', () => {
  it.each(bindingKinds.map((k) => [k.kind, k] as const))('%s: same CRD apart from descriptions', (_kind, k) => {
    const ours = k.crd();
    const theirs = klutchCrd(crdFileName(ours));
    delete (theirs.metadata as Record<string, unknown>).annotations; // controller-gen version stamp
    const d = diff(stripDocs(ours), stripDocs(theirs));
    if (k === apiServiceExportKind) {
      // Klutch's message for the name rule is a copy-paste slip ("informerScope is immutable");
      // ours says what the rule checks. The rule itself is identical.
      expect(d).toEqual([
        '/spec/versions/0/schema/openAPIV3Schema/x-kubernetes-validations/0/message: ours="metadata.name must be <spec.names.plural>.<spec.group>" klutch="informerScope is immutable"',
      ]);
    } else {
      expect(d).toEqual([]);
    }
  });

  it('the committed contract/api/crds files are what contract/api renders', () => {
    for (const [file, text] of renderBindingCrdFiles()) {
      expect(readFileSync(join(root, 'contract', 'api', 'crds', file), 'utf8')).toBe(text);
    }
  });

  it('the diff itself detects a changed enum (the comparison can fail)', () => {
    const ours = stripDocs(apiServiceExportKind.crd()) as { spec: { versions: Array<{ schema: { openAPIV3Schema: JSONSchemaProps } }> } };
    const theirs = structuredClone(ours);
    theirs.spec.versions[0].schema.openAPIV3Schema.properties!.spec.properties!.scope.enum = ['Cluster'];
    expect(diff(ours, theirs)).toEqual(['/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/scope/enum/1: ours="Namespaced" klutch=undefined']);
  });
});

describe('behavioural comparison with Klutch CRDs (same validator, same verdicts)', () => {
  const byKind = new Map(
    bindingKinds.map((k) => {
      const klutchSchema = klutchCrd(crdFileName(k.crd())).spec.versions[0].schema.openAPIV3Schema;
      return [k, { ours: new SchemaValidator(k.openAPIV3Schema()), theirs: new SchemaValidator(klutchSchema), klutchSchema }] as const;
    }),
  );

  const counts = { valid: 0, invalid: 0 };
  const compare = (k: (typeof bindingKinds)[number], ex: Example) => {
    const v = byKind.get(k)!;
    const a = v.ours.validate(ex.obj, ex.old);
    const b = v.theirs.validate(ex.obj, ex.old);
    const verdict = (errs: readonly unknown[]) => (errs.length === 0 ? 'valid' : 'invalid');
    const got = { label: ex.label, ours: verdict(a), klutch: verdict(b), paths: a.map((e) => e.path).sort() };
    expect(got).toEqual({ label: ex.label, ours: verdict(b), klutch: ex.expect ?? verdict(b), paths: b.map((e) => e.path).sort() });
    counts[verdict(a)]++;
  };

  it.each(bindingKinds.map((k) => [k.kind, k] as const))('%s: generated bases and single-field mutations', (_kind, k) => {
    const { klutchSchema } = byKind.get(k)!;
    let n = 0;
    for (const full of [false, true]) {
      const base = baseObject(k, klutchSchema, full);
      compare(k, { label: `${k.kind} ${full ? 'full' : 'minimal'} base`, obj: base, expect: 'valid' });
      for (const m of mutations(klutchSchema, base)) {
        compare(k, m);
        n++;
      }
    }
    // Every kind gets a meaningful number of mutations (the generator reached its fields).
    expect(n).toBeGreaterThan(k === apiServiceNamespaceKind ? 3 : 20);
  });

  it('hand-written CEL, default and update cases', () => {
    for (const { kind, ex } of celCases()) compare(kind, ex);
  });

  it('covered both verdicts many times', () => {
    expect(counts.valid).toBeGreaterThan(25);
    expect(counts.invalid).toBeGreaterThan(500);
  });
});
