/**
 * The key test: every claim Klutch's XRDs accept is accepted by ours and every claim they reject is
 * rejected — on create and on update (transition rules with oldSelf). Both claim CRDs are derived
 * with the same helper (constructs/validate deriveClaimCrd) and checked with the same validator.
 */
import { describe, expect, it } from '@jest/globals';
import type { CrossplaneTarget } from '../../constructs/validate/index.js';
import { claim, claimValidator, klutchXrd, ourXrds, verdict } from './_equivalence.js';
import { compositionCandidates, parameterSchemas, planCandidates, samples, serviceCandidates, specSchema } from './_corpus.js';

const ours = ourXrds();

const INSTANCES: ReadonlyArray<[kind: string, stem: string]> = [
  ['PostgresqlInstance', 'postgresql'],
  ['KeyvalueInstance', 'keyvalue'],
  ['MariadbInstance', 'mariadb'],
  ['MessagingInstance', 'messaging'],
  ['MongodbInstance', 'mongodb'],
  ['SearchInstance', 'search'],
  ['Logme2Instance', 'logme2'],
  ['PrometheusInstance', 'prometheus'],
];

type Spec = Record<string, unknown>;
interface Mismatch {
  spec: Spec;
  old?: Spec;
  klutch: string[];
  ours: string[];
}

/**
 * Compares verdicts. Klutch rejects every claim without `spec.compositionRef` whose XRD has a rule
 * reading it (its CEL reads `self.compositionRef.name` without `has()`); ours treats such a claim
 * exactly like one naming the XRD's default composition (which Crossplane then applies). So a spec
 * without compositionRef is compared with Klutch's verdict on the same spec naming the default, and
 * anything Klutch accepts as written must stay accepted.
 */
function compare(kind: string, target: CrossplaneTarget = '1.20') {
  const kv = claimValidator(klutchXrd(kind), target);
  const ov = claimValidator(ours.get(kind)!, target);
  const def = (ours.get(kind)!.spec as { defaultCompositionRef?: { name: string } }).defaultCompositionRef!.name;
  const asDefault = (s: Spec): Spec => (s.compositionRef === undefined ? { ...s, compositionRef: { name: def } } : s);
  const mismatches: Mismatch[] = [];
  let accepted = 0;
  let rejected = 0;
  let acceptedWithoutRef = 0;
  const check = (spec: Spec, old?: Spec): boolean => {
    const k = verdict(kv, claim(kind, asDefault(spec)), old && claim(kind, asDefault(old)));
    const asWritten = verdict(kv, claim(kind, spec), old && claim(kind, old));
    const o = verdict(ov, claim(kind, spec), old && claim(kind, old));
    if (k.ok !== o.ok || (asWritten.ok && !o.ok)) mismatches.push({ spec, old, klutch: k.errors.map((e) => e.message), ours: o.errors.map((e) => e.message) });
    if (k.ok) accepted++;
    else rejected++;
    if (o.ok && spec.compositionRef === undefined) acceptedWithoutRef++;
    return k.ok;
  };
  return { check, mismatches, counts: () => ({ accepted, rejected, acceptedWithoutRef }), kv, ov };
}

const withRef = (spec: Spec, ref: { name: string } | undefined): Spec => (ref === undefined ? spec : { ...spec, compositionRef: ref });

