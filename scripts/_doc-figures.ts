/**
 * One source for the figures README.md and docs/*.md quote: `docs/figures.json` holds each measured figure once —
 * its value and the date, machine, load and command of the run that measured it — and the Markdown marks every
 * place that shows it:
 *
 *   <!-- figure:sandbox-psql -->65.3–66.2 s<!-- /figure --> to the psql line (<!-- figure:sandbox-psql.date -->2026-11-28<!-- /figure -->)
 *
 * The comments do not render (GitHub, npm); the text between them is the figure's value (or, with `.date`,
 * `.load`, `.machine` or `.command`, that field). `npm run docs:figures` rewrites every mark from the file;
 * test/docs/figures.test.ts fails on a mark that differs from it, an unknown name, a figure without its date
 * and machine, a measured value shown without a date mark of its day in the same paragraph, list or table (with
 * the paragraph before it), and one name with two values in README and docs/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A measured figure: the value as the docs print it and the run that measured it. */
export interface MeasuredFigure {
  readonly kind: 'measured';
  readonly value: string;
  /** Day of the measurement, YYYY-MM-DD. */
  readonly date: string;
  /** The machine it ran on (cores, shared or not). */
  readonly machine: string;
  /** What else ran: the load average, or "quiet". */
  readonly load: string;
  /** The command that measured it. */
  readonly command: string;
  /** The docs/ page that explains it; the figure is marked there. */
  readonly home: string;
  /** Anything a later reader needs: what changed since, the figures of earlier runs. */
  readonly note?: string;
}

/** A figure that follows from a rule or the code, not from a run (a minimum version). */
export interface RuleFigure {
  readonly kind: 'rule';
  readonly value: string;
  /** Where the value comes from. */
  readonly source: string;
  readonly home: string;
  readonly note?: string;
}

export type Figure = MeasuredFigure | RuleFigure;
export type Figures = Readonly<Record<string, Figure>>;

/** The fields a mark may show besides the value. */
export const MARK_FIELDS = ['date', 'load', 'machine', 'command'] as const;
type MarkField = 'value' | (typeof MARK_FIELDS)[number];

