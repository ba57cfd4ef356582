/**
 * `ClusterBinding` (`klutch.anynines.com/v1alpha1`): one consumer cluster's binding to the control plane
 * (its kubeconfig Secret, konnector version and heartbeat).
 */
import { obj, preserve, str, type TypeOf } from './_schema.js';
import { defineKind, type ObjectOf } from './_kind.js';
import { conditionsField, localKubeconfigSecretRefSchema } from './common.js';
import { BIND_GROUP, BIND_VERSION, CLUSTER_BINDING_NAME, KUBE_BINDINGS_CATEGORY } from './constants.js';

export const clusterBindingSpecSchema = obj(
  {
    kubeconfigSecretRef: localKubeconfigSecretRefSchema,
    providerPrettyName: str({ minLength: 1, description: 'Display name of the provider.' }),
    serviceProviderSpec: preserve({ description: 'Provider-specific data.' }),
  },
  { required: ['kubeconfigSecretRef', 'providerPrettyName'], description: 'The consumer cluster binding.' },
);
export type ClusterBindingSpec = TypeOf<typeof clusterBindingSpecSchema>;

export const clusterBindingStatusSchema = obj(
  {
    lastHeartbeatTime: str({ format: 'date-time', description: 'Last heartbeat of the konnector.' }),
    heartbeatInterval: str({ description: 'Heartbeat interval of the konnector (a Go duration, e.g. 5m0s).' }),
    konnectorVersion: str({ description: 'Version of the konnector.' }),
    conditions: conditionsField(),
  },
  { description: 'Health of the consumer cluster konnector.' },
);
export type ClusterBindingStatus = TypeOf<typeof clusterBindingStatusSchema>;

/** ClusterBinding: one per consumer cluster namespace on the provider, always named `cluster`. */
export const clusterBindingKind = defineKind({
  group: BIND_GROUP,
  version: BIND_VERSION,
  kind: 'ClusterBinding',
  plural: 'clusterbindings',
  categories: [KUBE_BINDINGS_CATEGORY],
  scope: 'Namespaced',
  description: 'ClusterBinding represents a bound consumer cluster in its cluster namespace on the provider. It must be named cluster.',
  spec: clusterBindingSpecSchema,
  specRequired: true,
  status: clusterBindingStatusSchema,
  rootValidations: [{ rule: `self.metadata.name == "${CLUSTER_BINDING_NAME}"`, message: 'cluster binding name should be cluster' }],
  printerColumns: [
    { name: 'Konnector Version', type: 'string', jsonPath: '.status.konnectorVersion' },
    { name: 'Last Heartbeat', type: 'date', jsonPath: '.status.lastHeartbeatTime' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
export type ClusterBinding = ObjectOf<typeof clusterBindingKind>;
