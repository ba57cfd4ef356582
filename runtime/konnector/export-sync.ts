/**
 * Sync of one bound resource (one APIServiceExport) between the app cluster and the provider:
 *
 * - **spec** (up), keyed by the consumer object: APIServiceNamespace + wait for its provider namespace;
 *   finalizer `klutch.anynines.com/syncer` downstream; create a cleaned copy upstream (annotation
 *   `klutch.anynines.com/bound`); then server-side apply of `spec` with field manager
 *   `klutch.anynines.com` and force, so provider-side changes of fields the consumer sets are reverted;
 *   downstream delete → upstream delete → (once upstream is gone) finalizer removed.
 * - **status** (down), keyed by the provider object: upstream `.status` → downstream status subresource;
 *   an upstream object with the bound annotation whose downstream object is gone is deleted (catches
 *   deletes missed while the konnector was down); an upstream object without the annotation was created
 *   by the provider and is adopted (created downstream, both sides annotated).
 *
 * Winner on concurrent edits: the app cluster owns `spec`, the provider owns `status`.
 * Fields the provider adds to `spec` that the consumer never set (e.g. Crossplane's
 * `spec.resourceRef`) are left alone: only consumer-set fields are enforced.
 */
import type { Logger } from 'pino';
import { isAlreadyExists, isConflict, isNotFound, keyOf, splitKey, type KubeObject, type ResourceRef } from '../core/client.js';
import { Controller, RequeueError } from '../core/controller.js';
import { Informer, stripManagedFields } from '../core/informer.js';
import type { SyncContext } from './context.js';
import { cleanMeta, copyWithMeta, deepEqual, hasFinalizer, hashOf, isDeleting, isSubset, setFinalizer } from './metadata.js';
import { MultiNamespaceInformer } from './multins-informer.js';
import { NamespaceBudget } from './namespace-budget.js';
import {
  ADOPTED_ANNOTATION,
  BOUND_ANNOTATION,
  CLUSTER_NAMESPACE_ANNOTATION,
  FIELD_MANAGER,
  SPEC_HASH_ANNOTATION,
  SYNCER_FINALIZER,
  type APIServiceExport,
} from './types.js';

type Isolation = 'Prefixed' | 'None' | 'Namespaced';
type Loc = { namespace?: string; name: string };

export interface ExportSyncInfo {
  exportName: string;
  resource: ResourceRef;
}

/** What an APIServiceExport and a CustomResourceDefinition share: group, names, scope, versions. */
interface ApiSpec {
  metadata: { name?: string };
  spec: { group: string; names: { plural?: unknown; kind?: unknown }; scope: string; versions: Array<{ name?: unknown; served?: unknown }> };
}

/** The GVR the konnector syncs for an export (or the CRD made from it): the first served version. */
export function resourceOfExport(exp: ApiSpec): ResourceRef {
  const v = exp.spec.versions.find((x) => x.served !== false) ?? exp.spec.versions[0];
  if (!v) throw new Error(`${exp.metadata.name}: spec.versions is empty; the provider must export at least one version`);
  return {
    group: exp.spec.group,
    version: String(v.name),
    plural: String(exp.spec.names.plural),
    kind: String(exp.spec.names.kind),
    namespaced: exp.spec.scope === 'Namespaced',
  };
}

