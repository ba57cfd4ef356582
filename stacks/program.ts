/**
 * The stack program: reads and validates the `klutch-kit:` stack config, connects to every cluster and deploys the
 * {@link Topology}. Returns the stack outputs.
 */
import * as pulumi from '@pulumi/pulumi';
import { createRequire } from 'node:module';
import { CONFIG_NAMESPACE, parseStackConfig, type StackConfig, StackConfigError } from './config.js';
import { type ClusterConnection, connectCluster } from './cluster.js';
import type { ManifestSource } from './manifests.js';
import { readStackSecrets } from './secrets.js';
import { Topology } from './topology.js';

/** The stack outputs. */
export interface StackOutputs {
  /** URL of the bind backend. */
  readonly backendUrl: pulumi.Output<string>;
  /** Secret: cluster name → kubeconfig. */
  readonly kubeconfigs: pulumi.Output<Record<string, string>>;
  /** App cluster name → the command that binds it. */
  readonly bindCommands: pulumi.Output<Record<string, string>>;
  readonly controlPlane: string;
  readonly appClusters: string[];
}

/** Reads the non-secret stack config (`klutch-kit:*`). */
export function readStackConfig(cfg: pulumi.Config = new pulumi.Config(CONFIG_NAMESPACE)): StackConfig {
  const obj = (k: string) => {
    try {
      return cfg.getObject<unknown>(k);
    } catch (e) {
      throw new StackConfigError(`${CONFIG_NAMESPACE}:${k}: not valid JSON (${e instanceof Error ? e.message : String(e)})`);
    }
  };
  return parseStackConfig({
    controlPlane: obj('controlPlane'),
    appClusters: obj('appClusters'),
    oidc: obj('oidc'),
    backend: obj('backend'),
    images: obj('images'),
    skipAwait: cfg.get('skipAwait'),
    dexConnectors: obj('dexConnectors'),
    manifests: cfg.get('manifests'),
    anynines: obj('anynines'),
  });
}

/**
 * Image builds: with `images.registry` the stack would build runtime/Dockerfile.{backend,konnector} with
 * @pulumi/docker-build and push them. That package (and a Docker daemon) is not part of this installation, so the
 * setting fails clearly instead of silently deploying unbuilt references.
 */
export function checkImageBuild(config: StackConfig): void {
  if (!config.images.registry) return;
  let installed = true;
  try {
    createRequire(import.meta.url).resolve('@pulumi/docker-build');
  } catch {
    installed = false;
  }
  throw new StackConfigError(
    `${CONFIG_NAMESPACE}:images.registry is "${config.images.registry}", but ` +
      (installed
        ? 'building images from the stack is not wired in this version'
        : '@pulumi/docker-build is not installed (and needs a Docker daemon)') +
      `; build runtime/Dockerfile.backend and runtime/Dockerfile.konnector yourself (docker build -f runtime/Dockerfile.backend .) and set images.backend / images.konnector to the pushed references`,
  );
}

export interface ProgramOptions {
  readonly manifests?: ManifestSource;
}

/**
 * Runs the program. A {@link StackConfigError} is rethrown as `pulumi.RunError`, which the CLI prints as a plain
 * message (no stack trace): the message already names the key, the value and what to do.
 */
export function klutchProgram(options: ProgramOptions = {}): StackOutputs {
  try {
    return program(options);
  } catch (e) {
    if (e instanceof StackConfigError) throw new pulumi.RunError(e.message);
    throw e;
  }
}

function program(options: ProgramOptions): StackOutputs {
  const cfg = new pulumi.Config(CONFIG_NAMESPACE);
  const config = readStackConfig(cfg);
  checkImageBuild(config);
  const connections: Record<string, ClusterConnection> = {
    [config.controlPlane.name]: connectCluster(config.controlPlane, 'controlPlane', cfg),
  };
  config.appClusters.forEach((a, i) => {
    connections[a.name] = connectCluster(a, `appClusters[${i}]`, cfg);
  });
  const topology = new Topology('klutch', {
    config,
    connections,
    secrets: readStackSecrets(cfg),
    ...(options.manifests ? { manifests: options.manifests } : {}),
  });
  return {
    backendUrl: topology.backendUrl,
    kubeconfigs: topology.kubeconfigs,
    bindCommands: topology.bindCommands,
    controlPlane: config.controlPlane.name,
    appClusters: config.appClusters.map((a) => a.name),
  };
}
