/**
 * CRD reconciler of a provider connection (key: binding key): APIServiceExport on the provider →
 * CustomResourceDefinition on the app cluster, owned by the APIServiceBinding. Keeps the Connected
 * state of each attached binding.
 */
import type { Logger } from 'pino';
import { CoreResources, isAlreadyExists, type KubeClient } from '../core/client.js';
import type { Reconciler } from '../core/controller.js';
import type { ObjectCache } from '../core/object-cache.js';
import { bindingOwnerRef, controllerOf, crdEstablished, crdNeedsUpdate, exportToCRD, isOwnedBy, type CRD } from './crd.js';
import { isDeleting } from './metadata.js';
import { exportOfBinding, RESOURCE_NOT_ALLOWED_REASON, ResourceGate } from './resource-gate.js';
import { sameState, type AttachedBindings, type ConditionState } from './provider-state.js';
import { EXPORTED_LABEL, type APIServiceBinding, type APIServiceExport } from './types.js';

export interface CrdReconcilerDeps {
  /** The app cluster. */
  readonly app: KubeClient;
  readonly clusterNamespace: string;
  readonly exports: ObjectCache<APIServiceExport>;
  /** The app cluster's CRDs. */
  readonly crds: ObjectCache<CRD>;
  readonly bindings: AttachedBindings;
  getBinding(key: string): APIServiceBinding | undefined;
  /** Whether the CRD's controller is an APIServiceBinding that certainly no longer exists. */
  ownerBindingGone(crd: CRD): boolean;
  readonly log: Logger;
  /** What the app cluster's admin lets a provider export (resource-gate.ts). @default ResourceGate.DEFAULT */
  readonly resourceGate?: ResourceGate;
  /** Called when a binding's Connected state changed. */
  changed(bindingKey: string): void;
}

export class CrdReconciler implements Reconciler {
  private readonly states = new Map<string, ConditionState>();

  constructor(private readonly deps: CrdReconcilerDeps) {}

  /** The Connected state of an attached binding, once reconciled. */
  state(bindingKey: string): ConditionState | undefined {
    return this.states.get(bindingKey);
  }

  /** Drops the state of a detached binding. */
  forget(bindingKey: string): void {
    this.states.delete(bindingKey);
  }

  private setState(key: string, s: ConditionState): void {
    const prev = this.states.get(key);
    this.states.set(key, s);
    if (!sameState(prev, s)) this.deps.changed(key);
  }

  async reconcile(bindingKey: string): Promise<void> {
    const d = this.deps;
    const b = d.getBinding(bindingKey);
    if (!b || !d.bindings.has(bindingKey) || isDeleting(b)) return;
    const name = b.metadata.name!;
    const gate = d.resourceGate ?? ResourceGate.DEFAULT;
    const allowed = gate.decide(exportOfBinding(name), 'export');
    if (!allowed.allowed) {
      this.setState(bindingKey, { status: 'False', reason: RESOURCE_NOT_ALLOWED_REASON, message: gate.refusal(allowed) });
      return;
    }
    const exp = d.exports.getByName(d.clusterNamespace, name);
    if (!exp) {
      this.setState(bindingKey, {
        status: 'False',
        reason: 'APIServiceExportNotFound',
        message: `APIServiceExport ${name} not found in namespace ${d.clusterNamespace} on the provider; ask the provider to export ${name} or rerun kubectl bind`,
      });
      return;
    }
    let want: CRD;
    try {
      want = exportToCRD(exp, b);
    } catch (e) {
      this.setState(bindingKey, {
        status: 'False',
        reason: 'CustomResourceDefinitionCreateFailed',
        message: `APIServiceExport ${name} is not usable: ${(e as Error).message}`,
      });
      return;
    }
    if (want.metadata.name !== name) {
      this.setState(bindingKey, {
        status: 'False',
        reason: 'CustomResourceDefinitionCreateFailed',
        message: `APIServiceExport ${name} describes ${want.metadata.name}; export and binding names must equal <plural>.<group>`,
      });
      return;
    }
    let live = d.crds.getByName(undefined, name);
    if (live && !isOwnedBy(live, b) && controllerOf(live)?.name === name && live.metadata.labels?.[EXPORTED_LABEL] === 'true' && d.ownerBindingGone(live)) {
      // Made by a konnector for a binding of the same name that is gone (e.g. deleted with its finalizer
      // removed by hand, then created again): adopt it instead of calling it foreign; its objects stay.
      const old = controllerOf(live)!;
      live = await d.app.update<CRD>(CoreResources.crds, {
        ...live,
        metadata: {
          ...live.metadata,
          ownerReferences: [...(live.metadata.ownerReferences ?? []).filter((r) => r.uid !== old.uid), bindingOwnerRef(b)],
        },
      });
      d.log.info({ crd: name, previousOwnerUid: old.uid, binding: bindingKey }, 'adopted the CustomResourceDefinition of a deleted binding of the same name');
    }
    if (live && !isOwnedBy(live, b)) {
      const owner = controllerOf(live);
      this.setState(bindingKey, {
        status: 'False',
        reason: 'ForeignCustomResourceDefinition',
        message: `CustomResourceDefinition ${name} already exists and is ${owner ? `owned by ${owner.kind} ${owner.name} (uid ${owner.uid})` : 'not owned by any APIServiceBinding (created by someone else)'}; the konnector does not take it over: delete that CRD (and its objects) or the other binding first`,
      });
      return;
    }
    try {
      if (!live) {
        await d.app.create(CoreResources.crds, want);
        d.log.info({ crd: name }, 'created CustomResourceDefinition from APIServiceExport');
      } else if (crdNeedsUpdate(live, want)) {
        await d.app.update(CoreResources.crds, { ...live, spec: { ...live.spec, ...want.spec } });
        d.log.info({ crd: name }, 'updated CustomResourceDefinition to follow the APIServiceExport');
      }
    } catch (e) {
      const reason = live ? 'CustomResourceDefinitionUpdateFailed' : 'CustomResourceDefinitionCreateFailed';
      this.setState(bindingKey, {
        status: 'False',
        reason,
        message: `${live ? 'updating' : 'creating'} CustomResourceDefinition ${name} failed: ${(e as Error).message}`,
      });
      if (isAlreadyExists(e)) throw e;
      return;
    }
    const established = crdEstablished(d.crds.getByName(undefined, name));
    this.setState(
      bindingKey,
      established
        ? { status: 'True', reason: 'Connected', message: `bound to APIServiceExport ${d.clusterNamespace}/${name}` }
        : {
            status: 'False',
            reason: 'CustomResourceDefinitionNotEstablished',
            message: `waiting for CustomResourceDefinition ${name} to be established`,
          },
    );
  }
}
