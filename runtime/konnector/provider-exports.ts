/**
 * Export reconciler of a provider connection (key: export name): starts and stops the per-export
 * syncer (spec up, status down) and the claim syncers of its binding, and writes the consumer's view
 * into the APIServiceExport status.
 */
import type { Logger } from 'pino';
import type { KubeClient } from '../core/client.js';
import { conditionsEqual, setCondition, setSummary, type Condition } from '../core/conditions.js';
import type { Reconciler } from '../core/controller.js';
import type { ObjectCache } from '../core/object-cache.js';
import { ClaimSync } from './claims.js';
import type { SyncContext } from './context.js';
import { crdEstablished, isOwnedBy, type CRD } from './crd.js';
import { ExportSync } from './export-sync.js';
import { BindingGuard } from './binding-guard.js';
import { hashOf, isDeleting } from './metadata.js';
import { exportOfBinding, ResourceGate } from './resource-gate.js';
import type { AttachedBindings, ConditionState } from './provider-state.js';
import { type APIServiceBinding, type APIServiceExport } from './types.js';
import { BINDING_RESOURCES, ConditionType } from '../../contract/index.js';

export interface ExportReconcilerDeps {
  readonly provider: KubeClient;
  readonly clusterNamespace: string;
  readonly exports: ObjectCache<APIServiceExport>;
  /** The app cluster's CRDs. */
  readonly crds: ObjectCache<CRD>;
  readonly bindings: AttachedBindings;
  getBinding(key: string): APIServiceBinding | undefined;
  /** The Connected state of an attached binding (from the CRD reconciler). */
  crdState(bindingKey: string): ConditionState | undefined;
  /** What the syncers get from their provider connection. */
  readonly syncContext: SyncContext;
  readonly providerSyncTimeoutMs: number;
  readonly log: Logger;
}

interface Syncers {
  sig: string;
  exportSync: ExportSync;
  claims: ClaimSync[];
}

export class ExportReconciler implements Reconciler {
  private readonly syncers = new Map<string, Syncers>();

  constructor(private readonly deps: ExportReconcilerDeps) {}

  async reconcile(name: string): Promise<void> {
    await this.syncExport(name);
    await this.writeExportStatus(name);
  }

  /** Running export syncers (tests and fault injection). */
  exportSyncs(): ExportSync[] {
    return [...this.syncers.values()].map((s) => s.exportSync);
  }

  /** Stops every syncer (the connection stops; its controllers stopped first). */
  async stopAll(): Promise<void> {
    await Promise.all([...this.syncers.values()].map((s) => this.stopSyncers(s)));
    this.syncers.clear();
  }

  private async stopSyncers(s: Syncers): Promise<void> {
    await Promise.all([s.exportSync.stop(), ...s.claims.map((c) => c.stop())]);
  }

