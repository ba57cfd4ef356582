/**
 * Permission claims as used by APIServiceExportTemplates and APIServiceBindings
 * (`klutch.anynines.com/v1alpha1` PermissionClaim, wire-compatible with Klutch).
 */
import { fail } from '../_errors.js';
import { checkDnsLabel } from './_pod.js';

/** Which objects of the claimed resource are claimed. */
export interface PermissionClaimSelector {
  /** Object names; `["*"]` means all. @default ["*"] */
  readonly names?: string[];
  /** Namespaces; `["*"]` means all. @default ["*"] */
  readonly namespaces?: string[];
  /** Label selectors (any match). @default - none */
  readonly labelSelectors?: Record<string, string>[];
  /** Field selectors. @default - none */
  readonly fieldSelectors?: string[];
  /** Which side owns (creates) the objects. @default - decided by where the object exists first */
  readonly owner?: 'Provider' | 'Consumer';
}

/** A claim on objects of another resource (e.g. the credentials Secret of a ServiceBinding). */
export interface PermissionClaim {
  /** API group; '' is the core group. @default "" */
  readonly group?: string;
  /** Plural resource name, e.g. `secrets`. */
  readonly resource: string;
  /** Version of the resource, e.g. `v1`. */
  readonly version: string;
  /** Which objects are claimed. @default - all */
  readonly selector?: PermissionClaimSelector;
  /** Whether the binding fails without this claim. @default - not required */
  readonly required?: boolean;
}

/** A permission claim as accepted (or rejected) by the consumer on an APIServiceBinding. */
export interface AcceptablePermissionClaim extends PermissionClaim {
  /** The consumer's decision. */
  readonly state: 'Accepted' | 'Rejected';
}

const GROUP = /^(|[a-z0-9]([-a-z0-9]*[a-z0-9](\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?)$/;
const RESOURCE = /^[a-z][-a-z0-9]*[a-z0-9]$/;

/** Validates an API group name ('' allowed). */
export function checkGroup(prop: string, value: unknown): string {
  if (typeof value !== 'string' || !GROUP.test(value)) {
    fail(prop, value, 'is not an API group (a DNS subdomain, or "" for the core group)');
  }
  return value;
}

/** Validates a plural resource name. */
export function checkResource(prop: string, value: unknown): string {
  if (typeof value !== 'string' || !RESOURCE.test(value)) {
    fail(prop, value, 'is not a plural resource name (lower-case, e.g. "postgresqlinstances")');
  }
  return value;
}

/** Validates a claim and renders it in wire form (defaults made explicit). */
export function renderPermissionClaim(prop: string, c: PermissionClaim, withState = false): Record<string, unknown> {
  const group = checkGroup(`${prop}.group`, c.group ?? '');
  checkResource(`${prop}.resource`, c.resource);
  if (typeof c.version !== 'string' || c.version.length === 0) {
    fail(`${prop}.version`, c.version, 'must be a non-empty version such as "v1"');
  }
  const sel = c.selector ?? {};
  for (const [i, ns] of (sel.namespaces ?? []).entries()) {
    if (ns !== '*') checkDnsLabel(`${prop}.selector.namespaces[${i}]`, ns);
  }
  if (sel.owner !== undefined && sel.owner !== 'Provider' && sel.owner !== 'Consumer') {
    fail(`${prop}.selector.owner`, sel.owner, 'must be "Provider" or "Consumer"');
  }
  const out: Record<string, unknown> = {
    group,
    resource: c.resource,
    version: c.version,
    selector: {
      names: [...(sel.names ?? ['*'])],
      namespaces: [...(sel.namespaces ?? ['*'])],
      ...(sel.labelSelectors ? { labelSelectors: sel.labelSelectors.map((l) => ({ ...l })) } : {}),
      ...(sel.fieldSelectors ? { fieldSelectors: [...sel.fieldSelectors] } : {}),
      ...(sel.owner ? { owner: sel.owner } : {}),
    },
  };
  if (c.required !== undefined) out.required = c.required;
  if (withState) {
    const state = (c as AcceptablePermissionClaim).state;
    if (state !== 'Accepted' && state !== 'Rejected') {
      fail(`${prop}.state`, state, 'must be "Accepted" or "Rejected"');
    }
    out.state = state;
  }
  return out;
}
