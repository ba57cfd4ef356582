import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { checkSecretKeyRef } from './_secret-ref.js';
import { checkDnsSubdomain, compact } from './_util.js';

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
}

/**
 * A provider-kubernetes `ProviderConfig` (`kubernetes.crossplane.io/v1alpha1`, cluster-scoped),
 * used by cluster-scoped `Object`s on Crossplane 1.20 and 2.x.
 */
export class KubernetesProviderConfig extends Construct {
  public readonly apiObject: ApiObject;
  public readonly name: string;
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
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: 'kubernetes.crossplane.io/v1alpha1',
      kind: 'ProviderConfig',
      metadata: compact({ name: this.name }),
      spec: { credentials: this.credentials._toJson() },
    });
  }
}
