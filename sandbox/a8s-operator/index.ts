export * from './types.js';
export * from './server-settings.js';
export * from './loopback.js';
export * from './local-postgres.js';
export * from './instances.js';
export * from './postgresql-reconciler.js';
export * from './servicebinding-reconciler.js';
export * from './operator.js';
