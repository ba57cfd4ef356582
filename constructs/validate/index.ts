/**
 * Offline validation of Kubernetes objects: ajv (OpenAPI v3 → JSON Schema) plus CEL
 * `x-kubernetes-validations` rules (@bufbuild/cel), schema registry, Crossplane XR/claim CRD
 * derivation, and `validateDirectory` behind `klutch-kit validate`.
 */
export * from './openapi.js';
export * from './cel.js';
export * from './cel-k8s.js';
export * from './schema-validator.js';
export * from './xcrd.js';
export * from './registry.js';
export * from './bundle.js';
export * from './directory.js';
export * from './directory-validator.js';
export * from './wire.js';
