/**
 * The restart schedule of `npm run bench:soak` and the leader-lease sanity rule it applies after a
 * backend restart. Pure: the soak kills and starts the processes, reads the Lease and the replicas'
 * /readyz, and asks these functions what to kill next and whether what it saw is sane.
 */

export type ProcessKind = 'konnector' | 'backend';

export type RestartTarget =
  | {
      kind: 'konnector';
      /** 0-based index among the konnectors */
      index: number;
    }
  | {
      kind: 'backend';
      /** which replica: the one holding the leader Lease, or one standing by (which one, the soak picks in turn) */
      role: 'leader' | 'standby';
    };

/**
 * The process to kill at restart tick `tick` (0-based): konnectors and backend replicas alternate,
 * a konnector first, the konnectors in turn (0, 1, 2, 0, …), the backend kills alternating between
 * the leader and a standby replica, the leader first (with one replica, always the leader). With no
 * process of one kind, only the other kind is restarted.
 */
export function restartTarget(tick: number, konnectors: number, backends: number): RestartTarget {
  if (!Number.isInteger(tick) || tick < 0) throw new Error(`restartTarget: tick is ${tick}, not an integer >= 0`);
  for (const [what, n] of [
    ['konnectors', konnectors],
    ['backends', backends],
  ] as const)
    if (!Number.isInteger(n) || n < 0) throw new Error(`restartTarget: ${what} is ${n}, not an integer >= 0`);
  if (konnectors === 0 && backends === 0) throw new Error('restartTarget: no konnector and no backend to restart');
  const backend = (round: number): RestartTarget => ({ kind: 'backend', role: backends > 1 && round % 2 === 1 ? 'standby' : 'leader' });
  if (backends === 0) return { kind: 'konnector', index: tick % konnectors };
  if (konnectors === 0) return backend(tick);
  const round = Math.floor(tick / 2);
  return tick % 2 === 0 ? { kind: 'konnector', index: round % konnectors } : backend(round);
}

/**
 * Offsets (ms from the start of the churn) of the restart ticks: every `everyMs`, strictly before
 * the churn ends; none when `everyMs` is 0 (restarts off).
 */
export function restartTicks(churnMs: number, everyMs: number): number[] {
  if (!(everyMs >= 0)) throw new Error(`restartTicks: everyMs is ${everyMs}, must be >= 0`);
  if (everyMs === 0) return [];
  const out: number[] = [];
  for (let t = everyMs; t < churnMs; t += everyMs) out.push(t);
  return out;
}

export interface LeaseView {
  holderIdentity?: string;
  renewTime?: string;
  leaseDurationSeconds?: number;
}

export interface ReplicaView {
  /** e.g. `backend-1` */
  name: string;
  /** its leader-election identity (the soak sets POD_NAME per incarnation) */
  identity: string;
  /** the process runs (not killed, not exited) */
  alive: boolean;
  /** the role line of its /readyz (`role: leader`, `role: standby (leader: …)`), undefined when unreachable */
  role?: string;
}

/**
 * Whether the backend's leader Lease is sane: held, not expired at `now`, by a live replica, which
 * says `role: leader` on /readyz while every other live replica says `role: standby`. Returns the
 * leader's name, or what is wrong.
 */
export function leaseSanity(lease: LeaseView | undefined, replicas: readonly ReplicaView[], now: number): { leader: string } | { problem: string } {
  if (!lease?.holderIdentity) return { problem: 'the Lease has no holder' };
  const renewed = lease.renewTime ? Date.parse(lease.renewTime) : NaN;
  const duration = (lease.leaseDurationSeconds ?? NaN) * 1000;
  if (!Number.isFinite(renewed) || !Number.isFinite(duration)) {
    return { problem: `the Lease held by ${lease.holderIdentity} has renewTime ${lease.renewTime} and leaseDurationSeconds ${lease.leaseDurationSeconds}` };
  }
  if (renewed + duration < now) return { problem: `the Lease held by ${lease.holderIdentity} expired ${((now - renewed - duration) / 1000).toFixed(1)} s ago` };
  const holder = replicas.find((r) => r.identity === lease.holderIdentity);
  if (!holder) return { problem: `the Lease holder ${lease.holderIdentity} is none of the replicas (${replicas.map((r) => r.identity).join(', ')})` };
  if (!holder.alive) return { problem: `the Lease holder ${holder.name} (${holder.identity}) is not running` };
  const live = replicas.filter((r) => r.alive);
  const leaders = live.filter((r) => r.role === 'role: leader');
  if (leaders.length !== 1 || leaders[0] !== holder) {
    return { problem: `the Lease names ${holder.name}, /readyz says leader: ${leaders.map((r) => r.name).join(', ') || 'none'}` };
  }
  const notStandby = live.filter((r) => r !== holder && !r.role?.startsWith('role: standby'));
  if (notStandby.length) return { problem: `not standby: ${notStandby.map((r) => `${r.name} (${r.role ?? 'unreachable'})`).join(', ')}` };
  return { leader: holder.name };
}
