/**
 * Status-down reconciler of one export (key: the upstream object's `namespace/name`, or `name`):
 * the upstream `.status` → the consumer object's status subresource. The provider owns `status`, the
 * app cluster `spec`. An upstream object with the bound annotation whose consumer object is gone is
 * deleted (catches deletes missed while the konnector was down); one without it was created by the
 * provider and goes to adoption (export-adoption.ts).
 */
import type { Logger } from 'pino';
import { isConflict, isNotFound, splitKey, type KubeClient, type KubeObject, type ResourceRef } from '../core/client.js';
import { RequeueError } from '../core/controller.js';
import type { ObjectCache } from '../core/object-cache.js';
import type { IsolationStrategy, Loc } from './export-isolation.js';
import { deepEqual, isDeleting } from './metadata.js';
import { BOUND_ANNOTATION } from './types.js';
import type { BindingGuard } from './binding-guard.js';

export interface StatusDownDeps {
  /** The bound resource on the app cluster. */
  readonly resource: ResourceRef;
  /** The same resource on the provider. */
  readonly providerResource: ResourceRef;
  readonly isolation: IsolationStrategy;
  /** The consumer objects (the app cluster's informer). */
  readonly consumers: ObjectCache;
  /** The upstream objects (the provider's informer). */
  readonly providers: ObjectCache;
  readonly app: Pick<KubeClient, 'updateStatus'>;
  readonly provider: Pick<KubeClient, 'delete'>;
  /** Adoption of provider-created objects. */
  readonly adoption: { adopt(up: KubeObject, c: Loc): Promise<'adopt'> };
  /** The binding's write budget per object (binding-guard.ts): a status fight backs off instead of writing for ever. */
  readonly guard?: Pick<BindingGuard, 'write' | 'settled' | 'forget'>;
  readonly log: Logger;
}

/** What one reconcile wrote: the operation (for the sync metrics), or undefined when nothing. */
export type StatusDownResult = 'status' | 'delete-orphan' | 'adopt' | undefined;

export class StatusDownReconciler {
  constructor(private readonly d: StatusDownDeps) {}

  async reconcile(key: string): Promise<StatusDownResult> {
    const d = this.d;
    const { namespace, name } = splitKey(key);
    const up = d.providers.getByName(d.providerResource.namespaced ? namespace : undefined, name);
    if (!up) return undefined; // the spec side recreates it or releases the finalizer
    const c = d.isolation.toConsumer(up);
    if (!c) return undefined;
    const down = d.consumers.getByName(c.namespace, c.name);
    if (!down) {
      if (isDeleting(up)) return undefined;
      if (up.metadata.annotations?.[BOUND_ANNOTATION] === 'true') {
        // Synced from an object that no longer exists downstream (deleted while we were away).
        await d.provider.delete(d.providerResource, up.metadata.namespace, up.metadata.name!, { uid: up.metadata.uid });
        d.log.info({ upstream: key }, 'deleted orphaned upstream object: its app-cluster object is gone');
        return 'delete-orphan';
      }
      return d.adoption.adopt(up, c);
    }
    if (isDeleting(down)) return undefined;
    const upStatus = (up as { status?: unknown }).status;
    const downStatus = (down as { status?: unknown }).status;
    const what = `status of ${d.resource.plural} ${c.namespace ? c.namespace + '/' : ''}${c.name}`;
    if (upStatus === undefined || deepEqual(upStatus, downStatus)) {
      d.guard?.settled('down', what);
      return undefined;
    }
    d.guard?.write('down', what); // throws RequeueError once the object's write budget is spent
    try {
      await d.app.updateStatus(d.resource, { ...down, status: upStatus });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      if (isConflict(e)) throw new RequeueError('app-cluster object changed while copying status', 50);
      throw e;
    }
    return 'status';
  }
}