const FIGURE_KEYS: Readonly<Record<Figure['kind'], readonly string[]>> = {
  measured: ['kind', 'value', 'date', 'machine', 'load', 'command', 'home', 'note'],
  rule: ['kind', 'value', 'source', 'home', 'note'],
};
const NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** The Markdown files whose figures are marked: README.md and every docs/*.md. */
export function docFiles(root: string): string[] {
  return [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/${f}`),
  ];
}

/** docs/figures.json, parsed (not checked: {@link figureEntryProblems}). */
export function loadFigures(root: string): Figures {
  return JSON.parse(readFileSync(join(root, 'docs', 'figures.json'), 'utf8')) as Figures;
}

/** What is wrong with the entries of figures.json: each problem names the figure and the field. */
export function figureEntryProblems(figures: unknown, homes: readonly string[]): string[] {
  if (typeof figures !== 'object' || figures === null || Array.isArray(figures)) return ['docs/figures.json: not an object of name → figure'];
  const problems: string[] = [];
  for (const [name, f] of Object.entries(figures as Record<string, unknown>)) {
    const at = `docs/figures.json "${name}"`;
    if (!NAME.test(name)) problems.push(`${at}: the name is not lower-case words joined by "-"`);
    if (typeof f !== 'object' || f === null) {
      problems.push(`${at}: not an object`);
      continue;
    }
    const e = f as Record<string, unknown>;
    if (e['kind'] !== 'measured' && e['kind'] !== 'rule') {
      problems.push(`${at}: kind is ${JSON.stringify(e['kind'])}; expected "measured" (with date, machine, load, command) or "rule" (with source)`);
      continue;
    }
    const keys = FIGURE_KEYS[e['kind']];
    for (const k of Object.keys(e)) if (!keys.includes(k)) problems.push(`${at}: unknown field "${k}" for a ${e['kind']} figure; expected ${keys.join(', ')}`);
    for (const k of keys.filter((k) => k !== 'note'))
      if (typeof e[k] !== 'string' || (e[k] as string).trim() === '') problems.push(`${at}: ${k} is missing or empty`);
    if (e['note'] !== undefined && typeof e['note'] !== 'string') problems.push(`${at}: note is not a string`);
    if (e['kind'] === 'measured' && typeof e['date'] === 'string' && !validDate(e['date']))
      problems.push(`${at}: date ${JSON.stringify(e['date'])} is not a day YYYY-MM-DD`);
    if (typeof e['home'] === 'string' && !homes.includes(e['home']))
      problems.push(`${at}: home ${JSON.stringify(e['home'])} is not one of ${homes.join(', ')}`);
    for (const k of keys) if (typeof e[k] === 'string' && /<!--|-->|\n/.test(e[k] as string)) problems.push(`${at}: ${k} contains a comment or a line break`);
  }
  return problems;
}

function validDate(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/** One mark in a Markdown file. */
export interface Mark {
  readonly file: string;
  /** 1-based line. */
  readonly line: number;
  readonly name: string;
  readonly field: MarkField;
  /** The text between the comments. */
  readonly text: string;
  /** Index of the block (paragraph, list item run or table with the paragraph before it) the mark is in. */
  readonly block: number;
}

const MARK = /<!-- figure:([^\s.>]+)(?:\.([a-z]+))? -->(.*?)<!-- \/figure -->/g;

/** The marks of one Markdown text, and what is malformed (a mark in a code block, one left open, …). */
export function findMarks(file: string, text: string): { marks: Mark[]; problems: string[] } {
  const marks: Mark[] = [];
  const problems: string[] = [];
  const lines = text.split('\n');
  let fence: string | undefined;
  let block = 0;
  let prevBlank = true;
  let inTable = false;
  for (const [i, line] of lines.entries()) {
    const at = `${file}:${i + 1}`;
    const f = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence !== undefined) {
      if (f && f[1]![0] === fence[0] && f[1]!.length >= fence.length && line.trim() === f[1]) fence = undefined;
      else if (line.includes('<!-- figure:') || line.includes('<!-- /figure -->'))
        problems.push(`${at}: a figure mark inside a code block shows as text; move the figure out of the block`);
      continue;
    }
    if (f) {
      fence = f[1];
      block++;
      prevBlank = true;
      continue;
    }
    const blank = line.trim() === '';
    const row = line.trim().startsWith('|');
    // A table belongs to the paragraph right before it (its caption: "Measured 2026-11-24 on …:").
    if (!blank && prevBlank && !(row && !inTable)) block++;
    if (row) inTable = true;
    else if (!blank) inTable = false;
    prevBlank = blank;
    if (/^\s*<!--/.test(line) && line.includes('<!-- figure:'))
      problems.push(`${at}: a line that starts with a figure mark is an HTML block in Markdown (its text renders raw); start the line with a word`);
    const rest = line.replace(MARK, (_, name: string, field: string | undefined, value: string) => {
      if (field !== undefined && !(MARK_FIELDS as readonly string[]).includes(field))
        problems.push(`${at}: figure:${name}.${field}: unknown field "${field}"; expected the value (no field) or one of ${MARK_FIELDS.join(', ')}`);
      else if (value.includes('<!--')) problems.push(`${at}: figure:${name}: a mark inside a mark`);
      else marks.push({ file, line: i + 1, name, field: (field ?? 'value') as MarkField, text: value, block });
      return '';
    });
    if (rest.includes('<!-- figure:'))
      problems.push(`${at}: a figure mark that does not end on its line (write <!-- figure:name -->value<!-- /figure --> on one line)`);
    if (rest.includes('<!-- /figure -->')) problems.push(`${at}: <!-- /figure --> without its <!-- figure:name -->`);
  }
  return { marks, problems };
}

/** The text a mark of `field` shows for `figure`, or undefined when the figure has no such field. */
export function fieldText(figure: Figure, field: MarkField): string | undefined {
  if (field === 'value') return figure.value;
  return figure.kind === 'measured' ? figure[field] : undefined;
}

/** Every mark of `text` rewritten from `figures` (unknown names and fields stay as they are). */
export function renderMarks(text: string, figures: Figures): string {
  return text.replace(MARK, (whole, name: string, field: string | undefined) => {
    const f = Object.hasOwn(figures, name) ? figures[name] : undefined;
    const t = f && fieldText(f, (field ?? 'value') as MarkField);
    return t === undefined ? whole : `<!-- figure:${name}${field ? `.${field}` : ''} -->${t}<!-- /figure -->`;
  });
}

/** What disagrees between the marks of the docs and figures.json. `files` maps a path to its text. */
export function markProblems(files: ReadonlyMap<string, string>, figures: Figures): string[] {
  const problems: string[] = [];
  const all: Mark[] = [];
  for (const [file, text] of files) {
    const r = findMarks(file, text);
    problems.push(...r.problems);
    all.push(...r.marks);
  }
  for (const m of all) {
    const at = `${m.file}:${m.line}`;
    const f = Object.hasOwn(figures, m.name) ? figures[m.name] : undefined;
    if (!f) {
      problems.push(`${at}: figure "${m.name}" is not in docs/figures.json; add it there (value, date, machine, load, command) or fix the name`);
      continue;
    }
    const want = fieldText(f, m.field);
    if (want === undefined) problems.push(`${at}: figure "${m.name}" is a ${f.kind} figure without a ${m.field}`);
    else if (m.text !== want)
      problems.push(
        `${at}: figure "${m.name}"${m.field === 'value' ? '' : `.${m.field}`} shows ${JSON.stringify(m.text)}, docs/figures.json says ${JSON.stringify(want)}: a new measurement goes into docs/figures.json (value, date, machine, load, command), then npm run docs:figures writes every mark`,
      );
    // A measured value is shown with its date: a date mark with that day (its own, or of a figure of the same run) in the same block.
    if (f.kind === 'measured' && m.field === 'value' && !all.some((d) => d.file === m.file && d.block === m.block && d.field === 'date' && d.text === f.date))
      problems.push(
        `${at}: figure "${m.name}" is shown without its date; add <!-- figure:${m.name}.date -->${f.date}<!-- /figure --> in the same paragraph, list item or table`,
      );
  }
  for (const [name, f] of Object.entries(figures)) {
    if (!all.some((m) => m.name === name && m.field === 'value' && m.file === f.home))
      problems.push(
        `docs/figures.json "${name}": not marked in its home ${f.home}; mark the value there (<!-- figure:${name} -->${f.value}<!-- /figure -->) or remove the entry`,
      );
  }
  return problems;
}

/** Names shown with more than one text across the files (any field): `name → the texts and where`. */
export function disagreements(files: ReadonlyMap<string, string>): string[] {
  const seen = new Map<string, Map<string, string[]>>();
  for (const [file, text] of files) {
    for (const m of findMarks(file, text).marks) {
      const key = m.field === 'value' ? m.name : `${m.name}.${m.field}`;
      const texts = seen.get(key) ?? new Map<string, string[]>();
      texts.set(m.text, [...(texts.get(m.text) ?? []), `${m.file}:${m.line}`]);
      seen.set(key, texts);
    }
  }
  return [...seen]
    .filter(([, texts]) => texts.size > 1)
    .map(([key, texts]) => `figure "${key}": ${[...texts].map(([t, where]) => `${JSON.stringify(t)} in ${where.join(', ')}`).join('; ')}`);
}
