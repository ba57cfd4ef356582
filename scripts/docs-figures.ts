/**
 * Writes the figures of docs/figures.json into every mark of README.md and docs/*.md
 * (`<!-- figure:name -->value<!-- /figure -->`, scripts/_doc-figures.ts).
 *
 *   npm run docs:figures            # rewrite the marks from docs/figures.json
 *   npm run docs:figures -- --check # exit 1 naming each mark that differs or is wrong
 *
 * A new measurement goes into docs/figures.json (value, date, machine, load, command), then this command;
 * test/docs/figures.test.ts runs the same check, so CI fails on a figure the docs quote differently.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { docFiles, figureEntryProblems, loadFigures, markProblems, renderMarks } from './_doc-figures.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const files = docFiles(root);
const figures = loadFigures(root);
const entries = figureEntryProblems(
  figures,
  files.filter((f) => f.startsWith('docs/')),
);
if (entries.length > 0) {
  console.error(`docs:figures: docs/figures.json is not usable:\n  ${entries.join('\n  ')}`);
  process.exit(1);
}
if (process.argv.includes('--check')) {
  const problems = markProblems(new Map(files.map((f) => [f, readFileSync(join(root, f), 'utf8')])), figures);
  if (problems.length > 0) {
    console.error(`docs:figures --check: ${problems.length} problem(s):\n  ${problems.join('\n  ')}`);
    process.exit(1);
  }
  console.log(`docs:figures --check: ${Object.keys(figures).length} figures, every mark current`);
} else {
  for (const f of files) {
    const text = readFileSync(join(root, f), 'utf8');
    const next = renderMarks(text, figures);
    if (next !== text) {
      writeFileSync(join(root, f), next);
      console.log(`docs:figures: wrote ${f}`);
    }
  }
  const left = markProblems(new Map(files.map((f) => [f, readFileSync(join(root, f), 'utf8')])), figures);
  if (left.length > 0) {
    console.error(`docs:figures: left to fix by hand:\n  ${left.join('\n  ')}`);
    process.exit(1);
  }
}
