/**
 * The typed Crossplane constructs: XRD, Composition and its pipeline, packages, ProviderConfigs,
 * `CrossplaneInstall` (the barrel of constructs/crossplane/).
 */
export * from './composite-resource-definition.js';
export * from './composition.js';
export * from './pipeline-step.js';
export * from './patch-and-transform-step.js';
export * from './patch.js';
export * from './transform.js';
export * from './connection-detail.js';
export * from './readiness-check.js';
export * from './package-base.js';
export * from './function.js';
export * from './provider.js';
export * from './configuration.js';
export * from './deployment-runtime-config.js';
export * from './secret-key-ref.js';
export * from './provider-config.js';
export * from './kubernetes-provider-config.js';
export * from './anynines-provider-config.js';
export * from './anynines-provider-flavour.js';
export * from './crossplane-version.js';
export * from './crossplane-install.js';
export * from './configuration-package.js';
export type { ParsedPackage } from './_package.js';
