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

/**
 * provider-kubernetes' `--poll` on the control plane: how often it re-reads the a8s object of an `Object` that is Ready,
 * so how stale the status it copies may get (an a8s instance's `clusterStatus`, a ServiceBinding's `implemented`, a
 * Backup's conditions). The provider's own default is 10 minutes (30 s while the Object is not Ready); one re-read per
 * Object a minute is what Klutch gives provider-anynines (`--poll 1m`).
 *
 * Not `--enable-watches` (alpha in v1.2.1): with it, in 2 of about 20 sandbox runs on 2026-11-29 the provider never
 * started its controller of cluster-scoped Objects (a goroutine dump showed none of it); no claim got an a8s object.
 */
export const PROVIDER_KUBERNETES_POLL = '1m';

/** A Crossplane provider package (`pkg.crossplane.io/v1 Provider`). */
export class Provider extends PackageBase {
  constructor(scope: Construct, id: string, props: ProviderProps) {
    super(scope, id, 'Provider', props, true);
  }
}
