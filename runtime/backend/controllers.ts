/**
 * The backend's controllers, each one reconciler over shared informers (runtime/core):
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
import {
  Controller,
  Informer,
  RequeueError,
  conditionsEqual,
  isNotFound,
  keyOf,
  setCondition,
  setSummary,
  type Condition,
  type KubeClient,
  type KubeObject,
  type ReconcileResult,
} from '../core/index.js';
import type { Binder } from './binder.js';
import type { Crd, ExportTemplate } from './catalog.js';
import { crdSpecHash, exportSpecFromCrd, type ExportSpec } from './export.js';
import type { BackendMetrics } from './metrics.js';
import { isProgrammingError, type UnexpectedErrors } from './unexpected.js';
import { ClusterSweeper } from './sweeper.js';
import {
  BINDER_SA,
  CLUSTER_BINDING_NAME,
  IDENTITY_ANNOTATION,
  KUBECONFIG_SECRET,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  R,
  SERVICE_NAMESPACE_ANNOTATION,
  SOURCE_SPEC_HASH_ANNOTATION,
  TOKEN_EXPIRY_ANNOTATION,
  TOKEN_ISSUED_ANNOTATION,
  perClusterRoleName,
} from './refs.js';
import { FIELD_MANAGER } from './binder.js';
import type { PermissionClaim } from './wire.js';

export const SERVICE_NAMESPACE_FINALIZER = 'klutch.anynines.com/servicenamespace';
const ALL_VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];

interface ExportRequest extends KubeObject {
  spec?: { resources?: Array<{ group?: string; resource: string; versions?: string[]; permissionClaims?: PermissionClaim[] }> };
  status?: { phase?: 'Pending' | 'Succeeded' | 'Failed'; terminalMessage?: string; conditions?: Condition[] };
}
interface ExportObj extends KubeObject {
  spec: ExportSpec;
  status?: { conditions?: Condition[]; [k: string]: unknown };
}
interface ServiceNamespace extends KubeObject {
  status?: { namespace?: string };
}
interface ClusterBindingObj extends KubeObject {
  spec?: { kubeconfigSecretRef?: { name: string; key: string } };
  status?: { lastHeartbeatTime?: string; heartbeatInterval?: string; conditions?: Condition[]; [k: string]: unknown };
}

/** Parses a Go duration (`5m0s`, `30s`, `1h0m0s`, `500ms`) or plain seconds; undefined if invalid. */
export function parseGoDuration(v: string | undefined): number | undefined {
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v) * 1000;
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(v); m; m = re.exec(v)) {
    const n = Number(m[1]);
    total += n * ({ h: 3600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, µs: 0.001, ns: 0.000001 } as Record<string, number>)[m[2]];
    consumed += m[0].length;
  }
  return consumed === v.length && consumed > 0 ? total : undefined;
}

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
  /** Clean-up of cluster namespaces (see sweeper.ts). @default incomplete after 10 min, no heartbeat sweep */
  sweep?: { orphanGraceMs: number; staleAfterMs: number; noticeMs: number; dryRun: boolean };
}

const age = (o: KubeObject): number => Date.now() - Date.parse(o.metadata.creationTimestamp ?? new Date().toISOString());
const splitKey = (key: string): [string, string] => {
  const i = key.indexOf('/');
  return [key.slice(0, i), key.slice(i + 1)];
};

export class BackendControllers {
  readonly requests: Informer<ExportRequest>;
  readonly exports: Informer<ExportObj>;
  readonly crds: Informer<Crd>;
  readonly templates: Informer<ExportTemplate>;
  readonly serviceNamespaces: Informer<ServiceNamespace>;
  readonly clusterBindings: Informer<ClusterBindingObj>;
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
  private started = false;

