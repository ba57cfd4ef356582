/**
 * Clusters as charts — `ControlPlaneCluster`, `AppCluster` — their ordered synth into `dist/<cluster>/`,
 * GitOps output and the topology graph (the barrel of constructs/topology/).
 */
export * from './cluster-chart.js';
export * from './layout.js';
export * from './synth.js';
export * from './control-plane-cluster.js';
export * from './app-cluster.js';
export * from './graph.js';
export { toYaml } from './_yaml.js';
export * from './catalogue-install.js';
export * from './argocd.js';
