/**
 * The import graph of the product sources, for test/house/import-circles.test.ts: which file loads
 * which, and the circles in it (strongly connected components of more than one file, or a file
 * that imports itself).
 *
 * An arrow is a relative import that loads a module at run time: a static `import`, `export … from`,
 * a dynamic `import()` (a circle hidden behind `await import()` is still a circle) and `require()`.
 * Type-only imports (`import type`, `export type … from`, named imports that are all `type`) are
 * left out: the compiler erases them, so they load nothing and cannot take part in a load-order
 * problem. Specifiers name `.js` files (NodeNext); the arrow goes to the `.ts` source beside it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';
import { parse, specifiers, type SourceFile } from './layers.js';

/** Every `.ts` source (not `.d.ts`) under the given folders of `root`, paths relative to it with `/`. */
export function readSources(root: string, dirs: readonly string[]): SourceFile[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const p = join(dir, e.name);
      if (e.isDirectory()) return walk(p);
      return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
    });
  return dirs.flatMap((d) => walk(join(root, d))).map((p) => ({ path: relative(root, p).split(sep).join('/'), text: readFileSync(p, 'utf8') }));
}

/** One arrow: `from` loads `to`; `line` is the line of the specifier in `from`. */
export interface ImportEdge {
  readonly from: string;
  readonly to: string;
  readonly line: number;
}

/** The run-time arrows between the given files (imports of files outside the set are dropped). */
export function importEdges(files: readonly SourceFile[]): ImportEdge[] {
  const known = new Set(files.map((f) => f.path));
  const edges: ImportEdge[] = [];
  for (const f of files) {
    for (const { spec, line, typeOnly } of specifiers(parse(f))) {
      if (typeOnly || !spec.startsWith('.')) continue;
      const target = posix.normalize(posix.join(dirname(f.path), spec)).replace(/\.js$/, '.ts');
      if (known.has(target)) edges.push({ from: f.path, to: target, line });
    }
  }
  return edges;
}

/** A circle: its files (sorted) and its arrows as `from:line -> to`. */
export interface ImportCircle {
  readonly files: string[];
  readonly arrows: string[];
}

/** Every circle of the graph (Tarjan's strongly connected components), in the order of their first file. */
export function importCircles(files: readonly SourceFile[]): ImportCircle[] {
  const edges = importEdges(files);
  const out = new Map<string, ImportEdge[]>();
  for (const e of edges) out.set(e.from, [...(out.get(e.from) ?? []), e]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const { to } of out.get(v) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(v, Math.min(low.get(v)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(v, Math.min(low.get(v)!, index.get(to)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    components.push(component);
  };
  for (const f of files) if (!index.has(f.path)) visit(f.path);
  return components
    .filter((c) => c.length > 1 || (out.get(c[0]) ?? []).some((e) => e.to === c[0]))
    .map((c) => {
      const inside = new Set(c);
      return {
        files: [...c].sort(),
        arrows: edges.filter((e) => inside.has(e.from) && inside.has(e.to)).map((e) => `${e.from}:${e.line} -> ${e.to}`),
      };
    })
    .sort((a, b) => a.files[0].localeCompare(b.files[0]));
}

/** The circles with at least one file under `folder` (a path ending in `/`). */
export const circlesUnder = (circles: readonly ImportCircle[], folder: string): ImportCircle[] =>
  circles.filter((c) => c.files.some((f) => f.startsWith(folder)));
