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
import { A9S_COMPONENTS, ALL_COMPONENTS, KLUTCHIO_PINS, isCached, pathKubectl, planComponent } from '../runtime/realinfra/build.js';
import { ensureKlutchioSource } from '../runtime/realinfra/klutchio.js';
import { PULUMI_COMPONENTS, isPulumiCached, pathPulumi, planPulumiComponent } from '../runtime/realinfra/pulumi-build.js';
import { MIN_GO } from '../sandbox/prerequisites.js';
import { type BuildItem, buildWithProgress } from './_go-builds.js';

const started = Date.now();
const since = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;
const log = (line: string) => process.stdout.write(`[setup +${since()}] ${line}\n`);

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

type Item = BuildItem;
let items: Item[] = [
  ...ALL_COMPONENTS.map((name) => ({ name, pulumi: false as const })),
  ...PULUMI_COMPONENTS.map((name) => ({ name, pulumi: true as const })),
];
for (const c of A9S_COMPONENTS) {
  try {
    await ensureKlutchioSource({ log, pin: KLUTCHIO_PINS[c] });
  } catch (e) {
    log(`${c}: not built (${(e as Error).message}); only the a9s test suites need it`);
    items = items.filter((i) => i.name !== c);
  }
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
  try {
    await buildWithProgress(todo, items.length, log);
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
