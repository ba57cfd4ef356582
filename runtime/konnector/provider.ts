/**
 * One connection to a provider (control plane), shared by every APIServiceBinding whose kubeconfig
 * Secret has the same content. This is its lifecycle: it owns the informers on the consumer's cluster
 * namespace (`provider-informers.ts`) and runs one controller per concern, each with its reconciler
 * in its own file:
 *
 * - `heartbeat` (`provider-heartbeat.ts`): ClusterBinding status and credential rotation;
 * - `crd` (`provider-crds.ts`): APIServiceExport → CRD on the app cluster, owned by the APIServiceBinding;
 * - `exports` (`provider-exports.ts`): starts/stops the per-export syncers and claim syncers;
 * - `namespaces` (`provider-namespaces.ts`): consumer Namespace gone → APIServiceNamespace deleted upstream.
 *
 * What the konnector reads (sync state, heartbeat, Connected state) is exposed read-only.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { keyOf, type KubeClient } from '../core/client.js';
import { Controller } from '../core/controller.js';
import { type Informer, onAny } from '../core/informer.js';
import type { ClaimConflictSink } from './claim-conflicts.js';
import type { ClaimRefusalSink } from './claim-refusals.js';
import type { BindingLimitSink } from './binding-limits.js';
import type { WriteBudgetOptions } from './write-budget.js';
import { SecretTypePolicy } from '../../contract/secret-types.js';
import type { SyncContext } from './context.js';
import { MetadataKeyPolicy } from '../../contract/metadata-keys.js';
import { DEFAULT_UPSTREAM_DELETION_TIMEOUT_MS, type DeletionTimeoutSink } from './deletion-timeouts.js';
import type { CRD } from './crd.js';
import type { ExportSync } from './export-sync.js';
import type { ParsedKubeconfig } from './kubeconfig.js';
import type { KonnectorMetrics } from './metrics.js';
import { CrdReconciler } from './provider-crds.js';
import { ResourceGate } from './resource-gate.js';
import { ExportReconciler } from './provider-exports.js';
import { HeartbeatReconciler } from './provider-heartbeat.js';
import { rotationKeyOf } from '../../contract/credential.js';
import { ConsumerNamespaces } from './consumer-namespaces.js';
import { ProviderInformers } from './provider-informers.js';
import { NamespaceReconciler } from './provider-namespaces.js';
import type { AttachedBindings, ConditionState } from './provider-state.js';
import { CLUSTER_BINDING_NAME, type APIServiceBinding } from './types.js';

export { goDuration } from './provider-heartbeat.js';
export type { ConditionState } from './provider-state.js';

/** What a provider connection needs from the konnector. */
export interface KonnectorShared {
  app: KubeClient;
  bindingClient: KubeClient;
  crds: Informer<CRD>;
  namespaces: Informer;
  getBinding(key: string): APIServiceBinding | undefined;
  /**
   * Whether the CRD's controller is an APIServiceBinding that certainly no longer exists (none with its
   * uid among the bindings the konnector can see, and it sees all the bindings that could own it).
   */
  ownerBindingGone(crd: CRD): boolean;
  bindingChanged(key: string): void;
  clientFor(parsed: ParsedKubeconfig): KubeClient;
  log: Logger;
  registry: Registry;
  metrics: KonnectorMetrics;
  heartbeatIntervalMs: number;
  resyncMs: number;
  workers: number;
  providerSyncTimeoutMs: number;
  /** How long an app-cluster namespace stays bound after its last bound object went (consumer-namespaces.ts). */
  namespaceLingerMs?: number;
  /** See SyncContext.maxProviderObjectsPerNamespace. @default 1000 */
  maxProviderObjectsPerNamespace?: number;
  /** See SyncContext.metadataKeys. @default MetadataKeyPolicy.DEFAULT */
  metadataKeys?: MetadataKeyPolicy;
  /** See SyncContext.upstreamDeletionTimeoutMs. @default DEFAULT_UPSTREAM_DELETION_TIMEOUT_MS (10 min) */
  upstreamDeletionTimeoutMs?: number;
  /** See SyncContext.deletionTimeouts (one record for every provider connection of the konnector). */
  deletionTimeouts: DeletionTimeoutSink;
  /** See SyncContext.resourceGate. @default ResourceGate.DEFAULT */
  resourceGate?: ResourceGate;
  version: string;
  controlPlaneMode: boolean;
  /** See SyncContext.claimConflicts (one record for every provider connection of the konnector). */
  claimConflicts: ClaimConflictSink;
  /** See SyncContext.secretTypes. @default SecretTypePolicy.DEFAULT */
  secretTypes?: SecretTypePolicy;
  /** See SyncContext.claimRefusals (one record for every provider connection of the konnector). */
  claimRefusals?: ClaimRefusalSink;
  /** See SyncContext.limits (one record for every provider connection of the konnector). */
  limits?: BindingLimitSink;
  /** See SyncContext.maxCachedObjectsPerBinding. */
  maxCachedObjectsPerBinding?: number;
  /** See SyncContext.writeBudget. */
  writeBudget?: WriteBudgetOptions;
  /** The konnector's namespace allow-list (`--allow-namespace`); undefined: every namespace. */
  allowedNamespaces?: ReadonlySet<string>;
}

