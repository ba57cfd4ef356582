import { describe, expect, test } from '@jest/globals';
import { KonnectorFlowControl, type KonnectorFlowControlProps } from '../../constructs/runtime/index.js';
import { chart, find, synth } from './_helpers.js';

function flow(props?: KonnectorFlowControlProps) {
  const c = chart();
  const f = new KonnectorFlowControl(c, 'F', props);
  return { f, objs: synth(c) };
}

describe('KonnectorFlowControl', () => {
  test('a limited, queued priority level with one flow per konnector, after the kube-system schemas', () => {
    const { objs } = flow({ exportedApiGroups: ['anynines.com', 'mangodb.com'] });
    const pl = find(objs, 'PriorityLevelConfiguration', 'klutch-konnectors');
    expect(pl.apiVersion).toBe('flowcontrol.apiserver.k8s.io/v1');
    expect(pl.spec).toEqual({
      type: 'Limited',
      limited: {
        nominalConcurrencyShares: 40,
        lendablePercent: 50,
        limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 6, queueLengthLimit: 50 } },
      },
    });
    const fs = find(objs, 'FlowSchema', 'klutch-konnectors');
    expect(fs.spec.priorityLevelConfiguration).toEqual({ name: 'klutch-konnectors' });
    expect(fs.spec.matchingPrecedence).toBe(1000);
    expect(fs.spec.distinguisherMethod).toEqual({ type: 'ByUser' });
    expect(fs.spec.rules[0].subjects).toEqual([{ kind: 'Group', group: { name: 'system:serviceaccounts' } }]);
    expect(fs.spec.rules[0].resourceRules[0].apiGroups).toEqual(['klutch.anynines.com', 'anynines.com', 'mangodb.com']);
    const cp = find(objs, 'FlowSchema', 'klutch-konnectors-control-plane');
    expect(cp.spec.matchingPrecedence).toBe(950);
    expect(cp.spec.priorityLevelConfiguration).toEqual({ name: 'workload-high' });
    expect(cp.spec.rules[0].subjects).toEqual([
      { kind: 'ServiceAccount', serviceAccount: { namespace: 'klutch-system', name: '*' } },
      { kind: 'ServiceAccount', serviceAccount: { namespace: 'crossplane-system', name: '*' } },
    ]);
  });

  test.each([
    [{ handSize: 9, queues: 8 }, /KonnectorFlowControlProps\.handSize: 9 must be an integer between 1 and 8/],
    [{ matchingPrecedence: 500 }, /KonnectorFlowControlProps\.matchingPrecedence: 500 must be an integer between 951 and 9999/],
    [{ lendablePercent: 101 }, /lendablePercent: 101/],
    [{ exportedApiGroups: ['Not_A_Group'] }, /exportedApiGroups\[0\]: "Not_A_Group" is not a DNS-1123 subdomain/],
    [{ exportedApiGroups: ['klutch.anynines.com'] }, /must not repeat klutch.anynines.com/],
    [{ controlPlaneNamespaces: [] }, /controlPlaneNamespaces: \[\] must list at least one namespace/],
    [{ name: 'Konnectors' }, /KonnectorFlowControlProps\.name: "Konnectors" is not a DNS-1123 label/],
  ])('refuses %j naming the prop and value', (props, msg) => {
    expect(() => flow(props as KonnectorFlowControlProps)).toThrow(msg);
  });
});
