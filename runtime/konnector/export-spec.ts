/**
 * Spec-up reconciler of one export (key: the consumer object's `namespace/name`): the consumer
 * object's `spec` → its upstream copy on the provider, where the isolation strategy puts it.
 *
 * APIServiceNamespace + wait for its provider namespace; finalizer `klutch.anynines.com/syncer`
 * downstream; create a cleaned copy upstream (annotation `klutch.anynines.com/bound`; only the
 * labels and annotations `metadata` lets cross, set at creation); then
 * server-side apply of `spec` with the konnector's field manager and force, so provider-side changes
 * of fields the consumer sets are reverted; downstream delete → upstream delete → (once upstream is
 * gone, or when the provider kept it terminating longer than `deletionTimeoutMs`: then reported for the
 * binding's `ProviderDeletionTimedOut` condition) finalizer removed. Fields the provider adds to `spec` that the consumer never set (e.g.
 * Crossplane's `spec.resourceRef`) are left alone.
 */
import type { Logger } from 'pino';
import type { BindingGuard } from './binding-guard.js';
import { splitKey, type KubeClient, type KubeObject, type ResourceRef } from '../core/client.js';
import { RequeueError } from '../core/controller.js';
import { specMayDiffer } from './export-events.js';
import type { ObjectCache } from '../core/object-cache.js';
import { locKey, type IsolationStrategy, type Loc } from './export-isolation.js';
import { cleanMeta, copyWithMeta, hasFinalizer, hashOf, isDeleting, isSubset, setFinalizer, type MetadataFilter } from './metadata.js';
import { BOUND_ANNOTATION, SPEC_HASH_ANNOTATION, SYNCER_FINALIZER } from './types.js';
import { KONNECTOR_FIELD_MANAGER } from '../../contract/index.js';
import { DEFAULT_UPSTREAM_DELETION_TIMEOUT_MS, type TimedOutDeletion } from './deletion-timeouts.js';

/** How long an upstream create waits for its informer event before a reconcile may apply it again. */
export const APPLIED_TTL_MS = 30_000;
/** Bound of the in-flight caches (they only bridge the time until an informer event arrives). */
const IN_FLIGHT_MAX = 10_000;

export interface SpecUpDeps {
  /** The bound resource on the app cluster. */
  readonly resource: ResourceRef;
  /** The same resource on the provider (namespaced when the isolation strategy says so). */
  readonly providerResource: ResourceRef;
  readonly isolation: IsolationStrategy;
  /** The consumer objects (the app cluster's informer). */
  readonly consumers: ObjectCache;
  /** The upstream copies (the provider's informer). */
  readonly providers: ObjectCache;
  readonly app: Pick<KubeClient, 'update' | 'jsonPatch'>;
  readonly provider: Pick<KubeClient, 'delete' | 'getOrNull' | 'apply'>;
  /** Ensures the APIServiceNamespace of a consumer namespace; its provider namespace once assigned. */
  ensureAPIServiceNamespace(consumerNamespace: string): Promise<string | undefined>;
  /** Whether an app-cluster namespace is never synced. */
  isReservedNamespace(namespace: string): boolean;
  /** The consumer object's label and annotation keys that go onto its upstream copy. */
  readonly metadata: MetadataFilter;
  /**
   * How long the provider may keep an upstream copy terminating (its finalizers) before the deleted
   * app-cluster object is released anyway. @default DEFAULT_UPSTREAM_DELETION_TIMEOUT_MS (10 min)
   */
  readonly deletionTimeoutMs?: number;
  /** The binding's write budget per object (binding-guard.ts): a spec fight with the provider backs off instead of re-applying for ever. */
  readonly guard?: Pick<BindingGuard, 'write' | 'settled'>;
  /** Told about app-cluster objects released that way, and when their upstream copy is gone (deletion-timeouts.ts). */
  readonly deletionTimeouts?: { report(d: TimedOutDeletion): void; resolve(upstream: string): void };
  readonly log: Logger;
  /** Monotonic milliseconds. @default performance.now */
  readonly now?: () => number;
}

