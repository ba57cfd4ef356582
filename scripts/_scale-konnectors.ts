/**
 * Bench-only konnector host for `npm run bench:scale`: runs one Konnector instance
 * (runtime/konnector/konnector.ts) per app cluster given on the command line, in this one Node
 * process. Each instance has its own app-cluster client, reads its own APIServiceBinding and provider
 * kubeconfig Secret (written by kubectl-bind), so it talks to the control plane as its own
 * ServiceAccount in its own cluster namespace and writes its own heartbeat — exactly what a konnector
 * Deployment per app cluster does; only the Node runtime is shared (the app side is not measured).
 *
 * Usage: tsx scripts/_scale-konnectors.ts <kubeconfig> [<kubeconfig> …]
 * Prints `ready <n>` once every instance started; SIGTERM stops them gracefully.
 */
import { loadKubeconfigFile } from '../runtime/core/kubeconfig.js';
import { createLogger } from '../runtime/core/logger.js';
import { Konnector } from '../runtime/konnector/konnector.js';

async function main(): Promise<void> {
  const files = process.argv.slice(2);
  if (files.length === 0) throw new Error('usage: _scale-konnectors.ts <app kubeconfig> [...]: at least one kubeconfig file is needed');
  const heartbeat = process.env.SCALE_HEARTBEAT_MS ? Number(process.env.SCALE_HEARTBEAT_MS) : undefined;
  const konnectors = files.map(
    (f, i) =>
      new Konnector({
        appKubeConfig: loadKubeconfigFile(f),
        heartbeatIntervalMs: heartbeat,
        logger: createLogger(`konnector-${i}`, process.env.SCALE_KONNECTOR_LOG ?? 'warn'),
      }),
  );
  // one at a time: a start lists three resources and installs/updates the binding CRD
  for (const k of konnectors) await k.start(120_000);
  process.stdout.write(`ready ${konnectors.length}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  await Promise.all(konnectors.map((k) => k.stop().catch(() => undefined)));
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`_scale-konnectors: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
