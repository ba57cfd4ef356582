import { describe, expect, it } from '@jest/globals';
import { ConsumerNamespaces, SYSTEM_NAMESPACES } from '../../../runtime/konnector/consumer-namespaces.js';

/** Timers fired by hand. */
function manualTimers() {
  const pending: Array<{ fn: () => void; ms: number; cancelled: boolean }> = [];
  return {
    pending,
    setTimer: (fn: () => void, ms: number) => {
      const t = { fn, ms, cancelled: false };
      pending.push(t);
      return { cancel: () => void (t.cancelled = true) };
    },
    fireAll() {
      for (const t of pending.splice(0)) if (!t.cancelled) t.fn();
    },
  };
}

function make(reserved: string[] = ['klutch-bind']) {
  const timers = manualTimers();
  const changes: string[][] = [];
  const ns = new ConsumerNamespaces({ reserved: () => reserved, lingerMs: 60_000, changed: (n) => changes.push(n), setTimer: timers.setTimer });
  return { ns, timers, changes };
}

describe('ConsumerNamespaces: the namespaces a konnector bound, from the app cluster only', () => {
  it('a namespace is bound while it holds an object of a bound resource', () => {
    const { ns, changes } = make();
    expect(ns.isBound('team-a')).toBe(false);
    ns.note('mangodbs.mangodb.com', 'team-a', 'db1', true);
    expect(ns.isBound('team-a')).toBe(true);
    ns.note('servicebindings.anynines.com', 'team-a', 'sb1', true);
    expect(changes).toEqual([['team-a']]); // only the transition is reported
  });

  it('never binds the cluster system namespaces or the konnector namespace, whatever they hold', () => {
    const { ns, changes } = make();
    for (const n of [...SYSTEM_NAMESPACES, 'klutch-bind']) {
      ns.note('mangodbs.mangodb.com', n, 'x', true);
      expect(ns.isBound(n)).toBe(false);
      expect(ns.isReserved(n)).toBe(true);
    }
    expect(changes).toEqual([]);
  });

  it('an emptied namespace lingers, then is unbound; a new object cancels the linger', () => {
    const { ns, timers, changes } = make();
    ns.note('r', 'team-a', 'db1', true);
    ns.note('r', 'team-a', 'db1', false);
    expect(ns.isBound('team-a')).toBe(true); // the provider's clean-up of claimed objects still comes down
    expect(timers.pending.map((t) => t.ms)).toEqual([60_000]);
    ns.note('r', 'team-a', 'db2', true);
    timers.fireAll(); // the cancelled linger does nothing
    expect(ns.isBound('team-a')).toBe(true);
    ns.note('r', 'team-a', 'db2', false);
    timers.fireAll();
    expect(ns.isBound('team-a')).toBe(false);
    expect(changes).toEqual([['team-a'], ['team-a']]);
  });

  it('a delete of an object it never saw changes nothing', () => {
    const { ns, timers, changes } = make();
    ns.note('a', 'team-a', 'x', false);
    expect(timers.pending).toEqual([]);
    expect(changes).toEqual([]);
  });
});

describe('ConsumerNamespaces: the namespace allow-list', () => {
  it('never binds a namespace outside --allow-namespace, whatever it holds', () => {
    const changes: string[][] = [];
    const ns = new ConsumerNamespaces({ allowed: (n) => n === 'team-a', lingerMs: 0, changed: (n) => changes.push(n) });
    ns.note('mangodbs.mangodb.com', 'team-a', 'db', true);
    ns.note('mangodbs.mangodb.com', 'team-x', 'db', true);
    expect(ns.isBound('team-a')).toBe(true);
    expect(ns.isBound('team-x')).toBe(false);
    expect(changes).toEqual([['team-a']]);
  });
});
