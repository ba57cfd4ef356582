/** Adding and removing the operator's finalizer with a JSON patch guarded by resourceVersion. */
import { isNotFound, type KubeClient, type KubeObject, type ResourceRef } from '../../runtime/core/client.js';
import { FINALIZER } from './types.js';

export const hasFinalizer = (o: KubeObject): boolean => (o.metadata.finalizers ?? []).includes(FINALIZER);

export async function addFinalizer(client: KubeClient, ref: ResourceRef, o: KubeObject): Promise<void> {
  if (hasFinalizer(o)) return;
  const ops = o.metadata.finalizers
    ? [
        { op: 'test', path: '/metadata/resourceVersion', value: o.metadata.resourceVersion },
        { op: 'add', path: '/metadata/finalizers/-', value: FINALIZER },
      ]
    : [
        { op: 'test', path: '/metadata/resourceVersion', value: o.metadata.resourceVersion },
        { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] },
      ];
  await client.jsonPatch(ref, o.metadata.namespace, o.metadata.name!, ops);
}

export async function removeFinalizer(client: KubeClient, ref: ResourceRef, o: KubeObject): Promise<void> {
  const i = (o.metadata.finalizers ?? []).indexOf(FINALIZER);
  if (i < 0) return;
  try {
    await client.jsonPatch(ref, o.metadata.namespace, o.metadata.name!, [
      { op: 'test', path: '/metadata/resourceVersion', value: o.metadata.resourceVersion },
      { op: 'remove', path: `/metadata/finalizers/${i}` },
    ]);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}