/** What one reconcile wrote: the operation (for the sync metrics), or undefined when nothing. */
export type SpecUpResult = 'create' | 'apply' | 'delete' | 'finalizer-removed' | undefined;

export class SpecUpReconciler {
  /**
   * Upstream copies this reconciler created whose ADDED event the provider informer has not
   * delivered yet: provider location → consumer spec hash and time. A reconcile in between (e.g. for
   * the event of the finalizer update) then does not apply the same copy again. Cleared by the
   * informer event ({@link providerEvent}), or ignored after {@link APPLIED_TTL_MS}.
   */
  private readonly appliedUp = new Map<string, { specHash: string; at: number }>();
  /**
   * Consumer objects this reconciler just updated (finalizer added) whose MODIFIED event the
   * consumer informer has not delivered yet: key → the resourceVersion that update replaced and the
   * object the API server returned. A reconcile triggered meanwhile by an upstream event works on
   * the returned object instead of the stale cached one (which would make the update conflict).
   */
  private readonly updatedDown = new Map<string, { staleRV: string | undefined; obj: KubeObject }>();
  /** Reserved namespaces already warned about (one log line each). */
  private readonly reservedWarned = new Set<string>();
  /** Upstream copies seen terminating while their app-cluster object waits: provider location → first seen (monotonic ms). */
  private readonly terminatingSince = new Map<string, number>();
  private readonly now: () => number;
  /**
   * Spec hashes by spec object: the informers hand out the same (never modified) object for every
   * reconcile until the next event, and an object is reconciled about three times while it syncs.
   */
  private readonly specHashes = new WeakMap<object, string>();

  constructor(private readonly d: SpecUpDeps) {
    this.now = d.now ?? (() => performance.now());
  }

  /**
   * The consumer informer delivered `o` (added, or modified from `prev`): a newer object than an in-flight
   * update's. When `o`'s spec cannot differ from `prev`'s (the same generation), `prev`'s spec hash is
   * `o`'s too and is not computed again.
   */
  consumerEvent(key: string, o: KubeObject, prev?: KubeObject): void {
    const u = this.updatedDown.get(key);
    if (u && u.staleRV !== o.metadata.resourceVersion) this.updatedDown.delete(key);
    if (prev === undefined || specMayDiffer(prev, o)) return;
    const [before, after] = [(prev as { spec?: unknown }).spec, (o as { spec?: unknown }).spec];
    if (before === null || typeof before !== 'object' || after === null || typeof after !== 'object') return;
    const h = this.specHashes.get(before);
    if (h !== undefined) this.specHashes.set(after, h);
  }

  /** The consumer informer delivered the delete of `key`. */
  consumerGone(key: string): void {
    this.updatedDown.delete(key);
  }

  /** The provider informer delivered an event of the upstream object at `key`. */
  providerEvent(key: string): void {
    this.appliedUp.delete(key);
  }

  /** The provider informer delivered the delete of the upstream object at `key`. */
  providerGone(key: string): void {
    this.appliedUp.delete(key);
    this.terminatingSince.delete(key);
    this.d.deletionTimeouts?.resolve(key);
  }

