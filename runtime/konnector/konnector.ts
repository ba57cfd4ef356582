/**
 * The konnector: watches APIServiceBindings and their kubeconfig Secrets in the binding cluster,
 * keeps one provider connection per distinct kubeconfig (restarted when the kubeconfig changes) and
 * reports `SecretValid`, `InformersSynced`, `Heartbeating`, `Connected` and `Ready` on each binding.
 */
import { createHash } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ClusterAccess } from '../core/kubeconfig.js';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { CoreResources, isAlreadyExists, isNotFound, keyOf, splitKey, KubeClient, type KubeObject } from '../core/client.js';
import { conditionsEqual, removeCondition, setCondition, setSummary, type Condition } from '../core/conditions.js';
import { Controller } from '../core/controller.js';
import { Informer, onAny, stripManagedFields } from '../core/informer.js';
import { silentLogger } from '../core/logger.js';
import { recordEvent, type RecordedEvent } from '../core/events.js';
import { apiServiceBindingKind, BIND_GROUP, BINDING_RESOURCES, BIND_API_VERSION, KONNECTOR_NAMESPACE } from '../../contract/index.js';
import { ClaimConflicts, claimConflictCondition } from './claim-conflicts.js';
import { CLAIM_REFUSED_CONDITION, ClaimRefusals, claimRefusalCondition } from './claim-refusals.js';
import { SecretTypePolicy } from '../../contract/secret-types.js';
import { DEFAULT_UPSTREAM_DELETION_TIMEOUT_MS, DELETION_TIMED_OUT_CONDITION, DeletionTimeouts, deletionTimedOutCondition } from './deletion-timeouts.js';
import { controllerOf, isOwnedBy, type CRD } from './crd.js';
import { KubeconfigError, parseKubeconfigSecret, type ParsedKubeconfig } from './kubeconfig.js';
import { isDeleting, setFinalizer } from './metadata.js';
import { konnectorMetrics, type KonnectorMetrics } from './metrics.js';
import { ProviderConnection, type KonnectorShared } from './provider.js';
import { resourceOfExport } from './export-sync.js';
import { BINDING_FINALIZER, CLAIM_CONFLICT_CONDITION, ConditionType, SYNCER_FINALIZER, type APIServiceBinding, type Secret } from './types.js';
import { KONNECTOR_VERSION, klutchKonnectorVersion } from './version.js';
import { RESOURCES_ALLOWED_CONDITION, ResourceGate } from './resource-gate.js';
import { DEFAULT_BURST, DEFAULT_QPS, DEFAULT_WORKERS } from './defaults.js';
import { MetadataKeyPolicy, type AllowedMetadataKeys } from '../../contract/metadata-keys.js';
import { isDnsLabel } from '../../contract/_names.js';
import { checkAllowedNamespace } from '../../contract/allowed-namespaces.js';
import { BindingLimits, LIMIT_KINDS, limitCondition } from './binding-limits.js';
import { DEFAULT_WRITE_BUDGET } from './write-budget.js';

export { BINDING_FINALIZER };

