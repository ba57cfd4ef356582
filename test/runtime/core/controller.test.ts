import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { Controller, RequeueError } from '../../../runtime/core/controller.js';
import { controllerMetrics } from '../../../runtime/core/metrics.js';
import { TokenBucket } from '../../../runtime/core/ratelimit.js';

const until = async (f: () => boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('Controller', () => {
  it('reports each queue depth when the registry is scraped', async () => {
    const registry = new Registry();
    const a = new Controller({ name: 'a', registry, reconciler: async () => undefined });
    const b = new Controller({ name: 'b', registry, reconciler: async () => undefined });
    for (const k of ['x', 'y', 'z']) a.enqueue(k);
    b.enqueue('x');
    b.enqueue('x'); // deduplicated
    let text = await registry.metrics();
    expect(text).toMatch(/klutch_workqueue_depth\{controller="a"\} 3/);
    expect(text).toMatch(/klutch_workqueue_depth\{controller="b"\} 1/);
    a.enqueue('w');
    text = await registry.metrics();
    expect(text).toMatch(/klutch_workqueue_depth\{controller="a"\} 4/);
    await Promise.all([a.stop(), b.stop()]);
    text = await registry.metrics();
    expect(text).toMatch(/klutch_workqueue_depth\{controller="a"\} 0/);
  });

  it('counts a reconcile that fails with a programming error as unexpected, and an ordinary failure not', async () => {
    const registry = new Registry();
    const seen: string[] = [];
    const c = new Controller({
      name: 'bugs',
      registry,
      backoffBaseMs: 1,
      onUnexpectedError: (e, key) => seen.push(`${key}: ${e.name}`),
      reconciler: async (key) => {
        if (key === 'bug' && !seen.includes('bug: TypeError')) (undefined as unknown as { x: number }).x++;
        if (key === 'weather' && !seen.includes('weather: retried')) {
          seen.push('weather: retried');
          throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
        }
      },
    }).start();
    c.enqueue('weather');
    c.enqueue('bug');
    await until(() => seen.includes('bug: TypeError') && seen.includes('weather: retried'));
    await c.stop();
    const text = await registry.metrics();
    expect(text).toMatch(/klutch_reconcile_unexpected_errors_total\{controller="bugs"\} 1/);
    expect(text).toMatch(/klutch_reconcile_errors_total\{controller="bugs"\} 2/);
    const u = controllerMetrics(registry).unexpected;
    expect(u.total).toBe(1);
    expect(u.last).toMatchObject({ controller: 'bugs', key: 'bug' });
    expect(u.last!.message).toMatch(/^TypeError: /);
  });

  it('retries failing keys with backoff until they succeed and records metrics', async () => {
    const registry = new Registry();
    const attempts = new Map<string, number>();
    const c = new Controller({
      name: 'test',
      workers: 2,
      registry,
      backoffBaseMs: 1,
      reconciler: async (key) => {
        const n = (attempts.get(key) ?? 0) + 1;
        attempts.set(key, n);
        if (key === 'flaky' && n < 3) throw new Error('boom');
      },
    }).start();
    c.enqueue('flaky');
    c.enqueue('ok');
    await until(() => attempts.get('flaky') === 3 && attempts.get('ok') === 1);
    await c.stop();
    const text = await registry.metrics();
    expect(text).toMatch(/klutch_reconcile_errors_total\{controller="test"\} 2/);
    expect(text).toMatch(/klutch_reconcile_total\{controller="test",result="success"\} 2/);
    expect(text).toContain('klutch_reconcile_duration_seconds_bucket');
  });

  it('processes one key at a time even with several workers', async () => {
    let concurrent = 0;
    let max = 0;
    let runs = 0;
    const c = new Controller({
      name: 'serial',
      workers: 4,
      reconciler: async () => {
        concurrent++;
        max = Math.max(max, concurrent);
        await new Promise((r) => setTimeout(r, 10));
        concurrent--;
        runs++;
      },
    }).start();
    for (let i = 0; i < 5; i++) {
      c.enqueue('same');
      await new Promise((r) => setTimeout(r, 3));
    }
    await until(() => runs >= 2 && c.queue.len === 0 && c.queue.inFlight === 0);
    await c.stop();
    expect(max).toBe(1);
  });

  it('requeueAfterMs and RequeueError schedule the key again', async () => {
    let n = 0;
    const c = new Controller({
      name: 'requeue',
      reconciler: async () => {
        n++;
        if (n === 1) return { requeueAfterMs: 5 };
        if (n === 2) throw new RequeueError('waiting for namespace', 5);
        return undefined;
      },
    }).start();
    c.enqueue('k');
    await until(() => n === 3);
    await c.stop();
  });

  it('rejects a bad worker count', () => {
    expect(() => new Controller({ name: 'x', workers: 0, reconciler: async () => {} })).toThrow('workers: 0');
  });
});

describe('TokenBucket', () => {
  it('allows a burst and then paces to qps', async () => {
    let now = 0;
    const b = new TokenBucket(10, 2, () => now);
    expect(b.tryTake()).toBe(true);
    expect(b.tryTake()).toBe(true);
    expect(b.tryTake()).toBe(false);
    now += 100; // 1 token
    expect(b.tryTake()).toBe(true);
    expect(b.tryTake()).toBe(false);
  });
  it('qps 0 disables limiting', () => {
    const b = new TokenBucket(0, 0);
    for (let i = 0; i < 1000; i++) expect(b.tryTake()).toBe(true);
  });
  it('take() waits until the clock has refilled a token', async () => {
    let now = 0;
    const b = new TokenBucket(100, 1, () => now);
    await b.take();
    let done = false;
    const second = b.take().then(() => (done = true));
    // however many timer rounds pass, no token appears while the clock stands still
    await new Promise((r) => setTimeout(r, 40));
    expect(done).toBe(false);
    expect(b.waiting).toBe(1);
    now += 10; // 100 qps: one token
    await second;
    expect(b.waiting).toBe(0);
  });
});
