// `klutch-kit cluster start`: a throwaway real cluster (etcd + kube-apiserver + kube-controller-manager
// from runtime/realinfra) that stays up until Ctrl-C; with `--crossplane 2.3|1.20` also real Crossplane,
// with `--node` also a real node (containerd, kubelet, kube-proxy, kube-scheduler).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command } from 'commander';
import { CROSSPLANE_VERSIONS, type CrossplaneVersion } from '../realinfra/build.js';
import type { RealCluster } from '../realinfra/cluster.js';
import { ExitCode, UsageError } from './errors.js';

/** The harness needs @kubernetes/client-node (an optional peer): loaded when a cluster starts, so that
 * `klutch-kit validate` and the other commands run without the runtime peers. */
const realinfra = () =>
  import('../realinfra/cluster.js').catch((e: unknown) => {
    const err = e as { code?: string; message?: string };
    if (err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes("'@kubernetes/client-node'")) {
      throw new Error('`klutch-kit cluster` needs the optional peer @kubernetes/client-node: npm install @kubernetes/client-node', { cause: e });
    }
    throw e;
  });

interface StartOptions {
  name: string;
  kubeconfig?: string;
  json?: boolean;
  quiet?: boolean;
  crossplane?: string;
  node?: boolean;
}

async function start(opts: StartOptions): Promise<void> {
  const t0 = Date.now();
  const log = opts.quiet ? () => {} : (line: string) => process.stderr.write(`[klutch-kit +${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}\n`);
  if (opts.crossplane !== undefined && !CROSSPLANE_VERSIONS.includes(opts.crossplane as CrossplaneVersion)) {
    throw new UsageError(`--crossplane: "${opts.crossplane}" is not a supported Crossplane version; expected one of ${CROSSPLANE_VERSIONS.join(', ')}`);
  }
  if (!/^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$/.test(opts.name)) {
    throw new UsageError(`--name: must be a DNS label of at most 40 characters (lowercase letters, digits, "-"), got ${JSON.stringify(opts.name)}`);
  }
  // startCluster() checks the name first, then builds the binaries if the cache is cold (with progress lines).
  const { startCluster, logTail } = await realinfra();
  const cluster = await startCluster({
    name: opts.name,
    log,
    ...(opts.crossplane ? { crossplane: opts.crossplane as CrossplaneVersion } : {}),
    ...(opts.node ? { nodes: 1 as const } : {}),
  });
  const node = cluster.node;
  const xp = cluster.crossplane;
  let copied: string | undefined;
  if (opts.kubeconfig) {
    copied = path.resolve(opts.kubeconfig);
    fs.mkdirSync(path.dirname(copied), { recursive: true });
    fs.copyFileSync(cluster.kubeconfigPath, copied);
    fs.chmodSync(copied, 0o600);
  }
  const kubeconfig = copied ?? cluster.kubeconfigPath;
  if (opts.json) {
    process.stdout.write(
      `${JSON.stringify({
        name: cluster.name,
        server: cluster.server,
        kubeconfig,
        dir: cluster.dir,
        pids: cluster.pids(),
        ...(xp ? { crossplane: { version: xp.versions.crossplane, registry: xp.registry, pids: xp.pids(), logs: path.dirname(xp.logs.crossplane) } } : {}),
        ...(node
          ? {
              node: {
                name: node.name,
                ip: node.ip,
                registry: node.registry,
                probeImage: node.probeImage,
                pids: node.pids(),
                logs: path.dirname(node.logs.kubelet),
              },
            }
          : {}),
      })}\n`,
    );
  } else {
    process.stdout.write(
      [
        `Cluster "${cluster.name}" is ready at ${cluster.server} (${((Date.now() - t0) / 1000).toFixed(1)} s).`,
        `kubeconfig: ${kubeconfig}`,
        '',
        `  export KUBECONFIG=${kubeconfig}`,
        '  kubectl get namespaces',
        '',
        ...(xp
          ? [
              `Crossplane ${xp.versions.crossplane} with function-patch-and-transform ${xp.versions.functionPatchAndTransform} and provider-kubernetes ${xp.versions.providerKubernetes}.`,
              `Package registry: ${xp.registry} (xpkg.crossplane.io/crossplane-contrib/* is rewritten to it)`,
              `Crossplane logs: ${path.dirname(xp.logs.crossplane)}`,
              '',
            ]
          : []),
        ...(node
          ? [
              `Node "${node.name}" is Ready at ${node.ip} (containerd, kubelet, kube-proxy, kube-scheduler).`,
              `Image registry: ${node.registry} (plain HTTP; containerd pulls from it). Test image: ${node.probeImage}`,
              `Node logs: ${path.dirname(node.logs.kubelet)}`,
              '',
            ]
          : []),
        `Logs: ${path.join(cluster.dir, 'logs')}`,
        `Press Ctrl-C to stop the cluster and remove ${cluster.dir}${copied ? ` and ${copied}` : ''}.`,
        '',
      ].join('\n'),
    );
  }
  await waitUntilStopped(cluster, log, copied, logTail);
}

