/**
 * Where a {@link Konnector} may read and write the Secrets and ConfigMaps that permission claims sync:
 * only in named app-cluster namespaces (`KonnectorNamespaces.only('team-a')`, the default's kind) or,
 * as the weaker and explicitly named choice, in every namespace (`KonnectorNamespaces.all()`).
 * Rendered as the konnector's RBAC (a RoleBinding per namespace, or cluster-wide rules) and its
 * `--allow-namespace` / `--all-namespaces` flags (docs/bind.md, threat model).
 */
import { fail } from '../_errors.js';
import { checkAllowedNamespace } from '../../contract/allowed-namespaces.js';

/** The konnector's namespace reach; build one with {@link KonnectorNamespaces.only} or {@link KonnectorNamespaces.all}. */
export class KonnectorNamespaces {
  /**
   * Only these namespaces (each a DNS-1123 label, never a system namespace): the konnector's Secret and
   * ConfigMap rights exist there only, and it syncs nothing elsewhere. They must exist when the
   * manifests are applied (a RoleBinding goes into each).
   */
  public static only(...namespaces: string[]): KonnectorNamespaces {
    const at = 'KonnectorNamespaces.only(namespaces)';
    if (namespaces.length === 0)
      fail(at, namespaces, 'must name at least one namespace; use KonnectorNamespaces.all() for every namespace (the weaker choice)');
    const checked = namespaces.map((n, i) => checkAllowedNamespace(`KonnectorNamespaces.only(namespaces[${i}])`, n));
    return new KonnectorNamespaces([...new Set(checked)].sort());
  }

  /**
   * Every namespace: Secret and ConfigMap read and write cluster-wide (the konnector's `--all-namespaces`).
   * The weaker choice: whoever holds the konnector's token reads every Secret of the cluster. Use it only
   * when app developers create bindings in namespaces no admin can name up front.
   */
  public static all(): KonnectorNamespaces {
    return new KonnectorNamespaces(undefined);
  }

  private constructor(
    /** The namespaces, sorted; undefined for every namespace. */
    public readonly namespaces: readonly string[] | undefined,
  ) {}

  /** Whether this is {@link KonnectorNamespaces.all}. */
  public get clusterWide(): boolean {
    return this.namespaces === undefined;
  }

  public toString(): string {
    return this.namespaces === undefined ? 'KonnectorNamespaces.all()' : `KonnectorNamespaces.only(${this.namespaces.map((n) => `'${n}'`).join(', ')})`;
  }
}
