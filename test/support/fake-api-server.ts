/**
 * The one fake API server of the unit tests: a KubeClient (`api.client`) over objects in memory with
 * the API server's semantics that reconcilers depend on — get / list / create / update / updateStatus
 * / merge, JSON and apply patches / delete (`generateName` names too), a resourceVersion bumped by every write (a stale one is a
 * 409 Conflict, an existing name a 409 AlreadyExists, a missing object a 404), uid preconditions,
 * finalizers (a delete marks the object deleting until the last one is removed), label and field
 * selectors, and watches that see every later write (a watch from a compacted resourceVersion is
 * 410 Gone). It records every call (`calls`, `writes()`) and fails calls on request (`fail`).
 * `cache(r)` is the in-step read cache of a resource (what a synced informer offers).
 *
 * It stays a unit-test tool: server-side apply is a merge of the applied object (no field ownership),
 * and admission, validation and defaulting are left out. What depends on those is tested against the
 * real API servers of test/integration/.
 */
import { ApiError, keyOf, type KubeClient, type KubeObject, type ResourceRef, type WatchEvent, type WatchHandle } from '../../runtime/core/client.js';
import { ObjectStore } from '../../runtime/core/object-cache.js';

/** The verbs of the fake client: KubeClient's method names. */
export type Verb = 'get' | 'getOrNull' | 'list' | 'create' | 'update' | 'updateStatus' | 'mergePatch' | 'jsonPatch' | 'apply' | 'delete' | 'watch' | 'request';

/** One call made to the fake client. */
export interface Call {
  readonly verb: Verb;
  /** The resource's plural (`request`: the path). */
  readonly resource: string;
  readonly namespace?: string;
  readonly name?: string;
  /** The object, patch or request body sent. */
  readonly body?: unknown;
  /** Options: delete's, apply's `{ fieldManager, force, subresource }`, a patch's `{ subresource }`, list's and watch's query. */
  readonly opts?: unknown;
}

interface Watcher {
  readonly resource: string;
  readonly namespace: string | undefined;
  readonly matches: (o: KubeObject) => boolean;
  readonly onEvent: (ev: WatchEvent) => void;
  readonly end: () => void;
}

interface Failure {
  readonly verb: Verb;
  readonly resource?: string;
  readonly error: Error;
  times: number;
}

/** What `answer` returns for a `request()` (the raw-path calls: TokenRequests and the like). */
export type RequestHandler = (method: string, path: string, body: unknown) => unknown;

const READS: ReadonlySet<Verb> = new Set(['get', 'getOrNull', 'list', 'watch']);

const resourceKey = (r: ResourceRef): string => `${r.plural}.${r.group ?? ''}`;
const path = (r: ResourceRef, namespace: string | undefined, name?: string): string =>
  `/${r.group ? `apis/${r.group}/${r.version}` : `api/${r.version}`}${namespace ? `/namespaces/${namespace}` : ''}/${r.plural}${name ? `/${name}` : ''}`;

export class FakeApiServer {
  /** Every call, in order. */
  readonly calls: Call[] = [];
  private readonly stores = new Map<string, ObjectStore>();
  private readonly watchers = new Set<Watcher>();
  private readonly failures: Failure[] = [];
  private readonly handlers: Array<{ method: string; path: RegExp; fn: RequestHandler }> = [];
  private rv = 0;
  private uids = 0;
  /** Suffixes of names made from `generateName`. */
  private generated = 0;
  /** Watches from a resourceVersion at or below this one are 410 Gone (see compact()). */
  private compactedAt = 0;

  /** The client to hand to the code under test. */
  readonly client: KubeClient;

