/**
 * tokenrotation (key: cluster namespace): re-issues the consumer's TokenRequest token at 2/3 of its
 * lifetime (sealed into the ClusterBinding for the konnector, and into the kubeconfig Secret), never
 * beyond the credential's maximum life; at that end it deletes the credential Secret, which invalidates
 * every token of the credential, and the consumer binds again (contract/credential.ts).
 */
import type { Logger } from 'pino';
import type { KubeObject, ObjectCache, ReconcileResult, Reconciler } from '../../core/index.js';
import { CREDENTIAL_EXPIRY_ANNOTATION, CREDENTIAL_SECRET, rotationKeyOf } from '../../../contract/credential.js';
import { MIN_TOKEN_SECONDS, type Binder } from '../binder.js';
import { KUBECONFIG_SECRET, R, TOKEN_EXPIRY_ANNOTATION, TOKEN_ISSUED_ANNOTATION } from '../refs.js';
import { BINDER_NAME } from '../../../contract/index.js';
import type { ReconcilerKube } from './types.js';

export interface TokenRotationReconcilerDeps {
  readonly kube: Pick<ReconcilerKube, 'getOrNull' | 'delete'>;
  /** The backend's kubeconfig Secrets (one per cluster namespace). */
  readonly kubeconfigSecrets: ObjectCache<KubeObject>;
  readonly binder: Pick<Binder, 'writeKubeconfig'>;
  readonly metrics: { readonly tokenRotations: { inc(): void } };
  readonly logger: Logger;
  /** Clock, epoch ms. @default Date.now */
  readonly now?: () => number;
}

/** A token within this much of the credential's end is its last: no rotation, the end comes first. */
const LAST_TOKEN_SLACK_MS = 60_000;
const MAX_TIMER_MS = 2 ** 31 - 1;

export class TokenRotationReconciler implements Reconciler {
  constructor(private readonly d: TokenRotationReconcilerDeps) {}

  async reconcile(ns: string): Promise<ReconcileResult | void> {
    const d = this.d;
    const s = d.kubeconfigSecrets.getByName(ns, KUBECONFIG_SECRET);
    if (!s || s.metadata.deletionTimestamp) return;
    const issued = Date.parse(s.metadata.annotations?.[TOKEN_ISSUED_ANNOTATION] ?? '');
    const expires = Date.parse(s.metadata.annotations?.[TOKEN_EXPIRY_ANNOTATION] ?? '');
    if (Number.isNaN(issued) || Number.isNaN(expires)) return;
    const cred = await d.kube.getOrNull(R.secrets, ns, CREDENTIAL_SECRET);
    if (!cred || cred.metadata.deletionTimestamp) {
      // revoked (kubectl-bind revoke, an operator) or ended: nothing to rotate until the consumer binds again
      d.logger.info({ namespace: ns }, 'no credential Secret: the credential was revoked or ended; not rotating');
      return;
    }
    const now = (d.now ?? Date.now)();
    const ends = Date.parse(cred.metadata.annotations?.[CREDENTIAL_EXPIRY_ANNOTATION] ?? '');
    if (Number.isNaN(ends) || now >= ends) {
      // the maximum life is over (or unknown): every token of the credential dies with its Secret
      await d.kube.delete(R.secrets, ns, CREDENTIAL_SECRET, { uid: cred.metadata.uid });
      d.logger.info(
        { namespace: ns, ended: cred.metadata.annotations?.[CREDENTIAL_EXPIRY_ANNOTATION] },
        'consumer credential reached its maximum life: revoked all its tokens; the consumer binds again',
      );
      return;
    }
    const untilEnd = () => ({ requeueAfterMs: Math.min(ends - now + 100, MAX_TIMER_MS) });
    // the current token already lasts to the end, or a new one could not (TokenRequest's minimum)
    if (expires >= ends - LAST_TOKEN_SLACK_MS || ends - now < MIN_TOKEN_SECONDS * 1000) return untilEnd();
    const due = issued + ((expires - issued) * 2) / 3;
    if (now < due) return { requeueAfterMs: Math.min(due - now + 100, ends - now + 100, MAX_TIMER_MS) };
    const sa = await d.kube.getOrNull(R.serviceAccounts, ns, BINDER_NAME);
    if (!sa) return;
    const key = rotationKeyOf(Buffer.from((s as KubeObject & { data?: Record<string, string> }).data?.kubeconfig ?? '', 'base64').toString('utf8'));
    if (!key) {
      // written by a backend before credentials had a rotation key: the konnector could not open a sealed
      // successor either; the token ends at its expiry and the consumer binds again
      d.logger.warn({ namespace: ns }, 'kubeconfig Secret has no rotation key (bound by an older backend); not rotating: the consumer binds again');
      return;
    }
    const { expirationTimestamp } = await d.binder.writeKubeconfig(ns, {
      name: CREDENTIAL_SECRET,
      uid: cred.metadata.uid!,
      expiresAt: ends,
      rotationKey: key,
    });
    d.metrics.tokenRotations.inc();
    d.logger.info({ namespace: ns, expirationTimestamp }, 'rotated consumer token');
  }
}
