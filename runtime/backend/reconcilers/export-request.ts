/**
 * exportrequest (key: `clusterNs/name`): APIServiceExportRequest → APIServiceExport(s) (CRD snapshot,
 * template claims, source-spec hash); Pending → Succeeded | Failed (terminalMessage); a missing CRD
 * fails after a grace period; finished requests are deleted after a retention period.
 */
import type { Logger } from 'pino';
import { conditionsEqual, keyOf, setCondition, setSummary, type Condition, type ObjectCache, type ReconcileResult, type Reconciler } from '../../core/index.js';
import type { Crd, ExportTemplate } from '../catalog.js';
import { crdSpecHash, exportSpecFromCrd } from '../export.js';
import { MANAGED_BY, MANAGED_BY_LABEL, R, SOURCE_SPEC_HASH_ANNOTATION } from '../refs.js';
import type { PermissionClaim } from '../../../contract/wire.js';
import { age, byAge, type APIServiceExport, type APIServiceExportRequest, type ReconcilerKube } from './types.js';
import { splitKey } from '../../core/client.js';
import { ConditionType } from '../../../contract/api/constants.js';

export interface ExportRequestReconcilerDeps {
  readonly kube: ReconcilerKube;
  readonly requests: ObjectCache<APIServiceExportRequest>;
  readonly exports: ObjectCache<APIServiceExport>;
  readonly crds: ObjectCache<Crd>;
  readonly templates: ObjectCache<ExportTemplate>;
  readonly logger: Logger;
  readonly consumerScope: 'Namespaced' | 'Cluster';
  /** How long a request may wait for a missing CRD. */
  readonly exportRequestGraceMs: number;
  /** Finished requests are deleted this long after creation. @default 10 min */
  readonly requestRetentionMs?: number;
  /**
   * APIServiceExportRequests of one app cluster that are acted on (`--max-export-requests-per-cluster`):
   * the oldest ones; a newer pending one fails with reason QuotaExceeded. 0 or unset: unlimited.
   */
  readonly maxPerCluster?: number;
}

export class ExportRequestReconciler implements Reconciler {
  constructor(private readonly d: ExportRequestReconcilerDeps) {}

  private get retention(): number {
    return this.d.requestRetentionMs ?? 10 * 60_000;
  }

  private templateFor(group: string, resource: string): ExportTemplate | undefined {
    return this.d.templates
      .list()
      .filter((t) => (t.spec?.APIServiceSelector?.group ?? '') === group && t.spec?.APIServiceSelector?.resource === resource)
      .sort((a, b) => keyOf(a).localeCompare(keyOf(b)))[0];
  }

  private async writeStatus(
    req: APIServiceExportRequest,
    status: Omit<NonNullable<APIServiceExportRequest['status']>, 'conditions'> & { conditions?: Condition[] },
  ): Promise<void> {
    if (
      req.status?.phase === status.phase &&
      req.status?.terminalMessage === status.terminalMessage &&
      conditionsEqual(req.status?.conditions, status.conditions)
    ) {
      return;
    }
    await this.d.kube.updateStatus(R.exportRequests, { ...req, status });
  }

