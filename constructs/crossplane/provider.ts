/**
 * `Provider`: installs a Crossplane provider package; the pinned provider-kubernetes package.
 */
import { Construct } from 'constructs';
import { PackageBase, RuntimePackageProps } from './package-base.js';

export interface ProviderProps extends RuntimePackageProps {}

/**
 * provider-kubernetes for Crossplane 2.x: the version the real-Crossplane harness builds
 * (tools/crossplane/provider-kubernetes/go.mod).
 */
export const PROVIDER_KUBERNETES_PACKAGE = 'xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:v1.2.1';
/** provider-kubernetes as pinned by Klutch on Crossplane 1.20 (last pre-v2 release). */
export const PROVIDER_KUBERNETES_V1_PACKAGE = 'xpkg.upbound.io/crossplane-contrib/provider-kubernetes:v0.18.0';

/** A Crossplane provider package (`pkg.crossplane.io/v1 Provider`). */
export class Provider extends PackageBase {
  constructor(scope: Construct, id: string, props: ProviderProps) {
    super(scope, id, 'Provider', props, true);
  }
}
