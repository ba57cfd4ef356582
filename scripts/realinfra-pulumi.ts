// npm run realinfra:pulumi: builds (or finds in the cache) the Pulumi CLI, klutch-kit's Node.js language host and
// pulumi-resource-kubernetes from the Go wrapper modules in tools/pulumi/. Progress on stderr, paths on stdout.
import { PULUMI_COMPONENTS, ensurePulumiBinaries, isPulumiCached, planPulumiComponent } from '../runtime/realinfra/pulumi-build.js';

const started = Date.now();
const log = (line: string) => process.stderr.write(`[realinfra:pulumi +${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);
try {
  for (const c of PULUMI_COMPONENTS) {
    const plan = planPulumiComponent(c);
    log(`${c}: ${isPulumiCached(plan) ? 'cached' : 'not cached'} (${plan.dir})`);
  }
  const bins = await ensurePulumiBinaries({ log });
  log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.stdout.write(`${JSON.stringify(bins, null, 2)}\n`);
} catch (e) {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}