describe.each(INSTANCES)('%s: same verdicts as Klutch', (kind, stem) => {
  const k = specSchema(klutchXrd(kind));
  const o = specSchema(ours.get(kind)!);
  const services = serviceCandidates(k, o);
  const plans = planCandidates(k, o);
  const refs = compositionCandidates(klutchXrd(kind), stem);

  // Every service x plan x compositionRef combination, valid or not.
  const created: Spec[] = [];
  for (const service of services) for (const plan of plans) for (const ref of refs) created.push(withRef({ service, plan }, ref));

  it.each<CrossplaneTarget>(['1.20', '2'])('create: every service/plan/composition combination (claim CRD as Crossplane %s derives it)', (target) => {
    const c = compare(kind, target);
    const valid = created.filter((s) => c.check(s));
    expect(c.mismatches).toEqual([]);
    const { accepted, rejected, acceptedWithoutRef } = c.counts();
    expect(accepted).toBeGreaterThan(0);
    expect(rejected).toBeGreaterThan(0);
    // Claims without compositionRef are accepted (the default composition applies).
    expect(acceptedWithoutRef).toBeGreaterThan(0);
    // Every plan of ours is usable with some service and composition (and so is every service).
    for (const p of o.properties.plan.enum as string[]) expect(valid.some((s) => s.plan === p)).toBe(true);
    for (const s of o.properties.service.enum as string[]) expect(valid.some((x) => x.service === s)).toBe(true);
  });

  it('update pairs: plan changes, service changes and composition changes', () => {
    const c = compare(kind);
    const probe = compare(kind);
    const valid = created.filter((s) => probe.check(s));
    let pairs = 0;
    for (const old of valid) {
      for (const plan of plans) {
        c.check({ ...old, plan }, old);
        pairs++;
      }
      for (const service of services) {
        c.check({ ...old, service }, old);
        pairs++;
      }
      for (const ref of refs) {
        c.check(withRef({ service: old.service, plan: old.plan }, ref), old);
        pairs++;
      }
    }
    expect(c.mismatches).toEqual([]);
    expect(pairs).toBeGreaterThan(valid.length);
    const { accepted, rejected } = c.counts();
    expect(accepted).toBeGreaterThan(0);
    expect(rejected).toBeGreaterThan(0);
  });

  it('parameters: every parameter with valid and invalid values, on single and multi-node plans, per composition', () => {
    const c = compare(kind);
    const probe = compare(kind);
    // One accepted base claim per composition and topology.
    const bases: Spec[] = [];
    for (const ref of refs) {
      for (const shape of ['-single-', '-replica-', '-cluster-']) {
        const b = created.find((s) => (s as { compositionRef?: unknown }).compositionRef === ref && String(s.plan).includes(shape) && probe.check(s));
        if (b) bases.push(b);
      }
    }
    expect(bases.length).toBeGreaterThan(0);
    const params = parameterSchemas(k, o);
    expect([...params.values()].every((p) => p.k && p.o)).toBe(true);
    for (const [name, s] of params) {
      for (const value of samples(s.k)) for (const base of bases) c.check({ ...base, parameters: { [name]: value } });
    }
    // Top-level fields besides service/plan (expose, acceptsIncomplete).
    for (const f of Object.keys(k.properties).filter((x) => !['service', 'plan', 'parameters'].includes(x))) {
      for (const value of samples(k.properties[f])) for (const base of bases) c.check({ ...base, [f]: value });
    }
    c.check({ ...bases[0], parameters: { notAParameter: 1 } });
    c.check({ ...bases[0], unknownField: 'x' });
    c.check({ plan: bases[0].plan });
    c.check({ service: bases[0].service });
    expect(c.mismatches).toEqual([]);
    const { accepted, rejected } = c.counts();
    expect(accepted).toBeGreaterThan(0);
    expect(rejected).toBeGreaterThan(0);
  });
});

const OPERATIONS: ReadonlyArray<[kind: string, stem: string, fields: string[]]> = [
  ['ServiceBinding', 'servicebinding', ['instanceRef']],
  ['Backup', 'backup', ['instanceRef']],
  ['Restore', 'restore', ['backupRef', 'instanceRef']],
];

describe.each(OPERATIONS)('%s: same verdicts as Klutch', (kind, stem, refFields) => {
  const k = specSchema(klutchXrd(kind));
  const o = specSchema(ours.get(kind)!);
  const types = [...new Set([...(k.properties.serviceInstanceType.enum as string[]), ...(o.properties.serviceInstanceType.enum as string[]), 'redis'])];
  const refs = compositionCandidates(klutchXrd(kind), stem);
  const refValues: Array<string | undefined> = [undefined, '', 'my-instance'];

  it.each<CrossplaneTarget>(['1.20', '2'])('create: every type x composition x reference combination (Crossplane %s)', (target) => {
    const c = compare(kind, target);
    for (const t of types) {
      for (const ref of refs) {
        const combos: Spec[] = [{}];
        for (const f of refFields) {
          const next: Spec[] = [];
          for (const base of combos) for (const v of refValues) next.push(v === undefined ? base : { ...base, [f]: v });
          combos.splice(0, combos.length, ...next);
        }
        for (const spec of combos) c.check(withRef({ ...spec, serviceInstanceType: t }, ref));
      }
    }
    expect(c.mismatches).toEqual([]);
    const { accepted, rejected, acceptedWithoutRef } = c.counts();
    expect(acceptedWithoutRef).toBeGreaterThan(0);
    expect(accepted).toBeGreaterThan(0);
    expect(rejected).toBeGreaterThan(0);
  });

  it('other fields (acceptsIncomplete, region, policy) with valid and invalid values', () => {
    const c = compare(kind);
    const base = withRef(Object.fromEntries([...refFields.map((f) => [f, 'x']), ['serviceInstanceType', 'postgresql']]), { name: `a8s-${stem}` });
    for (const f of Object.keys(k.properties).filter((x) => ![...refFields, 'serviceInstanceType'].includes(x))) {
      for (const value of samples(k.properties[f])) c.check({ ...base, [f]: value });
    }
    expect(c.check(base)).toBe(true);
    c.check({ ...base, unknownField: 1 });
    expect(c.mismatches).toEqual([]);
    expect(c.counts().rejected).toBeGreaterThan(0);
  });
});
