/**
 * Adoption of one export's provider-created objects: an upstream object without the bound
 * annotation that maps to this consumer was made by the provider; it is created downstream (with the
 * syncer finalizer and the adopted annotation, only the labels and annotations `metadata` lets
 * cross) and both sides are marked bound. At most
 * `budget.max` adopted objects per app-cluster namespace: past it the konnector adopts no more there
 * and says so. Called by the status-down reconciler (export-status.ts) for an upstream object
 * without a downstream one.
 */
import type { Logger } from 'pino';
import { isAlreadyExists, keyOf, type KubeClient, type KubeObject, type ResourceRef } from '../core/client.js';
import { RequeueError } from '../core/controller.js';
import type { ObjectCache } from '../core/object-cache.js';
import type { Loc } from './export-isolation.js';
import { cleanMeta, copyWithMeta, type MetadataFilter } from './metadata.js';
import type { NamespaceBudget } from './namespace-budget.js';
import { ADOPTED_ANNOTATION, BOUND_ANNOTATION, SYNCER_FINALIZER } from './types.js';

export interface AdoptionDeps {
  /** The bound resource on the app cluster. */
  readonly resource: ResourceRef;
  /** The same resource on the provider. */
  readonly providerResource: ResourceRef;
  /** The consumer objects (the app cluster's informer). */
  readonly consumers: ObjectCache;
  readonly app: Pick<KubeClient, 'create'>;
  readonly provider: Pick<KubeClient, 'mergePatch'>;
  /** Provider-created objects the provider may make us adopt per app-cluster namespace. */
  readonly budget: NamespaceBudget;
  /** The provider object's label and annotation keys that go onto the app-cluster object. */
  readonly metadata: MetadataFilter;
  readonly log: Logger;
}

export class AdoptionReconciler {
  constructor(private readonly d: AdoptionDeps) {}

  /** Adopts the provider-created `up` as the consumer object at `c`. */
  async adopt(up: KubeObject, c: Loc): Promise<'adopt'> {
    const d = this.d;
    const ns = c.namespace ?? '';
    const adopted = d.consumers
      .list(c.namespace)
      .filter((o) => o.metadata.annotations?.[ADOPTED_ANNOTATION] === 'true')
      .map((o) => o.metadata.name!);
    if (!d.budget.tryTake(ns, c.name, adopted)) {
      const max = d.budget.max;
      d.log.warn({ upstream: keyOf(up), namespace: c.namespace, max }, 'the provider has adopted the most objects it may in this namespace; not adopting more');
      throw new RequeueError(`at most ${max} provider-created objects per namespace`, 60_000);
    }
    // The provider's copies of the konnector's own keys (cluster-namespace, consumer-spec-hash, …) are dropped by cleanMeta.
    const meta = cleanMeta(up.metadata, c.name, c.namespace, { [BOUND_ANNOTATION]: 'true', [ADOPTED_ANNOTATION]: 'true' }, d.metadata);
    meta.finalizers = [SYNCER_FINALIZER];
    const copy = copyWithMeta(up, meta);
    try {
      await d.app.create(d.resource, copy);
    } catch (e) {
      if (!isAlreadyExists(e)) {
        d.budget.release(ns, c.name);
        throw e;
      }
    }
    await d.provider.mergePatch(d.providerResource, up.metadata.namespace, up.metadata.name!, {
      metadata: { annotations: { [BOUND_ANNOTATION]: 'true' } },
    });
    d.log.info({ upstream: keyOf(up) }, 'adopted provider-created object into the app cluster');
    return 'adopt';
  }
}
