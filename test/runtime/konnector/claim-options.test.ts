import { describe, expect, it } from '@jest/globals';
import { applyPreserving, claimOptions, parsePreservePath, sourceStamp } from '../../../runtime/konnector/_claim-options.js';
import type { KubeObject } from '../../../runtime/core/client.js';

const OWNER = 'klutch.anynines.com/resource-owner';

const secret = (
  data: Record<string, string> | undefined,
  labels?: Record<string, string>,
  annotations?: Record<string, string>,
  extra: Record<string, unknown> = {},
): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: { name: 's', namespace: 'ns', labels, annotations },
    ...(data ? { data } : {}),
    ...extra,
  }) as KubeObject;

describe('claimOptions', () => {
  it('defaults: no replace, recreate when the consumer deletes, update in place, nothing preserved', () => {
    expect(claimOptions({})).toEqual({
      replaceExisting: false,
      recreateWhenConsumerSideDeleted: true,
      alwaysRecreate: false,
      preserving: [],
      invalidPreserving: [],
    });
    expect(claimOptions({ onConflict: {} }).recreateWhenConsumerSideDeleted).toBe(true);
  });

  it('reads every option and separates invalid preserving paths', () => {
    const o = claimOptions({
      create: { replaceExisting: true },
      onConflict: { recreateWhenConsumerSideDeleted: false },
      update: { alwaysRecreate: true, preserving: ['data.keep', 'metadata.name', 'metadata.labels.team', ''] },
    });
    expect(o.replaceExisting).toBe(true);
    expect(o.recreateWhenConsumerSideDeleted).toBe(false);
    expect(o.alwaysRecreate).toBe(true);
    expect(o.preserving).toEqual([
      { field: 'data', key: 'keep' },
      { field: 'metadata.labels', key: 'team' },
    ]);
    expect(o.invalidPreserving).toEqual(['metadata.name', '']);
  });
});

describe('parsePreservePath', () => {
  it('top-level fields, one key of a map field (the key may contain dots), label and annotation keys', () => {
    expect(parsePreservePath('data')).toEqual({ field: 'data' });
    expect(parsePreservePath('.data.foo')).toEqual({ field: 'data', key: 'foo' });
    expect(parsePreservePath('data.tls.crt')).toEqual({ field: 'data', key: 'tls.crt' });
    expect(parsePreservePath('metadata.labels')).toEqual({ field: 'metadata.labels' });
    expect(parsePreservePath('metadata.labels.app.kubernetes.io/name')).toEqual({ field: 'metadata.labels', key: 'app.kubernetes.io/name' });
    expect(parsePreservePath('metadata.annotations.a/b')).toEqual({ field: 'metadata.annotations', key: 'a/b' });
  });

  it('rejects metadata other than labels/annotations, type meta, status and empty parts', () => {
    for (const p of ['metadata', 'metadata.name', 'metadata.labels.', 'apiVersion', 'kind', 'status.phase', '', 'data.', '$.data', 'a[0]']) {
      expect(parsePreservePath(p)).toBeUndefined();
    }
  });
});

describe('applyPreserving', () => {
  const marks = { [OWNER]: 'Provider' };
  const P = (...ps: string[]) => ps.map((p) => parsePreservePath(p)!);

  it('no paths: returns desired unchanged', () => {
    const d = secret({ a: '1' });
    expect(applyPreserving(d, secret({ a: '2' }), [])).toBe(d);
  });

  it('a key present on the target keeps its value; other keys come from desired; inputs are not modified', () => {
    const d = secret({ keep: 'new', other: 'new' });
    const t = secret({ keep: 'mine', other: 'old', extra: 'x' });
    const out = applyPreserving(d, t, P('data.keep'), marks);
    expect(out.data).toEqual({ keep: 'mine', other: 'new' });
    expect(d.data).toEqual({ keep: 'new', other: 'new' });
    expect(t.data).toEqual({ keep: 'mine', other: 'old', extra: 'x' });
  });

  it('a key absent on the target stays absent; an emptied map is dropped', () => {
    expect(applyPreserving(secret({ keep: 'new', other: '1' }), secret({ other: '0' }), P('data.keep')).data).toEqual({ other: '1' });
    expect('data' in applyPreserving(secret({ keep: 'new' }), secret(undefined), P('data.keep'))).toBe(false);
    // A key only the target has is added back.
    expect(applyPreserving(secret(undefined), secret({ keep: 'mine' }), P('data.keep')).data).toEqual({ keep: 'mine' });
  });

  it('whole top-level fields', () => {
    expect(applyPreserving(secret({ a: '1' }), secret({ b: '2' }), P('data')).data).toEqual({ b: '2' });
    expect('data' in applyPreserving(secret({ a: '1' }), secret(undefined), P('data'))).toBe(false);
    expect(
      (
        applyPreserving(secret({}, undefined, undefined, { type: 'Opaque' }), secret({}, undefined, undefined, { type: 'kubernetes.io/tls' }), P('type')) as {
          type?: string;
        }
      ).type,
    ).toBe('kubernetes.io/tls');
  });

  it('labels and annotations by key or whole; the konnector marks always win', () => {
    const d = secret({}, { app: 'x', team: 'provider' }, { [OWNER]: 'Provider', note: 'p' });
    const t = secret({}, { team: 'consumer' }, { note: 'c', [OWNER]: 'Consumer', mine: 'y' });
    const byKey = applyPreserving(d, t, P('metadata.labels.team', 'metadata.annotations.note'), marks);
    expect(byKey.metadata.labels).toEqual({ app: 'x', team: 'consumer' });
    expect(byKey.metadata.annotations).toEqual({ [OWNER]: 'Provider', note: 'c' });
    const whole = applyPreserving(d, t, P('metadata.labels', 'metadata.annotations'), marks);
    expect(whole.metadata.labels).toEqual({ team: 'consumer' });
    expect(whole.metadata.annotations).toEqual({ note: 'c', [OWNER]: 'Provider', mine: 'y' });
    // A label absent on the target is removed from desired.
    expect(applyPreserving(secret({}, { team: 'p' }), secret({}), P('metadata.labels.team')).metadata.labels).toBeUndefined();
  });

  it('a key path into a field that is not a map is skipped', () => {
    const d = { ...secret(undefined), secrets: [{ name: 'a' }] } as KubeObject;
    const t = { ...secret(undefined), secrets: [{ name: 'b' }] } as KubeObject;
    expect((applyPreserving(d, t, P('secrets.name')) as { secrets?: unknown }).secrets).toEqual([{ name: 'a' }]);
    expect((applyPreserving(d, t, P('secrets')) as { secrets?: unknown }).secrets).toEqual([{ name: 'b' }]);
  });
});

describe('sourceStamp', () => {
  it('uid/resourceVersion, undefined when either is missing', () => {
    expect(sourceStamp('u', '12')).toBe('u/12');
    expect(sourceStamp('u', undefined)).toBeUndefined();
    expect(sourceStamp(undefined, '1')).toBeUndefined();
  });
});
