/**
 * Crossplane as processes (runtime/realinfra/crossplane.ts) and as pods (crossplane-pods.ts) are two strategies of one
 * interface, picked in one place: crossplane-start.ts. Apart from it and the published barrel (index.ts), no product
 * file imports either way, not even for a type: callers hold the CrossplaneHarness of crossplane-harness.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { dirname, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readSources } from '../support/import-graph.js';
import { parse, type SourceFile, specifiers } from '../support/layers.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const WAYS = ['runtime/realinfra/crossplane.ts', 'runtime/realinfra/crossplane-pods.ts'];
const ALLOWED = ['runtime/realinfra/crossplane-start.ts', 'runtime/realinfra/index.ts'];

/** `file:line -> way` for every import (type-only ones too) of one of `ways` by a file not in `allowed`. */
function importsOfWays(files: readonly SourceFile[], ways: readonly string[], allowed: readonly string[]): string[] {
  const out: string[] = [];
  for (const f of files) {
    if (allowed.includes(f.path) || ways.includes(f.path)) continue;
    for (const { spec, line } of specifiers(parse(f))) {
      if (!spec.startsWith('.')) continue;
      const target = posix.normalize(posix.join(dirname(f.path), spec)).replace(/\.js$/, '.ts');
      if (ways.includes(target)) out.push(`${f.path}:${line} -> ${target}`);
    }
  }
  return out;
}

describe('the Crossplane ways are picked in one place', () => {
  const product = readSources(repo, ['constructs', 'contract', 'runtime', 'stacks', 'sandbox', 'scripts']);

  it('sees both ways, and the chooser importing them', () => {
    expect(product.map((f) => f.path)).toEqual(expect.arrayContaining([...WAYS, ...ALLOWED]));
    expect(importsOfWays(product, WAYS, [])).toEqual(expect.arrayContaining([expect.stringMatching(/^runtime\/realinfra\/crossplane-start\.ts:\d+ -> /)]));
  });

  it('no other product file imports crossplane.ts or crossplane-pods.ts', () => {
    expect(importsOfWays(product, WAYS, ALLOWED)).toEqual([]);
  });

  it('names a planted import, a type-only one too', () => {
    const planted = [
      { path: 'runtime/realinfra/cluster.ts', text: "import { x } from './crossplane.js';\n" },
      { path: 'sandbox/s.ts', text: "\nimport type { y } from '../runtime/realinfra/crossplane-pods.js';\n" },
      { path: 'runtime/realinfra/crossplane-start.ts', text: "import { z } from './crossplane.js';\n" },
    ];
    expect(importsOfWays(planted, WAYS, ALLOWED)).toEqual([
      'runtime/realinfra/cluster.ts:1 -> runtime/realinfra/crossplane.ts',
      'sandbox/s.ts:2 -> runtime/realinfra/crossplane-pods.ts',
    ]);
  });
});
