/**
 * An app cluster bound to a control plane: the konnector (CLI flow), or — in control-plane mode — an
 * AppClusterBinding plus the app cluster's kubeconfig Secret on the control plane.
 */
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { KUBECONFIG_SECRET_KEY } from '../contract/index.js';
import type { BindingMode } from './config.js';
import type { ControlPlane } from './control-plane.js';
import { clusterProvider, deployObjects, type ImagePins } from './_deploy.js';
import { APP_CLUSTER_BINDING_NAMESPACE, appClusterBinding, type KubeObject } from './manifests.js';

export interface AppClusterArgs {
  /** Cluster name (DNS label); names the provider and the ConfigGroups. */
  readonly cluster: string;
  /** kubeconfig contents (kept secret). */
  readonly kubeconfig: pulumi.Input<string>;
  /** Context in the kubeconfig. @default its current-context */
  readonly context?: string;
  /** The cluster's objects in apply order, e.g. `defaultManifestSource.appCluster(...)`. */
  readonly objects: readonly KubeObject[];
  /** The control plane this cluster is bound to. */
  readonly controlPlane: ControlPlane;
  /** @default 'cli' */
  readonly binding?: BindingMode;
  /** Skip readiness awaits of workloads. @default false */
  readonly skipAwait?: boolean;
  /** Resources the cluster's objects group waits for (e.g. the image builds). */
  readonly dependsOn?: readonly pulumi.Resource[];
  /** Image references the objects name before the images are pushed, pinned once they are (stacks/images.ts). @default none */
  readonly imagePins?: ImagePins;
}

export class AppCluster extends pulumi.ComponentResource {
  public static readonly TYPE = 'klutch-kit:stacks:AppCluster';
  public readonly cluster: string;
  public readonly binding: BindingMode;
  public readonly provider: k8s.Provider;
  public readonly foundation?: k8s.yaml.v2.ConfigGroup;
  public readonly objects?: k8s.yaml.v2.ConfigGroup;
  /** Control-plane mode: the kubeconfig Secret and the AppClusterBinding, both on the control plane. */
  public readonly kubeconfigSecret?: k8s.core.v1.Secret;
  public readonly appClusterBinding?: k8s.apiextensions.CustomResource;
  /** Secret. */
  public readonly kubeconfig: pulumi.Output<string>;
  /** What to run to bind this cluster (CLI flow), or a note that the control plane binds it. */
  public readonly bindCommand: pulumi.Output<string>;

  constructor(name: string, args: AppClusterArgs, opts?: pulumi.ComponentResourceOptions) {
    super(AppCluster.TYPE, name, {}, opts);
    this.cluster = args.cluster;
    this.binding = args.binding ?? 'cli';
    this.provider = clusterProvider(args.cluster, args, this);
    this.kubeconfig = pulumi.secret(pulumi.output(args.kubeconfig));
    const deployed = deployObjects(args.cluster, args.objects, {
      parent: this,
      provider: this.provider,
      skipAwait: args.skipAwait ?? false,
      after: () => [...(args.dependsOn ?? [])],
      ...(args.imagePins ? { imagePins: args.imagePins } : {}),
    });
    if (deployed.foundation) this.foundation = deployed.foundation;
    if (deployed.objects) this.objects = deployed.objects;

    const cp = args.controlPlane;
    if (this.binding === 'controlPlane') {
      if (!cp.foundation) {
        throw new Error(`AppCluster "${args.cluster}": control-plane binding needs the binding API CRDs on control plane "${cp.cluster}", but it deploys none`);
      }
      const { binding, secretName } = appClusterBinding({ name: args.cluster, access: { kind: 'kubeconfig' }, binding: 'controlPlane' });
      const onCp = { parent: this, provider: cp.provider };
      this.kubeconfigSecret = new k8s.core.v1.Secret(
        `${args.cluster}-kubeconfig-on-${cp.cluster}`,
        {
          metadata: { name: secretName, namespace: APP_CLUSTER_BINDING_NAMESPACE },
          type: 'Opaque',
          stringData: { [KUBECONFIG_SECRET_KEY]: this.kubeconfig },
        },
        { ...onCp, dependsOn: [cp.foundation] },
      );
      const { apiVersion, kind, metadata, ...rest } = binding;
      this.appClusterBinding = new k8s.apiextensions.CustomResource(
        `${args.cluster}-binding-on-${cp.cluster}`,
        { apiVersion, kind, metadata, ...rest },
        { ...onCp, dependsOn: [cp.foundation, this.kubeconfigSecret] },
      );
      this.bindCommand = pulumi.interpolate`# ${args.cluster} is bound by the control plane (AppClusterBinding ${APP_CLUSTER_BINDING_NAMESPACE}/${args.cluster} on ${cp.cluster}); nothing to run`;
    } else {
      this.bindCommand = pulumi.interpolate`kubectl bind ${cp.backendUrl}/export --kubeconfig <kubeconfig of ${args.cluster}>`;
    }
    this.registerOutputs({ cluster: this.cluster, binding: this.binding, kubeconfig: this.kubeconfig, bindCommand: this.bindCommand });
  }
}
