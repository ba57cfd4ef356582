/**
 * The konnector's namespace allow-list: the app-cluster namespaces bindings may use, declared up front
 * by the app cluster's admin (`--allow-namespace`, `KonnectorProps.allowedNamespaces`). With it the
 * konnector's Secret and ConfigMap rights exist only there (a RoleBinding each, rendered by the
 * `Konnector` construct) and the konnector syncs nothing elsewhere (docs/bind.md, threat model). In the
 * contract because the construct (RBAC) and the konnector (sync) check the same names the same way.
 */
import { fail } from './_errors.js';
import { isDnsLabel } from './_names.js';

/** Namespaces of the cluster itself: never bound, never on the allow-list. */
export const SYSTEM_NAMESPACES: readonly string[] = ['kube-system', 'kube-public', 'kube-node-lease'];

/** Returns `ns`, or throws naming `field`, the value and what to do. */
export function checkAllowedNamespace(field: string, ns: unknown): string {
  if (!isDnsLabel(ns)) fail(field, ns, 'is not a namespace name (a DNS-1123 label)');
  if (SYSTEM_NAMESPACES.includes(ns)) fail(field, ns, `is a system namespace (${SYSTEM_NAMESPACES.join(', ')}); the konnector never syncs into it: remove it`);
  return ns;
}
