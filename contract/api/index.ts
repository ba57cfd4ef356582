/**
 * klutch-kit's binding API: `klutch.anynines.com/v1alpha1` and
 * `example-backend.klutch.anynines.com/v1alpha1`, written once as typed schemas. Types, CRD YAML
 * (`contract/api/crds/`), cdk8s imports and validators are all derived from these definitions.
 *
 * Each kind exports `<kind>Kind` (a `KindDef`: apiVersion, kind, plural, `crd()`,
 * `openAPIV3Schema()`, `make(name, spec, meta)`, `is(o)`), its object type, and its spec/status
 * types and schemas.
 */
export * from './_schema.js';
export * from './_kind.js';
export * from './constants.js';
export * from './common.js';
export * from './conditions.js';
export * from './_container.js';
export * from './api-service-export.js';
export * from './api-service-export-request.js';
export * from './api-service-binding.js';
export * from './api-service-namespace.js';
export * from './cluster-binding.js';
export * from './app-cluster-binding.js';
export * from './api-service-export-template.js';
export * from './offering.js';
export * from './wire.js';
export * from './crds.js';
