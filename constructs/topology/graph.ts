/**
 * A picture of what a program composes: clusters, the claim APIs of the control plane with the
 * backends (Compositions) that implement them, the bind backend, the APIs each app cluster binds
 * and the claims it makes. Built from the rendered objects (so a synthesized folder gives the same
 * graph as the program), drawn as Mermaid text, Graphviz DOT, or SVG rendered offline by Graphviz
 * compiled to WebAssembly (@hpcc-js/wasm-graphviz: no browser, no network).
 */
import type { App } from 'cdk8s';
import { renderTopology } from './synth.js';
import { EnumLike, enumMembers } from '../_enum-like.js';
import { apiServiceBindingKind } from '../../contract/api/api-service-binding.js';
import { apiServiceExportTemplateKind } from '../../contract/api/api-service-export-template.js';

type Obj = { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string; labels?: Record<string, string> }; spec?: any };

/** The objects of one cluster. */
export interface GraphInput {
  readonly name: string;
  /** `control-plane` or `app`. @default - inferred: XRDs or export templates make a control plane, APIServiceBindings an app cluster */
  readonly role?: string;
  readonly objects: readonly Obj[];
}

/** What a node of the topology graph stands for (enum-like: static instances). */
export class GraphNodeKind extends EnumLike {
  /** A bindable claim API (XRD with claim names). */
  public static readonly API = new GraphNodeKind('api');
  /** An automation backend: a Composition of a claim API. */
  public static readonly BACKEND = new GraphNodeKind('backend');
  /** The bind backend (kubectl bind's server). */
  public static readonly BIND_BACKEND = new GraphNodeKind('bind-backend');
  /** The konnector of an app cluster. */
  public static readonly KONNECTOR = new GraphNodeKind('konnector');
  /** A claim on an app cluster. */
  public static readonly CLAIM = new GraphNodeKind('claim');

  /** Every instance, in declaration order. */
  public static get all(): readonly GraphNodeKind[] {
    return enumMembers(GraphNodeKind);
  }

  private constructor(
    /** `api`, `backend`, `bind-backend`, `konnector` or `claim`. */
    value: string,
  ) {
    super(value);
  }
}

export interface GraphNode {
  readonly id: string;
  readonly kind: GraphNodeKind;
  /** Lines of the label. */
  readonly label: readonly string[];
  /** Whether an APIServiceExportTemplate offers the API to app clusters (APIs only). */
  readonly exported?: boolean;
}

export interface GraphCluster {
  readonly id: string;
  readonly name: string;
  readonly role: string;
  readonly nodes: readonly GraphNode[];
}

/** What an edge of the topology graph stands for (enum-like: static instances). */
export class GraphEdgeKind extends EnumLike {
  /** API → Composition. */
  public static readonly IMPLEMENTED_BY = new GraphEdgeKind('implemented by');
  /** Konnector → API (an APIServiceBinding). */
  public static readonly BINDS = new GraphEdgeKind('binds');
  /** Claim → API it is an instance of, or → the backend its compositionRef selects. */
  public static readonly CLAIMS = new GraphEdgeKind('claims');

  /** Every instance, in declaration order. */
  public static get all(): readonly GraphEdgeKind[] {
    return enumMembers(GraphEdgeKind);
  }

  private constructor(
    /** `implemented by`, `binds` or `claims`. */
    value: string,
  ) {
    super(value);
  }
}

export interface GraphEdge {
  readonly from: string;
  readonly to: string;
  readonly kind: GraphEdgeKind;
}

export interface TopologyGraph {
  readonly clusters: readonly GraphCluster[];
  /** APIs bound by an app cluster but defined by no control plane of the input. */
  readonly external: readonly GraphNode[];
  readonly edges: readonly GraphEdge[];
}

const id = (...parts: string[]) => parts.join('__').replace(/[^A-Za-z0-9_]/g, '_');
const groupOf = (apiVersion = '') => (apiVersion.includes('/') ? apiVersion.split('/')[0] : '');

