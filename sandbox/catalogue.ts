/**
 * The sandbox control plane's data services on real Crossplane: klutch-kit's ControlPlaneCluster synthesizes
 * the catalogue as a Crossplane Configuration package; the package image (built by runtime/xpkg, no Docker) is
 * pushed to the harness's local registry, and `pulumi up` (stack config `klutch-kit:catalogue`) applies the
 * `Configuration`, the Function, provider-kubernetes, its RBAC and ProviderConfig, which Crossplane's package
 * manager installs. The a8s CRDs (what the a8s
 * operator would install) come from imports/crds/a8s/; the export templates of PostgreSQL and ServiceBinding let
 * app clusters bind them.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { App } from 'cdk8s';
import { ApiStyle } from '../constructs/dataservice/index.js';
import { CatalogueInstall, ControlPlaneCluster, renderTopology, toYaml } from '../constructs/topology/index.js';
import { applyManifests, waitForCrdsEstablished, type CrossplaneHarness, type RealCluster } from '../runtime/realinfra/index.js';
import { buildPackageImage, joinPackageYaml } from '../runtime/xpkg/image.js';
import { isLoopbackRegistry, pushPackageImage } from '../runtime/xpkg/push.js';
import { BINDER_EXPORTS_AGGREGATION_LABEL } from '../constructs/runtime/_defaults.js';
import { a8sCrds } from './a8s-operator/index.js';
import { apiServiceExportTemplateKind } from '../contract/api/api-service-export-template.js';

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
  /**
   * The CRDs Crossplane made for the sandbox's APIs, which app clusters bind (e.g. postgresqlinstances.anynines.com):
   * the claim CRDs, or with ApiStyle.NAMESPACED_XR the namespaced XR CRDs.
   */
  readonly claimCrds: readonly string[];
  /** The catalogue's API style. */
  readonly apiStyle: ApiStyle;
  /** The APIServiceExportTemplates applied. */
  readonly templates: readonly Obj[];
}

/**
 * The control plane as klutch-kit synthesizes it, with the catalogue as a Configuration package from `packageRef`;
 * `a9sUrls`: a9s endpoints per ProviderConfig name (the sandbox's broker stand-in, sandbox/a9s.ts).
 */
export function synthSandboxControlPlane(packageRef: string, a9sUrls?: Record<string, string>, apiStyle: ApiStyle = ApiStyle.CLAIMS) {
  const app = new App({ outdir: '/nonexistent' });
  const controlPlane = new ControlPlaneCluster(app, 'SandboxControlPlane', {
    clusterName: 'control-plane',
    host: 'bind.sandbox.local',
    dex: { connectors: [{ type: 'mockCallback', id: 'mock', name: 'Mock', config: {} }] },
    anynines: { baseDomain: 'a9s.sandbox.local', ...(a9sUrls ? { urls: a9sUrls } : {}) },
    catalogueInstall: CatalogueInstall.configurationPackage({ package: packageRef, skipDependencyResolution: true }),
    catalogue: { apiStyle },
  });
  const [cluster] = renderTopology(app);
  if (!cluster?.packages?.length) throw new Error('sandbox: the synthesized control plane carries no Configuration package');
  return { cluster, pkg: cluster.packages[0]!, catalogue: controlPlane.catalogue! };
}

/**
 * The ClusterRoles the control plane aggregates into the binder's role for the sandbox's exports: what a backend with
 * its own ServiceAccount (a pod) may hand out to the konnectors. A backend with the admin kubeconfig needs none.
 */
export function binderExportRoles(packageRef: string, apiStyle: ApiStyle = ApiStyle.CLAIMS): Obj[] {
  return synthSandboxControlPlane(packageRef, undefined, apiStyle)
    .cluster.files.map((f) => f.object as Obj)
    .filter((o) => o.kind === 'ClusterRole' && o.metadata?.labels?.[BINDER_EXPORTS_AGGREGATION_LABEL] === 'true');
}

/** The catalogue package pushed to the harness's registry, and what the sandbox needs of the same synth. */
export interface PushedCatalogue {
  /** `<registry>/klutch/catalogue:v0.1.0`: the stack's `klutch-kit:catalogue.package`. */
  readonly packageRef: string;
  readonly digest: string;
  /** The package's XRDs. */
  readonly xrds: readonly Obj[];
  /** The APIServiceExportTemplates of the sandbox's APIs. */
  readonly templates: readonly Obj[];
  /** The catalogue's API style. */
  readonly apiStyle: ApiStyle;
}

