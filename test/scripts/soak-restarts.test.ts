import { describe, expect, it } from '@jest/globals';
import { leaseSanity, restartTarget, restartTicks, type ReplicaView } from '../../scripts/_soak-restarts.js';
import { RssSampler, rssChecks, type RssSummary } from '../../scripts/_soak-rss.js';

describe('soak restart schedule', () => {
  it('alternates konnector and backend replica: konnectors in turn, the backend leader and a standby in turn', () => {
    const seq = Array.from({ length: 12 }, (_, i) => restartTarget(i, 3, 2)).map((t) => (t.kind === 'konnector' ? `k${t.index}` : t.role));
    expect(seq).toEqual(['k0', 'leader', 'k1', 'standby', 'k2', 'leader', 'k0', 'standby', 'k1', 'leader', 'k2', 'standby']);
  });

  it('restarts only the kind there is, a single backend always as the leader, and names a bad argument', () => {
    expect([0, 1, 2, 3].map((i) => restartTarget(i, 2, 0))).toEqual([
      { kind: 'konnector', index: 0 },
      { kind: 'konnector', index: 1 },
      { kind: 'konnector', index: 0 },
      { kind: 'konnector', index: 1 },
    ]);
    expect([0, 1].map((i) => restartTarget(i, 0, 2))).toEqual([
      { kind: 'backend', role: 'leader' },
      { kind: 'backend', role: 'standby' },
    ]);
    expect([1, 3].map((i) => restartTarget(i, 1, 1))).toEqual([
      { kind: 'backend', role: 'leader' },
      { kind: 'backend', role: 'leader' },
    ]);
    expect(() => restartTarget(-1, 3, 2)).toThrow('restartTarget: tick is -1, not an integer >= 0');
    expect(() => restartTarget(0, 1.5, 2)).toThrow('restartTarget: konnectors is 1.5, not an integer >= 0');
    expect(() => restartTarget(0, 0, 0)).toThrow('restartTarget: no konnector and no backend to restart');
  });

  it('ticks every interval strictly inside the churn; none when off', () => {
    expect(restartTicks(120_000, 45_000)).toEqual([45_000, 90_000]);
    expect(restartTicks(90_000, 45_000)).toEqual([45_000]);
    expect(restartTicks(30_000, 45_000)).toEqual([]);
    expect(restartTicks(120_000, 0)).toEqual([]);
    expect(() => restartTicks(120_000, -1)).toThrow('restartTicks: everyMs is -1, must be >= 0');
  });
});

describe('soak leader Lease sanity', () => {
  const now = Date.parse('2026-11-26T09:00:00.000Z');
  const lease = (holderIdentity: string, renewedSecondsAgo = 1) => ({
    holderIdentity,
    leaseDurationSeconds: 15,
    renewTime: new Date(now - renewedSecondsAgo * 1000).toISOString().replace(/Z$/, '000Z'),
  });
  const replicas = (roles: [string | undefined, string | undefined], alive: [boolean, boolean] = [true, true]): ReplicaView[] => [
    { name: 'backend-1', identity: 'soak-backend-1-2', alive: alive[0], role: roles[0] },
    { name: 'backend-2', identity: 'soak-backend-2-1', alive: alive[1], role: roles[1] },
  ];

  it('names the leader when the Lease holder runs, says leader and the other replica stands by', () => {
    expect(leaseSanity(lease('soak-backend-2-1'), replicas(['role: standby (leader: soak-backend-2-1)', 'role: leader']), now)).toEqual({
      leader: 'backend-2',
    });
  });

  it('explains an expired, unknown, dead or contradicted holder', () => {
    const r = replicas(['role: standby (leader: soak-backend-2-1)', 'role: leader']);
    expect(leaseSanity(undefined, r, now)).toEqual({ problem: 'the Lease has no holder' });
    expect(leaseSanity(lease('soak-backend-2-1', 20), r, now)).toEqual({ problem: 'the Lease held by soak-backend-2-1 expired 5.0 s ago' });
    expect(leaseSanity(lease('soak-backend-1-1'), r, now)).toEqual({
      problem: 'the Lease holder soak-backend-1-1 is none of the replicas (soak-backend-1-2, soak-backend-2-1)',
    });
    expect(leaseSanity(lease('soak-backend-2-1'), replicas([undefined, undefined], [true, false]), now)).toEqual({
      problem: 'the Lease holder backend-2 (soak-backend-2-1) is not running',
    });
    expect(leaseSanity(lease('soak-backend-2-1'), replicas(['role: leader', 'role: standby (leader: x)']), now)).toEqual({
      problem: 'the Lease names backend-2, /readyz says leader: backend-1',
    });
    expect(leaseSanity(lease('soak-backend-2-1'), replicas([undefined, 'role: leader']), now)).toEqual({
      problem: 'not standby: backend-1 (unreachable)',
    });
    expect(leaseSanity({ holderIdentity: 'x' }, r, now)).toEqual({
      problem: 'the Lease held by x has renewTime undefined and leaseDurationSeconds undefined',
    });
  });
});