  constructor() {
    const c: Partial<Record<Verb, unknown>> = {
      get: (r: ResourceRef, ns: string | undefined, name: string) => this.get(r, ns, name),
      getOrNull: (r: ResourceRef, ns: string | undefined, name: string) => this.getOrNull(r, ns, name),
      list: (r: ResourceRef, ns?: string, query?: Record<string, unknown>) => this.list(r, ns, query),
      create: (r: ResourceRef, obj: KubeObject) => this.create(r, obj),
      update: (r: ResourceRef, obj: KubeObject) => this.update(r, obj, 'update'),
      updateStatus: (r: ResourceRef, obj: KubeObject) => this.update(r, obj, 'updateStatus'),
      mergePatch: (r: ResourceRef, ns: string | undefined, name: string, patch: unknown, subresource?: string) =>
        this.patch(r, ns, name, 'mergePatch', patch, subresource),
      jsonPatch: (r: ResourceRef, ns: string | undefined, name: string, ops: unknown[], subresource?: string) =>
        this.patch(r, ns, name, 'jsonPatch', ops, subresource),
      apply: (r: ResourceRef, obj: KubeObject, fieldManager: string, opts: { force?: boolean; subresource?: string; result?: boolean } = {}) =>
        this.apply(r, obj, fieldManager, opts),
      delete: (r: ResourceRef, ns: string | undefined, name: string, opts?: Parameters<KubeClient['delete']>[3]) => this.delete(r, ns, name, opts),
      watch: (r: ResourceRef, ns: string | undefined, query: Record<string, unknown>, onEvent: (ev: WatchEvent) => void) => this.watch(r, ns, query, onEvent),
      request: (method: string, p: string, o: { body?: unknown } = {}) => this.request(method, p, o.body),
    };
    this.client = Object.assign(c, { close: () => undefined }) as unknown as KubeClient;
  }

  // ------------------------------------------------------------------ what a test plants and reads

  /** Stores objects as the API server holds them (a uid and resourceVersion added when missing), without a call or event. */
  seed(r: ResourceRef, ...objs: KubeObject[]): this {
    for (const o of objs) {
      const stored = structuredClone(o);
      stored.metadata.uid ??= this.newUid(o);
      stored.metadata.resourceVersion ??= String(++this.rv);
      this.store(r).put(stored);
    }
    return this;
  }

  /** The object as stored (not a copy: do not modify it), or undefined. */
  stored<T extends KubeObject = KubeObject>(r: ResourceRef, namespace: string | undefined, name: string): T | undefined {
    return this.store(r).getByName(namespace, name) as T | undefined;
  }

  /** The read cache of resource `r`, always in step with the server (what a synced informer offers). */
  cache<T extends KubeObject = KubeObject>(r: ResourceRef): ObjectStore<T> {
    return this.store(r) as unknown as ObjectStore<T>;
  }

  /** The calls that write (everything but get, getOrNull, list and watch). */
  writes(): Call[] {
    return this.calls.filter((c) => !READS.has(c.verb));
  }

  /** Makes the next `times` calls of `verb` (on `resource`, a plural, when given) throw `error`. @default times: every call */
  fail(verb: Verb, error: Error, opts: { resource?: string; times?: number } = {}): this {
    this.failures.push({ verb, resource: opts.resource, error, times: opts.times ?? Infinity });
    return this;
  }

  /** Answers `request(method, path)` calls whose path matches (the raw-path calls: TokenRequests and the like). */
  answer(method: string, pathPattern: RegExp, fn: RequestHandler): this {
    this.handlers.push({ method, path: pathPattern, fn });
    return this;
  }

  /** Forgets the history: a watch from any resourceVersion seen so far is 410 Gone. */
  compact(): void {
    this.compactedAt = this.rv;
  }

  /** Ends every open watch (as the API server does at its timeout). */
  closeWatches(): void {
    for (const w of [...this.watchers]) w.end();
  }

  /** An API error as the API server sends it. */
  static error(code: number, reason: string, message = reason, method = 'GET', p = '/fake'): ApiError {
    return new ApiError(code, reason, message, method, p);
  }

  // ------------------------------------------------------------------ the verbs

  private async get(r: ResourceRef, ns: string | undefined, name: string): Promise<KubeObject> {
    this.record({ verb: 'get', resource: r.plural, namespace: ns, name });
    return structuredClone(this.mustExist(r, ns, name, 'GET'));
  }

  private async getOrNull(r: ResourceRef, ns: string | undefined, name: string): Promise<KubeObject | undefined> {
    this.record({ verb: 'getOrNull', resource: r.plural, namespace: ns, name });
    const o = this.stored(r, ns, name);
    return o && structuredClone(o);
  }

  private async list(
    r: ResourceRef,
    ns: string | undefined,
    query: Record<string, unknown> = {},
  ): Promise<{ items: KubeObject[]; metadata: { resourceVersion: string } }> {
    this.record({ verb: 'list', resource: r.plural, namespace: ns, opts: query });
    const matches = selector(query);
    const items = this.store(r)
      .list(ns)
      .filter(matches)
      .map((o) => structuredClone(o));
    return { items, metadata: { resourceVersion: String(this.rv) } };
  }

