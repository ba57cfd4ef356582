import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '../../../../runtime/core/logger.js';
import type { KubeObject } from '../../../../runtime/core/index.js';
import { renderKubeconfig, type Credential } from '../../../../runtime/backend/binder.js';
import { R, TOKEN_EXPIRY_ANNOTATION, TOKEN_ISSUED_ANNOTATION } from '../../../../runtime/backend/refs.js';
import { TokenRotationReconciler } from '../../../../runtime/backend/reconcilers/token-rotation.js';
import { CREDENTIAL_EXPIRY_ANNOTATION, CREDENTIAL_SECRET } from '../../../../contract/credential.js';
import { FakeApiServer } from '../../../support/fake-api-server.js';
import { minutesAgo } from './_fixtures.js';

const KEY = Buffer.alloc(32, 7);
const kubeconfig = (key?: Buffer) => Buffer.from(renderKubeconfig({ server: 'https://p.example' }, 'cluster-a', 'tok', key)).toString('base64');

const secret = (issuedMinutesAgo: number, lifetimeMinutes: number, key: Buffer | null = KEY): KubeObject =>
  ({
    metadata: {
      name: 'kubeconfig',
      namespace: 'cluster-a',
      annotations: {
        [TOKEN_ISSUED_ANNOTATION]: minutesAgo(issuedMinutesAgo),
        [TOKEN_EXPIRY_ANNOTATION]: minutesAgo(issuedMinutesAgo - lifetimeMinutes),
      },
    },
    data: { kubeconfig: kubeconfig(key ?? undefined) },
  }) as KubeObject;

/** The credential Secret; its maximum life ends `endsInMinutes` from now. */
const credential = (endsInMinutes: number): KubeObject => ({
  metadata: { name: CREDENTIAL_SECRET, namespace: 'cluster-a', uid: 'cred-uid', annotations: { [CREDENTIAL_EXPIRY_ANNOTATION]: minutesAgo(-endsInMinutes) } },
});

function setup(s: KubeObject, opts: { cred?: KubeObject | null; sa?: boolean } = {}) {
  const kube = new FakeApiServer().seed(R.secrets, s);
  if (opts.sa !== false) kube.seed(R.serviceAccounts, { metadata: { name: 'klutch-binder', namespace: 'cluster-a' } });
  if (opts.cred !== null) kube.seed(R.secrets, opts.cred ?? credential(30 * 24 * 60));
  const written: Array<{ ns: string; cred: Credential }> = [];
  let rotations = 0;
  const r = new TokenRotationReconciler({
    kube: kube.client,
    kubeconfigSecrets: kube.cache(R.secrets),
    binder: { writeKubeconfig: async (ns, cred) => (written.push({ ns, cred }), { kubeconfig: '', expirationTimestamp: 'later' }) },
    metrics: { tokenRotations: { inc: () => void rotations++ } },
    logger: silentLogger,
  });
  return { r, kube, written, rotations: () => rotations };
}

describe('TokenRotationReconciler', () => {
  it('waits until 2/3 of the token lifetime', async () => {
    const t = setup(secret(10, 60));
    const res = await t.r.reconcile('cluster-a');
    expect(t.written).toEqual([]);
    expect(res?.requeueAfterMs).toBeGreaterThan(29 * 60_000);
    expect(res?.requeueAfterMs).toBeLessThanOrEqual(30 * 60_000 + 100);
  });

  it('rewrites the kubeconfig once 2/3 of the lifetime passed, for the same credential and rotation key, and counts it', async () => {
    const t = setup(secret(45, 60));
    await t.r.reconcile('cluster-a');
    expect(t.written).toHaveLength(1);
    expect(t.written[0]!.ns).toBe('cluster-a');
    expect(t.written[0]!.cred).toMatchObject({ name: CREDENTIAL_SECRET, uid: 'cred-uid', rotationKey: KEY });
    expect(t.rotations()).toBe(1);
  });

  it('leaves a Secret without token annotations, or a namespace without the binder ServiceAccount, alone', async () => {
    const plain = setup({ metadata: { name: 'kubeconfig', namespace: 'cluster-a' } });
    await plain.r.reconcile('cluster-a');
    const noSa = setup(secret(45, 60), { sa: false });
    await noSa.r.reconcile('cluster-a');
    expect([...plain.written, ...noSa.written]).toEqual([]);
  });

  it('does not rotate a revoked credential (no credential Secret)', async () => {
    const t = setup(secret(45, 60), { cred: null });
    expect(await t.r.reconcile('cluster-a')).toBeUndefined();
    expect(t.written).toEqual([]);
    expect(t.kube.writes()).toEqual([]);
  });

  it('never rotates past the maximum life: the last token lasts to the end, then the credential Secret is deleted', async () => {
    // the current token ends with the credential: no new one, requeue at the end
    const last = setup(secret(45, 60), { cred: credential(15) });
    const res = await last.r.reconcile('cluster-a');
    expect(last.written).toEqual([]);
    expect(res?.requeueAfterMs).toBeGreaterThan(14 * 60_000);
    expect(res?.requeueAfterMs).toBeLessThanOrEqual(15 * 60_000 + 100);
    // less than the shortest token (10 min) left before the end: no new token either
    const short = setup(secret(45, 60), { cred: credential(8) });
    await short.r.reconcile('cluster-a');
    expect(short.written).toEqual([]);
    // the end has come: every token of the credential is revoked by deleting its Secret (uid precondition)
    const ended = setup(secret(45, 60), { cred: credential(-1) });
    await ended.r.reconcile('cluster-a');
    expect(ended.written).toEqual([]);
    expect(ended.kube.writes()).toEqual([{ verb: 'delete', resource: 'secrets', namespace: 'cluster-a', name: CREDENTIAL_SECRET, opts: { uid: 'cred-uid' } }]);
  });

  it('does not rotate a kubeconfig without a rotation key (bound by an older backend)', async () => {
    const t = setup(secret(45, 60, null));
    await t.r.reconcile('cluster-a');
    expect(t.written).toEqual([]);
  });
});
