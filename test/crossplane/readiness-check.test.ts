import { describe, expect, it } from '@jest/globals';
import { ReadinessCheck } from '../../constructs/crossplane/index.js';
import { ptInputErrors } from './_schema.js';

describe('ReadinessCheck', () => {
  it('renders every check type, valid for the P&T input CRD', () => {
    const checks = [
      ReadinessCheck.matchString('status.atProvider.state', 'succeeded'),
      ReadinessCheck.matchInteger('status.readyReplicas', 3),
      ReadinessCheck.nonEmpty('status.atProvider.id'),
      ReadinessCheck.matchTrue('status.ready'),
      ReadinessCheck.matchFalse('status.failed'),
      ReadinessCheck.matchCondition(),
      ReadinessCheck.matchCondition('Synced', 'False'),
      ReadinessCheck.none(),
    ];
    expect(checks.map((c) => c.type)).toEqual([
      'MatchString',
      'MatchInteger',
      'NonEmpty',
      'MatchTrue',
      'MatchFalse',
      'MatchCondition',
      'MatchCondition',
      'None',
    ]);
    expect(checks[5].toJson()).toEqual({ type: 'MatchCondition', matchCondition: { type: 'Ready', status: 'True' } });
    expect(checks[0].toJson()).toEqual({ type: 'MatchString', fieldPath: 'status.atProvider.state', matchString: 'succeeded' });
    expect(
      ptInputErrors({
        apiVersion: 'pt.fn.crossplane.io/v1beta1',
        kind: 'Resources',
        resources: [{ name: 'r', readinessChecks: checks.map((c) => c.toJson()) }],
      }),
    ).toEqual([]);
  });

  it('throws on bad arguments', () => {
    expect(() => ReadinessCheck.matchString('', 'x')).toThrow('ReadinessCheck.matchString(fieldPath): "" is not a Crossplane field path');
    expect(() => ReadinessCheck.matchInteger('status.x', 1.5)).toThrow('ReadinessCheck.matchInteger(matchInteger): 1.5 must be an integer');
    expect(() => ReadinessCheck.matchCondition('Ready', 'Yes')).toThrow('ReadinessCheck.matchCondition(status): "Yes" must be True, False or Unknown');
  });
});
