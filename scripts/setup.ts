/**
 * The Go half of `npm run setup` (scripts/setup.sh runs it after `npm ci`): checks Go, then builds — or finds
 * in the cache (~/.cache/klutch-kit/realinfra/) — every Go-built binary the sandbox and the tests run: the
 * clusters (etcd, kube-apiserver, kube-controller-manager), kubectl of the same release, the real node's
 * binaries, the Crossplane set, the Pulumi toolchain and provider-anynines (its klutchio sources fetched with git;
 * when that fails, setup says why and goes on without it).
 * Before building it prints what is missing and how long that took when measured; while building, one line
 * per component with the estimate of what is left. Ends with the kubectl to use.
 */
import { execFileSync } from 'node:child_process';
import { A9S_COMPONENTS, ALL_COMPONENTS, type ComponentName, ensureComponent, isCached, pathKubectl, planComponent } from '../runtime/realinfra/build.js';
import { ensureKlutchioSource } from '../runtime/realinfra/klutchio.js';
import {
  PULUMI_COMPONENTS,
  type PulumiComponentName,
  ensurePulumiComponent,
  isPulumiCached,
  pathPulumi,
  planPulumiComponent,
} from '../runtime/realinfra/pulumi-build.js';
import { MIN_GO } from '../sandbox/prerequisites.js';

/**
 * Wall seconds of each cold build (empty GOCACHE and GOMODCACHE, module downloads included, in the order
 * below, so later components reuse packages of earlier ones), measured on the 2-core machine on 2026-11-26
 * (README.md "Tests"; the Crossplane set and the node's binaries from their CPU time at the same ratio);
 * kubectl, dex, helm and coredns from their CPU time measured 2026-11-27 (build.json in the cache) at that ratio.
 */
const COLD_SECONDS: Readonly<Record<string, number>> = {
  etcd: 64,
  'kube-apiserver': 290,
  'kube-controller-manager': 131,
  kubectl: 60,
  kubelet: 60,
  'kube-scheduler': 15,
  'kube-proxy': 25,
  pause: 5,
  'pod-probe': 5,
  crane: 20,
  'function-patch-and-transform': 120,
  'provider-kubernetes': 115,
  'crossplane-2.3': 135,
  'crossplane-1.20': 110,
  'provider-anynines': 150,
  dex: 90,
  helm: 60,
  coredns: 130,
  'pulumi-cli': 293,
  'pulumi-resource-kubernetes': 531,
};

const started = Date.now();
const since = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;
const log = (line: string) => process.stdout.write(`[setup +${since()}] ${line}\n`);
const minutes = (s: number) => `${Math.round(s / 60)} min`;

function goProblem(): string | undefined {
  const go = process.env['KLUTCH_KIT_GO'] || 'go';
  let version: string;
  try {
    version = execFileSync(go, ['version'], { encoding: 'utf8', timeout: 30_000 }).trim();
  } catch {
    return `the go command "${go}" does not run`;
  }
  const m = /go(\d+)\.(\d+)/.exec(version);
  if (!m || Number(m[1]) < MIN_GO[0] || (Number(m[1]) === MIN_GO[0] && Number(m[2]) < MIN_GO[1]))
    return `${go} is ${version}; Go >= ${MIN_GO.join('.')} is needed`;
  log(`Go: ${version}`);
  return undefined;
}

type Item = { name: ComponentName; pulumi: false } | { name: PulumiComponentName; pulumi: true };
let items: Item[] = [
  ...ALL_COMPONENTS.map((name) => ({ name, pulumi: false as const })),
  ...PULUMI_COMPONENTS.map((name) => ({ name, pulumi: true as const })),
];
try {
  await ensureKlutchioSource({ log });
} catch (e) {
  log(`provider-anynines: not built (${(e as Error).message}); only the a9s test suites need it`);
  items = items.filter((i) => !(A9S_COMPONENTS as readonly string[]).includes(i.name));
}
// A compatible kubectl or Pulumi CLI on PATH is used instead of a build (KLUTCH_KIT_USE_PATH_TOOLS=0: always build).
const kubectlOnPath = pathKubectl({ log });
const pulumiOnPath = pathPulumi({ log });
items = items.filter((i) => !(i.name === 'kubectl' && kubectlOnPath) && !(i.name === 'pulumi-cli' && pulumiOnPath));
const cached = (i: Item) => (i.pulumi ? isPulumiCached(planPulumiComponent(i.name)) : isCached(planComponent(i.name)));
const todo = items.filter((i) => !cached(i));
if (todo.length === 0) {
  log(`all ${items.length} Go-built binaries are in the cache`);
} else {
  const problem = goProblem();
  if (problem) {
    process.stderr.write(
      `setup: ${problem}. ${todo.length} binaries are not built yet (${todo.map((i) => i.name).join(', ')}).\n` +
        `  Install Go >= ${MIN_GO.join('.')} from https://go.dev/doc/install (Debian's golang package is older), put it on PATH or set\n` +
        `  KLUTCH_KIT_GO=/path/to/go, then run npm run setup again (it skips what is done).\n`,
    );
    process.exit(1);
  }
  const estimate = (list: readonly Item[]) => list.reduce((s, i) => s + (COLD_SECONDS[i.name] ?? 0), 0);
  const unknown = todo.filter((i) => COLD_SECONDS[i.name] === undefined).map((i) => i.name);
  log(
    `${todo.length} of ${items.length} binaries to build: ${todo.map((i) => i.name).join(', ')} — about ${minutes(estimate(todo))} on an idle 2-core machine with ` +
      `empty Go caches (measured 2026-11-26; less when Go's caches are warm)${unknown.length ? `, plus ${unknown.join(', ')} (not measured)` : ''}`,
  );
  try {
    for (const [n, i] of todo.entries()) {
      log(`[${n + 1}/${todo.length}] ${i.name} (about ${minutes(estimate(todo.slice(n)))} left)`);
      if (i.pulumi) await ensurePulumiComponent(i.name, { log });
      else await ensureComponent(i.name, { log });
    }
  } catch (e) {
    process.stderr.write(`setup: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
  log(`built ${todo.length} binaries in ${since()}`);
}
if (kubectlOnPath) log(`kubectl: ${kubectlOnPath.path} from PATH (${kubectlOnPath.version})`);
else {
  const kubectl = planComponent('kubectl').binary;
  log(`kubectl of the clusters' release: ${kubectl}  (e.g. alias kubectl=${kubectl})`);
}
