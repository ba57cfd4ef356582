/**
 * `ConfigurationPackageSource`: the source of a Crossplane Configuration package (`crossplane.yaml` and
 * the XRDs and Compositions added to it) that the synth writes beside the cluster's manifests, and the
 * package's dependencies (`dependencyOn`).
 */
import { ApiObject } from 'cdk8s';
import { Construct, IConstruct } from 'constructs';
import { parsePackageRef } from './_package.js';
import { checkDnsLabel, checkNonEmpty, fail, isPlainObject } from './_util.js';
import { Slot } from '../_cluster-registry.js';
import { EnumLike, enumMembers } from '../_enum-like.js';

/** What a Configuration package depends on (enum-like: static instances). */
export class PackageDependencyKind extends EnumLike {
  public static readonly PROVIDER = new PackageDependencyKind('provider');
  public static readonly FUNCTION = new PackageDependencyKind('function');
  public static readonly CONFIGURATION = new PackageDependencyKind('configuration');

  /** Every instance, in declaration order. */
  public static get all(): readonly PackageDependencyKind[] {
    return enumMembers(PackageDependencyKind);
  }

  private constructor(
    /** The key of the `dependsOn` entry, e.g. `provider`. */
    value: string,
  ) {
    super(value);
  }
}

/** A `dependsOn` entry of a Configuration package's `crossplane.yaml`. */
export interface PackageDependency {
  readonly kind: PackageDependencyKind;
  /** Fully qualified package repository without tag, e.g. `xpkg.crossplane.io/crossplane-contrib/provider-kubernetes`. */
  readonly package: string;
  /** Semantic version constraint, e.g. `>=v1.2.1`. */
  readonly version: string;
}

/** The `crossplane.yaml` API version and kind. */
export const CONFIGURATION_META_API_VERSION = 'meta.pkg.crossplane.io/v1';
/** Crossplane releases a klutch-kit package installs on: 1.20 (what Klutch runs) and 2.x. */
export const DEFAULT_CROSSPLANE_CONSTRAINT = '>=v1.20.0';
/** The constraint of a package holding v2 XRDs (namespaced composite resources). */
export const V2_CROSSPLANE_CONSTRAINT = '>=v2.0.0';

const CONSTRAINT = /^(\s*(>=|<=|>|<|=|!=|~|\^)?\s*v?[0-9]+(\.[0-9x*]+){0,2}(-[0-9A-Za-z.-]+)?\s*,?)+$/;

/**
 * A dependency on the package a pinned reference names, at that version or newer:
 * `dependencyOn(PackageDependencyKind.PROVIDER, 'xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:v1.2.1')`
 * → `{ provider: xpkg.crossplane.io/crossplane-contrib/provider-kubernetes, version: ">=v1.2.1" }`.
 */
export function dependencyOn(kind: PackageDependencyKind, ref: string): PackageDependency {
  const p = parsePackageRef(`dependencyOn(${kind})`, ref);
  if (!p.tag) fail(`dependencyOn(${kind})`, ref, 'is pinned by digest; a dependency needs a version tag for its constraint');
  return { kind, package: `${p.registry}/${p.repository}`, version: `>=${p.tag}` };
}

export interface ConfigurationPackageSourceProps {
  /** `metadata.name` of the package (`crossplane.yaml`). */
  readonly name: string;
  /** Crossplane version constraint (`spec.crossplane.version`). @default DEFAULT_CROSSPLANE_CONSTRAINT */
  readonly crossplaneVersion?: string;
  /** Packages this one needs (functions and providers its Compositions use). @default - none */
  readonly dependsOn?: readonly PackageDependency[];
  /** Annotations of the package metadata (`meta.crossplane.io/maintainer`, `…/source`, `…/description`). @default - none */
  readonly annotations?: Readonly<Record<string, string>>;
}

