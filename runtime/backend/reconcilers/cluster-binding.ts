/** clusterbinding (key: `clusterNs/cluster`): `Healthy` from the konnector's heartbeat age. */
import { conditionsEqual, setCondition, type ObjectCache, type ReconcileResult, type Reconciler } from '../../core/index.js';
import { R } from '../refs.js';
import type { ClusterBinding, ReconcilerKube } from './types.js';

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

export interface ClusterBindingReconcilerDeps {
  readonly kube: ReconcilerKube;
  readonly clusterBindings: ObjectCache<ClusterBinding>;
  /** 0: 2 × the konnector's heartbeatInterval. */
  readonly heartbeatTimeoutMs: number;
}

/** How far in the future a heartbeat time may be (the konnector's clock ahead of the backend's). */
export const HEARTBEAT_SKEW_MS = 60_000;

/**
 * Milliseconds since the heartbeat time `at` (0 when it is ahead by at most {@link HEARTBEAT_SKEW_MS});
 * undefined when `at` is no time or further in the future.
 */
export function heartbeatAge(at: string | undefined, now: number): number | undefined {
  const t = Date.parse(at ?? '');
  if (Number.isNaN(t) || t - now > HEARTBEAT_SKEW_MS) return undefined;
  return Math.max(0, now - t);
}

export class ClusterBindingReconciler implements Reconciler {
  constructor(private readonly d: ClusterBindingReconcilerDeps) {}

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const d = this.d;
    const cb = d.clusterBindings.get(key);
    if (!cb || cb.metadata.deletionTimestamp) return;
    const st = cb.status ?? {};
    const intervalMs = parseGoDuration(st.heartbeatInterval);
    let cond: Parameters<typeof setCondition>[1];
    let requeue: number | undefined;
    if (!st.lastHeartbeatTime) {
      cond = {
        type: 'Healthy',
        status: 'False',
        severity: 'Warning',
        reason: 'FirstHeartbeatPending',
        message: 'waiting for the first heartbeat of the konnector',
      };
    } else if (!intervalMs && !d.heartbeatTimeoutMs) {
      cond = {
        type: 'Healthy',
        status: 'False',
        severity: 'Warning',
        reason: 'HeartbeatIntervalMissing',
        message: 'the konnector reported no heartbeatInterval',
      };
    } else {
      const timeout = d.heartbeatTimeoutMs || 2 * intervalMs!;
      const since = heartbeatAge(st.lastHeartbeatTime, Date.now());
      if (since === undefined) {
        // a time in the future (or no time at all) is no heartbeat: written by hand with the consumer
        // credential, or by a konnector whose clock is off. Before, a time in 2099 made a requeue longer
        // than Node's timers allow, i.e. one every millisecond.
        cond = {
          type: 'Healthy',
          status: 'False',
          severity: 'Warning',
          reason: 'HeartbeatInvalid',
          message: `lastHeartbeatTime ${JSON.stringify(st.lastHeartbeatTime.slice(0, 40))} is not a time up to now (clock skew allowed: ${HEARTBEAT_SKEW_MS / 1000}s); is the konnector's clock right?`,
        };
        requeue = timeout;
      } else if (since > timeout) {
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
      await d.kube.updateStatus(R.clusterBindings, { ...cb, status: { ...st, conditions: conds } });
    }
    return requeue !== undefined ? { requeueAfterMs: requeue } : undefined;
  }
}