export class ExportSync {
  readonly resource: ResourceRef;
  readonly providerResource: ResourceRef;
  private readonly isolation: Isolation | undefined;
  private readonly consumerInformer: Informer;
  private readonly providerInformer: MultiNamespaceInformer;
  readonly spec: Controller;
  readonly status: Controller;
  private readonly log: Logger;
  private readonly unsubscribe: () => void;
  private readonly pendingUp = new Map<string, number>();
  private readonly pendingDown = new Map<string, number>();
  /**
   * Upstream copies this konnector created whose ADDED event its provider informer has not delivered
   * yet: provider location → consumer spec hash and time. A reconcile in between (e.g. for the event of
   * the finalizer update) then does not apply the same copy again. Cleared by the informer event, or
   * ignored after APPLIED_TTL_MS in case the event never comes.
   */
  private readonly appliedUp = new Map<string, { specHash: string; at: number }>();
  /**
   * Consumer objects this konnector just updated (finalizer added) whose MODIFIED event the consumer
   * informer has not delivered yet: key → the resourceVersion that update replaced and the object the
   * API server returned. A reconcile triggered meanwhile by an upstream event works on the returned
   * object instead of the stale cached one (which would make the update conflict).
   */
  private readonly updatedDown = new Map<string, { staleRV: string | undefined; obj: KubeObject }>();
  private readonly resLabel: string;
  private started = false;
  /** Provider-created objects the provider may make us adopt per app-cluster namespace. */
  private readonly adoptBudget: NamespaceBudget;
  /** Reserved namespaces already warned about (one log line each). */
  private readonly reservedWarned = new Set<string>();

  constructor(
    private readonly ctx: SyncContext,
    readonly exportObj: APIServiceExport,
  ) {
    this.resource = resourceOfExport(exportObj);
    this.resLabel = `${this.resource.plural}.${this.resource.group}`;
    this.adoptBudget = new NamespaceBudget(ctx.maxProviderObjectsPerNamespace);
    this.log = ctx.log.child({ export: exportObj.metadata.name });
    const namespaced = this.resource.namespaced;
    this.isolation = namespaced ? undefined : ((exportObj.spec.clusterScopedIsolation as Isolation | undefined) ?? 'Prefixed');
    this.providerResource = { ...this.resource, namespaced: namespaced || this.isolation === 'Namespaced' };

    // Cached copies without managedFields: a third less memory per object, never needed here.
    this.consumerInformer = new Informer(ctx.app, this.resource, {
      resyncMs: ctx.resyncMs,
      logger: this.log,
      name: `app ${this.resLabel}`,
      transform: stripManagedFields,
    });
    const clusterWide = !namespaced ? this.isolation !== 'Namespaced' : exportObj.spec.informerScope === 'Cluster';
    this.providerInformer = new MultiNamespaceInformer(ctx.provider, this.providerResource, {
      cluster: clusterWide,
      resyncMs: ctx.resyncMs,
      logger: this.log,
      transform: stripManagedFields,
    });

    const common = { registry: ctx.registry, logger: this.log, workers: ctx.workers, backoffMaxMs: 30_000 };
    this.spec = new Controller({ ...common, name: `spec:${this.resLabel}:${ctx.clusterNamespace}`, reconciler: (k) => this.reconcileSpec(k) });
    this.status = new Controller({ ...common, name: `status:${this.resLabel}:${ctx.clusterNamespace}`, reconciler: (k) => this.reconcileStatus(k) });

    const freshDown = (o: KubeObject) => {
      const u = this.updatedDown.get(keyOf(o));
      if (u && u.staleRV !== o.metadata.resourceVersion) this.updatedDown.delete(keyOf(o));
    };
    // The konnector's record of the namespaces it bound: where the app cluster has objects of this resource.
    const note = (o: KubeObject, present: boolean) => {
      if (o.metadata.namespace) ctx.noteConsumerObject(exportObj.metadata.name!, o.metadata.namespace, o.metadata.name!, present);
    };
    this.consumerInformer.addEventHandler({
      onAdd: (o) => {
        note(o, true);
        freshDown(o);
        this.enqueueUp(keyOf(o));
      },
      onUpdate: (_, o) => {
        freshDown(o);
        this.enqueueUp(keyOf(o));
        // Downstream status is the provider's: a change made on the app cluster is overwritten again.
        const p = this.toProvider(o.metadata.namespace, o.metadata.name!);
        if (p) this.enqueueDown(locKey(p));
      },
      onDelete: (o) => {
        note(o, false);
        this.updatedDown.delete(keyOf(o));
        this.enqueueUp(keyOf(o));
        const p = this.toProvider(o.metadata.namespace, o.metadata.name!);
        if (p) this.enqueueDown(locKey(p));
      },
    });
    this.providerInformer.addEventHandler({
      onAdd: (o) => this.onProviderEvent(o),
      onUpdate: (_, o) => this.onProviderEvent(o),
      onDelete: (o) => this.onProviderEvent(o),
    });
    this.unsubscribe = ctx.onNamespacesChanged((consumerNamespaces) => void this.namespacesChanged(consumerNamespaces));
  }