/** @default of KonnectorShared.maxProviderObjectsPerNamespace. */
export const DEFAULT_MAX_PROVIDER_OBJECTS_PER_NAMESPACE = 1000;

const nameOf = (bindingKey: string): string => bindingKey.split('/').pop()!;

/** The set of binding keys attached to a connection; reconcilers see it through {@link AttachedBindings}. */
class BindingKeys implements AttachedBindings {
  private readonly set = new Set<string>();
  add(key: string): boolean {
    const isNew = !this.set.has(key);
    this.set.add(key);
    return isNew;
  }
  delete(key: string): void {
    this.set.delete(key);
  }
  get size(): number {
    return this.set.size;
  }
  has(key: string): boolean {
    return this.set.has(key);
  }
  keys(): string[] {
    return [...this.set];
  }
  named(name: string): string[] {
    return this.keys().filter((k) => nameOf(k) === name);
  }
}

export class ProviderConnection implements SyncContext {
  readonly provider: KubeClient;
  readonly app: KubeClient;
  readonly clusterNamespace: string;
  readonly log: Logger;
  readonly registry: Registry;
  readonly metrics: KonnectorMetrics;
  readonly workers: number;
  readonly resyncMs: number;
  readonly maxProviderObjectsPerNamespace: number;
  readonly metadataKeys: MetadataKeyPolicy;
  readonly upstreamDeletionTimeoutMs: number;
  readonly deletionTimeouts: DeletionTimeoutSink;
  readonly resourceGate: ResourceGate;
  readonly claimConflicts: ClaimConflictSink;
  readonly secretTypes: SecretTypePolicy;
  readonly claimRefusals?: ClaimRefusalSink;
  readonly limits?: BindingLimitSink;
  readonly maxCachedObjectsPerBinding?: number;
  readonly writeBudget?: WriteBudgetOptions;
  private readonly bindings = new BindingKeys();
  private readonly informers: ProviderInformers;
  private readonly consumerNamespaces: ConsumerNamespaces;
  private readonly heartbeatReconciler: HeartbeatReconciler;
  private readonly crdReconciler: CrdReconciler;
  private readonly exportReconciler: ExportReconciler;
  private readonly heartbeat: Controller;
  private readonly crd: Controller;
  private readonly exportsCtl: Controller;
  private readonly nsDeletion: Controller;
  private stopped = false;
  /** Set once the informers synced (then the controllers run until stop). */
  private controllersStarted = false;
  private lastSyncError: string | undefined;

