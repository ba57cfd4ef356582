/**
 * Sample claims for every API of a Catalogue, with the verdict each should get — derived from the
 * catalogue's own model (services, plans and their upgrade graph, backends and what they serve,
 * parameters and their restrictions, the update policy of each data service), NOT from the CEL
 * rules or any validator: the API server evaluating the generated schema + CEL must reach the
 * same verdicts.
 *
 * Cases: creates (valid and invalid) and update pairs (the old object is created for real, the new
 * one dry-run applied over it): plan upgrades, downgrades, topology changes, flag flips, service
 * changes, and no-op updates.
 */
import {
  backup,
  Catalogue,
  CATALOGUE_SERVICES,
  keyvalue,
  logme2,
  mariadb,
  messaging,
  mongodb,
  postgresql,
  prometheus,
  restore,
  search,
  serviceBinding,
  type CatalogueService,
  type OperationBackend,
} from '../../../constructs/catalogue/index.js';
import { samples } from '../../catalogue/_corpus.js';
import {
  ParameterLocation,
  PlanChange,
  TopologyChange,
  type DataService,
  type DataServiceProps,
  type Parameter,
  type ParameterSchema,
} from '../../../constructs/dataservice/index.js';

type Spec = Record<string, unknown>;

/** One sample claim (or update pair) and the verdict the API server must give. */
export interface ClaimCase {
  /** Readable id, used in failure messages. */
  readonly id: string;
  /** For update pairs: the spec created for real before the update. */
  readonly old?: Spec;
  readonly spec: Spec;
  readonly accept: boolean;
  /** For rejections: a fragment the API server's message must contain (field path or rule message). */
  readonly expect?: string;
  /** What the case exercises, for coverage assertions. */
  readonly tag: string;
}

export interface KindCorpus {
  readonly claimKind: string;
  readonly cases: readonly ClaimCase[];
  /** One accepted spec (for the XR check). */
  readonly validSpec: Spec;
}

const BUILDERS: Record<CatalogueService, () => DataServiceProps> = { postgresql, keyvalue, mariadb, messaging, mongodb, search, logme2, prometheus };

const withRef = (spec: Spec, backend: string): Spec => ({ ...spec, compositionRef: { name: backend } });

/** A value the parameter's schema accepts, when one follows from the schema alone (no CEL rules or string formats to satisfy). */
export function schemaValidValue(s: ParameterSchema): unknown {
  if (s.rules && s.rules.length > 0) return undefined;
  if (s.enum && s.enum.length > 0) return s.enum[0];
  switch (s.type) {
    case 'boolean':
      return true;
    case 'integer': {
      const v = s.minimum !== undefined ? Math.ceil(s.minimum) : 1;
      return s.maximum !== undefined && v > s.maximum ? undefined : v;
    }
    case 'number': {
      const v = s.minimum ?? 1;
      return s.maximum !== undefined && v > s.maximum ? undefined : v;
    }
    case 'string':
      return 'x';
    case 'int-or-string':
      return 1;
    case 'array':
      return [];
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const r of s.required ?? []) {
        const v = s.properties?.[r] ? schemaValidValue(s.properties[r]) : undefined;
        if (v === undefined) return undefined;
        out[r] = v;
      }
      return out;
    }
    default:
      return undefined;
  }
}

/** A value of the wrong JSON type for the parameter's schema. */
function wrongTypeValue(s: ParameterSchema): unknown {
  switch (s.type) {
    case 'string':
      return 12345;
    case 'integer':
    case 'number':
      return 'not-a-number';
    case 'boolean':
      return 'not-a-boolean';
    case 'array':
      return 'not-an-array';
    case 'object':
      return 'not-an-object';
    case 'int-or-string':
      return true;
    default:
      return undefined;
  }
}

