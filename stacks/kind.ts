/**
 * kind clusters created by the stack (`access.kind: kind`): a Pulumi dynamic resource that runs the kind CLI.
 * create: `kind create cluster --name <n> --kubeconfig <tmp file> [--image <nodeImage>] [--config <configPath>]`;
 * read: `kind get kubeconfig --name <n>`; delete: `kind delete cluster --name <n>`. The kubeconfig output is secret.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import { fail } from '../constructs/_errors.js';
import { isDnsLabel } from '../constructs/_names.js';
import { CONFIG_NAMESPACE, StackConfigError } from './config.js';

/** Stands for the temporary kubeconfig file in {@link KindCommands.create}; the provider replaces it at create time. */
export const KIND_KUBECONFIG_PLACEHOLDER = '<kubeconfig>';

export interface KindClusterOptions {
  /** kind cluster name. */
  readonly name: string;
  /** `--image`: the node image, e.g. kindest/node:v1.33.1. */
  readonly nodeImage?: string;
  /** `--config`: a kind cluster config file. */
  readonly configPath?: string;
}

/** argv (without the leading `kind`) of each kind CLI call. */
export interface KindCommands {
  readonly create: readonly string[];
  readonly getKubeconfig: readonly string[];
  readonly delete: readonly string[];
}

/** A bad {@link KindClusterOptions} value: the field, what was expected, the value received. */
export interface KindOptionProblem {
  readonly field: 'name' | 'nodeImage' | 'configPath';
  readonly expected: string;
  readonly value: unknown;
}

/** The first bad value of `opts`, or undefined. Pure; callers phrase the message for their input. */
export function kindOptionProblem(opts: KindClusterOptions): KindOptionProblem | undefined {
  const { name, nodeImage, configPath } = opts;
  if (!isDnsLabel(name, 40)) {
    return { field: 'name', expected: 'a kind cluster name (a DNS label of at most 40 characters)', value: name };
  }
  if (nodeImage !== undefined && (nodeImage === '' || /\s/.test(nodeImage) || nodeImage.startsWith('-'))) {
    return { field: 'nodeImage', expected: 'an image reference such as "kindest/node:v1.33.1"', value: nodeImage };
  }
  if (configPath !== undefined && (configPath === '' || configPath.startsWith('-'))) {
    return { field: 'configPath', expected: 'the path of a kind config file', value: configPath };
  }
  return undefined;
}

/** Builds the kind CLI argv; rejects bad values naming `KindClusterOptions.<field>` and the value. Pure. */
export function kindCommands(opts: KindClusterOptions): KindCommands {
  const problem = kindOptionProblem(opts);
  if (problem) {
    fail(`KindClusterOptions.${problem.field}`, problem.value, `is not ${problem.expected}`);
  }
  const { name, nodeImage, configPath } = opts;
  return {
    create: [
      'create',
      'cluster',
      '--name',
      name,
      '--kubeconfig',
      KIND_KUBECONFIG_PLACEHOLDER,
      ...(nodeImage ? ['--image', nodeImage] : []),
      ...(configPath ? ['--config', path.resolve(configPath)] : []),
    ],
    getKubeconfig: ['get', 'kubeconfig', '--name', name],
    delete: ['delete', 'cluster', '--name', name],
  };
}

/** The executable `cmd` on PATH, or undefined. */
function which(cmd: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    if (!dir) continue;
    try {
      fs.accessSync(path.join(dir, cmd), fs.constants.X_OK);
      return path.join(dir, cmd);
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * What is missing to create kind clusters: `docker` / `kind` on PATH, and a Docker daemon that answers `docker info`.
 * Empty when everything is there.
 */
export function missingKindPrerequisites(): string[] {
  const docker = which('docker');
  const missing = [...(docker ? [] : ['docker']), ...(which('kind') ? [] : ['kind'])].map((c) => `${c} (not on PATH)`);
  if (docker) {
    const r = spawnSync(docker, ['info'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000, encoding: 'utf8' });
    if (r.status !== 0) {
      const why = (r.stderr ?? '').trim().split('\n')[0] || (r.error ? r.error.message : `exit code ${r.status}`);
      missing.unshift(`a Docker daemon (\`docker info\` failed: ${why})`);
    }
  }
  return missing;
}

/** Fails with a message naming what is missing and the alternatives. */
export function checkKindPrerequisites(key: string): void {
  const missing = missingKindPrerequisites();
  if (missing.length === 0) return;
  throw new StackConfigError(
    `${CONFIG_NAMESPACE}:${key}.access.kind: "kind" needs Docker and the kind CLI, but ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} missing. ` +
      `Use an existing cluster with access {kind: kubeconfig} or {kind: context, context: <name>} (e.g. a kind cluster created outside the stack), ` +
      `or the sandbox (npm run sandbox) for local API servers without Docker.`,
  );
}

interface KindInputs {
  readonly clusterName: string;
  readonly commands: KindCommands;
}

/**
 * The dynamic provider. Its functions are serialised into the state, so they capture nothing from this module and
 * load what they need with `import()`.
 */
const kindProvider: pulumi.dynamic.ResourceProvider = {
  async create(inputs: KindInputs) {
    const { execFileSync } = await import('node:child_process');
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-kind-'));
    const file = path.join(dir, 'kubeconfig');
    try {
      const argv = inputs.commands.create.map((a) => (a === '<kubeconfig>' ? file : a));
      execFileSync('kind', argv, { stdio: ['ignore', 'pipe', 'pipe'] });
      const kubeconfig = fs.readFileSync(file, 'utf8');
      return { id: inputs.clusterName, outs: { ...inputs, kubeconfig } };
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
  async read(id: string, props: KindInputs & { kubeconfig?: string }) {
    const { execFileSync } = await import('node:child_process');
    try {
      const kubeconfig = execFileSync('kind', [...props.commands.getKubeconfig], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      return { id, props: { ...props, kubeconfig } };
    } catch {
      return {}; // the cluster is gone
    }
  },
  async diff(_id: string, olds: KindInputs, news: KindInputs) {
    const changed = JSON.stringify(olds.commands.create) !== JSON.stringify(news.commands.create);
    return { changes: changed, replaces: changed ? ['commands'] : [], deleteBeforeReplace: true };
  },
  async delete(_id: string, props: KindInputs) {
    const { execFileSync } = await import('node:child_process');
    execFileSync('kind', [...props.commands.delete], { stdio: ['ignore', 'pipe', 'pipe'] });
  },
};

/** Arguments of {@link KindCluster}. */
export type KindClusterArgs = KindClusterOptions;

/** A kind cluster; `kubeconfig` is secret. */
export class KindCluster extends pulumi.dynamic.Resource {
  declare public readonly kubeconfig: pulumi.Output<string>;
  declare public readonly clusterName: pulumi.Output<string>;

  constructor(name: string, args: KindClusterArgs, opts?: pulumi.CustomResourceOptions) {
    const commands = kindCommands(args);
    super(
      kindProvider,
      name,
      { clusterName: args.name, commands, kubeconfig: undefined },
      { ...opts, additionalSecretOutputs: ['kubeconfig'] },
      'kind',
      'Cluster',
    );
  }
}
