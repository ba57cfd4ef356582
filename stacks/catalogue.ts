/**
 * The catalogue as a Crossplane Configuration package (`klutch-kit:catalogue`), for the `runtime` manifests mode:
 * the control plane gets the `Configuration` that installs the package (already pushed to `catalogue.package`),
 * function-patch-and-transform, provider-kubernetes (its DeploymentRuntimeConfig, ProviderConfig and RBAC for the
 * a8s objects; with `catalogue.apiStyle: namespaced` also its `ClusterProviderConfig` and the RBAC for the
 * composed credentials Secrets), exactly as `ControlPlaneCluster` synthesizes them with `CatalogueInstall.configurationPackage(...)`.
 * Crossplane itself must already run on the cluster (e.g. the sandbox's real Crossplane). provider-anynines and its
 * ProviderConfigs are left out: the a8s compositions need only provider-kubernetes; the `topology` mode installs
 * everything.
 */
import { App } from 'cdk8s';
import { apiStyleNamed } from '../constructs/dataservice/index.js';
import { CatalogueInstall, ControlPlaneCluster } from '../constructs/topology/index.js';
import type { CatalogueConfig, StackConfig } from './config.js';
import type { KubeObject } from './manifests.js';
import { STACK_SECRETS } from './secret-names.js';

/** The `CatalogueInstall` a `klutch-kit:catalogue` config selects. */
export function catalogueInstallOf(c: CatalogueConfig): CatalogueInstall {
  return CatalogueInstall.configurationPackage({ package: c.package, skipDependencyResolution: true });
}

const isPackageKind = (o: KubeObject) =>
  o.apiVersion.startsWith('pkg.crossplane.io/') && ['Configuration', 'Function', 'DeploymentRuntimeConfig'].includes(o.kind);
const isProviderKubernetes = (o: KubeObject) =>
  (o.apiVersion.startsWith('pkg.crossplane.io/') && o.kind === 'Provider' && o.metadata.name === 'provider-kubernetes') ||
  (o.kind === 'ProviderConfig' && o.apiVersion.startsWith('kubernetes.crossplane.io/')) ||
  // the namespaced style's Objects (kubernetes.m.crossplane.io) use a ClusterProviderConfig
  (o.kind === 'ClusterProviderConfig' && o.apiVersion.startsWith('kubernetes.m.crossplane.io/')) ||
  (['ClusterRole', 'ClusterRoleBinding'].includes(o.kind) &&
    o.apiVersion.startsWith('rbac.authorization.k8s.io/') &&
    o.metadata.name.toLowerCase().includes('provider-kubernetes'));

/**
 * The Crossplane objects of the control plane that install the catalogue package (`runtime` mode with
 * `klutch-kit:catalogue`); none when `config.catalogue` is unset.
 */
export function cataloguePackageObjects(config: StackConfig): KubeObject[] {
  if (!config.catalogue) return [];
  const app = new App({ outdir: '/nonexistent-never-written' });
  const cp = new ControlPlaneCluster(app, 'CataloguePackage', {
    clusterName: config.controlPlane.name,
    host: new URL(config.backend.url).hostname,
    // only the Crossplane objects are kept: the backend's issuer is irrelevant here
    dex: false,
    backend: {
      oidc: {
        issuerUrl: config.oidc?.issuerUrl ?? `${config.backend.url}/dex`,
        clientId: config.oidc?.clientId ?? 'klutch-backend',
        clientSecret: { name: STACK_SECRETS.oidc.name, key: STACK_SECRETS.oidc.clientSecretKey },
      },
    },
    // the a9s ProviderConfigs these endpoints feed are dropped below (no provider-anynines in this mode)
    anynines: config.anynines ?? { baseDomain: 'a9s.invalid' },
    catalogueInstall: catalogueInstallOf(config.catalogue),
    // the package's API style decides which ProviderConfigs its Compositions need
    catalogue: { apiStyle: apiStyleNamed('klutch-kit:catalogue.apiStyle', config.catalogue.apiStyle ?? 'claims') },
  });
  const objs = (cp.toJson() as KubeObject[]).filter((o) => isPackageKind(o) || isProviderKubernetes(o));
  if (!objs.some((o) => o.kind === 'Configuration'))
    throw new Error(`stack: the control plane synthesized no Configuration for catalogue.package ${JSON.stringify(config.catalogue.package)}`);
  return objs;
}