describe('soak RSS per process incarnation', () => {
  it('stops reading a retired incarnation, marks the start of named ones only, and reports start and end times', () => {
    const kb: Record<number, number> = { 1: 100_000, 2: 50_000, 3: 60_000 };
    const sampler = new RssSampler((pid) => `VmRSS:\t${kb[pid]} kB\n`);
    sampler.track('konnector', 1);
    sampler.track('backend-1', 2);
    expect(() => sampler.track('konnector', 9)).toThrow('RssSampler.track: konnector is tracked already (name each incarnation)');
    sampler.markStart(10);
    sampler.retire('konnector');
    expect(() => sampler.retire('nope')).toThrow('RssSampler.retire: nope is not tracked');
    sampler.track('konnector #2', 3);
    expect(Object.keys(sampler.sample(20))).toEqual(['backend-1', 'konnector #2']);
    kb[3] = 61_440;
    sampler.markStart(30, ['konnector #2']);
    kb[2] = 55_000;
    sampler.sample(40);
    const rows = Object.fromEntries(sampler.summary().map((r) => [r.name, [r.startAt, r.endAt, r.startMb, r.endMb, r.samples]]));
    expect(rows).toEqual({
      konnector: [10, 10, 100_000 / 1024, 100_000 / 1024, 1],
      'backend-1': [10, 40, 50_000 / 1024, 55_000 / 1024, 4],
      'konnector #2': [30, 40, 60, 60, 3],
    });
  });

  it('judges processes that ran from the start; killed and re-based ones only with a long enough series', () => {
    const row = (name: string, startAt: number, endAt: number): RssSummary => ({
      name,
      pid: 1,
      startMb: 10,
      peakMb: 10,
      endMb: 10,
      startAt,
      endAt,
      ratio: 1,
      samples: 2,
    });
    const rows = [
      row('konnector a', 0, 50_000),
      row('konnector b', 0, 150_000),
      row('konnector a #2', 60_000, 200_000),
      row('konnector b #2', NaN, 200_000),
      row('backend-1', 0, 10_000),
      row('backend-1 #2', 90_000, 200_000),
      row('backend-2', 190_000, 200_000),
    ];
    const { checked, excluded } = rssChecks(rows, {
      killed: new Set(['konnector a', 'konnector b']),
      rebased: new Map([
        ['konnector a #2', 'restarted'],
        ['konnector b #2', 'restarted'],
        ['backend-1 #2', 'restarted'],
        ['backend-2', 'became the leader at 01:52'],
      ]),
      minSpanMs: 120_000,
    });
    expect(checked.map((r) => r.name)).toEqual(['konnector b', 'konnector a #2', 'backend-1']);
    expect(excluded.map((x) => `${x.row.name}: ${x.reason}`)).toEqual([
      'konnector a: killed (kill -9) by the restart schedule; 50 s from its start sample to its last, less than the 120 s a growth verdict needs',
      'konnector b #2: restarted; no start sample before its last sample',
      'backend-1 #2: restarted; 110 s from its start sample to its last, less than the 120 s a growth verdict needs',
      'backend-2: became the leader at 01:52; 10 s from its start sample to its last, less than the 120 s a growth verdict needs',
    ]);
  });
});
