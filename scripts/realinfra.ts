// npm run realinfra [-- component…]: builds (or finds in the cache) etcd, kube-apiserver and
// kube-controller-manager from the Go wrapper modules in tools/. Prints one line per component.
import { COMPONENTS, type ComponentName, ensureBinaries, planComponent, isCached } from '../runtime/realinfra/build.js';

const started = Date.now();
const log = (line: string) => process.stderr.write(`[realinfra +${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);

const requested = process.argv.slice(2).filter((a) => !a.startsWith('-'));
for (const r of requested) {
  if (!COMPONENTS.includes(r as ComponentName)) {
    process.stderr.write(`realinfra: unknown component "${r}"; expected one of ${COMPONENTS.join(', ')}\n`);
    process.exit(2);
  }
}
const components = requested.length > 0 ? (requested as ComponentName[]) : COMPONENTS;

try {
  for (const c of components) {
    const plan = planComponent(c);
    log(`${c}: ${isCached(plan) ? 'cached' : 'not cached'} (${plan.dir})`);
  }
  const bins = await ensureBinaries({ components, log });
  log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  // stdout: machine-readable paths
  const byName = { etcd: bins.etcd, 'kube-apiserver': bins.kubeApiServer, 'kube-controller-manager': bins.kubeControllerManager };
  process.stdout.write(`${JSON.stringify(Object.fromEntries(components.map((c) => [c, byName[c]])), null, 2)}\n`);
} catch (e) {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}