/** Builds the graph from the objects of each cluster. */
export function topologyGraph(inputs: readonly GraphInput[]): TopologyGraph {
  if (!Array.isArray(inputs as unknown)) throw new Error(`topologyGraph: ${JSON.stringify(inputs)} must be a list of clusters`);
  const clusters: GraphCluster[] = [];
  const edges: GraphEdge[] = [];
  // Claim APIs of every control plane: `<plural>.<group>` and `<group>/<kind>` → node id.
  const apiByName = new Map<string, string>();
  const apiByKind = new Map<string, { id: string; compositions: Map<string, string> }>();
  const sorted = [...inputs].sort((a, b) => a.name.localeCompare(b.name));
  const roleOf = (c: GraphInput) =>
    c.role ?? (c.objects.some((o) => o.kind === 'CompositeResourceDefinition' || o.kind === apiServiceExportTemplateKind.kind) ? 'control-plane' : 'app');

  for (const c of sorted.filter((x) => roleOf(x) === 'control-plane')) {
    const cid = id('c', c.name);
    const nodes: GraphNode[] = [];
    const exported = new Set(
      c.objects
        .filter((o) => o.kind === apiServiceExportTemplateKind.kind)
        .map((o) => {
          const s = o.spec?.APIServiceSelector ?? {};
          return `${s.resource}.${s.group}`;
        }),
    );
    const byXr = new Map<string, { id: string; compositions: Map<string, string> }>();
    // The API app clusters bind: the claim, or (v2 XRD, scope Namespaced) the composite resource itself.
    const bound = (o: GraphInput['objects'][number]) => o.spec?.claimNames ?? (o.spec?.scope === 'Namespaced' ? o.spec?.names : undefined);
    const xrds = c.objects
      .filter((o) => o.kind === 'CompositeResourceDefinition' && bound(o)?.kind)
      .sort((a, b) => String(bound(a).kind).localeCompare(String(bound(b).kind)));
    for (const x of xrds) {
      const b = bound(x);
      const name = `${b.plural}.${x.spec.group}`;
      const nid = id(cid, 'api', name);
      const entry = { id: nid, compositions: new Map<string, string>() };
      nodes.push({ id: nid, kind: GraphNodeKind.API, label: [b.kind, name], exported: exported.has(name) });
      apiByName.set(name, nid);
      apiByKind.set(`${x.spec.group}/${b.kind}`, entry);
      byXr.set(`${x.spec.group}/${x.spec.names?.kind}`, entry);
    }
    const comps = c.objects.filter((o) => o.kind === 'Composition').sort((a, b) => String(a.metadata?.name).localeCompare(String(b.metadata?.name)));
    for (const comp of comps) {
      const ref = comp.spec?.compositeTypeRef ?? {};
      const api = byXr.get(`${groupOf(ref.apiVersion)}/${ref.kind}`);
      if (!api || !comp.metadata?.name) continue;
      const nid = id(cid, 'backend', comp.metadata.name);
      nodes.push({ id: nid, kind: GraphNodeKind.BACKEND, label: [comp.metadata.name] });
      api.compositions.set(comp.metadata.name, nid);
      edges.push({ from: api.id, to: nid, kind: GraphEdgeKind.IMPLEMENTED_BY });
    }
    for (const d of c.objects.filter((o) => o.kind === 'Deployment' && o.metadata?.labels?.['app.kubernetes.io/component'] === 'bind-backend')) {
      nodes.push({
        id: id(cid, 'bind', d.metadata!.namespace ?? '', d.metadata!.name ?? ''),
        kind: GraphNodeKind.BIND_BACKEND,
        label: ['bind backend', `${d.metadata!.namespace}/${d.metadata!.name}`],
      });
    }
    clusters.push({ id: cid, name: c.name, role: 'control-plane', nodes });
  }

  const external = new Map<string, GraphNode>();
  for (const c of sorted.filter((x) => roleOf(x) !== 'control-plane')) {
    const cid = id('c', c.name);
    const nodes: GraphNode[] = [];
    const konnectors = c.objects.filter((o) => o.kind === 'Deployment' && o.metadata?.labels?.['app.kubernetes.io/component'] === 'konnector');
    const kid = id(cid, 'konnector');
    if (konnectors.length > 0 || c.objects.some((o) => o.kind === apiServiceBindingKind.kind))
      nodes.push({ id: kid, kind: GraphNodeKind.KONNECTOR, label: ['konnector'] });
    const bindings = c.objects
      .filter((o) => o.kind === apiServiceBindingKind.kind && o.metadata?.name)
      .map((o) => o.metadata!.name!)
      .sort();
    for (const b of bindings) {
      let to = apiByName.get(b);
      if (!to) {
        to = id('external', b);
        external.set(b, { id: to, kind: GraphNodeKind.API, label: [b, '(not in this program)'] });
      }
      edges.push({ from: kid, to, kind: GraphEdgeKind.BINDS });
    }
    const claims = c.objects
      .filter((o) => apiByKind.has(`${groupOf(o.apiVersion)}/${o.kind}`))
      .sort((a, b) => `${a.metadata?.namespace}/${a.metadata?.name}`.localeCompare(`${b.metadata?.namespace}/${b.metadata?.name}`));
    for (const o of claims) {
      const api = apiByKind.get(`${groupOf(o.apiVersion)}/${o.kind}`)!;
      const ns = o.metadata?.namespace ?? 'default';
      const nid = id(cid, 'claim', o.kind!, ns, o.metadata?.name ?? '');
      nodes.push({ id: nid, kind: GraphNodeKind.CLAIM, label: [`${o.metadata?.name}`, `${o.kind} in ${ns}`] });
      const backend = api.compositions.get(o.spec?.compositionRef?.name);
      edges.push({ from: nid, to: backend ?? api.id, kind: GraphEdgeKind.CLAIMS });
    }
    clusters.push({ id: cid, name: c.name, role: roleOf(c), nodes });
  }
  return { clusters, external: [...external.values()], edges };
}