  constructor(
    private readonly shared: KonnectorShared,
    readonly kubeconfig: ParsedKubeconfig,
    readonly id: string,
  ) {
    const ns = kubeconfig.namespace;
    this.clusterNamespace = ns;
    this.provider = shared.clientFor(kubeconfig);
    this.app = shared.app;
    this.log = shared.log.child({ provider: kubeconfig.server, clusterNamespace: ns });
    this.registry = shared.registry;
    this.metrics = shared.metrics;
    this.workers = shared.workers;
    this.resyncMs = shared.resyncMs;
    this.maxProviderObjectsPerNamespace = shared.maxProviderObjectsPerNamespace ?? DEFAULT_MAX_PROVIDER_OBJECTS_PER_NAMESPACE;
    this.claimConflicts = shared.claimConflicts;
    this.secretTypes = shared.secretTypes ?? SecretTypePolicy.DEFAULT;
    this.claimRefusals = shared.claimRefusals;
    this.limits = shared.limits;
    this.maxCachedObjectsPerBinding = shared.maxCachedObjectsPerBinding;
    this.writeBudget = shared.writeBudget;
    this.metadataKeys = shared.metadataKeys ?? MetadataKeyPolicy.DEFAULT;
    this.upstreamDeletionTimeoutMs = shared.upstreamDeletionTimeoutMs ?? DEFAULT_UPSTREAM_DELETION_TIMEOUT_MS;
    this.deletionTimeouts = shared.deletionTimeouts;
    this.resourceGate = shared.resourceGate ?? ResourceGate.DEFAULT;
    this.consumerNamespaces = this.newConsumerNamespaces();
    this.informers = this.newInformers();

    const r = this.newReconcilers();
    this.heartbeatReconciler = r.heartbeat;
    this.crdReconciler = r.crd;
    this.exportReconciler = r.exports;
    const c = { registry: shared.registry, logger: this.log, backoffMaxMs: 30_000 };
    this.heartbeat = new Controller({ ...c, name: `heartbeat:${ns}`, workers: 1, reconciler: r.heartbeat });
    this.crd = new Controller({ ...c, name: `crd:${ns}`, workers: 2, reconciler: r.crd });
    this.exportsCtl = new Controller({ ...c, name: `exports:${ns}`, workers: 2, reconciler: r.exports });
    this.nsDeletion = new Controller({ ...c, name: `namespaces:${ns}`, workers: 1, reconciler: r.namespaces });

    this.wireEvents();
  }

  /** The consumer namespaces this connection acts in (consumer-namespaces.ts). */
  private newConsumerNamespaces(): ConsumerNamespaces {
    // Made before the informers exist; they only call `admits` (and it `changed`) once started.
    return new ConsumerNamespaces({
      reserved: () => this.reservedNamespaces(),
      allowed: (n) => this.isNamespaceAllowed(n),
      lingerMs: this.shared.namespaceLingerMs,
      changed: () => this.informers.mappingMayHaveChanged(),
    });
  }

  /** The informers on the consumer's cluster namespace on the provider. */
  private newInformers(): ProviderInformers {
    return new ProviderInformers({
      provider: this.provider,
      clusterNamespace: this.clusterNamespace,
      resyncMs: this.shared.resyncMs,
      log: this.log,
      admits: (consumerNs) => this.consumerNamespaces.isBound(consumerNs),
    });
  }

  /** One reconciler per concern, each given the caches it reads and the calls it makes. */
  private newReconcilers(): { heartbeat: HeartbeatReconciler; crd: CrdReconciler; exports: ExportReconciler; namespaces: NamespaceReconciler } {
    const { shared, informers } = this;
    const common = {
      provider: this.provider,
      clusterNamespace: this.clusterNamespace,
      bindings: this.bindings as AttachedBindings,
      getBinding: shared.getBinding,
      log: this.log,
    };
    const heartbeat = new HeartbeatReconciler({
      ...common,
      bindingClient: shared.bindingClient,
      clusterBindings: informers.clusterBindings,
      metrics: shared.metrics,
      heartbeatIntervalMs: shared.heartbeatIntervalMs,
      version: shared.version,
      controlPlaneMode: shared.controlPlaneMode,
      rotationKey: rotationKeyOf(this.kubeconfig.text),
      changed: () => this.notifyBindings(),
    });
    const crd = new CrdReconciler({
      resourceGate: this.resourceGate,
      ...common,
      app: shared.app,
      exports: informers.exports,
      crds: shared.crds,
      ownerBindingGone: shared.ownerBindingGone,
      changed: (key) => {
        shared.bindingChanged(key);
        this.exportsCtl.enqueue(nameOf(key));
      },
    });
    const exports = new ExportReconciler({
      ...common,
      exports: informers.exports,
      crds: shared.crds,
      crdState: (key) => crd.state(key),
      syncContext: this,
      providerSyncTimeoutMs: shared.providerSyncTimeoutMs,
    });
    const namespaces = new NamespaceReconciler({ ...common, apiNamespaces: informers.apiNamespaces, appNamespaces: shared.namespaces });
    return { heartbeat, crd, exports, namespaces };
  }

