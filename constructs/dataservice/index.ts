/**
 * Data services: typed plans, parameters and automation backends rendered into an XRD, one
 * Composition per backend and an APIServiceExportTemplate.
 */
export * from './api-style.js';
export * from './topology.js';
export * from './plan.js';
export * from './parameter.js';
export * from './backend.js';
export * from './operator-profile.js';
export * from './control-plane-provider-config.js';
export * from './a8s-backend.js';
export * from './a9s-backend.js';
export * from './credentials.js';
export * from './data-service.js';
