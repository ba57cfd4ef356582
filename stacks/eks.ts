/**
 * EKS clusters created by the stack (`access.kind: eks`) with @pulumi/eks, which is not a dependency of klutch-kit:
 * it is loaded with a dynamic `import()`, and a missing package fails with the install instruction.
 */
import * as pulumi from '@pulumi/pulumi';
import { type ClusterAccess, CONFIG_NAMESPACE } from './config.js';
import { type Importer, loadOptional } from './optional.js';

export type EksAccess = Extract<ClusterAccess, { kind: 'eks' }>;

/** What the stack passes to `new aws.Provider(...)` and `new eks.Cluster(...)`. */
export interface EksClusterOptions {
  readonly provider: { readonly region: string };
  readonly cluster: {
    readonly name: string;
    readonly instanceType: string;
    readonly desiredCapacity: number;
    readonly minSize: number;
    readonly maxSize: number;
  };
}

/** Default worker instance type and node count. */
export const EKS_DEFAULTS = { instanceType: 't3.medium', desiredCapacity: 2 } as const;

/** Maps the stack config of a cluster to the @pulumi/eks options. Pure. */
export function eksClusterOptions(cluster: string, access: EksAccess): EksClusterOptions {
  const desiredCapacity = access.desiredCapacity ?? EKS_DEFAULTS.desiredCapacity;
  return {
    provider: { region: access.region },
    cluster: {
      name: cluster,
      instanceType: access.instanceType ?? EKS_DEFAULTS.instanceType,
      desiredCapacity,
      minSize: desiredCapacity,
      maxSize: desiredCapacity,
    },
  };
}

/** The message when @pulumi/eks is not installed. */
export function eksMissingMessage(key: string): string {
  return (
    `${CONFIG_NAMESPACE}:${key}.access.kind: "eks" needs the @pulumi/eks package, which is not installed; ` +
    `run \`npm install @pulumi/eks @pulumi/aws\` and configure AWS credentials, or use access {kind: kubeconfig} with the kubeconfig of an existing cluster.`
  );
}

interface EksModule {
  Cluster: new (
    name: string,
    args: Record<string, unknown>,
    opts?: pulumi.ComponentResourceOptions,
  ) => pulumi.Resource & { kubeconfigJson: pulumi.Output<string> };
}
interface AwsModule {
  Provider: new (name: string, args: Record<string, unknown>, opts?: pulumi.CustomResourceOptions) => pulumi.ProviderResource;
}

/** Creates the EKS cluster (and an aws.Provider for its region); returns its kubeconfig (secret). */
export async function createEksCluster(cluster: string, access: EksAccess, key: string, importer?: Importer): Promise<pulumi.Output<string>> {
  const eks = await loadOptional<EksModule>('@pulumi/eks', eksMissingMessage(key), importer);
  const aws = await loadOptional<AwsModule>('@pulumi/aws', eksMissingMessage(key), importer);
  const o = eksClusterOptions(cluster, access);
  const provider = new aws.Provider(`${cluster}-aws`, { ...o.provider });
  const eksCluster = new eks.Cluster(cluster, { ...o.cluster }, { providers: { aws: provider } });
  return pulumi.secret(eksCluster.kubeconfigJson);
}
