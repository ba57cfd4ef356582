/**
 * Renders a data service's plans, services, backends and parameters into CEL rules
 * (`x-kubernetes-validations`) of the claim schema. Internal to DataService.
 */
import type { ApiStyle } from './api-style.js';
import type { Backend, DataServiceModel } from './backend.js';
import { ParameterLocation } from './parameter.js';
import { PlanChange, TopologyChange } from './topology.js';
import { celList, celString } from './_util.js';

export interface Rule {
  readonly rule: string;
  readonly message: string;
}

export interface RulePolicy {
  readonly planChange: PlanChange;
  readonly topologyChange: TopologyChange;
  readonly immutableFlags: readonly string[];
  readonly label: string;
  /** The backend (Composition) a claim without `spec.compositionRef` gets (the XRD's defaultCompositionRef). */
  readonly defaultBackend: string;
  /** Where the rules read the Composition reference (`self.compositionRef` or `self.crossplane.compositionRef`). */
  readonly apiStyle: ApiStyle;
}

/**
 * The claim's backend as a CEL expression. A claim may omit `spec.compositionRef` (Crossplane then
 * applies the XRD's `defaultCompositionRef`), so the field is read behind `has()` and its absence
 * counts as the default backend. (Klutch reads `self.compositionRef.name` unguarded, which rejects
 * every claim without it at admission.)
 */
export function compositionExpr(defaultBackend: string, style?: ApiStyle): string {
  if (style) return style.compositionExpr(defaultBackend);
  return `(has(self.compositionRef) ? self.compositionRef.name : ${celString(defaultBackend)})`;
}

function backendIs(policy: RulePolicy, names: readonly string[]): string {
  const c = compositionExpr(policy.defaultBackend, policy.apiStyle);
  return names.length === 1 ? `${c} == ${celString(names[0])}` : `${c} in ${celList(names)}`;
}

function valueIn(expr: string, values: readonly string[]): string {
  return values.length === 1 ? `${expr} == ${celString(values[0])}` : `${expr} in ${celList(values)}`;
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));

/** Rules on `spec` (cross-field): backend allow-lists, service/plan combinations, parameter restrictions. */
export function specRules(model: DataServiceModel, backends: readonly Backend[], policy: RulePolicy): Rule[] {
  const rules: Rule[] = [];
  const allServices = model.services.map((s) => s.name);
  const allPlans = model.plans.names;
  const multi = backends.length > 1;

  // Service and plan allow-lists per backend (keyed by the claim's compositionRef.name).
  if (multi && backends.some((b) => !sameSet(b.serviceNames(model), allServices))) {
    rules.push({
      rule: backends.map((b) => `(${backendIs(policy, [b.name])} && (${valueIn('self.service', b.serviceNames(model))}))`).join(' || '),
      message: `Unsupported service used for ${policy.label}`,
    });
  }
  if (multi && backends.some((b) => !sameSet(b.planNames(model), allPlans))) {
    rules.push({
      rule: backends.map((b) => `(${backendIs(policy, [b.name])} && (${valueIn('self.plan', b.planNames(model))}))`).join(' || '),
      message: `Unsupported plan used for ${policy.label}`,
    });
  }

  // Plans a service supports (per backend when the backends differ).
  for (const s of model.services) {
    const offering = backends.filter((b) => b.serviceNames(model).includes(s.name));
    const effective = offering.map((b) => ({ b, plans: b.planNames(model).filter((p) => s.plans.includes(p)) }));
    const restricted = effective.filter((e) => !sameSet(e.plans, e.b.planNames(model)));
    if (restricted.length === 0) continue;
    const uniform =
      offering.length === backends.length && restricted.length === effective.length && restricted.every((e) => sameSet(e.plans, restricted[0].plans));
    if (uniform) {
      rules.push({
        rule: `self.service != ${celString(s.name)} || ${valueIn('self.plan', restricted[0].plans)}`,
        message: `Service ${s.name} only supports the plans ${restricted[0].plans.join(', ')}`,
      });
      continue;
    }
    for (const e of restricted) {
      rules.push({
        rule: `!(${backendIs(policy, [e.b.name])} && self.service == ${celString(s.name)}) || ${valueIn('self.plan', e.plans)}`,
        message: `Service ${s.name} only supports the plans ${e.plans.join(', ')} with ${e.b.name}`,
      });
    }
  }

  // Parameters accepted by some backends only.
  const backendNames = backends.map((b) => b.name);
  for (const p of model.parameters) {
    const allowed = backendNames.filter((b) => p.allowedOn(b));
    const label = p.location === ParameterLocation.SPEC ? p.name : `parameters.${p.name}`;
    if (allowed.length < backendNames.length) {
      rules.push({
        rule: `!${p.celHas} || ${backendIs(policy, allowed)}`,
        message: `${label} is not supported for ${backendNames.filter((b) => !allowed.includes(b)).join(', ')}`,
      });
    }
    if (p.multiNodeOnly) {
      const multiPlans = model.plans.plans.filter((pl) => pl.multiNode).map((pl) => pl.name);
      rules.push({
        rule: multiPlans.length === 0 ? `!${p.celHas}` : `!${p.celHas} || ${valueIn('self.plan', multiPlans)}`,
        message: `${label} is only supported for clustered plans`,
      });
    }
  }
  return rules;
}