export interface KonnectorOptions {
  /** The app cluster: bound CRDs, the user's objects, Namespaces. */
  appKubeConfig: KubeConfig | ClusterAccess;
  /** Where APIServiceBindings and their kubeconfig Secrets live. @default appKubeConfig */
  bindingKubeConfig?: KubeConfig | ClusterAccess;
  /** Watch APIServiceBindings only in this namespace. @default all namespaces */
  bindingNamespace?: string;
  /**
   * The one namespace whose APIServiceBindings the konnector acts on (a binding makes it install a
   * cluster-scoped CRD and connect to a provider: a cluster admin's decision, so this namespace must be
   * writable by cluster admins only). A binding elsewhere is refused: `SecretValid=False` reason
   * `BindingNamespaceNotAllowed`, its Secret is never read, no CRD is made. Each binding's kubeconfig
   * Secret must be in the binding's own namespace.
   * @default bindingNamespace, else `klutch-bind` (where kubectl-bind creates bindings)
   */
  bindingAdminNamespace?: string;
  /** Control-plane mode: no credential rotation, no CRD install in the binding cluster. @default false */
  controlPlaneMode?: boolean;
  /** Install/upgrade the apiservicebindings CRD in the binding cluster at start. @default !controlPlaneMode */
  installBindingCRD?: boolean;
  /** ClusterBinding heartbeat interval. @default 300000 (5 min) */
  heartbeatIntervalMs?: number;
  /** Informer resync period. @default 600000 (10 min) */
  resyncMs?: number;
  /** Workers per sync controller. @default 4 */
  workers?: number;
  /** Client QPS / burst (each cluster connection has its own limiter). @default DEFAULT_QPS / DEFAULT_BURST (500 / 1000) */
  qps?: number;
  burst?: number;
  /** Time allowed for provider informers to sync before InformersSynced turns False. @default 30000 */
  providerSyncTimeoutMs?: number;
  /**
   * How long an app-cluster namespace stays bound after its last object of a bound resource went, so
   * that the provider's clean-up of claimed objects still comes down (see consumer-namespaces.ts).
   * @default 600000 (10 minutes)
   */
  namespaceLingerMs?: number;
  /**
   * Most objects a provider may make the konnector create in one app-cluster namespace, per claim
   * (copies of claimed objects) and per export (adopted objects). @default 1000
   */
  maxProviderObjectsPerNamespace?: number;
  /**
   * How long a provider may keep an upstream copy terminating (a finalizer it does not remove) after
   * the app-cluster object was deleted; then the app-cluster object is released anyway and its binding
   * gets condition `ProviderDeletionTimedOut` (deletion-timeouts.ts). Without it a provider could keep
   * the app's objects, and an unbind, Terminating for ever. @default 600000 (10 minutes)
   */
  upstreamDeletionTimeoutMs?: number;
  /**
   * Label and annotation key patterns that cross between the clusters besides the documented
   * defaults of contract/metadata-keys.ts (`*` matches any run of characters). The konnector's own
   * keys and the never-crossing list (Argo CD, Flux, Helm, replicator, reflector, kubed, Grafana
   * sidecar, Crossplane, cert-manager, Kubernetes' own) never cross: a pattern entirely inside them is
   * refused. @default {} (the defaults only)
   */
  allowedMetadataKeys?: AllowedMetadataKeys;
  /**
   * Resources outside the default allow-list of contract/resource-policy.ts (the provider's own
   * APIs, claimed Secrets and ConfigMaps) that providers may export or claim here, as
   * `<plural>.<group>` (`<plural>` for the core group). A binding naming anything else gets
   * `ResourcesAllowed=False` and that export or claim is not synced (resource-gate.ts). Some
   * resources (RBAC, admission, CRDs, service accounts, …) can never be allowed.
   * @default [] (the default allow-list only)
   */
  allowedResources?: readonly string[];
  /**
   * Secret types a claimed Secret may have besides the defaults of contract/secret-types.ts (Opaque,
   * Crossplane connection Secrets, `servicebinding.io/*`, basic-auth, ssh-auth, tls), exact names; a
   * claimed Secret of another type is not copied either way and its binding shows
   * `ClaimedObjectsRefused` (claim-refusals.ts). `kubernetes.io/service-account-token` and
   * `bootstrap.kubernetes.io/token` can never be allowed. @default [] (the defaults only)
   */
  allowedSecretTypes?: readonly string[];
  /**
   * The app-cluster namespaces bindings may use (the namespace allow-list, `--allow-namespace`). An
   * object of a bound API in another namespace is not synced and its binding shows
   * `NamespaceNotAllowed` naming the namespace (binding-limits.ts); no claimed Secret or ConfigMap is
   * read or written there. With it, the `Konnector` construct grants Secret and ConfigMap rights only in
   * these namespaces (a RoleBinding each) instead of cluster-wide. Never a system namespace or the
   * konnector's own. @default every namespace (and cluster-wide Secret rights in the construct)
   */
  allowedNamespaces?: readonly string[];
  /**
   * Most provider objects the konnector caches for one binding (its export's and claims' provider
   * informers together); past it the binding's informers freeze and it shows `CacheLimitReached`
   * (object-cap.ts). @default DEFAULT_MAX_CACHED_OBJECTS_PER_BINDING (20000)
   */
  maxCachedObjectsPerBinding?: number;
  /**
   * Writes of one object (per binding and direction) the konnector makes in `writeBudgetWindowMs`
   * before it backs off and the binding shows `WriteBudgetExhausted` (write-budget.ts). @default 20
   */
  writeBudget?: number;
  /** The window of `writeBudget`, ms. @default 60000 */
  writeBudgetWindowMs?: number;
  /**
   * Put the finalizer `klutch.anynines.com/konnector` on each binding, so that a binding deleted while
   * the konnector is down is cleaned up (CRD, objects on both sides) when it comes back. @default true
   */
  bindingFinalizer?: boolean;
  /** Reported as ClusterBinding status.konnectorVersion, in Klutch's `vX.Y.Z` form (see klutchKonnectorVersion). @default the package version */
  version?: string;
  registry?: Registry;
  logger?: Logger;
}

