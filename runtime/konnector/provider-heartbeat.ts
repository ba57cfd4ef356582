/**
 * Heartbeat reconciler of a provider connection: writes the ClusterBinding status
 * (lastHeartbeatTime, heartbeatInterval, konnectorVersion) and rotates credentials (the provider's
 * kubeconfig Secret → the consumer's kubeconfig Secrets of the attached bindings).
 */
import type { Logger } from 'pino';
import { CoreResources, type KubeClient } from '../core/client.js';
import { recordEvent } from '../core/events.js';
import { KubeconfigError, parseKubeconfigSecret } from './kubeconfig.js';
import { CREDENTIAL_EXPIRY_ANNOTATION, CredentialSealError, SEALED_KUBECONFIG_ANNOTATION, unsealKubeconfig } from '../../contract/credential.js';
import { ApiError } from '../core/client.js';
import type { Reconciler, ReconcileResult } from '../core/controller.js';
import type { ObjectCache } from '../core/object-cache.js';
import type { KonnectorMetrics } from './metrics.js';
import { sameState, type AttachedBindings, type ConditionState } from './provider-state.js';
import { CLUSTER_BINDING_NAME, type APIServiceBinding, type ClusterBinding, type Secret } from './types.js';
import { BINDING_RESOURCES, BIND_API_VERSION, apiServiceBindingKind } from '../../contract/index.js';

/** Go's time.Duration String() for whole seconds (e.g. 5m0s, 30s, 1h0m0s). */
export function goDuration(ms: number): string {
  let s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (h) return `${h}h${m}m${s}s`;
  if (m) return `${m}m${s}s`;
  return `${s}s`;
}

/** How far in the future a ClusterBinding's lastHeartbeatTime may be and still count as this konnector's (clock skew). */
export const FUTURE_SKEW_MS = 60_000;

/** How long before the credential's maximum life ends the Heartbeating message says so. */
export const ENDING_SOON_MS = 7 * 24 * 3600_000;

/** Relative jitter of the heartbeat requeue: interval/2 × (1 ± 0.1). */
export const HEARTBEAT_JITTER = 0.1;

/**
 * Delay until the next heartbeat: interval/2 × (1 + j), j uniform in [-HEARTBEAT_JITTER, +HEARTBEAT_JITTER]
 * from `random()` in [0, 1) (0 → 0.9×, 0.5 → 1×, 1 → 1.1×; values outside are clamped, NaN counts as 0.5),
 * never below 1000 ms. Konnectors that start together (a control-plane outage, a fleet rollout) drift
 * apart instead of heartbeating in lockstep forever.
 *
 * Still safe for stale detection: the longest gap between two written heartbeats grows from 0.5 to 0.55 ×
 * the interval; the backend marks a ClusterBinding unhealthy only after `--heartbeat-timeout` (default
 * 2 × heartbeatInterval) and the KlutchKonnectorNotHeartbeating alert fires after 3 intervals, so +10 % of
 * interval/2 stays well inside both. The shortest gap (0.45 × interval) stays above the interval/4 "fresh"
 * threshold of reconcile(), so every timer-driven reconcile still writes a heartbeat.
 */
export function heartbeatRequeueMs(intervalMs: number, random: () => number): number {
  const r = random();
  const u = Number.isNaN(r) ? 0.5 : Math.min(1, Math.max(0, r));
  const j = HEARTBEAT_JITTER * (2 * u - 1);
  return Math.max(1000, Math.floor((intervalMs / 2) * (1 + j)));
}

export interface HeartbeatDeps {
  readonly provider: KubeClient;
  /** Client of the cluster holding the APIServiceBindings and their kubeconfig Secrets. */
  readonly bindingClient: KubeClient;
  readonly clusterNamespace: string;
  readonly clusterBindings: ObjectCache<ClusterBinding>;
  readonly bindings: AttachedBindings;
  getBinding(key: string): APIServiceBinding | undefined;
  readonly log: Logger;
  readonly metrics: KonnectorMetrics;
  readonly heartbeatIntervalMs: number;
  readonly version: string;
  /** Control-plane mode: no credential rotation. */
  readonly controlPlaneMode: boolean;
  /** The rotation key of the current provider kubeconfig (contract/credential.ts), if it has one. */
  readonly rotationKey?: Buffer;
  /** Called when the heartbeat state or the provider's pretty name changed. */
  changed(): void;
  /** Source of the requeue jitter, uniform in [0, 1). @default Math.random */
  readonly random?: () => number;
  /** Clock in epoch ms (heartbeat age, heartbeat time, credential-check age). @default Date.now */
  readonly now?: () => number;
}