  /** Which controllers each provider informer's events enqueue. */
  private wireEvents(): void {
    const { informers } = this;
    informers.clusterBindings.addEventHandler(onAny(() => this.heartbeat.enqueue('cluster')));
    informers.exports.addEventHandler(
      onAny((o) => {
        for (const b of this.bindings.named(o.metadata.name!)) this.crd.enqueue(b);
        this.exportsCtl.enqueue(o.metadata.name!);
      }),
    );
    informers.apiNamespaces.addEventHandler(onAny((o) => this.nsDeletion.enqueue(o.metadata.name!)));
  }

  // ------------------------------------------------------------------ state the konnector reads

  /** Whether the provider informers synced and the controllers run. */
  get synced(): boolean {
    return this.controllersStarted;
  }

  /** Why the provider informers did not sync yet, while they have not. */
  get syncError(): string | undefined {
    return this.lastSyncError;
  }

  /** The Heartbeating condition of the attached bindings. */
  get heartbeatState(): ConditionState {
    return this.heartbeatReconciler.state;
  }

  /** ClusterBinding spec.providerPrettyName as last seen. */
  get providerPrettyName(): string | undefined {
    return this.heartbeatReconciler.providerPrettyName;
  }

  /** When this konnector last wrote a heartbeat for this connection. */
  get lastHeartbeat(): Date | undefined {
    return this.heartbeatReconciler.lastHeartbeat;
  }

  /** The Connected condition of an attached binding, once reconciled. */
  crdState(bindingKey: string): ConditionState | undefined {
    return this.crdReconciler.state(bindingKey);
  }

  get bindingCount(): number {
    return this.bindings.size;
  }

  /** Running export syncers (tests and fault injection). */
  exportSyncs(): ExportSync[] {
    return this.exportReconciler.exportSyncs();
  }

  /** For tests: key of this connection's cluster binding. */
  get clusterBindingKey(): string {
    return keyOf({ metadata: { namespace: this.clusterNamespace, name: CLUSTER_BINDING_NAME } });
  }

  // ------------------------------------------------------------------ lifecycle

  start(): this {
    this.informers.start();
    void this.waitAndStart();
    return this;
  }

  private async waitAndStart(): Promise<void> {
    const timeoutMs = this.shared.providerSyncTimeoutMs;
    while (!this.stopped) {
      try {
        await this.informers.waitForSync(timeoutMs);
        break;
      } catch (e) {
        if (this.stopped) return;
        const err = (e as Error).message;
        this.lastSyncError = `provider informers did not sync within ${timeoutMs / 1000}s: ${err}; check the provider URL, the kubeconfig credentials and their RBAC in namespace ${this.clusterNamespace}`;
        this.log.warn({ err }, 'provider informers not synced yet');
        this.notifyBindings();
      }
    }
    if (this.stopped) return;
    this.controllersStarted = true;
    this.lastSyncError = undefined;
    for (const c of [this.heartbeat, this.crd, this.exportsCtl, this.nsDeletion]) c.start();
    this.heartbeat.enqueue('cluster');
    for (const b of this.bindings.keys()) this.crd.enqueue(b);
    for (const e of this.informers.exports.list()) this.exportsCtl.enqueue(e.metadata.name!);
    for (const n of this.informers.apiNamespaces.list()) this.nsDeletion.enqueue(n.metadata.name!);
    this.log.info('provider connection synced');
    this.notifyBindings();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([this.heartbeat, this.crd, this.exportsCtl, this.nsDeletion].map((c) => c.stop()));
    await this.exportReconciler.stopAll();
    await this.informers.stop();
    this.consumerNamespaces.stop();
    this.provider.close();
    // No stale heartbeat series (and no heartbeat alert) for a provider this konnector left.
    this.metrics.lastHeartbeat.remove({ cluster_namespace: this.clusterNamespace });
    this.metrics.heartbeatInterval.remove({ cluster_namespace: this.clusterNamespace });
  }