  constructor(private readonly o: BackendControllersOptions) {
    const kube = o.kube;
    const log = o.logger;
    this.requests = new Informer<ExportRequest>(kube, R.exportRequests, { logger: log });
    this.exports = new Informer<ExportObj>(kube, R.exports, { logger: log });
    this.crds = new Informer<Crd>(kube, R.crds, { logger: log });
    this.templates = new Informer<ExportTemplate>(kube, R.templates, { logger: log });
    this.serviceNamespaces = new Informer<ServiceNamespace>(kube, R.serviceNamespaces, { logger: log });
    this.clusterBindings = new Informer<ClusterBindingObj>(kube, R.clusterBindings, { logger: log });
    this.kubeconfigSecrets = new Informer(kube, R.secrets, {
      logger: log,
      labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`,
      fieldSelector: `metadata.name=${KUBECONFIG_SECRET}`,
    });

    this.clusterNamespaces = new Informer(kube, R.namespaces, { logger: log, labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}` });
    this.sweeper = new ClusterSweeper({
      kube,
      logger: log.child({ controller: 'sweeper' }),
      metrics: o.metrics,
      orphanGraceMs: 600_000,
      staleAfterMs: 0,
      noticeMs: 3600_000,
      dryRun: false,
      ...o.sweep,
      cache: {
        namespace: (n) => this.clusterNamespaces.getByName(undefined, n),
        namespaces: () => this.clusterNamespaces.list(),
        clusterBinding: (n) => this.clusterBindings.getByName(n, CLUSTER_BINDING_NAME),
        kubeconfigSecret: (n) => this.kubeconfigSecrets.getByName(n, KUBECONFIG_SECRET),
      },
    });

    const mk = (name: string, fn: (key: string) => Promise<ReconcileResult | void>) =>
      new Controller({
        name: `backend-${name}`,
        logger: log,
        registry: o.registry,
        reconciler: async (key) => {
          try {
            const r = await fn(key);
            o.metrics.reconciles.inc({ controller: name, result: 'ok' });
            return r;
          } catch (e) {
            o.metrics.reconciles.inc({ controller: name, result: 'error' });
            if (isProgrammingError(e)) o.unexpected?.record(`controller/${name}`, e, { key });
            throw e;
          }
        },
      });
    this.exportRequest = mk('exportrequest', (k) => this.reconcileRequest(k));
    this.exportSync = mk('export', (k) => this.reconcileExport(k));
    this.serviceNamespace = mk('servicenamespace', (k) => this.reconcileServiceNamespace(k));
    this.rbac = mk('rbac', (k) => this.reconcileRbac(k));
    this.clusterBinding = mk('clusterbinding', (k) => this.reconcileClusterBinding(k));
    this.tokenRotation = mk('tokenrotation', (k) => this.reconcileToken(k));
    this.sweep = mk('sweeper', (k) => this.sweeper.reconcile(k));
    this.controllers = [this.exportRequest, this.exportSync, this.serviceNamespace, this.rbac, this.clusterBinding, this.tokenRotation, this.sweep];

    // indexes
    this.exports.addIndex('name', (e) => [e.metadata.name!]);
    this.requests.addIndex('crd', (r) => (r.spec?.resources ?? []).map((x) => `${x.resource}.${x.group ?? ''}`));

    // wiring
    const on = <T extends KubeObject>(inf: Informer<T>, fn: (o: T) => void) =>
      inf.addEventHandler({ onAdd: fn, onUpdate: (_a, b) => fn(b), onDelete: fn });
    on(this.requests, (r) => this.exportRequest.enqueue(keyOf(r)));
    on(this.exports, (e) => {
      this.exportSync.enqueue(keyOf(e));
      this.rbac.enqueue(e.metadata.namespace!);
    });
    on(this.crds, (c) => {
      for (const e of this.exports.byIndex('name', c.metadata.name!)) this.exportSync.enqueue(keyOf(e));
      for (const r of this.requests.byIndex('crd', c.metadata.name!)) this.exportRequest.enqueue(keyOf(r));
    });
    on(this.templates, () => {
      for (const r of this.requests.list()) if ((r.status?.phase ?? 'Pending') === 'Pending') this.exportRequest.enqueue(keyOf(r));
    });
    on(this.serviceNamespaces, (s) => {
      this.serviceNamespace.enqueue(keyOf(s));
      this.rbac.enqueue(s.metadata.namespace!);
    });
    on(this.clusterBindings, (c) => {
      this.clusterBinding.enqueue(keyOf(c));
      this.rbac.enqueue(c.metadata.namespace!);
      this.sweep.enqueue(c.metadata.namespace!);
    });
    on(this.kubeconfigSecrets, (s) => {
      this.tokenRotation.enqueue(s.metadata.namespace!);
      this.sweep.enqueue(s.metadata.namespace!);
    });
    on(this.clusterNamespaces, (n) => this.sweep.enqueue(n.metadata.name!));
  }

