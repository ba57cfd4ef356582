/**
 * Go builds with progress and an estimate, shared by `npm run setup` (scripts/setup.ts: every binary) and
 * `npm run sandbox` (scripts/sandbox.ts: the ones the sandbox runs, before it starts anything): first one line with
 * what is to be built and about how long that takes, then one line per component with the estimate of what is left,
 * and the build's own lines (still building …, built in …).
 */
import { type ComponentName, ensureComponent } from '../runtime/realinfra/build.js';
import { PULUMI_COMPONENTS, type PulumiComponentName, ensurePulumiComponent } from '../runtime/realinfra/pulumi-build.js';

/**
 * Wall seconds of each cold build (empty GOCACHE and GOMODCACHE, module downloads included, in the order
 * below, so later components reuse packages of earlier ones), on an idle 2-core machine on 2026-11-29, with the
 * compilers' `GOGC=off` (runtime/realinfra/build.ts): the sandbox's nine from `npm run bench:newcomer` (as an
 * ordinary user and as root, the mean, rounded up); the others from their CPU time in a brand-new-machine
 * `.ci/run` of the same day at the ratio the sandbox's builds showed (wall ≈ 0.55 × CPU: the compiler uses both cores).
 */
export const COLD_SECONDS: Readonly<Record<string, number>> = {
  etcd: 35,
  'kube-apiserver': 140,
  'kube-controller-manager': 36,
  kubectl: 15,
  kubelet: 11,
  'kube-scheduler': 2,
  'kube-proxy': 5,
  pause: 1,
  'pod-probe': 1,
  crane: 6,
  'function-patch-and-transform': 52,
  'provider-kubernetes': 70,
  'crossplane-2.3': 80,
  'crossplane-1.20': 70,
  'provider-anynines': 60,
  'provider-anynines-v2': 60,
  dex: 25,
  helm: 52,
  coredns: 20,
  'pulumi-cli': 120,
  'pulumi-resource-kubernetes': 225,
};

/** A component to build: one of the harness's (build.ts) or of the Pulumi toolchain (pulumi-build.ts). */
export type BuildItem = { name: ComponentName; pulumi: false } | { name: PulumiComponentName; pulumi: true };

/** The item of a component name. */
export function buildItem(name: ComponentName | PulumiComponentName): BuildItem {
  return (PULUMI_COMPONENTS as readonly string[]).includes(name)
    ? { name: name as PulumiComponentName, pulumi: true }
    : { name: name as ComponentName, pulumi: false };
}

const minutes = (s: number) => `${Math.max(1, Math.round(s / 60))} min`;

/** Seconds the cold builds of `items` took when measured (items not measured count 0). */
export function estimateSeconds(items: readonly BuildItem[]): number {
  return items.reduce((s, i) => s + (COLD_SECONDS[i.name] ?? 0), 0);
}

/** The line printed before the builds: what, and about how long. */
export function buildPlanLine(todo: readonly BuildItem[], of: number): string {
  const unknown = todo.filter((i) => COLD_SECONDS[i.name] === undefined).map((i) => i.name);
  return (
    `${todo.length} of ${of} binaries to build: ${todo.map((i) => i.name).join(', ')} — about ${minutes(estimateSeconds(todo))} on an idle 2-core machine with ` +
    `empty Go caches (measured 2026-11-29; less when Go's caches are warm)${unknown.length ? `, plus ${unknown.join(', ')} (not measured)` : ''}`
  );
}

/** Builds `todo` one at a time (each go build uses every core), with the plan line and a line per component. */
export async function buildWithProgress(todo: readonly BuildItem[], of: number, log: (line: string) => void): Promise<void> {
  if (todo.length === 0) return;
  log(buildPlanLine(todo, of));
  for (const [n, i] of todo.entries()) {
    log(`[${n + 1}/${todo.length}] ${i.name} (about ${minutes(estimateSeconds(todo.slice(n)))} left)`);
    if (i.pulumi) await ensurePulumiComponent(i.name, { log });
    else await ensureComponent(i.name, { log });
  }
}
