/**
 * The length of every function of a source, for test/house/function-length.test.ts: function
 * declarations and expressions, arrow functions, methods, constructors and accessors with a body,
 * from the line of their first token to the line of their last (comments and blank lines inside
 * count; a nested function counts in its own right and inside the one around it).
 */
import ts from 'typescript';
import { parse, type SourceFile } from './layers.js';

/** One function: `path:line name` and its length in lines. */
export interface FunctionLength {
  /** `path#name`, the key of an exception (`Class.method`, `Class.constructor`, or `<anonymous>@line`). */
  readonly id: string;
  readonly line: number;
  readonly lines: number;
}

function nameOf(n: ts.FunctionLikeDeclaration, sf: ts.SourceFile): string {
  const cls = (c: ts.Node | undefined) => (c && (ts.isClassDeclaration(c) || ts.isClassExpression(c)) && c.name ? `${c.name.text}.` : '');
  if (ts.isConstructorDeclaration(n)) return `${cls(n.parent)}constructor`;
  if (n.name && (ts.isIdentifier(n.name) || ts.isPrivateIdentifier(n.name) || ts.isStringLiteral(n.name))) return `${cls(n.parent)}${n.name.text}`;
  const p = n.parent;
  if (ts.isVariableDeclaration(p) && ts.isIdentifier(p.name)) return p.name.text;
  if ((ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) && ts.isIdentifier(p.name)) return `${cls(p.parent)}${p.name.text}`;
  return `<anonymous>@${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}`;
}

/** Every function of the files that is longer than `max` lines. */
export function functionsLongerThan(files: readonly SourceFile[], max: number): FunctionLength[] {
  const out: FunctionLength[] = [];
  for (const f of files) {
    const sf = parse(f);
    const visit = (n: ts.Node): void => {
      if (ts.isFunctionLike(n) && 'body' in n && n.body) {
        const fn = n as ts.FunctionLikeDeclaration;
        const first = sf.getLineAndCharacterOfPosition(fn.getStart(sf)).line;
        const last = sf.getLineAndCharacterOfPosition(fn.getEnd()).line;
        if (last - first + 1 > max) out.push({ id: `${f.path}#${nameOf(fn, sf)}`, line: first + 1, lines: last - first + 1 });
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return out;
}