function validate(o: KonnectorOptions): void {
  const pos = (name: string, v: number | undefined, min: number) => {
    if (v !== undefined && (!Number.isFinite(v) || v < min)) throw new Error(`KonnectorOptions.${name}: ${v} must be a number >= ${min}`);
  };
  pos('heartbeatIntervalMs', o.heartbeatIntervalMs, 1000);
  pos('resyncMs', o.resyncMs, 0);
  pos('workers', o.workers, 1);
  pos('qps', o.qps, 0);
  pos('burst', o.burst, 1);
  pos('providerSyncTimeoutMs', o.providerSyncTimeoutMs, 100);
  pos('namespaceLingerMs', o.namespaceLingerMs, 0);
  pos('maxProviderObjectsPerNamespace', o.maxProviderObjectsPerNamespace, 1);
  pos('upstreamDeletionTimeoutMs', o.upstreamDeletionTimeoutMs, 0);
  pos('maxCachedObjectsPerBinding', o.maxCachedObjectsPerBinding, 1);
  pos('writeBudget', o.writeBudget, 1);
  pos('writeBudgetWindowMs', o.writeBudgetWindowMs, 1);
  if (o.maxCachedObjectsPerBinding !== undefined && !Number.isInteger(o.maxCachedObjectsPerBinding)) {
    throw new Error(`KonnectorOptions.maxCachedObjectsPerBinding: ${o.maxCachedObjectsPerBinding} must be an integer`);
  }
  if (o.writeBudget !== undefined && !Number.isInteger(o.writeBudget)) throw new Error(`KonnectorOptions.writeBudget: ${o.writeBudget} must be an integer`);
  for (const [i, ns] of (o.allowedNamespaces ?? []).entries()) checkAllowedNamespace(`KonnectorOptions.allowedNamespaces[${i}]`, ns);
  if (o.workers !== undefined && !Number.isInteger(o.workers)) throw new Error(`KonnectorOptions.workers: ${o.workers} must be an integer`);
  if (o.bindingAdminNamespace !== undefined && !isDnsLabel(o.bindingAdminNamespace)) {
    throw new Error(`KonnectorOptions.bindingAdminNamespace: "${o.bindingAdminNamespace}" is not a namespace name (a DNS label)`);
  }
  if (o.bindingNamespace && o.bindingAdminNamespace && o.bindingNamespace !== o.bindingAdminNamespace) {
    throw new Error(
      `KonnectorOptions.bindingAdminNamespace: "${o.bindingAdminNamespace}" differs from bindingNamespace "${o.bindingNamespace}"; the konnector would watch bindings it refuses all of; set one of them`,
    );
  }
}

/**
 * Whether the konnector may act on binding `b` with `adminNamespace` its admin namespace: the binding
 * must be in that namespace and its kubeconfig Secret in the binding's own namespace. Returns the
 * refusing SecretValid condition, or undefined when the binding may be served.
 *
 * Why: APIServiceBindings are namespaced here (Klutch's are cluster-scoped), while what the konnector
 * does for one is cluster-wide (a CRD, a provider connection, its ServiceAccount reading the Secret).
 * Without this, whoever may write bindings in any namespace could make the konnector read another
 * namespace's kubeconfig Secret (a credential they cannot read themselves) or act as a provider of
 * their own choosing.
 */
export function bindingScopeRefusal(b: APIServiceBinding, adminNamespace: string): Omit<Condition, 'lastTransitionTime'> | undefined {
  const ns = b.metadata.namespace ?? '';
  if (ns !== adminNamespace) {
    return {
      type: ConditionType.SecretValid,
      status: 'False',
      severity: 'Error',
      reason: 'BindingNamespaceNotAllowed',
      message: `APIServiceBindings are served only in namespace ${adminNamespace} (the konnector's --binding-admin-namespace), not in ${ns}: a binding makes the konnector install cluster-scoped CRDs, which only cluster admins may decide; ask a cluster admin to create it in ${adminNamespace}`,
    };
  }
  const ref = b.spec?.kubeconfigSecretRef;
  if (ref?.namespace && ref.namespace !== ns) {
    return {
      type: ConditionType.SecretValid,
      status: 'False',
      severity: 'Error',
      reason: 'KubeconfigSecretOutsideNamespace',
      message: `spec.kubeconfigSecretRef.namespace is "${ref.namespace}"; the kubeconfig Secret must be in the binding's own namespace ${ns}; the konnector did not read Secret ${ref.namespace}/${ref.name}`,
    };
  }
  return undefined;
}

const BINDING_CONDITIONS = [
  ConditionType.SecretValid,
  RESOURCES_ALLOWED_CONDITION,
  ConditionType.InformersSynced,
  ConditionType.Heartbeating,
  ConditionType.Connected,
];

export class Konnector {
  readonly app: KubeClient;
  readonly bindingClient: KubeClient;
  readonly registry: Registry;
  readonly metrics: KonnectorMetrics;
  readonly log: Logger;
  private readonly bindings: Informer<APIServiceBinding>;
  private readonly crds: Informer<CRD>;
  private readonly namespaces: Informer;
  private readonly secretInformers = new Map<string, Informer<Secret>>();
  private readonly providers = new Map<string, ProviderConnection>();
  /** binding key → provider id */
  private readonly attached = new Map<string, string>();
  /** Bindings being deleted whose CRD still exists: kept attached (marked deleting) until it is gone. */
  private readonly unbinding = new Map<string, APIServiceBinding>();
  private readonly lastSeen = new Map<string, APIServiceBinding>();
  private readonly controller: Controller;
  private readonly shared: KonnectorShared;
  /** Claim conflicts between bindings, for the ClaimConflict condition and Events (claim-conflicts.ts). */
  private readonly claimConflicts: ClaimConflicts;
  /** Claimed objects refused for their Secret type, for the ClaimedObjectsRefused condition and Events (claim-refusals.ts). */
  private readonly claimRefusals: ClaimRefusals;
  /** App-cluster objects released while their provider kept the upstream copy, for the ProviderDeletionTimedOut condition. */
  private readonly deletionTimeouts: DeletionTimeouts;
  /** Limits bindings hit (namespace allow-list, cache cap, write budget), for their conditions and Events (binding-limits.ts). */
  private readonly limits: BindingLimits;
  private started = false;
  private stopping = false;
  private readonly adminNamespace: string;
  private readonly resourceGate: ResourceGate;

