import { describe, expect, it } from '@jest/globals';
import { cpuPerObject, median } from '../../scripts/_bench-procs.js';

describe('cpuPerObject', () => {
  it('divides the phase CPU by N, and adds the start-up CPU for the figure including it', () => {
    const r = cpuPerObject(0.9, 0.6, 1000);
    expect(r.fromIdleMs).toBeCloseTo(0.9, 10);
    expect(r.withStartUpMs).toBeCloseTo(1.5, 10);
  });

  it('spreads the same start-up over more objects at a larger N', () => {
    const small = cpuPerObject(0.9, 0.6, 1000);
    const large = cpuPerObject(2.7, 0.6, 3000);
    expect(large.fromIdleMs).toBeCloseTo(small.fromIdleMs, 10);
    expect(large.withStartUpMs).toBeCloseTo(1.1, 10);
  });

  it('names the bad argument and its value', () => {
    expect(() => cpuPerObject(1, 0, 0)).toThrow(/n is 0/);
    expect(() => cpuPerObject(-0.1, 0, 10)).toThrow(/phaseSeconds is -0\.1/);
    expect(() => cpuPerObject(1, Number.NaN, 10)).toThrow(/startUpSeconds is NaN/);
  });
});

describe('median', () => {
  it('is the middle value, or the mean of the two middle ones for an even count', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([1.69, 1.54])).toBeCloseTo(1.615, 10);
    expect(median([])).toBeNaN();
  });
});
