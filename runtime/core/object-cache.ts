/**
 * The one way a reconciler reads cached objects: `ObjectCache<T>`, a typed read-only view (by key, by
 * name, by namespace, by index). The shared informer (informer.ts) and the konnector's informer per
 * namespace (konnector/multins-informer.ts) offer it; a reconciler's dependencies declare it (or a
 * `Pick` of it), never a shape of their own. `ObjectStore<T>` is the store behind it: the informer
 * keeps its objects and indexes in one, and a unit test fills one with the objects a reconciler reads.
 */
import { keyOf, type KubeObject } from './client.js';

/** The values an object is indexed under (see ObjectCache.byIndex). */
export type IndexFunc<T> = (obj: T) => string[];

/** A read-only, typed view of cached objects. */
export interface ObjectCache<T extends KubeObject = KubeObject> {
  /** By key: `namespace/name`, or `name` for a cluster-scoped object (the work-queue key). */
  get(key: string): T | undefined;
  /** By namespace (undefined for a cluster-scoped object) and name. */
  getByName(namespace: string | undefined, name: string): T | undefined;
  /** Every object, or those of one namespace. */
  list(namespace?: string): T[];
  /** The objects index `index` maps `value` to; throws when the cache has no such index. */
  byIndex(index: string, value: string): T[];
}

/** Objects by key, with secondary indexes: what an informer caches, or what a unit test plants. */
export class ObjectStore<T extends KubeObject = KubeObject> implements ObjectCache<T> {
  private readonly objects = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  /** @param label names the store in errors (`informer widgets.example.com`). */
  constructor(readonly label = 'object store') {}

  /** A store holding `objs` (a unit test's cache). */
  static of<T extends KubeObject>(...objs: T[]): ObjectStore<T> {
    const s = new ObjectStore<T>();
    for (const o of objs) s.put(o);
    return s;
  }

  /** Indexes every object, present and future, under the values `fn` returns. */
  addIndex(name: string, fn: IndexFunc<T>): this {
    if (this.indexers.has(name)) throw new Error(`${this.label}: index "${name}" already exists`);
    this.indexers.set(name, fn);
    const idx = new Map<string, Set<string>>();
    this.indices.set(name, idx);
    for (const [k, o] of this.objects) for (const v of fn(o)) addTo(idx, v, k);
    return this;
  }

  /** Adds or replaces the object at `key` (its own key unless given); returns the one it replaced. */
  put(obj: T, key = keyOf(obj)): T | undefined {
    const old = this.objects.get(key);
    if (old) this.unindex(key, old);
    this.objects.set(key, obj);
    for (const [name, fn] of this.indexers) for (const v of fn(obj)) addTo(this.indices.get(name)!, v, key);
    return old;
  }

  /** Removes the object at `key`; returns it (undefined when there was none). */
  delete(key: string): T | undefined {
    const old = this.objects.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.objects.delete(key);
    return old;
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  getByName(namespace: string | undefined, name: string): T | undefined {
    return this.objects.get(namespace ? `${namespace}/${name}` : name);
  }

  list(namespace?: string): T[] {
    const all = [...this.objects.values()];
    return namespace === undefined ? all : all.filter((o) => o.metadata.namespace === namespace);
  }

  byIndex(index: string, value: string): T[] {
    const idx = this.indices.get(index);
    if (!idx) throw new Error(`${this.label}: no index "${index}"; call addIndex first`);
    return [...(idx.get(value) ?? [])].map((k) => this.objects.get(k)!).filter(Boolean);
  }

  /** The first object of an index value that `pred` accepts, without building the list {@link byIndex} returns. */
  findByIndex(index: string, value: string, pred: (o: T) => boolean): T | undefined {
    const idx = this.indices.get(index);
    if (!idx) throw new Error(`${this.label}: no index "${index}"; call addIndex first`);
    for (const k of idx.get(value) ?? []) {
      const o = this.objects.get(k);
      if (o && pred(o)) return o;
    }
    return undefined;
  }

  has(key: string): boolean {
    return this.objects.has(key);
  }

  keys(): string[] {
    return [...this.objects.keys()];
  }

  /** The objects with their keys, in insertion order. */
  entries(): IterableIterator<[string, T]> {
    return this.objects.entries();
  }

  values(): IterableIterator<T> {
    return this.objects.values();
  }

  get size(): number {
    return this.objects.size;
  }

  private unindex(k: string, o: T): void {
    for (const [name, fn] of this.indexers) {
      const idx = this.indices.get(name)!;
      for (const v of fn(o)) {
        const s = idx.get(v);
        if (s) {
          s.delete(k);
          if (s.size === 0) idx.delete(v);
        }
      }
    }
  }
}

function addTo(idx: Map<string, Set<string>>, v: string, k: string): void {
  let s = idx.get(v);
  if (!s) idx.set(v, (s = new Set()));
  s.add(k);
}
