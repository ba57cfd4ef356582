/**
 * `KubernetesProviderConfig`: a provider-kubernetes ProviderConfig (or ClusterProviderConfig for namespaced
 * `Object`s) and how it authenticates to its target cluster.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { checkSecretKeyRef } from './_secret-ref.js';
import { IProviderConfig, ProviderConfig } from './provider-config.js';
import { checkDnsSubdomain, compact } from './_util.js';

const CLUSTER = { apiVersion: 'kubernetes.crossplane.io/v1alpha1', kind: 'ProviderConfig' };
const NAMESPACED = { apiVersion: 'kubernetes.m.crossplane.io/v1alpha1', kind: 'ClusterProviderConfig' };

/** How provider-kubernetes authenticates to its target cluster. */
export class KubernetesCredentials {
  /** The provider's own ServiceAccount, targeting the cluster it runs in (what Klutch uses). */
  public static injectedIdentity(): KubernetesCredentials {
    return new KubernetesCredentials('InjectedIdentity', { source: 'InjectedIdentity' });
  }

  /** A kubeconfig stored in a Secret (key defaults to `kubeconfig`): the multi-cluster path. */
  public static fromKubeconfigSecret(namespace: string, name: string, key = 'kubeconfig'): KubernetesCredentials {
    const secretRef = checkSecretKeyRef('KubernetesCredentials.fromKubeconfigSecret', { namespace, name, key });
    return new KubernetesCredentials('Secret', { source: 'Secret', secretRef });
  }

  private constructor(
    /** The credentials source. */
    public readonly source: string,
    private readonly json: Record<string, unknown>,
  ) {}

  /** @internal */
  public _toJson(): Record<string, unknown> {
    return JSON.parse(JSON.stringify(this.json)) as Record<string, unknown>;
  }
}

export interface KubernetesProviderConfigProps {
  /** `metadata.name`, referenced by `providerConfigRef.name`. @default 'default' */
  readonly name?: string;
  /** @default KubernetesCredentials.injectedIdentity() */
  readonly credentials?: KubernetesCredentials;
  /**
   * Emit a `ClusterProviderConfig` (`kubernetes.m.crossplane.io/v1alpha1`, provider-kubernetes ≥ 1.0)
   * for the namespaced `Object`s that Compositions of namespaced XRs compose, instead of the
   * cluster-scoped `ProviderConfig`. @default false
   */
  readonly forNamespacedObjects?: boolean;
}

/**
 * A provider-kubernetes `ProviderConfig` (`kubernetes.crossplane.io/v1alpha1`, cluster-scoped),
 * used by cluster-scoped `Object`s on Crossplane 1.20 and 2.x — or, with `forNamespacedObjects`, a
 * `ClusterProviderConfig` (`kubernetes.m.crossplane.io/v1alpha1`) for namespaced `Object`s.
 */
export class KubernetesProviderConfig extends Construct implements IProviderConfig {
  /**
   * A provider-kubernetes ProviderConfig made elsewhere (emits nothing): a `ProviderConfig`, or with
   * `forNamespacedObjects` a `ClusterProviderConfig`.
   */
  public static fromName(scope: Construct, id: string, name: string, options: { readonly forNamespacedObjects?: boolean } = {}): IProviderConfig {
    return ProviderConfig.fromName(scope, id, name, options.forNamespacedObjects ? NAMESPACED : CLUSTER);
  }

  public readonly apiObject: ApiObject;
  public readonly name: string;
  public readonly apiVersion: string;
  public readonly kind: string;
  public readonly credentials: KubernetesCredentials;

  constructor(scope: Construct, id: string, props: KubernetesProviderConfigProps = {}) {
    super(scope, id);
    this.name = checkDnsSubdomain('KubernetesProviderConfigProps.name', props.name ?? 'default');
    if (props.credentials !== undefined && !(props.credentials instanceof KubernetesCredentials)) {
      throw new Error(
        `KubernetesProviderConfigProps.credentials: ${JSON.stringify(props.credentials)} must be made with KubernetesCredentials.injectedIdentity() or KubernetesCredentials.fromKubeconfigSecret()`,
      );
    }
    this.credentials = props.credentials ?? KubernetesCredentials.injectedIdentity();
    if (props.forNamespacedObjects !== undefined && typeof props.forNamespacedObjects !== 'boolean') {
      throw new Error(`KubernetesProviderConfigProps.forNamespacedObjects: ${JSON.stringify(props.forNamespacedObjects)} must be true or false`);
    }
    const namespaced = props.forNamespacedObjects ?? false;
    ({ apiVersion: this.apiVersion, kind: this.kind } = namespaced ? NAMESPACED : CLUSTER);
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: this.apiVersion,
      kind: this.kind,
      metadata: compact({ name: this.name }),
      spec: { credentials: this.credentials._toJson() },
    });
  }
}
