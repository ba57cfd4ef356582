import { describe, expect, it } from '@jest/globals';
import type { RecordedEvent } from '../../../runtime/core/events.js';
import { ClaimConflicts, claimConflictCondition, describeBinding, type ClaimConflict } from '../../../runtime/konnector/claim-conflicts.js';
import type { APIServiceBinding } from '../../../runtime/konnector/types.js';

const binding = (name: string, uid: string): APIServiceBinding =>
  ({ apiVersion: 'klutch.anynines.com/v1alpha1', kind: 'APIServiceBinding', metadata: { name, namespace: 'klutch-bind', uid }, spec: {} }) as APIServiceBinding;
const A = binding('postgresqlinstances.anynines.com', 'uid-a');
const B = binding('widgets.example.com', 'uid-b');
const known = new Map([A, B].map((b) => [b.metadata.uid!, b]));

function registry() {
  const events: Array<{ on: string } & RecordedEvent> = [];
  const changes: string[][] = [];
  const r = new ClaimConflicts({
    binding: (uid) => known.get(uid),
    changed: (uids) => changes.push([...uids].sort()),
    event: (b, e) => events.push({ on: b.metadata.name!, ...e }),
  });
  return { r, events, changes };
}

const conflict = (over: Partial<ClaimConflict> = {}): ClaimConflict => ({
  claimant: 'uid-b',
  holder: 'uid-a',
  resource: 'secrets',
  namespace: 'team-d',
  name: 'db-service-binding',
  ...over,
});

describe('ClaimConflicts', () => {
  it('a new conflict: a Warning Event on both bindings, both bindings to rewrite, the conflict listed for both', () => {
    const { r, events, changes } = registry();
    expect(r.report('sync-1', conflict())).toBe(true);
    expect(events.map((e) => [e.on, e.type, e.reason])).toEqual([
      [B.metadata.name, 'Warning', 'ClaimConflict'],
      [A.metadata.name, 'Warning', 'ClaimConflict'],
    ]);
    expect(events[0]!.message).toContain('secrets team-d/db-service-binding');
    expect(events[0]!.message).toContain(`binding klutch-bind/${A.metadata.name}`);
    expect(events[1]!.message).toContain(`binding klutch-bind/${B.metadata.name}`);
    expect(changes).toEqual([['uid-a', 'uid-b']]);
    expect(r.of('uid-a')).toEqual([conflict()]);
    expect(r.of('uid-b')).toEqual([conflict()]);
    expect(r.of('uid-c')).toEqual([]);
  });

  it('reporting the same conflict again changes nothing (no Event storm while the copy keeps being seen)', () => {
    const { r, events, changes } = registry();
    r.report('sync-1', conflict());
    expect(r.report('sync-1', conflict())).toBe(false);
    expect(events).toHaveLength(2);
    expect(changes).toHaveLength(1);
  });

  it('resolved: a Normal Event on both, the condition goes', () => {
    const { r, events, changes } = registry();
    r.report('sync-1', conflict());
    r.resolve('sync-1', 'team-d', 'db-service-binding');
    expect(events.slice(2).map((e) => [e.on, e.type, e.reason])).toEqual([
      [B.metadata.name, 'Normal', 'ClaimConflictResolved'],
      [A.metadata.name, 'Normal', 'ClaimConflictResolved'],
    ]);
    expect(changes).toEqual([
      ['uid-a', 'uid-b'],
      ['uid-a', 'uid-b'],
    ]);
    expect(r.of('uid-a')).toEqual([]);
    expect(claimConflictCondition('uid-a', r.of('uid-a'), (u) => known.get(u))).toBeUndefined();
    r.resolve('sync-1', 'team-d', 'db-service-binding'); // nothing left: no Event
    expect(events).toHaveLength(4);
  });

  it('a stopped syncer takes its conflicts with it, without Events; another reporter keeps its own', () => {
    const { r, events } = registry();
    r.report('sync-1', conflict());
    r.report('sync-1', conflict({ name: 'other' }));
    r.report('sync-2', conflict({ claimant: 'uid-a', holder: 'uid-b', name: 'third' }));
    const before = events.length;
    r.resolveAll('sync-1');
    expect(events).toHaveLength(before);
    expect(r.of('uid-a')).toEqual([conflict({ claimant: 'uid-a', holder: 'uid-b', name: 'third' })]);
  });

  it('an unrecorded holder (an older konnector made the copy) or an unknown binding: the Event goes to the bindings it knows', () => {
    const { r, events, changes } = registry();
    r.report('sync-1', conflict({ holder: '' }));
    expect(events.map((e) => e.on)).toEqual([B.metadata.name]);
    expect(events[0]!.message).toContain('klutch.anynines.com/binding-uid');
    expect(changes).toEqual([['uid-b']]);
    expect(r.of('')).toEqual([]);
    r.report('sync-1', conflict({ name: 'x', holder: 'uid-gone' }));
    expect(events.at(-1)!.message).toContain('binding uid uid-gone (not seen by this konnector');
  });
});

describe('claimConflictCondition', () => {
  const lookup = (u: string) => known.get(u);

  it('names each object and the other binding, from each side', () => {
    const onB = claimConflictCondition('uid-b', [conflict()], lookup)!;
    expect(onB).toMatchObject({ type: 'ClaimConflict', status: 'True', reason: 'ClaimConflict' });
    expect(onB.message).toContain(
      `secrets team-d/db-service-binding is claimed by this binding but held by the copy of binding klutch-bind/${A.metadata.name}`,
    );
    const onA = claimConflictCondition('uid-a', [conflict()], lookup)!;
    expect(onA.message).toContain(
      `secrets team-d/db-service-binding is held by this binding's copy and also claimed by binding klutch-bind/${B.metadata.name}`,
    );
    expect(onA.message).toContain('remove the name from one binding');
  });

  it('lists at most `max` conflicts and counts the rest', () => {
    const many = Array.from({ length: 7 }, (_, i) => conflict({ name: `s-${i}` }));
    const c = claimConflictCondition('uid-b', many, lookup, 5)!;
    expect(c.message).toMatch(/^7 claimed object names in conflict/);
    expect(c.message).toContain('s-4');
    expect(c.message).not.toContain('s-5 ');
    expect(c.message).toContain('and 2 more');
  });

  it('no conflicts: no condition', () => {
    expect(claimConflictCondition('uid-a', [], lookup)).toBeUndefined();
  });
});

describe('describeBinding', () => {
  it('namespace/name, an unknown uid, or an unrecorded maker', () => {
    expect(describeBinding('uid-a', A)).toBe(`binding klutch-bind/${A.metadata.name}`);
    expect(describeBinding('uid-x', undefined)).toContain('binding uid uid-x');
    expect(describeBinding('', undefined)).toContain('before binding records');
  });
});
