/**
 * The deployment constructs of the runtime — BindBackend, Dex, Konnector, APIServiceBinding and
 * APIServiceExportTemplate — and their shared defaults (the barrel of constructs/runtime/).
 */
export * from './_defaults.js';
export type { ResourceSpec, SecretKeyRef } from './_pod.js';
export type { DocumentedRule } from './_rbac.js';
export * from './permission-claim.js';
export * from './api-service-export-template.js';
export * from './api-service-binding.js';
export * from './konnector.js';
export * from './konnector-namespaces.js';
export * from './bind-backend.js';
export * from './dex.js';
export * from './konnector-flow-control.js';
