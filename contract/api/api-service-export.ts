/**
 * `APIServiceExport` (`klutch.anynines.com/v1alpha1`): an API exported to one consumer — the CRD's names,
 * versions and schemas the konnector creates on the app cluster.
 */
import { arr, bool, emptyObj, int, obj, preserve, str, type TypeOf } from './_schema.js';
import { defineKind, type ObjectOf } from './_kind.js';
import { conditionsField, permissionClaimSchema } from './common.js';
import { BIND_GROUP, BIND_VERSION, KUBE_BINDINGS_CATEGORY } from './constants.js';

/** Names of a custom resource (the `names` of a CRD). */
export const crdNamesSchema = obj(
  {
    plural: str({ description: 'Plural resource name; the CRD is named `<plural>.<group>`.' }),
    singular: str({ description: 'Singular name, lower case.' }),
    shortNames: arr(str(), { listType: 'atomic', description: 'Short names for kubectl.' }),
    kind: str({ description: 'Kind of the objects (CamelCase).' }),
    listKind: str({ description: 'Kind of lists of the objects.' }),
    categories: arr(str(), { listType: 'atomic', description: 'Groups the resource belongs to (e.g. `all`).' }),
  },
  { required: ['kind', 'plural'] },
);
export type CRDNames = TypeOf<typeof crdNamesSchema>;

/** A printer column of an exported version. */
export const printerColumnSchema = obj(
  {
    name: str({ description: 'Column header.' }),
    type: str({ description: 'OpenAPI type of the column.' }),
    format: str({ description: 'OpenAPI format of the column.' }),
    description: str({ description: 'Human readable description.' }),
    priority: int({ format: 'int32', description: 'Columns with priority > 0 show only in wide output.' }),
    jsonPath: str({ description: 'JSON path evaluated against each object.' }),
  },
  { required: ['jsonPath', 'name', 'type'] },
);
export type APIServiceExportPrinterColumn = TypeOf<typeof printerColumnSchema>;

/** One exported version (like a CRD version, without conversion webhooks). */
export const exportVersionSchema = obj(
  {
    name: str({ minLength: 1, pattern: '^v[1-9][0-9]*([a-z]+[1-9][0-9]*)?$', description: 'Version name, e.g. v1alpha1.' }),
    served: bool({ default: true, description: 'Whether the version is served.' }),
    storage: bool({ description: 'Whether this is the storage version (exactly one).' }),
    deprecated: bool({ description: 'Whether the version is deprecated.' }),
    deprecationWarning: str({ description: 'Warning returned to clients of a deprecated version.' }),
    schema: obj(
      {
        openAPIV3Schema: preserve({ extra: { 'x-kubernetes-map-type': 'atomic' }, description: 'The OpenAPI v3 schema of the version.' }),
      },
      { required: ['openAPIV3Schema'], description: 'Structural schema for validation, pruning and defaulting.' },
    ),
    subresources: obj(
      {
        status: emptyObj({ description: 'Enables the /status subresource.' }),
        scale: obj(
          {
            specReplicasPath: str({ description: 'JSON path of the desired replicas under .spec.' }),
            statusReplicasPath: str({ description: 'JSON path of the observed replicas under .status.' }),
            labelSelectorPath: str({ description: 'JSON path of the label selector.' }),
          },
          { required: ['specReplicasPath', 'statusReplicasPath'], description: 'Enables the /scale subresource.' },
        ),
      },
      { description: 'Subresources of the version.' },
    ),
    additionalPrinterColumns: arr(printerColumnSchema, { listType: 'map', listMapKeys: ['name'], description: 'Extra columns of kubectl get.' }),
  },
  { required: ['name', 'schema', 'served', 'storage'] },
);
export type APIServiceExportVersion = TypeOf<typeof exportVersionSchema>;

export const apiServiceExportSpecSchema = obj(
  {
    group: str({ description: 'API group of the exported resource; empty is the core group.' }),
    names: crdNamesSchema,
    scope: str({ enum: ['Cluster', 'Namespaced'], description: 'Scope of the exported resource.' }),
    versions: arr(exportVersionSchema, { minItems: 1, listType: 'map', listMapKeys: ['name'], description: 'Exported versions.' }),
    permissionClaims: arr(permissionClaimSchema, { description: 'Objects of other resources the provider needs access to.' }),
    informerScope: str({
      enum: ['Cluster', 'Namespaced'],
      validations: [{ rule: 'self == oldSelf', message: 'informerScope is immutable' }],
      description: 'Scope of the konnector informers on the consumer side (immutable).',
    }),
    clusterScopedIsolation: str({
      enum: ['Prefixed', 'Namespaced', 'None'],
      description: 'How cluster-scoped objects of different consumers are kept apart: Prefixed, Namespaced or None.',
    }),
  },
  {
    required: ['group', 'informerScope', 'names', 'scope', 'versions'],
    validations: [
      { rule: 'self.scope == "Namespaced" || self.informerScope == "Cluster"', message: 'informerScope must be Cluster for cluster-scoped resources' },
      {
        rule: 'self.scope == "Namespaced" || has(self.clusterScopedIsolation)',
        message: 'clusterScopedIsolation must be defined for cluster-scoped resources',
      },
      { rule: 'self.scope == "Cluster" || !has(self.clusterScopedIsolation)', message: 'clusterScopedIsolation is not relevant for namespaced resources' },
    ],
    description: 'The exported resource: a CRD spec without webhooks, plus permission claims.',
  },
);
export type APIServiceExportSpec = TypeOf<typeof apiServiceExportSpecSchema>;

export const apiServiceExportStatusSchema = obj(
  {
    acceptedNames: crdNamesSchema,
    storedVersions: arr(str(), { description: 'Versions ever persisted on the consumer side.' }),
    conditions: conditionsField(),
  },
  { description: 'State of the export as seen on the consumer cluster.' },
);
export type APIServiceExportStatus = TypeOf<typeof apiServiceExportStatusSchema>;

/**
 * APIServiceExport: one resource exported by the provider to one consumer, in the consumer's
 * cluster namespace. Named `<plural>.<group>`.
 */
export const apiServiceExportKind = defineKind({
  group: BIND_GROUP,
  version: BIND_VERSION,
  kind: 'APIServiceExport',
  plural: 'apiserviceexports',
  categories: [KUBE_BINDINGS_CATEGORY],
  scope: 'Namespaced',
  description: 'APIServiceExport specifies a resource exported to a consumer. Its spec is a CRD spec without webhooks; its status reflects the consumer side.',
  spec: apiServiceExportSpecSchema,
  specRequired: true,
  status: apiServiceExportStatusSchema,
  rootValidations: [
    { rule: 'self.metadata.name == self.spec.names.plural+"."+self.spec.group', message: 'metadata.name must be <spec.names.plural>.<spec.group>' },
  ],
  printerColumns: [
    { name: 'Established', type: 'string', jsonPath: '.status.conditions[?(@.type=="Established")].status', priority: 5 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
export type APIServiceExport = ObjectOf<typeof apiServiceExportKind>;