  private async create(r: ResourceRef, obj: KubeObject): Promise<KubeObject> {
    const ns = obj.metadata.namespace;
    this.record({ verb: 'create', resource: r.plural, namespace: ns, name: obj.metadata.name, body: obj });
    const name =
      obj.metadata.name ?? (obj.metadata.generateName ? `${obj.metadata.generateName}${(++this.generated).toString(36).padStart(5, '0')}` : undefined);
    if (!name) throw FakeApiServer.error(422, 'Invalid', `${r.plural}: metadata.name: Required value`, 'POST', path(r, ns));
    if (this.stored(r, ns, name)) throw FakeApiServer.error(409, 'AlreadyExists', `${r.plural} "${name}" already exists`, 'POST', path(r, ns));
    const stored = structuredClone(obj);
    stored.metadata.name = name;
    stored.metadata.uid = this.newUid(obj);
    stored.metadata.creationTimestamp ??= new Date().toISOString();
    delete stored.metadata.deletionTimestamp;
    return this.write(r, stored, 'ADDED');
  }

  private async update(r: ResourceRef, obj: KubeObject, verb: 'update' | 'updateStatus'): Promise<KubeObject> {
    const { namespace: ns, name } = obj.metadata;
    this.record({ verb, resource: r.plural, namespace: ns, name, body: obj });
    const cur = this.mustExist(r, ns, name!, 'PUT');
    this.checkResourceVersion(r, cur, obj.metadata.resourceVersion, 'PUT');
    const next = structuredClone(obj) as KubeObject & { status?: unknown };
    const status = (cur as { status?: unknown }).status;
    // the status subresource changes only status; the main resource everything but status
    const body: KubeObject & { status?: unknown } = verb === 'updateStatus' ? { ...structuredClone(cur), status: next.status } : { ...next, status };
    if (body.status === undefined) delete body.status;
    body.metadata = { ...(verb === 'updateStatus' ? cur.metadata : next.metadata), uid: cur.metadata.uid, creationTimestamp: cur.metadata.creationTimestamp };
    if (cur.metadata.deletionTimestamp) body.metadata.deletionTimestamp = cur.metadata.deletionTimestamp;
    return this.write(r, body, 'MODIFIED');
  }

  private async patch(
    r: ResourceRef,
    ns: string | undefined,
    name: string,
    verb: 'mergePatch' | 'jsonPatch',
    patch: unknown,
    subresource?: string,
  ): Promise<KubeObject> {
    this.record({ verb, resource: r.plural, namespace: ns, name, body: patch, ...(subresource ? { opts: { subresource } } : {}) });
    const cur = this.mustExist(r, ns, name, 'PATCH');
    const next = verb === 'mergePatch' ? (mergePatch(structuredClone(cur), patch) as KubeObject) : jsonPatch(structuredClone(cur), patch as JsonOp[], r, name);
    this.checkResourceVersion(r, cur, next.metadata?.resourceVersion, 'PATCH');
    next.metadata = { ...next.metadata, name, uid: cur.metadata.uid, resourceVersion: cur.metadata.resourceVersion };
    if (ns) next.metadata.namespace = ns;
    return this.write(r, next, 'MODIFIED');
  }

  private async apply(
    r: ResourceRef,
    obj: KubeObject,
    fieldManager: string,
    opts: { force?: boolean; subresource?: string; result?: boolean },
  ): Promise<KubeObject | undefined> {
    const { namespace: ns, name } = obj.metadata;
    this.record({ verb: 'apply', resource: r.plural, namespace: ns, name, body: obj, opts: { fieldManager, ...opts } });
    const cur = this.stored(r, ns, name!);
    let out: KubeObject;
    if (!cur) {
      if (opts.subresource) throw FakeApiServer.error(404, 'NotFound', `${r.plural} "${name}" not found`, 'PATCH', path(r, ns, name));
      const stored = structuredClone(obj);
      stored.metadata.uid = this.newUid(obj);
      stored.metadata.creationTimestamp ??= new Date().toISOString();
      out = this.write(r, stored, 'ADDED');
    } else {
      const applied = structuredClone(obj) as KubeObject & { status?: unknown };
      const patch = opts.subresource === 'status' ? { status: applied.status } : applied;
      const next = mergePatch(structuredClone(cur), patch) as KubeObject;
      next.metadata = { ...next.metadata, uid: cur.metadata.uid, resourceVersion: cur.metadata.resourceVersion };
      out = this.write(r, next, 'MODIFIED');
    }
    return opts.result === false ? undefined : out;
  }

