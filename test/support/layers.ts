/**
 * The layer checks of test/layers.test.ts, as functions over `{ path, text }` so that the test can
 * run them over the repository and over planted violations alike:
 *
 * - `runtimeImportsOfConstructs`: a module under runtime/ that imports (statically, by `export …
 *   from`, by dynamic `import()` or `require()`) anything under constructs/;
 * - `contractLiteralsOutside`: a string or template literal outside contract/ that spells a contract
 *   name (every name the contract exports: the binder role and the names derived from it, the binding
 *   API groups and versions, kinds, plurals, label and annotation keys, condition types, the
 *   konnector's namespace) instead of importing it from contract/; and a key under the binding's
 *   groups (`klutch.anynines.com/…`) that one module owns, spelled a second time.
 *
 * Sources are parsed with the TypeScript compiler, so comments and documentation never count.
 */
import { dirname, posix } from 'node:path';
import ts from 'typescript';
import * as contract from '../../contract/index.js';
import { BINDER_NAME, BIND_GROUP, BIND_VERSION } from '../../contract/index.js';

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

/**
 * Contract values that are also plain Kubernetes or Crossplane words, with another meaning outside the
 * binding (a CRD's `Established`, a Pod's `Pending`, a kubeconfig's `cluster`): a literal equal to one
 * does not count. Everything else the contract exports as a name is reported when spelled out.
 */
export const GENERIC_WORDS: ReadonlySet<string> = new Set([
  'cluster', // CLUSTER_BINDING_NAME; also a kubeconfig's clusters, a Topology
  'credential', // CREDENTIAL_SECRET
  'kubeconfig', // KUBECONFIG_SECRET_KEY; the key of every kubeconfig Secret
  BIND_VERSION, // v1alpha1, the version of many APIs
  'Namespaced', // a CRD's scope
  'Ready', // the summary condition of every kind, Kubernetes' and Crossplane's too
  'Established', // a CRD's conditions
  'NamesAccepted',
  'Healthy', // also a Crossplane package's condition
  'Pending', // ExportRequestPhase; also a Pod's phases
  'Failed',
  'Succeeded',
]);

/** A name-like string: no spaces, patterns or prose (the contract also exports CEL rules and messages). */
const NAME = /^[A-Za-z][A-Za-z0-9./-]*$/;

/**
 * The names the contract exports (string constants, and the string fields of its exported objects:
 * kinds, plurals, CRD names, condition types), except {@link GENERIC_WORDS} and the kinds' singular
 * names (`clusterbinding` also names the backend's controller of them).
 */
export function contractNames(): Map<string, string> {
  const names = new Map<string, string>();
  const add = (value: unknown, name: string) => {
    if (typeof value === 'string' && NAME.test(value) && !GENERIC_WORDS.has(value) && !names.has(value)) names.set(value, name);
  };
  for (const [k, v] of Object.entries(contract)) {
    add(v, k);
    if (v && typeof v === 'object' && !Array.isArray(v)) for (const [k2, v2] of Object.entries(v)) if (k2 !== 'singular') add(v2, `${k}.${k2}`);
  }
  return names;
}

/** The contract names no module outside contract/ may spell out; a literal equal to one, or starting with a `prefix`, counts. */
export const CONTRACT_LITERALS = {
  exact: [...contractNames().keys(), `${BIND_GROUP}/`],
  prefixes: [`${BINDER_NAME}-`],
} as const;

/** A label, annotation or finalizer key under one of the binding's groups (`klutch.anynines.com/…`, `example-backend.klutch.anynines.com/…`). */
const GROUP_KEY = /^([a-z0-9-]+\.)*klutch\.anynines\.com\/[A-Za-z0-9._-]+$/;

/**
 * Each string or template literal (and template head) of `f` with its line, except module specifiers
 * (paths, not names) and a condition's `reason` (free text of the writer, which may repeat a condition type).
 */
function literals(f: SourceFile): Array<{ text: string; line: number }> {
  const sf = parse(f);
  const out: Array<{ text: string; line: number }> = [];
  walk(sf, (n) => {
    if (ts.isStringLiteral(n) && (ts.isImportDeclaration(n.parent) || ts.isExportDeclaration(n.parent))) return;
    if (n.parent && ts.isPropertyAssignment(n.parent) && n.parent.initializer === n && ts.isIdentifier(n.parent.name) && n.parent.name.text === 'reason')
      return;
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateHead(n)) out.push({ text: n.text, line: lineOf(sf, n) });
  });
  return out;
}

/**
 * `path:line: 'literal'` of every string or template literal outside contract/ that spells a contract
 * name, and of every second and further spelling of one key under the binding's groups (a label,
 * annotation or finalizer one module owns is declared once, as a constant, and imported).
 */
export function contractLiteralsOutside(files: readonly SourceFile[]): string[] {
  const out: string[] = [];
  const exact = new Set<string>(CONTRACT_LITERALS.exact);
  const spells = (t: string) => exact.has(t) || CONTRACT_LITERALS.prefixes.some((p) => t.startsWith(p));
  const keys = new Map<string, string>(); // group key → where it is declared
  for (const f of files) {
    if (f.path.startsWith('contract/')) continue;
    for (const { text, line } of literals(f)) {
      if (spells(text)) out.push(`${f.path}:${line}: ${JSON.stringify(text)}`);
      else if (GROUP_KEY.test(text)) {
        const first = keys.get(text);
        if (first) out.push(`${f.path}:${line}: ${JSON.stringify(text)} (declared at ${first})`);
        else keys.set(text, `${f.path}:${line}`);
      }
    }
  }
  return out;
}
