/**
 * `AnyninesProviderFlavour`: which provider-anynines a control plane runs (Klutch's released, cluster-scoped
 * one, or its Crossplane v2 branch with namespaced managed resources) and the package of each.
 */
import { EnumLike, enumMembers } from '../_enum-like.js';

/** provider-anynines as released with Klutch 1.5.0: cluster-scoped managed resources. */
const CLUSTER_SCOPED_PACKAGE = 'public.ecr.aws/w5n9a2g2/klutch/provider-anynines:v1.5.0';
/**
 * provider-anynines of Klutch's Crossplane v2 branch (`migration-crossplane-v2`, unreleased): the package its
 * examples install. Namespaced managed resources.
 */
const NAMESPACED_PACKAGE = 'public.ecr.aws/h6x7g6i7/klutch/provider-anynines:KLT-877';

/**
 * Which provider-anynines a control plane runs, by the scope of its managed resources (enum-like: static instances).
 * Both serve `dataservices.anynines.com/v1` (ServiceInstance, ServiceBinding, Backup, Restore); their
 * ProviderConfigs are cluster-scoped either way.
 *
 * - `CLUSTER_SCOPED`: Klutch's releases (1.5.0). Compositions of claims compose its cluster-scoped resources.
 * - `NAMESPACED`: Klutch's Crossplane v2 branch. Namespaced composite resources (Crossplane 2.x) can compose only
 *   namespaced resources: its ServiceInstance, ServiceBinding, Backup and Restore are namespaced, composed into the
 *   composite's namespace, and its ServiceBinding writes the connection Secret there.
 *
 * The API style picks one (`ApiStyle.anyninesProvider`); `ControlPlaneCluster` installs it.
 */
export class AnyninesProviderFlavour extends EnumLike {
  /** Cluster-scoped managed resources (Klutch 1.5.0), for `ApiStyle.CLAIMS`. */
  public static readonly CLUSTER_SCOPED = new AnyninesProviderFlavour('Cluster', CLUSTER_SCOPED_PACKAGE, 'cluster-scoped');
  /** Namespaced managed resources (Klutch's Crossplane v2 branch), for `ApiStyle.NAMESPACED_XR`. */
  public static readonly NAMESPACED = new AnyninesProviderFlavour('Namespaced', NAMESPACED_PACKAGE, 'namespaced');

  /** Every instance, in declaration order. */
  public static get all(): readonly AnyninesProviderFlavour[] {
    return enumMembers(AnyninesProviderFlavour);
  }

  /** The flavour whose default package is `pkg`, else undefined (a package of your own registry says nothing). */
  public static ofPackage(pkg: string): AnyninesProviderFlavour | undefined {
    return AnyninesProviderFlavour.all.find((f) => f.defaultPackage === pkg);
  }

  private constructor(
    /** The `scope` of its managed resources' CRDs (`Cluster`, `Namespaced`). */
    value: string,
    /** The package klutch-kit installs by default. */
    public readonly defaultPackage: string,
    /** How messages name it (`cluster-scoped`, `namespaced`). */
    public readonly adjective: string,
  ) {
    super(value);
  }

  /** E.g. `the namespaced provider-anynines (public.ecr.aws/…:KLT-877)`. */
  public describe(pkg: string = this.defaultPackage): string {
    return `the ${this.adjective} provider-anynines (${pkg})`;
  }
}
