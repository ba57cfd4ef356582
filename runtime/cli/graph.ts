// `klutch-kit graph [dir]`: draws what a program composes (clusters, claim APIs and their backends,
// the bind backend, bindings from app clusters, claims) from a synthesized folder (`dist/`, one
// sub-folder per cluster) or from the example topology, as Mermaid, DOT or SVG (Graphviz compiled
// to WebAssembly: offline, no browser).
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'cdk8s';
import { Command, Option } from 'commander';
import { parseAllDocuments } from 'yaml';
import { exampleTopology } from '../../constructs/app/example.js';
import { toDot, toMermaid, topologyGraph, topologyGraphOfApp, toSvg, type GraphInput, type TopologyGraph } from '../../constructs/topology/index.js';
import { listYamlFiles } from '../../constructs/validate/index.js';
import { UsageError } from './errors.js';

export type GraphFormat = 'mermaid' | 'dot' | 'svg';
export const GRAPH_FORMATS: readonly GraphFormat[] = ['mermaid', 'dot', 'svg'];

/** Sub-folders the synth writes inside a cluster folder (phases `00-crds` … and `_flux`). */
const CLUSTER_INTERNAL = /^(\d{2}-|_)/;

/**
 * The clusters of a synthesized folder: each sub-folder is one cluster (as `npm run synth` writes
 * them); a cluster's own folder (YAML files or phase folders directly inside) is one cluster named
 * after it.
 */
export function readClusters(dir: string): GraphInput[] {
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`graph: ${JSON.stringify(dir)} is not a directory`);
  const byCluster = new Map<string, GraphInput['objects'][number][]>();
  for (const f of listYamlFiles(dir)) {
    const rel = relative(dir, f).split(sep);
    const cluster = rel.length > 1 && !CLUSTER_INTERNAL.test(rel[0]) ? rel[0] : basename(resolve(dir));
    const docs = parseAllDocuments(readFileSync(f, 'utf8'));
    for (const d of docs) {
      if (d.errors.length) throw new Error(`graph: ${f}: ${d.errors[0].message}`);
      const o = d.toJS();
      if (o && typeof o === 'object' && typeof o.kind === 'string') byCluster.set(cluster, [...(byCluster.get(cluster) ?? []), o]);
    }
  }
  if (byCluster.size === 0) throw new UsageError(`graph: no Kubernetes objects in the manifest files under ${dir}`);
  return [...byCluster.entries()].map(([name, objects]) => ({ name, objects }));
}

/** The example topology's graph (constructs/app/example.ts). */
export function exampleGraph(): TopologyGraph {
  const app = new App({ outdir: '/nonexistent-never-written' });
  exampleTopology(app);
  return topologyGraphOfApp(app);
}

/** Renders a graph in a format. */
export async function renderGraph(g: TopologyGraph, format: GraphFormat): Promise<string> {
  switch (format) {
    case 'mermaid':
      return toMermaid(g);
    case 'dot':
      return toDot(g);
    case 'svg':
      return toSvg(g);
    default:
      throw new UsageError(`graph --format: expected one of ${GRAPH_FORMATS.join(', ')}, got ${JSON.stringify(format)}`);
  }
}

// ------------------------------------------------------------------ the docs' picture

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The picture of the example topology in the docs, and the Markdown block that carries its Mermaid text. */
export const DOCS_GRAPH = {
  svg: 'docs/images/topology.svg',
  markdown: 'docs/topology.md',
  begin: '<!-- topology-graph:begin (npm run docs:graph writes this block) -->',
  end: '<!-- topology-graph:end -->',
} as const;

/**
 * The docs files `npm run docs:graph` writes, with their new content: the SVG, and docs/topology.md
 * with the Mermaid block between the markers replaced.
 */
export async function docsGraphFiles(root = ROOT): Promise<Map<string, string>> {
  const g = exampleGraph();
  const md = readFileSync(join(root, DOCS_GRAPH.markdown), 'utf8');
  const a = md.indexOf(DOCS_GRAPH.begin);
  const b = md.indexOf(DOCS_GRAPH.end);
  if (a < 0 || b < a) throw new Error(`docs:graph: ${DOCS_GRAPH.markdown} lacks the markers ${DOCS_GRAPH.begin} … ${DOCS_GRAPH.end}`);
  const block = `${DOCS_GRAPH.begin}\n\n![The example topology](images/topology.svg)\n\n<details><summary>Mermaid source</summary>\n\n\`\`\`mermaid\n${toMermaid(g)}\`\`\`\n\n</details>\n\n`;
  return new Map([
    [DOCS_GRAPH.svg, await toSvg(g)],
    [DOCS_GRAPH.markdown, md.slice(0, a) + block + md.slice(b)],
  ]);
}

/** Files among {@link docsGraphFiles} whose committed content differs. */
export async function staleDocsGraphFiles(root = ROOT): Promise<string[]> {
  const stale: string[] = [];
  for (const [f, text] of await docsGraphFiles(root)) {
    let now: string | undefined;
    try {
      now = readFileSync(join(root, f), 'utf8');
    } catch {
      now = undefined;
    }
    if (now !== text) stale.push(f);
  }
  return stale;
}

export interface GraphCliOptions {
  readonly format?: GraphFormat;
  readonly out?: string;
  readonly example?: boolean;
}

/** Runs `klutch-kit graph`; returns the rendered text (also written to --out or stdout). */
export async function runGraph(
  dir: string | undefined,
  opts: GraphCliOptions = {},
  write: (s: string) => void = (s) => process.stdout.write(s),
): Promise<string> {
  if (dir !== undefined && opts.example) throw new UsageError('graph: give either <dir> or --example, not both');
  const g = opts.example ? exampleGraph() : topologyGraph(readClusters(dir ?? 'dist'));
  const text = await renderGraph(g, opts.format ?? 'mermaid');
  if (opts.out) writeFileSync(opts.out, text);
  else write(text);
  return text;
}

/** The `graph` subcommand. */
export function graphCommand(): Command {
  return new Command('graph')
    .description('Draw a topology: clusters, claim APIs and their backends, bindings from app clusters, claims (Mermaid, DOT or SVG)')
    .argument('[dir]', 'synthesized folder, one sub-folder per cluster (default: dist)')
    .addOption(new Option('--format <format>', 'output format').choices([...GRAPH_FORMATS]).default('mermaid'))
    .option('--out <file>', 'write to this file instead of stdout')
    .option('--example', 'draw the example topology (constructs/app/example.ts) instead of a folder', false)
    .action(async (dir: string | undefined, opts: GraphCliOptions) => {
      await runGraph(dir, opts);
    });
}
