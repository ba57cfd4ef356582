/**
 * scripts/_bench-sandbox.ts: the command line of `npm run bench:sandbox`, the sandbox's step lines (copied from a real
 * `npm run sandbox` of 2026-11-29), medians and spreads, the comparison with the last record and the records.
 */
import { describe, expect, it } from '@jest/globals';
import {
  BenchArgsError,
  benchRecord,
  compare,
  formatTable,
  parseBenchArgs,
  parseConnectLine,
  parseStepLine,
  PSQL_ROW,
  CLAIM_ROW,
  psqlFigure,
  RunParser,
  spread,
  summarize,
  type BenchRecord,
} from '../../scripts/_bench-sandbox.js';
import { figureEntryProblems, renderMarks } from '../../scripts/_doc-figures.js';

// A real default run's output (paths, ports and the password shortened)
const OUTPUT = `klutch-kit sandbox: state under /root/.cache/klutch-kit/sandbox
oidc-provider WARNING: Unsupported runtime. Use Node.js v22.x LTS, or a later LTS release.
[1/8] clusters: control plane + 2 app clusters (real kube-apiserver, etcd, kube-controller-manager) … done in 5.4 s (+5.4 s)
      sandbox-cp: https://127.0.0.1:35513  kubeconfig /tmp/klutch-kit-sandbox-cp-yIiH62/kubeconfig
[2/8] OIDC provider (oidc-provider, in this process) … done in 0.1 s (+5.5 s)
      issuer http://127.0.0.1:41143
[3/8] Crossplane 2.3 on the control plane, catalogue package pushed to its registry, local a8s operator … done in 4.1 s (+9.7 s)
      Crossplane v2.3.4, registry 127.0.0.1:38719
[4/8] pulumi up (stacks/main.ts, manifests: runtime, catalogue: Configuration package); Crossplane installed the packages … done in 19.1 s (+28.8 s)
      resources: {"create":83}  (log /root/.cache/klutch-kit/sandbox/run-PTBPvC/logs/pulumi-up.log)
[5/8] backend + 2 konnectors as local processes (tsx) … done in 3.2 s (+32.0 s)
[6/8] kubectl-bind: both app clusters bound (postgresqlinstances, servicebindings) … done in 3.9 s (+35.9 s)
[7/8] PostgresqlInstance + ServiceBinding in sandbox-app-1: through real Crossplane to a local PostgreSQL, credentials back down
        8.1 s  Secret shop/orders-db-binding-service-binding in app-1
        8.2 s  first connection with those credentials

  connect (46.1 s after start; claim → first connection 8.2 s):
  PGPASSWORD='x' psql -h 127.0.0.2 -p 5432 -U binding_036cbd1e139a a9s_apps_default_db

[8/8] plan postgresql-single-nano → postgresql-single-small in sandbox-app-1 reached the a8s object … done in 1.3 s
      a8s Postgresql cluster-f56c642565a8-shop/orders-db: replicas 1  →  replicas 1

Klutch sandbox is up.
  backend           http://127.0.0.1:42177`.split('\n');
const line = (start: string) => OUTPUT.find((l) => l.trimStart().startsWith(start))!;

