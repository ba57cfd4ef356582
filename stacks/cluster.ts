/**
 * Cluster access: turns a {@link ClusterConfig} into the kubeconfig (always a Pulumi secret) and context that the
 * cluster's `k8s.Provider` uses. `kind` and `eks` create the cluster (see stacks/kind.ts, stacks/eks.ts) and fail with
 * a message that says what is missing and what to do instead when Docker/kind or @pulumi/eks are not there.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import { show } from '../constructs/_errors.js';
import { type ClusterConfig, CONFIG_NAMESPACE, kubeconfigKey, StackConfigError } from './config.js';
import { createEksCluster } from './eks.js';
import { checkKindPrerequisites, KindCluster, kindOptionProblem } from './kind.js';
import type { Importer } from './optional.js';

/** How a component reaches its cluster. */
export interface ClusterConnection {
  /** kubeconfig contents; secret. */
  readonly kubeconfig: pulumi.Output<string>;
  /** Context inside the kubeconfig. @default its current-context */
  readonly context?: string;
}

/** Reads secret config values; `pulumi.Config` satisfies it. */
export interface SecretConfigReader {
  getSecret(key: string): pulumi.Output<string> | undefined;
}

function defaultKubeconfigPath(): string {
  const env = process.env['KUBECONFIG'];
  if (env && env.trim() !== '') return env.split(path.delimiter)[0]!;
  return path.join(os.homedir(), '.kube', 'config');
}

function readKubeconfigFile(cluster: string, key: string, file: string): pulumi.Output<string> {
  const abs = path.resolve(file.startsWith('~/') ? path.join(os.homedir(), file.slice(2)) : file);
  if (!fs.existsSync(abs)) {
    throw new StackConfigError(`${CONFIG_NAMESPACE}:${key}: cluster "${cluster}": kubeconfig file "${file}" does not exist (resolved to ${abs})`);
  }
  return pulumi.secret(fs.readFileSync(abs, 'utf8'));
}

/**
 * Resolves how to reach a cluster. `key` is the config key of the cluster object (for messages). For `kind` and `eks`
 * this creates the cluster (a {@link KindCluster}, or an `eks.Cluster` of the optional @pulumi/eks package, loaded
 * through `importer`) and returns its kubeconfig.
 */
export async function connectCluster(cluster: ClusterConfig, key: string, secrets: SecretConfigReader, importer?: Importer): Promise<ClusterConnection> {
  const access = cluster.access;
  switch (access.kind) {
    case 'kubeconfig': {
      if (access.path) {
        return { kubeconfig: readKubeconfigFile(cluster.name, `${key}.access.path`, access.path), ...(access.context ? { context: access.context } : {}) };
      }
      const secretKey = kubeconfigKey(cluster);
      const value = secrets.getSecret(secretKey);
      if (value === undefined) {
        throw new StackConfigError(
          `${CONFIG_NAMESPACE}:${secretKey} is not set; cluster "${cluster.name}" (${key}) reads its kubeconfig from it. ` +
            `Set it with: pulumi config set --secret ${secretKey} < path/to/kubeconfig, or use access {kind: context, context: <name>}`,
        );
      }
      return { kubeconfig: value, ...(access.context ? { context: access.context } : {}) };
    }
    case 'context': {
      const file = access.path ?? defaultKubeconfigPath();
      return { kubeconfig: readKubeconfigFile(cluster.name, `${key}.access.path`, file), context: access.context };
    }
    case 'kind': {
      const opts = {
        name: access.name ?? cluster.name,
        ...(access.nodeImage ? { nodeImage: access.nodeImage } : {}),
        ...(access.configPath ? { configPath: access.configPath } : {}),
      };
      const problem = kindOptionProblem(opts); // bad values fail before the environment is checked
      if (problem) {
        throw new StackConfigError(`${CONFIG_NAMESPACE}:${key}.access.${problem.field}: expected ${problem.expected}, got ${show(problem.value)}`);
      }
      checkKindPrerequisites(key);
      const kind = new KindCluster(`kind-${cluster.name}`, opts);
      return { kubeconfig: pulumi.secret(kind.kubeconfig) };
    }
    case 'eks':
      return { kubeconfig: await createEksCluster(cluster.name, access, key, importer) };
  }
}
