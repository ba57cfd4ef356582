/** Shared by the cluster components: one provider per cluster, and the two ordered ConfigGroups. */
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { type KubeObject, splitForDeploy } from './manifests.js';

/** One `k8s.Provider` per cluster, parented to the cluster's component. */
export function clusterProvider(
  cluster: string,
  conn: { kubeconfig: pulumi.Input<string>; context?: string },
  parent: pulumi.Resource,
): k8s.Provider {
  return new k8s.Provider(
    cluster,
    {
      kubeconfig: pulumi.secret(conn.kubeconfig),
      ...(conn.context ? { context: conn.context } : {}),
      // The cluster's identity is its name: a rotated kubeconfig (new certificate, new port) updates the provider
      // instead of replacing every object in the cluster.
      clusterIdentifier: cluster,
      enableServerSideApply: true,
    },
    { parent },
  );
}

export interface DeployedObjects {
  /** CRDs and Namespaces (undefined when the cluster gets none). */
  readonly foundation?: k8s.yaml.v2.ConfigGroup;
  /** Everything else; depends on `foundation` and on `after`. */
  readonly objects?: k8s.yaml.v2.ConfigGroup;
}

/**
 * Deploys a cluster's objects as two ConfigGroups: `<cluster>-foundation` (CRDs, then Namespaces; awaited, so
 * CRDs are established) and `<cluster>-objects` with `dependsOn` on the foundation and on `after`
 * (e.g. the Secrets the workloads reference). Workload awaits are skipped when `skipAwait` is set.
 */
export function deployObjects(
  cluster: string,
  objs: readonly KubeObject[],
  opts: { parent: pulumi.Resource; provider: k8s.Provider; skipAwait: boolean; after?: (foundation?: pulumi.Resource) => pulumi.Resource[] },
): DeployedObjects {
  const split = splitForDeploy(cluster, objs);
  const foundation =
    split.foundation.length > 0
      ? new k8s.yaml.v2.ConfigGroup(`${cluster}-foundation`, { objs: split.foundation }, { parent: opts.parent, provider: opts.provider })
      : undefined;
  const after = opts.after ? opts.after(foundation) : [];
  const objects =
    split.objects.length > 0
      ? new k8s.yaml.v2.ConfigGroup(
          `${cluster}-objects`,
          { objs: split.objects, skipAwait: opts.skipAwait },
          { parent: opts.parent, provider: opts.provider, dependsOn: [...(foundation ? [foundation] : []), ...after] },
        )
      : undefined;
  return { ...(foundation ? { foundation } : {}), ...(objects ? { objects } : {}) };
}
