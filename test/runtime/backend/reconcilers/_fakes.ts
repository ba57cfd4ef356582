/**
 * Fakes of the interfaces the backend's reconcilers are given (reconcilers/types.ts; their caches are
 * real ObjectStores): an API client that records its calls and answers from a map. Only these
 * injected interfaces are faked; the reconcilers' real-cluster tests stay in test/integration/backend.
 */
import type { KubeObject, ResourceRef } from '../../../../runtime/core/index.js';
import type { ReconcilerKube } from '../../../../runtime/backend/reconcilers/types.js';

export interface Call {
  verb: 'getOrNull' | 'create' | 'update' | 'updateStatus' | 'delete' | 'apply';
  resource: string;
  namespace?: string;
  name?: string;
  obj?: KubeObject;
  opts?: unknown;
}

export class FakeKube implements ReconcilerKube {
  readonly calls: Call[] = [];
  /** Objects returned by getOrNull, by `plural/namespace/name` (namespace empty when cluster-scoped). */
  readonly objects = new Map<string, KubeObject>();
  /** Errors thrown by a verb on a resource (`verb plural`). */
  readonly failures = new Map<string, Error>();

  put(r: ResourceRef, o: KubeObject): this {
    this.objects.set(`${r.plural}/${o.metadata.namespace ?? ''}/${o.metadata.name}`, o);
    return this;
  }

  /** The calls that write (everything but getOrNull). */
  writes(): Call[] {
    return this.calls.filter((c) => c.verb !== 'getOrNull');
  }

  private record(c: Call): void {
    this.calls.push(c);
    const err = this.failures.get(`${c.verb} ${c.resource}`);
    if (err) throw err;
  }

  async getOrNull<T extends KubeObject = KubeObject>(r: ResourceRef, namespace: string | undefined, name: string): Promise<T | undefined> {
    this.record({ verb: 'getOrNull', resource: r.plural, namespace, name });
    return this.objects.get(`${r.plural}/${namespace ?? ''}/${name}`) as T | undefined;
  }
  async create<T extends KubeObject = KubeObject>(r: ResourceRef, obj: KubeObject): Promise<T> {
    this.record({ verb: 'create', resource: r.plural, namespace: obj.metadata.namespace, name: obj.metadata.name, obj });
    return obj as T;
  }
  async update<T extends KubeObject = KubeObject>(r: ResourceRef, obj: KubeObject): Promise<T> {
    this.record({ verb: 'update', resource: r.plural, namespace: obj.metadata.namespace, name: obj.metadata.name, obj });
    return obj as T;
  }
  async updateStatus<T extends KubeObject = KubeObject>(r: ResourceRef, obj: KubeObject): Promise<T> {
    this.record({ verb: 'updateStatus', resource: r.plural, namespace: obj.metadata.namespace, name: obj.metadata.name, obj });
    return obj as T;
  }
  async apply<T extends KubeObject = KubeObject>(r: ResourceRef, obj: KubeObject, _fieldManager: string, opts?: unknown): Promise<T> {
    this.record({ verb: 'apply', resource: r.plural, namespace: obj.metadata.namespace, name: obj.metadata.name, obj, opts });
    return obj as T;
  }
  async delete(r: ResourceRef, namespace: string | undefined, name: string, opts?: unknown): Promise<void> {
    this.record({ verb: 'delete', resource: r.plural, namespace, name, opts });
  }
}

export const minutesAgo = (m: number): string => new Date(Date.now() - m * 60_000).toISOString();