  /**
   * Export status as seen from this consumer: `Connected` (syncing), `ConsumerInSync` (the app-cluster
   * CRD matches the export; Klutch never sets it), the CRD's `Established`/`NamesAccepted`,
   * `acceptedNames`, `storedVersions`, `Ready`. Best effort: a provider that does not grant
   * `apiserviceexports/status` only gets a log line.
   */
  private async writeExportStatus(name: string): Promise<void> {
    const d = this.deps;
    const exp = d.exports.getByName(d.clusterNamespace, name);
    if (!exp || isDeleting(exp)) return;
    const bkey = d.bindings.named(name)[0];
    if (!bkey) return; // not bound by this consumer (yet)
    const crd = d.crds.getByName(undefined, name);
    const running = this.syncers.has(name);
    let conds = exp.status?.conditions as Condition[] | undefined;
    const crdState = d.crdState(bkey);
    conds = setCondition(
      conds,
      running
        ? { type: ConditionType.Connected, status: 'True', reason: 'Syncing', message: 'the konnector syncs this resource' }
        : {
            type: ConditionType.Connected,
            status: 'False',
            severity: 'Warning',
            reason: crdState?.reason ?? 'NotSyncing',
            message: crdState?.message ?? 'waiting for the CRD on the app cluster',
          },
    );
    conds = setCondition(
      conds,
      crdState?.status === 'True'
        ? { type: ConditionType.ConsumerInSync, status: 'True', reason: 'SchemaInSync', message: 'the app cluster CRD matches the export' }
        : {
            type: ConditionType.ConsumerInSync,
            status: crdState ? 'False' : 'Unknown',
            reason: crdState?.reason ?? 'Pending',
            message: crdState?.message ?? 'not reconciled yet',
          },
    );
    for (const t of ['Established', 'NamesAccepted']) {
      const c = crd?.status?.conditions?.find((x) => x.type === t);
      if (c) conds = setCondition(conds, { type: t, status: c.status as Condition['status'], reason: c.reason, message: c.message });
    }
    conds = setSummary(conds, [ConditionType.Connected, ConditionType.ConsumerInSync, ConditionType.Established]);
    const status: Record<string, unknown> = { conditions: conds };
    if (crd?.status?.acceptedNames) status.acceptedNames = crd.status.acceptedNames;
    if (crd?.status?.storedVersions) status.storedVersions = crd.status.storedVersions;
    const same =
      conditionsEqual(conds, exp.status?.conditions as Condition[] | undefined) &&
      JSON.stringify(status.acceptedNames ?? null) === JSON.stringify(exp.status?.acceptedNames ?? null) &&
      JSON.stringify(status.storedVersions ?? null) === JSON.stringify(exp.status?.storedVersions ?? null);
    if (same) return;
    try {
      await d.provider.mergePatch(BINDING_RESOURCES.apiServiceExports, d.clusterNamespace, name, { status }, 'status');
    } catch (e) {
      d.log.warn(
        { export: name, err: (e as Error).message },
        'cannot write APIServiceExport status; grant apiserviceexports/status patch to see the consumer state on the provider',
      );
    }
  }

  private async syncExport(name: string): Promise<void> {
    const d = this.deps;
    const exp = d.exports.getByName(d.clusterNamespace, name);
    const bkey = d.bindings.named(name).find((k) => {
      const b = d.getBinding(k);
      const crd = d.crds.getByName(undefined, name);
      return b && crd && isOwnedBy(crd, b);
    });
    const b = bkey ? d.getBinding(bkey) : undefined;
    const crd = d.crds.getByName(undefined, name);
    // Syncers keep running while the CRD exists, also when binding or CRD are being deleted, so that
    // deleted objects are deleted upstream and their finalizers released.
    const gate = d.syncContext.resourceGate ?? ResourceGate.DEFAULT;
    const ok = exp && b && crd && crdEstablished(crd) && gate.decide(exportOfBinding(name), 'export').allowed;
    const cur = this.syncers.get(name);
    if (!ok) {
      if (cur) {
        this.syncers.delete(name);
        await this.stopSyncers(cur);
        d.log.info({ export: name }, 'stopped syncing: export, binding or CRD gone, or the resource is outside the allow-list');
      }
      return;
    }
    // claims outside the allow-list are not synced (the binding's ResourcesAllowed condition names them)
    const accepted = gate.allowedClaims((b.spec.permissionClaims ?? []).filter((c) => c.state === 'Accepted'));
    const sig = hashOf([exp.metadata.generation, exp.metadata.uid, b.metadata.uid, crd.metadata.uid, accepted]);
    if (cur?.sig === sig) return;
    if (cur) {
      this.syncers.delete(name);
      await this.stopSyncers(cur);
    }
    // One guard per binding: its export's and its claims' provider informers share one cache cap (binding-guard.ts).
    const guard = new BindingGuard(d.syncContext, { name, uid: b.metadata.uid! });
    const exportSync = new ExportSync(d.syncContext, exp, guard);
    const claims = accepted.map((c) => new ClaimSync(d.syncContext, c, { name, uid: b.metadata.uid!, guard }));
    const s: Syncers = { sig, exportSync, claims };
    this.syncers.set(name, s);
    try {
      await Promise.all([exportSync.start(d.providerSyncTimeoutMs), ...claims.map((c) => c.start(d.providerSyncTimeoutMs))]);
    } catch (e) {
      this.syncers.delete(name);
      await this.stopSyncers(s);
      throw new Error(`starting the syncers of ${name} failed: ${(e as Error).message}`, { cause: e });
    }
  }
}