describe('the sandbox output', () => {
  it('parses a step line into number, short name and seconds', () => {
    expect(parseStepLine(line('[3/8]'))).toEqual({
      n: 3,
      total: 8,
      name: 'Crossplane 2.3 on the control plane, catalogue package pushed to its registry, local a8s operator',
      label: 'Crossplane 2.3 on the control plane',
      seconds: 4.1,
    });
    expect(parseStepLine(line('[4/8]'))?.label).toBe('pulumi up');
    // step 8 has no "(+… s)" and is cut at " in "
    expect(parseStepLine(line('[8/8]'))).toMatchObject({ n: 8, label: 'plan postgresql-single-nano → postgresql-single-small', seconds: 1.3 });
  });

  it('ignores detail lines and step 7, which has no time of its own', () => {
    for (const l of [line('sandbox-cp:'), line('[7/8]'), line('8.2 s'), line('PGPASSWORD'), line('resources:')]) expect(parseStepLine(l)).toBeUndefined();
  });

  it('parses the connect line', () => {
    expect(parseConnectLine(line('connect ('))).toEqual({ afterStart: 46.1, claimToConnection: 8.2 });
    expect(parseConnectLine('  connect to the a9s PostgreSQL (claim → first connection 3.0 s):')).toBeUndefined();
  });

  it('collects a whole run and sees the up line', () => {
    const p = new RunParser();
    const seen = OUTPUT.map((l) => p.line(l)).filter((s) => s !== undefined);
    expect([...p.times]).toEqual([
      ['clusters', 5.4],
      ['OIDC provider', 0.1],
      ['Crossplane 2.3 on the control plane', 4.1],
      ['pulumi up', 19.1],
      ['backend + 2 konnectors as local processes', 3.2],
      ['kubectl-bind', 3.9],
      [CLAIM_ROW, 8.2],
      [PSQL_ROW, 46.1],
      ['plan postgresql-single-nano → postgresql-single-small', 1.3],
    ]);
    expect(p.up).toBe(true);
    expect(seen).toContain('[4/8] pulumi up 19.1 s');
    const early = new RunParser();
    OUTPUT.slice(0, 10).forEach((l) => early.line(l));
    expect(early.up).toBe(false);
  });
});

describe('medians and spreads', () => {
  it('takes the middle value, or the mean of the middle two', () => {
    expect(spread([3, 1, 2])).toEqual({ median: 2, min: 1, max: 3, n: 3 });
    expect(spread([4, 1, 2, 10])).toEqual({ median: 3, min: 1, max: 10, n: 4 });
    expect(() => spread([])).toThrow('no values');
  });

  it('summarizes rows over the runs that have them, the psql row last', () => {
    const rows = summarize([
      new Map([
        ['clusters', 5],
        [PSQL_ROW, 40],
        ['plan x', 1],
      ]),
      new Map([
        ['clusters', 7],
        [PSQL_ROW, 50],
      ]),
    ]);
    expect(rows.map((r) => [r.row, r.median, r.n])).toEqual([
      ['clusters', 6, 2],
      ['plan x', 1, 1],
      [PSQL_ROW, 45, 2],
    ]);
  });
});

const LAST: BenchRecord = {
  date: '2026-11-28',
  machine: '2 cores',
  load: 'quiet',
  command: 'npm run sandbox',
  runs: 2,
  medians: { 'pulumi up': 20, clusters: 5, [PSQL_ROW]: 40 },
};

describe('the comparison with the last record', () => {
  it('gives the ratio and flags more than 1.2×', () => {
    expect(compare(24, 20)).toEqual({ ratio: 1.2, regression: false });
    expect(compare(24.2, 20)?.regression).toBe(true);
    expect(compare(10, 20)).toEqual({ ratio: 0.5, regression: false });
    expect(compare(10, undefined)).toBeUndefined();
    expect(compare(10, 0)).toBeUndefined();
  });

  it('prints each row with its median, spread and ratio, flagging a regression', () => {
    const t = formatTable(
      summarize([
        new Map([
          ['clusters', 5.5],
          ['pulumi up', 30],
          ['OIDC provider', 0.1],
        ]),
        new Map([
          ['clusters', 4.5],
          ['pulumi up', 32],
          ['OIDC provider', 0.1],
        ]),
      ]),
      LAST,
    ).split('\n');
    expect(t[0]).toBe('| step | median | min–max | vs last (2026-11-28, quiet) |');
    expect(t[2]).toBe('| clusters | 5.0 s | 4.5–5.5 s (2 runs) | 1.00× of 5.0 s |');
    expect(t[3]).toBe('| pulumi up | 31.0 s | 30.0–32.0 s (2 runs) | 1.55× of 20.0 s ⚠ slower than 1.2× |');
    expect(t[4]).toBe('| OIDC provider | 0.1 s | 0.1–0.1 s (2 runs) | not in the last record |');
    expect(formatTable(summarize([new Map([['clusters', 1]])]), undefined)).toContain('| clusters | 1.0 s | 1.0–1.0 s (1 run) | no record |');
  });
});

