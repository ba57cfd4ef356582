/**
 * The backend's controllers: the shared informers, one Controller per reconciler and the events
 * that enqueue them. Each reconciler lives in its own file under reconcilers/ with its dependencies
 * injected (read-only caches, the API calls it makes), so it has unit tests of its own:
 *
 * - exportrequest: APIServiceExportRequest → APIServiceExport(s) (CRD snapshot, template claims,
 *   source-spec hash); Pending → Succeeded | Failed (terminalMessage); a missing CRD fails after a
 *   grace period; finished requests are deleted after a retention period.
 * - export: keeps each APIServiceExport in sync with its CRD (hash compare), `ProviderInSync`;
 *   deletes the export when its CRD is gone.
 * - servicenamespace: APIServiceNamespace → provider namespace `<clusterNs>-<name>` (annotated),
 *   `status.namespace`; a finalizer deletes the namespace with it.
 * - rbac: per cluster namespace, ClusterRole `klutch-binder-<clusterNs>` covering exactly the
 *   exported and claimed resources (owned by the cluster Namespace, so it goes with it), bound by
 *   RoleBindings only in that consumer's provider namespaces. With --consumer-scope=Cluster and
 *   cluster-scoped exports, ClusterRole `klutch-binder-<clusterNs>-cluster` (those resources only)
 *   bound by a per-consumer ClusterRoleBinding — never a shared binding whose subjects flip.
 * - clusterbinding: `Healthy` from the konnector's heartbeat age.
 * - sweeper (sweeper.ts): deletes cluster namespaces whose bind never completed, and (optionally)
 *   those whose konnector stopped heartbeating, after a condition and an event.
 * - tokenrotation: re-issues the consumer's TokenRequest token at 2/3 of its lifetime and rewrites
 *   the kubeconfig Secret (the konnector copies it to the consumer on its heartbeat).
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { Controller, Informer, keyOf, onAny, type KubeClient, type KubeObject, type ReconcileResult } from '../core/index.js';
import type { Binder } from './binder.js';
import type { Crd, ExportTemplate } from './catalog.js';
import type { BackendMetrics } from './metrics.js';
import { ClusterBindingReconciler } from './reconcilers/cluster-binding.js';
import { ExportRequestReconciler } from './reconcilers/export-request.js';
import { ExportReconciler } from './reconcilers/export.js';
import { RbacReconciler, type PolicyRule } from './reconcilers/rbac.js';
import { ServiceNamespaceReconciler } from './reconcilers/service-namespace.js';
import { TokenRotationReconciler } from './reconcilers/token-rotation.js';
import type { ClusterBinding, APIServiceExport, APIServiceExportRequest, APIServiceNamespace } from './reconcilers/types.js';
import { ClusterSweeper } from './sweeper.js';
import type { UnexpectedErrors } from './unexpected.js';
import { KUBECONFIG_SECRET, MANAGED_BY, MANAGED_BY_LABEL, R } from './refs.js';

export { parseGoDuration } from './reconcilers/cluster-binding.js';
export { SERVICE_NAMESPACE_FINALIZER } from './reconcilers/service-namespace.js';

export interface BackendControllersOptions {
  kube: KubeClient;
  binder: Binder;
  logger: Logger;
  metrics: BackendMetrics;
  registry?: Registry;
  consumerScope: 'Namespaced' | 'Cluster';
  /** How long a request may wait for a missing CRD. */
  exportRequestGraceMs: number;
  /** Finished requests are deleted this long after creation. @default 10 min */
  requestRetentionMs?: number;
  /** 0: 2 × the konnector's heartbeatInterval. */
  heartbeatTimeoutMs: number;
  /** Where a reconciler's programming error (a bug, not an API refusal) is reported (log, metric, /readyz). */
  unexpected?: UnexpectedErrors;
  /** APIServiceNamespaces per app cluster that get a provider namespace; 0: unlimited. @default 0 */
  maxServiceNamespacesPerCluster?: number;
  /** APIServiceExportRequests per app cluster acted on; 0: unlimited. @default 0 */
  maxExportRequestsPerCluster?: number;
  /** Clean-up of cluster namespaces (see sweeper.ts). @default incomplete after 10 min, no heartbeat sweep */
  sweep?: { orphanGraceMs: number; staleAfterMs: number; noticeMs: number; dryRun: boolean };
}

