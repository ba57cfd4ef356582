/**
 * No import circle in the product folders (issue 35): a module never loads, through any chain of
 * imports, a module that loads it back. A circle makes the load order depend on which file is
 * imported first (a `const` read before it is set, a class `undefined` at `extends`), and it hides
 * which file is the lower layer. The graph is that of test/support/import-graph.ts: static imports,
 * `export … from`, dynamic `import()` and `require()`; type-only imports are left out, since the
 * compiler erases them. A failure lists each circle's arrows as `file:line -> file`: cut one.
 */
import { describe, expect, it } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import { circlesUnder, importCircles, importEdges, readSources } from '../support/import-graph.js';
import type { SourceFile } from '../support/layers.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const PRODUCT = readSources(repo, ['constructs', 'contract', 'runtime', 'stacks', 'sandbox']);
const CIRCLES = importCircles(PRODUCT);

describe('no import circle in the product folders', () => {
  it('sees the product sources and their imports', () => {
    expect(PRODUCT.length).toBeGreaterThan(250);
    expect(importEdges(PRODUCT)).toContainEqual(expect.objectContaining({ from: 'runtime/konnector/main.ts', to: 'runtime/konnector/konnector.ts' }));
  });

  it.each(['constructs/', 'runtime/', 'stacks/', 'contract/', 'sandbox/'])('%s', (folder) => {
    expect(circlesUnder(CIRCLES, folder)).toEqual([]);
  });
});

describe('the checker finds planted circles', () => {
  const file = (path: string, text: string): SourceFile => ({ path, text });

  it('a static two-file circle, with the lines of its arrows', () => {
    const circles = importCircles([
      file('a/x.ts', "import { y } from './y.js';\nexport const x = y;\n"),
      file('a/y.ts', "export { x } from './x.js';\nexport const y = 1;\n"),
    ]);
    expect(circles).toEqual([{ files: ['a/x.ts', 'a/y.ts'], arrows: ['a/x.ts:1 -> a/y.ts', 'a/y.ts:1 -> a/x.ts'] }]);
  });

  it('a circle hidden behind `await import()`, across folders', () => {
    const circles = importCircles([
      file('a/x.ts', "import { z } from '../b/z.js';\nexport const x = z;\n"),
      file('b/z.ts', "export const z = 1;\nexport async function f() {\n  return (await import('../a/x.js')).x;\n}\n"),
      file('b/apart.ts', "import { z } from './z.js';\nexport const w = z;\n"),
    ]);
    expect(circles.map((c) => c.files)).toEqual([['a/x.ts', 'b/z.ts']]);
    expect(circlesUnder(circles, 'b/').map((c) => c.arrows)).toEqual([['a/x.ts:1 -> b/z.ts', 'b/z.ts:3 -> a/x.ts']]);
    expect(circlesUnder(circles, 'c/')).toEqual([]);
  });

  it('a longer circle is one circle; a file importing itself is one too', () => {
    const circles = importCircles([
      file('p.ts', "import './q.js';\n"),
      file('q.ts', "import { r } from './r.js';\nexport const q = r;\n"),
      file('r.ts', "import * as p from './p.js';\nexport const r = p;\n"),
      file('s.ts', "import { s as t } from './s.js';\nexport const s = 1;\nexport const u = t;\n"),
    ]);
    expect(circles.map((c) => c.files)).toEqual([['p.ts', 'q.ts', 'r.ts'], ['s.ts']]);
  });

  it('type-only imports are no arrows', () => {
    const circles = importCircles([
      file('x.ts', "import type { Y } from './y.js';\nimport { type Z } from './y.js';\nexport interface X { y: Y; z: Z }\n"),
      file('y.ts', "import { type X } from './x.js';\nexport type { X } from './x.js';\nexport interface Y { x: X }\nexport type Z = 1;\n"),
    ]);
    expect(circles).toEqual([]);
  });
});