/**
 * Builds the catalogue's Configuration package (runtime/xpkg, no Docker) and pushes it to the harness's registry
 * (`xp.registry`; only the address is needed, so the push may precede Crossplane's start, e.g. with `podsRegistry(cp)`),
 * and applies the a8s CRDs (what the a8s operator would install). Installing the package (the `Configuration`, the
 * Function, provider-kubernetes and its ProviderConfig) is `pulumi up`'s job (`klutch-kit:catalogue`).
 */
export async function pushCatalogue(cp: RealCluster, xp: Pick<CrossplaneHarness, 'registry'>, style: { apiStyle?: ApiStyle } = {}): Promise<PushedCatalogue> {
  const packageRef = `${xp.registry}/${CATALOGUE_REPOSITORY}:${CATALOGUE_TAG}`;
  const apiStyle = style.apiStyle ?? ApiStyle.CLAIMS;
  const { cluster, pkg } = synthSandboxControlPlane(packageRef, undefined, apiStyle);
  // Crossplane as pods pulls from the node IP (xp.registry); the host pushes to the same registry on loopback.
  const pushRef = isLoopbackRegistry(xp.registry) || !cp.node ? packageRef : `${cp.node.registry}/${CATALOGUE_REPOSITORY}:${CATALOGUE_TAG}`;
  const pushed = await pushPackageImage(
    buildPackageImage(
      joinPackageYaml(
        toYaml(pkg.meta),
        pkg.files.map((f) => toYaml(f.object)),
      ),
    ),
    pushRef,
  );
  const templates = cluster.files
    .map((f) => f.object as Obj)
    .filter((o) => o.kind === apiServiceExportTemplateKind.kind && (SANDBOX_APIS as readonly string[]).includes(o.metadata!.name!));
  if (templates.length !== SANDBOX_APIS.length)
    throw new Error(
      `sandbox: expected export templates ${SANDBOX_APIS.join(', ')} from the control plane, got ${templates.map((t) => t.metadata!.name).join(', ') || 'none'}`,
    );
  await applyManifests(cp.kubeConfig, a8sCrds());
  const xrds = pkg.files.map((f) => f.object as Obj).filter((o) => o.kind === 'CompositeResourceDefinition');
  return { packageRef, digest: pushed.digest, xrds, templates, apiStyle };
}

/**
 * After `pulumi up` applied the `Configuration` and the packages: waits until Crossplane installed them (Healthy)
 * and serves the claim APIs, then applies the export templates (they need the binding CRDs pulumi up installed).
 */
export async function awaitCatalogue(cp: RealCluster, xp: CrossplaneHarness, pushed: PushedCatalogue): Promise<InstalledCatalogue> {
  await Promise.all([
    xp.waitForPackage('Function', 'function-patch-and-transform', 180_000),
    xp.waitForPackage('Provider', 'provider-kubernetes', 180_000),
    xp.waitForPackage('Configuration', 'klutch-catalogue', 180_000),
  ]);
  // the bound kinds: the claims, or the namespaced XRs themselves
  const claimCrds = pushed.xrds
    .map((x) => x.spec as { group: string; names: { plural: string }; claimNames?: { plural: string } })
    .map((s) => ({ group: s.group, plural: pushed.apiStyle.namespaced ? s.names.plural : s.claimNames?.plural }))
    .filter((s) => s.plural !== undefined && (SANDBOX_APIS as readonly string[]).includes(s.plural))
    .map((s) => `${s.plural}.${s.group}`);
  if (claimCrds.length !== SANDBOX_APIS.length)
    throw new Error(
      `sandbox: expected the package's XRDs to serve ${SANDBOX_APIS.join(', ')} (${pushed.apiStyle.value}), got ${claimCrds.join(', ') || 'none'}`,
    );
  await waitForCrdsEstablished(cp.kubeConfig, claimCrds, 180_000);
  await applyManifests(cp.kubeConfig, pushed.templates);
  return {
    packageRef: pushed.packageRef,
    digest: pushed.digest,
    xrds: pushed.xrds.map((x) => x.metadata!.name!),
    claimCrds,
    templates: pushed.templates,
    apiStyle: pushed.apiStyle,
  };
}