/** The corpus of one data service. */
export function dataServiceCorpus(name: CatalogueService, ds: DataService): KindCorpus {
  const props = BUILDERS[name]();
  const model = ds.model;
  const plans = model.plans;
  const label = props.label ?? model.claimKind.toLowerCase();
  const planChange = props.planChange ?? PlanChange.UPGRADE_ONLY;
  const topologyChange = props.topologyChange ?? TopologyChange.SCALE_OUT_ONLY;
  const immutableFlags = (props.immutableFlags ?? plans.flags).filter((f) => {
    const n = plans.plans.filter((p) => p.hasFlag(f)).length;
    return n > 0 && n < plans.plans.length;
  });
  const backends = ds.backends;
  const multiBackend = backends.length > 1;
  const servicePlans = (s: string) => model.services.find((x) => x.name === s)?.plans ?? [];
  const offers = (b: string, s: string, p: string) => {
    const be = backends.find((x) => x.name === b)!;
    return be.serviceNames(model).includes(s) && be.planNames(model).includes(p) && servicePlans(s).includes(p);
  };
  const combos: Array<{ s: string; b: string; p: string }> = [];
  for (const b of backends)
    for (const s of model.services) for (const p of plans.names) if (offers(b.name, s.name, p)) combos.push({ s: s.name, b: b.name, p });
  if (combos.length === 0) throw new Error(`${model.claimKind}: no service/plan/backend combination is offered`);
  const spec = (c: { s: string; b: string; p: string }, extra: Spec = {}): Spec => withRef({ service: c.s, plan: c.p, ...extra }, c.b);
  const cases: ClaimCase[] = [];
  const seen = new Set<string>();
  const add = (c: ClaimCase) => {
    const key = JSON.stringify([c.old, c.spec]);
    if (seen.has(key)) return;
    seen.add(key);
    cases.push(c);
  };
  const K = model.claimKind;

  // --- creates: valid. Every (service, backend) pair and every plan at least once.
  for (const b of backends) {
    for (const s of model.services) {
      const c = combos.find((x) => x.b === b.name && x.s === s.name);
      if (c) add({ id: `${K} create ${c.s}/${c.p} via ${c.b}`, spec: spec(c), accept: true, tag: 'create-valid' });
    }
  }
  for (const p of plans.names) {
    const c = combos.find((x) => x.p === p);
    if (c) add({ id: `${K} create ${c.s}/${c.p} via ${c.b}`, spec: spec(c), accept: true, tag: 'create-valid' });
  }
  const base = combos[0];
  if (model.acceptsIncomplete)
    add({ id: `${K} create with acceptsIncomplete`, spec: spec(base, { acceptsIncomplete: false }), accept: true, tag: 'create-valid' });

  // --- creates: invalid values, missing and unknown fields.
  add({
    id: `${K} create with unknown plan`,
    spec: withRef({ service: base.s, plan: 'bogus-plan' }, base.b),
    accept: false,
    expect: 'spec.plan',
    tag: 'create-enum',
  });
  add({
    id: `${K} create with unknown service`,
    spec: withRef({ service: 'a9s-unknown1', plan: base.p }, base.b),
    accept: false,
    expect: 'spec.service',
    tag: 'create-enum',
  });
  add({ id: `${K} create without plan`, spec: withRef({ service: base.s }, base.b), accept: false, expect: 'spec.plan', tag: 'create-required' });
  add({ id: `${K} create without service`, spec: withRef({ plan: base.p }, base.b), accept: false, expect: 'spec.service', tag: 'create-required' });
  add({
    id: `${K} create with an undeclared spec field`,
    spec: spec(base, { notAField: 'x' }),
    accept: false,
    expect: 'notAField',
    tag: 'create-unknown-field',
  });

  // --- creates: service/plan/backend combinations that are not offered.
  for (const b of backends) {
    for (const s of model.services) {
      if (!b.serviceNames(model).includes(s.name)) {
        const p = servicePlans(s.name).find((x) => b.planNames(model).includes(x));
        if (p && multiBackend) {
          add({
            id: `${K} create ${s.name}/${p} via ${b.name} (service not offered by it)`,
            spec: withRef({ service: s.name, plan: p }, b.name),
            accept: false,
            expect: `Unsupported service used for ${label}`,
            tag: 'create-backend-service',
          });
        }
        continue;
      }
      const notPlanOfBackend = plans.names.find((p) => !b.planNames(model).includes(p) && servicePlans(s.name).includes(p));
      if (notPlanOfBackend && multiBackend) {
        add({
          id: `${K} create ${s.name}/${notPlanOfBackend} via ${b.name} (plan not offered by it)`,
          spec: withRef({ service: s.name, plan: notPlanOfBackend }, b.name),
          accept: false,
          expect: `Unsupported plan used for ${label}`,
          tag: 'create-backend-plan',
        });
      }
      const notPlanOfService = plans.names.find((p) => b.planNames(model).includes(p) && !servicePlans(s.name).includes(p));
      if (notPlanOfService) {
        add({
          id: `${K} create ${s.name}/${notPlanOfService} via ${b.name} (plan not offered for the service)`,
          spec: withRef({ service: s.name, plan: notPlanOfService }, b.name),
          accept: false,
          expect: `Service ${s.name} only supports the plans`,
          tag: 'create-service-plan',
        });
      }
    }
  }

  // --- creates: parameters (top-level fields such as expose, and spec.parameters.*).
  const singleCombo = (b: string) => combos.find((c) => c.b === b && !plans.get(c.p)!.multiNode);
  const multiCombo = (b: string) => combos.find((c) => c.b === b && plans.get(c.p)!.multiNode);
  const paramSpec = (p: Parameter, c: { s: string; b: string; p: string }, value: unknown): Spec =>
    p.location === ParameterLocation.SPEC ? spec(c, { [p.name]: value }) : spec(c, { parameters: { [p.name]: value } });
  const where = (p: Parameter) => (p.location === ParameterLocation.SPEC ? `spec.${p.name}` : `spec.parameters.${p.name}`);
  const msgLabel = (p: Parameter) => (p.location === ParameterLocation.SPEC ? p.name : `parameters.${p.name}`);
  for (const p of model.parameters) {
    const allowed = backends.filter((b) => p.allowedOn(b.name));
    const good = schemaValidValue(p.schema);
    const home = allowed.map((b) => (p.multiNodeOnly ? multiCombo(b.name) : combos.find((c) => c.b === b.name))).find((c) => c !== undefined);
    if (!home) continue;
    const wrong = wrongTypeValue(p.schema);
    if (wrong !== undefined) {
      add({
        id: `${K} create with ${where(p)} = ${JSON.stringify(wrong)} (wrong type)`,
        spec: paramSpec(p, home, wrong),
        accept: false,
        expect: where(p),
        tag: 'param-type',
      });
    }
    if (p.schema.enum) {
      add({
        id: `${K} create with ${where(p)} not in its enum`,
        spec: paramSpec(p, home, p.schema.type === 'string' ? 'NOT-IN-ENUM' : 987654),
        accept: false,
        expect: where(p),
        tag: 'param-enum',
      });
    }
    if (good === undefined) continue;
    add({ id: `${K} create with ${where(p)} = ${JSON.stringify(good)} via ${home.b}`, spec: paramSpec(p, home, good), accept: true, tag: 'param-valid' });
    for (const b of backends.filter((x) => !p.allowedOn(x.name))) {
      const c = (p.multiNodeOnly ? multiCombo(b.name) : undefined) ?? combos.find((x) => x.b === b.name);
      if (c)
        add({
          id: `${K} create with ${where(p)} via ${b.name} (parameter not supported there)`,
          spec: paramSpec(p, c, good),
          accept: false,
          expect: `${msgLabel(p)} is not supported for`,
          tag: 'param-backend',
        });
    }
    if (p.multiNodeOnly) {
      const c = allowed.map((b) => singleCombo(b.name)).find((x) => x !== undefined);
      if (c)
        add({
          id: `${K} create with ${where(p)} on single-node plan ${c.p}`,
          spec: paramSpec(p, c, good),
          accept: false,
          expect: `${msgLabel(p)} is only supported for clustered plans`,
          tag: 'param-multinode',
        });
    }
  }

  // --- update pairs: plan changes within one service and backend.
  const planVerdict = (from: string, to: string): { accept: boolean; expect?: string; tag: string } => {
    const a = plans.get(from)!;
    const z = plans.get(to)!;
    if (from === to) return { accept: true, tag: 'update-same-plan' };
    if (planChange === PlanChange.NONE) return { accept: false, expect: `Plan changes are not supported for ${label}`, tag: 'update-plan-frozen' };
    if (planChange === PlanChange.UPGRADE_ONLY && plans.isDowngrade(from, to))
      return { accept: false, expect: 'Transition from bigger to smaller plan size is not supported.', tag: 'update-downgrade' };
    if (topologyChange !== TopologyChange.ANY && a.multiNode && !z.multiNode)
      return { accept: false, expect: 'Migration from clustered to single Data Service Instance is not supported.', tag: 'update-scale-in' };
    if (topologyChange === TopologyChange.NONE && !a.multiNode && z.multiNode)
      return { accept: false, expect: 'Migration from single to clustered Data Service Instance is not supported.', tag: 'update-scale-out-forbidden' };
    for (const f of immutableFlags) {
      if (a.hasFlag(f) !== z.hasFlag(f)) {
        const F = f.toUpperCase();
        return { accept: false, expect: `Plan migrations not possible from Non-${F} to ${F} and ${F} to Non-${F}`, tag: 'update-flag-flip' };
      }
    }
    return { accept: true, tag: plans.isUpgrade(from, to) ? 'update-upgrade' : 'update-lateral' };
  };
  // Every ordered plan pair of one (service, backend) with the most plans, then the same for the
  // other backends — capped, keeping every kind of verdict.
  const pairCases: ClaimCase[] = [];
  for (const b of backends) {
    const bySvc = model.services
      .map((s) => ({ s: s.name, ps: plans.names.filter((p) => offers(b.name, s.name, p)) }))
      .sort((x, y) => y.ps.length - x.ps.length)[0];
    if (!bySvc || bySvc.ps.length === 0) continue;
    for (const from of bySvc.ps) {
      for (const to of bySvc.ps) {
        const v = planVerdict(from, to);
        pairCases.push({
          id: `${K} update ${bySvc.s} via ${b.name}: plan ${from} -> ${to}`,
          old: spec({ s: bySvc.s, b: b.name, p: from }),
          spec: spec({ s: bySvc.s, b: b.name, p: to }),
          ...v,
        });
      }
    }
  }
  const CAP = 120;
  const byTag = new Map<string, ClaimCase[]>();
  for (const c of pairCases) byTag.set(c.tag, [...(byTag.get(c.tag) ?? []), c]);
  const picked: ClaimCase[] = [];
  // Round-robin over verdict kinds, so each kind appears even when the cap cuts.
  for (let i = 0; picked.length < CAP && [...byTag.values()].some((l) => l.length > i); i++) {
    for (const l of byTag.values()) if (l[i] && picked.length < CAP) picked.push(l[i]);
  }
  picked.forEach(add);

  // --- update pairs: service changes (immutable), and a no-op-ish update (acceptsIncomplete flip).
  for (const c of combos) {
    const other = combos.find((x) => x.b === c.b && x.p === c.p && x.s !== c.s);
    if (other) {
      add({
        id: `${K} update via ${c.b}: service ${c.s} -> ${other.s} (plan ${c.p})`,
        old: spec(c),
        spec: spec(other),
        accept: false,
        expect: 'Service is an immutable field',
        tag: 'update-service-change',
      });
      break;
    }
  }
  add({
    id: `${K} update: service ${base.s} -> a9s-unknown1`,
    old: spec(base),
    spec: withRef({ service: 'a9s-unknown1', plan: base.p }, base.b),
    accept: false,
    expect: 'spec.service',
    tag: 'update-service-unknown',
  });
  if (model.acceptsIncomplete) {
    add({
      id: `${K} update: acceptsIncomplete true -> false`,
      old: spec(base, { acceptsIncomplete: true }),
      spec: spec(base, { acceptsIncomplete: false }),
      accept: true,
      tag: 'update-field',
    });
  }
  return { claimKind: K, cases, validSpec: spec(base) };
}

