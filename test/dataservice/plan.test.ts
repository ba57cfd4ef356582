import { describe, expect, it } from '@jest/globals';
import { Plan, PlanSet, PlanTopology } from '../../constructs/dataservice/index.js';

const ORDER = ['nano', 'small', 'medium', 'big'];
const plan = (name: string, topology: PlanTopology, size: string, extra: Partial<ConstructorParameters<typeof Plan>[0]> = {}) =>
  new Plan({ name, topology, size: { name: size }, ...extra });

describe('PlanTopology', () => {
  it('has single (1 node) and multi-node replica/cluster (3 nodes) topologies', () => {
    expect([PlanTopology.SINGLE.multiNode, PlanTopology.SINGLE.defaultReplicas]).toEqual([false, 1]);
    expect([PlanTopology.REPLICA.multiNode, PlanTopology.REPLICA.defaultReplicas]).toEqual([true, 3]);
    expect([PlanTopology.CLUSTER.multiNode, PlanTopology.CLUSTER.defaultReplicas]).toEqual([true, 3]);
    expect(PlanTopology.of('sharded', { multiNode: true, defaultReplicas: 6 }).defaultReplicas).toBe(6);
  });
  it('rejects bad custom topologies', () => {
    expect(() => PlanTopology.of('Sharded', { multiNode: true, defaultReplicas: 3 })).toThrow('PlanTopology.of(name): "Sharded"');
    expect(() => PlanTopology.of('solo', { multiNode: false, defaultReplicas: 2 })).toThrow('defaultReplicas: 2 must be 1');
    expect(() => PlanTopology.of('x', { multiNode: true, defaultReplicas: 0 })).toThrow('defaultReplicas: 0 must be an integer >= 1');
  });
});

describe('Plan', () => {
  it('takes replicas from the topology unless given, and keeps size and flags', () => {
    const p = plan('pg-replica-small-ssl', PlanTopology.REPLICA, 'small', {
      flags: ['ssl'],
      size: { name: 'small', cpu: '2', memory: '2Gi', storage: '10Gi' },
    });
    expect(p.replicas).toBe(3);
    expect(p.multiNode).toBe(true);
    expect(p.hasFlag('ssl')).toBe(true);
    expect(p.hasFlag('bionic')).toBe(false);
    expect(p.size).toEqual({ name: 'small', cpu: '2', memory: '2Gi', storage: '10Gi' });
    expect(plan('pg-cluster-big', PlanTopology.CLUSTER, 'big', { replicas: 5 }).replicas).toBe(5);
  });
  it('rejects bad props, naming the prop and the value', () => {
    expect(() => plan('Bad_Name', PlanTopology.SINGLE, 'small')).toThrow('PlanProps.name: "Bad_Name"');
    expect(() => new Plan({ name: 'p', topology: 'single' as never, size: { name: 'small' } })).toThrow('Plan("p").topology: "single" must be a PlanTopology');
    expect(() => plan('p', PlanTopology.SINGLE, 'small', { replicas: 3 })).toThrow('Plan("p").replicas: 3 must be 1');
    expect(() => plan('p', PlanTopology.REPLICA, 'small', { replicas: 1 })).toThrow('Plan("p").replicas: 1 must be >= 2');
    expect(() => plan('p', PlanTopology.SINGLE, 'small', { size: { name: 'small', memory: '2 GB' } })).toThrow('Plan("p").size.memory: "2 GB"');
    expect(() => plan('p', PlanTopology.SINGLE, 'small', { flags: ['ssl', 'ssl'] })).toThrow('Plan("p").flags: "ssl" is listed twice');
    expect(() => plan('p', PlanTopology.SINGLE, 'small', { upgradesTo: ['p'] })).toThrow('Plan("p").upgradesTo: "p" is the plan itself');
  });
});

