import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '../../../../runtime/core/logger.js';
import type { KubeObject } from '../../../../runtime/core/index.js';
import { R, TOKEN_EXPIRY_ANNOTATION, TOKEN_ISSUED_ANNOTATION } from '../../../../runtime/backend/refs.js';
import { TokenRotationReconciler } from '../../../../runtime/backend/reconcilers/token-rotation.js';
import { cacheOf, FakeKube, minutesAgo } from './_fakes.js';

const secret = (issuedMinutesAgo: number, lifetimeMinutes: number): KubeObject => ({
  metadata: {
    name: 'kubeconfig',
    namespace: 'cluster-a',
    annotations: {
      [TOKEN_ISSUED_ANNOTATION]: minutesAgo(issuedMinutesAgo),
      [TOKEN_EXPIRY_ANNOTATION]: minutesAgo(issuedMinutesAgo - lifetimeMinutes),
    },
  },
});

function setup(s: KubeObject, kube = new FakeKube().put(R.serviceAccounts, { metadata: { name: 'klutch-binder', namespace: 'cluster-a' } })) {
  const written: string[] = [];
  let rotations = 0;
  const r = new TokenRotationReconciler({
    kube,
    kubeconfigSecrets: cacheOf(s),
    binder: { writeKubeconfig: async (ns) => (written.push(ns), { kubeconfig: '', expirationTimestamp: 'later' }) },
    metrics: { tokenRotations: { inc: () => void rotations++ } },
    logger: silentLogger,
  });
  return { r, written, rotations: () => rotations };
}

describe('TokenRotationReconciler', () => {
  it('waits until 2/3 of the token lifetime', async () => {
    const t = setup(secret(10, 60));
    const res = await t.r.reconcile('cluster-a');
    expect(t.written).toEqual([]);
    expect(res?.requeueAfterMs).toBeGreaterThan(29 * 60_000);
    expect(res?.requeueAfterMs).toBeLessThanOrEqual(30 * 60_000 + 100);
  });

  it('rewrites the kubeconfig once 2/3 of the lifetime passed, and counts it', async () => {
    const t = setup(secret(45, 60));
    await t.r.reconcile('cluster-a');
    expect(t.written).toEqual(['cluster-a']);
    expect(t.rotations()).toBe(1);
  });

  it('leaves a Secret without token annotations, or a namespace without the binder ServiceAccount, alone', async () => {
    const plain = setup({ metadata: { name: 'kubeconfig', namespace: 'cluster-a' } });
    await plain.r.reconcile('cluster-a');
    const noSa = setup(secret(45, 60), new FakeKube());
    await noSa.r.reconcile('cluster-a');
    expect([...plain.written, ...noSa.written]).toEqual([]);
  });
});
