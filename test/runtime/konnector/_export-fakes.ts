/**
 * Fakes of the interfaces the export reconcilers are given (export-spec.ts, export-status.ts,
 * export-adoption.ts; their caches are real ObjectStores): an API client that records its calls and
 * answers from what the test planted. Only these injected interfaces are faked; the reconcilers'
 * real-cluster tests are test/integration/konnector/.
 */
import type { KubeClient, KubeObject, ResourceRef } from '../../../runtime/core/client.js';
import { ApiError } from '../../../runtime/core/client.js';

export interface Call {
  verb: string;
  resource: string;
  namespace?: string;
  name?: string;
  body?: unknown;
  opts?: unknown;
}

type Verbs = 'update' | 'updateStatus' | 'create' | 'apply' | 'delete' | 'getOrNull' | 'mergePatch' | 'jsonPatch';

/** The part of KubeClient the export reconcilers use, recording every call. */
export class FakeKube implements Pick<KubeClient, Verbs> {
  readonly calls: Call[] = [];
  /** Objects getOrNull answers with, by `namespace/name` (or `name`). */
  readonly live = new Map<string, KubeObject>();
  /** An error a verb throws (once per planted entry). */
  readonly failures = new Map<string, Error>();
  private rv = 100;

  private record(c: Call): void {
    this.calls.push(c);
    const err = this.failures.get(c.verb);
    if (err) {
      this.failures.delete(c.verb);
      throw err;
    }
  }
  writes(): Call[] {
    return this.calls.filter((c) => c.verb !== 'getOrNull');
  }
  async update<T extends KubeObject = KubeObject>(r: ResourceRef, obj: KubeObject): Promise<T> {
    this.record({ verb: 'update', resource: r.plural, namespace: obj.metadata.namespace, name: obj.metadata.name, body: obj });
    return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } } as T;
  }
  async updateStatus<T extends KubeObject = KubeObject>(r: ResourceRef, obj: KubeObject): Promise<T> {
    this.record({ verb: 'updateStatus', resource: r.plural, namespace: obj.metadata.namespace, name: obj.metadata.name, body: obj });
    return obj as T;
  }
  async create<T extends KubeObject = KubeObject>(r: ResourceRef, obj: KubeObject): Promise<T> {
    this.record({ verb: 'create', resource: r.plural, namespace: obj.metadata.namespace, name: obj.metadata.name, body: obj });
    return obj as T;
  }
  async apply<T extends KubeObject = KubeObject>(r: ResourceRef, obj: KubeObject, fieldManager: string, opts?: { force?: boolean }): Promise<T> {
    this.record({ verb: 'apply', resource: r.plural, namespace: obj.metadata.namespace, name: obj.metadata.name, body: obj, opts: { fieldManager, ...opts } });
    return obj as T;
  }
  async delete(r: ResourceRef, namespace: string | undefined, name: string, opts?: unknown): Promise<void> {
    this.record({ verb: 'delete', resource: r.plural, namespace, name, opts });
  }
  async getOrNull<T extends KubeObject = KubeObject>(r: ResourceRef, namespace: string | undefined, name: string): Promise<T | undefined> {
    this.record({ verb: 'getOrNull', resource: r.plural, namespace, name });
    return this.live.get(namespace ? `${namespace}/${name}` : name) as T | undefined;
  }
  async mergePatch<T extends KubeObject = KubeObject>(r: ResourceRef, namespace: string | undefined, name: string, patch: unknown): Promise<T> {
    this.record({ verb: 'mergePatch', resource: r.plural, namespace, name, body: patch });
    return { metadata: { name, namespace } } as T;
  }
  async jsonPatch<T extends KubeObject = KubeObject>(r: ResourceRef, namespace: string | undefined, name: string, ops: unknown[]): Promise<T> {
    this.record({ verb: 'jsonPatch', resource: r.plural, namespace, name, body: ops });
    return { metadata: { name, namespace } } as T;
  }
}

/** An API error as the API server sends it (for isConflict, isAlreadyExists, isNotFound). */
export const apiError = (code: number, reason: string): ApiError => new ApiError(code, reason, `fake ${reason}`, 'PUT', '/fake');

/** The bound resource in the tests: namespaced widgets. */
export const WIDGETS: ResourceRef = { group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true };
/** A cluster-scoped bound resource. */
export const GADGETS: ResourceRef = { group: 'example.com', version: 'v1', plural: 'gadgets', kind: 'Gadget', namespaced: false };

export function widget(namespace: string | undefined, name: string, extra: Partial<KubeObject> & { spec?: unknown; status?: unknown } = {}): KubeObject {
  const { metadata, ...rest } = extra;
  return {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name, ...(namespace ? { namespace } : {}), uid: `uid-${name}`, resourceVersion: '1', ...metadata },
    ...rest,
  };
}
