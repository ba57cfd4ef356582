/**
 * core/v1 Events about an object, as `kubectl describe` shows them. Best effort by design: a failed
 * event write is reported to the caller's logger, never thrown, so recording cannot break a reconcile.
 */
import type { KubeClient, KubeObject, ResourceRef } from './client.js';
import { nowRfc3339 } from './conditions.js';

export const EVENTS: ResourceRef = { group: '', version: 'v1', plural: 'events', namespaced: true, kind: 'Event' };

export interface EventTarget {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  /** The event's namespace; for a cluster-scoped object the caller's own namespace. */
  readonly namespace: string;
  readonly uid?: string;
}

export interface RecordedEvent {
  readonly type: 'Normal' | 'Warning';
  /** UpperCamelCase, as Kubernetes reasons are. */
  readonly reason: string;
  readonly message: string;
}

/** The Event object for `e` about `target` (exported for tests). */
export function eventObject(target: EventTarget, e: RecordedEvent, component: string, now: Date): KubeObject {
  const t = nowRfc3339(now);
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { generateName: `${target.name}.`, namespace: target.namespace },
    involvedObject: { apiVersion: target.apiVersion, kind: target.kind, name: target.name, namespace: target.namespace, uid: target.uid },
    type: e.type,
    reason: e.reason,
    // The API server refuses messages over 1 KiB.
    message: e.message.length > 1024 ? `${e.message.slice(0, 1021)}...` : e.message,
    source: { component },
    firstTimestamp: t,
    lastTimestamp: t,
    count: 1,
    reportingComponent: component,
  } as unknown as KubeObject;
}

/** Writes an Event; returns false (after calling `onError`) when the API server refused it. */
export async function recordEvent(
  client: KubeClient,
  target: EventTarget,
  e: RecordedEvent,
  opts: { component: string; now?: Date; onError?: (err: Error) => void },
): Promise<boolean> {
  try {
    await client.create(EVENTS, eventObject(target, e, opts.component, opts.now ?? new Date()));
    return true;
  } catch (err) {
    opts.onError?.(err as Error);
    return false;
  }
}
