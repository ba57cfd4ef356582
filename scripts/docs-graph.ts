/**
 * Draws the example topology into the docs: docs/images/topology.svg and the Mermaid block of
 * docs/topology.md (README.md shows the SVG).
 *
 *   npm run docs:graph            # write the files
 *   npm run docs:graph -- --check # exit 1 naming each file that is not current
 *
 * A unit test (test/topology/graph.test.ts) runs the same check, so CI fails on a stale picture.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { docsGraphFiles, staleDocsGraphFiles } from '../runtime/cli/graph.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

async function main(): Promise<void> {
  if (process.argv.includes('--check')) {
    const stale = await staleDocsGraphFiles(root);
    if (stale.length) {
      console.error(`docs:graph --check: not current: ${stale.join(', ')}; run npm run docs:graph and commit`);
      process.exit(1);
    }
    console.log('docs:graph --check: the topology picture is current');
    return;
  }
  for (const [f, text] of await docsGraphFiles(root)) {
    mkdirSync(dirname(join(root, f)), { recursive: true });
    writeFileSync(join(root, f), text);
    console.log(`docs:graph: wrote ${f}`);
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
});
