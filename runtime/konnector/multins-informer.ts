/**
 * One informer per namespace of a changing set (Klutch's multi-namespace informer): used where the
 * credentials only allow access to some namespaces (the provider namespaces bound to this consumer)
 * or where caching a whole resource cluster-wide would be wasteful (claimed Secrets).
 * With `cluster: true` it is a single cluster-wide informer. Read as one ObjectCache over all of them.
 */
import type { Logger } from 'pino';
import { splitKey, type KubeClient, type KubeObject, type ResourceRef } from '../core/client.js';
import { Informer, type EventHandler, type InformerOptions } from '../core/informer.js';
import type { IndexFunc, ObjectCache } from '../core/object-cache.js';

export class MultiNamespaceInformer<T extends KubeObject = KubeObject> implements ObjectCache<T> {
  private readonly informers = new Map<string, Informer<T>>();
  private readonly handlers: EventHandler<T>[] = [];
  private readonly indexers = new Map<string, IndexFunc<T>>();
  private stopped = false;

  constructor(
    readonly client: KubeClient,
    readonly resource: ResourceRef,
    private readonly opts: {
      resyncMs?: number;
      logger?: Logger;
      labelSelector?: string;
      cluster?: boolean;
      transform?: InformerOptions['transform'];
      /** Shared by the informers of every namespace (InformerOptions.admission). */
      admission?: InformerOptions['admission'];
    } = {},
  ) {
    if (opts.cluster) this.ensure('');
  }

  addEventHandler(h: EventHandler<T>): void {
    this.handlers.push(h);
    for (const inf of this.informers.values()) inf.addEventHandler(h);
  }

  /** Indexes the objects of every namespace's informer, present and future (see ObjectCache.byIndex). */
  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.indexers.has(name)) throw new Error(`MultiNamespaceInformer ${this.resource.plural}: index "${name}" already exists`);
    this.indexers.set(name, fn);
    for (const inf of this.informers.values()) inf.addIndex(name, fn);
  }

  private ensure(ns: string): void {
    if (this.informers.has(ns) || this.stopped) return;
    const inf = new Informer<T>(this.client, this.resource, {
      namespace: ns || undefined,
      resyncMs: this.opts.resyncMs,
      logger: this.opts.logger,
      labelSelector: this.opts.labelSelector,
      transform: this.opts.transform,
      admission: this.opts.admission,
    });
    for (const [name, fn] of this.indexers) inf.addIndex(name, fn);
    for (const h of this.handlers) inf.addEventHandler(h);
    this.informers.set(ns, inf);
    inf.start();
  }

  /** Starts informers for new namespaces and stops those no longer listed (cluster mode: no-op). */
  async setNamespaces(namespaces: Iterable<string>): Promise<void> {
    if (this.opts.cluster || this.stopped) return;
    const want = new Set(namespaces);
    for (const ns of want) this.ensure(ns);
    const gone = [...this.informers.keys()].filter((ns) => !want.has(ns));
    await Promise.all(
      gone.map(async (ns) => {
        const inf = this.informers.get(ns)!;
        this.informers.delete(ns);
        await inf.stop();
      }),
    );
  }

  get namespaces(): string[] {
    return [...this.informers.keys()];
  }

  get(key: string): T | undefined {
    const { namespace, name } = splitKey(key);
    return this.getByName(namespace, name);
  }

  getByName(namespace: string | undefined, name: string): T | undefined {
    if (this.opts.cluster) return this.informers.get('')?.getByName(namespace, name);
    return namespace === undefined ? undefined : this.informers.get(namespace)?.getByName(namespace, name);
  }

  list(namespace?: string): T[] {
    if (this.opts.cluster) return this.informers.get('')?.list(namespace) ?? [];
    if (namespace !== undefined) return this.informers.get(namespace)?.list() ?? [];
    return [...this.informers.values()].flatMap((i) => i.list());
  }

  byIndex(index: string, value: string): T[] {
    if (!this.indexers.has(index)) throw new Error(`MultiNamespaceInformer ${this.resource.plural}: no index "${index}"; call addIndex first`);
    return [...this.informers.values()].flatMap((i) => i.byIndex(index, value));
  }

  /** Whether the informer of `namespace` (cluster mode: the one informer) has synced. */
  hasSynced(namespace?: string): boolean {
    if (this.opts.cluster) return this.informers.get('')?.hasSynced() ?? false;
    if (namespace !== undefined) return this.informers.get(namespace)?.hasSynced() ?? false;
    return [...this.informers.values()].every((i) => i.hasSynced());
  }

  /** Waits until the informer of `namespace` has synced (cluster mode: the one informer); resolves at once when there is none. */
  async waitForNamespaceSync(namespace: string, timeoutMs?: number): Promise<void> {
    await this.informers.get(this.opts.cluster ? '' : namespace)?.waitForSync(timeoutMs);
  }

  async waitForSync(timeoutMs?: number): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync(timeoutMs)));
  }

  /** Informers (for stats and fault tests). */
  all(): Informer<T>[] {
    return [...this.informers.values()];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
    this.informers.clear();
  }
}
