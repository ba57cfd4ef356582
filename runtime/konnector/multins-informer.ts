/**
 * One informer per namespace of a changing set (Klutch's multi-namespace informer): used where the
 * credentials only allow access to some namespaces (the provider namespaces bound to this consumer)
 * or where caching a whole resource cluster-wide would be wasteful (claimed Secrets).
 * With `namespaces === 'all'` it is a single cluster-wide informer.
 */
import type { Logger } from 'pino';
import type { KubeClient, KubeObject, ResourceRef } from '../core/client.js';
import { Informer, type EventHandler, type InformerOptions } from '../core/informer.js';

export class MultiNamespaceInformer<T extends KubeObject = KubeObject> {
  private readonly informers = new Map<string, Informer<T>>();
  private readonly handlers: EventHandler<T>[] = [];
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

  get(namespace: string | undefined, name: string): T | undefined {
    if (this.opts.cluster) return this.informers.get('')?.getByName(namespace, name);
    return namespace === undefined ? undefined : this.informers.get(namespace)?.getByName(namespace, name);
  }

  list(namespace?: string): T[] {
    if (this.opts.cluster) return this.informers.get('')?.list(namespace) ?? [];
    if (namespace !== undefined) return this.informers.get(namespace)?.list() ?? [];
    return [...this.informers.values()].flatMap((i) => i.list());
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