/** Transition rules on `spec.service`. */
export function serviceRules(): Rule[] {
  return [{ rule: 'self == oldSelf', message: 'Service is an immutable field' }];
}

/** Transition rules on `spec.plan`: no downgrade, topology changes, immutable flags. */
export function planRules(model: DataServiceModel, policy: RulePolicy): Rule[] {
  const plans = model.plans;
  if (policy.planChange === PlanChange.NONE) {
    return [{ rule: 'self == oldSelf', message: `Plan changes are not supported for ${policy.label}` }];
  }
  const rules: Rule[] = [];
  if (policy.planChange === PlanChange.UPGRADE_ONLY) {
    // Group plans with the same set of downgrades: one clause per group keeps the rule small
    // (with size-derived upgrade paths there is one group per size).
    const groups = new Map<string, { from: string[]; to: string[] }>();
    for (const [from, to] of plans.downgrades()) {
      const key = JSON.stringify(to);
      const g = groups.get(key) ?? { from: [], to };
      g.from.push(from);
      groups.set(key, g);
    }
    if (groups.size > 0) {
      rules.push({
        rule: [...groups.values()].map((g) => `!(${valueIn('oldSelf', g.from)} && ${valueIn('self', g.to)})`).join(' && '),
        message: 'Transition from bigger to smaller plan size is not supported.',
      });
    }
  }
  const single = plans.plans.filter((p) => !p.multiNode).map((p) => p.name);
  const multi = plans.plans.filter((p) => p.multiNode).map((p) => p.name);
  if (single.length > 0 && multi.length > 0 && policy.topologyChange !== TopologyChange.ANY) {
    rules.push({
      rule: `!(self in ${celList(single)} && oldSelf in ${celList(multi)})`,
      message: 'Migration from clustered to single Data Service Instance is not supported.',
    });
    if (policy.topologyChange === TopologyChange.NONE) {
      rules.push({
        rule: `!(self in ${celList(multi)} && oldSelf in ${celList(single)})`,
        message: 'Migration from single to clustered Data Service Instance is not supported.',
      });
    }
  }
  for (const flag of policy.immutableFlags) {
    const withFlag = plans.plans.filter((p) => p.hasFlag(flag)).map((p) => p.name);
    if (withFlag.length === 0 || withFlag.length === plans.plans.length) continue;
    const F = flag.toUpperCase();
    rules.push({
      rule: `(oldSelf in ${celList(withFlag)}) == (self in ${celList(withFlag)})`,
      message: `Plan migrations not possible from Non-${F} to ${F} and ${F} to Non-${F}`,
    });
  }
  return rules;
}
