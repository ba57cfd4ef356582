/**
 * Every construct and contract file opens with a comment that says what it is for (CONTRIBUTING,
 * Conventions): a reader (and the generated API reference) learns a file's purpose before its first
 * import. The check is shown to fail on planted files without one.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Why `text` has no header comment, or undefined: it must open with a `/** … *\/` block or `//` lines of at least 20 characters of words. */
export function missingHeader(text: string): string | undefined {
  const t = text.replace(/^#!.*\n/, '');
  const block = /^\/\*\*?([\s\S]*?)\*\//.exec(t);
  const lines = /^(\/\/.*\n)+/.exec(t);
  const comment = block ? block[1] : lines ? lines[0].replace(/^\/\/ ?/gm, '') : undefined;
  if (comment === undefined) return 'opens with code, not a comment';
  const words = comment
    .replace(/^\s*\*/gm, '')
    .replace(/\s+/g, ' ')
    .trim();
  if (/^eslint|^@ts-|^prettier/.test(words)) return 'opens with a tool directive, not a comment on the file';
  if (words.length < 20) return `its opening comment is too short to say what the file is for: "${words}"`;
  return undefined;
}

describe('header comments', () => {
  const files = ['constructs', 'contract'].flatMap((d) => sources(join(repo, d)));

  it('sees the construct and contract files', () => {
    expect(files.length).toBeGreaterThan(120);
  });

  it('every construct and contract file opens with a comment saying what it is for', () => {
    const missing = files.flatMap((p) => {
      const why = missingHeader(readFileSync(p, 'utf8'));
      return why ? [`${relative(repo, p).split(sep).join('/')}: ${why}`] : [];
    });
    expect(missing).toEqual([]);
  });

  it('fails on a file without one', () => {
    expect(missingHeader("import { x } from './x.js';\nexport const y = x;\n")).toBe('opens with code, not a comment');
    expect(missingHeader('/** A. */\nexport const a = 1;\n')).toMatch(/too short/);
    expect(missingHeader('// eslint-disable-next-line no-console\nconsole.log(1);\n')).toMatch(/tool directive/);
    expect(missingHeader('/**\n * The one registry of the library: how a construct tells its cluster what it adds.\n */\nexport {};\n')).toBeUndefined();
    expect(missingHeader('// The wire messages and their Go-compatible encoding.\nexport {};\n')).toBeUndefined();
  });
});