  private get informers(): Informer<KubeObject>[] {
    return [this.requests, this.exports, this.crds, this.templates, this.serviceNamespaces, this.clusterBindings, this.kubeconfigSecrets, this.clusterNamespaces] as Informer<KubeObject>[];
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

  // ---------------------------------------------------------------- export requests

  private templateFor(group: string, resource: string): ExportTemplate | undefined {
    return this.templates
      .list()
      .filter((t) => (t.spec?.APIServiceSelector?.group ?? '') === group && t.spec?.APIServiceSelector?.resource === resource)
      .sort((a, b) => keyOf(a).localeCompare(keyOf(b)))[0];
  }

  private async writeRequestStatus(req: ExportRequest, status: NonNullable<ExportRequest['status']>): Promise<void> {
    if (
      req.status?.phase === status.phase &&
      req.status?.terminalMessage === status.terminalMessage &&
      conditionsEqual(req.status?.conditions, status.conditions)
    ) {
      return;
    }
    await this.o.kube.updateStatus(R.exportRequests, { ...req, status });
  }

  private async failRequest(req: ExportRequest, reason: string, message: string): Promise<ReconcileResult> {
    let conds = setCondition(req.status?.conditions, { type: 'ExportsReady', status: 'False', severity: 'Error', reason, message });
    conds = setSummary(conds, ['ExportsReady']);
    await this.writeRequestStatus(req, { ...req.status, phase: 'Failed', terminalMessage: message, conditions: conds });
    this.o.logger.warn({ request: keyOf(req), reason, message }, 'export request failed');
    return { requeueAfterMs: this.retention };
  }

  private get retention(): number {
    return this.o.requestRetentionMs ?? 10 * 60_000;
  }

  async reconcileRequest(key: string): Promise<ReconcileResult | void> {
    const req = this.requests.get(key);
    if (!req || req.metadata.deletionTimestamp) return;
    const [ns, name] = splitKey(key);
    const phase = req.status?.phase ?? 'Pending';
    const reqAge = age(req);
    if (phase === 'Succeeded' || phase === 'Failed') {
      if (reqAge >= this.retention) {
        await this.o.kube.delete(R.exportRequests, ns, name, { uid: req.metadata.uid });
        return;
      }
      return { requeueAfterMs: this.retention - reqAge + 100 };
    }
    const resources = req.spec?.resources ?? [];
    if (resources.length === 0) return this.failRequest(req, 'NoResources', 'spec.resources is empty; request at least one resource');
    const missing: string[] = [];
    const planned: Array<{ crd: Crd; template: ExportTemplate }> = [];
    for (const r of resources) {
      const crdName = `${r.resource}.${r.group ?? ''}`;
      const template = this.templateFor(r.group ?? '', r.resource);
      if (!template) {
        return this.failRequest(
          req,
          'NotOffered',
          `resource ${crdName} is not offered by any APIServiceExportTemplate on this provider; bind one of the APIs listed on the backend's /resources page`,
        );
      }
      const crd = this.crds.getByName(undefined, crdName);
      if (!crd) {
        missing.push(crdName);
        continue;
      }
      if (crd.spec.scope === 'Cluster' && this.o.consumerScope !== 'Cluster') {
        return this.failRequest(req, 'ClusterScopedNotAllowed', `resource ${crdName} is cluster-scoped; this backend runs with --consumer-scope=Namespaced`);
      }
      planned.push({ crd, template });
    }
    if (missing.length) {
      const graceLeft = this.o.exportRequestGraceMs - reqAge;
      const message = `CustomResourceDefinition ${missing.join(', ')} not found on the provider`;
      if (graceLeft <= 0) {
        return this.failRequest(req, 'CRDNotFound', `${message} within ${Math.round(this.o.exportRequestGraceMs / 1000)}s; ask the provider to install it, then bind again`);
      }
      let conds = setCondition(req.status?.conditions, { type: 'ExportsReady', status: 'False', severity: 'Warning', reason: 'CRDNotFound', message });
      conds = setSummary(conds, ['ExportsReady']);
      await this.writeRequestStatus(req, { ...req.status, phase: 'Pending', conditions: conds });
      return { requeueAfterMs: graceLeft + 50 };
    }
    for (const { crd, template } of planned) await this.ensureExport(ns, crd, template.spec.permissionClaims);
    let conds = setCondition(req.status?.conditions, {
      type: 'ExportsReady',
      status: 'True',
      reason: 'ExportsCreated',
      message: `exported ${planned.map((p) => p.crd.metadata.name).join(', ')}`,
    });
    conds = setSummary(conds, ['ExportsReady']);
    await this.writeRequestStatus(req, { ...req.status, phase: 'Succeeded', terminalMessage: undefined, conditions: conds });
    this.o.logger.info({ request: key, exports: planned.map((p) => p.crd.metadata.name) }, 'export request succeeded');
    return { requeueAfterMs: this.retention - reqAge + 100 };
  }

  private async ensureExport(ns: string, crd: Crd, claims: PermissionClaim[] | undefined): Promise<void> {
    const name = crd.metadata.name!;
    const hash = crdSpecHash(crd);
    const existing = this.exports.getByName(ns, name) ?? (await this.o.kube.getOrNull<ExportObj>(R.exports, ns, name));
    const spec = exportSpecFromCrd(crd, {
      informerScope: existing?.spec.informerScope ?? this.o.consumerScope,
      permissionClaims: claims,
    });
    if (!existing) {
      await this.o.kube.create(R.exports, {
        metadata: { name, namespace: ns, labels: { [MANAGED_BY_LABEL]: MANAGED_BY }, annotations: { [SOURCE_SPEC_HASH_ANNOTATION]: hash } },
        spec,
      });
      return;
    }
    const sameClaims = JSON.stringify(existing.spec.permissionClaims ?? []) === JSON.stringify(claims ?? []);
    if (existing.metadata.annotations?.[SOURCE_SPEC_HASH_ANNOTATION] === hash && sameClaims) return;
    await this.o.kube.update(R.exports, {
      ...existing,
      metadata: { ...existing.metadata, annotations: { ...existing.metadata.annotations, [SOURCE_SPEC_HASH_ANNOTATION]: hash } },
      spec,
    });
  }

  // ---------------------------------------------------------------- exports

  async reconcileExport(key: string): Promise<void> {
    const exp = this.exports.get(key);
    if (!exp || exp.metadata.deletionTimestamp) return;
    const [ns, name] = splitKey(key);
    const crd = this.crds.getByName(undefined, name);
    if (!crd) {
      this.o.logger.info({ export: key }, 'CRD of export is gone; deleting the export');
      await this.o.kube.delete(R.exports, ns, name, { uid: exp.metadata.uid });
      return;
    }
    const hash = crdSpecHash(crd);
    if (exp.metadata.annotations?.[SOURCE_SPEC_HASH_ANNOTATION] !== hash) {
      const spec = exportSpecFromCrd(crd, { informerScope: exp.spec.informerScope, permissionClaims: exp.spec.permissionClaims });
      await this.o.kube.update(R.exports, {
        ...exp,
        metadata: { ...exp.metadata, annotations: { ...exp.metadata.annotations, [SOURCE_SPEC_HASH_ANNOTATION]: hash } },
        spec,
      });
      this.o.logger.info({ export: key }, 'export updated from its changed CRD');
      return; // the update event reconciles the status
    }
    const conds = setCondition(exp.status?.conditions, {
      type: 'ProviderInSync',
      status: 'True',
      reason: 'InSync',
      message: `in sync with CustomResourceDefinition ${name}`,
    });
    if (!conditionsEqual(conds, exp.status?.conditions)) {
      await this.o.kube.updateStatus(R.exports, { ...exp, status: { ...exp.status, conditions: conds } });
    }
  }

  // ---------------------------------------------------------------- service namespaces

  async reconcileServiceNamespace(key: string): Promise<void> {
    const sn = this.serviceNamespaces.get(key);
    if (!sn) return;
    const [clusterNs, name] = splitKey(key);
    const target = `${clusterNs}-${name}`;
    const annotation = `${clusterNs}/${name}`;
    if (sn.metadata.deletionTimestamp) {
      const ns = await this.o.kube.getOrNull(R.namespaces, undefined, target);
      if (ns && ns.metadata.annotations?.[SERVICE_NAMESPACE_ANNOTATION] === annotation && !ns.metadata.deletionTimestamp) {
        await this.o.kube.delete(R.namespaces, undefined, target, { uid: ns.metadata.uid });
        this.o.logger.info({ namespace: target }, 'deleted provider namespace of removed APIServiceNamespace');
      }
      if (sn.metadata.finalizers?.includes(SERVICE_NAMESPACE_FINALIZER)) {
        await this.o.kube.update(R.serviceNamespaces, {
          ...sn,
          metadata: { ...sn.metadata, finalizers: sn.metadata.finalizers.filter((f) => f !== SERVICE_NAMESPACE_FINALIZER) },
        });
      }
      this.rbac.enqueue(clusterNs);
      return;
    }
    if (target.length > 63) {
      this.o.logger.warn({ apiServiceNamespace: key, namespace: target }, 'provider namespace name would exceed 63 characters; not created');
      return;
    }
    if (!sn.metadata.finalizers?.includes(SERVICE_NAMESPACE_FINALIZER)) {
      await this.o.kube.update(R.serviceNamespaces, {
        ...sn,
        metadata: { ...sn.metadata, finalizers: [...(sn.metadata.finalizers ?? []), SERVICE_NAMESPACE_FINALIZER] },
      });
      return; // the update event continues
    }
    const existing = await this.o.kube.getOrNull(R.namespaces, undefined, target);
    if (!existing) {
      await this.o.kube.create(R.namespaces, {
        metadata: { name: target, annotations: { [SERVICE_NAMESPACE_ANNOTATION]: annotation }, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
      });
    } else if (existing.metadata.annotations?.[SERVICE_NAMESPACE_ANNOTATION] !== annotation) {
      throw new RequeueError(`namespace ${target} exists and does not belong to APIServiceNamespace ${annotation}; not taking it over`, 60_000);
    } else if (existing.metadata.deletionTimestamp) {
      throw new RequeueError(`namespace ${target} is still terminating`, 2_000);
    }
    if (sn.status?.namespace !== target) {
      await this.o.kube.updateStatus(R.serviceNamespaces, { ...sn, status: { ...sn.status, namespace: target } });
    }
    this.rbac.enqueue(clusterNs);
  }

  // ---------------------------------------------------------------- RBAC

  /** The rules of `klutch-binder-<clusterNs>`: exported resources (+status) and claimed resources. */
  rulesFor(clusterNs: string, onlyClusterScoped = false): Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }> {
    const byGroup = new Map<string, Set<string>>();
    const add = (g: string, r: string) => {
      if (!byGroup.has(g)) byGroup.set(g, new Set());
      byGroup.get(g)!.add(r);
    };
    for (const e of this.exports.list(clusterNs)) {
      if (e.metadata.deletionTimestamp) continue;
      if (onlyClusterScoped && e.spec.scope !== 'Cluster') continue;
      add(e.spec.group ?? '', e.spec.names.plural);
      add(e.spec.group ?? '', `${e.spec.names.plural}/status`);
      if (!onlyClusterScoped) for (const c of e.spec.permissionClaims ?? []) add(c.group ?? '', c.resource);
    }
    return [...byGroup.keys()].sort().map((g) => ({ apiGroups: [g], resources: [...byGroup.get(g)!].sort(), verbs: ALL_VERBS }));
  }

  async reconcileRbac(clusterNs: string): Promise<void> {
    const ns = await this.o.kube.getOrNull(R.namespaces, undefined, clusterNs);
    if (!ns || ns.metadata.deletionTimestamp || !ns.metadata.annotations?.[IDENTITY_ANNOTATION]) return;
    const roleName = perClusterRoleName(clusterNs);
    const labels = { [MANAGED_BY_LABEL]: MANAGED_BY };
    await this.o.kube.apply(
      R.clusterRoles,
      {
        metadata: {
          name: roleName,
          labels,
          ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: clusterNs, uid: ns.metadata.uid!, blockOwnerDeletion: false }],
        },
        rules: this.rulesFor(clusterNs),
      },
      FIELD_MANAGER,
      { force: true },
    );
    const subject = { kind: 'ServiceAccount', name: BINDER_SA, namespace: clusterNs };
    for (const sn of this.serviceNamespaces.list(clusterNs)) {
      const target = sn.status?.namespace;
      if (!target || sn.metadata.deletionTimestamp) continue;
      try {
        await this.o.kube.apply(
          R.roleBindings,
          {
            metadata: { name: BINDER_SA, namespace: target, labels },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
            subjects: [subject],
          },
          FIELD_MANAGER,
          { force: true },
        );
      } catch (e) {
        if (!isNotFound(e)) throw e; // namespace not there (yet/anymore): the servicenamespace controller re-enqueues
      }
    }
    // Cluster scope: cluster-scoped exported resources need a cluster-wide grant. It goes to a role
    // of their own (never the claims, never the namespaced exports, which stay namespace-bound),
    // bound by a ClusterRoleBinding per consumer — nothing shared between consumers.
    const clusterRules = this.o.consumerScope === 'Cluster' ? this.rulesFor(clusterNs, true) : [];
    const clusterRole = `${roleName}-cluster`;
    if (clusterRules.length) {
      const owner = [{ apiVersion: 'v1', kind: 'Namespace', name: clusterNs, uid: ns.metadata.uid!, blockOwnerDeletion: false }];
      await this.o.kube.apply(R.clusterRoles, { metadata: { name: clusterRole, labels, ownerReferences: owner }, rules: clusterRules }, FIELD_MANAGER, { force: true });
      await this.o.kube.apply(
        R.clusterRoleBindings,
        {
          metadata: { name: roleName, labels, ownerReferences: owner },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
          subjects: [subject],
        },
        FIELD_MANAGER,
        { force: true },
      );
    } else {
      await this.o.kube.delete(R.clusterRoleBindings, undefined, roleName);
      await this.o.kube.delete(R.clusterRoles, undefined, clusterRole);
    }
  }

  // ---------------------------------------------------------------- cluster bindings

  async reconcileClusterBinding(key: string): Promise<ReconcileResult | void> {
    const cb = this.clusterBindings.get(key);
    if (!cb || cb.metadata.deletionTimestamp) return;
    const st = cb.status ?? {};
    const intervalMs = parseGoDuration(st.heartbeatInterval);
    let cond: Parameters<typeof setCondition>[1];
    let requeue: number | undefined;
    if (!st.lastHeartbeatTime) {
      cond = { type: 'Healthy', status: 'False', severity: 'Warning', reason: 'FirstHeartbeatPending', message: 'waiting for the first heartbeat of the konnector' };
    } else if (!intervalMs && !this.o.heartbeatTimeoutMs) {
      cond = { type: 'Healthy', status: 'False', severity: 'Warning', reason: 'HeartbeatIntervalMissing', message: 'the konnector reported no heartbeatInterval' };
    } else {
      const timeout = this.o.heartbeatTimeoutMs || 2 * intervalMs!;
      const since = Date.now() - Date.parse(st.lastHeartbeatTime);
      if (since > timeout) {
        cond = {
          type: 'Healthy',
          status: 'False',
          severity: 'Error',
          reason: 'HeartbeatTimeout',
          message: `last heartbeat ${Math.round(since / 1000)}s ago, more than ${Math.round(timeout / 1000)}s; is the konnector running?`,
        };
      } else {
        cond = { type: 'Healthy', status: 'True', reason: 'Heartbeating', message: `last heartbeat ${Math.round(since / 1000)}s ago` };
        requeue = timeout - since + 500;
      }
    }
    const prev = st.conditions?.find((c) => c.type === 'Healthy');
    // keep the message stable while the status is unchanged, to avoid a write per requeue
    if (prev && prev.status === cond.status && prev.reason === cond.reason) cond = { ...cond, message: prev.message };
    const conds = setCondition(st.conditions, cond);
    if (!conditionsEqual(conds, st.conditions)) {
      await this.o.kube.updateStatus(R.clusterBindings, { ...cb, status: { ...st, conditions: conds } });
    }
    return requeue !== undefined ? { requeueAfterMs: requeue } : undefined;
  }

  // ---------------------------------------------------------------- token rotation

  async reconcileToken(ns: string): Promise<ReconcileResult | void> {
    const s = this.kubeconfigSecrets.getByName(ns, KUBECONFIG_SECRET);
    if (!s || s.metadata.deletionTimestamp) return;
    const issued = Date.parse(s.metadata.annotations?.[TOKEN_ISSUED_ANNOTATION] ?? '');
    const expires = Date.parse(s.metadata.annotations?.[TOKEN_EXPIRY_ANNOTATION] ?? '');
    if (Number.isNaN(issued) || Number.isNaN(expires)) return;
    const due = issued + ((expires - issued) * 2) / 3;
    const now = Date.now();
    if (now < due) return { requeueAfterMs: Math.min(due - now + 100, 2 ** 31 - 1) };
    const sa = await this.o.kube.getOrNull(R.serviceAccounts, ns, BINDER_SA);
    if (!sa) return;
    const { expirationTimestamp } = await this.o.binder.writeKubeconfig(ns);
    this.o.metrics.tokenRotations.inc();
    this.o.logger.info({ namespace: ns, expirationTimestamp }, 'rotated consumer token');
  }
}
