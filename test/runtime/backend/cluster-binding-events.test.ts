// What a ClusterBinding event enqueues in the backend: a heartbeat (status-only update) must not
// re-apply the consumer's RBAC (docs/scale.md: five control-plane requests per heartbeat before).
import { describe, expect, it } from '@jest/globals';
import { clusterBindingEvents } from '../../../runtime/backend/controllers.js';
import type { ClusterBinding } from '../../../runtime/backend/reconcilers/types.js';

function recorder() {
  const calls: string[] = [];
  const handlers = clusterBindingEvents({
    clusterBinding: (k) => calls.push(`clusterbinding ${k}`),
    rbac: (ns) => calls.push(`rbac ${ns}`),
    sweep: (ns) => calls.push(`sweep ${ns}`),
  });
  return { calls, handlers };
}

const cb = (o: { generation?: number; spec?: ClusterBinding['spec']; status?: ClusterBinding['status']; deleting?: boolean } = {}): ClusterBinding => ({
  metadata: {
    name: 'cluster',
    namespace: 'cluster-a',
    ...(o.generation !== undefined ? { generation: o.generation } : {}),
    ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
  },
  spec: o.spec ?? { kubeconfigSecretRef: { name: 'kubeconfig', key: 'kubeconfig' }, providerPrettyName: 'provider' },
  status: o.status,
});

const ALL = ['clusterbinding cluster-a/cluster', 'rbac cluster-a', 'sweep cluster-a'];

describe('clusterBindingEvents', () => {
  it('a heartbeat (status-only update, same generation) enqueues health and sweeper, not RBAC', () => {
    const { calls, handlers } = recorder();
    const before = cb({ generation: 1, status: { lastHeartbeatTime: '2026-01-01T00:00:00Z', heartbeatInterval: '5m0s' } });
    const after = cb({ generation: 1, status: { lastHeartbeatTime: '2026-01-01T00:02:30Z', heartbeatInterval: '5m0s' } });
    handlers.onUpdate(before, after);
    expect(calls).toEqual(['clusterbinding cluster-a/cluster', 'sweep cluster-a']);
  });

  it('a spec change (new generation) enqueues RBAC too', () => {
    const { calls, handlers } = recorder();
    handlers.onUpdate(
      cb({ generation: 1 }),
      cb({ generation: 2, spec: { kubeconfigSecretRef: { name: 'other', key: 'kubeconfig' }, providerPrettyName: 'provider' } }),
    );
    expect(calls).toEqual(ALL);
  });

  it('without generations, the spec itself is compared', () => {
    const { calls, handlers } = recorder();
    handlers.onUpdate(cb({ status: { lastHeartbeatTime: 'a' } }), cb({ status: { lastHeartbeatTime: 'b' } }));
    expect(calls).not.toContain('rbac cluster-a');
    handlers.onUpdate(cb(), cb({ spec: { kubeconfigSecretRef: { name: 'other', key: 'kubeconfig' }, providerPrettyName: 'provider' } }));
    expect(calls.slice(-3)).toEqual(ALL);
  });

  it('a periodic resync (the same resourceVersion again) re-applies RBAC, so deleted RoleBindings come back', () => {
    const { calls, handlers } = recorder();
    const same = { ...cb({ generation: 1 }), metadata: { ...cb({ generation: 1 }).metadata, resourceVersion: '42' } };
    handlers.onUpdate(same, same);
    expect(calls).toEqual(ALL);
  });

  it('add, delete and the start of a deletion enqueue everything', () => {
    const { calls, handlers } = recorder();
    handlers.onAdd(cb({ generation: 1 }));
    handlers.onDelete(cb({ generation: 1 }));
    handlers.onUpdate(cb({ generation: 1 }), cb({ generation: 1, deleting: true }));
    expect(calls).toEqual([...ALL, ...ALL, ...ALL]);
  });
});