  // ------------------------------------------------------------------ events from the konnector

  attach(bindingKey: string): void {
    const isNew = this.bindings.add(bindingKey);
    if (this.controllersStarted) {
      this.crd.enqueue(bindingKey);
      const b = this.shared.getBinding(bindingKey);
      if (b) this.exportsCtl.enqueue(b.metadata.name!);
      if (isNew) this.heartbeat.enqueue('cluster');
    }
  }

  /** Returns true when no binding uses this connection any more. */
  detach(bindingKey: string): boolean {
    this.bindings.delete(bindingKey);
    this.crdReconciler.forget(bindingKey);
    if (this.controllersStarted) this.exportsCtl.enqueue(nameOf(bindingKey));
    return this.bindings.size === 0;
  }

  /** Called by the konnector when an attached binding changed (claims, deletion). */
  bindingUpdated(bindingKey: string): void {
    if (!this.controllersStarted) return;
    this.crd.enqueue(bindingKey);
    this.exportsCtl.enqueue(nameOf(bindingKey));
  }

  /** Called by the konnector on app-cluster CRD events. */
  crdChanged(name: string): void {
    if (!this.controllersStarted) return;
    for (const b of this.bindings.named(name)) this.crd.enqueue(b);
    this.exportsCtl.enqueue(name);
  }

  /** Called by the konnector on app-cluster Namespace events. */
  namespaceChanged(name: string): void {
    if (this.controllersStarted) this.nsDeletion.enqueue(name);
  }

  private notifyBindings(): void {
    for (const b of this.bindings.keys()) this.shared.bindingChanged(b);
  }

  // ------------------------------------------------------------------ SyncContext

  providerNamespaceFor(consumerNamespace: string): string | undefined {
    return this.informers.providerNamespaceFor(consumerNamespace);
  }

  consumerNamespaceFor(providerNamespace: string): string | undefined {
    return this.informers.consumerNamespaceFor(providerNamespace);
  }

  ensureAPIServiceNamespace(consumerNamespace: string): Promise<string | undefined> {
    return this.informers.ensureAPIServiceNamespace(consumerNamespace);
  }

  boundNamespaces(): Array<{ consumer: string; provider: string }> {
    return this.informers.boundNamespaces();
  }

  noteConsumerObject(source: string, namespace: string, name: string, present: boolean): void {
    this.consumerNamespaces.note(source, namespace, name, present);
  }

  isNamespaceAllowed(consumerNamespace: string): boolean {
    return this.shared.allowedNamespaces?.has(consumerNamespace) ?? true;
  }

  isReservedNamespace(consumerNamespace: string): boolean {
    return this.consumerNamespaces.isReserved(consumerNamespace);
  }

  /** The konnector's own namespaces: where the kubeconfig Secrets of the attached bindings live. */
  private reservedNamespaces(): string[] {
    const out: string[] = [];
    for (const k of this.bindings.keys()) {
      const b = this.shared.getBinding(k);
      if (b?.metadata.namespace) out.push(b.metadata.namespace);
      if (b?.spec.kubeconfigSecretRef?.namespace) out.push(b.spec.kubeconfigSecretRef.namespace);
    }
    return out;
  }

  onNamespacesChanged(cb: (consumerNamespaces: string[]) => void): () => void {
    return this.informers.onNamespacesChanged(cb);
  }
}