/**
 * What a ClusterBinding event enqueues. Health and sweeper follow every change (they read the
 * heartbeat); the per-consumer RBAC depends only on the ClusterBinding being there and its spec, so a
 * status-only update — the konnector's heartbeat every interval/2, the backend's own `Healthy`
 * condition — does not re-apply the ClusterRole and RoleBindings. Before, every heartbeat cost the
 * control plane five more requests (GET namespace, two APPLYs, two DELETEs; docs/scale.md).
 */
export function clusterBindingEvents(enqueue: { clusterBinding(key: string): void; rbac(clusterNs: string): void; sweep(clusterNs: string): void }): {
  onAdd(c: ClusterBinding): void;
  onUpdate(old: ClusterBinding, c: ClusterBinding): void;
  onDelete(c: ClusterBinding): void;
} {
  const all = (c: ClusterBinding) => {
    enqueue.clusterBinding(keyOf(c));
    enqueue.rbac(c.metadata.namespace!);
    enqueue.sweep(c.metadata.namespace!);
  };
  return {
    onAdd: all,
    onDelete: all,
    onUpdate: (old, c) => {
      // the informer's periodic resync re-delivers an unchanged object: re-apply RBAC then, so a
      // RoleBinding someone deleted comes back within the resync period
      if (old.metadata.resourceVersion !== undefined && old.metadata.resourceVersion === c.metadata.resourceVersion) return all(c);
      const specChanged =
        old.metadata.generation !== undefined && c.metadata.generation !== undefined
          ? old.metadata.generation !== c.metadata.generation
          : JSON.stringify(old.spec ?? null) !== JSON.stringify(c.spec ?? null);
      if (specChanged || Boolean(old.metadata.deletionTimestamp) !== Boolean(c.metadata.deletionTimestamp)) return all(c);
      enqueue.clusterBinding(keyOf(c));
      enqueue.sweep(c.metadata.namespace!);
    },
  };
}

/** How often every ClusterBinding is re-delivered, re-applying its consumer's RBAC (drift repair). */
export const CLUSTER_BINDING_RESYNC_MS = 10 * 60_000;

/** The backend's shared informers: one per resource its reconcilers read. */
function backendInformers(kube: KubeClient, logger: Logger) {
  return {
    requests: new Informer<APIServiceExportRequest>(kube, R.exportRequests, { logger }),
    exports: new Informer<APIServiceExport>(kube, R.exports, { logger }),
    crds: new Informer<Crd>(kube, R.crds, { logger }),
    templates: new Informer<ExportTemplate>(kube, R.templates, { logger }),
    serviceNamespaces: new Informer<APIServiceNamespace>(kube, R.serviceNamespaces, { logger }),
    clusterBindings: new Informer<ClusterBinding>(kube, R.clusterBindings, { logger, resyncMs: CLUSTER_BINDING_RESYNC_MS }),
    kubeconfigSecrets: new Informer(kube, R.secrets, {
      logger,
      labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`,
      fieldSelector: `metadata.name=${KUBECONFIG_SECRET}`,
    }),
    clusterNamespaces: new Informer(kube, R.namespaces, { logger, labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}` }),
  };
}

/** Makes the Controller of one reconciler: named `backend-<name>`, counting its results, reporting its bugs. */
function controllerFactory(o: BackendControllersOptions): (name: string, fn: (key: string) => Promise<ReconcileResult | void>) => Controller {
  return (name, fn) =>
    new Controller({
      name: `backend-${name}`,
      logger: o.logger,
      registry: o.registry,
      reconciler: async (key) => {
        try {
          const r = await fn(key);
          o.metrics.reconciles.inc({ controller: name, result: 'ok' });
          return r;
        } catch (e) {
          o.metrics.reconciles.inc({ controller: name, result: 'error' });
          throw e;
        }
      },
      ...(o.unexpected ? { onUnexpectedError: (e: Error, key: string) => o.unexpected!.record(`controller/${name}`, e, { key }) } : {}),
    });
}