/** The graph of a cdk8s App made of ClusterCharts (renders it; construct validations run). */
export function topologyGraphOfApp(app: App): TopologyGraph {
  return topologyGraph(renderTopology(app).map((c) => ({ name: c.name, role: c.role, objects: c.files.map((f) => f.object) })));
}

const roleTitle = (role: string) => (role === 'control-plane' ? 'control plane' : role === 'app' ? 'app cluster' : role);

/** Mermaid flowchart text (GitHub renders it in Markdown). */
export function toMermaid(g: TopologyGraph): string {
  const esc = (s: string) => s.replace(/"/g, '#quot;');
  const label = (n: GraphNode) => `"${n.label.map(esc).join('<br/>')}${n.exported === false ? '<br/>(not exported)' : ''}"`;
  const shape = (n: GraphNode) => {
    switch (n.kind) {
      case GraphNodeKind.API:
        return `${n.id}[${label(n)}]`;
      case GraphNodeKind.BACKEND:
        return `${n.id}([${label(n)}])`;
      case GraphNodeKind.BIND_BACKEND:
        return `${n.id}[[${label(n)}]]`;
      case GraphNodeKind.KONNECTOR:
        return `${n.id}{{${label(n)}}}`;
      case GraphNodeKind.CLAIM:
        return `${n.id}[/${label(n)}/]`;
      default:
        throw new Error(`toMermaid: node ${n.id} has the unknown kind ${String(n.kind)}`);
    }
  };
  const out = ['flowchart LR'];
  for (const c of g.clusters) {
    out.push(`  subgraph ${c.id}["${esc(c.name)} (${roleTitle(c.role)})"]`);
    for (const n of c.nodes) out.push(`    ${shape(n)}`);
    out.push('  end');
  }
  for (const n of g.external) out.push(`  ${shape(n)}`);
  for (const e of g.edges) {
    const arrow = e.kind === GraphEdgeKind.IMPLEMENTED_BY ? '-->' : e.kind === GraphEdgeKind.BINDS ? '==>' : '-.->';
    out.push(`  ${e.from} ${arrow} ${e.to}`);
  }
  out.push(
    '  classDef api fill:#e8f0fe,stroke:#3367d6',
    '  classDef backend fill:#e6f4ea,stroke:#188038',
    '  classDef claim fill:#fef7e0,stroke:#b06000',
    '  classDef runtime fill:#f3e8fd,stroke:#8430ce',
  );
  const cls = (k: GraphNodeKind) =>
    k === GraphNodeKind.API ? 'api' : k === GraphNodeKind.BACKEND ? 'backend' : k === GraphNodeKind.CLAIM ? 'claim' : 'runtime';
  const all = [...g.clusters.flatMap((c) => c.nodes), ...g.external];
  for (const k of GraphNodeKind.all) {
    const ids = all.filter((n) => n.kind === k).map((n) => n.id);
    if (ids.length) out.push(`  class ${ids.join(',')} ${cls(k)}`);
  }
  return out.join('\n') + '\n';
}

/** Graphviz DOT text (left to right, one box per cluster). */
export function toDot(g: TopologyGraph): string {
  const q = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  const style = new Map<GraphNodeKind, string>([
    [GraphNodeKind.API, 'shape=box, style="rounded,filled", fillcolor="#e8f0fe", color="#3367d6"'],
    [GraphNodeKind.BACKEND, 'shape=box, style="filled", fillcolor="#e6f4ea", color="#188038"'],
    [GraphNodeKind.BIND_BACKEND, 'shape=component, style="filled", fillcolor="#f3e8fd", color="#8430ce"'],
    [GraphNodeKind.KONNECTOR, 'shape=hexagon, style="filled", fillcolor="#f3e8fd", color="#8430ce"'],
    [GraphNodeKind.CLAIM, 'shape=note, style="filled", fillcolor="#fef7e0", color="#b06000"'],
  ]);
  const node = (n: GraphNode, indent: string) =>
    `${indent}${n.id} [label=${q([...n.label, ...(n.exported === false ? ['(not exported)'] : [])].join('\n'))}, ${style.get(n.kind)}];`;
  const out = [
    'digraph topology {',
    '  rankdir=LR; ranksep=1.2; nodesep=0.25; fontname="Helvetica"; fontsize=12;',
    '  node [fontname="Helvetica", fontsize=10, margin="0.25,0.06"];',
    '  edge [fontname="Helvetica", fontsize=9, color="#5f6368"];',
  ];
  // App clusters first, so they come out on the left of the control plane.
  const ordered = [...g.clusters.filter((c) => c.role !== 'control-plane'), ...g.clusters.filter((c) => c.role === 'control-plane')];
  for (const c of ordered) {
    out.push(`  subgraph cluster_${c.id} {`, `    label=${q(`${c.name} (${roleTitle(c.role)})`)}; style="rounded"; color="#9aa0a6";`);
    for (const n of c.nodes) out.push(node(n, '    '));
    out.push('  }');
  }
  for (const n of g.external) out.push(node(n, '  '));
  for (const e of g.edges) {
    const s =
      e.kind === GraphEdgeKind.BINDS ? 'color="#8430ce", penwidth=1.2' : e.kind === GraphEdgeKind.CLAIMS ? 'style=dashed, color="#b06000"' : 'color="#188038"';
    out.push(`  ${e.from} -> ${e.to} [${s}];`);
  }
  out.push('}');
  return out.join('\n') + '\n';
}

/** SVG of the graph, rendered by Graphviz (WebAssembly) in this process. */
export async function toSvg(g: TopologyGraph): Promise<string> {
  const { Graphviz } = await import('@hpcc-js/wasm-graphviz');
  const gv = await Graphviz.load();
  return gv.dot(toDot(g), 'svg');
}
