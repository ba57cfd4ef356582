import { describe, expect, it } from '@jest/globals';
import { LineSplitter } from '../../../runtime/core/watch-lines.js';

const split = (chunks: Buffer[], max = 1024): { lines: string[]; accepted: boolean[] } => {
  const lines: string[] = [];
  const s = new LineSplitter((l) => lines.push(l), max);
  const accepted = chunks.map((c) => s.push(c));
  s.end();
  return { lines, accepted };
};

describe('LineSplitter', () => {
  it('delivers each line once, in order, whatever the chunk boundaries', () => {
    const text = '{"a":1}\n{"b":2}\n\n{"c":3}\n';
    const whole = split([Buffer.from(text)]).lines;
    expect(whole).toEqual(['{"a":1}', '{"b":2}', '', '{"c":3}']);
    const bytes = Buffer.from(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(split([bytes.subarray(0, cut), bytes.subarray(cut)]).lines).toEqual(whole);
    }
    expect(split([...bytes].map((b) => Buffer.from([b]))).lines).toEqual(whole);
  });

  it('decodes a multi-byte character split between chunks', () => {
    const bytes = Buffer.from('{"name":"Grüße €"}\n');
    const at = bytes.indexOf(0xe2) + 1; // inside the three bytes of €
    expect(split([bytes.subarray(0, at), bytes.subarray(at)]).lines).toEqual(['{"name":"Grüße €"}']);
  });

  it('keeps a \\r before the newline and delivers a last line without one at the end', () => {
    expect(split([Buffer.from('{"a":1}\r\n{"b"'), Buffer.from(':2}')]).lines).toEqual(['{"a":1}\r', '{"b":2}']);
  });

  it('refuses an unfinished line past maxLineBytes, counting only the bytes since the last newline', () => {
    const { accepted } = split([Buffer.from('x'.repeat(10) + '\n' + 'y'.repeat(8)), Buffer.from('y'.repeat(8)), Buffer.from('\n')], 16);
    expect(accepted).toEqual([true, true, true]);
    expect(split([Buffer.from('z'.repeat(10)), Buffer.from('z'.repeat(7))], 16).accepted).toEqual([true, false]);
  });
});
