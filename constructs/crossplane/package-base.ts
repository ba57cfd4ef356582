/**
 * The base of the Crossplane package constructs (Provider, Function, Configuration): package reference,
 * pull and revision policies, runtime config.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { parsePackageRef, ParsedPackage } from './_package.js';
import { checkDnsLabel, checkDnsSubdomain, checkInteger, compact, fail } from './_util.js';
import { EnumLike, enumMembers } from '../_enum-like.js';

/** Image pull policy for packages (enum-like: static instances). */
export class PackagePullPolicy extends EnumLike {
  public static readonly ALWAYS = new PackagePullPolicy('Always');
  public static readonly IF_NOT_PRESENT = new PackagePullPolicy('IfNotPresent');
  public static readonly NEVER = new PackagePullPolicy('Never');

  /** Every instance, in declaration order. */
  public static get all(): readonly PackagePullPolicy[] {
    return enumMembers(PackagePullPolicy);
  }

  private constructor(
    /** The `spec.packagePullPolicy` value. */
    value: string,
  ) {
    super(value);
  }
}

/** Whether a new package revision becomes active on its own (enum-like: static instances). */
export class RevisionActivationPolicy extends EnumLike {
  public static readonly AUTOMATIC = new RevisionActivationPolicy('Automatic');
  public static readonly MANUAL = new RevisionActivationPolicy('Manual');

  /** Every instance, in declaration order. */
  public static get all(): readonly RevisionActivationPolicy[] {
    return enumMembers(RevisionActivationPolicy);
  }

  private constructor(
    /** The `spec.revisionActivationPolicy` value. */
    value: string,
  ) {
    super(value);
  }
}

/** Props shared by Provider, Function and Configuration (`pkg.crossplane.io/v1`). */
export interface PackageProps {
  /**
   * Fully qualified package reference with a tag or digest,
   * e.g. `xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:v1.2.1`.
   */
  readonly package: string;
  /** `metadata.name`. @default - the last path segment of the package (e.g. `provider-kubernetes`) */
  readonly name?: string;
  /** @default - Crossplane's default (IfNotPresent) */
  readonly packagePullPolicy?: PackagePullPolicy;
  /** Names of image pull Secrets in Crossplane's namespace. @default - none */
  readonly packagePullSecrets?: string[];
  /** @default - Crossplane's default (Automatic) */
  readonly revisionActivationPolicy?: RevisionActivationPolicy;
  /** @default - Crossplane's default (1) */
  readonly revisionHistoryLimit?: number;
  /** @default false */
  readonly ignoreCrossplaneConstraints?: boolean;
  /** @default false */
  readonly skipDependencyResolution?: boolean;
  /** Labels added to every object the package creates. @default - none */
  readonly commonLabels?: Record<string, string>;
  /** Labels on the package object. @default - none */
  readonly labels?: Record<string, string>;
  /** Annotations on the package object. @default - none */
  readonly annotations?: Record<string, string>;
}

/** Something that names a DeploymentRuntimeConfig. */
export interface IDeploymentRuntimeConfig {
  /** `metadata.name` of the DeploymentRuntimeConfig. */
  readonly runtimeConfigName: string;
}

/** Props of packages with a runtime (Provider, Function). */
export interface RuntimePackageProps extends PackageProps {
  /** The DeploymentRuntimeConfig to run the package with. @default - Crossplane's default (`default`) */
  readonly runtimeConfig?: IDeploymentRuntimeConfig;
}

/** @internal Common implementation of the `pkg.crossplane.io/v1` package constructs. */
export abstract class PackageBase extends Construct {
  /** The emitted object. */
  public readonly apiObject: ApiObject;
  /** `metadata.name`. */
  public readonly name: string;
  /** The package reference. */
  public readonly packageRef: string;
  /** The parsed package reference. */
  public readonly parsedPackage: ParsedPackage;

  protected constructor(scope: Construct, id: string, kind: string, props: RuntimePackageProps, runtime: boolean) {
    super(scope, id);
    const p = `${kind}Props`;
    if (!props || typeof props !== 'object') fail(p, props, 'must be an object');
    this.parsedPackage = parsePackageRef(`${p}.package`, props.package);
    this.packageRef = props.package;
    this.name =
      props.name !== undefined ? checkDnsSubdomain(`${p}.name`, props.name) : checkDnsLabel(`${p}.name (derived from package)`, this.parsedPackage.basename);
    if (props.packagePullPolicy !== undefined && !(props.packagePullPolicy instanceof PackagePullPolicy)) {
      fail(`${p}.packagePullPolicy`, props.packagePullPolicy, `must be one of ${PackagePullPolicy.all.join(', ')}`);
    }
    if (props.revisionActivationPolicy !== undefined && !(props.revisionActivationPolicy instanceof RevisionActivationPolicy)) {
      fail(`${p}.revisionActivationPolicy`, props.revisionActivationPolicy, 'must be Automatic or Manual');
    }
    if (props.revisionHistoryLimit !== undefined) checkInteger(`${p}.revisionHistoryLimit`, props.revisionHistoryLimit, 0);
    for (const s of props.packagePullSecrets ?? []) checkDnsSubdomain(`${p}.packagePullSecrets`, s);
    if (!runtime) {
      const extra = props as RuntimePackageProps;
      if (extra.runtimeConfig !== undefined)
        fail(`${p}.runtimeConfig`, extra.runtimeConfig.runtimeConfigName, `does not apply to a ${kind} (a package without a runtime)`);
    }
    if (props.runtimeConfig !== undefined) checkDnsSubdomain(`${p}.runtimeConfig`, props.runtimeConfig.runtimeConfigName);

    const spec = compact({
      package: props.package,
      packagePullPolicy: props.packagePullPolicy?.value,
      packagePullSecrets: props.packagePullSecrets?.map((name) => ({ name })),
      revisionActivationPolicy: props.revisionActivationPolicy?.value,
      revisionHistoryLimit: props.revisionHistoryLimit,
      ignoreCrossplaneConstraints: props.ignoreCrossplaneConstraints,
      skipDependencyResolution: props.skipDependencyResolution,
      commonLabels: props.commonLabels,
      runtimeConfigRef: props.runtimeConfig
        ? { apiVersion: 'pkg.crossplane.io/v1beta1', kind: 'DeploymentRuntimeConfig', name: props.runtimeConfig.runtimeConfigName }
        : undefined,
    });
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: 'pkg.crossplane.io/v1',
      kind,
      metadata: compact({ name: this.name, labels: props.labels, annotations: props.annotations }),
      spec,
    });
  }
}