describe('the records', () => {
  it('records medians and the psql figure with its date, load and command', () => {
    const rows = summarize([
      new Map([
        ['clusters', 5],
        [PSQL_ROW, 40],
      ]),
      new Map([
        ['clusters', 6],
        [PSQL_ROW, 44],
      ]),
      new Map([
        ['clusters', 7],
        [PSQL_ROW, 41],
      ]),
    ]);
    const rec = benchRecord({ variant: 'default', rows, date: '2026-11-29', machine: '2 cores', load: 'load average 1.0–2.0', runs: 3 });
    expect(rec.medians).toEqual({ clusters: 6, [PSQL_ROW]: 41 });
    expect(rec.command).toBe('npm run bench:sandbox -- --variant default --runs 3 --record');
    const fig = psqlFigure(rec, rows, 'docs/sandbox.md')!;
    expect(fig).toMatchObject({ kind: 'measured', value: '41.0 s', date: '2026-11-29', load: 'load average 1.0–2.0', home: 'docs/sandbox.md' });
    expect(fig.note).toContain('Median of 3 runs (40.0–44.0 s), warm. Step medians: clusters 6.0 s.');
    expect(psqlFigure(rec, rows.slice(0, 1), 'docs/sandbox.md')).toBeUndefined();
    // an entry docs:figures accepts, and the marks show it
    expect(figureEntryProblems({ 'sandbox-psql': fig }, ['docs/sandbox.md'])).toEqual([]);
    expect(
      renderMarks('after <!-- figure:sandbox-psql -->65.3–66.2 s<!-- /figure --> on <!-- figure:sandbox-psql.date -->2026-11-28<!-- /figure -->', {
        'sandbox-psql': fig,
      }),
    ).toBe('after <!-- figure:sandbox-psql -->41.0 s<!-- /figure --> on <!-- figure:sandbox-psql.date -->2026-11-29<!-- /figure -->');
  });
});

describe('the command line', () => {
  it('defaults to 3 runs of the default sandbox, 10 min per run', () => {
    expect(parseBenchArgs([], 1000)).toEqual({ runs: 3, variants: ['default'], record: false, timeoutMs: 600_000 });
  });

  it('takes repeated variants once each, --runs, --timeout-min and --record', () => {
    expect(parseBenchArgs(['--runs', '2', '--variant', 'a9s', '--variant=namespaced', '--variant', 'a9s', '--record', '--timeout-min=3'], 1000)).toEqual({
      runs: 2,
      variants: ['a9s', 'namespaced'],
      record: true,
      timeoutMs: 180_000,
    });
    expect(parseBenchArgs(['--variant', 'pods'], 0).variants).toEqual(['pods']);
  });

  it.each([
    [['--variant', 'fast'], '--variant: "fast" is not a variant; use one of default, pods, a9s, namespaced'],
    [['--variant'], '--variant needs a value: default, pods, a9s, namespaced'],
    [['--runs', '0'], '--runs: "0" is not a whole number ≥ 1'],
    [['--runs', '2.5'], '--runs: "2.5" is not a whole number ≥ 1'],
    [['--runs'], '--runs needs a value'],
    [['--timeout-min', 'x'], '--timeout-min: "x" is not a whole number ≥ 1'],
    [['--pods'], 'unknown argument "--pods"; use --runs N, --variant default|pods|a9s|namespaced (repeatable), --record, --timeout-min N'],
    [['--variant', 'pods'], '--variant pods needs root'],
  ])('refuses %j', (argv, message) => {
    expect(() => parseBenchArgs(argv, 1000)).toThrow(BenchArgsError);
    expect(() => parseBenchArgs(argv, 1000)).toThrow(message);
  });
});
