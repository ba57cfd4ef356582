/**
 * `AppClusterBinding` (`klutch.anynines.com/v1alpha1`): the APIs to bind into an app cluster (one APIServiceBinding
 * each) and whether the backend deploys its konnector on the control plane.
 */
import { arr, bool, obj, type TypeOf } from './_schema.js';
import { defineKind, type ObjectOf } from './_kind.js';
import { containerOverridesSchema } from './_container.js';
import { conditionsField, groupField, namespacedKubeconfigSecretRefSchema, resourceField } from './common.js';
import { BIND_GROUP, BIND_VERSION, KUBE_BINDINGS_CATEGORY } from './constants.js';

export const apiExportRefSchema = obj({ group: groupField(), resource: resourceField() }, { required: ['resource'] });
export type APIExportRef = TypeOf<typeof apiExportRefSchema>;

export const appClusterBindingSpecSchema = obj(
  {
    kubeconfigSecretRef: namespacedKubeconfigSecretRefSchema,
    apiExports: arr(apiExportRefSchema, { description: 'Resources to bind into the app cluster (one APIServiceBinding each).' }),
    konnector: obj(
      {
        deploy: bool({ description: 'Whether the backend deploys a konnector for this app cluster on the control plane.' }),
        overrides: containerOverridesSchema,
      },
      { description: 'The konnector deployment of this app cluster.' },
    ),
  },
  { required: ['kubeconfigSecretRef'], description: 'An app cluster bound in control-plane mode.' },
);
export type AppClusterBindingSpec = TypeOf<typeof appClusterBindingSpecSchema>;

export const appClusterBindingStatusSchema = obj({ conditions: conditionsField() }, { description: 'State of the app cluster binding.' });
export type AppClusterBindingStatus = TypeOf<typeof appClusterBindingStatusSchema>;

/** AppClusterBinding (control-plane mode): binds an app cluster from the control plane, by kubeconfig. */
export const appClusterBindingKind = defineKind({
  group: BIND_GROUP,
  version: BIND_VERSION,
  kind: 'AppClusterBinding',
  plural: 'appclusterbindings',
  categories: [KUBE_BINDINGS_CATEGORY],
  scope: 'Namespaced',
  description: 'AppClusterBinding binds an app cluster in control-plane mode: the konnector runs on the control plane.',
  spec: appClusterBindingSpecSchema,
  specRequired: true,
  status: appClusterBindingStatusSchema,
  rootValidations: [{ rule: 'self.metadata.name == oldSelf.metadata.name', message: 'name is immutable' }],
  printerColumns: [
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
export type AppClusterBinding = ObjectOf<typeof appClusterBindingKind>;
