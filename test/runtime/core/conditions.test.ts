import { describe, expect, it } from '@jest/globals';
import { conditionsEqual, getCondition, isTrue, setCondition, setSummary } from '../../../runtime/core/conditions.js';

const t1 = new Date('2026-01-01T00:00:00Z');
const t2 = new Date('2026-01-01T01:00:00Z');

describe('conditions', () => {
  it('sets lastTransitionTime on first set and keeps it while the status does not change', () => {
    let c = setCondition(undefined, { type: 'Connected', status: 'False', reason: 'A', message: 'm1' }, t1);
    expect(getCondition(c, 'Connected')?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    c = setCondition(c, { type: 'Connected', status: 'False', reason: 'B', message: 'm2' }, t2);
    expect(getCondition(c, 'Connected')).toMatchObject({ reason: 'B', message: 'm2', lastTransitionTime: '2026-01-01T00:00:00Z' });
    c = setCondition(c, { type: 'Connected', status: 'True', reason: 'OK' }, t2);
    expect(getCondition(c, 'Connected')?.lastTransitionTime).toBe('2026-01-01T01:00:00Z');
    expect(isTrue(c, 'Connected')).toBe(true);
    expect(c).toHaveLength(1);
  });

  it('does not mutate the input list', () => {
    const orig = setCondition(undefined, { type: 'A', status: 'True' }, t1);
    const copy = JSON.parse(JSON.stringify(orig));
    setCondition(orig, { type: 'A', status: 'False' }, t2);
    expect(orig).toEqual(copy);
  });

  it('Ready summary is True only when every listed condition is True', () => {
    let c = setCondition(undefined, { type: 'SecretValid', status: 'True' }, t1);
    c = setSummary(c, ['SecretValid', 'Connected'], t1);
    expect(getCondition(c, 'Ready')).toMatchObject({ status: 'Unknown', reason: 'ConnectedUnknown' });
    c = setCondition(c, { type: 'Connected', status: 'False', reason: 'APIServiceExportNotFound', message: 'ask the provider' }, t1);
    c = setSummary(c, ['SecretValid', 'Connected'], t1);
    expect(getCondition(c, 'Ready')).toMatchObject({ status: 'False', reason: 'APIServiceExportNotFound', message: 'ask the provider' });
    c = setCondition(c, { type: 'Connected', status: 'True' }, t2);
    c = setSummary(c, ['SecretValid', 'Connected'], t2);
    expect(getCondition(c, 'Ready')).toMatchObject({ status: 'True', lastTransitionTime: '2026-01-01T01:00:00Z' });
    expect(c[0].type).toBe('Ready');
  });

  it('conditionsEqual ignores order but not content', () => {
    const a = setCondition(setCondition(undefined, { type: 'A', status: 'True' }, t1), { type: 'B', status: 'False' }, t1);
    const b = [...a].reverse();
    expect(conditionsEqual(a, b)).toBe(true);
    expect(conditionsEqual(a, setCondition(a, { type: 'B', status: 'False', message: 'x' }, t1))).toBe(false);
  });
});
