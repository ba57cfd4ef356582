import { describe, expect, it } from '@jest/globals';
import { compareSoak, type ClusterState, type SoakState } from '../../scripts/_soak-converge.js';
import { RssSampler, rssGrowthProblems, vmRssKb } from '../../scripts/_soak-rss.js';

const status = (spec: unknown) => ({ phase: 'Ready', size: (spec as { size: number }).size });
const creds = (claim: string, spec: unknown) => ({ password: `${claim}-${(spec as { size: number }).size}` });

/** One app cluster with claim a/x live (size 1) and a/y deleted, everything converged. */
function converged(): { state: SoakState; cluster: ClusterState & { down: unknown[]; downSecrets: unknown[] } } {
  const cluster = {
    cluster: 'app-1',
    live: new Map([['a/x', { size: 1 }]]),
    deleted: new Set(['a/y']),
    namespaces: { a: 'p-a' },
    down: [{ namespace: 'a', name: 'x', spec: { size: 1 }, status: { size: 1, phase: 'Ready' } }],
    downSecrets: [{ namespace: 'a', name: 'x-creds', data: { password: 'x-1' } }],
  };
  const state: SoakState = {
    clusters: [cluster],
    up: [{ namespace: 'p-a', name: 'x', spec: { size: 1 }, status: { phase: 'Ready', size: 1 } }],
    upSecrets: [{ namespace: 'p-a', name: 'x-creds', data: { password: 'x-1' } }],
    secretName: (c) => `${c}-creds`,
    expectedStatus: status,
    expectedSecret: creds,
  };
  return { state, cluster };
}

describe('soak convergence comparison', () => {
  it('finds nothing when model, app cluster and control plane agree (key order does not matter)', () => {
    expect(compareSoak(converged().state)).toEqual([]);
  });

  it('names lost, left-over and duplicated objects and each differing field', () => {
    const { state, cluster } = converged();
    const s: SoakState = {
      ...state,
      clusters: [
        {
          ...cluster,
          live: new Map([
            ['a/x', { size: 2 }],
            ['a/z', { size: 3 }],
          ]),
          down: [...cluster.down, { namespace: 'a', name: 'y', spec: { size: 9 }, deleting: true }],
          downSecrets: [{ namespace: 'a', name: 'x-creds', data: { password: 'stale' } }],
        },
      ],
      up: [...state.up, { namespace: 'p-a', name: 'y', spec: { size: 9 } }, { namespace: 'p-other', name: 'x', spec: { size: 1 } }],
    };
    const diffs = compareSoak(s).map((d) => `${d.object}: ${d.difference}`);
    expect(diffs).toEqual(
      expect.arrayContaining([
        'app-1 a/x (claim): spec downstream {"size":1} ≠ written {"size":2}',
        'app-1 a/x (claim): provider status upstream {"phase":"Ready","size":1} ≠ final {"phase":"Ready","size":2}',
        'app-1 a/x-creds (credential Secret): upstream data not final in keys password',
        'app-1 a/x-creds (credential Secret): data downstream ≠ upstream in keys password',
        'app-1 a/y (claim): deleted by the generator but still downstream (terminating)',
        'app-1 a/y (claim): deleted by the generator but still upstream (p-a/y)',
        'app-1 a/z (claim): lost: missing downstream',
        'app-1 a/z (claim): missing upstream (p-a/z)',
        'app-1 a/z-creds (credential Secret): missing upstream (p-a/z-creds): the provider has not written it',
        'app-1 a/z-creds (credential Secret): missing downstream',
        'control plane p-other/x (claim): upstream object in a namespace no app cluster is bound to (duplicate?)',
      ]),
    );
    expect(diffs).toHaveLength(11);
  });

  it('reports status drift, unexpected objects and a provider namespace bound twice', () => {
    const { state, cluster } = converged();
    const s: SoakState = {
      ...state,
      clusters: [
        {
          ...cluster,
          down: [
            { ...cluster.down[0]!, status: { phase: 'Pending' } },
            { namespace: 'a', name: 'q', spec: {} },
          ],
          downSecrets: [...cluster.downSecrets, { namespace: 'a', name: 'q-creds', data: {} }],
        },
        { ...cluster, cluster: 'app-2', live: new Map(), deleted: new Set(), down: [], downSecrets: [] },
      ],
    };
    const diffs = compareSoak(s).map((d) => `${d.object}: ${d.difference}`);
    expect(diffs).toEqual([
      'app-1 a/q (claim): unexpected downstream: the generator never created it',
      'app-1 a/x (claim): status downstream {"phase":"Pending"} ≠ upstream {"phase":"Ready","size":1}',
      'app-1 a/q-creds (credential Secret): unexpected downstream: no claim of the generator owns it',
      'app-2 namespace a: provider namespace p-a is also bound to app-1 a',
      'app-2 a/x (claim): unexpected upstream (p-a/x): duplicate or never created',
    ]);
  });
});

describe('soak RSS sampler', () => {
  it('reads VmRSS from /proc/<pid>/status text', () => {
    expect(vmRssKb('Name:\tnode\nVmHWM:\t  90000 kB\nVmRSS:\t   81234 kB\nThreads: 11\n')).toBe(81234);
    expect(vmRssKb('Name:\tzombie\n')).toBeNaN();
  });

  it('summarises start (marked), peak (all samples) and end; flags growth over the limit and vanished processes', () => {
    const kb: Record<number, number[]> = { 1: [200_000, 100_000, 150_000, 108_000], 2: [50_000, 51_200, 60_000, 57_344] };
    const at: Record<number, number> = { 1: 0, 2: 0 };
    const sampler = new RssSampler((pid) => {
      if (pid === 3) throw new Error('ENOENT');
      return `VmRSS:\t${kb[pid]![at[pid]!++]} kB\n`;
    });
    sampler.track('konnector', 1);
    sampler.track('backend', 2);
    sampler.track('gone', 3);
    expect(() => sampler.track('bad', 0)).toThrow('RssSampler.track: pid of bad is 0, not a process id');
    sampler.sample(1);
    sampler.markStart(2);
    sampler.sample(3);
    sampler.sample(4);
    const rows = sampler.summary();
    expect(rows.map((r) => [r.name, r.startMb, r.peakMb, r.endMb, r.samples])).toEqual([
      ['konnector', 100_000 / 1024, 200_000 / 1024, 108_000 / 1024, 4],
      ['backend', 50, 60_000 / 1024, 56, 4],
      ['gone', NaN, NaN, NaN, 0],
    ]);
    expect(rssGrowthProblems(rows, 0.1)).toEqual([
      'backend (pid 2): RSS grew from 50.0 MiB to 56.0 MiB (×1.12, limit ×1.10)',
      'gone (pid 3): no start sample (process gone?)',
    ]);
    expect(rssGrowthProblems(rows, 0.2)).toEqual(['gone (pid 3): no start sample (process gone?)']);
  });
});