const PACKAGED = new Set(['apiextensions.crossplane.io/CompositeResourceDefinition', 'apiextensions.crossplane.io/Composition']);
const SOURCE_SYMBOL = Symbol.for('klutch-kit.ConfigurationPackageSource');
/** The package an object was added to (one at most), kept on the object (across copies of this library). */
const PACKAGE_OF = new Slot<ConfigurationPackageSource>('klutch-kit.ConfigurationPackageSource.packageOf');

/**
 * The source of a Crossplane Configuration package: the XRDs and Compositions added to it go into
 * the package (`crossplane.yaml` + objects) instead of the cluster's manifests. A
 * `CompositeResourceDefinition` or `Composition` created below a package source adds its object
 * to it when it is constructed; every other object below it (export templates, ProviderConfigs, …)
 * stays in the cluster. The synth writes the source to `<outdir>/<cluster>.packages/<name>/`;
 * `klutch-kit package build` turns it into an `.xpkg` image and `klutch-kit package push` pushes it.
 */
export class ConfigurationPackageSource extends Construct {
  /** True for a ConfigurationPackageSource (across copies of this library). */
  public static isConfigurationPackageSource(x: unknown): x is ConfigurationPackageSource {
    return typeof x === 'object' && x !== null && (x as Record<symbol, unknown>)[SOURCE_SYMBOL] === true;
  }

  /** The nearest enclosing package source of `c` (not `c` itself), or undefined: where a packaged object created in `c` goes. */
  public static enclosing(c: IConstruct): ConfigurationPackageSource | undefined {
    for (let s = c.node.scope; s; s = s.node.scope) {
      if (ConfigurationPackageSource.isConfigurationPackageSource(s)) return s;
    }
    return undefined;
  }

  /** The package source an object was added to (see addObject), if any. */
  public static packageOf(obj: IConstruct): ConfigurationPackageSource | undefined {
    return PACKAGE_OF.get(obj);
  }

  /** Kinds a Configuration package carries: XRDs and Compositions. */
  public static isPackagedKind(apiVersion: string, kind: string): boolean {
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '';
    return PACKAGED.has(`${group}/${kind}`);
  }

  public readonly packageName: string;
  public readonly crossplaneVersion: string;
  private readonly deps: PackageDependency[];
  private readonly annotations: Readonly<Record<string, string>>;
  private readonly added: ApiObject[] = [];

  constructor(scope: Construct, id: string, props: ConfigurationPackageSourceProps) {
    super(scope, id);
    const P = 'ConfigurationPackageSourceProps';
    if (!isPlainObject(props)) fail(P, props, 'must be an object with at least a name');
    Object.defineProperty(this, SOURCE_SYMBOL, { value: true });
    this.packageName = checkDnsLabel(`${P}.name`, props.name);
    this.crossplaneVersion = props.crossplaneVersion ?? DEFAULT_CROSSPLANE_CONSTRAINT;
    if (typeof this.crossplaneVersion !== 'string' || !CONSTRAINT.test(this.crossplaneVersion)) {
      fail(`${P}.crossplaneVersion`, props.crossplaneVersion, 'is not a semantic version constraint such as ">=v1.20.0"');
    }
    this.deps = [];
    (props.dependsOn ?? []).forEach((d, i) => this.addDependencyAt(`${P}.dependsOn[${i}]`, d, false));
    this.annotations = { ...(props.annotations ?? {}) };
  }

  /** The objects added to the package (XRDs and Compositions), in the order they were added. */
  public get objects(): readonly ApiObject[] {
    return [...this.added];
  }

