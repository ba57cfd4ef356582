/**
 * Every `KLUTCH_*` environment variable the repository's programs, scripts and tests read is listed once, in
 * CONTRIBUTING.md's "Environment variables" table, and every row there is read somewhere: a new variable cannot
 * stay undocumented, a removed one cannot stay listed.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = process.cwd();
const SELF = 'test/docs/env-vars.test.ts';
const DIRS = ['bin', 'cjs', 'constructs', 'contract', 'examples', 'runtime', 'sandbox', 'scripts', 'stacks', 'test', '.ci'];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (f === 'node_modules') return [];
    if (statSync(p).isDirectory()) return files(p);
    return /\.(ts|mts|js|mjs|cjs|sh)$/.test(f) || dir.endsWith('.ci') ? [p] : [];
  });
}

/** The `KLUTCH_*` variables a source text reads: `process.env.X`, `env['X']`, `FOO_ENV = 'X'`, shell `$X` / `${X}`. */
function readVariables(text: string, shell: boolean): string[] {
  const found = [
    ...text.matchAll(/(?:process\.env|\benv)(?:\.|\[['"`])(KLUTCH_[A-Z0-9_]+)/g),
    ...text.matchAll(/\b[A-Z_]*ENV\s*=\s*['"](KLUTCH_[A-Z0-9_]+)['"]/g),
    ...(shell ? text.matchAll(/\$\{?(KLUTCH_[A-Z0-9_]+)/g) : []),
  ].map((m) => m[1]!);
  return [...new Set(found)];
}

/** The variables of the "Environment variables" table: its first column. */
function listedVariables(contributing: string): string[] {
  const section = contributing.split(/^## /m).find((s) => s.startsWith('Environment variables\n')) ?? '';
  return [...section.matchAll(/^\| `(KLUTCH_[A-Z0-9_]+)` \|/gm)].map((m) => m[1]!);
}

describe('environment variables', () => {
  const read = new Map<string, string[]>();
  for (const f of DIRS.flatMap((d) => files(join(ROOT, d)))) {
    const rel = relative(ROOT, f);
    if (rel === SELF) continue;
    for (const v of readVariables(readFileSync(f, 'utf8'), f.endsWith('.sh') || rel.startsWith('.ci/'))) read.set(v, [...(read.get(v) ?? []), rel]);
  }
  const listed = listedVariables(readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8'));

  it('every KLUTCH_* variable read is a row of CONTRIBUTING.md "Environment variables" (what it changes, its default)', () => {
    expect([...read].filter(([v]) => !listed.includes(v)).map(([v, where]) => `${v} (read in ${where.join(', ')})`)).toEqual([]);
  });

  it('every row names a variable something reads, once, in alphabetical order', () => {
    expect(listed.filter((v) => !read.has(v))).toEqual([]);
    expect(listed).toEqual([...new Set(listed)].sort());
    expect(listed.length).toBeGreaterThanOrEqual(10);
  });

  it('finds the ways a variable is read (the check can fail)', () => {
    const ts = "const a = process.env.KLUTCH_A; const b = env['KLUTCH_B']; export const C_ENV = 'KLUTCH_C'; const d = 'KLUTCH_D';";
    expect(readVariables(ts, false)).toEqual(['KLUTCH_A', 'KLUTCH_B', 'KLUTCH_C']);
    expect(readVariables('T0=${KLUTCH_E:-0}; echo $KLUTCH_F', true)).toEqual(['KLUTCH_E', 'KLUTCH_F']);
    expect(
      listedVariables('## Environment variables\n\n| variable | what | default |\n|---|---|---|\n| `KLUTCH_A` | a | b |\n\n## Next\n| `KLUTCH_Z` | | |\n'),
    ).toEqual(['KLUTCH_A']);
  });
});
