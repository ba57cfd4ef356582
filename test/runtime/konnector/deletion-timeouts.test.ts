import { describe, expect, it } from '@jest/globals';
import { Konnector } from '../../../runtime/konnector/konnector.js';
import { buildCommand } from '../../../runtime/konnector/main.js';
import {
  DEFAULT_UPSTREAM_DELETION_TIMEOUT_MS,
  DELETION_TIMED_OUT_CONDITION,
  DeletionTimeouts,
  deletionTimedOutCondition,
  MAX_PER_BINDING,
} from '../../../runtime/konnector/deletion-timeouts.js';

const rec = (i: number) => ({ upstream: `cluster-a-shop/db-${i}`, consumer: `shop/db-${i}`, finalizers: ['provider.example.com/keep'] });

describe('DeletionTimeouts', () => {
  it('records released objects per binding and says which binding changed; resolving removes them', () => {
    const changed: string[] = [];
    const t = new DeletionTimeouts((b) => changed.push(b));
    t.report('widgets.example.com', rec(1));
    t.report('widgets.example.com', rec(2));
    t.report('gadgets.example.com', rec(3));
    expect(t.of('widgets.example.com')).toEqual([rec(1), rec(2)]);
    expect(t.of('gadgets.example.com')).toEqual([rec(3)]);
    expect(changed).toEqual(['widgets.example.com', 'widgets.example.com', 'gadgets.example.com']);
    t.resolve('widgets.example.com', 'cluster-a-shop/db-1');
    t.resolve('widgets.example.com', 'cluster-a-shop/unknown'); // nothing recorded: no change
    expect(t.of('widgets.example.com')).toEqual([rec(2)]);
    expect(changed).toHaveLength(4);
    t.resolve('widgets.example.com', 'cluster-a-shop/db-2');
    expect(t.of('widgets.example.com')).toEqual([]);
  });

  it(`keeps at most ${MAX_PER_BINDING} records per binding, the newest`, () => {
    const t = new DeletionTimeouts(() => undefined);
    for (let i = 0; i < MAX_PER_BINDING + 5; i++) t.report('b', rec(i));
    const all = t.of('b');
    expect(all).toHaveLength(MAX_PER_BINDING);
    expect(all[0]).toEqual(rec(5));
  });
});

describe('deletionTimedOutCondition', () => {
  it('none without records', () => {
    expect(deletionTimedOutCondition([], 600_000)).toBeUndefined();
  });

  it('names the objects, their upstream copies and finalizers, the timeout and what to do (at most five, then a count)', () => {
    const c = deletionTimedOutCondition([1, 2, 3, 4, 5, 6, 7].map(rec), 600_000)!;
    expect(c).toMatchObject({ type: DELETION_TIMED_OUT_CONDITION, status: 'True', reason: 'ProviderFinalizers', severity: 'Warning' });
    expect(c.message).toContain('within 600 s (--upstream-deletion-timeout)');
    expect(c.message).toContain('shop/db-1 (upstream cluster-a-shop/db-1, finalizers provider.example.com/keep)');
    expect(c.message).not.toContain('shop/db-6 ');
    expect(c.message).toContain('and 2 more');
    expect(c.message).toContain('Ask the provider to remove its finalizers');
  });
});

describe('--upstream-deletion-timeout', () => {
  const parse = (...args: string[]) =>
    buildCommand()
      .exitOverride()
      .configureOutput({ writeErr: () => undefined, writeOut: () => undefined })
      .parse(['node', 'klutch-konnector', ...args])
      .opts();

  it('defaults to 10 minutes; takes a duration; refuses anything else naming the flag', () => {
    expect(parse().upstreamDeletionTimeout).toBe(DEFAULT_UPSTREAM_DELETION_TIMEOUT_MS);
    expect(DEFAULT_UPSTREAM_DELETION_TIMEOUT_MS).toBe(600_000);
    expect(parse('--upstream-deletion-timeout', '90s').upstreamDeletionTimeout).toBe(90_000);
    expect(() => parse('--upstream-deletion-timeout', 'forever')).toThrow(
      '--upstream-deletion-timeout must be a duration such as 30s, 5m or 1h, got "forever"',
    );
  });

  it('KonnectorOptions.upstreamDeletionTimeoutMs must be a number >= 0', () => {
    const appKubeConfig = { server: 'https://127.0.0.1:1', namespace: 'default', token: 't' } as never;
    expect(() => new Konnector({ appKubeConfig, upstreamDeletionTimeoutMs: -1 })).toThrow(
      'KonnectorOptions.upstreamDeletionTimeoutMs: -1 must be a number >= 0',
    );
  });
});