/** The corpus of one instance operation (ServiceBinding, Backup, Restore). */
export function operationCorpus(op: 'servicebinding' | 'backup' | 'restore', types: readonly string[], claimKind: string): KindCorpus {
  const props = { servicebinding: serviceBinding, backup, restore }[op](types);
  const backends: readonly OperationBackend[] = props.backends;
  const def = props.defaultBackend ?? backends[0].name;
  const required = Object.fromEntries(props.required.map((r) => [r, `my-${r.toLowerCase()}`]));
  const K = claimKind;
  const cases: ClaimCase[] = [];
  const typesOf = (b: OperationBackend) => (b.types ?? types).filter((t) => types.includes(t));
  const filled = (b: OperationBackend) => Object.fromEntries((b.requiredFields ?? []).map((f) => [f, `my-${f.toLowerCase()}`]));
  for (const b of backends) {
    for (const t of types) {
      const spec = withRef({ ...required, ...filled(b), serviceInstanceType: t }, b.name);
      if (typesOf(b).includes(t)) cases.push({ id: `${K} create ${t} via ${b.name}`, spec, accept: true, tag: 'create-valid' });
      else
        cases.push({
          id: `${K} create ${t} via ${b.name} (type not handled by it)`,
          spec,
          accept: false,
          expect: 'Selected service instance type is not supported.',
          tag: 'create-backend-type',
        });
    }
    for (const f of b.requiredFields ?? []) {
      const t = typesOf(b)[0];
      cases.push({
        id: `${K} create via ${b.name} without ${f}`,
        spec: withRef({ ...required, serviceInstanceType: t }, b.name),
        accept: false,
        expect: `${b.name} requires spec.${f}`,
        tag: 'create-backend-field',
      });
      cases.push({
        id: `${K} create via ${b.name} with empty ${f}`,
        spec: withRef({ ...required, [f]: '', serviceInstanceType: t }, b.name),
        accept: false,
        expect: `${b.name} requires spec.${f}`,
        tag: 'create-backend-field',
      });
    }
  }
  // An empty composition name selects the default backend: its type restriction applies too.
  const d = backends.find((b) => b.name === def)!;
  const foreign = types.find((t) => !typesOf(d).includes(t));
  if (foreign)
    cases.push({
      id: `${K} create ${foreign} with compositionRef.name "" (default ${def})`,
      spec: withRef({ ...required, ...filled(d), serviceInstanceType: foreign }, ''),
      accept: false,
      expect: 'Selected service instance type is not supported.',
      tag: 'create-backend-type',
    });
  const any = backends.find((b) => typesOf(b).length === types.length) ?? backends[0];
  const t0 = typesOf(any)[0];
  const valid = withRef({ ...required, ...filled(any), serviceInstanceType: t0 }, any.name);
  cases.push({
    id: `${K} create with unknown serviceInstanceType`,
    spec: { ...valid, serviceInstanceType: 'redis' },
    accept: false,
    expect: 'spec.serviceInstanceType',
    tag: 'create-enum',
  });
  for (const r of props.required) {
    const { [r]: _dropped, ...rest } = valid;
    cases.push({ id: `${K} create without ${r}`, spec: rest, accept: false, expect: `spec.${r}`, tag: 'create-required' });
  }
  cases.push({
    id: `${K} create without serviceInstanceType`,
    spec: Object.fromEntries(Object.entries(valid).filter(([k]) => k !== 'serviceInstanceType')),
    accept: false,
    expect: 'spec.serviceInstanceType',
    tag: 'create-required',
  });
  cases.push({
    id: `${K} create with an undeclared spec field`,
    spec: { ...valid, notAField: 1 },
    accept: false,
    expect: 'notAField',
    tag: 'create-unknown-field',
  });
  for (const f of props.fields) {
    if (f.enum)
      cases.push({
        id: `${K} create with spec.${f.name} not in its enum`,
        spec: { ...valid, [f.name]: 'NOT-IN-ENUM' },
        accept: false,
        expect: `spec.${f.name}`,
        tag: 'param-enum',
      });
  }
  const r0 = props.required[0];
  cases.push({ id: `${K} update: ${r0} changed`, old: valid, spec: { ...valid, [r0]: 'other' }, accept: true, tag: 'update-field' });
  cases.push({
    id: `${K} update: serviceInstanceType -> unknown`,
    old: valid,
    spec: { ...valid, serviceInstanceType: 'redis' },
    accept: false,
    expect: 'spec.serviceInstanceType',
    tag: 'update-enum',
  });
  return { claimKind: K, cases, validSpec: valid };
}