  private async delete(r: ResourceRef, ns: string | undefined, name: string, opts?: Parameters<KubeClient['delete']>[3]): Promise<void> {
    this.record({ verb: 'delete', resource: r.plural, namespace: ns, name, ...(opts !== undefined ? { opts } : {}) });
    const cur = this.stored(r, ns, name);
    if (!cur) {
      if (opts?.ignoreNotFound === false) throw FakeApiServer.error(404, 'NotFound', `${r.plural} "${name}" not found`, 'DELETE', path(r, ns, name));
      return;
    }
    if ((opts?.uid && opts.uid !== cur.metadata.uid) || (opts?.resourceVersion && opts.resourceVersion !== cur.metadata.resourceVersion)) {
      throw FakeApiServer.error(409, 'Conflict', `Precondition failed for ${r.plural} "${name}"`, 'DELETE', path(r, ns, name));
    }
    if (cur.metadata.finalizers?.length) {
      if (cur.metadata.deletionTimestamp) return;
      const next = structuredClone(cur);
      next.metadata.deletionTimestamp = new Date().toISOString();
      this.write(r, next, 'MODIFIED');
      return;
    }
    this.remove(r, cur);
  }

  private async watch(r: ResourceRef, ns: string | undefined, query: Record<string, unknown>, onEvent: (ev: WatchEvent) => void): Promise<WatchHandle> {
    this.record({ verb: 'watch', resource: r.plural, namespace: ns, opts: query });
    const from = query.resourceVersion === undefined ? undefined : Number(query.resourceVersion);
    if (from !== undefined && from < this.compactedAt) {
      throw FakeApiServer.error(410, 'Expired', `too old resource version: ${from} (${this.compactedAt})`, 'GET', path(r, ns));
    }
    let end!: () => void;
    const done = new Promise<void>((resolve) => (end = resolve));
    const w: Watcher = {
      resource: resourceKey(r),
      namespace: ns,
      matches: selector(query),
      onEvent,
      end: () => {
        this.watchers.delete(w);
        end();
      },
    };
    this.watchers.add(w);
    return { done, abort: () => w.end() };
  }

  private async request(method: string, p: string, body: unknown): Promise<unknown> {
    this.record({ verb: 'request', resource: p, body, opts: { method } });
    const h = this.handlers.find((x) => x.method === method && x.path.test(p));
    if (!h) throw FakeApiServer.error(404, 'NotFound', `the fake API server has no answer for ${method} ${p}`, method, p);
    return h.fn(method, p, body);
  }

  // ------------------------------------------------------------------ the store

  private store(r: ResourceRef): ObjectStore {
    const k = resourceKey(r);
    let s = this.stores.get(k);
    if (!s) this.stores.set(k, (s = new ObjectStore(`fake ${k}`)));
    return s;
  }

  private newUid(o: KubeObject): string {
    return `uid-${o.metadata.name ?? 'unnamed'}-${++this.uids}`;
  }

  private mustExist(r: ResourceRef, ns: string | undefined, name: string, method: string): KubeObject {
    const o = this.stored(r, ns, name);
    if (!o) throw FakeApiServer.error(404, 'NotFound', `${r.plural} "${name}" not found`, method, path(r, ns, name));
    return o;
  }

