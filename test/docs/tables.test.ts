/**
 * The Markdown tables of README.md, CONTRIBUTING.md and docs/*.md render as tables, with every cell where it was written. Read
 * as GitHub (GFM) reads them: a table is a header row, then a delimiter row with as many cells, then body rows
 * up to the first blank line; cells split at every `|` not escaped as `\|`, also inside `code`. GFM drops
 * a body row's cells beyond the header's and renders a header without its delimiter row as plain text, and
 * a `|` row after a blank line as a paragraph — so each of those is an error here, named by file and line.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = process.cwd();
const FILES = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

/** The cells of a table line: split at unescaped `|`, without the optional outer pipes. */
function cells(line: string): string[] {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && s[i + 1] === '|') {
      cur += '\\|';
      i++;
    } else if (s[i] === '|') {
      out.push(cur.trim());
      cur = '';
    } else cur += s[i];
  }
  out.push(cur.trim());
  return out;
}

const isDelimiter = (line: string) => /^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$/.test(line.trim()) && line.includes('-');
const isRow = (line: string) => line.trim().startsWith('|');

/** The tables of a Markdown text (outside fenced code blocks) and the problems found, each `line N: …`. */
function checkTables(text: string): { tables: number; problems: string[] } {
  const lines = text.split('\n');
  const problems: string[] = [];
  let tables = 0;
  let fence: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const f = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (f && f[1][0] === fence[0] && f[1].length >= fence.length && line.trim() === f[1]) fence = undefined;
      continue;
    }
    if (f) {
      fence = f[1];
      continue;
    }
    if (!isRow(line)) continue;
    if (i + 1 >= lines.length || !isDelimiter(lines[i + 1])) {
      const after =
        i > 0 && lines[i - 1].trim() === '' && lines.slice(0, i - 1).some((l) => l.trim() !== '') ? ' (after a blank line: a table split in two?)' : '';
      problems.push(`line ${i + 1}: a "|" row outside any table${after} — it renders as text`);
      continue;
    }
    tables++;
    const width = cells(line).length;
    const delimiter = cells(lines[i + 1]).length;
    if (delimiter !== width) problems.push(`line ${i + 2}: the delimiter row has ${delimiter} cells, the header ${width}`);
    let j = i + 2;
    for (; j < lines.length && lines[j].trim() !== ''; j++) {
      if (!isRow(lines[j])) {
        problems.push(`line ${j + 1}: a line without "|" right after the table's rows — GFM makes it a row of the table; leave a blank line before it`);
        continue;
      }
      const n = cells(lines[j]).length;
      if (n !== width) problems.push(`line ${j + 1}: ${n} cells, the header has ${width}${n > width ? ' (an unescaped "|"? write \\|)' : ''}`);
    }
    // A blank line ends the table; `|` rows right after it would be a second, headless table.
    let k = j;
    while (k < lines.length && lines[k].trim() === '') k++;
    if (k > j && k < lines.length && isRow(lines[k]) && !(k + 1 < lines.length && isDelimiter(lines[k + 1])))
      problems.push(`line ${j + 1}: a blank line inside the table (line ${k + 1} goes on with "|" rows) — it ends the table there`);
    i = j - 1;
  }
  return { tables, problems };
}

describe('Markdown tables', () => {
  it.each(FILES)('%s: every table renders (header, delimiter, rows of one width, no blank line inside)', (file) => {
    expect(checkTables(readFileSync(join(ROOT, file), 'utf8')).problems).toEqual([]);
  });

  it('README and docs/ have tables (the parser finds them)', () => {
    expect(checkTables(readFileSync(join(ROOT, 'README.md'), 'utf8')).tables).toBeGreaterThanOrEqual(3);
  });

  it('finds each way a table breaks (the check can fail)', () => {
    const text = [
      '| a | b |',
      '|---|---|',
      '| 1 | 2 |',
      '| 1 | `x || y` |',
      '| 1 | `x \\|\\| y` |',
      '',
      '| 3 | 4 |',
      '',
      '| c | d |',
      '|---|',
      '| 1 | 2 |',
      'text',
      '',
      '```',
      '| in a code block | is not a table |',
      '```',
      '  | indented | table |',
      '  |:--|--:|',
      '  | 1 | 2 |',
    ].join('\n');
    expect(checkTables(text)).toEqual({
      tables: 3,
      problems: [
        'line 4: 4 cells, the header has 2 (an unescaped "|"? write \\|)',
        'line 6: a blank line inside the table (line 7 goes on with "|" rows) — it ends the table there',
        'line 7: a "|" row outside any table (after a blank line: a table split in two?) — it renders as text',
        'line 10: the delimiter row has 1 cells, the header 2',
        'line 12: a line without "|" right after the table\'s rows — GFM makes it a row of the table; leave a blank line before it',
      ],
    });
  });
});
