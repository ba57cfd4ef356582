/**
 * Builds the equivalence corpus for one claim kind from Klutch's XRD and ours: candidate services,
 * plans and composition names (enums and the string literals of Klutch's CEL rules, plus unknown
 * values), parameter sample values by type, and update pairs.
 */
import type { CompositeResourceDefinitionLike } from '../../constructs/validate/index.js';

type Schema = Record<string, any>;

export function specSchema(xrd: CompositeResourceDefinitionLike): Schema {
  const v = (xrd.spec.versions as Array<Record<string, any>>).find((x) => x.referenceable) ?? xrd.spec.versions[0];
  return (v as Record<string, any>).schema.openAPIV3Schema.properties.spec as Schema;
}

/** Every string literal in the CEL rules of a schema (recursively). */
export function ruleLiterals(s: unknown): string[] {
  const out = new Set<string>();
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) n.forEach(walk);
    else if (n && typeof n === 'object') {
      for (const [k, v] of Object.entries(n)) {
        if (k === 'x-kubernetes-validations') {
          for (const r of v as Array<{ rule: string }>) for (const m of r.rule.matchAll(/'([^'\\]*)'/g)) out.add(m[1]);
        } else walk(v);
      }
    }
  };
  walk(s);
  return [...out];
}

const union = (...lists: ReadonlyArray<readonly unknown[] | undefined>): string[] => [
  ...new Set(lists.flatMap((l) => (l ?? []).filter((x): x is string => typeof x === 'string'))),
];

/** Candidate `spec.service` values. */
export function serviceCandidates(k: Schema, o: Schema): string[] {
  return union(
    k.properties.service.enum,
    o.properties.service.enum,
    ruleLiterals(k).filter((x) => x.startsWith('a9s-')),
    ['a9s-unknown1'],
  );
}

/** Candidate `spec.plan` values. */
export function planCandidates(k: Schema, o: Schema): string[] {
  const shaped = (x: string) => /-(single|replica|cluster)-/.test(x);
  const known = union(k.properties.plan.enum, o.properties.plan.enum, ruleLiterals(k).filter(shaped));
  const prefix = known[0].split('-')[0];
  return union(known, [`${prefix}-single-huge`, `${prefix}-replica-tiny-ssl`, 'bogus-plan']);
}

/** Candidate `spec.compositionRef` values (undefined = not set). */
export function compositionCandidates(k: CompositeResourceDefinitionLike, stem: string): Array<{ name: string } | undefined> {
  const names = union([`a8s-${stem}`, `a9s-${stem}`, (k.spec as Record<string, any>).defaultCompositionRef?.name, 'custom-composition', '']);
  return [undefined, ...names.map((name) => ({ name }))];
}

/** Sample values for a parameter schema: valid and invalid, by type, enum and bounds. */
export function samples(s: Schema | undefined): unknown[] {
  if (!s) return ['x', 1];
  const out: unknown[] = [];
  const t = s.type ?? (s['x-kubernetes-int-or-string'] ? 'int-or-string' : undefined);
  if (s.enum) out.push(...s.enum, 'NOT-IN-ENUM');
  switch (t) {
    case 'string':
      out.push(
        '',
        'x',
        '0',
        'dynamic',
        '10mb',
        '5g',
        '0kb',
        '[]',
        "['save 900 1']",
        "['save 900 1','save 300 10']",
        "['save 0 1']",
        'KEA',
        'Kx',
        'zz',
        'on',
        42,
      );
      break;
    case 'integer':
      out.push(-2, -1, 0, 1, 9, 10, 255, 256, 1024, 1025, 65535, 65536, 1799999, 1800000, 1.5, 'x');
      break;
    case 'number':
      out.push(-1, -0.5, 0, 1.5, 100, 'x');
      break;
    case 'boolean':
      out.push(true, false, 'yes');
      break;
    case 'int-or-string':
      out.push('off', 'on', -1, 0, 5, true);
      break;
    case 'array': {
      const items = samples(s.items).slice(0, 3);
      out.push([], ...items.map((i) => [i]), 'not-an-array');
      break;
    }
    case 'object': {
      out.push({}, 'not-an-object');
      for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
        for (const x of samples(v)) out.push({ [k]: x });
      }
      if (s['x-kubernetes-preserve-unknown-fields']) out.push({ anything: 1 });
      break;
    }
    default:
      if (s.anyOf) out.push('off', 'on', -1, 0, 5, true);
  }
  return [...new Map(out.map((v) => [JSON.stringify(v), v])).values()];
}

/** Names of the parameters (`spec.parameters.*`) of both schemas with their schemas. */
export function parameterSchemas(k: Schema, o: Schema): Map<string, { k?: Schema; o?: Schema }> {
  const out = new Map<string, { k?: Schema; o?: Schema }>();
  for (const [name, s] of Object.entries((k.properties.parameters?.properties ?? {}) as Record<string, Schema>)) out.set(name, { k: s });
  for (const [name, s] of Object.entries((o.properties.parameters?.properties ?? {}) as Record<string, Schema>))
    out.set(name, { ...(out.get(name) ?? {}), o: s });
  return out;
}