  constructor(private readonly opts: KonnectorOptions) {
    validate(opts);
    const policies = {
      metadataKeys: MetadataKeyPolicy.create(opts.allowedMetadataKeys, 'KonnectorOptions.allowedMetadataKeys'),
      secretTypes: SecretTypePolicy.create(opts.allowedSecretTypes, 'KonnectorOptions.allowedSecretTypes'),
    };
    this.resourceGate = ResourceGate.from('KonnectorOptions.allowedResources', opts.allowedResources);
    this.adminNamespace = opts.bindingAdminNamespace ?? opts.bindingNamespace ?? KONNECTOR_NAMESPACE;
    this.registry = opts.registry ?? new Registry();
    this.metrics = konnectorMetrics(this.registry);
    this.log = opts.logger ?? silentLogger;
    this.app = this.newClient(opts.appKubeConfig);
    this.bindingClient = opts.bindingKubeConfig ? this.newClient(opts.bindingKubeConfig) : this.app;

    const resyncMs = opts.resyncMs ?? 600_000;
    this.bindings = new Informer<APIServiceBinding>(this.bindingClient, BINDING_RESOURCES.apiServiceBindings, {
      namespace: opts.bindingNamespace,
      resyncMs,
      logger: this.log,
    });
    // Every CRD of the app cluster is cached (schemas can be large): without managedFields.
    this.crds = new Informer<CRD>(this.app, CoreResources.crds, { resyncMs, logger: this.log, transform: stripManagedFields });
    this.namespaces = new Informer(this.app, CoreResources.namespaces, { resyncMs, logger: this.log });
    this.controller = new Controller({
      name: 'bindings',
      workers: 2,
      registry: this.registry,
      logger: this.log,
      backoffMaxMs: 30_000,
      reconciler: (k) => this.reconcile(k),
    });

    const records = this.newBindingRecords();
    this.deletionTimeouts = records.deletionTimeouts;
    this.claimConflicts = records.claimConflicts;
    this.claimRefusals = records.claimRefusals;
    this.limits = records.limits;
    this.shared = this.sharedWithProviders(resyncMs, policies);
    this.wireEvents();
  }

  /** A client of the app (or binding) cluster with the konnector's rate limits, counted as `app` requests. */
  private newClient(config: KubeConfig | ClusterAccess): KubeClient {
    const qps = this.opts.qps ?? DEFAULT_QPS;
    const burst = this.opts.burst ?? DEFAULT_BURST;
    return new KubeClient(config, { qps, burst, userAgent: 'klutch-konnector', stats: this.metrics.clientStats.app });
  }

  /**
   * The konnector-wide records of what bindings ran into (claim conflicts, refused claims, deletions
   * that timed out, limits hit), each turned into its binding's condition and Events.
   */
  private newBindingRecords(): {
    deletionTimeouts: DeletionTimeouts;
    claimConflicts: ClaimConflicts;
    claimRefusals: ClaimRefusals;
    limits: BindingLimits;
  } {
    const binding = (uid: string) => this.bindingByUid(uid);
    const enqueueUid = (uid: string): void => {
      const b = this.bindingByUid(uid);
      if (b) this.controller.enqueue(keyOf(b));
    };
    const event = (b: APIServiceBinding, e: RecordedEvent) => this.bindingEvent(b, e);
    return {
      deletionTimeouts: new DeletionTimeouts((name) => {
        for (const b of this.bindings.list()) if (b.metadata.name === name) this.controller.enqueue(keyOf(b));
      }),
      claimConflicts: new ClaimConflicts({ binding, changed: (uids) => uids.forEach(enqueueUid), event }),
      claimRefusals: new ClaimRefusals({ binding, changed: enqueueUid, event }),
      limits: new BindingLimits({ binding, changed: enqueueUid, event, metrics: this.metrics }),
    };
  }

  /** Records a Kubernetes Event on binding `b` (best effort: a failure is logged). */
  private bindingEvent(b: APIServiceBinding, e: RecordedEvent): void {
    void recordEvent(
      this.bindingClient,
      {
        apiVersion: b.apiVersion ?? BIND_API_VERSION,
        kind: apiServiceBindingKind.kind,
        name: b.metadata.name!,
        namespace: b.metadata.namespace!,
        uid: b.metadata.uid,
      },
      e,
      { component: 'konnector', onError: (err) => this.log.warn({ binding: keyOf(b), reason: e.reason, err: err.message }, 'cannot record event') },
    );
  }

