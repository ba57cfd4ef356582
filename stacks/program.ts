/**
 * The stack program: reads and validates the `klutch-kit:` stack config, connects to every cluster and deploys the
 * {@link Topology}. Returns the stack outputs.
 */
import * as pulumi from '@pulumi/pulumi';
import { CONFIG_NAMESPACE, parseStackConfig, type StackConfig, StackConfigError } from './config.js';
import { type ClusterConnection, connectCluster } from './cluster.js';
import type { ManifestSource } from './manifests.js';
import { RuntimeImages, type RuntimeImageBuilder } from './images.js';
import type { Importer } from './optional.js';
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
    dex: obj('dex'),
    backend: obj('backend'),
    images: obj('images'),
    skipAwait: cfg.get('skipAwait'),
    dexConnectors: obj('dexConnectors'),
    manifests: cfg.get('manifests'),
    anynines: obj('anynines'),
    monitoring: obj('monitoring'),
    catalogue: obj('catalogue'),
  });
}

export interface ProgramOptions {
  readonly manifests?: ManifestSource;
  /** How optional packages (@pulumi/eks, @pulumi/aws) are imported. @default import() */
  readonly importer?: Importer;
  /** How images.registry builds and pushes the runtime images. @default defaultImageBuilder (runtime/image) */
  readonly imageBuilder?: RuntimeImageBuilder;
}

/**
 * Runs the program. A {@link StackConfigError} is rethrown as `pulumi.RunError`, which the CLI prints as a plain
 * message (no stack trace): the message already names the key, the value and what to do.
 */
export async function klutchProgram(options: ProgramOptions = {}): Promise<StackOutputs> {
  try {
    return await program(options);
  } catch (e) {
    if (e instanceof StackConfigError) throw new pulumi.RunError(e.message);
    throw e;
  }
}

async function program(options: ProgramOptions): Promise<StackOutputs> {
  const cfg = new pulumi.Config(CONFIG_NAMESPACE);
  let config = readStackConfig(cfg);
  // images.registry: build (runtime/image, no Docker) and push both runtime images. The manifests name them by tag and
  // get them pinned by digest once pushed; only the objects that name one wait for it (imagePins), the rest is applied
  // while they build.
  const images = config.images.registry
    ? new RuntimeImages('klutch-runtime-images', {
        registry: config.images.registry,
        ...(config.images.base ? { base: config.images.base } : {}),
        ...(config.images.platforms ? { platforms: config.images.platforms } : {}),
        ...(options.imageBuilder ? { builder: options.imageBuilder } : {}),
      })
    : undefined;
  if (images) config = { ...config, images: { ...config.images, ...images.tags } };
  const connections: Record<string, ClusterConnection> = {
    [config.controlPlane.name]: await connectCluster(config.controlPlane, 'controlPlane', cfg, options.importer),
  };
  for (const [i, a] of config.appClusters.entries()) {
    connections[a.name] = await connectCluster(a, `appClusters[${i}]`, cfg, options.importer);
  }
  const topology = new Topology('klutch', {
    config,
    connections,
    secrets: readStackSecrets(cfg),
    ...(options.manifests ? { manifests: options.manifests } : {}),
    ...(images ? { imagePins: images.pins() } : {}),
  });
  // a failed build or push fails the program with its own message (the groups waiting for the images fail too)
  if (images) await images.refs;
  return {
    backendUrl: topology.backendUrl,
    kubeconfigs: topology.kubeconfigs,
    bindCommands: topology.bindCommands,
    controlPlane: config.controlPlane.name,
    appClusters: config.appClusters.map((a) => a.name),
  };
}
