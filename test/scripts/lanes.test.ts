import { describe, expect, it } from '@jest/globals';
import {
  DEFAULT_SUITE_SECONDS,
  failureSummary,
  mergeDurations,
  needsPulumi,
  planLanes,
  startsCrossplane,
  startsNode,
  suiteStage,
  suitesOf,
} from '../../scripts/_lanes.js';

const suite = (path: string, text = 'startCluster({ name: "x" })') => ({ path, text });

describe('integration lanes (scripts/_lanes.ts)', () => {
  it('recognises the suites that start a real node', () => {
    expect(startsNode('const c = await startCluster({ name: "pods", nodes: 1 });')).toBe(true);
    expect(startsNode('startCluster({\n  name: "n",\n  nodes:   1,\n})')).toBe(true);
    expect(startsNode('await ensureNodeBinaries({ log })')).toBe(true);
    expect(startsNode('startCluster({ name: "cp" })')).toBe(false);
    expect(startsNode('startCluster({ nodes: 0 })')).toBe(false);
    // an object's own `nodes` field (a Redis-like spec) is not a node
    expect(startsNode("env = await startCatalogueCluster('x', '2.3');\nconst spec = { nodes: 3, maxMemory: '1Gi' };")).toBe(false);
    expect(startsNode("startCluster({ name: 'a' });\nconst spec = { nodes: 3 };")).toBe(false);
  });

  it('puts every node suite in lane 1 and spreads the rest longest first into the emptiest lane', () => {
    const plan = planLanes(
      [
        suite('a.test.ts'),
        suite('b.test.ts'),
        suite('c.test.ts'),
        suite('d.test.ts'),
        suite('node1.test.ts', 'startCluster({ nodes: 1 })'),
        suite('node2.test.ts', 'startCluster({ nodes: 1 })'),
      ],
      { 'a.test.ts': 300, 'b.test.ts': 200, 'c.test.ts': 100, 'd.test.ts': 50, 'node1.test.ts': 100, 'node2.test.ts': 100 },
      2,
    );
    expect(plan.nodeSuites).toEqual(['node1.test.ts', 'node2.test.ts']);
    // lane 1 starts at 200 (the node suites); a (300) goes to lane 2; b (200) to lane 1 (200 < 300);
    // c (100) to lane 2 (300 < 400); d (50) to lane 2 (400 = 400: the first of the emptiest wins → lane 1)
    // (node suites run late in their lane: they need the node's binaries, built in the background on a new machine)
    expect(plan.lanes.map((l) => [l.stages.kube, l.stages.late])).toEqual([
      [
        ['b.test.ts', 'd.test.ts'],
        ['node1.test.ts', 'node2.test.ts'],
      ],
      [['a.test.ts', 'c.test.ts'], []],
    ]);
    expect(suitesOf(plan.lanes[0]!)).toEqual(['b.test.ts', 'd.test.ts', 'node1.test.ts', 'node2.test.ts']);
    expect(plan.lanes.map((l) => l.expectedSeconds)).toEqual([450, 400]);
    expect(plan.unknown).toEqual([]);
  });

  it('runs the suites that need the Pulumi toolchain last in their lane', () => {
    expect(needsPulumi('bins = await ensurePulumiBinaries({ log });')).toBe(true);
    expect(needsPulumi("import { pulumiEnv } from '../../../runtime/realinfra/pulumi-build.js';")).toBe(false);
    const plan = planLanes(
      [
        suite('a.test.ts'),
        suite('up.test.ts', 'ensurePulumiBinaries({ log })'),
        suite('pods-up.test.ts', 'startCluster({ nodes: 1 }); ensurePulumiBinaries({ log })'),
      ],
      { 'a.test.ts': 100, 'up.test.ts': 50, 'pods-up.test.ts': 200 },
      2,
    );
    expect(plan.lanes.map((l) => [l.stages.kube, l.stages.pulumi])).toEqual([
      [[], ['pods-up.test.ts']],
      [['a.test.ts'], ['up.test.ts']],
    ]);
  });

  it('runs each suite in the stage of the last builds it needs: Pulumi, then a real node or an `@realinfra late` tag, then Crossplane 2.3', () => {
    expect(suiteStage('ensurePulumiBinaries({ log })')).toBe('pulumi');
    expect(suiteStage('startCluster({ nodes: 1 }); ensurePulumiBinaries({ log })')).toBe('pulumi');
    expect(suiteStage('// @realinfra pulumi (the sandbox runs `pulumi up`)')).toBe('pulumi');
    expect(suiteStage('startCluster({ nodes: 1 })')).toBe('late');
    expect(suiteStage('/**\n * Crossplane 1.20 (@realinfra late: built in the background)\n */')).toBe('late');
    expect(suiteStage("env = await startA9sCluster('a9s', '2.3'); // @realinfra late")).toBe('late');
    expect(suiteStage("startCatalogueCluster('x', '2.3')")).toBe('crossplane');
    expect(suiteStage('xp = await startCrossplane(cluster, { version: "2.3" })')).toBe('crossplane');
    expect(suiteStage('// @realinfra crossplane (through the topology helper)')).toBe('crossplane');
    expect(suiteStage('startCluster({ name: "cp" })')).toBe('kube');
    expect(suiteStage('// realinfra is late today; crossplane is mentioned')).toBe('kube');
    expect(startsCrossplane('import { startCrossplane } from "x";')).toBe(false); // named, not called
    const plan = planLanes(
      [suite('a.test.ts'), suite('old.test.ts', '// @realinfra late\n'), suite('xp.test.ts', "startCatalogueCluster('x', '2.3')")],
      { 'a.test.ts': 10, 'old.test.ts': 10, 'xp.test.ts': 10 },
      1,
    );
    expect(plan.lanes[0]!.stages).toEqual({ kube: ['a.test.ts'], crossplane: ['xp.test.ts'], late: ['old.test.ts'], pulumi: [] });
    expect(suitesOf(plan.lanes[0]!)).toEqual(['a.test.ts', 'xp.test.ts', 'old.test.ts']);
  });

  it('puts a pulumi-stage suite beside the node suites (another lane), where the last build is shared', () => {
    const plan = planLanes(
      [
        suite('node.test.ts', 'startCluster({ nodes: 1 })'),
        suite('a.test.ts'),
        suite('b.test.ts'),
        suite('sandbox.test.ts', '// @realinfra pulumi\n'),
        suite('up.test.ts', 'ensurePulumiBinaries({ log })'),
      ],
      { 'node.test.ts': 10, 'a.test.ts': 500, 'b.test.ts': 400, 'sandbox.test.ts': 300, 'up.test.ts': 100 },
      2,
    );
    // by total alone sandbox (300) and up (100) would go to lane 1 (10 + 400 < 500); they go to lane 2
    expect(plan.lanes.map((l) => l.stages)).toEqual([
      { kube: ['b.test.ts'], crossplane: [], late: ['node.test.ts'], pulumi: [] },
      { kube: ['a.test.ts'], crossplane: [], late: [], pulumi: ['sandbox.test.ts', 'up.test.ts'] },
    ]);
    // one lane: everything in it
    expect(suitesOf(planLanes([suite('node.test.ts', 'startCluster({ nodes: 1 })'), suite('up.test.ts', 'ensurePulumiBinaries()')], {}, 1).lanes[0]!)).toEqual([
      'node.test.ts',
      'up.test.ts',
    ]);
  });

  it('plans a suite without a recorded duration with the default and names it', () => {
    const plan = planLanes([suite('new.test.ts'), suite('old.test.ts')], { 'old.test.ts': 10 }, 2);
    expect(plan.unknown).toEqual(['new.test.ts']);
    expect(plan.lanes.map((l) => l.expectedSeconds).sort((a, b) => a - b)).toEqual([10, DEFAULT_SUITE_SECONDS]);
  });

  it('one lane keeps every suite; empty lanes are dropped', () => {
    expect(planLanes([suite('a.test.ts'), suite('b.test.ts')], {}, 1).lanes).toHaveLength(1);
    expect(planLanes([suite('a.test.ts')], {}, 4).lanes).toHaveLength(1);
  });

  it('refuses a lane count that is not a whole number ≥ 1, naming it', () => {
    expect(() => planLanes([], {}, 0)).toThrow('lanes: expected a whole number ≥ 1, got 0');
    expect(() => planLanes([], {}, 1.5)).toThrow('got 1.5');
  });

  it('records the durations of passed suites relative to the repo, keeping the others', () => {
    const merged = mergeDurations(
      { 'test/integration/old.test.ts': 42, 'test/integration/a.test.ts': 1 },
      [
        {
          numPassedTests: 2,
          numFailedTests: 1,
          numPendingTests: 0,
          numTotalTests: 3,
          testResults: [
            { name: '/repo/test/integration/a.test.ts', status: 'passed', startTime: 1_000, endTime: 61_400 },
            { name: '/repo/test/integration/b.test.ts', status: 'failed', startTime: 1_000, endTime: 5_000 },
          ],
        },
      ],
      '/repo',
    );
    expect(merged).toEqual({ 'test/integration/a.test.ts': 60, 'test/integration/old.test.ts': 42 });
  });

  it('names every failed suite, its failed tests and the first lines of each failure (more of the first, once each text), for the log tail', () => {
    const lines = failureSummary(
      [
        {
          numPassedTests: 1,
          numFailedTests: 1,
          numPendingTests: 0,
          numTotalTests: 2,
          testResults: [
            {
              name: '/repo/test/integration/a.test.ts',
              status: 'failed',
              startTime: 0,
              endTime: 1,
              assertionResults: [
                { fullName: 'a works', status: 'passed' },
                { fullName: 'a binds', status: 'failed', failureMessages: ['\u001b[31mError: timed out\u001b[39m\n\n  at x\n  at y\n  at z'] },
                { fullName: 'a binds again', status: 'failed', failureMessages: ['Error: timed out\n\n  at x\n  at y\n  at z'] },
                { fullName: 'a unbinds', status: 'failed', failureMessages: ['Error: refused\n  at q\n  at r'] },
              ],
            },
            { name: '/repo/test/integration/b.test.ts', status: 'passed', startTime: 0, endTime: 1, assertionResults: [] },
            { name: '/repo/test/integration/c.test.ts', status: 'failed', startTime: 0, endTime: 1, message: 'beforeAll: port in use', assertionResults: [] },
          ],
        },
      ],
      '/repo',
      2,
      3,
    );
    expect(lines).toEqual([
      '  FAIL test/integration/a.test.ts',
      '    ✕ a binds',
      '      Error: timed out',
      '        at x',
      '        at y',
      '    ✕ a binds again',
      '      (the same failure as above)',
      '    ✕ a unbinds',
      '      Error: refused',
      '        at q',
      '  FAIL test/integration/c.test.ts',
      '      beforeAll: port in use',
    ]);
  });
});
