import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { RequeueError } from '../../../runtime/core/controller.js';
import { silentLogger } from '../../../runtime/core/logger.js';
import type { KubeObject } from '../../../runtime/core/client.js';
import type { RecordedEvent } from '../../../runtime/core/events.js';
import { BindingGuard } from '../../../runtime/konnector/binding-guard.js';
import { BindingLimits, limitCondition } from '../../../runtime/konnector/binding-limits.js';
import { ObjectCap } from '../../../runtime/konnector/object-cap.js';
import { konnectorMetrics } from '../../../runtime/konnector/metrics.js';
import { WriteBudget } from '../../../runtime/konnector/write-budget.js';
import type { APIServiceBinding } from '../../../runtime/konnector/types.js';

const binding = { metadata: { name: 'mangodbs.mangodb.com', namespace: 'klutch-bind', uid: 'uid-1' } } as APIServiceBinding;
const obj = (ns: string, name: string): KubeObject => ({ metadata: { namespace: ns, name } });

function limits() {
  const events: RecordedEvent[] = [];
  const changed: string[] = [];
  const registry = new Registry();
  const l = new BindingLimits({
    binding: (uid) => (uid === 'uid-1' ? binding : undefined),
    changed: (u) => changed.push(u),
    event: (_, e) => events.push(e),
    metrics: konnectorMetrics(registry),
  });
  const metric = async (name: string, limit: string) => (await registry.getSingleMetric(name)!.get()).values.find((v) => v.labels.limit === limit)?.value ?? 0;
  return { l, events, changed, metric };
}

