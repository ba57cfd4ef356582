/**
 * klutch-kit's construct library, one namespace per module (as aws-cdk-lib does), so that names
 * shared by modules (e.g. `SecretKeyRef`) never clash:
 *
 * ```ts
 * import { topology, runtime, catalogue } from './constructs/index.js';
 * ```
 */
export * as api from './api/index.js';
export * as catalogue from './catalogue/index.js';
export * as crossplane from './crossplane/index.js';
export * as dataservice from './dataservice/index.js';
export * as runtime from './runtime/index.js';
export * as topology from './topology/index.js';
export * as validate from './validate/index.js';
