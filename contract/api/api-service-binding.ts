/**
 * `APIServiceBinding` (`klutch.anynines.com/v1alpha1`): an app cluster's binding of one exported API, with
 * the permission claims the consumer accepted.
 */
import { arr, obj, str, type TypeOf } from './_schema.js';
import { defineKind, type ObjectOf } from './_kind.js';
import { acceptablePermissionClaimSchema, conditionsField, namespacedKubeconfigSecretRefSchema } from './common.js';
import { BIND_GROUP, BIND_VERSION, KUBE_BINDINGS_CATEGORY } from './constants.js';

export const apiServiceBindingSpecSchema = obj(
  {
    kubeconfigSecretRef: namespacedKubeconfigSecretRefSchema,
    permissionClaims: arr(acceptablePermissionClaimSchema, { description: 'The consumer decisions on the permission claims of the export.' }),
  },
  { required: ['kubeconfigSecretRef'], description: 'Where the provider kubeconfig is, and which claims are accepted.' },
);
export type APIServiceBindingSpec = TypeOf<typeof apiServiceBindingSpecSchema>;

export const apiServiceBindingStatusSchema = obj(
  {
    providerPrettyName: str({ description: 'Display name of the provider.' }),
    conditions: conditionsField(),
  },
  { description: 'State of the binding.' },
);
export type APIServiceBindingStatus = TypeOf<typeof apiServiceBindingStatusSchema>;

/** APIServiceBinding: binds one exported resource into the consumer (app) cluster; named `<plural>.<group>`. */
export const apiServiceBindingKind = defineKind({
  group: BIND_GROUP,
  version: BIND_VERSION,
  kind: 'APIServiceBinding',
  plural: 'apiservicebindings',
  shortNames: ['sb'],
  categories: [KUBE_BINDINGS_CATEGORY],
  scope: 'Namespaced',
  description: 'APIServiceBinding binds an API service exported by a provider into the consumer cluster.',
  spec: apiServiceBindingSpecSchema,
  specRequired: false,
  status: apiServiceBindingStatusSchema,
  printerColumns: [
    { name: 'Provider', type: 'string', jsonPath: '.status.providerPrettyName' },
    // Klutch's column path, kept byte-identical for wire compatibility.
    { name: 'Resources', type: 'string', jsonPath: '.metadata.annotations.bind\\.klutch.\\anynines\\.com/resources', priority: 1 },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Message', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
export type APIServiceBinding = ObjectOf<typeof apiServiceBindingKind>;