/** A clock moved by hand. */
function clock() {
  let t = 1000;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

describe('BindingLimits: a limit shows on the binding as a condition, an Event and a metric', () => {
  it('reports once per subject, names it in the condition, and resolves with a Normal Event', async () => {
    const { l, events, changed, metric } = limits();
    const r = { binding: 'uid-1', kind: 'NamespaceNotAllowed' as const, subject: 'team-x', message: 'namespace team-x … --allow-namespace=team-x' };
    expect(l.report(r)).toBe(true);
    l.count('NamespaceNotAllowed');
    expect(l.report(r)).toBe(false);
    expect(events).toEqual([{ type: 'Warning', reason: 'NamespaceNotAllowed', message: r.message }]);
    expect(limitCondition('NamespaceNotAllowed', l.of('uid-1', 'NamespaceNotAllowed'))).toEqual({
      type: 'NamespaceNotAllowed',
      status: 'True',
      severity: 'Warning',
      reason: 'NamespaceNotAllowed',
      message: r.message,
    });
    expect(await metric('klutch_konnector_limited_total', 'NamespaceNotAllowed')).toBe(1);
    expect(await metric('klutch_konnector_bindings_limited', 'NamespaceNotAllowed')).toBe(1);
    l.resolve('uid-1', 'NamespaceNotAllowed', 'team-x');
    expect(l.of('uid-1', 'NamespaceNotAllowed')).toEqual([]);
    expect(limitCondition('NamespaceNotAllowed', [])).toBeUndefined();
    expect(events[1]).toMatchObject({ type: 'Normal', reason: 'NamespaceNotAllowedResolved' });
    expect(await metric('klutch_konnector_bindings_limited', 'NamespaceNotAllowed')).toBe(0);
    expect(changed).toEqual(['uid-1', 'uid-1']);
  });
});

describe('ObjectCap: past the cap a binding cache freezes instead of growing', () => {
  it('admits up to max objects, keeps those, refuses new ones until one leaves', () => {
    const seen: string[] = [];
    const cap = new ObjectCap(2, { frozen: (f) => seen.push(`frozen ${f}`), thawed: () => seen.push('thawed'), refused: () => seen.push('refused') });
    const exp = cap.admission('export mangodbs');
    const claim = cap.admission('claim secrets');
    expect(exp.admit(obj('p1', 'a'))).toBe(true);
    expect(claim.admit(obj('p1', 'a'))).toBe(true); // another informer's object of the same name counts on its own
    expect(exp.admit(obj('p1', 'a'))).toBe(true); // held: always kept in sync
    expect(exp.admit(obj('p1', 'b'))).toBe(false);
    expect(claim.admit(obj('p1', 'c'))).toBe(false);
    expect(cap.frozen).toBe(true);
    expect(seen).toEqual(['frozen export mangodbs p1/b', 'refused', 'refused']);
    exp.forget(obj('p1', 'a'));
    exp.forget(obj('p1', 'a')); // twice (informer stopped after a delete): counted once
    expect(cap.size).toBe(1);
    expect(seen.at(-1)).toBe('thawed');
    expect(exp.admit(obj('p1', 'b'))).toBe(true);
  });
});

describe('WriteBudget: at most n writes of one object per sliding window', () => {
  it('refuses the write past the budget with the wait until the oldest leaves the window', () => {
    const c = clock();
    const b = new WriteBudget({ writes: 3, windowMs: 60_000 }, c.now);
    expect(b.take('x')).toBeUndefined();
    c.advance(10_000);
    expect(b.take('x')).toBeUndefined();
    expect(b.take('x')).toBeUndefined();
    expect(b.take('y')).toBeUndefined(); // per object
    expect(b.take('x')).toBe(50_000);
    c.advance(50_000);
    expect(b.take('x')).toBeUndefined(); // the first write left the window
    expect(b.take('x')).toBe(10_000);
    b.forget('x');
    expect(b.take('x')).toBeUndefined();
  });

  it('refuses a budget that is no positive integer', () => {
    expect(() => new WriteBudget({ writes: 0, windowMs: 1000 })).toThrow('writes 0 must be an integer >= 1');
  });
});

describe('BindingGuard: a status fight backs off and is reported on the binding', () => {
  it('writes until the budget is spent, then requeues after the window and reports WriteBudgetExhausted until the fight ends', async () => {
    const { l, events, metric } = limits();
    const c = clock();
    const g = new BindingGuard(
      { limits: l, writeBudget: { writes: 2, windowMs: 30_000 }, log: silentLogger },
      { name: 'mangodbs.mangodb.com', uid: 'uid-1' },
      c.now,
    );
    const what = 'status of mangodbs team-a/db';
    g.write('down', what);
    g.write('down', what);
    let err: unknown;
    try {
      g.write('down', what);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RequeueError);
    expect((err as RequeueError).afterMs).toBe(30_000);
    const [r] = l.of('uid-1', 'WriteBudgetExhausted');
    expect(r.subject).toBe(`down ${what}`);
    expect(r.message).toContain(what);
    expect(r.message).toContain('--write-budget');
    expect(events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'WriteBudgetExhausted' })]);
    expect(await metric('klutch_konnector_limited_total', 'WriteBudgetExhausted')).toBe(1);
    g.write('up', what); // the other direction has its own budget
    c.advance(30_000);
    g.write('down', what); // the window moved on: one write again
    g.settled('down', what); // a reconcile found nothing to write: the fight ended
    expect(l.of('uid-1', 'WriteBudgetExhausted')).toEqual([]);
  });

  it('reports a frozen cache once and resolves it when the binding is below the cap again', () => {
    const { l, events } = limits();
    const g = new BindingGuard({ limits: l, maxCachedObjectsPerBinding: 1, log: silentLogger }, { name: 'mangodbs.mangodb.com', uid: 'uid-1' });
    const a = g.admission('claim secrets');
    expect(a.admit(obj('p1', 's1'))).toBe(true);
    expect(a.admit(obj('p1', 's2'))).toBe(false);
    expect(a.admit(obj('p1', 's3'))).toBe(false);
    const [r] = l.of('uid-1', 'CacheLimitReached');
    expect(r.message).toContain('first refused: claim secrets p1/s2');
    expect(r.message).toContain('--max-cached-objects-per-binding');
    expect(events.filter((e) => e.reason === 'CacheLimitReached')).toHaveLength(1);
    a.forget(obj('p1', 's1'));
    expect(l.of('uid-1', 'CacheLimitReached')).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: 'Normal', reason: 'CacheLimitReachedResolved' });
  });
});
