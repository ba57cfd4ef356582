/**
 * Which Secret types the konnector copies between a provider and an app cluster, written once as
 * documented data (each entry says why). A Secret's `type` tells the cluster's own controllers what to
 * do with it: `kubernetes.io/service-account-token` makes the token controller mint a token of a
 * ServiceAccount into the Secret (a provider could then read a token of the app's ServiceAccount back
 * through any claim that goes up, or leave it for whoever reads the namespace),
 * `bootstrap.kubernetes.io/token` makes a node-join credential. A claimed copy is credentials data, so
 * only the data-carrying types below cross, in either direction; the app cluster's admin may add
 * more by exact name (`--allow-secret-type`, `KonnectorOptions.allowedSecretTypes`), never the
 * token-minting ones.
 */
import { fail } from './_errors.js';

/** One allowed Secret type. */
export interface SecretTypeRule {
  /** The type, exact, or `<prefix>*` for every type starting with `<prefix>`. */
  readonly type: string;
  readonly why: string;
}

/** The types a claimed Secret may have by default (an absent `type` is `Opaque`). */
export const DEFAULT_SECRET_TYPES: readonly SecretTypeRule[] = [
  { type: 'Opaque', why: 'arbitrary data: what a service binding usually carries' },
  { type: 'connection.crossplane.io/v1alpha1', why: 'Crossplane connection details: the credentials Secret of a Klutch service binding' },
  { type: 'servicebinding.io/*', why: 'Service Binding for Kubernetes credentials (`servicebinding.io/<service type>`)' },
  { type: 'kubernetes.io/basic-auth', why: 'user name and password; no controller acts on it' },
  { type: 'kubernetes.io/ssh-auth', why: 'an SSH key; no controller acts on it' },
  { type: 'kubernetes.io/tls', why: 'a certificate and its key (e.g. a client certificate of the data service)' },
];

/** Types that are never copied, whatever the admin allows: the API server or a controller turns them into a credential of the cluster. */
export const NEVER_SECRET_TYPES: readonly SecretTypeRule[] = [
  {
    type: 'kubernetes.io/service-account-token',
    why: 'the token controller mints a token of the ServiceAccount named by its kubernetes.io/service-account.name annotation into it',
  },
  { type: 'bootstrap.kubernetes.io/token', why: 'a bootstrap token: in kube-system it lets a machine join the cluster as a node' },
];

const matches = (rule: string, type: string) => (rule.endsWith('*') ? type.startsWith(rule.slice(0, -1)) : rule === type);

/** A Secret's type as the API server defaults it. */
export const secretTypeOf = (s: { type?: unknown }): string => (typeof s.type === 'string' && s.type !== '' ? s.type : 'Opaque');

/** Syntax of a Secret type: printable, no spaces, at most 253 characters (what the API server accepts). */
const TYPE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,252}$/;

/** Checks an admin's addition; returns it. */
export function checkAllowedSecretType(field: string, value: unknown): string {
  if (typeof value !== 'string' || !TYPE_PATTERN.test(value)) {
    fail(field, value, 'must be a Secret type such as "kubernetes.io/dockerconfigjson" or "example.com/credentials" (exact, no wildcard)');
  }
  const never = NEVER_SECRET_TYPES.find((r) => matches(r.type, value));
  if (never) fail(field, value, `is never copied (${never.why}); remove it`);
  return value;
}

/** Why a Secret type does (not) cross. */
export type SecretTypeVerdict =
  { readonly allowed: true; readonly rule: SecretTypeRule } | { readonly allowed: false; readonly never: boolean; readonly why: string };

/** The types a konnector copies: the defaults plus the admin's exact additions. */
export class SecretTypePolicy {
  static readonly DEFAULT = new SecretTypePolicy(DEFAULT_SECRET_TYPES);

  /** `field` names the option in errors, e.g. `KonnectorOptions.allowedSecretTypes`. */
  static create(added: readonly string[] = [], field = 'allowedSecretTypes'): SecretTypePolicy {
    if (!Array.isArray(added)) fail(field, added, 'must be a list of Secret types');
    const rules = added.map((t, i) => ({ type: checkAllowedSecretType(`${field}[${i}]`, t), why: 'added by the app cluster’s admin' }));
    return new SecretTypePolicy([...DEFAULT_SECRET_TYPES, ...rules]);
  }

  private constructor(readonly rules: readonly SecretTypeRule[]) {}

  decide(type: string): SecretTypeVerdict {
    const never = NEVER_SECRET_TYPES.find((r) => matches(r.type, type));
    if (never) return { allowed: false, never: true, why: never.why };
    const rule = this.rules.find((r) => matches(r.type, type));
    if (rule) return { allowed: true, rule };
    return {
      allowed: false,
      never: false,
      why: `not a data-carrying type of the allow-list (${this.rules.map((r) => r.type).join(', ')}); the konnector's --allow-secret-type=${type} allows it`,
    };
  }
}
