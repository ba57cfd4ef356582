// npm run realinfra [-- component…]: builds (or finds in the cache) etcd, kube-apiserver,
// kube-controller-manager and the Crossplane harness's binaries (Crossplane core 2.3 and 1.20,
// function-patch-and-transform, provider-kubernetes, crane) from the Go wrapper modules in tools/.
// Prints one progress line per component and the time each cold build took; stdout gets the paths (JSON).
// `-- --kube` builds only the Kubernetes control plane, `-- --node` only the real node's binaries (kubelet,
// kube-scheduler, kube-proxy, pause, pod-probe), `-- --crossplane` only the Crossplane harness, `-- --dex` only Dex
// (the pod topology's OIDC provider, tools/dex), `-- --pods` only helm and CoreDNS (Crossplane as pods), `-- --a9s` only
// provider-anynines and provider-anynines-v2 (from the klutchio sources: fetched at the pinned commits into the cache, or the
// mirrors of KLUTCH_KIT_KLUTCHIO_SRC and KLUTCH_KIT_KLUTCHIO_V2_SRC).
// `-- --early` builds what every integration suite may need (the control plane, kubectl, crane), `-- --mid` what the
// Crossplane 2.3 suites need beyond it, `-- --late` the rest (what only the late suites need). CI builds the early
// components first and the others in the background while the checks and the suites run (scripts/_lanes.ts stages).
import {
  A9S_COMPONENTS,
  KLUTCHIO_PINS,
  isA9sComponent,
  ALL_COMPONENTS,
  COMPONENTS,
  CROSSPLANE_COMPONENTS,
  DEX_COMPONENTS,
  EARLY_COMPONENTS,
  LATE_COMPONENTS,
  MID_COMPONENTS,
  PODS_COMPONENTS,
  type ComponentName,
  NODE_COMPONENTS,
  ensureComponent,
  planComponent,
  isCached,
} from '../runtime/realinfra/build.js';
import { ensureKlutchioSource } from '../runtime/realinfra/klutchio.js';

const started = Date.now();
const log = (line: string) => process.stderr.write(`[realinfra +${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);

const argv = process.argv.slice(2);
const requested = argv.filter((a) => !a.startsWith('-'));
for (const r of requested) {
  if (!ALL_COMPONENTS.includes(r as ComponentName)) {
    process.stderr.write(`realinfra: unknown component "${r}"; expected one of ${ALL_COMPONENTS.join(', ')}\n`);
    process.exit(2);
  }
}
for (const f of argv.filter((a) => a.startsWith('-'))) {
  if (!['--kube', '--node', '--crossplane', '--dex', '--pods', '--a9s', '--early', '--mid', '--late'].includes(f)) {
    process.stderr.write(`realinfra: unknown option "${f}"; expected --kube, --node, --crossplane, --dex, --pods, --a9s, --early, --mid or --late\n`);
    process.exit(2);
  }
}
const groups: ComponentName[] = [
  ...(argv.includes('--kube') ? COMPONENTS : []),
  ...(argv.includes('--node') ? NODE_COMPONENTS : []),
  ...(argv.includes('--crossplane') ? CROSSPLANE_COMPONENTS : []),
  ...(argv.includes('--dex') ? DEX_COMPONENTS : []),
  ...(argv.includes('--pods') ? PODS_COMPONENTS : []),
  ...(argv.includes('--a9s') ? A9S_COMPONENTS : []),
  ...(argv.includes('--early') ? EARLY_COMPONENTS : []),
  ...(argv.includes('--mid') ? MID_COMPONENTS : []),
  ...(argv.includes('--late') ? LATE_COMPONENTS : []),
].filter((c, i, all) => all.indexOf(c) === i);
const components: readonly ComponentName[] = requested.length > 0 ? (requested as ComponentName[]) : groups.length > 0 ? groups : ALL_COMPONENTS;

try {
  // provider-anynines is built from the klutchio sources: fetched first (git, once), so that its cache key can be planned
  for (const c of components) if (isA9sComponent(c)) await ensureKlutchioSource({ log, pin: KLUTCHIO_PINS[c] });
  for (const c of components) {
    const plan = planComponent(c);
    log(`${c}: ${isCached(plan) ? 'cached' : 'not cached'} (${plan.dir})`);
  }
  const paths: Record<string, string> = {};
  // Sequential on purpose: go build already uses every core.
  for (const c of components) paths[c] = await ensureComponent(c, { log });
  log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  // stdout: machine-readable paths
  process.stdout.write(`${JSON.stringify(paths, null, 2)}\n`);
} catch (e) {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}