export class BackendControllers {
  readonly requests: Informer<APIServiceExportRequest>;
  readonly exports: Informer<APIServiceExport>;
  readonly crds: Informer<Crd>;
  readonly templates: Informer<ExportTemplate>;
  readonly serviceNamespaces: Informer<APIServiceNamespace>;
  readonly clusterBindings: Informer<ClusterBinding>;
  readonly kubeconfigSecrets: Informer;
  readonly clusterNamespaces: Informer;
  readonly sweeper: ClusterSweeper;
  readonly controllers: Controller[];
  private readonly exportRequest: Controller;
  private readonly exportSync: Controller;
  private readonly serviceNamespace: Controller;
  private readonly rbac: Controller;
  private readonly clusterBinding: Controller;
  private readonly tokenRotation: Controller;
  private readonly sweep: Controller;
  private readonly reconcilers: {
    exportRequest: ExportRequestReconciler;
    export: ExportReconciler;
    serviceNamespace: ServiceNamespaceReconciler;
    rbac: RbacReconciler;
    clusterBinding: ClusterBindingReconciler;
    tokenRotation: TokenRotationReconciler;
  };
  private started = false;

  constructor(o: BackendControllersOptions) {
    const informers = backendInformers(o.kube, o.logger);
    this.requests = informers.requests;
    this.exports = informers.exports;
    this.crds = informers.crds;
    this.templates = informers.templates;
    this.serviceNamespaces = informers.serviceNamespaces;
    this.clusterBindings = informers.clusterBindings;
    this.kubeconfigSecrets = informers.kubeconfigSecrets;
    this.clusterNamespaces = informers.clusterNamespaces;
    this.sweeper = this.newSweeper(o);
    this.reconcilers = this.newReconcilers(o);

    const mk = controllerFactory(o);
    const r = this.reconcilers;
    this.exportRequest = mk('exportrequest', (k) => r.exportRequest.reconcile(k));
    this.exportSync = mk('export', (k) => r.export.reconcile(k));
    this.serviceNamespace = mk('servicenamespace', (k) => r.serviceNamespace.reconcile(k));
    this.rbac = mk('rbac', (k) => r.rbac.reconcile(k));
    this.clusterBinding = mk('clusterbinding', (k) => r.clusterBinding.reconcile(k));
    this.tokenRotation = mk('tokenrotation', (k) => r.tokenRotation.reconcile(k));
    this.sweep = mk('sweeper', (k) => this.sweeper.reconcile(k));
    this.controllers = [this.exportRequest, this.exportSync, this.serviceNamespace, this.rbac, this.clusterBinding, this.tokenRotation, this.sweep];

    this.addIndexes();
    this.wireEvents();
  }

  /** The sweeper of cluster namespaces, reading the informers' caches. */
  private newSweeper(o: BackendControllersOptions): ClusterSweeper {
    return new ClusterSweeper({
      kube: o.kube,
      logger: o.logger.child({ controller: 'sweeper' }),
      metrics: o.metrics,
      orphanGraceMs: 600_000,
      staleAfterMs: 0,
      noticeMs: 3600_000,
      dryRun: false,
      ...o.sweep,
      cache: { namespaces: this.clusterNamespaces, clusterBindings: this.clusterBindings, kubeconfigSecrets: this.kubeconfigSecrets },
    });
  }

  /** One reconciler per concern, each given the caches it reads and the calls it makes. */
  private newReconcilers(o: BackendControllersOptions): BackendControllers['reconcilers'] {
    const { kube, logger: log } = o;
    const rbac = new RbacReconciler({ kube, exports: this.exports, serviceNamespaces: this.serviceNamespaces, consumerScope: o.consumerScope });
    return {
      exportRequest: new ExportRequestReconciler({
        kube,
        requests: this.requests,
        exports: this.exports,
        crds: this.crds,
        templates: this.templates,
        logger: log,
        consumerScope: o.consumerScope,
        exportRequestGraceMs: o.exportRequestGraceMs,
        requestRetentionMs: o.requestRetentionMs,
        maxPerCluster: o.maxExportRequestsPerCluster,
      }),
      export: new ExportReconciler({ kube, exports: this.exports, crds: this.crds, logger: log }),
      serviceNamespace: new ServiceNamespaceReconciler({
        kube,
        serviceNamespaces: this.serviceNamespaces,
        logger: log,
        rbacChanged: (clusterNs) => this.rbac.enqueue(clusterNs),
        grantNamespace: (clusterNs, target) => rbac.bindNamespace(clusterNs, target),
        maxPerCluster: o.maxServiceNamespacesPerCluster,
        clusterBindings: this.clusterBindings,
        requeue: (key) => this.serviceNamespace.enqueue(key),
      }),
      rbac,
      clusterBinding: new ClusterBindingReconciler({ kube, clusterBindings: this.clusterBindings, heartbeatTimeoutMs: o.heartbeatTimeoutMs }),
      tokenRotation: new TokenRotationReconciler({ kube, kubeconfigSecrets: this.kubeconfigSecrets, binder: o.binder, metrics: o.metrics, logger: log }),
    };
  }

