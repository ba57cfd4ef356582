// Timers are clamped (a requeue past 2^31-1 ms, or NaN, is no 1 ms hot loop) and the rate limiter's
// wait queue is bounded (issue 21). Fake clocks only.
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { MAX_TIMER_MS, WorkQueue, clampDelayMs } from '../../../runtime/core/queue.js';
import { RateLimitQueueFull, TokenBucket } from '../../../runtime/core/ratelimit.js';

describe('clampDelayMs', () => {
  it.each([
    [-5, 0],
    [0, 0],
    [1.2, 2],
    [1000, 1000],
    [MAX_TIMER_MS + 1, MAX_TIMER_MS],
    [Date.parse('2099-01-01T00:00:00Z'), MAX_TIMER_MS],
    [Infinity, MAX_TIMER_MS],
    [NaN, MAX_TIMER_MS],
  ])('%p → %p', (ms, want) => {
    expect(clampDelayMs(ms)).toBe(want);
  });
});

describe('WorkQueue.addAfter with a delay Node cannot keep', () => {
  afterEach(() => {
    jest.useRealTimers();
  });
  it.each([[Date.parse('2099-01-01T00:00:00Z')], [NaN], [Infinity]])('%p: the key is not due after 1 s, nor after a day', async (ms) => {
    jest.useFakeTimers();
    const q = new WorkQueue<string>();
    q.addAfter('k', ms);
    jest.advanceTimersByTime(1000);
    expect(q.len).toBe(0);
    jest.advanceTimersByTime(86_400_000);
    expect(q.len).toBe(0);
    expect(q.delayed).toBe(1);
    jest.advanceTimersByTime(MAX_TIMER_MS);
    expect(q.len).toBe(1);
    q.shutdown();
  });
});

describe('TokenBucket.maxWaiting', () => {
  it('refuses a waiter beyond the bound with RateLimitQueueFull and a Retry-After; others are served in order', async () => {
    let now = 0;
    const b = new TokenBucket(2, 2, () => now, { maxWaiting: 2 });
    await b.take(); // the burst
    await b.take();
    const served: number[] = [];
    const w1 = b.take().then(() => served.push(1));
    const w2 = b.take().then(() => served.push(2));
    const refused = await b.take().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(RateLimitQueueFull);
    expect((refused as RateLimitQueueFull).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(b.waiting).toBe(2);
    now = 2000;
    await Promise.all([w1, w2]);
    expect(served).toEqual([1, 2]);
  });

  it('is unbounded by default', () => {
    const b = new TokenBucket(1, 1, () => 0);
    for (let i = 0; i < 1000; i++) void b.take();
    expect(b.waiting).toBe(999);
  });
});
