/**
 * `APIServiceExportTemplate` (`example-backend.klutch.anynines.com/v1alpha1`): what the control plane may
 * export (a CRD by group and resource) and the permission claims that go with it.
 */
import { arr, emptyObj, obj, str, type TypeOf } from './_schema.js';
import { defineKind, type ObjectOf } from './_kind.js';
import { groupField, permissionClaimSchema, resourceField } from './common.js';
import { BIND_VERSION, EXAMPLE_BACKEND_GROUP, KUBE_BINDINGS_CATEGORY } from './constants.js';

/** Selects the CRD a template applies to. */
export const apiServiceSelectorSchema = obj(
  {
    group: groupField(),
    resource: resourceField(),
    version: str({ minLength: 1, description: 'Version (optional, informational).' }),
  },
  { required: ['resource'] },
);
export type APIServiceSelector = TypeOf<typeof apiServiceSelectorSchema>;

export const apiServiceExportTemplateSpecSchema = obj(
  {
    /** Note the capitalised JSON key: Klutch's wire name. */
    APIServiceSelector: apiServiceSelectorSchema,
    permissionClaims: arr(permissionClaimSchema, { description: 'Permission claims added to exports of the selected resource.' }),
  },
  { required: ['APIServiceSelector'], description: 'Which CRD may be bound, with which permission claims.' },
);
export type APIServiceExportTemplateSpec = TypeOf<typeof apiServiceExportTemplateSpecSchema>;

export const apiServiceExportTemplateStatusSchema = emptyObj({ description: 'Empty.' });
export type APIServiceExportTemplateStatus = TypeOf<typeof apiServiceExportTemplateStatusSchema>;

/** APIServiceExportTemplate: the backend catalogue entry making a CRD bindable. */
export const apiServiceExportTemplateKind = defineKind({
  group: EXAMPLE_BACKEND_GROUP,
  version: BIND_VERSION,
  kind: 'APIServiceExportTemplate',
  plural: 'apiserviceexporttemplates',
  categories: [KUBE_BINDINGS_CATEGORY],
  scope: 'Namespaced',
  description: 'APIServiceExportTemplate makes the selected CRD bindable through the backend, with its permission claims.',
  spec: apiServiceExportTemplateSpecSchema,
  specRequired: true,
  status: apiServiceExportTemplateStatusSchema,
  printerColumns: [
    { name: 'Established', type: 'string', jsonPath: '.status.conditions[?(@.type=="Established")].status', priority: 5 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
export type APIServiceExportTemplate = ObjectOf<typeof apiServiceExportTemplateKind>;