  /** A write naming a resourceVersion other than the stored one is a 409 Conflict (optimistic concurrency). */
  private checkResourceVersion(r: ResourceRef, cur: KubeObject, rv: string | undefined, method: string): void {
    if (rv === undefined || rv === cur.metadata.resourceVersion) return;
    const { namespace, name } = cur.metadata;
    throw FakeApiServer.error(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${r.plural} "${name}": the object has been modified`,
      method,
      path(r, namespace, name),
    );
  }

  /** Stores `o` with a new resourceVersion (or removes it: a deleting object without finalizers) and tells the watches. */
  private write(r: ResourceRef, o: KubeObject, type: 'ADDED' | 'MODIFIED'): KubeObject {
    if (o.metadata.deletionTimestamp && !o.metadata.finalizers?.length) {
      this.remove(r, o);
      return structuredClone(o);
    }
    o.metadata.resourceVersion = String(++this.rv);
    this.store(r).put(o);
    this.notify(r, type, o);
    return structuredClone(o);
  }

  private remove(r: ResourceRef, o: KubeObject): void {
    this.store(r).delete(keyOf(o));
    const gone = structuredClone(o);
    gone.metadata.resourceVersion = String(++this.rv);
    this.notify(r, 'DELETED', gone);
  }

  private notify(r: ResourceRef, type: 'ADDED' | 'MODIFIED' | 'DELETED', o: KubeObject): void {
    const k = resourceKey(r);
    for (const w of this.watchers) {
      if (w.resource !== k || (w.namespace !== undefined && w.namespace !== o.metadata.namespace) || !w.matches(o)) continue;
      const ev = { type, object: structuredClone(o) };
      queueMicrotask(() => {
        if (this.watchers.has(w)) w.onEvent(ev);
      });
    }
  }

  private record(c: Call): void {
    this.calls.push(c);
    const f = this.failures.find((x) => x.verb === c.verb && (x.resource === undefined || x.resource === c.resource) && x.times > 0);
    if (!f) return;
    f.times--;
    throw f.error;
  }
}

/** `labelSelector` (`a=b`, `a!=b`, `a`, comma-separated) and `fieldSelector` (`metadata.name=` / `metadata.namespace=`) of a query. */
function selector(query: Record<string, unknown>): (o: KubeObject) => boolean {
  const terms: Array<(o: KubeObject) => boolean> = [];
  const labels = typeof query.labelSelector === 'string' ? query.labelSelector : '';
  for (const t of labels.split(',').filter(Boolean)) {
    const m = /^([^!=]+)(!=|==|=)?(.*)$/.exec(t.trim())!;
    const [, k, op, v] = m;
    terms.push((o) => {
      const have = o.metadata.labels?.[k];
      if (!op) return have !== undefined;
      return op === '!=' ? have !== v : have === v;
    });
  }
  const fields = typeof query.fieldSelector === 'string' ? query.fieldSelector : '';
  for (const t of fields.split(',').filter(Boolean)) {
    const [k, v] = t.split('=');
    if (k === 'metadata.name') terms.push((o) => o.metadata.name === v);
    else if (k === 'metadata.namespace') terms.push((o) => o.metadata.namespace === v);
    else throw new Error(`the fake API server does not select by field ${k}`);
  }
  return (o) => terms.every((f) => f(o));
}

/** RFC 7386 JSON merge patch of `target` by `patch`. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return structuredClone(patch);
  const out: Record<string, unknown> =
    target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

interface JsonOp {
  op: 'add' | 'remove' | 'replace' | 'test';
  path: string;
  value?: unknown;
}

/** RFC 6902 JSON patch (add, remove, replace, test); a failed test is a 422, as the API server answers. */
function jsonPatch(doc: KubeObject, ops: JsonOp[], r: ResourceRef, name: string): KubeObject {
  for (const op of ops) {
    const keys = op.path
      .split('/')
      .slice(1)
      .map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = keys.pop()!;
    let parent: Record<string, unknown> | unknown[] = doc as unknown as Record<string, unknown>;
    for (const k of keys) parent = (parent as Record<string, unknown>)[k] as Record<string, unknown>;
    const invalid = (why: string) => FakeApiServer.error(422, 'Invalid', `${r.plural} "${name}": ${op.op} ${op.path}: ${why}`, 'PATCH', name);
    if (parent === undefined || parent === null) throw invalid('no such path');
    const arr = Array.isArray(parent) ? parent : undefined;
    const idx = arr ? (last === '-' ? arr.length : Number(last)) : -1;
    const current = arr ? arr[idx] : (parent as Record<string, unknown>)[last];
    switch (op.op) {
      case 'test':
        if (JSON.stringify(current) !== JSON.stringify(op.value)) throw invalid(`test failed: ${JSON.stringify(current)}`);
        break;
      case 'remove':
        if (current === undefined) throw invalid('nothing to remove');
        if (arr) arr.splice(idx, 1);
        else delete (parent as Record<string, unknown>)[last];
        break;
      case 'add':
        if (arr) arr.splice(idx, 0, structuredClone(op.value));
        else (parent as Record<string, unknown>)[last] = structuredClone(op.value);
        break;
      case 'replace':
        if (current === undefined) throw invalid('nothing to replace');
        if (arr) arr[idx] = structuredClone(op.value);
        else (parent as Record<string, unknown>)[last] = structuredClone(op.value);
        break;
    }
  }
  return doc;
}
