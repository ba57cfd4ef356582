/**
 * One connection to a provider (control plane), shared by every APIServiceBinding whose kubeconfig
 * Secret has the same content. It watches the consumer's cluster namespace on the provider
 * (ClusterBinding, APIServiceExports, APIServiceNamespaces) and runs one reconciler per concern:
 *
 * - `heartbeat`: ClusterBinding status (lastHeartbeatTime, heartbeatInterval, konnectorVersion) and
 *   credential rotation (provider kubeconfig Secret → the consumer's kubeconfig Secret);
 * - `crd`: APIServiceExport → CRD on the app cluster, owned by the APIServiceBinding;
 * - `exports`: starts/stops the per-export syncers (spec up, status down) and claim syncers;
 * - `namespaces`: consumer Namespace gone → APIServiceNamespace deleted upstream.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { CoreResources, isAlreadyExists, isNotFound, keyOf, type KubeClient, type KubeObject } from '../core/client.js';
import { conditionsEqual, setCondition, setSummary, type Condition } from '../core/conditions.js';
import { Controller } from '../core/controller.js';
import { Informer } from '../core/informer.js';
import { ClaimSync } from './claims.js';
import type { SyncContext } from './context.js';
import { bindingOwnerRef, crdEstablished, crdNeedsUpdate, exportToCRD, isOwnedBy, controllerOf, type CRD } from './crd.js';
import { ExportSync } from './export-sync.js';
import type { ParsedKubeconfig } from './kubeconfig.js';
import { hashOf, isDeleting } from './metadata.js';
import type { KonnectorMetrics } from './metrics.js';
import {
  BindResources,
  CLUSTER_BINDING_NAME,
  EXPORTED_LABEL,
  type APIServiceBinding,
  type APIServiceExport,
  type APIServiceNamespace,
  type ClusterBinding,
  type Secret,
} from './types.js';

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
  version: string;
  controlPlaneMode: boolean;
}

export type ConditionState = Pick<Condition, 'status' | 'reason' | 'message'>;

interface Syncers {
  sig: string;
  exportSync: ExportSync;
  claims: ClaimSync[];
}

/** Go's time.Duration String() for whole seconds (e.g. 5m0s, 30s, 1h0m0s). */
export function goDuration(ms: number): string {
  let s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (h) return `${h}h${m}m${s}s`;
  if (m) return `${m}m${s}s`;
  return `${s}s`;
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
  private readonly bindings = new Set<string>();
  private readonly exports: Informer<APIServiceExport>;
  private readonly apiNamespaces: Informer<APIServiceNamespace>;
  private readonly clusterBindings: Informer<ClusterBinding>;
  private readonly heartbeat: Controller;
  private readonly crd: Controller;
  private readonly exportsCtl: Controller;
  private readonly nsDeletion: Controller;
  private readonly syncers = new Map<string, Syncers>();
  private readonly nsListeners = new Set<(ns: string[]) => void>();
  private readonly crdStates = new Map<string, ConditionState>();
  private stopped = false;
  private startedControllers = false;
  synced = false;
  syncError: string | undefined;
  heartbeatState: ConditionState = { status: 'Unknown', reason: 'HeartbeatPending', message: 'the first heartbeat has not been sent yet' };
  providerPrettyName: string | undefined;
  lastHeartbeat: Date | undefined;

  constructor(
    private readonly shared: KonnectorShared,
    readonly kubeconfig: ParsedKubeconfig,
    readonly id: string,
  ) {
    this.clusterNamespace = kubeconfig.namespace;
    this.provider = shared.clientFor(kubeconfig);
    this.app = shared.app;
    this.log = shared.log.child({ provider: kubeconfig.server, clusterNamespace: this.clusterNamespace });
    this.registry = shared.registry;
    this.metrics = shared.metrics;
    this.workers = shared.workers;
    this.resyncMs = shared.resyncMs;
    const ns = this.clusterNamespace;
    const iopts = { namespace: ns, resyncMs: shared.resyncMs, logger: this.log };
    this.exports = new Informer<APIServiceExport>(this.provider, BindResources.apiServiceExports, iopts);
    this.apiNamespaces = new Informer<APIServiceNamespace>(this.provider, BindResources.apiServiceNamespaces, iopts);
    this.clusterBindings = new Informer<ClusterBinding>(this.provider, BindResources.clusterBindings, iopts);
    this.apiNamespaces.addIndex('providerNamespace', (o) => (o.status?.namespace ? [o.status.namespace] : []));

    const c = { registry: shared.registry, logger: this.log, backoffMaxMs: 30_000 };
    this.heartbeat = new Controller({ ...c, name: `heartbeat:${ns}`, workers: 1, reconciler: () => this.reconcileHeartbeat() });
    this.crd = new Controller({ ...c, name: `crd:${ns}`, workers: 2, reconciler: (k) => this.reconcileCRD(k) });
    this.exportsCtl = new Controller({ ...c, name: `exports:${ns}`, workers: 2, reconciler: (k) => this.reconcileExport(k) });
    this.nsDeletion = new Controller({ ...c, name: `namespaces:${ns}`, workers: 1, reconciler: (k) => this.reconcileNamespace(k) });

    this.clusterBindings.addEventHandler({
      onAdd: () => this.heartbeat.enqueue('cluster'),
      onUpdate: () => this.heartbeat.enqueue('cluster'),
      onDelete: () => this.heartbeat.enqueue('cluster'),
    });
    const onExport = (o: KubeObject) => {
      for (const b of this.bindingKeysNamed(o.metadata.name!)) this.crd.enqueue(b);
      this.exportsCtl.enqueue(o.metadata.name!);
    };
    this.exports.addEventHandler({ onAdd: onExport, onUpdate: (_, o) => onExport(o), onDelete: onExport });
    let lastMapping = new Map<string, string>();
    const onNs = (o: APIServiceNamespace) => {
      this.nsDeletion.enqueue(o.metadata.name!);
      // Notify syncers when the consumer ↔ provider namespace mapping changed.
      const now = new Map(this.boundNamespaces().map((b) => [b.consumer, b.provider]));
      const changed = [...new Set([...now.keys(), ...lastMapping.keys()])].filter((k) => now.get(k) !== lastMapping.get(k));
      lastMapping = now;
      if (changed.length) for (const l of this.nsListeners) l(changed);
    };
    this.apiNamespaces.addEventHandler({ onAdd: onNs, onUpdate: (_, o) => onNs(o), onDelete: onNs });
  }

  // ------------------------------------------------------------------ lifecycle

  start(): this {
    for (const i of [this.exports, this.apiNamespaces, this.clusterBindings]) i.start();
    void this.waitAndStart();
    return this;
  }

  private async waitAndStart(): Promise<void> {
    const infs = [this.exports, this.apiNamespaces, this.clusterBindings];
    while (!this.stopped) {
      try {
        await Promise.all(infs.map((i) => i.waitForSync(this.shared.providerSyncTimeoutMs)));
        break;
      } catch (e) {
        if (this.stopped) return;
        const err = infs.find((i) => i.lastError)?.lastError?.message ?? (e as Error).message;
        this.syncError = `provider informers did not sync within ${this.shared.providerSyncTimeoutMs / 1000}s: ${err}; check the provider URL, the kubeconfig credentials and their RBAC in namespace ${this.clusterNamespace}`;
        this.log.warn({ err }, 'provider informers not synced yet');
        this.notifyBindings();
      }
    }
    if (this.stopped) return;
    this.synced = true;
    this.syncError = undefined;
    this.startedControllers = true;
    for (const c of [this.heartbeat, this.crd, this.exportsCtl, this.nsDeletion]) c.start();
    this.heartbeat.enqueue('cluster');
    for (const b of this.bindings) this.crd.enqueue(b);
    for (const e of this.exports.list()) this.exportsCtl.enqueue(e.metadata.name!);
    for (const n of this.apiNamespaces.list()) this.nsDeletion.enqueue(n.metadata.name!);
    this.log.info('provider connection synced');
    this.notifyBindings();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([this.heartbeat, this.crd, this.exportsCtl, this.nsDeletion].map((c) => c.stop()));
    await Promise.all([...this.syncers.values()].map((s) => this.stopSyncers(s)));
    this.syncers.clear();
    await Promise.all([this.exports, this.apiNamespaces, this.clusterBindings].map((i) => i.stop()));
    this.provider.close();
    // No stale heartbeat series (and no heartbeat alert) for a provider this konnector left.
    this.metrics.lastHeartbeat.remove({ cluster_namespace: this.clusterNamespace });
    this.metrics.heartbeatInterval.remove({ cluster_namespace: this.clusterNamespace });
  }

  attach(bindingKey: string): void {
    const isNew = !this.bindings.has(bindingKey);
    this.bindings.add(bindingKey);
    if (this.startedControllers) {
      this.crd.enqueue(bindingKey);
      const b = this.shared.getBinding(bindingKey);
      if (b) this.exportsCtl.enqueue(b.metadata.name!);
      if (isNew) this.heartbeat.enqueue('cluster');
    }
  }

  /** Returns true when no binding uses this connection any more. */
  detach(bindingKey: string): boolean {
    this.bindings.delete(bindingKey);
    this.crdStates.delete(bindingKey);
    const name = bindingKey.split('/').pop()!;
    if (this.startedControllers) this.exportsCtl.enqueue(name);
    return this.bindings.size === 0;
  }

  get bindingCount(): number {
    return this.bindings.size;
  }

  /** Called by the konnector when an attached binding changed (claims, deletion). */
  bindingUpdated(bindingKey: string): void {
    if (!this.startedControllers) return;
    this.crd.enqueue(bindingKey);
    this.exportsCtl.enqueue(bindingKey.split('/').pop()!);
  }

  /** Called by the konnector on app-cluster CRD events. */
  crdChanged(name: string): void {
    if (!this.startedControllers) return;
    for (const b of this.bindingKeysNamed(name)) this.crd.enqueue(b);
    this.exportsCtl.enqueue(name);
  }

  /** Called by the konnector on app-cluster Namespace events. */
  namespaceChanged(name: string): void {
    if (this.startedControllers) this.nsDeletion.enqueue(name);
  }

  crdState(bindingKey: string): ConditionState | undefined {
    return this.crdStates.get(bindingKey);
  }

  /** Running export syncers (tests and fault injection). */
  exportSyncs(): ExportSync[] {
    return [...this.syncers.values()].map((s) => s.exportSync);
  }

  private bindingKeysNamed(name: string): string[] {
    return [...this.bindings].filter((k) => k.split('/').pop() === name);
  }

  private notifyBindings(): void {
    for (const b of this.bindings) this.shared.bindingChanged(b);
  }

  // ------------------------------------------------------------------ SyncContext

  providerNamespaceFor(consumerNamespace: string): string | undefined {
    const o = this.apiNamespaces.getByName(this.clusterNamespace, consumerNamespace);
    return o && !isDeleting(o) ? o.status?.namespace || undefined : undefined;
  }

  consumerNamespaceFor(providerNamespace: string): string | undefined {
    const o = this.apiNamespaces.byIndex('providerNamespace', providerNamespace).find((x) => !isDeleting(x));
    return o?.metadata.name;
  }

  async ensureAPIServiceNamespace(consumerNamespace: string): Promise<string | undefined> {
    const existing = this.apiNamespaces.getByName(this.clusterNamespace, consumerNamespace);
    if (existing) return isDeleting(existing) ? undefined : existing.status?.namespace || undefined;
    try {
      await this.provider.create(BindResources.apiServiceNamespaces, {
        metadata: { name: consumerNamespace, namespace: this.clusterNamespace },
        spec: {},
      });
      this.log.info({ namespace: consumerNamespace }, 'created APIServiceNamespace; waiting for the provider to assign a namespace');
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
    return undefined;
  }

  boundNamespaces(): Array<{ consumer: string; provider: string }> {
    return this.apiNamespaces
      .list()
      .filter((o) => o.status?.namespace && !isDeleting(o))
      .map((o) => ({ consumer: o.metadata.name!, provider: o.status!.namespace! }));
  }

  onNamespacesChanged(cb: (consumerNamespaces: string[]) => void): () => void {
    this.nsListeners.add(cb);
    return () => this.nsListeners.delete(cb);
  }

  // ------------------------------------------------------------------ heartbeat + rotation

  private async reconcileHeartbeat(): Promise<{ requeueAfterMs: number }> {
    const interval = this.shared.heartbeatIntervalMs;
    const requeue = { requeueAfterMs: Math.max(1000, Math.floor(interval / 2)) };
    const cb = this.clusterBindings.getByName(this.clusterNamespace, CLUSTER_BINDING_NAME);
    if (!cb) {
      this.setHeartbeat({
        status: 'False',
        reason: 'ClusterBindingNotFound',
        message: `ClusterBinding "${CLUSTER_BINDING_NAME}" not found in namespace ${this.clusterNamespace} on the provider; the provider creates it when you bind, so rerun kubectl bind`,
      });
      return requeue;
    }
    if (this.providerPrettyName !== cb.spec?.providerPrettyName) {
      this.providerPrettyName = cb.spec?.providerPrettyName;
      this.notifyBindings();
    }
    let rotationNote = '';
    if (!this.shared.controlPlaneMode) rotationNote = await this.rotateCredentials(cb);

    const last = cb.status?.lastHeartbeatTime ? Date.parse(cb.status.lastHeartbeatTime) : 0;
    const want = { heartbeatInterval: goDuration(interval), konnectorVersion: this.shared.version };
    const fresh = Date.now() - last < interval / 4;
    const m = { cluster_namespace: this.clusterNamespace };
    this.metrics.heartbeatInterval.set(m, interval / 1000);
    if (!fresh || cb.status?.heartbeatInterval !== want.heartbeatInterval || cb.status?.konnectorVersion !== want.konnectorVersion) {
      const now = new Date();
      try {
        await this.provider.mergePatch(BindResources.clusterBindings, this.clusterNamespace, CLUSTER_BINDING_NAME, {
          status: { ...want, lastHeartbeatTime: now.toISOString().replace(/\.\d{3}Z$/, 'Z') },
        }, 'status');
      } catch (e) {
        this.metrics.heartbeats.inc({ ...m, result: 'error' });
        this.setHeartbeat({
          status: 'False',
          reason: 'ClusterBindingUpdateFailed',
          message: `could not write the heartbeat into ClusterBinding ${this.clusterNamespace}/${CLUSTER_BINDING_NAME}: ${(e as Error).message}; check that the provider credentials may patch clusterbindings/status`,
        });
        throw e;
      }
      this.lastHeartbeat = now;
      this.metrics.heartbeats.inc({ ...m, result: 'success' });
      this.metrics.lastHeartbeat.set(m, Math.floor(now.getTime() / 1000));
    } else {
      this.metrics.lastHeartbeat.set(m, Math.floor(last / 1000));
    }
    this.setHeartbeat({ status: 'True', reason: 'HeartbeatSent', message: `heartbeat every ${goDuration(interval / 2)}${rotationNote}` });
    return requeue;
  }

  /** Copies the provider's kubeconfig Secret over the consumer's when they differ. Returns a note for the message. */
  private async rotateCredentials(cb: ClusterBinding): Promise<string> {
    const ref = cb.spec?.kubeconfigSecretRef;
    if (!ref?.name) return '';
    let src: Secret | undefined;
    try {
      src = await this.provider.getOrNull<Secret>(CoreResources.secrets, this.clusterNamespace, ref.name);
    } catch (e) {
      this.log.warn({ err: (e as Error).message }, 'cannot read the provider kubeconfig Secret for credential rotation');
      return `; credential rotation unavailable: cannot read Secret ${this.clusterNamespace}/${ref.name} on the provider`;
    }
    const value = src?.data?.[ref.key ?? 'kubeconfig'];
    if (!value) return `; credential rotation unavailable: Secret ${this.clusterNamespace}/${ref.name} on the provider has no key "${ref.key}"`;
    const targets = new Map<string, { namespace: string; name: string; key: string }>();
    for (const k of this.bindings) {
      const r = this.shared.getBinding(k)?.spec.kubeconfigSecretRef;
      if (r) targets.set(`${r.namespace}/${r.name}/${r.key}`, r);
    }
    for (const t of targets.values()) {
      const cur = await this.shared.bindingClient.getOrNull<Secret>(CoreResources.secrets, t.namespace, t.name);
      if (!cur || cur.data?.[t.key] === value) continue;
      await this.shared.bindingClient.mergePatch(CoreResources.secrets, t.namespace, t.name, { data: { [t.key]: value } });
      this.log.info({ secret: `${t.namespace}/${t.name}` }, 'rotated the provider kubeconfig into the consumer Secret');
    }
    return '';
  }

  private setHeartbeat(s: ConditionState): void {
    const changed = s.status !== this.heartbeatState.status || s.reason !== this.heartbeatState.reason || s.message !== this.heartbeatState.message;
    this.heartbeatState = s;
    if (changed) this.notifyBindings();
  }

  // ------------------------------------------------------------------ CRDs

  private setCrdState(key: string, s: ConditionState): void {
    const prev = this.crdStates.get(key);
    this.crdStates.set(key, s);
    if (!prev || prev.status !== s.status || prev.reason !== s.reason || prev.message !== s.message) {
      this.shared.bindingChanged(key);
      this.exportsCtl.enqueue(key.split('/').pop()!);
    }
  }

  private async reconcileCRD(bindingKey: string): Promise<void> {
    const b = this.shared.getBinding(bindingKey);
    if (!b || !this.bindings.has(bindingKey) || isDeleting(b)) return;
    const name = b.metadata.name!;
    const exp = this.exports.getByName(this.clusterNamespace, name);
    if (!exp) {
      this.setCrdState(bindingKey, {
        status: 'False',
        reason: 'APIServiceExportNotFound',
        message: `APIServiceExport ${name} not found in namespace ${this.clusterNamespace} on the provider; ask the provider to export ${name} or rerun kubectl bind`,
      });
      return;
    }
    let want: CRD;
    try {
      want = exportToCRD(exp, b);
    } catch (e) {
      this.setCrdState(bindingKey, { status: 'False', reason: 'CustomResourceDefinitionCreateFailed', message: `APIServiceExport ${name} is not usable: ${(e as Error).message}` });
      return;
    }
    if (want.metadata.name !== name) {
      this.setCrdState(bindingKey, {
        status: 'False',
        reason: 'CustomResourceDefinitionCreateFailed',
        message: `APIServiceExport ${name} describes ${want.metadata.name}; export and binding names must equal <plural>.<group>`,
      });
      return;
    }
    let live = this.shared.crds.getByName(undefined, name);
    if (live && !isOwnedBy(live, b) && controllerOf(live)?.name === name && live.metadata.labels?.[EXPORTED_LABEL] === 'true' && this.shared.ownerBindingGone(live)) {
      // Made by a konnector for a binding of the same name that is gone (e.g. deleted with its finalizer
      // removed by hand, then created again): adopt it instead of calling it foreign; its objects stay.
      const old = controllerOf(live)!;
      live = await this.app.update<CRD>(CoreResources.crds, {
        ...live,
        metadata: { ...live.metadata, ownerReferences: [...(live.metadata.ownerReferences ?? []).filter((r) => r.uid !== old.uid), bindingOwnerRef(b)] },
      });
      this.log.info({ crd: name, previousOwnerUid: old.uid, binding: bindingKey }, 'adopted the CustomResourceDefinition of a deleted binding of the same name');
    }
    if (live && !isOwnedBy(live, b)) {
      const owner = controllerOf(live);
      this.setCrdState(bindingKey, {
        status: 'False',
        reason: 'ForeignCustomResourceDefinition',
        message: `CustomResourceDefinition ${name} already exists and is ${owner ? `owned by ${owner.kind} ${owner.name} (uid ${owner.uid})` : 'not owned by any APIServiceBinding (created by someone else)'}; the konnector does not take it over: delete that CRD (and its objects) or the other binding first`,
      });
      return;
    }
    try {
      if (!live) {
        await this.app.create(CoreResources.crds, want);
        this.log.info({ crd: name }, 'created CustomResourceDefinition from APIServiceExport');
      } else if (crdNeedsUpdate(live, want)) {
        await this.app.update(CoreResources.crds, { ...live, spec: { ...live.spec, ...want.spec } });
        this.log.info({ crd: name }, 'updated CustomResourceDefinition to follow the APIServiceExport');
      }
    } catch (e) {
      const reason = live ? 'CustomResourceDefinitionUpdateFailed' : 'CustomResourceDefinitionCreateFailed';
      this.setCrdState(bindingKey, { status: 'False', reason, message: `${live ? 'updating' : 'creating'} CustomResourceDefinition ${name} failed: ${(e as Error).message}` });
      if (isAlreadyExists(e)) throw e;
      return;
    }
    const established = crdEstablished(this.shared.crds.getByName(undefined, name));
    this.setCrdState(
      bindingKey,
      established
        ? { status: 'True', reason: 'Connected', message: `bound to APIServiceExport ${this.clusterNamespace}/${name}` }
        : { status: 'False', reason: 'CustomResourceDefinitionNotEstablished', message: `waiting for CustomResourceDefinition ${name} to be established` },
    );
  }

  // ------------------------------------------------------------------ export syncers

  private async stopSyncers(s: Syncers): Promise<void> {
    await Promise.all([s.exportSync.stop(), ...s.claims.map((c) => c.stop())]);
  }

  private async reconcileExport(name: string): Promise<void> {
    await this.syncExport(name);
    await this.writeExportStatus(name);
  }

  /**
   * Export status as seen from this consumer: `Connected` (syncing), `ConsumerInSync` (the app-cluster
   * CRD matches the export; Klutch never sets it), the CRD's `Established`/`NamesAccepted`,
   * `acceptedNames`, `storedVersions`, `Ready`. Best effort: a provider that does not grant
   * `apiserviceexports/status` only gets a log line.
   */
  private async writeExportStatus(name: string): Promise<void> {
    const exp = this.exports.getByName(this.clusterNamespace, name);
    if (!exp || isDeleting(exp)) return;
    const bkey = this.bindingKeysNamed(name)[0];
    if (!bkey) return; // not bound by this consumer (yet)
    const crd = this.shared.crds.getByName(undefined, name);
    const running = this.syncers.has(name);
    let conds = exp.status?.conditions as Condition[] | undefined;
    const crdState = this.crdStates.get(bkey);
    conds = setCondition(
      conds,
      running
        ? { type: 'Connected', status: 'True', reason: 'Syncing', message: 'the konnector syncs this resource' }
        : { type: 'Connected', status: 'False', severity: 'Warning', reason: crdState?.reason ?? 'NotSyncing', message: crdState?.message ?? 'waiting for the CRD on the app cluster' },
    );
    conds = setCondition(
      conds,
      crdState?.status === 'True'
        ? { type: 'ConsumerInSync', status: 'True', reason: 'SchemaInSync', message: 'the app cluster CRD matches the export' }
        : { type: 'ConsumerInSync', status: crdState ? 'False' : 'Unknown', reason: crdState?.reason ?? 'Pending', message: crdState?.message ?? 'not reconciled yet' },
    );
    for (const t of ['Established', 'NamesAccepted']) {
      const c = crd?.status?.conditions?.find((x) => x.type === t);
      if (c) conds = setCondition(conds, { type: t, status: c.status as Condition['status'], reason: c.reason, message: c.message });
    }
    conds = setSummary(conds, ['Connected', 'ConsumerInSync', 'Established']);
    const status: Record<string, unknown> = { conditions: conds };
    if (crd?.status?.acceptedNames) status.acceptedNames = crd.status.acceptedNames;
    if (crd?.status?.storedVersions) status.storedVersions = crd.status.storedVersions;
    const same =
      conditionsEqual(conds, exp.status?.conditions as Condition[] | undefined) &&
      JSON.stringify(status.acceptedNames ?? null) === JSON.stringify(exp.status?.acceptedNames ?? null) &&
      JSON.stringify(status.storedVersions ?? null) === JSON.stringify(exp.status?.storedVersions ?? null);
    if (same) return;
    try {
      await this.provider.mergePatch(BindResources.apiServiceExports, this.clusterNamespace, name, { status }, 'status');
    } catch (e) {
      this.log.warn({ export: name, err: (e as Error).message }, 'cannot write APIServiceExport status; grant apiserviceexports/status patch to see the consumer state on the provider');
    }
  }

  private async syncExport(name: string): Promise<void> {
    const exp = this.exports.getByName(this.clusterNamespace, name);
    const bkey = this.bindingKeysNamed(name).find((k) => {
      const b = this.shared.getBinding(k);
      const crd = this.shared.crds.getByName(undefined, name);
      return b && crd && isOwnedBy(crd, b);
    });
    const b = bkey ? this.shared.getBinding(bkey) : undefined;
    const crd = this.shared.crds.getByName(undefined, name);
    // Syncers keep running while the CRD exists, also when binding or CRD are being deleted, so that
    // deleted objects are deleted upstream and their finalizers released.
    const ok = exp && b && crd && crdEstablished(crd);
    const cur = this.syncers.get(name);
    if (!ok) {
      if (cur) {
        this.syncers.delete(name);
        await this.stopSyncers(cur);
        this.log.info({ export: name }, 'stopped syncing: export, binding or CRD gone');
      }
      return;
    }
    const accepted = (b.spec.permissionClaims ?? []).filter((c) => c.state === 'Accepted');
    const sig = hashOf([exp.metadata.generation, exp.metadata.uid, b.metadata.uid, crd.metadata.uid, accepted]);
    if (cur?.sig === sig) return;
    if (cur) {
      this.syncers.delete(name);
      await this.stopSyncers(cur);
    }
    const exportSync = new ExportSync(this, exp);
    const claims = accepted.map((c) => new ClaimSync(this, c, name));
    const s: Syncers = { sig, exportSync, claims };
    this.syncers.set(name, s);
    try {
      await Promise.all([exportSync.start(this.shared.providerSyncTimeoutMs), ...claims.map((c) => c.start(this.shared.providerSyncTimeoutMs))]);
    } catch (e) {
      this.syncers.delete(name);
      await this.stopSyncers(s);
      throw new Error(`starting the syncers of ${name} failed: ${(e as Error).message}`, { cause: e });
    }
  }

  // ------------------------------------------------------------------ namespace deletion

  private async reconcileNamespace(name: string): Promise<void> {
    if (!this.shared.namespaces.hasSynced()) throw new Error('app-cluster Namespace informer not synced yet');
    const ans = this.apiNamespaces.getByName(this.clusterNamespace, name);
    if (!ans || isDeleting(ans)) return;
    if (this.shared.namespaces.getByName(undefined, name)) return;
    try {
      await this.provider.delete(BindResources.apiServiceNamespaces, this.clusterNamespace, name, { uid: ans.metadata.uid });
      this.log.info({ namespace: name }, 'app-cluster namespace is gone: deleted its APIServiceNamespace on the provider');
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  /** For tests: key of this connection's cluster binding. */
  get clusterBindingKey(): string {
    return keyOf({ metadata: { namespace: this.clusterNamespace, name: CLUSTER_BINDING_NAME } });
  }
}
