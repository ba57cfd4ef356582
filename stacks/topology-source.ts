/**
 * The full Klutch topology as the stack's {@link ManifestSource}: the very `ControlPlaneCluster` and `AppCluster`
 * charts of constructs/topology that `npm run synth` writes to dist/, built in memory from the stack config.
 *
 * Differences to the GitOps output, because Pulumi is the installer here:
 * - Crossplane is installed by the control plane component with `k8s.helm.v4.Chart` (chart, version and values
 *   read from the chart's own install object), so the Argo CD Application / Flux HelmRelease objects
 *   (phase `platform`) are left out;
 * - claims (phase `resources` of app clusters: PostgresqlInstance, …) are left out: their CRDs appear only once
 *   the konnector has bound the APIs, which happens after `pulumi up`.
 */
import { App } from 'cdk8s';
import { CROSSPLANE_CHART, CROSSPLANE_CHART_REPO } from '../constructs/crossplane/index.js';
import { AppCluster as AppClusterChart, type AnyninesEndpoints, ControlPlaneCluster, PHASES, phaseOf } from '../constructs/topology/index.js';
import type { StackConfig } from './config.js';
import { type AppClusterManifestInput, type ControlPlaneManifestInput, type KubeObject, type ManifestSource, monitoringOptions } from './manifests.js';
import { STACK_SECRETS } from './secret-names.js';

/** What the control plane component needs to install Crossplane with Helm. */
export interface CrossplaneRelease {
  readonly chart: string;
  readonly repo: string;
  readonly version: string;
  readonly namespace: string;
  readonly releaseName: string;
  readonly values: Record<string, unknown>;
}

export interface TopologySourceOptions {
  /** a9s endpoints; required by the catalogue's a9s backends (see ControlPlaneClusterProps.anynines). */
  readonly anynines?: AnyninesEndpoints;
}

interface Built {
  readonly controlPlane: ControlPlaneCluster;
  readonly apps: ReadonlyMap<string, AppClusterChart>;
}

/** The topology source; also answers which Crossplane release the control plane needs. */
export interface TopologyManifestSource extends ManifestSource {
  crossplaneRelease(config: StackConfig): CrossplaneRelease;
}

export function topologyManifestSource(options: TopologySourceOptions = {}): TopologyManifestSource {
  const cache = new WeakMap<StackConfig, Built>();
  const build = (config: StackConfig, images: { backend?: string; dex?: string; konnector?: string }): Built => {
    const hit = cache.get(config);
    if (hit) return hit;
    const app = new App({ outdir: '/nonexistent-never-written' });
    const host = new URL(config.backend.url).hostname;
    const controlPlane = new ControlPlaneCluster(app, 'ControlPlane', {
      clusterName: config.controlPlane.name,
      host,
      oidcClientSecret: { name: STACK_SECRETS.oidc.name, key: STACK_SECRETS.oidc.clientSecretKey },
      cookieSecretName: STACK_SECRETS.cookies.name,
      dex: config.oidc
        ? false
        : {
            connectors: config.dexConnectors.map((c) => ({ type: c.type, id: c.id, name: c.name, config: { ...c.config } })),
            ...(images.dex ? { image: images.dex } : {}),
          },
      backend: {
        prettyName: config.backend.prettyName,
        replicas: config.backend.replicas,
        ...(images.backend ? { image: images.backend } : {}),
        ...(config.oidc
          ? {
              oidc: {
                issuerUrl: config.oidc.issuerUrl,
                clientId: config.oidc.clientId,
                clientSecret: { name: STACK_SECRETS.oidc.name, key: STACK_SECRETS.oidc.clientSecretKey },
              },
            }
          : {}),
      },
      ...(options.anynines ? { anynines: options.anynines } : {}),
      ...(config.monitoring ? { monitoring: monitoringOptions(config.monitoring) } : {}),
    });
    const apps = new Map<string, AppClusterChart>();
    for (const a of config.appClusters) {
      if (a.binding !== 'cli') continue; // control-plane mode: the konnector runs on the control plane
      apps.set(
        a.name,
        new AppClusterChart(app, `App-${a.name}`, {
          clusterName: a.name,
          controlPlane,
          ...(images.konnector ? { konnector: { image: images.konnector } } : {}),
          ...(config.monitoring ? { monitoring: monitoringOptions(config.monitoring) } : {}),
        }),
      );
    }
    const built = { controlPlane, apps };
    cache.set(config, built);
    return built;
  };

  const objectsOf = (chart: ControlPlaneCluster | AppClusterChart, drop: (o: KubeObject) => boolean): KubeObject[] =>
    (chart.toJson() as KubeObject[]).filter((o) => !drop(o));

  return {
    controlPlane(input: ControlPlaneManifestInput): KubeObject[] {
      const { controlPlane } = build(input.config, input.images);
      return objectsOf(controlPlane, (o) => phaseOf(o.apiVersion, o.kind) === PHASES.platform);
    },
    appCluster(input: AppClusterManifestInput): KubeObject[] {
      if (input.cluster.binding !== 'cli') return [];
      const { apps } = build(input.config, { konnector: input.images.konnector });
      const chart = apps.get(input.cluster.name);
      if (!chart) throw new Error(`topology source: no AppCluster chart for "${input.cluster.name}"`);
      return objectsOf(chart, (o) => phaseOf(o.apiVersion, o.kind) === PHASES.resources);
    },
    crossplaneRelease(config: StackConfig): CrossplaneRelease {
      const { controlPlane } = build(config, {});
      const install = controlPlane.crossplane;
      const release = (install.releaseObjects.map((r) => r.toJson()) as Array<Record<string, any>>).find((o) => o['kind'] === 'Application');
      const helm = release?.['spec']?.['source'];
      if (!helm || typeof helm.targetRevision !== 'string') {
        throw new Error(
          `topology source: the Crossplane install of "${config.controlPlane.name}" is not an Argo CD Application with a Helm source (${install.installMethod.kind}); ` +
            'the stack installs Crossplane with Helm and reads chart, version and values from that object',
        );
      }
      return {
        chart: helm.chart ?? CROSSPLANE_CHART,
        repo: helm.repoURL ?? CROSSPLANE_CHART_REPO,
        version: helm.targetRevision,
        namespace: install.namespace,
        releaseName: install.releaseName,
        values: (helm.helm?.valuesObject as Record<string, unknown> | undefined) ?? {},
      };
    },
  };
}