  private addIndexes(): void {
    this.exports.addIndex('name', (e) => [e.metadata.name!]);
    this.requests.addIndex('crd', (r) => (r.spec?.resources ?? []).map((x) => `${x.resource}.${x.group ?? ''}`));
  }

  /** Which controllers each informer's events enqueue. */
  private wireEvents(): void {
    this.requests.addEventHandler(onAny((r) => this.exportRequest.enqueue(keyOf(r))));
    this.exports.addEventHandler(
      onAny((e) => {
        this.exportSync.enqueue(keyOf(e));
        this.rbac.enqueue(e.metadata.namespace!);
      }),
    );
    this.crds.addEventHandler(
      onAny((c) => {
        for (const e of this.exports.byIndex('name', c.metadata.name!)) this.exportSync.enqueue(keyOf(e));
        for (const r of this.requests.byIndex('crd', c.metadata.name!)) this.exportRequest.enqueue(keyOf(r));
      }),
    );
    this.templates.addEventHandler(
      onAny(() => {
        for (const r of this.requests.list()) if ((r.status?.phase ?? 'Pending') === 'Pending') this.exportRequest.enqueue(keyOf(r));
      }),
    );
    this.serviceNamespaces.addEventHandler(
      onAny((s) => {
        this.serviceNamespace.enqueue(keyOf(s));
        this.rbac.enqueue(s.metadata.namespace!);
      }),
    );
    this.clusterBindings.addEventHandler(
      clusterBindingEvents({
        clusterBinding: (k) => this.clusterBinding.enqueue(k),
        rbac: (ns) => this.rbac.enqueue(ns),
        sweep: (ns) => this.sweep.enqueue(ns),
      }),
    );
    this.kubeconfigSecrets.addEventHandler(
      onAny((s) => {
        this.tokenRotation.enqueue(s.metadata.namespace!);
        this.sweep.enqueue(s.metadata.namespace!);
      }),
    );
    this.clusterNamespaces.addEventHandler(onAny((n) => this.sweep.enqueue(n.metadata.name!)));
  }

  private get informers(): Informer<KubeObject>[] {
    return [
      this.requests,
      this.exports,
      this.crds,
      this.templates,
      this.serviceNamespaces,
      this.clusterBindings,
      this.kubeconfigSecrets,
      this.clusterNamespaces,
    ] as Informer<KubeObject>[];
  }

  hasSynced(): boolean {
    return this.started && this.informers.every((i) => i.hasSynced());
  }

  async start(syncTimeoutMs = 60_000): Promise<void> {
    for (const i of this.informers) i.start();
    await Promise.all(this.informers.map((i) => i.waitForSync(syncTimeoutMs)));
    for (const c of this.controllers) c.start();
    this.started = true;
  }

  async stop(): Promise<void> {
    await Promise.all(this.controllers.map((c) => c.stop()));
    await Promise.all(this.informers.map((i) => i.stop()));
  }

  // ---------------------------------------------------------------- one reconcile (tests, tools)

  reconcileRequest(key: string): Promise<ReconcileResult | void> {
    return this.reconcilers.exportRequest.reconcile(key);
  }

  reconcileExport(key: string): Promise<void> {
    return this.reconcilers.export.reconcile(key);
  }

  reconcileServiceNamespace(key: string): Promise<void> {
    return this.reconcilers.serviceNamespace.reconcile(key);
  }

  /** The rules of `klutch-binder-<clusterNs>`: exported resources (+status) and claimed resources. */
  rulesFor(clusterNs: string, onlyClusterScoped = false): PolicyRule[] {
    return this.reconcilers.rbac.rulesFor(clusterNs, onlyClusterScoped);
  }

  reconcileRbac(clusterNs: string): Promise<void> {
    return this.reconcilers.rbac.reconcile(clusterNs);
  }

  reconcileClusterBinding(key: string): Promise<ReconcileResult | void> {
    return this.reconcilers.clusterBinding.reconcile(key);
  }

  reconcileToken(ns: string): Promise<ReconcileResult | void> {
    return this.reconcilers.tokenRotation.reconcile(ns);
  }
}
