/**
 * The sandbox control plane's data services on real Crossplane: klutch-kit's ControlPlaneCluster synthesizes
 * the catalogue as a Crossplane Configuration package; the package image (built by runtime/xpkg, no Docker) is
 * pushed to the harness's local registry and installed by Crossplane's package manager from the `Configuration`
 * object, next to provider-kubernetes' RBAC and ProviderConfig from the same synth. The a8s CRDs (what the a8s
 * operator would install) come from imports/crds/a8s/; the export templates of PostgreSQL and ServiceBinding let
 * app clusters bind them.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { App } from 'cdk8s';
import { CatalogueInstall, ControlPlaneCluster, renderTopology, toYaml } from '../constructs/topology/index.js';
import { applyManifests, waitForCrdsEstablished, type CrossplaneHarness, type RealCluster } from '../runtime/realinfra/index.js';
import { buildPackageImage, joinPackageYaml } from '../runtime/xpkg/image.js';
import { pushPackageImage } from '../runtime/xpkg/push.js';
import { a8sCrds } from './a8s-operator/index.js';

export const CATALOGUE_REPOSITORY = 'klutch/catalogue';
export const CATALOGUE_TAG = 'v0.1.0';
/** The APIs the sandbox offers to app clusters (claim plurals of the catalogue). */
export const SANDBOX_APIS = ['postgresqlinstances', 'servicebindings'] as const;

type Obj = KubernetesObject & { spec?: Record<string, unknown> };

export interface InstalledCatalogue {
  /** `<registry>/klutch/catalogue:v0.1.0` */
  readonly packageRef: string;
  readonly digest: string;
  /** XRD names of the package. */
  readonly xrds: readonly string[];
  /** The claim CRDs Crossplane made for the sandbox's APIs (e.g. postgresqlinstances.anynines.com). */
  readonly claimCrds: readonly string[];
  /** The APIServiceExportTemplates applied. */
  readonly templates: readonly Obj[];
}

/** The control plane as klutch-kit synthesizes it, with the catalogue as a Configuration package from `packageRef`. */
export function synthSandboxControlPlane(packageRef: string) {
  const app = new App({ outdir: '/nonexistent' });
  new ControlPlaneCluster(app, 'SandboxControlPlane', {
    clusterName: 'control-plane',
    host: 'bind.sandbox.local',
    dex: { connectors: [{ type: 'mockCallback', id: 'mock', name: 'Mock', config: {} }] },
    anynines: { baseDomain: 'a9s.sandbox.local' },
    catalogueInstall: CatalogueInstall.configurationPackage({ package: packageRef, skipDependencyResolution: true }),
  });
  const [cluster] = renderTopology(app);
  if (!cluster?.packages?.length) throw new Error('sandbox: the synthesized control plane carries no Configuration package');
  return { cluster, pkg: cluster.packages[0]! };
}

/** Pushes the catalogue package, applies what the control plane needs, waits until the package is installed and the claim APIs are served. */
export async function installCatalogue(
  cp: RealCluster,
  opts: {
    /** Apply the export templates (needs the binding CRDs). @default true */
    templates?: boolean;
    /** The Crossplane harness of `cp`. @default cp.crossplane */
    crossplane?: CrossplaneHarness;
  } = {},
): Promise<InstalledCatalogue> {
  const xp = opts.crossplane ?? cp.crossplane;
  if (!xp) throw new Error(`sandbox: cluster ${cp.name} runs no Crossplane (start it with { crossplane: '2.3' })`);
  const packageRef = `${xp.registry}/${CATALOGUE_REPOSITORY}:${CATALOGUE_TAG}`;
  const { cluster, pkg } = synthSandboxControlPlane(packageRef);
  const pushed = await pushPackageImage(buildPackageImage(joinPackageYaml(toYaml(pkg.meta), pkg.files.map((f) => toYaml(f.object)))), packageRef);
  const objs = cluster.files.map((f) => f.object as Obj);
  const wanted = (o: Obj) =>
    o.kind === 'Configuration' ||
    (['ClusterRole', 'ClusterRoleBinding'].includes(o.kind!) && /provider-kubernetes/.test(o.metadata!.name!.toLowerCase())) ||
    (o.kind === 'ProviderConfig' && o.apiVersion!.startsWith('kubernetes.crossplane.io/'));
  const platform = objs.filter(wanted);
  const templates = objs.filter((o) => o.kind === 'APIServiceExportTemplate' && (SANDBOX_APIS as readonly string[]).includes(o.metadata!.name!));
  if (templates.length !== SANDBOX_APIS.length) throw new Error(`sandbox: expected export templates ${SANDBOX_APIS.join(', ')} from the control plane, got ${templates.map((t) => t.metadata!.name).join(', ') || 'none'}`);
  // what the a8s operator brings (its CRDs), then the Configuration and provider-kubernetes' access
  await applyManifests(cp.kubeConfig, a8sCrds());
  await applyManifests(cp.kubeConfig, platform);
  await xp.waitForPackage('Configuration', String(platform.find((o) => o.kind === 'Configuration')!.metadata!.name), 180_000);
  const xrds = pkg.files.map((f) => f.object as Obj).filter((o) => o.kind === 'CompositeResourceDefinition');
  const claimCrds = xrds
    .map((x) => x.spec as { group: string; claimNames?: { plural: string } })
    .filter((s) => s.claimNames && (SANDBOX_APIS as readonly string[]).includes(s.claimNames.plural))
    .map((s) => `${s.claimNames!.plural}.${s.group}`);
  await waitForCrdsEstablished(cp.kubeConfig, claimCrds, 180_000);
  if (opts.templates !== false) await applyManifests(cp.kubeConfig, templates);
  return { packageRef, digest: pushed.digest, xrds: xrds.map((x) => x.metadata!.name!), claimCrds, templates };
}