/** The last credential-rotation check that read the provider Secret. */
interface RotationCheck {
  /** Clock value when the check started. */
  readonly at: number;
  /** The provider Secret/key and the consumer Secrets it was compared with. */
  readonly what: string;
  /** Its note for the condition message ('' when nothing is wrong). */
  readonly note: string;
}

export class HeartbeatReconciler implements Reconciler {
  private current: ConditionState = { status: 'Unknown', reason: 'HeartbeatPending', message: 'the first heartbeat has not been sent yet' };
  private prettyName: string | undefined;
  private last: Date | undefined;
  private rotation: RotationCheck | undefined;
  private readonly random: () => number;
  private readonly now: () => number;

  constructor(private readonly deps: HeartbeatDeps) {
    this.random = deps.random ?? Math.random;
    this.now = deps.now ?? Date.now;
  }

  /** The Heartbeating condition of the attached bindings. */
  get state(): ConditionState {
    return this.current;
  }

  /** ClusterBinding spec.providerPrettyName as last seen. */
  get providerPrettyName(): string | undefined {
    return this.prettyName;
  }

  /** When this konnector last wrote a heartbeat. */
  get lastHeartbeat(): Date | undefined {
    return this.last;
  }

  async reconcile(): Promise<ReconcileResult> {
    const d = this.deps;
    const interval = d.heartbeatIntervalMs;
    // A reconcile triggered by the echo of our own status write also draws a delay; the queue keeps the
    // earlier of the pending and the new one, so the period stays within [0.9, 1.1] × interval/2.
    const requeue = { requeueAfterMs: heartbeatRequeueMs(interval, this.random) };
    const cb = d.clusterBindings.getByName(d.clusterNamespace, CLUSTER_BINDING_NAME);
    if (!cb) {
      this.setState({
        status: 'False',
        reason: 'ClusterBindingNotFound',
        message: `ClusterBinding "${CLUSTER_BINDING_NAME}" not found in namespace ${d.clusterNamespace} on the provider; the provider creates it when you bind, so rerun kubectl bind`,
      });
      return requeue;
    }
    if (this.prettyName !== cb.spec?.providerPrettyName) {
      this.prettyName = cb.spec?.providerPrettyName;
      d.changed();
    }
    const last = cb.status?.lastHeartbeatTime ? Date.parse(cb.status.lastHeartbeatTime) : 0;
    const want = { heartbeatInterval: goDuration(interval), konnectorVersion: d.version };
    // A time in the future is not fresh (beyond a minute of clock skew): someone with the consumer
    // kubeconfig wrote it, and the konnector writes over it instead of leaving it for ever.
    const age = this.now() - last;
    const fresh = age >= -FUTURE_SKEW_MS && age < interval / 4;
    const write = !fresh || cb.status?.heartbeatInterval !== want.heartbeatInterval || cb.status?.konnectorVersion !== want.konnectorVersion;
    let rotationNote = '';
    if (!d.controlPlaneMode) rotationNote = await this.rotateCredentials(cb, interval, write);

    const m = { cluster_namespace: d.clusterNamespace };
    d.metrics.heartbeatInterval.set(m, interval / 1000);
    if (write) {
      const now = new Date(this.now());
      try {
        await d.provider.mergePatch(
          BINDING_RESOURCES.clusterBindings,
          d.clusterNamespace,
          CLUSTER_BINDING_NAME,
          {
            status: { ...want, lastHeartbeatTime: now.toISOString().replace(/\.\d{3}Z$/, 'Z') },
          },
          'status',
        );
      } catch (e) {
        d.metrics.heartbeats.inc({ ...m, result: 'error' });
        const revoked = e instanceof ApiError && e.code === 401;
        this.setState(
          revoked
            ? {
                status: 'False',
                reason: 'CredentialRejected',
                message: `the provider rejected this binding's credential (401 Unauthorized): it was revoked (kubectl bind revoke), replaced by a newer bind of this app cluster, or reached its maximum life${this.endNote(cb)}; run kubectl bind again`,
              }
            : {
                status: 'False',
                reason: 'ClusterBindingUpdateFailed',
                message: `could not write the heartbeat into ClusterBinding ${d.clusterNamespace}/${CLUSTER_BINDING_NAME}: ${(e as Error).message}; check that the provider credentials may patch clusterbindings/status`,
              },
        );
        throw e;
      }
      this.last = now;
      d.metrics.heartbeats.inc({ ...m, result: 'success' });
      d.metrics.lastHeartbeat.set(m, Math.floor(now.getTime() / 1000));
    } else {
      d.metrics.lastHeartbeat.set(m, Math.floor(last / 1000));
    }
    // The message names the nominal period, not this draw: a per-draw value would change the condition
    // (and wake the bindings controller) on every heartbeat.
    this.setState({
      status: 'True',
      reason: 'HeartbeatSent',
      message: `heartbeat every ${goDuration(interval / 2)} (±${HEARTBEAT_JITTER * 100} % jitter)${rotationNote}${this.endingNote(cb)}`,
    });
    return requeue;
  }