  private onProviderEvent(o: KubeObject): void {
    this.appliedUp.delete(keyOf(o));
    const c = this.toConsumer(o);
    if (!c) return; // not one of this consumer's objects
    this.enqueueDown(keyOf(o));
    // Upstream changes also go to the spec side: provider-side drift is reverted, deletes recreated.
    this.enqueueUp(locKey(c));
  }

  private enqueueUp(key: string): void {
    if (!this.pendingUp.has(key)) this.pendingUp.set(key, performance.now());
    this.spec.enqueue(key);
  }
  private enqueueDown(key: string): void {
    if (!this.pendingDown.has(key)) this.pendingDown.set(key, performance.now());
    this.status.enqueue(key);
  }
  private observed(dir: 'up' | 'down', key: string, wrote: string | undefined): void {
    const m = dir === 'up' ? this.pendingUp : this.pendingDown;
    const t0 = m.get(key);
    m.delete(key);
    if (wrote) {
      if (t0 !== undefined) this.ctx.metrics.syncDuration.observe({ direction: dir, resource: this.resLabel }, (performance.now() - t0) / 1000);
      this.ctx.metrics.objectsSynced.inc({ direction: dir, resource: this.resLabel, operation: wrote });
    }
  }

  private async namespacesChanged(consumerNamespaces: string[]): Promise<void> {
    if (this.resource.namespaced && this.exportObj.spec.informerScope !== 'Cluster') {
      await this.providerInformer.setNamespaces(this.ctx.boundNamespaces().map((b) => b.provider));
    }
    for (const ns of consumerNamespaces) for (const o of this.consumerInformer.list(ns)) this.enqueueUp(keyOf(o));
  }

