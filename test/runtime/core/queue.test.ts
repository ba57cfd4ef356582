import { describe, expect, it, jest } from '@jest/globals';
import { ExponentialBackoff, WorkQueue } from '../../../runtime/core/queue.js';

describe('ExponentialBackoff', () => {
  it('doubles per failure from base and caps at max; forget resets', () => {
    const b = new ExponentialBackoff<string>(5, 100);
    expect([b.when('a'), b.when('a'), b.when('a'), b.when('a'), b.when('a'), b.when('a')]).toEqual([5, 10, 20, 40, 80, 100]);
    expect(b.numRequeues('a')).toBe(6);
    expect(b.when('b')).toBe(5);
    b.forget('a');
    expect(b.when('a')).toBe(5);
  });
  it('rejects a max below base with the values in the message', () => {
    expect(() => new ExponentialBackoff(10, 5)).toThrow('maxMs: 5 must be >= baseMs (10)');
  });
});

describe('WorkQueue', () => {
  it('deduplicates keys that are waiting', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.len).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
    expect(q.len).toBe(0);
  });

  it('never hands out a key that is in flight; re-adds it on done when it was added meanwhile', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    const k = await q.get();
    expect(k).toBe('a');
    q.add('a');
    expect(q.len).toBe(0); // held back while processing
    q.add('b');
    expect(await q.get()).toBe('b');
    q.done('b');
    q.done('a');
    expect(q.len).toBe(1);
    expect(await q.get()).toBe('a');
  });

  it('wakes a waiting getter on add, and resolves getters with undefined on shutdown', async () => {
    const q = new WorkQueue<string>();
    const p = q.get();
    q.add('x');
    expect(await p).toBe('x');
    const p2 = q.get();
    q.shutdown();
    expect(await p2).toBeUndefined();
    q.add('y');
    expect(await q.get()).toBeUndefined();
  });

  it('addAfter delays the key and keeps the earliest deadline', async () => {
    jest.useFakeTimers();
    try {
      const q = new WorkQueue<string>();
      q.addAfter('a', 60_000);
      q.addAfter('a', 20);
      expect(q.delayed).toBe(1);
      jest.advanceTimersByTime(19);
      expect([q.len, q.delayed]).toEqual([0, 1]);
      jest.advanceTimersByTime(1);
      expect([q.len, q.delayed]).toEqual([1, 0]);
      expect(await q.get()).toBe('a');
      q.done('a');
      // The later deadline was dropped, not kept as a second timer.
      jest.advanceTimersByTime(60_000);
      expect([q.len, q.delayed]).toEqual([0, 0]);
      q.shutdown();
    } finally {
      jest.useRealTimers();
    }
  });

  it('addRateLimited uses the per-key backoff; forget resets it', async () => {
    const q = new WorkQueue<string>({ rateLimiter: new ExponentialBackoff<string>(10, 1000) });
    q.addRateLimited('k');
    expect(q.numRequeues('k')).toBe(1);
    expect(await q.get()).toBe('k');
    q.done('k');
    q.addRateLimited('k');
    expect(q.numRequeues('k')).toBe(2);
    q.forget('k');
    expect(q.numRequeues('k')).toBe(0);
    q.shutdown();
  });

  it('reports depth changes', () => {
    const depths: number[] = [];
    const q = new WorkQueue<string>({ onDepth: (d) => depths.push(d) });
    q.add('a');
    q.add('b');
    void q.get();
    expect(depths).toEqual([1, 2, 1]);
  });
});
