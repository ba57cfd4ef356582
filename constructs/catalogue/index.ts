/**
 * The Klutch data-service catalogue, built with `DataService`: same services, plans, parameters and
 * validation rules as Klutch's crossplane-api.
 */
export * from './catalogue.js';
export * from './provider-configs.js';
export * from './postgresql.js';
export * from './a9s-instances.js';
export * from './instance-operation.js';
export * from './operations.js';
export { ANYNINES_GROUP, A8S_SIZES } from './_common.js';