  /** Starts informers, waits for them to sync, then starts the controllers. */
  async start(timeoutMs = 60_000): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.consumerInformer.start();
    if (this.resource.namespaced && this.exportObj.spec.informerScope !== 'Cluster') {
      await this.providerInformer.setNamespaces(this.ctx.boundNamespaces().map((b) => b.provider));
    } else if (this.isolation === 'Namespaced') {
      await this.providerInformer.setNamespaces([this.ctx.clusterNamespace]);
    }
    await Promise.all([this.consumerInformer.waitForSync(timeoutMs), this.providerInformer.waitForSync(timeoutMs)]);
    this.spec.start();
    this.status.start();
    this.log.info({ resource: this.resLabel }, 'export sync started');
  }

  get synced(): boolean {
    return this.consumerInformer.hasSynced() && this.providerInformer.hasSynced();
  }

  async stop(): Promise<void> {
    this.unsubscribe();
    await Promise.all([this.spec.stop(), this.status.stop()]);
    await Promise.all([this.consumerInformer.stop(), this.providerInformer.stop()]);
    for (const o of this.consumerInformer.list())
      if (o.metadata.namespace) this.ctx.noteConsumerObject(this.exportObj.metadata.name!, o.metadata.namespace, o.metadata.name!, false);
  }

  /** Informers (fault tests force relists through them). */
  informers(): Informer[] {
    return [this.consumerInformer, ...this.providerInformer.all()];
  }

  // ------------------------------------------------------------------ mapping

  /** Provider location of a consumer object; undefined when its namespace is not assigned yet. */
  toProvider(namespace: string | undefined, name: string): Loc | undefined {
    const cns = this.ctx.clusterNamespace;
    if (this.resource.namespaced) {
      const p = namespace ? this.ctx.providerNamespaceFor(namespace) : undefined;
      return p ? { namespace: p, name } : undefined;
    }
    switch (this.isolation) {
      case 'Namespaced':
        return { namespace: cns, name };
      case 'None':
        return { name };
      default:
        return { name: `${cns}-${name}` };
    }
  }

  /** Consumer location of a provider object; undefined when it is not this consumer's. */
  toConsumer(o: KubeObject): Loc | undefined {
    const cns = this.ctx.clusterNamespace;
    const { namespace, name } = o.metadata;
    if (!name) return undefined;
    if (this.resource.namespaced) {
      const c = namespace ? this.ctx.consumerNamespaceFor(namespace) : undefined;
      return c ? { namespace: c, name } : undefined;
    }
    const ann = o.metadata.annotations?.[CLUSTER_NAMESPACE_ANNOTATION];
    switch (this.isolation) {
      case 'Namespaced':
        return namespace === cns ? { name } : undefined;
      case 'None':
        return ann === cns ? { name } : undefined;
      default:
        return ann === cns && name.startsWith(`${cns}-`) ? { name: name.slice(cns.length + 1) } : undefined;
    }
  }

  // ------------------------------------------------------------------ spec (up)

  private async reconcileSpec(key: string): Promise<void> {
    let wrote: string | undefined;
    try {
      wrote = await this.syncSpec(key);
      this.observed('up', key, wrote);
    } catch (e) {
      if (!(e instanceof RequeueError)) this.ctx.metrics.syncErrors.inc({ direction: 'up', resource: this.resLabel });
      throw e;
    }
  }

  private async syncSpec(key: string): Promise<string | undefined> {
    const cached = this.consumerInformer.get(key);
    if (!cached) return undefined; // gone: the status side deletes orphaned upstream copies
    let down: KubeObject = cached;
    const updated = this.updatedDown.get(key);
    if (updated && updated.staleRV === cached.metadata.resourceVersion) down = updated.obj;
    const { namespace, name } = splitKey(key);
    let loc = this.toProvider(namespace, name);
    if (!loc && namespace && this.ctx.isReservedNamespace(namespace)) {
      if (!this.reservedWarned.has(namespace)) {
        this.reservedWarned.add(namespace);
        this.log.warn(
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
      const p = await this.ctx.ensureAPIServiceNamespace(namespace);
      if (!p) throw new RequeueError(`waiting for the provider to assign a namespace to APIServiceNamespace ${namespace}`, 1000);
      loc = { namespace: p, name };
    }
    if (!loc) throw new Error(`cannot map ${key} to the provider`);
    const up = this.providerInformer.get(loc.namespace, loc.name);

    if (isDeleting(down)) {
      if (!hasFinalizer(down, SYNCER_FINALIZER)) return undefined;
      if (up) {
        if (!isDeleting(up)) {
          await this.ctx.provider.delete(this.providerResource, loc.namespace, loc.name, { uid: up.metadata.uid, propagationPolicy: 'Background' });
          return 'delete';
        }
        return undefined; // upstream is terminating; its delete event requeues us
      }
      // The cache says gone; confirm with a live read before letting the downstream object go.
      const live = await this.ctx.provider.getOrNull(this.providerResource, loc.namespace, loc.name);
      if (live) {
        if (!isDeleting(live)) await this.ctx.provider.delete(this.providerResource, loc.namespace, loc.name, { uid: live.metadata.uid });
        throw new RequeueError('waiting for the upstream object to be deleted', 1000);
      }
      return (await this.removeFinalizer(down)) ? 'finalizer-removed' : undefined;
    }

    if (!hasFinalizer(down, SYNCER_FINALIZER)) {
      // Finalizer first (so a delete can never skip the upstream clean-up), then go on with the
      // object the API server returned instead of waiting for the informer to deliver it.
      const staleRV = down.metadata.resourceVersion;
      down = await this.ctx.app.update(this.resource, {
        ...down,
        metadata: { ...down.metadata, finalizers: [...(down.metadata.finalizers ?? []), SYNCER_FINALIZER] },
      });
      if (this.updatedDown.size > 10_000) this.updatedDown.clear(); // bounded: only a cache of in-flight events
      this.updatedDown.set(key, { staleRV, obj: down });
    }

    const spec = (down as { spec?: unknown }).spec;
    const specHash = hashOf(spec ?? null);
    if (up && isDeleting(up)) return undefined; // provider deleted it; recreate once it is gone (delete event)
    if (!up) {
      const lk = locKey(loc);
      const pending = this.appliedUp.get(lk);
      if (pending && pending.specHash === specHash && performance.now() - pending.at < APPLIED_TTL_MS) {
        return undefined; // created a moment ago; its ADDED event requeues this key
      }
      // Created by server-side apply (not POST) so that the konnector's field manager owns every field
      // it wrote, and later removals of consumer fields are removed upstream too.
      const ann: Record<string, string> = { [BOUND_ANNOTATION]: 'true', [SPEC_HASH_ANNOTATION]: specHash };
      if (!this.resource.namespaced) ann[CLUSTER_NAMESPACE_ANNOTATION] = this.ctx.clusterNamespace;
      const copy = copyWithMeta(down, cleanMeta(down.metadata, loc.name, loc.namespace, ann));
      await this.ctx.provider.apply(this.providerResource, copy, FIELD_MANAGER, { force: true });
      if (this.appliedUp.size > 10_000) this.appliedUp.clear(); // bounded: only a cache of in-flight events
      this.appliedUp.set(lk, { specHash, at: performance.now() });
      return 'create';
    }
    return this.applySpec(down, up, loc, specHash);
  }

  private async applySpec(down: KubeObject, up: KubeObject, loc: Loc, specHash: string): Promise<string | undefined> {
    if (!this.resource.namespaced && up.metadata.annotations?.[CLUSTER_NAMESPACE_ANNOTATION] !== this.ctx.clusterNamespace && this.isolation !== 'Namespaced') {
      throw new Error(
        `upstream ${loc.name} belongs to cluster namespace "${up.metadata.annotations?.[CLUSTER_NAMESPACE_ANNOTATION] ?? '(none)'}", not "${this.ctx.clusterNamespace}"; refusing to take it over`,
      );
    }
    const spec = (down as { spec?: unknown }).spec;
    const upSpec = (up as { spec?: unknown }).spec;
    const inSync =
      isSubset(spec, upSpec) && up.metadata.annotations?.[SPEC_HASH_ANNOTATION] === specHash && up.metadata.annotations?.[BOUND_ANNOTATION] === 'true';
    if (inSync) return undefined;
    const ann: Record<string, string> = { [BOUND_ANNOTATION]: 'true', [SPEC_HASH_ANNOTATION]: specHash };
    if (!this.resource.namespaced) ann[CLUSTER_NAMESPACE_ANNOTATION] = this.ctx.clusterNamespace;
    const applied: KubeObject = {
      apiVersion: down.apiVersion,
      kind: down.kind,
      metadata: { name: loc.name, ...(loc.namespace ? { namespace: loc.namespace } : {}), annotations: ann },
    };
    if (spec !== undefined) applied.spec = spec;
    await this.ctx.provider.apply(this.providerResource, applied, FIELD_MANAGER, { force: true });
    return 'apply';
  }

  private async removeFinalizer(down: KubeObject): Promise<boolean> {
    return (await setFinalizer(this.ctx.app, this.resource, down, SYNCER_FINALIZER, false)) !== undefined;
  }

  // ------------------------------------------------------------------ status (down)

  private async reconcileStatus(key: string): Promise<void> {
    try {
      const wrote = await this.syncStatus(key);
      this.observed('down', key, wrote);
    } catch (e) {
      if (!(e instanceof RequeueError)) this.ctx.metrics.syncErrors.inc({ direction: 'down', resource: this.resLabel });
      throw e;
    }
  }

  private async syncStatus(key: string): Promise<string | undefined> {
    const { namespace, name } = splitKey(key);
    const up = this.providerInformer.get(this.providerResource.namespaced ? namespace : undefined, name);
    if (!up) return undefined; // the spec side recreates it or releases the finalizer
    const c = this.toConsumer(up);
    if (!c) return undefined;
    const down = this.consumerInformer.getByName(c.namespace, c.name);
    if (!down) {
      if (isDeleting(up)) return undefined;
      if (up.metadata.annotations?.[BOUND_ANNOTATION] === 'true') {
        // Synced from an object that no longer exists downstream (deleted while we were away).
        await this.ctx.provider.delete(this.providerResource, up.metadata.namespace, up.metadata.name!, { uid: up.metadata.uid });
        this.log.info({ upstream: key }, 'deleted orphaned upstream object: its app-cluster object is gone');
        return 'delete-orphan';
      }
      return this.adopt(up, c);
    }
    if (isDeleting(down)) return undefined;
    const upStatus = (up as { status?: unknown }).status;
    const downStatus = (down as { status?: unknown }).status;
    if (upStatus === undefined || deepEqual(upStatus, downStatus)) return undefined;
    try {
      await this.ctx.app.updateStatus(this.resource, { ...down, status: upStatus });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      if (isConflict(e)) throw new RequeueError('app-cluster object changed while copying status', 50);
      throw e;
    }
    return 'status';
  }

  /** A provider-created object: create it downstream and mark both sides as bound. */
  private async adopt(up: KubeObject, c: Loc): Promise<string | undefined> {
    const ns = c.namespace ?? '';
    const adopted = this.consumerInformer
      .list(c.namespace)
      .filter((o) => o.metadata.annotations?.[ADOPTED_ANNOTATION] === 'true')
      .map((o) => o.metadata.name!);
    if (!this.adoptBudget.tryTake(ns, c.name, adopted)) {
      const max = this.adoptBudget.max;
      this.log.warn(
        { upstream: keyOf(up), namespace: c.namespace, max },
        'the provider has adopted the most objects it may in this namespace; not adopting more',
      );
      throw new RequeueError(`at most ${max} provider-created objects per namespace`, 60_000);
    }
    const meta = cleanMeta(up.metadata, c.name, c.namespace, { [BOUND_ANNOTATION]: 'true', [ADOPTED_ANNOTATION]: 'true' });
    delete meta.annotations?.[CLUSTER_NAMESPACE_ANNOTATION];
    delete meta.annotations?.[SPEC_HASH_ANNOTATION];
    meta.finalizers = [SYNCER_FINALIZER];
    const copy = copyWithMeta(up, meta);
    try {
      await this.ctx.app.create(this.resource, copy);
    } catch (e) {
      if (!isAlreadyExists(e)) {
        this.adoptBudget.release(ns, c.name);
        throw e;
      }
    }
    await this.ctx.provider.mergePatch(this.providerResource, up.metadata.namespace, up.metadata.name!, {
      metadata: { annotations: { [BOUND_ANNOTATION]: 'true' } },
    });
    this.log.info({ upstream: keyOf(up) }, 'adopted provider-created object into the app cluster');
    return 'adopt';
  }
}

/** How long an upstream create waits for its informer event before a reconcile may apply it again. */
const APPLIED_TTL_MS = 30_000;

const locKey = (l: Loc): string => (l.namespace ? `${l.namespace}/${l.name}` : l.name);