  async reconcile(key: string): Promise<SpecUpResult> {
    const d = this.d;
    const cached = d.consumers.get(key);
    if (!cached) return undefined; // gone: the status side deletes orphaned upstream copies
    let down: KubeObject = cached;
    const updated = this.updatedDown.get(key);
    if (updated && updated.staleRV === cached.metadata.resourceVersion) down = updated.obj;
    const { namespace, name } = splitKey(key);
    let loc = d.isolation.toProvider(namespace, name);
    if (!loc && namespace && d.isReservedNamespace(namespace)) {
      if (!this.reservedWarned.has(namespace)) {
        this.reservedWarned.add(namespace);
        d.log.warn(
          { namespace, object: key },
          'not syncing objects in a reserved namespace (kube-system, kube-public, kube-node-lease, the konnector namespace)',
        );
      }
      return isDeleting(down) && (await this.removeFinalizer(down)) ? 'finalizer-removed' : undefined;
    }
    if (!loc && namespace) {
      if (isDeleting(down)) {
        // Never got a provider namespace: nothing upstream to clean up.
        return (await this.removeFinalizer(down)) ? 'finalizer-removed' : undefined;
      }
      const p = await d.ensureAPIServiceNamespace(namespace);
      if (!p) throw new RequeueError(`waiting for the provider to assign a namespace to APIServiceNamespace ${namespace}`, 1000);
      loc = { namespace: p, name };
    }
    if (!loc) throw new Error(`cannot map ${key} to the provider`);
    const up = d.providers.getByName(loc.namespace, loc.name);

    if (isDeleting(down)) return this.deleteUpstream(down, up, loc);

    if (!hasFinalizer(down, SYNCER_FINALIZER)) down = await this.addFinalizer(key, down);

    const spec = (down as { spec?: unknown }).spec;
    const specHash = this.specHash(spec);
    if (up && isDeleting(up)) return undefined; // provider deleted it; recreate once it is gone (delete event)
    if (!up) return this.createUpstream(down, loc, specHash);
    return this.applySpec(down, up, loc, specHash);
  }

  private specHash(spec: unknown): string {
    if (spec === null || typeof spec !== 'object') return hashOf(spec ?? null);
    let h = this.specHashes.get(spec);
    if (h === undefined) this.specHashes.set(spec, (h = hashOf(spec)));
    return h;
  }

  /** Downstream is being deleted: delete upstream, then release the downstream object. */
  private async deleteUpstream(down: KubeObject, up: KubeObject | undefined, loc: Loc): Promise<SpecUpResult> {
    const d = this.d;
    if (!hasFinalizer(down, SYNCER_FINALIZER)) return undefined;
    if (up) {
      if (!isDeleting(up)) {
        await d.provider.delete(d.providerResource, loc.namespace, loc.name, { uid: up.metadata.uid, propagationPolicy: 'Background' });
        return 'delete';
      }
      return this.whileTerminating(down, up, loc); // its delete event requeues us, the timeout at the latest
    }
    // The cache says gone; confirm with a live read before letting the downstream object go.
    const live = await d.provider.getOrNull(d.providerResource, loc.namespace, loc.name);
    if (live) {
      if (!isDeleting(live)) {
        await d.provider.delete(d.providerResource, loc.namespace, loc.name, { uid: live.metadata.uid });
        throw new RequeueError('waiting for the upstream object to be deleted', 1000);
      }
      return this.whileTerminating(down, live, loc);
    }
    this.terminatingSince.delete(locKey(loc));
    return (await this.removeFinalizer(down)) ? 'finalizer-removed' : undefined;
  }

  /**
   * The upstream copy is terminating (the provider's finalizers hold it): wait for it, but no longer
   * than `deletionTimeoutMs` from the moment this reconciler first saw it so; then release the
   * app-cluster object and report it (the binding's `ProviderDeletionTimedOut` condition).
   */
  private async whileTerminating(down: KubeObject, up: KubeObject, loc: Loc): Promise<SpecUpResult> {
    const d = this.d;
    const lk = locKey(loc);
    const now = this.now();
    let since = this.terminatingSince.get(lk);
    if (since === undefined) {
      if (this.terminatingSince.size > IN_FLIGHT_MAX) this.terminatingSince.clear();
      this.terminatingSince.set(lk, (since = now));
    }
    const timeoutMs = d.deletionTimeoutMs ?? DEFAULT_UPSTREAM_DELETION_TIMEOUT_MS;
    const left = since + timeoutMs - now;
    const finalizers = up.metadata.finalizers ?? [];
    if (left > 0) throw new RequeueError(`waiting for the provider to delete ${lk} (finalizers: ${finalizers.join(', ') || 'none'})`, left);
    const consumer = down.metadata.namespace ? `${down.metadata.namespace}/${down.metadata.name}` : down.metadata.name!;
    d.log.warn(
      { upstream: lk, consumer, finalizers, timeoutMs },
      'the provider did not delete the upstream copy in time; releasing the app-cluster object (the copy stays on the provider)',
    );
    d.deletionTimeouts?.report({ upstream: lk, consumer, finalizers });
    this.terminatingSince.delete(lk);
    return (await this.removeFinalizer(down)) ? 'finalizer-removed' : undefined;
  }

