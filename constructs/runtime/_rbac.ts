/**
 * RBAC rules as data: every rule carries the reason it exists, so tests and docs can list them
 * and reviewers can check each one against what the program really does.
 */
import { k8s } from 'cdk8s-plus-28';

/** One PolicyRule plus the reason it is granted. */
export interface DocumentedRule {
  /** API groups ('' is the core group). */
  readonly apiGroups: string[];
  /** Resources, including subresources such as `serviceaccounts/token`. */
  readonly resources: string[];
  /** Verbs; never `*`. */
  readonly verbs: string[];
  /** Restricts the rule to these object names (not possible for `create`/`list`/`watch`). */
  readonly resourceNames?: string[];
  /** Why the program needs this rule. */
  readonly why: string;
}

/** Verbs that a rule may never contain (the constructs never hand out wildcards). */
const FORBIDDEN_VERBS = new Set(['*']);

/** Converts documented rules into L1 PolicyRules, refusing wildcards. */
export function toPolicyRules(owner: string, rules: readonly DocumentedRule[]): k8s.PolicyRule[] {
  return rules.map((r, i) => {
    for (const v of r.verbs) {
      if (FORBIDDEN_VERBS.has(v)) throw new Error(`${owner}.rules[${i}].verbs: "${v}" is a wildcard; list the verbs explicitly`);
    }
    for (const res of r.resources) {
      if (res === '*' || res.startsWith('*/')) throw new Error(`${owner}.rules[${i}].resources: "${res}" is a wildcard; list the resources explicitly`);
    }
    return {
      apiGroups: [...r.apiGroups],
      resources: [...r.resources],
      verbs: [...r.verbs],
      ...(r.resourceNames && r.resourceNames.length > 0 ? { resourceNames: [...r.resourceNames] } : {}),
    };
  });
}

/** Read verbs. */
export const READ = ['get', 'list', 'watch'];
/** Read and write verbs, without deletecollection and without escalate/bind/impersonate. */
export const READ_WRITE = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
