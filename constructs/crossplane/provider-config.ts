/**
 * `IProviderConfig` and `ProviderConfig.fromName`: the ProviderConfig references backends compose with,
 * whether this app emits them or they are made elsewhere.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { checkDnsSubdomain, fail } from './_util.js';

/**
 * A Crossplane ProviderConfig a managed resource (or a provider-kubernetes `Object`) references by
 * `providerConfigRef`: `KubernetesProviderConfig`, `AnyninesProviderConfig`, or one made elsewhere
 * ({@link ProviderConfig.fromName}). Backends take one of these instead of a name, so what they
 * reference is what the control plane emits.
 */
export interface IProviderConfig {
  /** `metadata.name`: what `providerConfigRef.name` holds. */
  readonly name: string;
  /** `apiVersion`, e.g. `kubernetes.crossplane.io/v1alpha1`. */
  readonly apiVersion: string;
  /** `ProviderConfig` or `ClusterProviderConfig`. */
  readonly kind: string;
  /** The emitted object, or undefined for a ProviderConfig made elsewhere ({@link ProviderConfig.fromName}). */
  readonly apiObject?: ApiObject;
}

/** What {@link ProviderConfig.fromName} needs besides the name. */
export interface ProviderConfigImportOptions {
  /** `apiVersion` of the ProviderConfig, e.g. `kubernetes.crossplane.io/v1alpha1` or `dataservices.anynines.com/v1`. */
  readonly apiVersion: string;
  /** @default "ProviderConfig" */
  readonly kind?: string;
}

const API_VERSION = /^[a-z0-9.-]+\.[a-z0-9.-]+\/v[0-9a-z]+$/;

/** Imports of ProviderConfigs made elsewhere (another chart, a Helm release, by hand). */
export class ProviderConfig {
  /**
   * A reference to a ProviderConfig that exists in the cluster but is not emitted by this app. It
   * emits nothing; whoever creates the ProviderConfig must name it `name`.
   */
  public static fromName(scope: Construct, id: string, name: string, options: ProviderConfigImportOptions): IProviderConfig {
    const p = 'ProviderConfig.fromName';
    checkDnsSubdomain(`${p}(name)`, name);
    if (!options || typeof options.apiVersion !== 'string' || !API_VERSION.test(options.apiVersion)) {
      fail(`${p}(options.apiVersion)`, options?.apiVersion, 'must be "<group>/<version>" of the ProviderConfig, e.g. "kubernetes.crossplane.io/v1alpha1"');
    }
    const kind = options.kind ?? 'ProviderConfig';
    if (kind !== 'ProviderConfig' && kind !== 'ClusterProviderConfig') fail(`${p}(options.kind)`, kind, 'must be ProviderConfig or ClusterProviderConfig');
    return new ImportedProviderConfig(scope, id, name, options.apiVersion, kind);
  }

  private constructor() {}
}

class ImportedProviderConfig extends Construct implements IProviderConfig {
  public readonly apiObject = undefined;
  constructor(
    scope: Construct,
    id: string,
    public readonly name: string,
    public readonly apiVersion: string,
    public readonly kind: string,
  ) {
    super(scope, id);
  }
}

/** The API group of a ProviderConfig (its apiVersion without the version). */
export function providerConfigGroup(pc: IProviderConfig): string {
  return pc.apiVersion.split('/')[0];
}

/** Checks that `pc` is an {@link IProviderConfig}; the message names `prop`. */
export function checkProviderConfig(prop: string, pc: unknown): IProviderConfig {
  const x = pc as Partial<IProviderConfig> | undefined;
  if (!x || typeof x !== 'object' || typeof x.name !== 'string' || typeof x.apiVersion !== 'string' || typeof x.kind !== 'string') {
    fail(
      prop,
      pc,
      'must be an IProviderConfig (a KubernetesProviderConfig, an AnyninesProviderConfig, ControlPlaneCluster.addProviderConfig() or ProviderConfig.fromName()), not a name',
    );
  }
  return x as IProviderConfig;
}
