/**
 * Our ApiStyle.NAMESPACED_XR catalogue against Klutch's Crossplane v2 branch (migration-crossplane-v2,
 * test/fixtures/klutch-v2/), with the method of the v1 equivalence test: both XR CRDs are derived
 * with the same helper (deriveXrCrd, Crossplane 2) and every resource of the corpus — every
 * service × plan × `spec.crossplane.compositionRef` (known, unknown, empty and missing), every update
 * pair, every parameter with valid and invalid values — is checked against both with the same
 * validator (schema + CEL with oldSelf).
 *
 * The verdicts are identical except for the differences listed in DIFFERENCES (and explained in
 * docs/dataservice.md, "Namespaced XRs compared with Klutch's v2 branch"); the test asserts each
 * difference occurs exactly where expected and nowhere else.
 */
import { describe, expect, it } from '@jest/globals';
import { ApiStyle } from '../../constructs/dataservice/index.js';
import { claim, klutchV2Xrd, ourXrds, verdict, xrValidator } from './_equivalence.js';
import { compositionCandidates, parameterSchemas, planCandidates, samples, serviceCandidates, specSchema } from './_corpus.js';

const ours = ourXrds(ApiStyle.NAMESPACED_XR);

type Spec = Record<string, any>;

/** Why a resource gets another verdict from us than from Klutch's v2 XRD. */
const Difference = {
  /** `spec.crossplane.compositionRef.name: ''`: Klutch's PostgreSQL rules count it as the a8s default; ours reject it (no Composition has that name). */
  EMPTY_COMPOSITION_NAME: 'empty compositionRef name',
  /** ServiceBinding: Klutch v2 dropped `region`/`policy`; ours keeps the claim's fields. */
  BINDING_FIELDS: 'ServiceBinding fields',
  /**
   * ServiceBinding `writeConnectionSecretToRef.name`: Klutch v2 takes any string; ours a DNS-1123 subdomain ending in
   * `-creds` (the one permission claim of the export brings `*-creds` Secrets to the app cluster).
   */
  CREDENTIALS_SECRET_NAME: 'credentials Secret name',
} as const;
type Difference = (typeof Difference)[keyof typeof Difference];

interface Result {
  readonly sameAccepted: number;
  readonly sameRejected: number;
  readonly differences: Map<Difference, number>;
  readonly unexplained: Array<{ spec: Spec; old?: Spec; klutch: string[]; ours: string[] }>;
}

const withRef = (spec: Spec, ref: { name: string } | undefined): Spec => (ref === undefined ? spec : { ...spec, crossplane: { compositionRef: ref } });

function compare(kind: string) {
  const kv = xrValidator(klutchV2Xrd(kind));
  const ov = xrValidator(ours.get(kind)!);
  const r: Result = { sameAccepted: 0, sameRejected: 0, differences: new Map(), unexplained: [] };
  const classify = (spec: Spec, old?: Spec): Difference | undefined => {
    const names = [spec, old].map((s) => s?.crossplane?.compositionRef?.name);
    if (kind === 'PostgresqlInstance' && names.includes('')) return Difference.EMPTY_COMPOSITION_NAME;
    if (kind === 'ServiceBinding' && ['region', 'policy'].some((f) => f in spec)) return Difference.BINDING_FIELDS;
    const secretName = (spec.writeConnectionSecretToRef as { name?: unknown } | undefined)?.name;
    if (kind === 'ServiceBinding' && secretName !== undefined && !(typeof secretName === 'string' && /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?-creds$/.test(secretName)))
      return Difference.CREDENTIALS_SECRET_NAME;
    return undefined;
  };
  const check = (spec: Spec, old?: Spec): boolean => {
    const k = verdict(kv, claim(kind, spec), old && claim(kind, old));
    const o = verdict(ov, claim(kind, spec), old && claim(kind, old));
    if (k.ok === o.ok) {
      if (k.ok) (r as { sameAccepted: number }).sameAccepted++;
      else (r as { sameRejected: number }).sameRejected++;
    } else {
      const d = classify(spec, old);
      if (d) r.differences.set(d, (r.differences.get(d) ?? 0) + 1);
      else r.unexplained.push({ spec, old, klutch: k.errors.map((e) => e.message), ours: o.errors.map((e) => e.message) });
    }
    return k.ok;
  };
  return { check, r };
}

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

describe('our namespaced XRDs are Klutch v2 XRDs in kind, name and scope', () => {
  it.each([...INSTANCES.map(([k]) => k), 'ServiceBinding', 'Backup', 'Restore'])('%s', (kind) => {
    const k = klutchV2Xrd(kind) as Spec;
    const o = ours.get(kind) as Spec;
    expect([o.apiVersion, o.metadata.name, o.spec.scope, o.spec.names.kind, o.spec.names.plural, o.spec.claimNames]).toEqual([
      k.apiVersion,
      k.metadata.name,
      k.spec.scope,
      k.spec.names.kind,
      k.spec.names.plural,
      undefined,
    ]);
    expect(o.spec.defaultCompositionRef).toEqual(k.spec.defaultCompositionRef);
  });
});

