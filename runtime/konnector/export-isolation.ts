/**
 * Isolation of one consumer's objects on the provider, behind one interface: where the upstream copy
 * of a consumer object lives, which provider objects are this consumer's, which annotations mark
 * them, and whether an upstream object may be taken over. One strategy per case:
 *
 * - namespaced resources: the consumer namespace's provider namespace (APIServiceNamespace), same name;
 * - cluster-scoped, `clusterScopedIsolation: Prefixed` (the default): `<clusterNs>-<name>`, annotated
 *   with the cluster namespace;
 * - cluster-scoped, `None`: the same name, annotated with the cluster namespace;
 * - cluster-scoped, `Namespaced`: the same name, namespaced, in the consumer's cluster namespace.
 *
 * Used by the spec-up, status-down and adoption reconcilers (export-spec.ts, export-status.ts,
 * export-adoption.ts) and by the informer wiring of export-sync.ts.
 */
import type { KubeObject } from '../core/client.js';
import { CLUSTER_NAMESPACE_ANNOTATION } from './types.js';

/** Where an object lives: namespace (absent for cluster-scoped objects) and name. */
export type Loc = { namespace?: string; name: string };

/** The cache/work-queue key of a location: `namespace/name`, or `name`. */
export const locKey = (l: Loc): string => (l.namespace ? `${l.namespace}/${l.name}` : l.name);

/** The `clusterScopedIsolation` values of an APIServiceExport. */
export type ClusterScopedIsolation = 'Prefixed' | 'None' | 'Namespaced';

/** What a strategy needs to know of the consumer's binding. */
export interface IsolationContext {
  /** The consumer's cluster namespace on the provider. */
  readonly clusterNamespace: string;
  /** Provider namespace bound to a consumer namespace (APIServiceNamespace status), if assigned. */
  providerNamespaceFor(consumerNamespace: string): string | undefined;
  /** Consumer namespace of a provider namespace, if it is one of this consumer's. */
  consumerNamespaceFor(providerNamespace: string): string | undefined;
}

export interface IsolationStrategy {
  /** `Namespaced resources`, or the `clusterScopedIsolation` of a cluster-scoped export. */
  readonly name: string;
  /** Whether the upstream copies are namespaced objects. */
  readonly providerNamespaced: boolean;
  /** Provider location of a consumer object; undefined when its namespace has no provider namespace yet. */
  toProvider(namespace: string | undefined, name: string): Loc | undefined;
  /** Consumer location of a provider object; undefined when the object is not this consumer's. */
  toConsumer(o: KubeObject): Loc | undefined;
  /** Annotations every upstream copy carries, besides the bound and spec-hash annotations. */
  upstreamAnnotations(): Record<string, string>;
  /** Why the konnector must not take over the existing upstream object `up`; undefined when it is this consumer's. */
  refuseTakeover(up: KubeObject): string | undefined;
}

class NamespacedResources implements IsolationStrategy {
  readonly name = 'Namespaced resources';
  readonly providerNamespaced = true;
  constructor(private readonly ctx: IsolationContext) {}
  toProvider(namespace: string | undefined, name: string): Loc | undefined {
    const p = namespace ? this.ctx.providerNamespaceFor(namespace) : undefined;
    return p ? { namespace: p, name } : undefined;
  }
  toConsumer(o: KubeObject): Loc | undefined {
    const { namespace, name } = o.metadata;
    if (!name) return undefined;
    const c = namespace ? this.ctx.consumerNamespaceFor(namespace) : undefined;
    return c ? { namespace: c, name } : undefined;
  }
  upstreamAnnotations(): Record<string, string> {
    return {};
  }
  refuseTakeover(): string | undefined {
    return undefined; // the provider namespace is the consumer's own
  }
}

/** Cluster-scoped copies that say which cluster namespace they belong to (Prefixed, None). */
abstract class AnnotatedClusterScoped implements IsolationStrategy {
  abstract readonly name: string;
  readonly providerNamespaced = false;
  constructor(protected readonly cns: string) {}
  abstract toProvider(namespace: string | undefined, name: string): Loc;
  abstract toConsumer(o: KubeObject): Loc | undefined;
  upstreamAnnotations(): Record<string, string> {
    return { [CLUSTER_NAMESPACE_ANNOTATION]: this.cns };
  }
  refuseTakeover(up: KubeObject): string | undefined {
    const owner = up.metadata.annotations?.[CLUSTER_NAMESPACE_ANNOTATION];
    if (owner === this.cns) return undefined;
    return `upstream ${up.metadata.name} belongs to cluster namespace "${owner ?? '(none)'}", not "${this.cns}"; refusing to take it over`;
  }
  protected owned(o: KubeObject): boolean {
    return o.metadata.annotations?.[CLUSTER_NAMESPACE_ANNOTATION] === this.cns;
  }
}

class PrefixedIsolation extends AnnotatedClusterScoped {
  readonly name = 'Prefixed';
  toProvider(_namespace: string | undefined, name: string): Loc {
    return { name: `${this.cns}-${name}` };
  }
  toConsumer(o: KubeObject): Loc | undefined {
    const name = o.metadata.name;
    if (!name || !this.owned(o) || !name.startsWith(`${this.cns}-`)) return undefined;
    return { name: name.slice(this.cns.length + 1) };
  }
}

class NoIsolation extends AnnotatedClusterScoped {
  readonly name = 'None';
  toProvider(_namespace: string | undefined, name: string): Loc {
    return { name };
  }
  toConsumer(o: KubeObject): Loc | undefined {
    const name = o.metadata.name;
    return name && this.owned(o) ? { name } : undefined;
  }
}

class NamespacedIsolation implements IsolationStrategy {
  readonly name = 'Namespaced';
  readonly providerNamespaced = true;
  constructor(private readonly cns: string) {}
  toProvider(_namespace: string | undefined, name: string): Loc {
    return { namespace: this.cns, name };
  }
  toConsumer(o: KubeObject): Loc | undefined {
    const { namespace, name } = o.metadata;
    return name && namespace === this.cns ? { name } : undefined;
  }
  upstreamAnnotations(): Record<string, string> {
    return { [CLUSTER_NAMESPACE_ANNOTATION]: this.cns };
  }
  refuseTakeover(): string | undefined {
    return undefined; // the cluster namespace is the consumer's own
  }
}

/**
 * The strategy of an export: namespaced resources keep their own; cluster-scoped ones follow
 * `clusterScopedIsolation` (default `Prefixed`, as Klutch). An unknown value is an error.
 */
export function isolationFor(namespaced: boolean, clusterScopedIsolation: string | undefined, ctx: IsolationContext): IsolationStrategy {
  if (namespaced) return new NamespacedResources(ctx);
  switch (clusterScopedIsolation ?? 'Prefixed') {
    case 'Prefixed':
      return new PrefixedIsolation(ctx.clusterNamespace);
    case 'None':
      return new NoIsolation(ctx.clusterNamespace);
    case 'Namespaced':
      return new NamespacedIsolation(ctx.clusterNamespace);
    default:
      throw new Error(`spec.clusterScopedIsolation: ${JSON.stringify(clusterScopedIsolation)} is not one of "Prefixed", "None", "Namespaced"`);
  }
}
