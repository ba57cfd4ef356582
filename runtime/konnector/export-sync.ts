/**
 * Sync of one bound resource (one APIServiceExport) between the app cluster and the provider: the
 * informers of both sides, two controllers and the wiring of their events. The work is done by one
 * reconciler per concern, each in its own file with its dependencies injected:
 *
 * - spec up (export-spec.ts), keyed by the consumer object;
 * - status down (export-status.ts), keyed by the provider object, with
 * - adoption of provider-created objects (export-adoption.ts);
 * - where upstream copies live and which provider objects are this consumer's: the isolation
 *   strategy (export-isolation.ts).
 *
 * Winner on concurrent edits: the app cluster owns `spec`, the provider owns `status`.
 */
import type { Logger } from 'pino';
import { keyOf, type KubeObject, type ResourceRef } from '../core/client.js';
import { Controller, RequeueError } from '../core/controller.js';
import { Informer, stripManagedFields } from '../core/informer.js';
import type { SyncContext } from './context.js';
import { AdoptionReconciler } from './export-adoption.js';
import { consumerUpdateConcerns } from './export-events.js';
import { isolationFor, locKey, type IsolationStrategy, type Loc } from './export-isolation.js';
import { SpecUpReconciler } from './export-spec.js';
import { policyFilter } from './metadata.js';
import { StatusDownReconciler } from './export-status.js';
import { MultiNamespaceInformer } from './multins-informer.js';
import { BindingGuard } from './binding-guard.js';
import { NamespaceBudget } from './namespace-budget.js';
import type { APIServiceExport } from './types.js';

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
  readonly isolation: IsolationStrategy;
  private readonly consumerInformer: Informer;
  private readonly providerInformer: MultiNamespaceInformer;
  readonly spec: Controller;
  readonly status: Controller;
  private readonly specUp: SpecUpReconciler;
  private readonly statusDown: StatusDownReconciler;
  private readonly log: Logger;
  private readonly unsubscribe: () => void;
  private readonly pendingUp = new Map<string, number>();
  private readonly pendingDown = new Map<string, number>();
  private readonly resLabel: string;
  private started = false;

  /** Refused objects per app-cluster namespace outside the namespace allow-list (NamespaceNotAllowed). */
  private readonly notAllowed = new Map<string, Set<string>>();

  constructor(
    private readonly ctx: SyncContext,
    readonly exportObj: APIServiceExport,
    /** The binding's limits (cache cap, write budget), shared with its claim syncers. @default a guard of its own */
    readonly guard: BindingGuard = new BindingGuard(ctx, { name: exportObj.metadata.name!, uid: exportObj.metadata.uid ?? '' }),
  ) {
    this.resource = resourceOfExport(exportObj);
    this.resLabel = `${this.resource.plural}.${this.resource.group}`;
    this.log = ctx.log.child({ export: exportObj.metadata.name });
    this.isolation = isolationFor(this.resource.namespaced, exportObj.spec.clusterScopedIsolation, ctx);
    this.providerResource = { ...this.resource, namespaced: this.isolation.providerNamespaced };

    // Cached copies without managedFields: a third less memory per object, never needed here.
    this.consumerInformer = new Informer(ctx.app, this.resource, {
      resyncMs: ctx.resyncMs,
      logger: this.log,
      name: `app ${this.resLabel}`,
      transform: stripManagedFields,
    });
    this.providerInformer = new MultiNamespaceInformer(ctx.provider, this.providerResource, {
      cluster: this.providerClusterWide(),
      resyncMs: ctx.resyncMs,
      logger: this.log,
      transform: stripManagedFields,
      admission: guard.admission(`export ${this.resLabel}`),
    });
    this.specUp = this.newSpecUp();
    this.statusDown = this.newStatusDown();

    const common = { registry: ctx.registry, logger: this.log, workers: ctx.workers, backoffMaxMs: 30_000 };
    this.spec = new Controller({ ...common, name: `spec:${this.resLabel}:${ctx.clusterNamespace}`, reconciler: (k) => this.reconcileSpec(k) });
    this.status = new Controller({ ...common, name: `status:${this.resLabel}:${ctx.clusterNamespace}`, reconciler: (k) => this.reconcileStatus(k) });
    this.watchConsumers();
    this.providerInformer.addEventHandler({
      onAdd: (o) => this.onProviderEvent(o),
      onUpdate: (_, o) => this.onProviderEvent(o),
      onDelete: (o) => {
        this.specUp.providerGone(keyOf(o));
        this.onProviderEvent(o);
      },
    });
    this.unsubscribe = ctx.onNamespacesChanged((consumerNamespaces) => void this.namespacesChanged(consumerNamespaces));
  }

  /** Whether the provider informer watches the whole cluster rather than the bound namespaces. */
  private providerClusterWide(): boolean {
    if (!this.resource.namespaced) return !this.isolation.providerNamespaced;
    return this.exportObj.spec.informerScope === 'Cluster';
  }

  private newSpecUp(): SpecUpReconciler {
    const ctx = this.ctx;
    return new SpecUpReconciler({
      resource: this.resource,
      providerResource: this.providerResource,
      isolation: this.isolation,
      consumers: this.consumerInformer,
      providers: this.providerInformer,
      app: ctx.app,
      provider: ctx.provider,
      ensureAPIServiceNamespace: (ns) => ctx.ensureAPIServiceNamespace(ns),
      isReservedNamespace: (ns) => ctx.isReservedNamespace(ns) || !this.namespaceAllowed(ns),
      metadata: policyFilter(ctx.metadataKeys),
      deletionTimeoutMs: ctx.upstreamDeletionTimeoutMs,
      guard: this.guard,
      deletionTimeouts: {
        report: (d) => ctx.deletionTimeouts.report(this.exportObj.metadata.name!, d),
        resolve: (upstream) => ctx.deletionTimeouts.resolve(this.exportObj.metadata.name!, upstream),
      },
      log: this.log,
    });
  }

  private newStatusDown(): StatusDownReconciler {
    const ctx = this.ctx;
    const adoption = new AdoptionReconciler({
      resource: this.resource,
      providerResource: this.providerResource,
      consumers: this.consumerInformer,
      app: ctx.app,
      provider: ctx.provider,
      budget: new NamespaceBudget(ctx.maxProviderObjectsPerNamespace),
      metadata: policyFilter(ctx.metadataKeys),
      log: this.log,
    });
    return new StatusDownReconciler({
      resource: this.resource,
      providerResource: this.providerResource,
      isolation: this.isolation,
      consumers: this.consumerInformer,
      providers: this.providerInformer,
      app: ctx.app,
      provider: ctx.provider,
      adoption,
      guard: this.guard,
      log: this.log,
    });
  }

  /**
   * Whether the app-cluster namespace is on the konnector's namespace allow-list; if not, the binding
   * shows NamespaceNotAllowed naming it (until no object of this export is left there).
   */
  private namespaceAllowed(ns: string): boolean {
    if (this.ctx.isNamespaceAllowed?.(ns) ?? true) return true;
    const objects = this.consumerInformer.list(ns).map((o) => o.metadata.name!);
    if (objects.length === 0) return false;
    this.notAllowed.set(ns, new Set(objects));
    const isNew = this.ctx.limits?.report({
      binding: this.guard.binding.uid,
      kind: 'NamespaceNotAllowed',
      subject: ns,
      message: `namespace ${ns} holds ${this.resLabel} ${objects.slice(0, 3).join(', ')}${objects.length > 3 ? ', …' : ''}, but it is not on the konnector's namespace allow-list: nothing is synced there and no Secret reaches it; add it with --allow-namespace=${ns} (KonnectorProps.allowedNamespaces)`,
    });
    if (isNew) {
      this.ctx.limits?.count('NamespaceNotAllowed');
      this.log.warn({ namespace: ns }, 'not syncing objects in a namespace outside --allow-namespace');
    }
    return false;
  }

  /** A consumer object left `ns`: the NamespaceNotAllowed report goes with the last one. */
  private consumerLeft(ns: string, name: string): void {
    const left = this.notAllowed.get(ns);
    if (!left?.delete(name) || left.size > 0) return;
    this.notAllowed.delete(ns);
    this.ctx.limits?.resolve(this.guard.binding.uid, 'NamespaceNotAllowed', ns);
  }

  private watchConsumers(): void {
    const exportName = this.exportObj.metadata.name!;
    // The konnector's record of the namespaces it bound: where the app cluster has objects of this resource.
    const note = (o: KubeObject, present: boolean) => {
      if (o.metadata.namespace) this.ctx.noteConsumerObject(exportName, o.metadata.namespace, o.metadata.name!, present);
    };
    this.consumerInformer.addEventHandler({
      onAdd: (o) => {
        note(o, true);
        this.specUp.consumerEvent(keyOf(o), o);
        this.enqueueUp(keyOf(o));
      },
      onUpdate: (prev, o) => {
        const key = keyOf(o);
        this.specUp.consumerEvent(key, o, prev);
        // Only the sides the update can concern (export-events.ts): the konnector's own finalizer update concerns neither.
        const concerns = consumerUpdateConcerns(prev, o);
        if (concerns.up) this.enqueueUp(key);
        if (!concerns.down) return;
        // Downstream status is the provider's: a change made on the app cluster is overwritten again.
        const p = this.toProvider(o.metadata.namespace, o.metadata.name!);
        if (p) this.enqueueDown(locKey(p));
      },
      onDelete: (o) => {
        note(o, false);
        if (o.metadata.namespace) this.consumerLeft(o.metadata.namespace, o.metadata.name!);
        this.specUp.consumerGone(keyOf(o));
        this.enqueueUp(keyOf(o));
        const p = this.toProvider(o.metadata.namespace, o.metadata.name!);
        if (p) this.enqueueDown(locKey(p));
      },
    });
  }

  private onProviderEvent(o: KubeObject): void {
    this.specUp.providerEvent(keyOf(o));
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
    } else if (!this.resource.namespaced && this.isolation.providerNamespaced) {
      // cluster-scoped objects kept as namespaced copies in the cluster namespace
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
    for (const ns of [...this.notAllowed.keys()]) this.ctx.limits?.resolve(this.guard.binding.uid, 'NamespaceNotAllowed', ns);
    this.notAllowed.clear();
    for (const o of this.consumerInformer.list())
      if (o.metadata.namespace) this.ctx.noteConsumerObject(this.exportObj.metadata.name!, o.metadata.namespace, o.metadata.name!, false);
  }

  /** Informers (fault tests force relists through them). */
  informers(): Informer[] {
    return [this.consumerInformer, ...this.providerInformer.all()];
  }

  /** Provider location of a consumer object; undefined when its namespace is not assigned yet. */
  toProvider(namespace: string | undefined, name: string): Loc | undefined {
    return this.isolation.toProvider(namespace, name);
  }

  /** Consumer location of a provider object; undefined when it is not this consumer's. */
  toConsumer(o: KubeObject): Loc | undefined {
    return this.isolation.toConsumer(o);
  }

  private async reconcileSpec(key: string): Promise<void> {
    try {
      this.observed('up', key, await this.specUp.reconcile(key));
    } catch (e) {
      if (!(e instanceof RequeueError)) this.ctx.metrics.syncErrors.inc({ direction: 'up', resource: this.resLabel });
      throw e;
    }
  }

  private async reconcileStatus(key: string): Promise<void> {
    try {
      this.observed('down', key, await this.statusDown.reconcile(key));
    } catch (e) {
      if (!(e instanceof RequeueError)) this.ctx.metrics.syncErrors.inc({ direction: 'down', resource: this.resLabel });
      throw e;
    }
  }
}
