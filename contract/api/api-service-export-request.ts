/**
 * `APIServiceExportRequest` (`klutch.anynines.com/v1alpha1`): a consumer's request to export resources,
 * which the backend turns into APIServiceExports.
 */
import { arr, obj, preserve, str, type TypeOf } from './_schema.js';
import { defineKind, type ObjectOf } from './_kind.js';
import { conditionsField, groupField, permissionClaimSchema, resourceField } from './common.js';
import { BIND_GROUP, BIND_VERSION, KUBE_BINDINGS_CATEGORY } from './constants.js';

/** One resource requested for export. */
export const exportRequestResourceSchema = obj(
  {
    group: groupField(),
    resource: resourceField(),
    versions: arr(str(), { description: 'Versions to export; empty lets the provider choose.' }),
    permissionClaims: arr(permissionClaimSchema, { description: 'Permission claims of the export.' }),
  },
  { required: ['resource'] },
);
export type APIServiceExportRequestResource = TypeOf<typeof exportRequestResourceSchema>;

export const apiServiceExportRequestSpecSchema = obj(
  {
    parameters: preserve({
      validations: [{ rule: 'self == oldSelf', message: 'parameters are immutable' }],
      description: 'Provider-specific parameters of the request (immutable).',
    }),
    resources: arr(exportRequestResourceSchema, {
      minItems: 1,
      validations: [{ rule: 'self == oldSelf', message: 'resources are immutable' }],
      description: 'Resources to export (immutable).',
    }),
  },
  { required: ['resources'], description: 'What the consumer asks the provider to export.' },
);
export type APIServiceExportRequestSpec = TypeOf<typeof apiServiceExportRequestSpecSchema>;

export const apiServiceExportRequestStatusSchema = obj(
  {
    phase: str({
      enum: ['Pending', 'Failed', 'Succeeded'],
      default: 'Pending',
      description: 'Pending until the exports exist (Succeeded) or the request failed for good (Failed).',
    }),
    terminalMessage: str({ description: 'Why the request is in its current phase.' }),
    conditions: conditionsField(),
  },
  { default: {}, description: 'Progress of the request.' },
);
export type APIServiceExportRequestStatus = TypeOf<typeof apiServiceExportRequestStatusSchema>;

/** APIServiceExportRequest: a consumer's request (via kubectl-bind or an AppClusterBinding) for exports. */
export const apiServiceExportRequestKind = defineKind({
  group: BIND_GROUP,
  version: BIND_VERSION,
  kind: 'APIServiceExportRequest',
  plural: 'apiserviceexportrequests',
  categories: [KUBE_BINDINGS_CATEGORY],
  scope: 'Namespaced',
  description: 'APIServiceExportRequest is a request for exports, created in the consumer cluster namespace on the provider.',
  spec: apiServiceExportRequestSpecSchema,
  specRequired: true,
  status: apiServiceExportRequestStatusSchema,
  printerColumns: [
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
export type APIServiceExportRequest = ObjectOf<typeof apiServiceExportRequestKind>;
