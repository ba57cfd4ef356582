/**
 * How `npm run test:integration` splits the integration suites into lanes: jest processes that run side
 * by side, each `--runInBand`. Most suites spend their time waiting (Crossplane's and the providers' poll
 * intervals, watches, OIDC round trips), so two lanes on two cores finish well before one.
 *
 * Pure planning, unit-tested in test/scripts/lanes.test.ts; scripts/test-integration.ts runs the plan.
 */

/** A suite's file as the planner sees it. */
export interface SuiteFile {
  /** Path relative to the repo root, with forward slashes. */
  readonly path: string;
  /** The file's text (only scanned for what it starts). */
  readonly text: string;
}

/**
 * The build stages of a run, in order. A suite runs in the stage of the last builds it needs, and a lane runs its
 * suites stage by stage, each stage once its builds are there (built by CI in the background from the start, or
 * by the runner, outside any jest hook):
 *
 * - `kube`: the Kubernetes control plane, kubectl and crane (`npm run realinfra -- --early`, built before the tests);
 * - `crossplane`: Crossplane 2.3, function-patch-and-transform, provider-kubernetes (`-- --mid`);
 * - `late`: the real node's binaries, Crossplane 1.20, Dex, helm, CoreDNS, provider-anynines (`-- --late`);
 * - `pulumi`: the Go-built Pulumi CLI and kubernetes provider (`npm run realinfra:pulumi`).
 *
 * So on a brand-new machine the Go builds of the later stages overlap the checks and the earlier suites.
 */
export const STAGES = ['kube', 'crossplane', 'late', 'pulumi'] as const;
export type Stage = (typeof STAGES)[number];

export interface Lane {
  /** The lane's suites by stage, each stage's in run order. */
  readonly stages: Record<Stage, string[]>;
  /** Sum of the suites' recorded durations, in seconds. */
  expectedSeconds: number;
}

export interface LanePlan {
  readonly lanes: Lane[];
  /** Suites that start a real node: all in lane 0, so they never wait for each other's host-wide lock. */
  readonly nodeSuites: readonly string[];
  /** Suites without a recorded duration (planned with the default). */
  readonly unknown: readonly string[];
}

/** Duration assumed for a suite that has none recorded yet, in seconds. */
export const DEFAULT_SUITE_SECONDS = 90;

/**
 * A suite starts a real node (kubelet + containerd) when it asks the harness for one (`startCluster({ nodes: 1 })`). A node takes a host-wide
 * lock (runtime/realinfra/node.ts): two node suites in different lanes would wait for each other inside a jest
 * hook, so they all go to one lane.
 */