describe('PlanSet', () => {
  const plans = [
    plan('x-single-nano', PlanTopology.SINGLE, 'nano'),
    plan('x-single-small', PlanTopology.SINGLE, 'small'),
    plan('x-replica-small', PlanTopology.REPLICA, 'small'),
    plan('x-replica-big', PlanTopology.REPLICA, 'big'),
  ];

  it('derives upgrade paths from the size order: every plan of the next size that exists', () => {
    const set = new PlanSet('plans', plans, ORDER);
    expect(set.upgradeTargets('x-single-nano')).toEqual(['x-single-small', 'x-replica-small']);
    expect(set.upgradeTargets('x-single-small')).toEqual(['x-replica-big']);
    expect(set.upgradeTargets('x-replica-big')).toEqual([]);
    expect(set.isUpgrade('x-single-nano', 'x-replica-big')).toBe(true);
    expect(set.isDowngrade('x-replica-big', 'x-single-small')).toBe(true);
    // Same size: neither an upgrade nor a downgrade (topology rules decide).
    expect(set.isDowngrade('x-replica-small', 'x-single-small')).toBe(false);
    expect(set.isUpgrade('x-single-small', 'x-replica-small')).toBe(false);
    expect(set.downgrades()).toEqual(
      new Map([
        ['x-single-small', ['x-single-nano']],
        ['x-replica-small', ['x-single-nano']],
        ['x-replica-big', ['x-single-nano', 'x-single-small', 'x-replica-small']],
      ]),
    );
  });

  it('follows explicit upgrade paths transitively', () => {
    const set = new PlanSet(
      'plans',
      [
        plan('a', PlanTopology.SINGLE, 'small', { upgradesTo: ['b'] }),
        plan('b', PlanTopology.SINGLE, 'small', { upgradesTo: ['c'] }),
        plan('c', PlanTopology.SINGLE, 'big', { upgradesTo: [] }),
      ],
      ORDER,
    );
    expect(set.isUpgrade('a', 'c')).toBe(true);
    expect(set.isDowngrade('c', 'a')).toBe(true);
    expect(set.isDowngrade('a', 'c')).toBe(false);
  });

  it('throws on duplicate plans', () => {
    expect(() => new PlanSet('DataServiceProps.plans', [plans[0], plan('x-single-nano', PlanTopology.SINGLE, 'nano')], ORDER)).toThrow(
      'DataServiceProps.plans[1].name: "x-single-nano" is a duplicate plan',
    );
  });

  it('throws on an upgrade target that is referenced but not defined', () => {
    expect(() => new PlanSet('DataServiceProps.plans', [plan('a', PlanTopology.SINGLE, 'small', { upgradesTo: ['a-big'] })], ORDER)).toThrow(
      'DataServiceProps.plans: Plan("a").upgradesTo: "a-big" is referenced but not defined',
    );
  });

  it('throws on a cycle in plan upgrades, naming the cycle', () => {
    expect(
      () =>
        new PlanSet(
          'DataServiceProps.plans',
          [
            plan('a', PlanTopology.SINGLE, 'small', { upgradesTo: ['b'] }),
            plan('b', PlanTopology.SINGLE, 'medium', { upgradesTo: ['c'] }),
            plan('c', PlanTopology.SINGLE, 'big', { upgradesTo: ['a'] }),
          ],
          ORDER,
        ),
    ).toThrow('"a -> b -> c -> a" is a cycle in plan upgrades');
  });

  it('throws on sizes missing from the size order, and on an empty plan list', () => {
    expect(() => new PlanSet('plans', [plan('a', PlanTopology.SINGLE, 'huge')], ORDER)).toThrow('Plan("a").size.name: "huge" is not in the size order');
    expect(() => new PlanSet('plans', [], ORDER)).toThrow('plans: [] must list at least one Plan');
    expect(() => new PlanSet('plans', [{ name: 'a' } as never], ORDER)).toThrow('plans[0]: {"name":"a"} must be a Plan');
  });
});
