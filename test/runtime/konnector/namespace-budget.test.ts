import { describe, expect, it } from '@jest/globals';
import { NamespaceBudget } from '../../../runtime/konnector/namespace-budget.js';

describe('NamespaceBudget: a hard cap on provider-made objects per namespace', () => {
  it('counts creates in flight until the cache holds them, so concurrent workers cannot overshoot', () => {
    const b = new NamespaceBudget(2);
    expect(b.tryTake('ns', 'a', [])).toBe(true);
    expect(b.tryTake('ns', 'b', [])).toBe(true); // the cache still shows nothing
    expect(b.tryTake('ns', 'c', [])).toBe(false);
    expect(b.tryTake('other', 'c', [])).toBe(true); // per namespace
    // the cache caught up: same count, still full; an existing name is always allowed (updates)
    expect(b.tryTake('ns', 'c', ['a', 'b'])).toBe(false);
    expect(b.tryTake('ns', 'a', ['a', 'b'])).toBe(true);
    // one deleted: room again
    expect(b.tryTake('ns', 'c', ['a'])).toBe(true);
  });

  it('a failed create gives its place back; a create the cache never shows expires', () => {
    let now = 0;
    const b = new NamespaceBudget(1, () => now, 1000);
    expect(b.tryTake('ns', 'a', [])).toBe(true);
    b.release('ns', 'a');
    expect(b.tryTake('ns', 'b', [])).toBe(true);
    expect(b.tryTake('ns', 'c', [])).toBe(false);
    now = 1001;
    expect(b.tryTake('ns', 'c', [])).toBe(true);
  });
});