export function startsNode(text: string): boolean {
  // `nodes:` inside a startCluster({ … }) call (up to the statement's end), not any `nodes:` field
  return /\bstartCluster\(\s*\{[^;]*?\bnodes:\s*[1-9]/.test(text) || /\bensureNodeBinaries\(/.test(text);
}

/**
 * A suite needs the Go-built Pulumi CLI and kubernetes provider when it asks the harness for them, or says so with an
 * `@realinfra pulumi` tag (a suite that runs a command which does, e.g. `npm run sandbox`).
 */
export function needsPulumi(text: string): boolean {
  return /\bensurePulumiBinaries\(/.test(text) || /@realinfra\s+pulumi\b/.test(text);
}

/** A suite runs Crossplane 2.3 when it starts the harness's Crossplane (directly or through a catalogue or a9s helper), or says so with an `@realinfra crossplane` tag. */
export function startsCrossplane(text: string): boolean {
  return /\b(startCrossplane|ensureCrossplaneBinaries|startCatalogueCluster|startA9sCluster)\(/.test(text) || /@realinfra\s+crossplane\b/.test(text);
}

/**
 * The stage a suite runs in ({@link STAGES}): `pulumi` when it needs the Pulumi toolchain (or has an `@realinfra
 * pulumi` tag); `late` when it starts a
 * real node or says so with an `@realinfra late` tag in a comment (suites that need Crossplane 1.20,
 * provider-anynines, Dex, helm or CoreDNS through helpers the planner cannot see); `crossplane` when it runs
 * Crossplane 2.3; `kube` otherwise. A suite that asks for a later stage's build than its own fails at once naming
 * the tag it lacks (runtime/realinfra/build.ts assertNotBuiltLater).
 */
export function suiteStage(text: string): Stage {
  if (needsPulumi(text)) return 'pulumi';
  if (startsNode(text) || /@realinfra\s+late\b/.test(text)) return 'late';
  if (startsCrossplane(text)) return 'crossplane';
  return 'kube';
}

/**
 * Longest-processing-time-first: node suites in lane 0, then every other suite, longest first, into the lane
 * with the least expected time (a `pulumi`-stage suite into another lane than the node suites' when there is one).
 * `durations` are seconds by path (a committed record of the last full run).
 */
export function planLanes(files: readonly SuiteFile[], durations: Readonly<Record<string, number>>, laneCount: number): LanePlan {
  if (!Number.isInteger(laneCount) || laneCount < 1) throw new Error(`lanes: expected a whole number ≥ 1, got ${String(laneCount)}`);
  const lanes: Lane[] = Array.from({ length: laneCount }, () => ({ stages: { kube: [], crossplane: [], late: [], pulumi: [] }, expectedSeconds: 0 }));
  const unknown: string[] = [];
  const seconds = (p: string): number => {
    const d = durations[p];
    if (typeof d === 'number' && Number.isFinite(d) && d >= 0) return d;
    unknown.push(p);
    return DEFAULT_SUITE_SECONDS;
  };
  const sorted = [...files].sort((a, b) => a.path.localeCompare(b.path));
  const stageOf = new Map(sorted.map((f) => [f.path, suiteStage(f.text)]));
  const place = (lane: Lane, p: string, s: number) => {
    lane.stages[stageOf.get(p)!].push(p);
    lane.expectedSeconds += s;
  };
  const nodeSuites = sorted.filter((f) => startsNode(f.text)).map((f) => f.path);
  for (const p of nodeSuites) place(lanes[0]!, p, seconds(p));
  const rest = sorted
    .filter((f) => !nodeSuites.includes(f.path))
    .map((f) => ({ path: f.path, s: seconds(f.path) }))
    .sort((a, b) => b.s - a.s || a.path.localeCompare(b.path));
  for (const r of rest) {
    // The last stage's other suites go beside the node suites, not after them: lane 0 already runs its node suites
    // of that stage once the Pulumi toolchain is built (the last build on a new machine), and two lanes then share it.
    const candidates = stageOf.get(r.path) === 'pulumi' && lanes.length > 1 && nodeSuites.length > 0 ? lanes.slice(1) : lanes;
    const lane = candidates.reduce((min, l) => (l.expectedSeconds < min.expectedSeconds ? l : min), candidates[0]!);
    place(lane, r.path, r.s);
  }
  return { lanes: lanes.filter((l) => suitesOf(l).length > 0), nodeSuites, unknown };
}

/** Every suite of a lane, in run order (stage by stage). */
export function suitesOf(lane: Lane): string[] {
  return STAGES.flatMap((st) => lane.stages[st]);
}

/** jest's `--json` output, the parts the runner reads. */
export interface JestJson {
  readonly numPassedTests: number;
  readonly numFailedTests: number;
  readonly numPendingTests: number;
  readonly numTotalTests: number;
  readonly testResults: ReadonlyArray<{
    readonly name: string;
    readonly status: string;
    readonly startTime: number;
    readonly endTime: number;
    /** The suite's own failure (a hook, or the file not running at all). */
    readonly message?: string;
    readonly assertionResults?: ReadonlyArray<{ readonly fullName: string; readonly status: string; readonly failureMessages?: readonly string[] }>;
  }>;
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

/**
 * What failed, for the run's last lines: CI shows only the tail of a long log, so every failed suite is named
 * there with its failed tests and the first lines of each failure: `firstMaxLines` for the run's first failure
 * (often the cause of the rest, and where a harness puts its diagnosis), `maxLines` for each later one, and one
 * line for a failure whose text was already shown (a failed `beforeAll` fails every test of its suite alike).
 */
export function failureSummary(results: readonly JestJson[], root: string, maxLines = 6, firstMaxLines = 40): string[] {
  const prefix = root.endsWith('/') ? root : `${root}/`;
  const lines: string[] = [];
  const shown = new Set<string>();
  const excerpt = (text: string) => {
    const clean = text.replace(ANSI, '');
    if (shown.has(clean)) return ['      (the same failure as above)'];
    const limit = shown.size === 0 ? firstMaxLines : maxLines;
    shown.add(clean);
    return clean
      .split('\n')
      .map((l) => l.trimEnd())
      .filter((l) => l.trim() !== '')
      .slice(0, limit)
      .map((l) => `      ${l}`);
  };
  for (const r of results) {
    for (const t of r.testResults) {
      const failedTests = (t.assertionResults ?? []).filter((a) => a.status === 'failed');
      if (t.status !== 'failed' && failedTests.length === 0) continue;
      lines.push(`  FAIL ${t.name.startsWith(prefix) ? t.name.slice(prefix.length) : t.name}`);
      for (const a of failedTests) {
        lines.push(`    ✕ ${a.fullName}`);
        lines.push(...excerpt(a.failureMessages?.[0] ?? ''));
      }
      if (failedTests.length === 0 && t.message) lines.push(...excerpt(t.message));
    }
  }
  return lines;
}

/** Seconds per suite (repo-relative path) from jest `--json` results, merged over `previous`. */
export function mergeDurations(previous: Readonly<Record<string, number>>, results: readonly JestJson[], root: string): Record<string, number> {
  const out: Record<string, number> = { ...previous };
  const prefix = root.endsWith('/') ? root : `${root}/`;
  for (const r of results) {
    for (const t of r.testResults) {
      if (t.status !== 'passed' || !(t.endTime > t.startTime)) continue;
      const rel = t.name.startsWith(prefix) ? t.name.slice(prefix.length) : t.name;
      out[rel] = Math.round((t.endTime - t.startTime) / 1000);
    }
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}
