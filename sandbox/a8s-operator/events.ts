/** Kubernetes Events on the a8s objects (best effort), so `kubectl describe` shows what the operator did. */
import type { Logger } from 'pino';
import { apiVersionOf, type KubeClient, type KubeObject, type ResourceRef } from '../../runtime/core/client.js';
import { A8S_RESOURCES, OPERATOR_NAME } from './types.js';

export type EventType = 'Normal' | 'Warning';

export async function recordEvent(
  client: KubeClient,
  ref: ResourceRef,
  obj: KubeObject,
  type: EventType,
  reason: string,
  message: string,
  log?: Logger,
): Promise<void> {
  const now = new Date().toISOString();
  try {
    await client.create(A8S_RESOURCES.events, {
      metadata: { generateName: `${obj.metadata.name}.`, namespace: obj.metadata.namespace! },
      involvedObject: { apiVersion: apiVersionOf(ref), kind: ref.kind, name: obj.metadata.name, namespace: obj.metadata.namespace, uid: obj.metadata.uid },
      type,
      reason,
      message: message.slice(0, 1024),
      source: { component: OPERATOR_NAME },
      reportingComponent: OPERATOR_NAME,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    } as KubeObject);
  } catch (e) {
    log?.debug({ err: (e as Error).message, reason }, 'could not record an event');
  }
}
