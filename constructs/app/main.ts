/**
 * `npm run synth` / `cdk8s synth`: writes the example topology to `dist/<cluster>/…`
 * (or `$CDK8S_OUTDIR`), validated with `klutch-kit validate` before it replaces the old output.
 */
import { App } from 'cdk8s';
import { EXAMPLE_FLUX, exampleTopology } from './example.js';
import { synthTopology } from '../topology/index.js';
import { formatIssue, validateDirectory } from '../validate/index.js';

async function main(): Promise<void> {
  const app = new App();
  exampleTopology(app);
  const started = Date.now();
  const result = await synthTopology(app, {
    outdir: process.env.CDK8S_OUTDIR ?? 'dist',
    flux: EXAMPLE_FLUX,
    validate: (dir) => {
      const r = validateDirectory(dir);
      return { ok: r.ok, problems: r.issues.map(formatIssue) };
    },
  });
  for (const c of result.clusters) console.log(`${c.name} (${c.role}): ${c.objects} objects`);
  console.log(`wrote ${result.objects} objects to ${result.outdir} in ${Date.now() - started} ms (validated)`);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