  /**
   * Copies the provider's kubeconfig Secret over the consumer's when they differ. Returns a note for the message.
   *
   * Skips the read (and keeps the previous note) when this reconcile writes no heartbeat and the last check
   * that read the Secret, for the same Secret and the same consumer Secrets, started less than interval/4
   * ago. That is the reconcile on the watch echo of our own status write, which otherwise costs the
   * control plane a second GET of the Secret per heartbeat. interval/4 is the "fresh" threshold of
   * reconcile(): it scales with the interval (a fixed 30 s would exceed interval/2 for intervals below 1 min)
   * and stays below the shortest timer period (0.45 × interval). Bound: every reconcile that writes a
   * heartbeat reads the Secret, so a rotated provider kubeconfig reaches the consumer with the next written
   * heartbeat — normally the next timer tick, ≤ 0.55 × interval later; if an unrelated ClusterBinding event
   * wrote the heartbeat in between, ≤ 0.8 × interval (interval/4 + one timer period). Rotation is not
   * urgent at that scale: the old provider credentials stay valid while the new ones are distributed.
   * A failed read or copy is not remembered, so the next reconcile tries again.
   */
  private async rotateCredentials(cb: ClusterBinding, interval: number, writesHeartbeat: boolean): Promise<string> {
    const d = this.deps;
    const ref = cb.spec?.kubeconfigSecretRef;
    if (!ref?.name) {
      this.rotation = undefined;
      return '';
    }
    const key = ref.key ?? 'kubeconfig';
    const sealed = cb.metadata.annotations?.[SEALED_KUBECONFIG_ANNOTATION];
    const targets = new Map<string, { namespace: string; name: string; key: string; binding: APIServiceBinding }>();
    for (const k of d.bindings.keys()) {
      const b = d.getBinding(k);
      const r = b?.spec.kubeconfigSecretRef;
      if (b && r) targets.set(`${r.namespace}/${r.name}/${r.key}`, { ...r, binding: b });
    }
    const what = [sealed === undefined ? `${ref.name}/${key}` : `sealed:${sealed.slice(-24)}`, ...[...targets.keys()].sort()].join(' ');
    const at = this.now();
    const prev = this.rotation;
    if (!writesHeartbeat && prev?.what === what && at >= prev.at && at - prev.at < interval / 4) return prev.note;
    this.rotation = undefined;
    let src: Secret | undefined;
    if (sealed !== undefined) {
      // klutch-backend seals the rotated kubeconfig into the ClusterBinding (contract/credential.ts): the
      // consumer credential cannot read the Secret, so a leaked token cannot fetch its successor
      if (!d.rotationKey) {
        const note = `; credential rotation unavailable: this binding's kubeconfig has no rotation key (bound by an older klutch-kit); run kubectl bind again before the token expires`;
        this.rotation = { at, what, note };
        return note;
      }
      try {
        const text = unsealKubeconfig(d.rotationKey, d.clusterNamespace, sealed);
        src = { metadata: { name: ref.name, namespace: d.clusterNamespace }, data: { [key]: Buffer.from(text).toString('base64') } };
      } catch (e) {
        if (!(e instanceof CredentialSealError)) throw e;
        d.log.warn({ err: e.message }, 'refused the sealed provider kubeconfig for credential rotation');
        const note = `; credential rotation refused: ClusterBinding ${d.clusterNamespace}/${CLUSTER_BINDING_NAME}: ${e.message}; run kubectl bind again`;
        this.rotation = { at, what, note };
        return note;
      }
    } else {
      try {
        // Klutch's backend (and older klutch-kit): the kubeconfig Secret itself
        src = await d.provider.getOrNull<Secret>(CoreResources.secrets, d.clusterNamespace, ref.name);
      } catch (e) {
        d.log.warn({ err: (e as Error).message }, 'cannot read the provider kubeconfig Secret for credential rotation');
        return `; credential rotation unavailable: cannot read Secret ${d.clusterNamespace}/${ref.name} on the provider`;
      }
    }
    const value = src?.data?.[key];
    if (!value) {
      const note = src
        ? `; credential rotation unavailable: Secret ${d.clusterNamespace}/${ref.name} on the provider has no key "${key}"`
        : `; credential rotation unavailable: Secret ${d.clusterNamespace}/${ref.name} not found on the provider`;
      this.rotation = { at, what, note };
      return note;
    }
    // The provider writes this Secret: what it hands over is checked as strictly as what kubectl bind
    // received (inline credentials only, the same cluster namespace), before it replaces a working one.
    const where = { namespace: d.clusterNamespace, name: ref.name, key };
    let next: ReturnType<typeof parseKubeconfigSecret>;
    try {
      next = parseKubeconfigSecret(src, where);
    } catch (e) {
      if (!(e instanceof KubeconfigError)) throw e;
      d.log.warn({ secret: `${d.clusterNamespace}/${ref.name}`, err: e.message }, 'refused the provider kubeconfig for credential rotation');
      const note = `; credential rotation refused: ${e.message}`;
      this.rotation = { at, what, note };
      return note;
    }
    if (next.namespace !== d.clusterNamespace) {
      const note = `; credential rotation refused: the new kubeconfig in Secret ${d.clusterNamespace}/${ref.name} on the provider names cluster namespace "${next.namespace}", not "${d.clusterNamespace}"`;
      d.log.warn({ secret: `${d.clusterNamespace}/${ref.name}`, namespace: next.namespace }, 'refused the provider kubeconfig for credential rotation');
      this.rotation = { at, what, note };
      return note;
    }
    for (const t of targets.values()) {
      const cur = await d.bindingClient.getOrNull<Secret>(CoreResources.secrets, t.namespace, t.name);
      if (!cur || cur.data?.[t.key] === value) continue;
      const before = serverOf(cur, t);
      await d.bindingClient.mergePatch(CoreResources.secrets, t.namespace, t.name, { data: { [t.key]: value } });
      d.log.info({ secret: `${t.namespace}/${t.name}` }, 'rotated the provider kubeconfig into the consumer Secret');
      if (before !== undefined && before !== next.server) await this.serverChanged(t.binding, before, next.server, `${t.namespace}/${t.name}`);
    }
    this.rotation = { at, what, note: '' };
    return '';
  }

