/**
 * The TypeScript blocks of README.md and docs/*.md that claim to be whole programs are type-checked
 * against this repository's sources, as a user's project would compile them: a block preceded by
 * `<!-- snippet: typecheck -->` is compiled as an ES module (`module: NodeNext`, `"type": "module"`)
 * and as CommonJS (the `cdk8s init typescript-app` layout), with `klutch-kit/<subpath>` resolved to the
 * source file its package.json `exports` entry is built from. A block that imports from klutch-kit must
 * carry the marker, so a new one cannot skip the check; a snippet that stops compiling fails here.
 * `<!-- snippet: typecheck-cjs -->` marks a CommonJS-only program (the `export =` of a Pulumi program,
 * `klutch-kit init --pulumi`'s index.ts), compiled as CommonJS only.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const ROOT = process.cwd();
const MARKER = '<!-- snippet: typecheck -->';
const MARKER_CJS = '<!-- snippet: typecheck-cjs -->';
const FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

interface Snippet {
  readonly file: string;
  /** Line of the opening fence (1-based). */
  readonly line: number;
  readonly code: string;
  readonly marked: boolean;
  /** Marked CommonJS only. */
  readonly cjsOnly: boolean;
}

/** The ```ts blocks of a Markdown file. */
function tsBlocks(file: string, text: string): Snippet[] {
  const lines = text.split('\n');
  const out: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```ts') continue;
    const end = lines.findIndex((l, j) => j > i && l.trim() === '```');
    if (end < 0) throw new Error(`${file}:${i + 1}: a \`\`\`ts block that does not end`);
    let prev = i - 1;
    while (prev >= 0 && lines[prev].trim() === '') prev--;
    const marker = prev >= 0 ? lines[prev].trim() : '';
    out.push({
      file,
      line: i + 1,
      code: lines.slice(i + 1, end).join('\n') + '\n',
      marked: marker === MARKER || marker === MARKER_CJS,
      cjsOnly: marker === MARKER_CJS,
    });
    i = end;
  }
  return out;
}

/** `klutch-kit/<subpath>` → the source file of its `exports` entry (lib/<path>.js ← <path>.ts). */
function packagePaths(): Record<string, string[]> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, { default?: string } | string> };
  const paths: Record<string, string[]> = {};
  for (const [key, v] of Object.entries(pkg.exports)) {
    const target = typeof v === 'string' ? v : v.default;
    if (!target?.startsWith('./lib/') || !target.endsWith('.js')) continue;
    paths[key === '.' ? 'klutch-kit' : `klutch-kit/${key.slice(2)}`] = [join(ROOT, target.slice('./lib/'.length, -'.js'.length) + '.ts')];
  }
  return paths;
}

/** Type errors of the snippets (keyed by their virtual file name) compiled with `options`. */
function typeErrors(snippets: ReadonlyMap<string, string>, options: ts.CompilerOptions): Map<string, string[]> {
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (f) => snippets.has(f) || fileExists.call(host, f);
  host.readFile = (f) => snippets.get(f) ?? readFile.call(host, f);
  host.getSourceFile = (f, lang, ...rest) => {
    const code = snippets.get(f);
    return code !== undefined ? ts.createSourceFile(f, code, lang) : getSourceFile.call(host, f, lang, ...rest);
  };
  const program = ts.createProgram([...snippets.keys()], options, host);
  const errors = new Map<string, string[]>();
  for (const f of snippets.keys()) {
    const sf = program.getSourceFile(f)!;
    const diags = [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)];
    errors.set(
      f,
      diags.map((d) => {
        const { line } = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : { line: -1 };
        return `line ${line + 1}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      }),
    );
  }
  return errors;
}

const all = FILES.flatMap((f) => tsBlocks(f, readFileSync(join(ROOT, f), 'utf8')));
const marked = all.filter((s) => s.marked);
/** A virtual file under the repository (its package.json says "type": "module"). */
const virtual = (s: Snippet) => join(ROOT, 'test', 'docs', '__snippets__', `${s.file.replace(/[/.]/g, '_')}_${s.line}.ts`);

describe('documented TypeScript snippets', () => {
  it('the runnable blocks are marked: README (a data service) and docs/topology.md (a topology) at least', () => {
    expect(marked.map((s) => s.file)).toEqual(expect.arrayContaining(['README.md', 'docs/topology.md']));
  });

  it('every block that imports klutch-kit is marked, so it is checked', () => {
    const unmarked = all.filter((s) => !s.marked && /from 'klutch-kit(\/[\w-]+)?'/.test(s.code)).map((s) => `${s.file}:${s.line}`);
    expect(unmarked).toEqual([]);
  });

  it('no runnable block imports a repository path (users import klutch-kit/<subpath>)', () => {
    expect(marked.filter((s) => /from '\.{1,2}\//.test(s.code)).map((s) => `${s.file}:${s.line}`)).toEqual([]);
  });

  const base: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts'],
    strict: true,
    skipLibCheck: true,
    esModuleInterop: true,
    resolveJsonModule: true,
    noEmit: true,
    types: ['node'],
    paths: packagePaths(),
  };
  const name = new Map(marked.map((s) => [virtual(s), `${s.file}:${s.line}`]));

  it.each([
    ['an ES module (NodeNext)', false, { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext }],
    ['CommonJS (cdk8s init, Pulumi)', true, { module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10 }],
  ])('type-check as %s', (_, cjs, mode) => {
    const snippets = new Map(marked.filter((s) => cjs || !s.cjsOnly).map((s) => [virtual(s), s.code]));
    const errors = typeErrors(snippets, { ...base, ...mode });
    const report = Object.fromEntries([...errors].filter(([, e]) => e.length > 0).map(([f, e]) => [name.get(f), e]));
    expect(report).toEqual({});
  });

  it('finds a type error (the check can fail)', () => {
    const f = join(ROOT, 'test', 'docs', '__snippets__', 'broken.ts');
    const errors = typeErrors(new Map([[f, "import { synthTopology } from 'klutch-kit/topology';\nconst n: number = synthTopology;\n"]]), {
      ...base,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
    });
    expect(errors.get(f)).toEqual([expect.stringMatching(/^line 2: TS2322 /)]);
  });

  it("CONTRIBUTING.md's docs/ row names every page of docs/ (a count that cannot drift)", () => {
    const row = readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8')
      .split('\n')
      .find((l) => l.startsWith('| `docs/` |'))!;
    const listed = /one page per part \(([^;)]*)/.exec(row)![1].split(', ');
    expect(listed).toEqual(FILES.filter((f) => f.startsWith('docs/')).map((f) => f.slice('docs/'.length, -'.md'.length)));
  });
});
