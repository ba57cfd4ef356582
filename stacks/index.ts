export * from './config.js';
export * from './cluster.js';
export * from './manifests.js';
export * from './control-plane.js';
export * from './app-cluster.js';
export * from './topology.js';
export * from './secrets.js';
export * from './program.js';
export { clusterProvider, deployObjects, type DeployedObjects } from './_deploy.js';
