/**
 * The layer checks of test/layers.test.ts, as functions over `{ path, text }` so that the test can
 * run them over the repository and over planted violations alike:
 *
 * - `runtimeImportsOfConstructs`: a module under runtime/ that imports (statically, by `export …
 *   from`, by dynamic `import()` or `require()`) anything under constructs/;
 * - `contractLiteralsOutside`: a string or template literal outside contract/ that spells a contract
 *   name (the binder role name, a name derived from it, the binding API groups and versions) instead
 *   of importing it from contract/.
 *
 * Sources are parsed with the TypeScript compiler, so comments and documentation never count.
 */
import { dirname, posix } from 'node:path';
import ts from 'typescript';
import { BINDER_NAME, BIND_API_VERSION, BIND_GROUP, EXAMPLE_BACKEND_API_VERSION, EXAMPLE_BACKEND_GROUP } from '../../contract/index.js';

export interface SourceFile {
  /** Path relative to the repository root, with `/` separators. */
  readonly path: string;
  readonly text: string;
}

/** A runtime module that drives the constructs on purpose, and why. */
export interface Allowed {
  /** A file path, or a folder path ending in `/`. */
  readonly path: string;
  readonly why: string;
}

const parsed = new WeakMap<SourceFile, ts.SourceFile>();
export function parse(f: SourceFile): ts.SourceFile {
  let sf = parsed.get(f);
  if (!sf) parsed.set(f, (sf = ts.createSourceFile(f.path, f.text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)));
  return sf;
}
const lineOf = (sf: ts.SourceFile, node: ts.Node): number => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;

function walk(node: ts.Node, visit: (n: ts.Node) => void): void {
  visit(node);
  ts.forEachChild(node, (c) => walk(c, visit));
}

/** One module specifier of a source and whether it brings in types only (no value, so no load at run time). */
export interface Specifier {
  readonly spec: string;
  readonly line: number;
  readonly typeOnly: boolean;
}

/** `import type …`, `export type … from`, or named imports/exports that are all `type`: erased when compiled. */
function isTypeOnly(n: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(n)) {
    if (n.isTypeOnly) return true;
    return !!n.exportClause && ts.isNamedExports(n.exportClause) && n.exportClause.elements.length > 0 && n.exportClause.elements.every((e) => e.isTypeOnly);
  }
  const clause = n.importClause;
  if (!clause) return false; // `import './x.js'` runs x
  if (clause.isTypeOnly) return true;
  const named = clause.namedBindings;
  return !clause.name && !!named && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
}

/** Every module specifier of `f`: imports, `export … from`, `import()`, `require()`, `import x = require()`. */
export function specifiers(sf: ts.SourceFile): Specifier[] {
  const out: Specifier[] = [];
  walk(sf, (n) => {
    let s: ts.Expression | undefined;
    let typeOnly = false;
    if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier) {
      s = n.moduleSpecifier;
      typeOnly = isTypeOnly(n);
    } else if (
      ts.isCallExpression(n) &&
      (n.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(n.expression) && n.expression.text === 'require'))
    )
      s = n.arguments[0];
    else if (ts.isExternalModuleReference(n)) s = n.expression;
    if (s && ts.isStringLiteralLike(s)) out.push({ spec: s.text, line: lineOf(sf, s), typeOnly });
  });
  return out;
}

const covers = (a: Allowed, path: string): boolean => (a.path.endsWith('/') ? path.startsWith(a.path) : path === a.path);

/**
 * `path:line: specifier` of every import from a runtime/ module into constructs/, except in the
 * allowed modules. `unusedAllowed` lists allowed entries that no longer import constructs/ (stale).
 */
export function runtimeImportsOfConstructs(files: readonly SourceFile[], allowed: readonly Allowed[] = []): { offenders: string[]; unusedAllowed: string[] } {
  const offenders: string[] = [];
  const used = new Set<Allowed>();
  for (const f of files) {
    if (!f.path.startsWith('runtime/') || !f.text.includes('constructs/')) continue; // no need to parse the others
    for (const { spec, line } of specifiers(parse(f))) {
      if (!spec.startsWith('.')) continue;
      const target = posix.normalize(posix.join(dirname(f.path), spec));
      if (!target.startsWith('constructs/')) continue;
      const a = allowed.find((x) => covers(x, f.path));
      if (a) used.add(a);
      else offenders.push(`${f.path}:${line}: ${spec}`);
    }
  }
  return { offenders, unusedAllowed: allowed.filter((a) => !used.has(a)).map((a) => a.path) };
}

/** The contract names no module outside contract/ may spell out; a literal equal to one, or starting with a `prefix`, counts. */
export const CONTRACT_LITERALS = {
  exact: [BINDER_NAME, BIND_GROUP, `${BIND_GROUP}/`, EXAMPLE_BACKEND_GROUP, BIND_API_VERSION, EXAMPLE_BACKEND_API_VERSION],
  prefixes: [`${BINDER_NAME}-`],
} as const;

/** `path:line: 'literal'` of every string or template literal outside contract/ that spells a contract name. */
export function contractLiteralsOutside(files: readonly SourceFile[]): string[] {
  const out: string[] = [];
  const exact = new Set<string>(CONTRACT_LITERALS.exact);
  const spells = (t: string) => exact.has(t) || CONTRACT_LITERALS.prefixes.some((p) => t.startsWith(p));
  for (const f of files) {
    if (f.path.startsWith('contract/') || !CONTRACT_LITERALS.exact.some((l) => f.text.includes(l))) continue; // no need to parse the others
    const sf = parse(f);
    walk(sf, (n) => {
      // Module specifiers are paths, not names.
      if (ts.isStringLiteral(n) && (ts.isImportDeclaration(n.parent) || ts.isExportDeclaration(n.parent))) return;
      let text: string | undefined;
      if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) text = n.text;
      else if (ts.isTemplateHead(n)) text = n.text;
      if (text !== undefined && spells(text)) out.push(`${f.path}:${lineOf(sf, n)}: ${JSON.stringify(text)}`);
    });
  }
  return out;
}
