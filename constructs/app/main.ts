/**
 * `npm run synth` / `cdk8s synth`: writes the example topology to `dist/<cluster>/…`
 * (or `$CDK8S_OUTDIR`), validated with `klutch-kit validate` before it replaces the old output.
 * `npm run synth -- --graph` also draws it: `dist/topology.mmd` (Mermaid) and `dist/topology.svg`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { EXAMPLE_ARGOCD, EXAMPLE_FLUX, exampleTopology } from './example.js';
import { synthTopology, toMermaid, topologyGraphOfApp, toSvg } from '../topology/index.js';

async function main(): Promise<void> {
  const app = new App();
  exampleTopology(app);
  const started = Date.now();
  const result = await synthTopology(app, {
    outdir: process.env.CDK8S_OUTDIR ?? 'dist',
    flux: EXAMPLE_FLUX,
    // and an Argo CD app-of-apps per cluster (dist/<cluster>/_argocd/root.yaml), validated with the rest
    // (synthTopology runs directoryValidator() of constructs/validate by default: what `klutch-kit validate` checks)
    argocd: EXAMPLE_ARGOCD,
  });
  for (const c of result.clusters) console.log(`${c.name} (${c.role}): ${c.objects} objects`);
  console.log(`wrote ${result.objects} objects to ${result.outdir} in ${Date.now() - started} ms (validated)`);
  if (process.argv.includes('--graph')) {
    const g = topologyGraphOfApp(app);
    writeFileSync(join(result.outdir, 'topology.mmd'), toMermaid(g));
    writeFileSync(join(result.outdir, 'topology.svg'), await toSvg(g));
    console.log(`drew ${join(result.outdir, 'topology.svg')} and topology.mmd`);
  }
}

main().catch((e: unknown) => {
  // One clear message; the stack trace only with --verbose (`npm run synth -- --verbose`).
  console.error(process.argv.includes('--verbose') && e instanceof Error ? e.stack : e instanceof Error ? e.message : e);
  process.exit(1);
});
