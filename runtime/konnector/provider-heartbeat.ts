/**
 * Heartbeat reconciler of a provider connection: writes the ClusterBinding status
 * (lastHeartbeatTime, heartbeatInterval, konnectorVersion) and rotates credentials (the provider's
 * kubeconfig Secret → the consumer's kubeconfig Secrets of the attached bindings).
 */
import type { Logger } from 'pino';
import { CoreResources, type KubeClient } from '../core/client.js';
import type { Reconciler, ReconcileResult } from '../core/controller.js';
import type { KonnectorMetrics } from './metrics.js';
import { sameState, type AttachedBindings, type ConditionState } from './provider-state.js';
import { BindResources, CLUSTER_BINDING_NAME, type APIServiceBinding, type ClusterBinding, type Secret } from './types.js';

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

export interface HeartbeatDeps {
  readonly provider: KubeClient;
  /** Client of the cluster holding the APIServiceBindings and their kubeconfig Secrets. */
  readonly bindingClient: KubeClient;
  readonly clusterNamespace: string;
  readonly clusterBindings: { getByName(namespace: string, name: string): ClusterBinding | undefined };
  readonly bindings: AttachedBindings;
  getBinding(key: string): APIServiceBinding | undefined;
  readonly log: Logger;
  readonly metrics: KonnectorMetrics;
  readonly heartbeatIntervalMs: number;
  readonly version: string;
  /** Control-plane mode: no credential rotation. */
  readonly controlPlaneMode: boolean;
  /** Called when the heartbeat state or the provider's pretty name changed. */
  changed(): void;
}

export class HeartbeatReconciler implements Reconciler {
  private current: ConditionState = { status: 'Unknown', reason: 'HeartbeatPending', message: 'the first heartbeat has not been sent yet' };
  private prettyName: string | undefined;
  private last: Date | undefined;

  constructor(private readonly deps: HeartbeatDeps) {}

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
    const requeue = { requeueAfterMs: Math.max(1000, Math.floor(interval / 2)) };
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
    let rotationNote = '';
    if (!d.controlPlaneMode) rotationNote = await this.rotateCredentials(cb);

    const last = cb.status?.lastHeartbeatTime ? Date.parse(cb.status.lastHeartbeatTime) : 0;
    const want = { heartbeatInterval: goDuration(interval), konnectorVersion: d.version };
    const fresh = Date.now() - last < interval / 4;
    const m = { cluster_namespace: d.clusterNamespace };
    d.metrics.heartbeatInterval.set(m, interval / 1000);
    if (!fresh || cb.status?.heartbeatInterval !== want.heartbeatInterval || cb.status?.konnectorVersion !== want.konnectorVersion) {
      const now = new Date();
      try {
        await d.provider.mergePatch(
          BindResources.clusterBindings,
          d.clusterNamespace,
          CLUSTER_BINDING_NAME,
          {
            status: { ...want, lastHeartbeatTime: now.toISOString().replace(/\.\d{3}Z$/, 'Z') },
          },
          'status',
        );
      } catch (e) {
        d.metrics.heartbeats.inc({ ...m, result: 'error' });
        this.setState({
          status: 'False',
          reason: 'ClusterBindingUpdateFailed',
          message: `could not write the heartbeat into ClusterBinding ${d.clusterNamespace}/${CLUSTER_BINDING_NAME}: ${(e as Error).message}; check that the provider credentials may patch clusterbindings/status`,
        });
        throw e;
      }
      this.last = now;
      d.metrics.heartbeats.inc({ ...m, result: 'success' });
      d.metrics.lastHeartbeat.set(m, Math.floor(now.getTime() / 1000));
    } else {
      d.metrics.lastHeartbeat.set(m, Math.floor(last / 1000));
    }
    this.setState({ status: 'True', reason: 'HeartbeatSent', message: `heartbeat every ${goDuration(interval / 2)}${rotationNote}` });
    return requeue;
  }

  /** Copies the provider's kubeconfig Secret over the consumer's when they differ. Returns a note for the message. */
  private async rotateCredentials(cb: ClusterBinding): Promise<string> {
    const d = this.deps;
    const ref = cb.spec?.kubeconfigSecretRef;
    if (!ref?.name) return '';
    let src: Secret | undefined;
    try {
      src = await d.provider.getOrNull<Secret>(CoreResources.secrets, d.clusterNamespace, ref.name);
    } catch (e) {
      d.log.warn({ err: (e as Error).message }, 'cannot read the provider kubeconfig Secret for credential rotation');
      return `; credential rotation unavailable: cannot read Secret ${d.clusterNamespace}/${ref.name} on the provider`;
    }
    const value = src?.data?.[ref.key ?? 'kubeconfig'];
    if (!value) return `; credential rotation unavailable: Secret ${d.clusterNamespace}/${ref.name} on the provider has no key "${ref.key}"`;
    const targets = new Map<string, { namespace: string; name: string; key: string }>();
    for (const k of d.bindings.keys()) {
      const r = d.getBinding(k)?.spec.kubeconfigSecretRef;
      if (r) targets.set(`${r.namespace}/${r.name}/${r.key}`, r);
    }
    for (const t of targets.values()) {
      const cur = await d.bindingClient.getOrNull<Secret>(CoreResources.secrets, t.namespace, t.name);
      if (!cur || cur.data?.[t.key] === value) continue;
      await d.bindingClient.mergePatch(CoreResources.secrets, t.namespace, t.name, { data: { [t.key]: value } });
      d.log.info({ secret: `${t.namespace}/${t.name}` }, 'rotated the provider kubeconfig into the consumer Secret');
    }
    return '';
  }

  private setState(s: ConditionState): void {
    const changed = !sameState(this.current, s);
    this.current = s;
    if (changed) this.deps.changed();
  }
}