  private async fail(req: APIServiceExportRequest, reason: string, message: string): Promise<ReconcileResult> {
    let conds = setCondition(req.status?.conditions, { type: ConditionType.ExportsReady, status: 'False', severity: 'Error', reason, message });
    conds = setSummary(conds, [ConditionType.ExportsReady]);
    await this.writeStatus(req, { ...req.status, phase: 'Failed', terminalMessage: message, conditions: conds });
    this.d.logger.warn({ request: keyOf(req), reason, message }, 'export request failed');
    return { requeueAfterMs: this.retention };
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const d = this.d;
    const req = d.requests.get(key);
    if (!req || req.metadata.deletionTimestamp) return;
    const { namespace: ns = '', name } = splitKey(key);
    const phase = req.status?.phase ?? 'Pending';
    const reqAge = age(req);
    if (phase === 'Succeeded' || phase === 'Failed') {
      if (reqAge >= this.retention) {
        await d.kube.delete(R.exportRequests, ns, name, { uid: req.metadata.uid });
        return;
      }
      return { requeueAfterMs: this.retention - reqAge + 100 };
    }
    if (d.maxPerCluster) {
      const live = d.requests
        .list(ns)
        .filter((r) => !r.metadata.deletionTimestamp)
        .sort(byAge);
      if (live.findIndex((r) => r.metadata.name === name) >= d.maxPerCluster) {
        return this.fail(
          req,
          'QuotaExceeded',
          `this app cluster has ${live.length} APIServiceExportRequests, at most ${d.maxPerCluster} are acted on (--max-export-requests-per-cluster); finished ones are deleted ${Math.round(this.retention / 1000)}s after their creation, then bind again`,
        );
      }
    }
    const resources = req.spec?.resources ?? [];
    if (resources.length === 0) return this.fail(req, 'NoResources', 'spec.resources is empty; request at least one resource');
    const missing: string[] = [];
    const planned: Array<{ crd: Crd; template: ExportTemplate }> = [];
    for (const r of resources) {
      const crdName = `${r.resource}.${r.group ?? ''}`;
      const template = this.templateFor(r.group ?? '', r.resource);
      if (!template) {
        return this.fail(
          req,
          'NotOffered',
          `resource ${crdName} is not offered by any APIServiceExportTemplate on this provider; bind one of the APIs listed on the backend's /resources page`,
        );
      }
      const crd = d.crds.getByName(undefined, crdName);
      if (!crd) {
        missing.push(crdName);
        continue;
      }
      if (crd.spec.scope === 'Cluster' && d.consumerScope !== 'Cluster') {
        return this.fail(req, 'ClusterScopedNotAllowed', `resource ${crdName} is cluster-scoped; this backend runs with --consumer-scope=Namespaced`);
      }
      planned.push({ crd, template });
    }
    if (missing.length) {
      const graceLeft = d.exportRequestGraceMs - reqAge;
      const message = `CustomResourceDefinition ${missing.join(', ')} not found on the provider`;
      if (graceLeft <= 0) {
        return this.fail(
          req,
          'CRDNotFound',
          `${message} within ${Math.round(d.exportRequestGraceMs / 1000)}s; ask the provider to install it, then bind again`,
        );
      }
      let conds = setCondition(req.status?.conditions, {
        type: ConditionType.ExportsReady,
        status: 'False',
        severity: 'Warning',
        reason: 'CRDNotFound',
        message,
      });
      conds = setSummary(conds, [ConditionType.ExportsReady]);
      await this.writeStatus(req, { ...req.status, phase: 'Pending', conditions: conds });
      return { requeueAfterMs: graceLeft + 50 };
    }
    for (const { crd, template } of planned) await this.ensureExport(ns, crd, template.spec.permissionClaims);
    let conds = setCondition(req.status?.conditions, {
      type: ConditionType.ExportsReady,
      status: 'True',
      reason: 'ExportsCreated',
      message: `exported ${planned.map((p) => p.crd.metadata.name).join(', ')}`,
    });
    conds = setSummary(conds, [ConditionType.ExportsReady]);
    await this.writeStatus(req, { ...req.status, phase: 'Succeeded', terminalMessage: undefined, conditions: conds });
    d.logger.info({ request: key, exports: planned.map((p) => p.crd.metadata.name) }, 'export request succeeded');
    return { requeueAfterMs: this.retention - reqAge + 100 };
  }

  private async ensureExport(ns: string, crd: Crd, claims: PermissionClaim[] | undefined): Promise<void> {
    const d = this.d;
    const name = crd.metadata.name!;
    const hash = crdSpecHash(crd);
    const existing = d.exports.getByName(ns, name) ?? (await d.kube.getOrNull<APIServiceExport>(R.exports, ns, name));
    const spec = exportSpecFromCrd(crd, {
      informerScope: existing?.spec.informerScope ?? d.consumerScope,
      permissionClaims: claims,
    });
    if (!existing) {
      await d.kube.create(R.exports, {
        metadata: { name, namespace: ns, labels: { [MANAGED_BY_LABEL]: MANAGED_BY }, annotations: { [SOURCE_SPEC_HASH_ANNOTATION]: hash } },
        spec,
      });
      return;
    }
    const sameClaims = JSON.stringify(existing.spec.permissionClaims ?? []) === JSON.stringify(claims ?? []);
    if (existing.metadata.annotations?.[SOURCE_SPEC_HASH_ANNOTATION] === hash && sameClaims) return;
    await d.kube.update(R.exports, {
      ...existing,
      metadata: { ...existing.metadata, annotations: { ...existing.metadata.annotations, [SOURCE_SPEC_HASH_ANNOTATION]: hash } },
      spec,
    });
  }
}
