import { describe, expect, it } from '@jest/globals';
import { ClusterBindingReconciler, parseGoDuration } from '../../../../runtime/backend/reconcilers/cluster-binding.js';
import type { ClusterBinding } from '../../../../runtime/backend/reconcilers/types.js';
import { R } from '../../../../runtime/backend/refs.js';
import { FakeApiServer } from '../../../support/fake-api-server.js';
import { minutesAgo } from './_fixtures.js';

const cb = (status?: ClusterBinding['status']): ClusterBinding => ({
  metadata: { name: 'cluster', namespace: 'cluster-a' },
  spec: { kubeconfigSecretRef: { name: 'kubeconfig', key: 'kubeconfig' }, providerPrettyName: 'provider' },
  status,
});

async function healthy(obj: ClusterBinding, heartbeatTimeoutMs = 0) {
  const api = new FakeApiServer().seed(R.clusterBindings, obj);
  const res = await new ClusterBindingReconciler({ kube: api.client, clusterBindings: api.cache(R.clusterBindings), heartbeatTimeoutMs }).reconcile(
    'cluster-a/cluster',
  );
  const w = api.writes();
  const cond = (w[0]?.body as ClusterBinding | undefined)?.status?.conditions?.find((c) => c.type === 'Healthy');
  return { writes: w, cond, res };
}

describe('parseGoDuration', () => {
  it('reads Go durations and plain seconds, and rejects the rest', () => {
    expect(parseGoDuration('1h2m3s')).toBe(3_723_000);
    expect(parseGoDuration('90')).toBe(90_000);
    expect(parseGoDuration('5m0sx')).toBeUndefined();
    expect(parseGoDuration(undefined)).toBeUndefined();
  });
});

describe('ClusterBindingReconciler', () => {
  it('is not Healthy before the first heartbeat', async () => {
    expect((await healthy(cb())).cond).toMatchObject({ status: 'False', reason: 'FirstHeartbeatPending' });
  });

  it('needs the heartbeat interval when no timeout is configured', async () => {
    expect((await healthy(cb({ lastHeartbeatTime: minutesAgo(0) }))).cond).toMatchObject({ status: 'False', reason: 'HeartbeatIntervalMissing' });
  });

  it('is Healthy within 2 × the interval and requeues before it runs out', async () => {
    const { cond, res } = await healthy(cb({ lastHeartbeatTime: minutesAgo(1), heartbeatInterval: '5m0s' }));
    expect(cond).toMatchObject({ status: 'True', reason: 'Heartbeating' });
    expect(res?.requeueAfterMs).toBeGreaterThan(0);
    expect(res?.requeueAfterMs).toBeLessThanOrEqual(9 * 60_000 + 500);
  });

  it('times out after 2 × the interval, or after the configured timeout', async () => {
    expect((await healthy(cb({ lastHeartbeatTime: minutesAgo(11), heartbeatInterval: '5m0s' }))).cond).toMatchObject({
      status: 'False',
      reason: 'HeartbeatTimeout',
    });
    expect((await healthy(cb({ lastHeartbeatTime: minutesAgo(2), heartbeatInterval: '5m0s' }), 60_000)).cond).toMatchObject({ reason: 'HeartbeatTimeout' });
  });

  it('writes nothing while the status and reason stay the same', async () => {
    const first = await healthy(cb({ lastHeartbeatTime: minutesAgo(1), heartbeatInterval: '5m0s' }));
    const again = await healthy(first.writes[0].body as ClusterBinding);
    expect(again.writes).toEqual([]);
  });
});
