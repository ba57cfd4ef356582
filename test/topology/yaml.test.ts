import { describe, expect, test } from '@jest/globals';
import { parse } from 'yaml';
import { toYaml } from '../../constructs/topology/index.js';
import { example } from './_fixture.js';

const tricky: Record<string, unknown> = {
  bools: ['y', 'Y', 'n', 'yes', 'No', 'on', 'OFF', 'true', 'False', 'null', '~'],
  numbers: ['1', '-1', '1.5', '1e3', '0x1F', '0o17', '0777', '1_000', '1:20', '.5', '.inf', 'NaN', '+1'],
  dates: ['2001-12-14', '2001-12-14t21:59:43.10-05:00'],
  indicators: ['-', '- a', '? x', ': x', '#c', 'a #c', 'a: b', '&a', '*a', '!tag', '%x', '@x', '`x', '|', '>', '[x]', '{x}', "'q'", '"q"', ',x'],
  spaces: ['', ' ', ' lead', 'trail ', 'a  b', '\t'],
  multiline: ['a\nb', 'a\nb\n', 'a\n\n', '\n', ' x\ny', 'x\r\ny', 'x\n  indented\n', 'tab\tin\nblock', 'u\u2028v'],
  unicode: ['ünï', 'emoji 🚀', '\u0000', '\u007f', '\ufeffbom'],
  quantities: ['100m', '256Mi', '1Gi', '0.5'],
  paths: ['00-crds/a_b.yaml', 'ghcr.io/klutch-kit/konnector:0.1.0', '$(POD_NAMESPACE)', '--lease-name=x'],
  keys: { '': 1, on: 2, 'a b': 3, 'x.y/z': 4, '0': 5, '-k': 6, '?': 7 },
  nested: [[1, [2, []]], [], {}, [{ a: [{ b: {} }] }], null, true, false, -0.25, 12345678901234],
};

describe('toYaml', () => {
  test('round-trips tricky scalars and structures through YAML 1.1 and 1.2 parsers', () => {
    const text = toYaml(tricky);
    for (const version of ['1.1', '1.2'] as const) expect(parse(text, { version })).toEqual(tricky);
  });

  test('writes readable YAML: plain names, block scalars for multi-line text, quoted lookalikes', () => {
    const text = toYaml({ kind: 'ConfigMap', data: { 'config.yaml': 'issuer: x\nweb:\n  http: 1\n' }, v: 'on', port: '8080', cpu: '100m', n: 1 });
    expect(text).toBe('kind: ConfigMap\ndata:\n  config.yaml: |\n    issuer: x\n    web:\n      http: 1\nv: "on"\nport: "8080"\ncpu: 100m\n"n": 1\n');
  });

  test('every object of the example topology round-trips exactly', () => {
    let n = 0;
    for (const c of example().clusters) {
      for (const f of c.files) {
        expect(parse(toYaml(f.object), { version: '1.1' })).toEqual(f.object);
        n++;
      }
    }
    expect(n).toBeGreaterThan(100);
  });

  test('round-trips 3,000 random strings and keys built from YAML-significant characters (fixed seed)', () => {
    let seed = 42;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const alphabet = [
      'a',
      'Z',
      '0',
      '9',
      ' ',
      ' ',
      '\n',
      '\n',
      '\t',
      '#',
      ':',
      '-',
      '?',
      ',',
      '[',
      ']',
      '{',
      '}',
      '&',
      '*',
      '!',
      '|',
      '>',
      "'",
      '"',
      '%',
      '@',
      '`',
      '.',
      '/',
      '~',
      '=',
      '+',
      '\\',
      'é',
      '\r',
      'y',
      'n',
      'o',
      'e',
      'x',
    ];
    const str = () => Array.from({ length: Math.floor(rnd() * 12) }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join('');
    const doc: Record<string, unknown> = {};
    for (let i = 0; i < 1000; i++) doc[`${str()}#${i}`] = [str(), { [str()]: str() }];
    const text = toYaml(doc);
    for (const version of ['1.1', '1.2'] as const) expect(parse(text, { version })).toEqual(doc);
  });

  test('refuses values JSON cannot hold', () => {
    expect(() => toYaml({ x: Number.NaN })).toThrow(/non-finite number NaN/);
    expect(() => toYaml({ f: () => 1 })).toThrow(/cannot write a function/);
  });
});