/** The corpus of every API of the catalogue, by claim kind. */
export function catalogueCorpus(catalogue: Catalogue): Map<string, KindCorpus> {
  const out = new Map<string, KindCorpus>();
  for (const name of CATALOGUE_SERVICES) {
    const ds = catalogue.services.get(name);
    if (ds) out.set(ds.model.claimKind, dataServiceCorpus(name, ds));
  }
  for (const [op, io] of catalogue.operations) {
    const claimKind = io.xrd.claimKind;
    if (!claimKind) throw new Error(`catalogue operation ${op}: its XRD has no claim kind`);
    out.set(claimKind, operationCorpus(op, io.types, claimKind));
  }
  return out;
}

/**
 * Parameter samples of a data service for a differential check (no expected verdict): every
 * parameter with the valid and invalid sample values of the catalogue tests' corpus
 * (test/catalogue/_corpus.ts `samples`), each on a claim that is otherwise valid for a backend
 * accepting the parameter (a multi-node plan for multi-node-only parameters).
 */
export function parameterSamples(ds: DataService): Array<{ id: string; spec: Spec }> {
  const model = ds.model;
  const out: Array<{ id: string; spec: Spec }> = [];
  for (const p of model.parameters) {
    let home: { s: string; b: string; p: string } | undefined;
    for (const b of ds.backends.filter((x) => p.allowedOn(x.name))) {
      for (const s of model.services) {
        for (const pl of b.planNames(model)) {
          if (home) break;
          if (!b.serviceNames(model).includes(s.name) || !s.plans.includes(pl)) continue;
          if (p.multiNodeOnly && !model.plans.get(pl)!.multiNode) continue;
          home = { s: s.name, b: b.name, p: pl };
        }
      }
    }
    if (!home) continue;
    for (const value of samples(p.toOpenApi() as never)) {
      const extra = p.location === ParameterLocation.SPEC ? { [p.name]: value } : { parameters: { [p.name]: value } };
      out.push({
        id: `${model.claimKind} ${p.location === ParameterLocation.SPEC ? 'spec' : 'spec.parameters'}.${p.name} = ${JSON.stringify(value)} (${home.s}/${home.p} via ${home.b})`,
        spec: withRef({ service: home.s, plan: home.p, ...extra }, home.b),
      });
    }
  }
  return out;
}
