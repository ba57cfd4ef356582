/**
 * `ApiStyle`: how app clusters create instances — Crossplane claims, or namespaced composite resources
 * (Crossplane 2.x) — and what each style means for the XRD and the composed objects.
 */
import { EnumLike, enumMembers } from '../_enum-like.js';
import { AnyninesProviderFlavour, CrossplaneVersion } from '../crossplane/index.js';
import { celString, fail } from './_util.js';

/** API version of provider-kubernetes' cluster-scoped `Object` (Crossplane 1.20 and 2.x). */
export const PROVIDER_KUBERNETES_OBJECT_API_VERSION = 'kubernetes.crossplane.io/v1alpha1';
/** API version of provider-kubernetes' namespaced `Object` (provider-kubernetes ≥ 1.0, Crossplane 2.x). */
export const PROVIDER_KUBERNETES_NAMESPACED_OBJECT_API_VERSION = 'kubernetes.m.crossplane.io/v1alpha1';

/**
 * How a data service is offered to app clusters (enum-like: static instances).
 *
 * - `CLAIMS`: an `apiextensions.crossplane.io/v1` XRD with claims (`XPostgresqlInstance` +
 *   `PostgresqlInstance`); Crossplane 2.x runs it as `LegacyCluster`. What Klutch's `main` runs.
 * - `NAMESPACED_XR`: an `apiextensions.crossplane.io/v2` XRD with `scope: Namespaced` and no claims:
 *   the composite resource itself is the bound kind (`PostgresqlInstance`); Crossplane's fields are
 *   under `spec.crossplane`; Compositions compose namespaced resources (provider-kubernetes'
 *   `kubernetes.m.crossplane.io` `Object` with a `ClusterProviderConfig`) and credentials as a
 *   composed Secret. Needs Crossplane 2.x. Its a9s Compositions compose the namespaced managed resources of
 *   provider-anynines from Klutch's Crossplane v2 branch (`anyninesProvider`).
 */
export class ApiStyle extends EnumLike {
  /** XRD with claims (the default while Klutch's `main` is claim-based). */
  public static readonly CLAIMS = new ApiStyle(
    'Claims',
    'self.compositionRef',
    'metadata.labels[crossplane.io/claim-name]',
    'metadata.labels[crossplane.io/claim-namespace]',
  );
  /** Namespaced composite resources (Crossplane v2), bound without claims. */
  public static readonly NAMESPACED_XR = new ApiStyle('NamespacedXR', 'self.crossplane.compositionRef', 'metadata.name', 'metadata.namespace');

  /** Every instance, in declaration order. */
  public static get all(): readonly ApiStyle[] {
    return enumMembers(ApiStyle);
  }

  private constructor(
    value: string,
    /** CEL path of the Composition reference in the bound object's `spec` (`self` = spec). */
    public readonly compositionRefPath: string,
    /** Field path on the XR holding the bound object's name (claim-name label, or the XR's own name). */
    public readonly namePath: string,
    /** Field path on the XR holding the bound object's namespace. */
    public readonly namespacePath: string,
  ) {
    super(value);
  }

  /** True for namespaced XRs. */
  public get namespaced(): boolean {
    return this === ApiStyle.NAMESPACED_XR;
  }

  /**
   * The provider-anynines this style's a9s Compositions compose for: the cluster-scoped one (Klutch 1.5.0) for
   * claims, the namespaced one (Klutch's Crossplane v2 branch) for namespaced XRs, which compose only namespaced
   * resources. The one place that ties an API style to a provider; `ControlPlaneCluster` installs what it says.
   */
  public get anyninesProvider(): AnyninesProviderFlavour {
    return this.namespaced ? AnyninesProviderFlavour.NAMESPACED : AnyninesProviderFlavour.CLUSTER_SCOPED;
  }

  /**
   * The selected Composition's name as CEL over `spec`; a bound object without a reference counts as
   * the default (Crossplane applies the XRD's `defaultCompositionRef`), so the field is read behind `has()`.
   */
  public compositionExpr(defaultName: string): string {
    const p = this.compositionRefPath;
    const guard = this.namespaced ? 'has(self.crossplane) && has(self.crossplane.compositionRef)' : 'has(self.compositionRef)';
    return `(${guard} ? ${p}.name : ${celString(defaultName)})`;
  }

  /** apiVersion of the provider-kubernetes `Object` this style composes. */
  public get objectApiVersion(): string {
    return this.namespaced ? PROVIDER_KUBERNETES_NAMESPACED_OBJECT_API_VERSION : PROVIDER_KUBERNETES_OBJECT_API_VERSION;
  }

  /** `providerConfigRef` of a composed provider-kubernetes `Object`. */
  public objectProviderConfigRef(name: string): Record<string, string> {
    return this.namespaced ? { name, kind: 'ClusterProviderConfig' } : { name };
  }
}

/**
 * Checks an `apiStyle` prop against the Crossplane release it targets: namespaced XRs need 2.x.
 * The message names both props.
 */
export function checkApiStyle(prop: string, style: unknown, versionProp: string, version: unknown): { style: ApiStyle; version: CrossplaneVersion } {
  const s = style ?? ApiStyle.CLAIMS;
  if (!(s instanceof ApiStyle))
    fail(prop, style, `must be one of ${ApiStyle.all.map((x) => `ApiStyle.${x === ApiStyle.CLAIMS ? 'CLAIMS' : 'NAMESPACED_XR'}`).join(', ')}`);
  const v = version ?? CrossplaneVersion.V2_3;
  if (!(v instanceof CrossplaneVersion)) fail(versionProp, version, 'must be a CrossplaneVersion (e.g. CrossplaneVersion.V2_3)');
  if (s.namespaced && v.isV1) {
    fail(
      prop,
      s.value,
      `needs Crossplane 2.x, but ${versionProp} is ${v.chartVersion}: Crossplane 1.20 has no namespaced composite resources; ` +
        `use ApiStyle.CLAIMS for 1.20 or target CrossplaneVersion.V2_3`,
    );
  }
  return { style: s, version: v };
}

/** The short names of the API styles in configuration: the stack's `klutch-kit:catalogue.apiStyle`, the sandbox's `--api-style`. */
export const API_STYLE_NAMES: Readonly<Record<string, ApiStyle>> = Object.freeze({ claims: ApiStyle.CLAIMS, namespaced: ApiStyle.NAMESPACED_XR });

/** The API style named `value` (`claims` or `namespaced`); anything else fails naming `prop` and the value. */
export function apiStyleNamed(prop: string, value: unknown): ApiStyle {
  const style = typeof value === 'string' && Object.prototype.hasOwnProperty.call(API_STYLE_NAMES, value) ? API_STYLE_NAMES[value] : undefined;
  if (!style) fail(prop, value, `is not an API style; use ${Object.keys(API_STYLE_NAMES).join(' or ')}`);
  return style;
}