describe.each(INSTANCES)('%s: verdicts vs Klutch v2', (kind, stem) => {
  const k = specSchema(klutchV2Xrd(kind));
  const o = specSchema(ours.get(kind)!);
  const services = serviceCandidates(k, o);
  const plans = planCandidates(k, o);
  const refs = compositionCandidates(klutchV2Xrd(kind), stem);
  const created: Spec[] = [];
  for (const service of services) for (const plan of plans) for (const ref of refs) created.push(withRef({ service, plan }, ref));
  const expectOnly = (r: Result, allowed: Difference[]) => {
    expect(r.unexplained).toEqual([]);
    for (const d of r.differences.keys()) expect(allowed).toContain(d);
    expect(r.sameAccepted).toBeGreaterThan(0);
    expect(r.sameRejected).toBeGreaterThan(0);
  };
  const allowed = kind === 'PostgresqlInstance' ? [Difference.EMPTY_COMPOSITION_NAME] : [];

  it('create: every service/plan/compositionRef combination', () => {
    const { check, r } = compare(kind);
    const valid = created.filter((s) => check(s));
    expectOnly(r, allowed);
    if (kind === 'PostgresqlInstance') expect(r.differences.get(Difference.EMPTY_COMPOSITION_NAME)).toBeGreaterThan(0);
    // A resource without spec.crossplane is accepted (the default composition applies), on both sides.
    expect(valid.some((s) => s.crossplane === undefined)).toBe(true);
  });

  it('update pairs: plan, service and composition changes', () => {
    const probe = compare(kind);
    const valid = created.filter((s) => probe.check(s));
    const { check, r } = compare(kind);
    for (const old of valid) {
      for (const plan of plans) check({ ...old, plan }, old);
      for (const service of services) check({ ...old, service }, old);
      for (const ref of refs) check(withRef({ service: old.service, plan: old.plan }, ref), old);
    }
    expectOnly(r, allowed);
  });

  it('parameters and fields with valid and invalid values, per composition and topology', () => {
    const probe = compare(kind);
    const bases: Spec[] = [];
    for (const ref of refs) {
      for (const shape of ['-single-', '-replica-', '-cluster-']) {
        const b = created.find((s) => s.crossplane?.compositionRef === ref && String(s.plan).includes(shape) && probe.check(s));
        if (b) bases.push(b);
      }
    }
    expect(bases.length).toBeGreaterThan(0);
    const { check, r } = compare(kind);
    for (const [name, s] of parameterSchemas(k, o)) {
      for (const value of samples(s.k ?? s.o)) for (const base of bases) check({ ...base, parameters: { [name]: value } });
    }
    for (const f of Object.keys(k.properties).filter((x) => !['service', 'plan', 'parameters'].includes(x))) {
      for (const value of samples(k.properties[f])) for (const base of bases) check({ ...base, [f]: value });
    }
    check({ ...bases[0], parameters: { notAParameter: 1 } });
    check({ ...bases[0], compositionRef: { name: `a8s-${stem}` } });
    expectOnly(r, allowed);
  });
});

const OPERATIONS: ReadonlyArray<[kind: string, stem: string, fields: string[]]> = [
  ['ServiceBinding', 'servicebinding', ['instanceRef']],
  ['Backup', 'backup', ['instanceRef']],
  ['Restore', 'restore', ['backupRef', 'instanceRef']],
];

describe.each(OPERATIONS)('%s: verdicts vs Klutch v2', (kind, stem, refFields) => {
  const k = specSchema(klutchV2Xrd(kind));
  const o = specSchema(ours.get(kind)!);
  const types = [...new Set([...(k.properties.serviceInstanceType.enum as string[]), ...(o.properties.serviceInstanceType.enum as string[]), 'redis'])];
  const refs = compositionCandidates(klutchV2Xrd(kind), stem);

  it('create: every type × compositionRef × reference combination', () => {
    const { check, r } = compare(kind);
    for (const t of types) {
      for (const ref of refs) {
        let combos: Spec[] = [{}];
        for (const f of refFields) combos = combos.flatMap((b) => [b, { ...b, [f]: '' }, { ...b, [f]: 'my-instance' }]);
        for (const spec of combos) check(withRef({ ...spec, serviceInstanceType: t }, ref));
      }
    }
    expect(r.unexplained).toEqual([]);
    expect(r.differences.size).toBe(0);
    expect(r.sameAccepted).toBeGreaterThan(0);
    expect(r.sameRejected).toBeGreaterThan(0);
  });

  it('other fields with valid and invalid values', () => {
    const { check, r } = compare(kind);
    const base = withRef(Object.fromEntries([...refFields.map((f) => [f, 'x']), ['serviceInstanceType', 'postgresql']]), { name: `a8s-${stem}` });
    expect(check(base)).toBe(true);
    const fields = new Set([...Object.keys(k.properties), ...Object.keys(o.properties)]);
    for (const f of [...fields].filter((x) => ![...refFields, 'serviceInstanceType'].includes(x))) {
      for (const value of samples(k.properties[f] ?? o.properties[f])) check({ ...base, [f]: value });
    }
    check({ ...base, unknownField: 1 });
    expect(r.unexplained).toEqual([]);
    if (kind === 'ServiceBinding') {
      // Klutch v2 rejects region/policy, ours accepts them; Klutch v2 takes any credentials Secret name, ours *-creds names.
      for (const name of ['app-pg-creds', 'orders-creds']) expect(check({ ...base, writeConnectionSecretToRef: { name } })).toBe(true);
      for (const name of ['my-secret', 'app-pg-credentials']) check({ ...base, writeConnectionSecretToRef: { name } });
      expect(r.differences.get(Difference.BINDING_FIELDS)).toBeGreaterThan(0);
      expect(r.differences.get(Difference.CREDENTIALS_SECRET_NAME)).toBeGreaterThan(0);
      expect([...r.differences.keys()].sort()).toEqual([Difference.BINDING_FIELDS, Difference.CREDENTIALS_SECRET_NAME].sort());
    } else expect(r.differences.size).toBe(0);
  });
});