/** Keeps the process alive until SIGINT/SIGTERM or until a component dies, then stops everything. */
function waitUntilStopped(
  cluster: RealCluster,
  log: (l: string) => void,
  copiedKubeconfig: string | undefined,
  logTail: (file: string) => string,
): Promise<void> {
  return new Promise<void>((resolve) => {
    let stopping = false;
    const finish = async (reason: string, exitCode: number) => {
      if (stopping) {
        // second Ctrl-C: give up waiting; the exit hook SIGKILLs what is left
        process.exit(130);
      }
      stopping = true;
      clearInterval(watchdog);
      log(`${reason}; stopping cluster "${cluster.name}"`);
      await cluster.stop();
      if (copiedKubeconfig) fs.rmSync(copiedKubeconfig, { force: true });
      process.exitCode = exitCode;
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      process.off('SIGHUP', onHup);
      resolve();
    };
    const onInt = () => void finish('interrupted', 0);
    const onTerm = () => void finish('terminated', 0);
    const onHup = () => void finish('terminal closed', 0);
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    process.on('SIGHUP', onHup);
    const xpStarted = new Set<string>();
    const watchdog = setInterval(() => {
      const pids = cluster.pids();
      const dead = (Object.keys(pids) as (keyof typeof pids)[]).find((k) => pids[k] === undefined);
      if (dead && !stopping) {
        process.stderr.write(`klutch-kit: ${dead} of cluster "${cluster.name}" stopped unexpectedly; last lines of its log:\n${logTail(cluster.logs[dead])}\n`);
        void finish(`${dead} died`, ExitCode.FAILED);
        return;
      }
      const node = cluster.node;
      if (node && !stopping) {
        const nodePids = node.pids();
        const deadNode = (Object.keys(nodePids) as (keyof typeof nodePids)[]).find((k) => nodePids[k] === undefined);
        if (deadNode) {
          process.stderr.write(
            `klutch-kit: ${deadNode} of the node of cluster "${cluster.name}" stopped unexpectedly; last lines of its log:\n${logTail(node.logs[deadNode])}\n`,
          );
          void finish(`${deadNode} died`, ExitCode.FAILED);
          return;
        }
      }
      const xp = cluster.crossplane;
      if (!xp || stopping) return;
      const xpPids = xp.pids();
      // provider-kubernetes is started by the package runtime once its revision is installed: watch it only then.
      const deadXp = (Object.keys(xpPids) as (keyof typeof xpPids)[]).find((k) => xpPids[k] === undefined && (k !== 'provider-kubernetes' || xpStarted.has(k)));
      for (const k of Object.keys(xpPids) as (keyof typeof xpPids)[]) if (xpPids[k] !== undefined) xpStarted.add(k);
      if (deadXp) {
        process.stderr.write(`klutch-kit: ${deadXp} of cluster "${cluster.name}" stopped unexpectedly; last lines of its log:\n${logTail(xp.logs[deadXp])}\n`);
        void finish(`${deadXp} died`, ExitCode.FAILED);
      }
    }, 1000);
  });
}

export function clusterCommand(): Command {
  const cluster = new Command('cluster').description(
    'throwaway real Kubernetes clusters (etcd, kube-apiserver, kube-controller-manager built from Go modules)',
  );
  cluster
    .command('start')
    .description('start a cluster on 127.0.0.1, print its kubeconfig, and keep it running until Ctrl-C')
    .option('--name <name>', 'cluster name (a DNS label)', 'dev')
    .option('--kubeconfig <path>', 'also write the admin kubeconfig to this path (removed again on stop)')
    .option('--json', 'print one JSON line {name, server, kubeconfig, dir, pids} instead of the instructions')
    .option('-q, --quiet', 'no progress lines on stderr')
    .option(
      '--crossplane <version>',
      `also run real Crossplane (${CROSSPLANE_VERSIONS.join(' or ')}) with function-patch-and-transform and provider-kubernetes (no root: in user namespaces)`,
    )
    .option('--node', 'also run a real node: containerd + runc, kubelet, kube-proxy, kube-scheduler and an image registry (needs root; one per host)')
    .action(async (opts: StartOptions) => {
      await start(opts);
    });
  return cluster;
}
