/**
 * Shared informer: paged LIST, then WATCH from the list's resourceVersion with bookmarks; on
 * 410 Gone / "Expired" it relists and emits the difference (adds, updates and deletes) so no change
 * is lost; on other errors it retries with capped exponential backoff, resuming from the last seen
 * resourceVersion. Its cache (an ObjectStore, object-cache.ts: keyed by `namespace/name`, with optional
 * secondary indexes) is read through ObjectCache; event handlers; periodic resync (re-delivers every
 * cached object as an update).
 */
import type { Logger } from 'pino';
import { ApiError, isGone, keyOf, type KubeClient, type KubeObject, type ResourceRef, type WatchHandle } from './client.js';
import { ObjectStore, type IndexFunc, type ObjectCache } from './object-cache.js';

export interface EventHandler<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T): void;
}

/**
 * A handler that calls `fn` with the object of every event alike (added, updated: the new object,
 * deleted): for the reconcilers that only need to know that something changed.
 */
export function onAny<T>(fn: (obj: T) => void): EventHandler<T> {
  return { onAdd: fn, onUpdate: (_old, obj) => fn(obj), onDelete: fn };
}

export interface InformerOptions {
  /** Restrict to one namespace (namespaced resources). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Re-deliver all cached objects as updates this often; 0 disables. @default 0 */
  resyncMs?: number;
  /** LIST page size. @default 500 */
  pageSize?: number;
  /** Server-side watch timeout range, seconds (randomised to spread reconnects). @default [300, 600] */
  watchTimeoutSeconds?: [number, number];
  logger?: Logger;
  /** Name for logs. */
  name?: string;
  /**
   * Applied to every object before it is cached and handed to handlers (e.g. `stripManagedFields`, as
   * controller-runtime's cache transforms do). It may modify the object in place.
   */
  transform?: (obj: KubeObject) => KubeObject;
  /**
   * Decides whether an object the cache does not hold yet may enter it (a cap on what one informer, or
   * several sharing one admission, may hold): a refused object is neither cached nor handed to handlers;
   * it is asked about again with its next event. Objects already cached are always kept in sync.
   * `forget` is called for every object that leaves the cache (deleted, gone on relist, informer stopped).
   */
  admission?: InformerAdmission<KubeObject>;
}

/** See InformerOptions.admission. */
export interface InformerAdmission<T extends KubeObject = KubeObject> {
  /** Whether `obj`, not cached yet, may be; called again for an object already admitted. */
  admit(obj: T): boolean;
  /** `obj` left the cache. */
  forget(obj: T): void;
}

/**
 * Drops `metadata.managedFields` (often a third of an object) from cached objects. Safe for objects
 * that are later sent back with PUT: an update without managedFields keeps the live ones.
 */
export function stripManagedFields<T extends KubeObject>(o: T): T {
  if (o.metadata?.managedFields !== undefined) delete o.metadata.managedFields;
  return o;
}

export interface InformerStats {
  lists: number;
  watches: number;
  relistsOnGone: number;
  events: number;
}

/** A watch that ends cleanly sooner than this counts as a short one (see run()). */
const SHORT_WATCH_MS = 1000;

export class Informer<T extends KubeObject = KubeObject> implements ObjectCache<T> {
  private readonly store: ObjectStore<T>;
  private readonly handlers: EventHandler<T>[] = [];
  private resourceVersion: string | undefined;
  private synced = false;
  private stopped = false;
  private started = false;
  private watch: WatchHandle | undefined;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private syncWaiters: Array<() => void> = [];
  /** Last error of LIST/WATCH, cleared when a LIST succeeds. Useful for condition messages. */
  lastError: Error | undefined;
  readonly stats: InformerStats = { lists: 0, watches: 0, relistsOnGone: 0, events: 0 };
  readonly name: string;

  constructor(
    readonly client: KubeClient,
    readonly resource: ResourceRef,
    readonly opts: InformerOptions = {},
  ) {
    this.name = opts.name ?? `${resource.plural}${resource.group ? '.' + resource.group : ''}${opts.namespace ? ' in ' + opts.namespace : ''}`;
    this.store = new ObjectStore<T>(`Informer ${this.name}`);
  }

  addEventHandler(h: EventHandler<T>): void {
    this.handlers.push(h);
    if (this.synced) for (const o of this.store.values()) this.call(() => h.onAdd?.(o));
  }

