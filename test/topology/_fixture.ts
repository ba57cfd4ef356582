import { App } from 'cdk8s';
import { exampleTopology } from '../../constructs/app/example.js';
import { renderTopology, RenderedCluster } from '../../constructs/topology/index.js';

let cached: { app: App; clusters: RenderedCluster[]; topo: ReturnType<typeof exampleTopology> } | undefined;

/** The example topology, rendered once per test file. */
export function example() {
  if (!cached) {
    const app = new App({ outdir: '/nonexistent' });
    const topo = exampleTopology(app);
    cached = { app, topo, clusters: renderTopology(app) };
  }
  return cached;
}

export function cluster(name: string): RenderedCluster {
  const c = example().clusters.find((x) => x.name === name);
  if (!c) throw new Error(`no cluster ${name}`);
  return c;
}

export function objects(name: string): Record<string, any>[] {
  return cluster(name).files.map((f) => f.object);
}
