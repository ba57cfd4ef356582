/**
 * The figures README.md and docs/*.md quote come from one place, docs/figures.json (scripts/_doc-figures.ts):
 * every marked figure shows the file's value, names only figures the file knows, carries the date of its
 * measurement next to it, and one figure never has two values across README and docs/. Each entry of the file
 * names its date, machine, load and command (or, for a rule, its source).
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { disagreements, docFiles, figureEntryProblems, findMarks, type Figures, loadFigures, markProblems, renderMarks } from '../../scripts/_doc-figures.js';

const ROOT = process.cwd();
const FILES = docFiles(ROOT);
const HOMES = FILES.filter((f) => f.startsWith('docs/'));
const texts = new Map(FILES.map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));
const figures = loadFigures(ROOT);

/** A measured figure for the synthetic cases. */
const measured = (value: string, date = '2026-11-28') =>
  ({ kind: 'measured', value, date, machine: '2 cores', load: 'quiet', command: 'npm run x', home: 'docs/x.md' }) as const;

describe('figures (docs/figures.json and the marks of README.md and docs/*.md)', () => {
  it('every entry of docs/figures.json has its value, date, machine, load and command (a rule: its source) and a home page', () => {
    expect(figureEntryProblems(figures, HOMES)).toEqual([]);
  });

  it('every mark shows the value of docs/figures.json, names a known figure, has its date beside it, and each figure is marked at home', () => {
    expect(markProblems(texts, figures)).toEqual([]);
  });

  it('README and docs/ never give one figure two values', () => {
    expect(disagreements(texts)).toEqual([]);
  });

  it('README marks the figures it quotes from the measurements (sandbox, synth, soak verdict, konnector rates, CI time)', () => {
    const names = new Set(findMarks('README.md', texts.get('README.md')!).marks.map((m) => m.name));
    const quoted = [
      'sandbox-psql',
      'synth-bench',
      'synth-example',
      'soak-defaults-30min',
      'soak-ci',
      'konnector-ceiling-1000',
      'konnector-idle-rate',
      'ci-brand-new',
      'ci-warm',
    ];
    expect(quoted.filter((n) => !names.has(n))).toEqual([]);
  });

  it('the kubectl range is one minor version either side of the clusters’ release (tools/kube/go.mod), and every claimed minimum says so', () => {
    const release = /^\s*k8s\.io\/kubernetes v1\.(\d+)\.\d+/m.exec(readFileSync(join(ROOT, 'tools', 'kube', 'go.mod'), 'utf8'));
    expect(release).not.toBeNull();
    const min = `1.${Number(release![1]) - 1}`;
    expect(figures['kubectl-min']?.value).toBe(min);
    expect(figures['kubectl-max']?.value).toBe(`1.${Number(release![1]) + 1}`);
    // Every "kubectl … >= 1.N" / "≥ 1.N" in the docs and in the messages of the sandbox, the harness and the scripts.
    const sources = (dir: string): string[] =>
      readdirSync(join(ROOT, dir)).flatMap((f) => {
        const p = join(dir, f);
        if (statSync(join(ROOT, p)).isDirectory()) return sources(p);
        return p.endsWith('.ts') ? [p] : [];
      });
    const claims = [...FILES, ...['sandbox', 'runtime', 'scripts'].flatMap(sources)].flatMap((f) =>
      [...readFileSync(join(ROOT, f), 'utf8').matchAll(/kubectl[^\n]{0,80}?(?:>=|≥)\s*(?:<!-- figure:kubectl-min -->)?(1\.\d+)/g)].map((m) => `${f}: ${m[1]}`),
    );
    expect(claims.length).toBeGreaterThanOrEqual(2);
    expect(claims.filter((c) => !c.endsWith(`: ${min}`))).toEqual([]);
    // And every "kubectl … 1.N–1.M" range.
    const max = figures['kubectl-max']!.value;
    const ranges = FILES.flatMap((f) => [...texts.get(f)!.matchAll(/kubectl[^\n]{0,120}?\b(1\.\d+)\s*[–-]\s*(1\.\d+)\b/g)].map((m) => `${f}: ${m[1]}–${m[2]}`));
    expect(ranges.filter((r) => !r.endsWith(`: ${min}–${max}`))).toEqual([]);
  });

  describe('the checks can fail', () => {
    const fig: Figures = { 'a-time': measured('62 s'), 'b-min': { kind: 'rule', value: '1.34', source: 'the skew policy', home: 'docs/x.md' } };
    const home =
      'Took <!-- figure:a-time -->62 s<!-- /figure --> (<!-- figure:a-time.date -->2026-11-28<!-- /figure -->); kubectl ≥ <!-- figure:b-min -->1.34<!-- /figure -->.\n';

    it('accepts a correct page', () => {
      expect(markProblems(new Map([['docs/x.md', home]]), fig)).toEqual([]);
    });

    it('an entry without date or machine, with a bad date, an unknown field or kind, or a home that is no page', () => {
      const bad = {
        'no-date': { kind: 'measured', value: '1 s', machine: 'm', load: 'l', command: 'c', home: 'docs/x.md' },
        'no-machine': { kind: 'measured', value: '1 s', date: '2026-11-31', machine: '', load: 'l', command: 'c', home: 'docs/y.md' },
        'Bad Name': { kind: 'guess', value: '1' },
        rule: { kind: 'rule', value: '1', source: 's', home: 'docs/x.md', date: '2026-11-28' },
      };
      expect(figureEntryProblems(bad, ['docs/x.md'])).toEqual([
        'docs/figures.json "no-date": date is missing or empty',
        'docs/figures.json "no-machine": machine is missing or empty',
        'docs/figures.json "no-machine": date "2026-11-31" is not a day YYYY-MM-DD',
        'docs/figures.json "no-machine": home "docs/y.md" is not one of docs/x.md',
        'docs/figures.json "Bad Name": the name is not lower-case words joined by "-"',
        'docs/figures.json "Bad Name": kind is "guess"; expected "measured" (with date, machine, load, command) or "rule" (with source)',
        'docs/figures.json "rule": unknown field "date" for a rule figure; expected kind, value, source, home, note',
      ]);
    });

    it('a stale value, an unknown name, a value without its date, a figure not marked at home', () => {
      const readme = [
        'Sandbox: <!-- figure:a-time -->50 s<!-- /figure --> (<!-- figure:a-time.date -->2026-11-28<!-- /figure -->).',
        '',
        'Again <!-- figure:a-time -->62 s<!-- /figure -->, no date in this paragraph; <!-- figure:c-gone -->3<!-- /figure -->.',
      ].join('\n');
      expect(markProblems(new Map([['README.md', readme]]), fig)).toEqual([
        'README.md:1: figure "a-time" shows "50 s", docs/figures.json says "62 s": a new measurement goes into docs/figures.json (value, date, machine, load, command), then npm run docs:figures writes every mark',
        'README.md:3: figure "a-time" is shown without its date; add <!-- figure:a-time.date -->2026-11-28<!-- /figure --> in the same paragraph, list item or table',
        'README.md:3: figure "c-gone" is not in docs/figures.json; add it there (value, date, machine, load, command) or fix the name',
        'docs/figures.json "a-time": not marked in its home docs/x.md; mark the value there (<!-- figure:a-time -->62 s<!-- /figure -->) or remove the entry',
        'docs/figures.json "b-min": not marked in its home docs/x.md; mark the value there (<!-- figure:b-min -->1.34<!-- /figure -->) or remove the entry',
      ]);
    });

    it('a table carries the date of the paragraph before it; a date of another day does not count', () => {
      const table = [
        'Measured <!-- figure:a-time.date -->2026-11-28<!-- /figure -->:',
        '',
        '| step | time |',
        '|---|---|',
        '| all | <!-- figure:a-time -->62 s<!-- /figure --> |',
      ];
      expect(markProblems(new Map([['docs/x.md', table.join('\n') + '\n\n' + home]]), fig)).toEqual([]);
      const other: Figures = { ...fig, 'd-old': measured('7 s', '2026-11-01') };
      const page = `${home}\nOld: <!-- figure:d-old -->7 s<!-- /figure --> (<!-- figure:a-time.date -->2026-11-28<!-- /figure -->).\n`;
      expect(markProblems(new Map([['docs/x.md', page]]), other)).toEqual([
        'docs/x.md:3: figure "d-old" is shown without its date; add <!-- figure:d-old.date -->2026-11-01<!-- /figure --> in the same paragraph, list item or table',
      ]);
    });

    it('README and docs/ with two values for one figure', () => {
      const files = new Map([
        ['README.md', 'x <!-- figure:a-time -->62 s<!-- /figure --> y'],
        ['docs/sandbox.md', 'x <!-- figure:a-time -->about 50 s<!-- /figure --> y'],
      ]);
      expect(disagreements(files)).toEqual(['figure "a-time": "62 s" in README.md:1; "about 50 s" in docs/sandbox.md:1']);
    });

    it('marks in a code block, at the start of a line, left open, with an unknown field', () => {
      const text = [
        '```sh',
        'npm run sandbox  # <!-- figure:a-time -->62 s<!-- /figure -->',
        '```',
        '<!-- figure:a-time -->62 s<!-- /figure --> at the start of a line',
        'open <!-- figure:a-time -->62 s',
        'field <!-- figure:a-time.speed -->fast<!-- /figure -->',
      ].join('\n');
      expect(findMarks('docs/x.md', text).problems).toEqual([
        'docs/x.md:2: a figure mark inside a code block shows as text; move the figure out of the block',
        'docs/x.md:4: a line that starts with a figure mark is an HTML block in Markdown (its text renders raw); start the line with a word',
        'docs/x.md:5: a figure mark that does not end on its line (write <!-- figure:name -->value<!-- /figure --> on one line)',
        'docs/x.md:6: figure:a-time.speed: unknown field "speed"; expected the value (no field) or one of date, load, machine, command',
      ]);
    });

    it('npm run docs:figures rewrites a stale mark and its date, and leaves unknown names alone', () => {
      const stale =
        'Took <!-- figure:a-time -->50 s<!-- /figure --> (<!-- figure:a-time.date -->2026-11-01<!-- /figure -->), <!-- figure:zz -->1<!-- /figure -->.';
      expect(renderMarks(stale, fig)).toBe(
        'Took <!-- figure:a-time -->62 s<!-- /figure --> (<!-- figure:a-time.date -->2026-11-28<!-- /figure -->), <!-- figure:zz -->1<!-- /figure -->.',
      );
    });
  });
});
