/**
 * startCrossplane(): real Crossplane on a harness cluster, the one place that picks how it runs. Each way is a
 * strategy of one interface (CrossplaneStrategy, crossplane-harness.ts): processes (crossplane.ts) or pods
 * (crossplane-pods.ts); callers hold the CrossplaneHarness it returns and import neither way.
 */
import { CROSSPLANE_VERSIONS } from './build.js';
import type { RealCluster } from './cluster.js';
import { type CrossplaneHarness, type CrossplaneOptions, type CrossplaneRuntime, type CrossplaneStrategy } from './crossplane-harness.js';
import { crossplaneAsPods } from './crossplane-pods.js';

/** The registry address of a pods harness, known before it starts (for pushes that run while it starts). */
export { podsRegistry } from './crossplane-pods.js';
import { crossplaneAsProcesses } from './crossplane.js';
import { killAtExit } from './_harness.js';

/** The ways Crossplane runs, by CrossplaneOptions.runtime. */
const STRATEGIES: Readonly<Record<CrossplaneRuntime, CrossplaneStrategy>> = { processes: crossplaneAsProcesses, pods: crossplaneAsPods };

/**
 * Starts Crossplane (and its registry, function and provider) on a running harness cluster, as processes or, with
 * `runtime: 'pods'`, as pods on the cluster's node; resolves when everything is ready (with `install`, when the
 * Function, Provider and ProviderConfig are healthy). On failure everything started is stopped and the error names
 * the component.
 */
export async function startCrossplane(cluster: RealCluster, opts: CrossplaneOptions): Promise<CrossplaneHarness> {
  if (!opts || !CROSSPLANE_VERSIONS.includes(opts.version)) {
    throw new Error(`startCrossplane: version ${JSON.stringify(opts?.version)} must be one of ${CROSSPLANE_VERSIONS.map((v) => `"${v}"`).join(', ')}`);
  }
  const runtime = opts.runtime ?? 'processes';
  if (!Object.hasOwn(STRATEGIES, runtime)) {
    throw new Error(
      `startCrossplane: runtime ${JSON.stringify(opts.runtime)} must be ${Object.keys(STRATEGIES)
        .map((r) => `"${r}"`)
        .join(' or ')}`,
    );
  }
  if (opts.beforeCore !== undefined && (typeof opts.beforeCore !== 'function' || runtime === 'pods')) {
    throw new Error(
      `startCrossplane: beforeCore ${typeof opts.beforeCore === 'function' ? 'is only for runtime "processes"; with "pods" the registry is podsRegistry(cluster) before the start: push there first' : `must be a function, got ${typeof opts.beforeCore}`}`,
    );
  }
  const harness = await STRATEGIES[runtime].prepare(cluster, opts);
  killAtExit(harness);
  try {
    await harness.start();
    return harness;
  } catch (e) {
    await harness.stop();
    throw e;
  }
}