  /** A warning when the credential's maximum life ends within {@link ENDING_SOON_MS} (stable: names the end, not the time left). */
  private endingNote(cb: ClusterBinding): string {
    const end = cb.metadata.annotations?.[CREDENTIAL_EXPIRY_ANNOTATION];
    const t = Date.parse(end ?? '');
    if (Number.isNaN(t) || t - this.now() > ENDING_SOON_MS) return '';
    return `; the provider credential reaches its maximum life at ${end}: run kubectl bind again before then`;
  }

  /** ` (its maximum life ended at …)` when the ClusterBinding named an end that has passed. */
  private endNote(cb: ClusterBinding): string {
    const end = cb.metadata.annotations?.[CREDENTIAL_EXPIRY_ANNOTATION];
    const t = Date.parse(end ?? '');
    return !Number.isNaN(t) && t <= this.now() ? ` (its maximum life ended at ${end})` : '';
  }

  /** A rotation that moves a binding to another API server is logged and shown as an Event on the binding. */
  private async serverChanged(binding: APIServiceBinding, from: string, to: string, secret: string): Promise<void> {
    const d = this.deps;
    const message = `the provider moved this binding from API server ${from} to ${to} (credential rotation of Secret ${secret}); the konnector now talks to ${to}`;
    d.log.warn({ binding: binding.metadata.name, from, to }, 'provider API server changed by credential rotation');
    await recordEvent(
      d.bindingClient,
      {
        apiVersion: binding.apiVersion ?? BIND_API_VERSION,
        kind: apiServiceBindingKind.kind,
        name: binding.metadata.name!,
        namespace: binding.metadata.namespace ?? d.clusterNamespace,
        uid: binding.metadata.uid,
      },
      { type: 'Warning', reason: 'ProviderServerChanged', message },
      {
        component: 'konnector',
        now: new Date(this.now()),
        onError: (err) => d.log.warn({ err: err.message }, 'cannot record the ProviderServerChanged event'),
      },
    );
  }

  private setState(s: ConditionState): void {
    const changed = !sameState(this.current, s);
    this.current = s;
    if (changed) this.deps.changed();
  }
}

/** The API server a consumer kubeconfig Secret names today (undefined when it cannot be read). */
function serverOf(secret: Secret, ref: { namespace: string; name: string; key: string }): string | undefined {
  try {
    return parseKubeconfigSecret(secret, ref, { requireNamespace: false }).server;
  } catch {
    return undefined;
  }
}
