/**
 * `klutch.anynines.com/v1alpha1` APIServiceBinding on an app cluster: binds the provider's API
 * `<resource>.<group>` through the kubeconfig in a Secret; the konnector then creates the CRD
 * locally and syncs objects. The object name is `<resource>.<group>` (= export name = CRD name).
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { fail } from '../_errors.js';
import { apiServiceBindingKind, type APIServiceBindingSpec } from '../../contract/index.js';
import { KONNECTOR_NAMESPACE } from './_defaults.js';
import { checkDnsLabel, checkDnsSubdomain } from './_pod.js';
import { AcceptablePermissionClaim, checkGroup, checkResource, renderPermissionClaim } from './permission-claim.js';

export interface KubeconfigSecretRef {
  /** Secret name (kubectl-bind uses `kubeconfig-<random>`). */
  readonly name: string;
  /** Secret namespace. @default "klutch-bind" */
  readonly namespace?: string;
}

export interface ApiServiceBindingProps {
  /** API group of the bound API, e.g. `anynines.com`. */
  readonly group: string;
  /** Plural resource, e.g. `postgresqlinstances`. */
  readonly resource: string;
  /** The Secret holding the provider kubeconfig under key `kubeconfig`. */
  readonly kubeconfigSecretRef: KubeconfigSecretRef;
  /** Claims accepted or rejected by the consumer. @default [] */
  readonly permissionClaims?: AcceptablePermissionClaim[];
  /**
   * Namespace of the binding (and of its kubeconfig Secret). The konnector acts only on bindings in its
   * admin namespace (`--binding-admin-namespace`, default its own namespace, else `klutch-bind`).
   * @default "klutch-bind"
   */
  readonly namespace?: string;
}

export class ApiServiceBinding extends Construct {
  public readonly apiObject: ApiObject;
  /** `<resource>.<group>`, the name of the binding and of the CRD it creates. */
  public readonly bindingName: string;
  public readonly group: string;
  public readonly resource: string;

  constructor(scope: Construct, id: string, props: ApiServiceBindingProps) {
    super(scope, id);
    this.group = checkGroup('ApiServiceBindingProps.group', props.group);
    if (this.group === '') throw new Error('ApiServiceBindingProps.group: "" (core group) cannot be bound; bind a CRD group');
    this.resource = checkResource('ApiServiceBindingProps.resource', props.resource);
    this.bindingName = checkDnsSubdomain('ApiServiceBindingProps (name <resource>.<group>)', `${this.resource}.${this.group}`);
    const namespace = checkDnsLabel('ApiServiceBindingProps.namespace', props.namespace ?? KONNECTOR_NAMESPACE);
    const ref = props.kubeconfigSecretRef;
    if (!ref || typeof ref !== 'object') {
      fail('ApiServiceBindingProps.kubeconfigSecretRef', ref, 'must name the kubeconfig Secret');
    }
    const secretName = checkDnsSubdomain('ApiServiceBindingProps.kubeconfigSecretRef.name', ref.name);
    const secretNamespace = checkDnsLabel('ApiServiceBindingProps.kubeconfigSecretRef.namespace', ref.namespace ?? namespace);
    if (secretNamespace !== namespace) {
      fail(
        'ApiServiceBindingProps.kubeconfigSecretRef.namespace',
        secretNamespace,
        `must be the binding's namespace "${namespace}" (ApiServiceBindingProps.namespace): the konnector reads a kubeconfig Secret only beside its binding`,
      );
    }
    const claims = (props.permissionClaims ?? []).map((c, i) => renderPermissionClaim(`ApiServiceBindingProps.permissionClaims[${i}]`, c, true));
    const spec = {
      kubeconfigSecretRef: { name: secretName, namespace: secretNamespace, key: 'kubeconfig' },
      ...(claims.length > 0 ? { permissionClaims: claims } : {}),
    } as APIServiceBindingSpec;
    const { apiVersion, kind, metadata, ...rest } = apiServiceBindingKind.make(this.bindingName, spec, { namespace });
    this.apiObject = new ApiObject(this, 'Resource', { apiVersion, kind, metadata: { name: metadata.name!, namespace: metadata.namespace }, ...rest });
  }
}