  /** What every provider connection is given: the app side, the konnector's records and its settings. */
  private sharedWithProviders(resyncMs: number, policies: { metadataKeys: MetadataKeyPolicy; secretTypes: SecretTypePolicy }): KonnectorShared {
    const opts = this.opts;
    const qps = opts.qps ?? DEFAULT_QPS;
    const burst = opts.burst ?? DEFAULT_BURST;
    return {
      app: this.app,
      bindingClient: this.bindingClient,
      crds: this.crds,
      namespaces: this.namespaces,
      getBinding: (k) => this.bindings.get(k) ?? this.unbinding.get(k),
      ownerBindingGone: (crd) => this.ownerBindingGone(crd),
      bindingChanged: (k) => this.controller.enqueue(k),
      clientFor: (p: ParsedKubeconfig) => new KubeClient(p.access, { qps, burst, userAgent: 'klutch-konnector', stats: this.metrics.clientStats.provider }),
      log: this.log,
      registry: this.registry,
      metrics: this.metrics,
      heartbeatIntervalMs: opts.heartbeatIntervalMs ?? 300_000,
      resyncMs,
      workers: opts.workers ?? DEFAULT_WORKERS,
      providerSyncTimeoutMs: opts.providerSyncTimeoutMs ?? 30_000,
      namespaceLingerMs: opts.namespaceLingerMs,
      maxProviderObjectsPerNamespace: opts.maxProviderObjectsPerNamespace,
      metadataKeys: policies.metadataKeys,
      resourceGate: this.resourceGate,
      version: klutchKonnectorVersion(opts.version ?? KONNECTOR_VERSION),
      controlPlaneMode: opts.controlPlaneMode ?? false,
      claimConflicts: this.claimConflicts,
      secretTypes: policies.secretTypes,
      claimRefusals: this.claimRefusals,
      limits: this.limits,
      maxCachedObjectsPerBinding: opts.maxCachedObjectsPerBinding,
      writeBudget: { writes: opts.writeBudget ?? DEFAULT_WRITE_BUDGET.writes, windowMs: opts.writeBudgetWindowMs ?? DEFAULT_WRITE_BUDGET.windowMs },
      allowedNamespaces: opts.allowedNamespaces ? new Set(opts.allowedNamespaces) : undefined,
      upstreamDeletionTimeoutMs: opts.upstreamDeletionTimeoutMs,
      deletionTimeouts: this.deletionTimeouts,
    };
  }

  /**
   * Whether the CRD's controller is an APIServiceBinding that certainly no longer exists (none with its
   * uid among the bindings the konnector can see, and it sees all the bindings that could own it).
   */
  private ownerBindingGone(crd: CRD): boolean {
    const owner = controllerOf(crd);
    if (!owner || owner.kind !== apiServiceBindingKind.kind || !owner.apiVersion.startsWith(`${BIND_GROUP}/`)) return false;
    // A konnector watching one namespace cannot tell whether a binding elsewhere owns the CRD.
    if (this.opts.bindingNamespace && !this.opts.controlPlaneMode) return false;
    if (!this.bindings.hasSynced()) return false;
    const all = [...this.bindings.list(), ...this.unbinding.values(), ...this.lastSeen.values()];
    return !all.some((b) => b.metadata.uid === owner.uid);
  }

  /** Which work each app-cluster informer's events make. */
  private wireEvents(): void {
    this.bindings.addEventHandler(onAny((b) => this.controller.enqueue(keyOf(b))));
    this.crds.addEventHandler(onAny((c) => this.forProviders((p) => p.crdChanged(c.metadata.name!))));
    this.namespaces.addEventHandler({
      onDelete: (n) => this.forProviders((p) => p.namespaceChanged(n.metadata.name!)),
      onAdd: (n) => this.forProviders((p) => p.namespaceChanged(n.metadata.name!)),
    });
  }

  /** The binding with this uid (also one being unbound). */
  private bindingByUid(uid: string): APIServiceBinding | undefined {
    if (!uid) return undefined;
    return this.bindings.list().find((b) => b.metadata.uid === uid) ?? [...this.unbinding.values()].find((b) => b.metadata.uid === uid);
  }

  private forProviders(f: (p: ProviderConnection) => void): void {
    for (const p of this.providers.values()) f(p);
  }

  /** Installs the binding CRD if asked, starts informers, waits for them, starts the binding controller. */
  async start(timeoutMs = 60_000): Promise<void> {
    if (this.started) return;
    this.started = true;
    if (this.opts.installBindingCRD ?? !this.opts.controlPlaneMode) await this.installBindingCRD(timeoutMs);
    for (const i of [this.bindings, this.crds, this.namespaces]) i.start();
    await Promise.all([this.bindings, this.crds, this.namespaces].map((i) => i.waitForSync(timeoutMs)));
    this.controller.start();
    this.log.info({ version: this.shared.version }, 'konnector started');
  }

