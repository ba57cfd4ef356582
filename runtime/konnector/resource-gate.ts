/**
 * The konnector's side of the resource policy (`contract/resource-policy.ts`): what a provider may
 * make it touch in the app cluster. The allow-list is the app cluster admin's (`--allow-resource`,
 * `KonnectorProps.allowedResources`), never the provider's: a binding whose export or accepted claim
 * names a resource outside it gets `ResourcesAllowed=False` naming the resource and the flag, its
 * CRD is not created (`provider-crds.ts`) and the refused export or claim is not synced
 * (`provider-exports.ts`; `ClaimSync` checks again when it is built).
 */
import {
  decideResource,
  parseAllowedResource,
  refusalMessage,
  resourceName,
  type AllowedResource,
  type ResourceDecision,
  type ResourceUse,
} from '../../contract/resource-policy.js';
import type { Condition } from '../core/conditions.js';
import { ConditionType, type AcceptablePermissionClaim, type APIServiceBinding } from './types.js';

/** Condition type on an APIServiceBinding: its export and accepted claims are within the allow-list. */
export const RESOURCES_ALLOWED_CONDITION = ConditionType.ResourcesAllowed;
/** Reason of a refusal (condition, Connected state). */
export const RESOURCE_NOT_ALLOWED_REASON = 'ResourceNotAllowed';

/** Group and plural of a binding's export, from its name `<plural>.<group>`. */
export function exportOfBinding(name: string): { group: string; resource: string } {
  const dot = name.indexOf('.');
  return dot < 0 ? { group: '', resource: name } : { group: name.slice(dot + 1), resource: name.slice(0, dot) };
}

export class ResourceGate {
  /** The default allow-list only. */
  static readonly DEFAULT = new ResourceGate([]);

  /** Parses the admin's allowances (`<plural>.<group>`); `what` names the option in errors. */
  static from(what: string, values: readonly string[] | undefined): ResourceGate {
    return values?.length ? new ResourceGate(values.map((v, i) => parseAllowedResource(`${what}[${i}]`, v))) : ResourceGate.DEFAULT;
  }

  constructor(readonly allowed: readonly AllowedResource[]) {}

  decide(r: { group?: string; resource: string }, use: ResourceUse): ResourceDecision {
    return decideResource(r, use, this.allowed);
  }

  /** The refusal text: reason, and the konnector's switch that allows it. */
  refusal(d: ResourceDecision): string {
    return refusalMessage(
      d,
      (n) => `--allow-resource=${n} on the konnector (KonnectorProps.allowedResources, or bind again with kubectl bind --allow-resource ${n})`,
    );
  }

  /** The accepted claims of a binding the gate allows. */
  allowedClaims(claims: readonly AcceptablePermissionClaim[]): AcceptablePermissionClaim[] {
    return claims.filter((c) => this.decide(c, 'claim').allowed);
  }

  /** Every refused resource of a binding: its export and its accepted claims. */
  refusalsOf(b: APIServiceBinding): ResourceDecision[] {
    const out = [this.decide(exportOfBinding(b.metadata.name ?? ''), 'export')];
    const seen = new Set<string>();
    for (const c of b.spec?.permissionClaims ?? []) {
      if (c.state !== 'Accepted' || seen.has(resourceName(c))) continue;
      seen.add(resourceName(c));
      out.push(this.decide(c, 'claim'));
    }
    return out.filter((d) => !d.allowed);
  }

  /** The binding's `ResourcesAllowed` condition. */
  condition(b: APIServiceBinding): Omit<Condition, 'lastTransitionTime'> {
    const refused = this.refusalsOf(b);
    if (!refused.length) {
      return {
        type: RESOURCES_ALLOWED_CONDITION,
        status: 'True',
        reason: 'WithinAllowList',
        message: "the export and every accepted claim are within the konnector's allow-list",
      };
    }
    return {
      type: RESOURCES_ALLOWED_CONDITION,
      status: 'False',
      severity: 'Error',
      reason: RESOURCE_NOT_ALLOWED_REASON,
      message: `not synced: ${refused.map((d) => this.refusal(d)).join('; ')}`,
    };
  }

  /** Throws when a claim is outside the allow-list (the claim syncer's own check). */
  assertClaim(c: AcceptablePermissionClaim): void {
    const d = this.decide(c, 'claim');
    if (!d.allowed) throw new Error(this.refusal(d));
  }
}
