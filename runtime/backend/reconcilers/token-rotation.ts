/**
 * tokenrotation (key: cluster namespace): re-issues the consumer's TokenRequest token at 2/3 of its
 * lifetime and rewrites the kubeconfig Secret (the konnector copies it to the consumer on its heartbeat).
 */
import type { Logger } from 'pino';
import type { KubeObject, ReconcileResult, Reconciler } from '../../core/index.js';
import type { Binder } from '../binder.js';
import { BINDER_SA, KUBECONFIG_SECRET, R, TOKEN_EXPIRY_ANNOTATION, TOKEN_ISSUED_ANNOTATION } from '../refs.js';
import type { Cache, ReconcilerKube } from './types.js';

export interface TokenRotationReconcilerDeps {
  readonly kube: Pick<ReconcilerKube, 'getOrNull'>;
  /** The backend's kubeconfig Secrets (one per cluster namespace). */
  readonly kubeconfigSecrets: Cache<KubeObject>;
  readonly binder: Pick<Binder, 'writeKubeconfig'>;
  readonly metrics: { readonly tokenRotations: { inc(): void } };
  readonly logger: Logger;
}

export class TokenRotationReconciler implements Reconciler {
  constructor(private readonly d: TokenRotationReconcilerDeps) {}

  async reconcile(ns: string): Promise<ReconcileResult | void> {
    const d = this.d;
    const s = d.kubeconfigSecrets.getByName(ns, KUBECONFIG_SECRET);
    if (!s || s.metadata.deletionTimestamp) return;
    const issued = Date.parse(s.metadata.annotations?.[TOKEN_ISSUED_ANNOTATION] ?? '');
    const expires = Date.parse(s.metadata.annotations?.[TOKEN_EXPIRY_ANNOTATION] ?? '');
    if (Number.isNaN(issued) || Number.isNaN(expires)) return;
    const due = issued + ((expires - issued) * 2) / 3;
    const now = Date.now();
    if (now < due) return { requeueAfterMs: Math.min(due - now + 100, 2 ** 31 - 1) };
    const sa = await d.kube.getOrNull(R.serviceAccounts, ns, BINDER_SA);
    if (!sa) return;
    const { expirationTimestamp } = await d.binder.writeKubeconfig(ns);
    d.metrics.tokenRotations.inc();
    d.logger.info({ namespace: ns, expirationTimestamp }, 'rotated consumer token');
  }
}
