/** One control plane and N app clusters from one typed {@link StackConfig}. */
import * as pulumi from '@pulumi/pulumi';
import { DEFAULT_IMAGES } from '../constructs/runtime/index.js';
import { AppCluster } from './app-cluster.js';
import type { StackConfig } from './config.js';
import type { ClusterConnection } from './cluster.js';
import type { ImagePins } from './_deploy.js';
import { ControlPlane, type ControlPlaneSecrets } from './control-plane.js';
import { defaultManifestSource, type ManifestSource } from './manifests.js';
import { type CrossplaneRelease, topologyManifestSource } from './topology-source.js';

export interface TopologyArgs {
  readonly config: StackConfig;
  /** How to reach each cluster, by cluster name (control plane and every app cluster). */
  readonly connections: Readonly<Record<string, ClusterConnection>>;
  readonly secrets: ControlPlaneSecrets;
  /**
   * Where the objects of each cluster come from.
   * @default config.manifests === 'topology' ? topologyManifestSource(...) (with Crossplane installed by Helm) : defaultManifestSource
   */
  readonly manifests?: ManifestSource;
  /** Image builds (images.registry); every cluster's objects group depends on them. */
  readonly imageBuilds?: readonly pulumi.Resource[];
  /**
   * Image references the manifests name before the images are pushed (`RuntimeImages.pins()`): only the groups naming
   * one wait for the push, and get the pinned references. @default none
   */
  readonly imagePins?: ImagePins;
}

export class Topology extends pulumi.ComponentResource {
  public static readonly TYPE = 'klutch-kit:stacks:Topology';
  public readonly controlPlane: ControlPlane;
  public readonly appClusters: readonly AppCluster[];
  public readonly backendUrl: pulumi.Output<string>;
  /** Secret: cluster name → kubeconfig. */
  public readonly kubeconfigs: pulumi.Output<Record<string, string>>;
  /** App cluster name → what to run to bind it. */
  public readonly bindCommands: pulumi.Output<Record<string, string>>;

  constructor(name: string, args: TopologyArgs, opts?: pulumi.ComponentResourceOptions) {
    super(Topology.TYPE, name, {}, opts);
    const { config } = args;
    let source: ManifestSource;
    let crossplane: CrossplaneRelease | undefined;
    if (args.manifests) source = args.manifests;
    else if (config.manifests === 'topology') {
      const t = topologyManifestSource({ ...(config.anynines ? { anynines: config.anynines } : {}) });
      source = t;
      crossplane = t.crossplaneRelease(config);
    } else source = defaultManifestSource;
    const conn = (cluster: string): ClusterConnection => {
      const c = args.connections[cluster];
      if (!c) throw new Error(`Topology "${name}": no connection for cluster "${cluster}"; pass connections["${cluster}"]`);
      return c;
    };
    const cpConn = conn(config.controlPlane.name);
    const images = {
      backend: config.images.backend ?? DEFAULT_IMAGES.backend,
      konnector: config.images.konnector ?? DEFAULT_IMAGES.konnector,
      dex: config.images.dex ?? DEFAULT_IMAGES.dex,
    };
    this.controlPlane = new ControlPlane(
      config.controlPlane.name,
      {
        cluster: config.controlPlane.name,
        kubeconfig: cpConn.kubeconfig,
        ...(cpConn.context ? { context: cpConn.context } : {}),
        objects: source.controlPlane({
          config,
          images: { backend: images.backend, dex: images.dex },
          hasCookieEncryptionKey: args.secrets.cookieEncryptionKey !== undefined,
        }),
        secrets: args.secrets,
        backendUrl: config.backend.url,
        skipAwait: config.skipAwait,
        // klutch-kit:catalogue: Crossplane runs on the control plane; its ProviderConfig needs the Provider's CRDs
        awaitPackages: config.catalogue !== undefined,
        ...(crossplane ? { crossplane } : {}),
        ...(args.imageBuilds ? { dependsOn: args.imageBuilds } : {}),
        ...(args.imagePins ? { imagePins: args.imagePins } : {}),
      },
      { parent: this },
    );
    this.appClusters = config.appClusters.map((a) => {
      const c = conn(a.name);
      return new AppCluster(
        a.name,
        {
          cluster: a.name,
          kubeconfig: c.kubeconfig,
          ...(c.context ? { context: c.context } : {}),
          objects: source.appCluster({ config, cluster: a, images: { konnector: images.konnector } }),
          controlPlane: this.controlPlane,
          binding: a.binding,
          skipAwait: config.skipAwait,
          ...(args.imageBuilds ? { dependsOn: args.imageBuilds } : {}),
          ...(args.imagePins ? { imagePins: args.imagePins } : {}),
        },
        { parent: this },
      );
    });
    this.backendUrl = this.controlPlane.backendUrl;
    this.kubeconfigs = pulumi.secret(
      pulumi
        .all([this.controlPlane.kubeconfig, ...this.appClusters.map((a) => a.kubeconfig)])
        .apply(([cp, ...apps]): Record<string, string> =>
          Object.fromEntries([[config.controlPlane.name, cp], ...this.appClusters.map((a, i): [string, string] => [a.cluster, apps[i]!])]),
        ),
    );
    this.bindCommands = pulumi
      .all(this.appClusters.map((a) => a.bindCommand))
      .apply((cmds): Record<string, string> => Object.fromEntries(this.appClusters.map((a, i): [string, string] => [a.cluster, cmds[i]!])));
    this.registerOutputs({ backendUrl: this.backendUrl, kubeconfigs: this.kubeconfigs, bindCommands: this.bindCommands });
  }
}
