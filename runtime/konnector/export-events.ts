/**
 * Which of an export's two controllers an app-cluster update concerns (export-sync.ts wires it).
 *
 * Every synced object is updated on the app cluster at least once by the konnector itself: the
 * finalizer the spec side adds before it creates the upstream copy. The watch event of that update
 * used to queue a spec reconcile and a status reconcile that found nothing to do (the reconcile that
 * wrote the finalizer went on to create the copy with the object the API server returned), two of the
 * five reconciles of an object's way up. An update is passed on only to the side it can concern:
 *
 * - spec up reads the consumer object's `spec`, its deletion and its finalizers (the labels and
 *   annotations that cross are copied when the upstream copy is created, never later): it is queued
 *   when the spec may have changed (`metadata.generation` differs, or either object has none), the
 *   deletion began, or the konnector's finalizer is missing;
 * - status down overwrites an app-cluster `status` that differs from the provider's: it is queued when
 *   the app-cluster status changed.
 *
 * A resync (the informer hands the cached object as both old and new) concerns both sides.
 */
import type { KubeObject } from '../core/client.js';
import { deepEqual, hasFinalizer } from './metadata.js';
import { SYNCER_FINALIZER } from './types.js';

/** What one update of a consumer object concerns. */
export interface ConsumerUpdateConcerns {
  /** The spec side (export-spec.ts) must look at the object again. */
  readonly up: boolean;
  /** The status side (export-status.ts) must look at the object's upstream copy again. */
  readonly down: boolean;
}

const status = (o: KubeObject): unknown => (o as { status?: unknown }).status;

/** Whether `next` may differ from `prev` in its spec: a generation that differs, or none to compare. */
export function specMayDiffer(prev: KubeObject, next: KubeObject): boolean {
  const a = prev.metadata.generation;
  return typeof a !== 'number' || a !== next.metadata.generation;
}

/** See the file comment. */
export function consumerUpdateConcerns(prev: KubeObject, next: KubeObject): ConsumerUpdateConcerns {
  if (prev === next) return { up: true, down: true };
  const up = specMayDiffer(prev, next) || prev.metadata.deletionTimestamp !== next.metadata.deletionTimestamp || !hasFinalizer(next, SYNCER_FINALIZER);
  return { up, down: !deepEqual(status(prev), status(next)) };
}