  /**
   * Puts an XRD or Composition object into this package instead of its cluster's manifests
   * (idempotent). `CompositeResourceDefinition` and `Composition` constructs created below the
   * package call it themselves; call it for an `ApiObject` of those kinds made by hand.
   */
  public addObject(obj: ApiObject): void {
    const at = 'ConfigurationPackageSource.addObject(obj)';
    if (!(obj instanceof ApiObject)) fail(at, obj, 'must be an ApiObject (an XRD or Composition)');
    if (!ConfigurationPackageSource.isPackagedKind(obj.apiVersion, obj.kind)) {
      fail(
        `${at}.kind`,
        `${obj.apiVersion}/${obj.kind}`,
        'is not a CompositeResourceDefinition or Composition of apiextensions.crossplane.io; only those go into a package',
      );
    }
    const other = ConfigurationPackageSource.packageOf(obj);
    if (other === this) return;
    if (other) fail(at, obj.node.path, `is already in package "${other.packageName}" (${other.node.path})`);
    if (!obj.node.scopes.includes(this)) fail(at, obj.node.path, `is not below this package source (${this.node.path}); create the object in its scope`);
    PACKAGE_OF.set(obj, this);
    this.added.push(obj);
  }

  /** The dependencies (`spec.dependsOn`). */
  public get dependsOn(): readonly PackageDependency[] {
    return [...this.deps];
  }

  /** Adds a dependency; one already listed for the same package is kept (idempotent). */
  public addDependency(dep: PackageDependency): void {
    this.addDependencyAt('ConfigurationPackageSource.addDependency(dep)', dep, true);
  }

  private addDependencyAt(at: string, d: PackageDependency, idempotent: boolean): void {
    if (!isPlainObject(d)) fail(at, d, 'must be { kind, package, version } (see dependencyOn())');
    if (!(d.kind instanceof PackageDependencyKind)) fail(`${at}.kind`, d.kind, `must be one of ${PackageDependencyKind.all.join(', ')}`);
    const ref = parsePackageRef(`${at}.package`, `${checkNonEmpty(`${at}.package`, d.package)}:v0.0.0`);
    if (`${ref.registry}/${ref.repository}` !== d.package) fail(`${at}.package`, d.package, 'must be a repository without tag or digest');
    if (typeof d.version !== 'string' || !CONSTRAINT.test(d.version))
      fail(`${at}.version`, d.version, 'is not a semantic version constraint such as ">=v1.2.1"');
    if (this.deps.some((x) => x.package === d.package)) {
      if (idempotent) return;
      fail(`${at}.package`, d.package, 'is listed twice');
    }
    this.deps.push({ kind: d.kind, package: d.package, version: d.version });
  }

  /** The package metadata, as written to `crossplane.yaml`. */
  public toMeta(): Record<string, unknown> {
    return {
      apiVersion: CONFIGURATION_META_API_VERSION,
      kind: 'Configuration',
      metadata: { name: this.packageName, ...(Object.keys(this.annotations).length ? { annotations: { ...this.annotations } } : {}) },
      spec: {
        crossplane: { version: this.effectiveCrossplaneVersion },
        ...(this.deps.length ? { dependsOn: this.deps.map((d) => ({ [d.kind.value]: d.package, version: d.version })) } : {}),
      },
    };
  }

  /**
   * The constraint written to `crossplane.yaml`: `crossplaneVersion`, except that the default
   * (`>=v1.20.0`) becomes `>=v2.0.0` when the package holds a v2 XRD (namespaced XRs), which
   * Crossplane 1.20 cannot install.
   */
  public get effectiveCrossplaneVersion(): string {
    if (this.crossplaneVersion !== DEFAULT_CROSSPLANE_CONSTRAINT) return this.crossplaneVersion;
    const v2 = this.added.some((o) => o.kind === 'CompositeResourceDefinition' && o.apiVersion === 'apiextensions.crossplane.io/v2');
    return v2 ? V2_CROSSPLANE_CONSTRAINT : this.crossplaneVersion;
  }

  /** The objects added to this source (XRDs, then Compositions, each by name), rendered. */
  public packagedObjects(): Record<string, unknown>[] {
    const out: Array<Record<string, any>> = this.added.map((o) => o.toJson());
    const rank = (o: Record<string, any>) => (o.kind === 'CompositeResourceDefinition' ? 0 : 1);
    return out.sort((a, b) => rank(a) - rank(b) || (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
  }
}
