/**
 * The control plane's own provider-kubernetes ProviderConfig, which every `ControlPlaneCluster`
 * emits: what an `A8sBackend` (and the catalogue's a8s operations) reference unless given another
 * {@link IProviderConfig}. Compositions of namespaced XRs compose namespaced `Object`s, which
 * reference the `ClusterProviderConfig` of the same name; a `ControlPlaneCluster` emits that one
 * when a data service in it needs it.
 */
import type { IProviderConfig } from '../crossplane/index.js';

/** Backends take ProviderConfigs by reference (re-exported from `klutch-kit/crossplane`). */
export type { IProviderConfig };
import type { ApiStyle } from './api-style.js';
import { fail } from './_util.js';

/** Klutch's provider-kubernetes ProviderConfig name. */
export const KUBERNETES_PROVIDER_CONFIG = 'kubernetes-provider';

/** The control plane's provider-kubernetes `ProviderConfig` (cluster-scoped `Object`s). */
export const CONTROL_PLANE_KUBERNETES_PROVIDER_CONFIG: IProviderConfig = Object.freeze({
  name: KUBERNETES_PROVIDER_CONFIG,
  apiVersion: 'kubernetes.crossplane.io/v1alpha1',
  kind: 'ProviderConfig',
});

/** The control plane's provider-kubernetes `ClusterProviderConfig` (namespaced `Object`s of namespaced XRs). */
export const CONTROL_PLANE_KUBERNETES_CLUSTER_PROVIDER_CONFIG: IProviderConfig = Object.freeze({
  name: KUBERNETES_PROVIDER_CONFIG,
  apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
  kind: 'ClusterProviderConfig',
});

/** The control plane's provider-kubernetes ProviderConfig for the `Object`s of an API style. */
export function controlPlaneKubernetesProviderConfig(style: ApiStyle): IProviderConfig {
  return style.namespaced ? CONTROL_PLANE_KUBERNETES_CLUSTER_PROVIDER_CONFIG : CONTROL_PLANE_KUBERNETES_PROVIDER_CONFIG;
}

/**
 * The ProviderConfig a provider-kubernetes `Object` of `style` uses: `given`, checked to be of the
 * `Object`'s API group (`ProviderConfig` for cluster-scoped, `ClusterProviderConfig` for namespaced
 * `Object`s), or the control plane's.
 */
export function objectProviderConfig(prop: string, given: IProviderConfig | undefined, style: ApiStyle): IProviderConfig {
  const want = controlPlaneKubernetesProviderConfig(style);
  if (given === undefined) return want;
  if (given.apiVersion.split('/')[0] !== want.apiVersion.split('/')[0] || given.kind !== want.kind) {
    fail(
      prop,
      `${given.kind} ${given.name} (${given.apiVersion})`,
      `cannot be used by the ${style.namespaced ? 'namespaced' : 'cluster-scoped'} Objects of this data service; give a ${want.kind} of ${want.apiVersion.split('/')[0]}` +
        ` (KubernetesProviderConfig${style.namespaced ? ' with forNamespacedObjects: true' : ''})`,
    );
  }
  return given;
}

/** `providerConfigRef` of a provider-kubernetes `Object`: namespaced `Object`s name the kind. */
export function objectProviderConfigRef(pc: IProviderConfig, style: ApiStyle): Record<string, string> {
  return style.namespaced ? { name: pc.name, kind: pc.kind } : { name: pc.name };
}