  /**
   * Finalizer first (so a delete can never skip the upstream clean-up), then go on with the object
   * the API server returned instead of waiting for the informer to deliver it.
   */
  private async addFinalizer(key: string, down: KubeObject): Promise<KubeObject> {
    const staleRV = down.metadata.resourceVersion;
    const updated = await this.d.app.update(this.d.resource, {
      ...down,
      metadata: { ...down.metadata, finalizers: [...(down.metadata.finalizers ?? []), SYNCER_FINALIZER] },
    });
    if (this.updatedDown.size > IN_FLIGHT_MAX) this.updatedDown.clear();
    this.updatedDown.set(key, { staleRV, obj: updated });
    return updated;
  }

  private annotations(specHash: string): Record<string, string> {
    return { [BOUND_ANNOTATION]: 'true', [SPEC_HASH_ANNOTATION]: specHash, ...this.d.isolation.upstreamAnnotations() };
  }

  private async createUpstream(down: KubeObject, loc: Loc, specHash: string): Promise<SpecUpResult> {
    const d = this.d;
    const lk = locKey(loc);
    const pending = this.appliedUp.get(lk);
    if (pending && pending.specHash === specHash && this.now() - pending.at < APPLIED_TTL_MS) {
      return undefined; // created a moment ago; its ADDED event requeues this key
    }
    // Created by server-side apply (not POST) so that the konnector's field manager owns every field
    // it wrote, and later removals of consumer fields are removed upstream too.
    const copy = copyWithMeta(down, cleanMeta(down.metadata, loc.name, loc.namespace, this.annotations(specHash), d.metadata));
    await d.provider.apply(d.providerResource, copy, KONNECTOR_FIELD_MANAGER, { force: true, result: false });
    if (this.appliedUp.size > IN_FLIGHT_MAX) this.appliedUp.clear();
    this.appliedUp.set(lk, { specHash, at: this.now() });
    return 'create';
  }

  private async applySpec(down: KubeObject, up: KubeObject, loc: Loc, specHash: string): Promise<SpecUpResult> {
    const d = this.d;
    const refused = d.isolation.refuseTakeover(up);
    if (refused) throw new Error(refused);
    const spec = (down as { spec?: unknown }).spec;
    const upSpec = (up as { spec?: unknown }).spec;
    const inSync =
      isSubset(spec, upSpec) && up.metadata.annotations?.[SPEC_HASH_ANNOTATION] === specHash && up.metadata.annotations?.[BOUND_ANNOTATION] === 'true';
    const what = `spec of ${d.resource.plural} ${down.metadata.namespace ? down.metadata.namespace + '/' : ''}${down.metadata.name}`;
    if (inSync) {
      d.guard?.settled('up', what);
      return undefined;
    }
    d.guard?.write('up', what); // a provider that keeps rewriting the spec: backs off once the budget is spent
    const applied: KubeObject = {
      apiVersion: down.apiVersion,
      kind: down.kind,
      metadata: { name: loc.name, ...(loc.namespace ? { namespace: loc.namespace } : {}), annotations: this.annotations(specHash) },
    };
    if (spec !== undefined) applied.spec = spec;
    await d.provider.apply(d.providerResource, applied, KONNECTOR_FIELD_MANAGER, { force: true, result: false });
    return 'apply';
  }

  private async removeFinalizer(down: KubeObject): Promise<boolean> {
    return (await setFinalizer(this.d.app, this.d.resource, down, SYNCER_FINALIZER, false)) !== undefined;
  }
}
