import '../constructs/_node-version.js'; // first: the Node.js version check
export * from './config.js';
export * from './cluster.js';
export * from './kind.js';
export * from './eks.js';
export * from './images.js';
export * from './optional.js';
export * from './manifests.js';
export * from './control-plane.js';
export * from './app-cluster.js';
export * from './topology.js';
export * from './topology-source.js';
export * from './catalogue.js';
export * from './secrets.js';
export * from './program.js';
export { clusterProvider, deployObjects, pinImages, type DeployedObjects, type ImagePins } from './_deploy.js';
