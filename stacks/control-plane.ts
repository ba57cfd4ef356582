/** The control-plane cluster: binding API CRDs, the bind backend (and Dex), and the Secrets they read. */
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { clusterProvider, deployObjects, type ImagePins } from './_deploy.js';
import type { KubeObject } from './manifests.js';
import { STACK_SECRETS } from './secret-names.js';
import type { CrossplaneRelease } from './topology-source.js';

export interface ControlPlaneSecrets {
  /** The backend's OIDC client secret (also Dex's static client secret when Dex is deployed). */
  readonly oidcClientSecret: pulumi.Input<string>;
  /** base64, 32 or 64 bytes. */
  readonly cookieSigningKey: pulumi.Input<string>;
  /** base64, 16/24/32 bytes. @default none */
  readonly cookieEncryptionKey?: pulumi.Input<string>;
}

export interface ControlPlaneArgs {
  /** Cluster name (DNS label); names the provider and the ConfigGroups. */
  readonly cluster: string;
  /** kubeconfig contents (kept secret). */
  readonly kubeconfig: pulumi.Input<string>;
  /** Context in the kubeconfig. @default its current-context */
  readonly context?: string;
  /** The cluster's objects in apply order, e.g. `defaultManifestSource.controlPlane(...)`. */
  readonly objects: readonly KubeObject[];
  /** Secret values; written to the Secrets the manifests reference ({@link STACK_SECRETS}). */
  readonly secrets: ControlPlaneSecrets;
  /** URL of the bind backend. */
  readonly backendUrl: string;
  /** Skip readiness awaits of workloads. @default false */
  readonly skipAwait?: boolean;
  /** Await the Crossplane packages (`Healthy`) even with `skipAwait` (Crossplane already runs). @default false */
  readonly awaitPackages?: boolean;
  /** Install Crossplane with Helm (`k8s.helm.v4.Chart`) after the foundation and before the packages. @default not installed */
  readonly crossplane?: CrossplaneRelease;
  /** Resources the cluster's objects group waits for (e.g. the image builds). */
  readonly dependsOn?: readonly pulumi.Resource[];
  /** Image references the objects name before the images are pushed, pinned once they are (stacks/images.ts). @default none */
  readonly imagePins?: ImagePins;
}

export class ControlPlane extends pulumi.ComponentResource {
  public static readonly TYPE = 'klutch-kit:stacks:ControlPlane';
  public readonly cluster: string;
  public readonly provider: k8s.Provider;
  /** CRDs and Namespaces; everything that uses a binding API kind on this cluster depends on it. */
  public readonly foundation?: k8s.yaml.v2.ConfigGroup;
  public readonly objects?: k8s.yaml.v2.ConfigGroup;
  /** The Crossplane Helm chart, when `crossplane` is given. */
  public readonly crossplane?: k8s.helm.v4.Chart;
  public readonly packages?: k8s.yaml.v2.ConfigGroup;
  public readonly secrets: k8s.core.v1.Secret[];
  public readonly backendUrl: pulumi.Output<string>;
  /** Secret. */
  public readonly kubeconfig: pulumi.Output<string>;

  constructor(name: string, args: ControlPlaneArgs, opts?: pulumi.ComponentResourceOptions) {
    super(ControlPlane.TYPE, name, {}, opts);
    this.cluster = args.cluster;
    this.provider = clusterProvider(args.cluster, args, this);
    this.kubeconfig = pulumi.secret(pulumi.output(args.kubeconfig));
    this.backendUrl = pulumi.output(args.backendUrl);
    const secrets: k8s.core.v1.Secret[] = [];
    const deployed = deployObjects(args.cluster, args.objects, {
      parent: this,
      provider: this.provider,
      skipAwait: args.skipAwait ?? false,
      awaitPackages: args.awaitPackages ?? false,
      ...(args.imagePins ? { imagePins: args.imagePins } : {}),
      platform: (foundation) =>
        args.crossplane
          ? new k8s.helm.v4.Chart(
              `${args.cluster}-crossplane`,
              {
                chart: args.crossplane.chart,
                repositoryOpts: { repo: args.crossplane.repo },
                version: args.crossplane.version,
                namespace: args.crossplane.namespace,
                name: args.crossplane.releaseName,
                values: args.crossplane.values,
                skipAwait: args.skipAwait ?? false,
              },
              { parent: this, provider: this.provider, ...(foundation ? { dependsOn: [foundation] } : {}) },
            )
          : undefined,
      after: (foundation) => {
        const o = { parent: this, provider: this.provider, ...(foundation ? { dependsOn: [foundation] } : {}) };
        secrets.push(
          new k8s.core.v1.Secret(
            `${args.cluster}-${STACK_SECRETS.oidc.name}`,
            {
              metadata: { name: STACK_SECRETS.oidc.name, namespace: STACK_SECRETS.namespace },
              type: 'Opaque',
              stringData: { [STACK_SECRETS.oidc.clientSecretKey]: pulumi.secret(args.secrets.oidcClientSecret) },
            },
            o,
          ),
          new k8s.core.v1.Secret(
            `${args.cluster}-${STACK_SECRETS.cookies.name}`,
            {
              metadata: { name: STACK_SECRETS.cookies.name, namespace: STACK_SECRETS.namespace },
              type: 'Opaque',
              stringData: {
                [STACK_SECRETS.cookies.signingKey]: pulumi.secret(args.secrets.cookieSigningKey),
                ...(args.secrets.cookieEncryptionKey !== undefined
                  ? { [STACK_SECRETS.cookies.encryptionKey]: pulumi.secret(args.secrets.cookieEncryptionKey) }
                  : {}),
              },
            },
            o,
          ),
        );
        return [...secrets, ...(args.dependsOn ?? [])];
      },
    });
    if (deployed.foundation) this.foundation = deployed.foundation;
    if (deployed.objects) this.objects = deployed.objects;
    if (deployed.packages) this.packages = deployed.packages;
    if (deployed.platform) this.crossplane = deployed.platform as k8s.helm.v4.Chart;
    this.secrets = secrets;
    this.registerOutputs({ cluster: this.cluster, backendUrl: this.backendUrl, kubeconfig: this.kubeconfig });
  }
}
