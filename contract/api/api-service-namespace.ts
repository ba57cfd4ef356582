/**
 * `APIServiceNamespace` (`klutch.anynines.com/v1alpha1`): a consumer namespace's counterpart on the
 * control plane.
 */
import { emptyObj, obj, str, type TypeOf } from './_schema.js';
import { defineKind, type ObjectOf } from './_kind.js';
import { BIND_GROUP, BIND_VERSION, KUBE_BINDINGS_CATEGORY } from './constants.js';

export const apiServiceNamespaceSpecSchema = emptyObj({ description: 'Empty.' });
export type APIServiceNamespaceSpec = TypeOf<typeof apiServiceNamespaceSpecSchema>;

export const apiServiceNamespaceStatusSchema = obj(
  { namespace: str({ description: 'The provider namespace bound to the consumer namespace of the same name as this object.' }) },
  { description: 'The provider namespace.' },
);
export type APIServiceNamespaceStatus = TypeOf<typeof apiServiceNamespaceStatusSchema>;

/** APIServiceNamespace: maps a consumer namespace (the object name) to a provider namespace. */
export const apiServiceNamespaceKind = defineKind({
  group: BIND_GROUP,
  version: BIND_VERSION,
  kind: 'APIServiceNamespace',
  plural: 'apiservicenamespaces',
  categories: [KUBE_BINDINGS_CATEGORY],
  scope: 'Namespaced',
  description: 'APIServiceNamespace asks the provider for a namespace for the consumer namespace named like this object.',
  spec: apiServiceNamespaceSpecSchema,
  specRequired: false,
  status: apiServiceNamespaceStatusSchema,
  printerColumns: [
    { name: 'Namespace', type: 'string', jsonPath: '.status.namespace' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
export type APIServiceNamespace = ObjectOf<typeof apiServiceNamespaceKind>;