  addIndex(name: string, fn: IndexFunc<T>): void {
    this.store.addIndex(name, fn);
  }

  byIndex(name: string, value: string): T[] {
    return this.store.byIndex(name, value);
  }

  /** The first object of an index value that `pred` accepts, without building the list {@link byIndex} returns. */
  findByIndex(name: string, value: string, pred: (o: T) => boolean): T | undefined {
    return this.store.findByIndex(name, value, pred);
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }
  getByName(namespace: string | undefined, name: string): T | undefined {
    return this.store.getByName(namespace, name);
  }
  list(namespace?: string): T[] {
    return this.store.list(namespace);
  }
  keys(): string[] {
    return this.store.keys();
  }
  get size(): number {
    return this.store.size;
  }
  hasSynced(): boolean {
    return this.synced;
  }
  get lastResourceVersion(): string | undefined {
    return this.resourceVersion;
  }

  /** Resolves when the first LIST is in the cache; rejects after timeoutMs (if given) or on stop. */
  waitForSync(timeoutMs?: number): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const w = () => {
        if (timer) clearTimeout(timer);
        if (this.synced) resolve();
        else reject(new Error(`informer ${this.name} stopped before it synced`));
      };
      this.syncWaiters.push(w);
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          this.syncWaiters = this.syncWaiters.filter((x) => x !== w);
          const why = this.lastError ? `: last error: ${this.lastError.message}` : '';
          reject(new Error(`informer ${this.name} did not sync within ${timeoutMs} ms${why}`));
        }, timeoutMs);
      }
    });
  }

  start(): this {
    if (this.started) return this;
    this.started = true;
    this.loop = this.run();
    if (this.opts.resyncMs && this.opts.resyncMs > 0) {
      this.resyncTimer = setInterval(() => this.resync(), this.opts.resyncMs);
      this.resyncTimer.unref?.();
    }
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    this.watch?.abort();
    this.wake?.();
    for (const w of this.syncWaiters.splice(0)) w();
    await this.loop;
    // The cache stays readable after stop (callers list what was left); it no longer counts as held.
    const adm = this.opts.admission;
    if (adm) for (const o of this.store.values()) adm.forget(o);
  }

  /** Re-deliver every cached object as an update (periodic resync). */
  resync(): void {
    for (const o of this.store.values()) for (const h of this.handlers) this.call(() => h.onUpdate?.(o, o));
  }

  /** Forces a relist on the next loop iteration (used by tests to simulate an expired watch). */
  forceRelist(): void {
    this.resourceVersion = undefined;
    this.watch?.abort();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(t);
        this.wake = undefined;
        resolve();
      };
    });
  }

  private async run(): Promise<void> {
    let failures = 0;
    let shortWatches = 0;
    const log = this.opts.logger;
    while (!this.stopped) {
      try {
        if (this.resourceVersion === undefined) await this.relist();
        if (this.stopped) break;
        const t0 = performance.now();
        await this.watchOnce();
        failures = 0;
        // A watch the server closes at once, again and again (a broken proxy, a hostile server, a line
        // past maxWatchLineBytes) would otherwise be reopened in a tight loop: back off like a failure.
        if (!this.stopped && performance.now() - t0 < SHORT_WATCH_MS) {
          shortWatches++;
          if (shortWatches > 1) await this.sleep(Math.min(30_000, 100 * Math.pow(2, Math.min(shortWatches, 9))));
        } else shortWatches = 0;
      } catch (e) {
        if (this.stopped) break;
        if (isGone(e)) {
          this.stats.relistsOnGone++;
          log?.info({ informer: this.name }, 'watch expired (410 Gone); relisting');
          this.resourceVersion = undefined;
          continue;
        }
        this.lastError = e as Error;
        failures++;
        const delay = Math.min(30_000, 100 * Math.pow(2, Math.min(failures, 9)));
        log?.warn({ informer: this.name, err: (e as Error).message, retryInMs: delay }, 'list/watch failed; retrying');
        await this.sleep(delay);
      }
    }
  }

  private query(): Record<string, string | number | undefined> {
    return { labelSelector: this.opts.labelSelector, fieldSelector: this.opts.fieldSelector };
  }

  private async relist(): Promise<void> {
    const items: T[] = [];
    let cont: string | undefined;
    let rv: string | undefined;
    do {
      const page = await this.client.list<T>(this.resource, this.opts.namespace, {
        ...this.query(),
        limit: this.opts.pageSize ?? 500,
        continue: cont,
      });
      this.stats.lists++;
      for (const it of page.items) {
        if (!it.apiVersion) it.apiVersion = this.resource.group ? `${this.resource.group}/${this.resource.version}` : this.resource.version;
        if (!it.kind && this.resource.kind) it.kind = this.resource.kind;
        const o = this.opts.transform ? (this.opts.transform(it) as T) : it;
        // A refused object is dropped page by page: a capped informer never holds more, even while listing.
        if (this.opts.admission && !this.store.has(keyOf(o)) && !this.opts.admission.admit(o)) continue;
        items.push(o);
      }
      cont = page.metadata.continue || undefined;
      rv = page.metadata.resourceVersion;
    } while (cont && !this.stopped);
    if (this.stopped) return;
    this.replace(items);
    this.resourceVersion = rv;
    this.lastError = undefined;
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  private replace(items: T[]): void {
    const seen = new Set<string>();
    for (const it of items) {
      const k = keyOf(it);
      seen.add(k);
      const old = this.store.get(k);
      this.put(k, it);
      if (!old) this.emit('add', it);
      else if (old.metadata.resourceVersion !== it.metadata.resourceVersion) this.emit('update', it, old);
    }
    for (const [k, old] of [...this.store.entries()]) {
      if (!seen.has(k)) {
        this.remove(k);
        this.emit('delete', old);
      }
    }
  }

  private async watchOnce(): Promise<void> {
    const [lo, hi] = this.opts.watchTimeoutSeconds ?? [300, 600];
    let gone: ApiError | undefined;
    const handle = await this.client.watch<T>(
      this.resource,
      this.opts.namespace,
      {
        ...this.query(),
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: 'true',
        timeoutSeconds: Math.floor(lo + Math.random() * (hi - lo)),
      },
      (ev) => {
        if (gone) return;
        this.stats.events++;
        if (this.opts.transform && (ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED')) ev.object = this.opts.transform(ev.object) as T;
        switch (ev.type) {
          case 'ADDED':
          case 'MODIFIED': {
            const o = ev.object;
            const k = keyOf(o);
            const old = this.store.get(k);
            this.resourceVersion = o.metadata.resourceVersion;
            if (!old && this.opts.admission && !this.opts.admission.admit(o)) break;
            this.put(k, o);
            if (old) this.emit('update', o, old);
            else this.emit('add', o);
            break;
          }
          case 'DELETED': {
            const o = ev.object;
            const k = keyOf(o);
            const old = this.store.get(k);
            this.remove(k);
            this.resourceVersion = o.metadata.resourceVersion;
            this.emit('delete', old ?? o);
            break;
          }
          case 'BOOKMARK':
            this.resourceVersion = ev.object.metadata.resourceVersion;
            break;
          case 'ERROR': {
            const st = ev.object as unknown as { code?: number; reason?: string; message?: string };
            gone = new ApiError(st.code ?? 0, st.reason ?? 'WatchError', st.message ?? '', 'WATCH', this.name);
            this.watch?.abort();
            break;
          }
        }
      },
    );
    this.stats.watches++;
    this.watch = handle;
    if (this.stopped) handle.abort();
    await handle.done;
    this.watch = undefined;
    if (gone) throw gone;
  }

  private put(k: string, o: T): void {
    this.store.put(o, k);
  }

  private remove(k: string): void {
    const old = this.store.delete(k);
    if (old) this.opts.admission?.forget(old);
  }

  // Once per event and handler: no closure per call, unlike call().
  private emit(kind: 'add' | 'update' | 'delete', o: T, old?: T): void {
    for (const h of this.handlers) {
      try {
        if (kind === 'add') h.onAdd?.(o);
        else if (kind === 'update') h.onUpdate?.(old!, o);
        else h.onDelete?.(o);
      } catch (e) {
        this.handlerThrew(e);
      }
    }
  }

  private call(f: () => void): void {
    try {
      f();
    } catch (e) {
      this.handlerThrew(e);
    }
  }

  private handlerThrew(e: unknown): void {
    this.opts.logger?.error({ informer: this.name, err: (e as Error).message }, 'event handler threw');
  }
}