  /** Graceful stop: controllers drain, provider connections and informers stop. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.controller.stop();
    await Promise.all([...this.providers.values()].map((p) => p.stop()));
    this.providers.clear();
    await Promise.all([this.bindings, this.crds, this.namespaces, ...this.secretInformers.values()].map((i) => i.stop()));
    this.app.close();
    if (this.bindingClient !== this.app) this.bindingClient.close();
    this.log.info('konnector stopped');
  }

  /** Readiness: informers synced and every provider connection synced. */
  ready(): true | string {
    if (!this.started) return 'not started';
    for (const i of [this.bindings, this.crds, this.namespaces]) if (!i.hasSynced()) return `informer ${i.name} not synced`;
    for (const p of this.providers.values())
      if (!p.synced) return `provider ${p.kubeconfig.server} (${p.clusterNamespace}) not synced${p.syncError ? ': ' + p.syncError : ''}`;
    return true;
  }

  /** Provider connections (tests, fault injection). */
  providerConnections(): ProviderConnection[] {
    return [...this.providers.values()];
  }

  private async installBindingCRD(timeoutMs: number): Promise<void> {
    const crd = apiServiceBindingKind.crd() as unknown as KubeObject;
    const name = crd.metadata.name!;
    const live = await this.bindingClient.getOrNull(CoreResources.crds, undefined, name);
    if (!live) {
      try {
        await this.bindingClient.create(CoreResources.crds, crd);
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
    } else {
      await this.bindingClient.update(CoreResources.crds, { ...live, spec: crd.spec });
    }
    const end = Date.now() + timeoutMs;
    for (;;) {
      const c = await this.bindingClient.getOrNull<CRD>(CoreResources.crds, undefined, name);
      if (c?.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True')) return;
      if (Date.now() > end) throw new Error(`CRD ${name} not Established within ${timeoutMs} ms; check the binding cluster's kube-apiserver`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private secretInformer(namespace: string, name: string): Informer<Secret> {
    const k = `${namespace}/${name}`;
    let inf = this.secretInformers.get(k);
    if (!inf) {
      // Only the one Secret: the konnector does not cache every Secret of the cluster.
      inf = new Informer<Secret>(this.bindingClient, CoreResources.secrets, {
        namespace,
        fieldSelector: `metadata.name=${name}`,
        logger: this.log,
        resyncMs: this.shared.resyncMs,
      });
      inf.addEventHandler(onAny(() => this.enqueueBindingsUsing(namespace, name)));
      this.secretInformers.set(k, inf);
      inf.start();
    }
    return inf;
  }

  private enqueueBindingsUsing(namespace: string, name: string): void {
    for (const b of this.bindings.list()) {
      const r = b.spec?.kubeconfigSecretRef;
      if (r?.namespace === namespace && r.name === name) this.controller.enqueue(keyOf(b));
    }
  }

  private async gcSecretInformers(): Promise<void> {
    const used = new Set(this.bindings.list().map((b) => `${b.spec?.kubeconfigSecretRef?.namespace}/${b.spec?.kubeconfigSecretRef?.name}`));
    for (const [k, inf] of [...this.secretInformers]) {
      if (!used.has(k)) {
        this.secretInformers.delete(k);
        await inf.stop();
      }
    }
  }

  private async detach(key: string): Promise<void> {
    const id = this.attached.get(key);
    if (!id) return;
    this.attached.delete(key);
    const p = this.providers.get(id);
    if (p && p.detach(key)) {
      this.providers.delete(id);
      this.log.info({ provider: p.kubeconfig.server, clusterNamespace: p.clusterNamespace }, 'no binding uses this provider connection any more; stopping it');
      await p.stop();
    }
  }

  /** Reads and validates the binding's kubeconfig Secret: the provider access, or the SecretValid condition saying what is wrong. */
  private async kubeconfigFor(b: APIServiceBinding): Promise<{ parsed?: ParsedKubeconfig; cond: Omit<Condition, 'lastTransitionTime'> }> {
    const refused = bindingScopeRefusal(b, this.adminNamespace);
    if (refused) return { cond: refused };
    const ref = b.spec?.kubeconfigSecretRef;
    if (!ref?.namespace || !ref.name) {
      return {
        cond: {
          type: ConditionType.SecretValid,
          status: 'False',
          severity: 'Error',
          reason: 'KubeconfigSecretInvalid',
          message: 'spec.kubeconfigSecretRef must name the namespace and name of the provider kubeconfig Secret',
        },
      };
    }
    const inf = this.secretInformer(ref.namespace, ref.name);
    await inf.waitForSync(30_000);
    try {
      const cp = this.shared.controlPlaneMode;
      const fromSecret = parseKubeconfigSecret(
        inf.getByName(ref.namespace, ref.name),
        { namespace: ref.namespace, name: ref.name, key: ref.key ?? 'kubeconfig' },
        { requireNamespace: !cp },
      );
      // Control-plane mode (as in Klutch): the Secret holds the app cluster's kubeconfig; the provider
      // is the control plane the konnector runs on, and the cluster namespace is the binding's namespace.
      const parsed = cp
        ? {
            text: `control-plane-mode:${b.metadata.namespace}`,
            access: this.bindingClient.source,
            namespace: b.metadata.namespace!,
            server: this.bindingClient.server,
          }
        : fromSecret;
      return {
        parsed,
        cond: {
          type: ConditionType.SecretValid,
          status: 'True',
          reason: 'KubeconfigSecretValid',
          message: cp ? `app cluster kubeconfig for ${fromSecret.server}` : `kubeconfig for ${fromSecret.server}, namespace ${fromSecret.namespace}`,
        },
      };
    } catch (e) {
      if (!(e instanceof KubeconfigError)) throw e;
      return { cond: { type: ConditionType.SecretValid, status: 'False', severity: 'Error', reason: e.reason, message: e.message } };
    }
  }

  /** Attaches the binding to the provider connection for `parsed` (one connection per distinct kubeconfig). */
  private async attach(key: string, parsed: ParsedKubeconfig): Promise<ProviderConnection> {
    const id = createHash('sha256').update(parsed.text).digest('hex');
    if (this.attached.get(key) === id) {
      const conn = this.providers.get(id)!;
      conn.bindingUpdated(key);
      return conn;
    }
    await this.detach(key);
    let conn = this.providers.get(id);
    if (!conn) {
      conn = new ProviderConnection(this.shared, parsed, id);
      this.providers.set(id, conn);
      conn.start();
      this.log.info({ provider: parsed.server, clusterNamespace: parsed.namespace, binding: key }, 'started provider connection');
    }
    this.attached.set(key, id);
    conn.attach(key);
    return conn;
  }

  /**
   * Unbind. The konnector deletes the binding's CRD itself (it is cluster-scoped and the binding
   * namespaced, so Kubernetes' garbage collector ignores the ownerReference) and keeps the provider
   * connection and the syncers running until the CRD is gone, so every object deleted with it is deleted
   * upstream and its finalizer released. The binding's own finalizer `klutch.anynines.com/konnector`
   * keeps a binding deleted while the konnector was down around until this has happened.
   */
  private async unbind(key: string, b: APIServiceBinding | undefined): Promise<{ requeueAfterMs: number } | void> {
    if (b && !this.attached.has(key)) {
      // Deleted while the konnector was down (or before it connected): connect to clean up upstream too.
      const { parsed } = await this.kubeconfigFor(b);
      if (parsed) await this.attach(key, parsed);
    }
    const last = b ?? this.unbinding.get(key) ?? this.lastSeen.get(key);
    const crd = last ? this.crds.getByName(undefined, last.metadata.name!) : undefined;
    if (last && crd && isOwnedBy(crd, last)) {
      if (!crd.metadata.deletionTimestamp) {
        await this.app.delete(CoreResources.crds, undefined, crd.metadata.name!, { uid: crd.metadata.uid });
        this.log.info({ binding: key, crd: crd.metadata.name }, 'binding deleted: deleting its CRD; its objects are deleted on both sides');
      }
      if (this.attached.has(key)) {
        const marked: APIServiceBinding = {
          ...last,
          metadata: { ...last.metadata, deletionTimestamp: last.metadata.deletionTimestamp ?? new Date().toISOString() },
        };
        this.unbinding.set(key, marked);
        this.providers.get(this.attached.get(key)!)?.bindingUpdated(key);
      } else {
        // No way to reach the provider (the kubeconfig Secret is gone or unusable): release the local
        // objects so the CRD can go; their upstream copies stay for the provider to clean up.
        const released = await this.releaseObjects(crd);
        if (released) {
          this.log.warn(
            { binding: key, crd: crd.metadata.name, objects: released },
            'binding deleted without a usable kubeconfig Secret: released the app-cluster objects; their copies on the provider were NOT deleted',
          );
        }
      }
      return { requeueAfterMs: 1000 };
    }
    this.unbinding.delete(key);
    this.lastSeen.delete(key);
    await this.detach(key);
    await this.gcSecretInformers();
    if (b) await setFinalizer(this.bindingClient, BINDING_RESOURCES.apiServiceBindings, b, BINDING_FINALIZER, false);
  }

  /** Removes the syncer finalizer from every object of a bound CRD; returns how many were released. */
  private async releaseObjects(crd: CRD): Promise<number> {
    const r = resourceOfExport(crd);
    const list = await this.app.list(r).catch((e) => {
      if (isNotFound(e)) return { items: [] as KubeObject[], metadata: {} };
      throw e;
    });
    let n = 0;
    for (const o of list.items) if (await setFinalizer(this.app, r, o, SYNCER_FINALIZER, false)) n++;
    return n;
  }

  private async reconcile(key: string): Promise<{ requeueAfterMs: number } | void> {
    if (this.stopping) return;
    const b = this.bindings.get(key);
    if (!b || isDeleting(b)) return this.unbind(key, b);
    // A refused binding (see bindingScopeRefusal) gets no finalizer: the konnector makes nothing for it.
    if ((this.opts.bindingFinalizer ?? true) && !bindingScopeRefusal(b, this.adminNamespace)) {
      if (!(b.metadata.finalizers ?? []).includes(BINDING_FINALIZER)) {
        await setFinalizer(this.bindingClient, BINDING_RESOURCES.apiServiceBindings, b, BINDING_FINALIZER, true);
        return; // the update event brings us back
      }
    }
    this.lastSeen.set(key, b);
    this.unbinding.delete(key);
    let conds = b.status?.conditions as Condition[] | undefined;
    let pretty = b.status?.providerPrettyName;
    let conn: ProviderConnection | undefined;
    const { parsed, cond } = await this.kubeconfigFor(b);
    conds = setCondition(conds, cond);
    conds = setCondition(conds, this.resourceGate.condition(b));
    if (parsed) conn = await this.attach(key, parsed);
    else await this.detach(key);
    await this.gcSecretInformers();

    if (conn) {
      conds = setCondition(
        conds,
        conn.synced
          ? {
              type: ConditionType.InformersSynced,
              status: 'True',
              reason: 'InformersSynced',
              message: `watching namespace ${conn.clusterNamespace} on the provider`,
            }
          : conn.syncError
            ? { type: ConditionType.InformersSynced, status: 'False', severity: 'Error', reason: 'InformerSyncTimeout', message: conn.syncError }
            : { type: ConditionType.InformersSynced, status: 'Unknown', reason: 'InformersSyncing', message: 'waiting for the provider informers to sync' },
      );
      conds = setCondition(conds, {
        type: ConditionType.Heartbeating,
        ...conn.heartbeatState,
        severity: conn.heartbeatState.status === 'False' ? 'Error' : undefined,
      });
      const cs = conn.crdState(key);
      conds = setCondition(
        conds,
        cs
          ? { type: ConditionType.Connected, ...cs, severity: cs.status === 'False' ? 'Error' : undefined }
          : { type: ConditionType.Connected, status: 'Unknown', reason: 'Connecting', message: 'waiting for the provider connection' },
      );
      if (conn.providerPrettyName) pretty = conn.providerPrettyName;
    } else {
      for (const t of [ConditionType.InformersSynced, ConditionType.Heartbeating, ConditionType.Connected]) {
        conds = setCondition(conds, {
          type: t,
          status: 'Unknown',
          reason: 'NoProviderConnection',
          message: 'no provider connection: fix the kubeconfig Secret first (see SecretValid)',
        });
      }
    }
    // Not part of Ready: the binding holding a contested copy keeps syncing it (claim-conflicts.ts).
    const uid = b.metadata.uid ?? '';
    const conflict = claimConflictCondition(uid, this.claimConflicts.of(uid), (u) => this.bindingByUid(u));
    conds = conflict ? setCondition(conds, conflict) : removeCondition(conds, CLAIM_CONFLICT_CONDITION);
    // Not part of Ready: the binding's other objects keep syncing (claim-refusals.ts).
    const refusal = claimRefusalCondition(this.claimRefusals.of(uid));
    conds = refusal ? setCondition(conds, refusal) : removeCondition(conds, CLAIM_REFUSED_CONDITION);
    // Not part of Ready either: the provider kept copies the app cluster deleted (deletion-timeouts.ts).
    const timedOut = deletionTimedOutCondition(
      this.deletionTimeouts.of(b.metadata.name ?? ''),
      this.opts.upstreamDeletionTimeoutMs ?? DEFAULT_UPSTREAM_DELETION_TIMEOUT_MS,
    );
    conds = timedOut ? setCondition(conds, timedOut) : removeCondition(conds, DELETION_TIMED_OUT_CONDITION);
    // Not part of Ready: what stays within the limits keeps syncing (binding-limits.ts).
    for (const kind of LIMIT_KINDS) {
      const limit = limitCondition(kind, this.limits.of(uid, kind));
      conds = limit ? setCondition(conds, limit) : removeCondition(conds, kind);
    }
    conds = setSummary(conds, BINDING_CONDITIONS);
    if (conditionsEqual(conds, b.status?.conditions as Condition[] | undefined) && pretty === b.status?.providerPrettyName) return;
    const { namespace, name } = splitKey(key);
    await this.bindingClient.mergePatch(
      BINDING_RESOURCES.apiServiceBindings,
      namespace,
      name,
      { metadata: { resourceVersion: b.metadata.resourceVersion }, status: { conditions: conds, ...(pretty ? { providerPrettyName: pretty } : {}) } },
      'status',
    );
  }
}
