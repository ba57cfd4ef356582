import { afterAll, describe, expect, it } from '@jest/globals';
import { App } from 'cdk8s';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exampleTopology } from '../../constructs/app/example.js';
import { GraphEdgeKind, GraphNodeKind, synthTopology, toDot, toMermaid, topologyGraph, toSvg, type TopologyGraph } from '../../constructs/topology/index.js';
import { exampleGraph, readClusters, runGraph, staleDocsGraphFiles } from '../../runtime/cli/graph.js';

const tmp = mkdtempSync(join(tmpdir(), 'kk-graph-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const label = (g: TopologyGraph, nodeId: string) => [...g.clusters.flatMap((c) => c.nodes), ...g.external].find((n) => n.id === nodeId)?.label[0];
const targets = (g: TopologyGraph, fromLabel: string, kind: GraphEdgeKind, cluster: string) => {
  const c = g.clusters.find((x) => x.name === cluster)!;
  const from = c.nodes.filter((n) => n.label[0] === fromLabel).map((n) => n.id);
  return g.edges
    .filter((e) => from.includes(e.from) && e.kind === kind)
    .map((e) => label(g, e.to))
    .sort();
};

describe('topology graph', () => {
  const g = exampleGraph();

  it('draws clusters, APIs with their backends, the bind backend, bindings and claims of the example', () => {
    expect(g.clusters.map((c) => `${c.name}:${c.role}`)).toEqual(['control-plane:control-plane', 'app-analytics:app', 'app-shop:app']);
    const cp = g.clusters[0];
    const apis = cp.nodes.filter((n) => n.kind === GraphNodeKind.API);
    expect(apis).toHaveLength(11);
    expect(apis.every((n) => n.exported)).toBe(true);
    expect(cp.nodes.filter((n) => n.kind === GraphNodeKind.BIND_BACKEND).map((n) => n.label)).toEqual([['bind backend', 'klutch-system/klutch-backend']]);
    expect(targets(g, 'PostgresqlInstance', GraphEdgeKind.IMPLEMENTED_BY, 'control-plane')).toEqual(['a8s-postgresql', 'a9s-postgresql']);
    // app-analytics binds three APIs; app-shop all eleven.
    expect(targets(g, 'konnector', GraphEdgeKind.BINDS, 'app-analytics')).toEqual(['Backup', 'PostgresqlInstance', 'ServiceBinding']);
    expect(targets(g, 'konnector', GraphEdgeKind.BINDS, 'app-shop')).toHaveLength(11);
    // Claims point at the backend their compositionRef selects.
    expect(targets(g, 'orders-db', GraphEdgeKind.CLAIMS, 'app-shop')).toEqual(['a8s-postgresql']);
    expect(targets(g, 'warehouse', GraphEdgeKind.CLAIMS, 'app-analytics')).toEqual(['a9s-postgresql']);
    expect(targets(g, 'warehouse-nightly', GraphEdgeKind.CLAIMS, 'app-analytics')).toEqual(['a9s-backup']);
  });

  it('renders Mermaid, DOT and SVG (Graphviz in WebAssembly, offline)', async () => {
    const mmd = toMermaid(g);
    expect(mmd.split('\n')[0]).toBe('flowchart LR');
    expect(mmd).toContain('subgraph c__app_shop["app-shop (app cluster)"]');
    expect(mmd).toMatch(/c__app_shop__konnector ==> c__control_plane__api__postgresqlinstances_anynines_com/);
    expect(mmd).toMatch(/c__app_shop__claim__PostgresqlInstance__shop__orders_db -\.-> c__control_plane__backend__a8s_postgresql/);
    const dot = toDot(g);
    expect(dot).toContain('subgraph cluster_c__control_plane {');
    const svg = await toSvg(g);
    expect(svg).toMatch(/^<\?xml[\s\S]*<svg width="\d+pt" height="\d+pt"/);
    // Every node and every edge made it into the picture (Graphviz titles them by id).
    const titles = [...svg.matchAll(/<title>([^<]*)<\/title>/g)].map((m) => m[1].replace(/&#45;/g, '-').replace(/&gt;/g, '>'));
    for (const n of g.clusters.flatMap((c) => c.nodes)) expect(titles).toContain(n.id);
    for (const e of g.edges) expect(titles).toContain(`${e.from}->${e.to}`);
  });

  it('reads a synthesized folder into the same graph as the program', async () => {
    const app = new App({ outdir: '/nonexistent' });
    exampleTopology(app);
    const out = join(tmp, 'dist');
    await synthTopology(app, { outdir: out });
    expect(topologyGraph(readClusters(out))).toEqual(g);
    // Only an app cluster's folder: the bound APIs are outside this input.
    const alone = topologyGraph(readClusters(join(out, 'app-analytics')));
    expect(alone.clusters.map((c) => c.name)).toEqual(['app-analytics']);
    expect(alone.external.map((n) => n.label[0]).sort()).toEqual(['backups.anynines.com', 'postgresqlinstances.anynines.com', 'servicebindings.anynines.com']);
    expect(alone.clusters[0].nodes.filter((n) => n.kind === GraphNodeKind.CLAIM)).toEqual([]);
  });

  it('klutch-kit graph: formats, --out, clear errors', async () => {
    let printed = '';
    const text = await runGraph(undefined, { example: true, format: 'dot' }, (s) => (printed += s));
    expect(printed).toBe(text);
    expect(text.startsWith('digraph topology {')).toBe(true);
    await expect(runGraph(join(tmp, 'missing'), {})).rejects.toThrow(`graph: "${join(tmp, 'missing')}" is not a directory`);
    await expect(runGraph('dist', { example: true })).rejects.toThrow('graph: give either <dir> or --example, not both');
    await expect(runGraph(undefined, { example: true, format: 'png' as never })).rejects.toThrow(
      'graph --format: expected one of mermaid, dot, svg, got "png"',
    );
  });

  it('the picture in the docs is current (npm run docs:graph)', async () => {
    expect(await staleDocsGraphFiles()).toEqual([]);
  });
});
