import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../../../runtime/core/client.js';
import { consumerUpdateConcerns, specMayDiffer } from '../../../runtime/konnector/export-events.js';
import { SYNCER_FINALIZER } from '../../../runtime/konnector/types.js';
import { widget } from './_export-fixtures.js';

const synced = (extra: Partial<KubeObject> & { spec?: unknown; status?: unknown } = {}): KubeObject =>
  widget('shop', 'db', { spec: { size: 1 }, ...extra, metadata: { generation: 1, finalizers: [SYNCER_FINALIZER], resourceVersion: '2', ...extra.metadata } });

describe('consumerUpdateConcerns', () => {
  it("the konnector's own finalizer update concerns neither side", () => {
    const before = widget('shop', 'db', { metadata: { generation: 1 }, spec: { size: 1 } });
    expect(consumerUpdateConcerns(before, synced())).toEqual({ up: false, down: false });
  });

  it('a spec change (a new generation) concerns the spec side', () => {
    expect(consumerUpdateConcerns(synced(), synced({ metadata: { generation: 2 }, spec: { size: 2 } }))).toEqual({ up: true, down: false });
  });

  it('objects without a generation are always passed to the spec side', () => {
    const noGen = (size: number): KubeObject => widget('shop', 'db', { metadata: { finalizers: [SYNCER_FINALIZER] }, spec: { size } });
    expect(consumerUpdateConcerns(noGen(1), noGen(1)).up).toBe(true);
    expect(specMayDiffer(noGen(1), noGen(1))).toBe(true);
  });

  it('the deletion, or a finalizer list without the konnector finalizer, concerns the spec side', () => {
    expect(consumerUpdateConcerns(synced(), synced({ metadata: { deletionTimestamp: '2026-01-01T00:00:00Z' } })).up).toBe(true);
    expect(consumerUpdateConcerns(synced(), synced({ metadata: { finalizers: ['other/f'] } })).up).toBe(true);
  });

  it('a label change alone concerns neither side (labels cross when the copy is created, never later)', () => {
    expect(consumerUpdateConcerns(synced(), synced({ metadata: { labels: { team: 'a' } } }))).toEqual({ up: false, down: false });
  });

  it('a status written on the app cluster concerns the status side, which writes the provider status back', () => {
    const before = synced({ status: { phase: 'done' } });
    expect(consumerUpdateConcerns(before, synced({ status: { phase: 'forged' } }))).toEqual({ up: false, down: true });
    expect(consumerUpdateConcerns(before, synced({ status: { phase: 'done' } }))).toEqual({ up: false, down: false });
  });

  it('a resync (the cached object as old and new) concerns both sides', () => {
    const o = synced();
    expect(consumerUpdateConcerns(o, o)).toEqual({ up: true, down: true });
  });
});
