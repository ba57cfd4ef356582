/**
 * Cluster access: turns a {@link ClusterConfig} into the kubeconfig (always a Pulumi secret) and context that the
 * cluster's `k8s.Provider` uses. Kinds that would create clusters (kind, EKS) fail with a message that says what is
 * missing and what to do instead.
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import { type ClusterConfig, CONFIG_NAMESPACE, kubeconfigKey, StackConfigError } from './config.js';

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

function onPath(cmd: string): boolean {
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    if (!dir) continue;
    try {
      fs.accessSync(path.join(dir, cmd), fs.constants.X_OK);
      return true;
    } catch {
      // not here
    }
  }
  return false;
}

function resolvable(pkg: string): boolean {
  try {
    createRequire(import.meta.url).resolve(pkg);
    return true;
  } catch {
    return false;
  }
}

/** Resolves how to reach a cluster. `key` is the config key of the cluster object (for messages). */
export function connectCluster(cluster: ClusterConfig, key: string, secrets: SecretConfigReader): ClusterConnection {
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
      const missing = ['docker', 'kind'].filter((c) => !onPath(c));
      if (missing.length > 0) {
        throw new StackConfigError(
          `${CONFIG_NAMESPACE}:${key}.access.kind: "kind" needs Docker and the kind CLI, but ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not on PATH. ` +
            `Use access {kind: kubeconfig} or {kind: context} for an existing cluster, or the sandbox (npm run sandbox) for local API servers without Docker.`,
        );
      }
      throw new StackConfigError(
        `${CONFIG_NAMESPACE}:${key}.access.kind: "kind" clusters are created outside the stack in this version: run ` +
          `\`kind create cluster --name ${cluster.name}\` and set access {kind: context, context: kind-${cluster.name}} (see docs/pulumi.md).`,
      );
    }
    case 'eks': {
      if (!resolvable('@pulumi/eks')) {
        throw new StackConfigError(
          `${CONFIG_NAMESPACE}:${key}.access.kind: "eks" needs the @pulumi/eks package, which is not installed; ` +
            `run \`npm install @pulumi/eks @pulumi/aws\` and configure AWS credentials, or use access {kind: kubeconfig} with the kubeconfig of an existing cluster.`,
        );
      }
      throw new StackConfigError(
        `${CONFIG_NAMESPACE}:${key}.access.kind: "eks" (region ${access.region}): create the cluster with @pulumi/eks in its own stack and pass its kubeconfig ` +
          `output as the secret ${CONFIG_NAMESPACE}:${kubeconfigKey({ name: cluster.name, access: { kind: 'kubeconfig' } })} (see docs/pulumi.md).`,
      );
    }
  }
}
