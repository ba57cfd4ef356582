/**
 * The files README.md shows for a new project ("Start a project"): each fenced block preceded by
 * `<!-- init: [esm|cjs|pulumi] <file> -->` (a marker without a layout holds for both cdk8s layouts, esm and cjs; other markers such
 * as `<!-- snippet: typecheck -->` may stand between it and the block). Read by test/runtime/cli/init.test.ts
 * and scripts/test-package.ts, which compare them with what `klutch-kit init` writes.
 */
import type { InitLayout } from '../runtime/cli/init.js';

const MARKER = /^<!-- init: (?:(esm|cjs|pulumi) )?(\S+) -->$/;

/** The README's files of a layout: file name → content. Throws naming the line of a malformed block. */
export function readmeInitFiles(markdown: string, layout: InitLayout): Map<string, string> {
  const lines = markdown.split('\n');
  const files = new Map<string, string>();
  for (let i = 0; i < lines.length; i++) {
    const m = MARKER.exec(lines[i]!.trim());
    if (!m) continue;
    let open = i + 1;
    while (open < lines.length && (lines[open]!.trim() === '' || /^<!-- .* -->$/.test(lines[open]!.trim()))) open++;
    if (!/^```\w*$/.test(lines[open]?.trim() ?? '')) throw new Error(`README.md:${i + 1}: "${lines[i]}" is not followed by a fenced block`);
    const close = lines.findIndex((l, j) => j > open && l.trim() === '```');
    if (close < 0) throw new Error(`README.md:${open + 1}: the block of "${lines[i]}" does not end`);
    if (m[1] === layout || (m[1] === undefined && layout !== 'pulumi')) {
      if (files.has(m[2]!)) throw new Error(`README.md:${i + 1}: a second block for ${layout} ${m[2]}`);
      files.set(m[2]!, lines.slice(open + 1, close).join('\n') + '\n');
    }
    i = close;
  }
  return files;
}
