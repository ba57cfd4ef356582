import { describe, expect, it } from '@jest/globals';
import { RequeueError } from '../../../../runtime/core/index.js';
import { silentLogger } from '../../../../runtime/core/logger.js';
import { R } from '../../../../runtime/backend/refs.js';
import { API_SERVICE_NAMESPACE_ANNOTATION } from '../../../../contract/index.js';
import { SERVICE_NAMESPACE_FINALIZER, ServiceNamespaceReconciler } from '../../../../runtime/backend/reconcilers/service-namespace.js';
import type { APIServiceNamespace } from '../../../../runtime/backend/reconcilers/types.js';
import { FakeApiServer } from '../../../support/fake-api-server.js';

const sn = (extra: Partial<APIServiceNamespace['metadata']> = {}, status?: APIServiceNamespace['status']): APIServiceNamespace => ({
  metadata: { name: 'default', namespace: 'cluster-a', finalizers: [SERVICE_NAMESPACE_FINALIZER], ...extra },
  status,
});

function setup(obj: APIServiceNamespace, kube = new FakeApiServer(), grant: (clusterNs: string, target: string) => Promise<void> = async () => undefined) {
  const rbac: string[] = [];
  // what happened, in order: the grants and the status writes
  const order: string[] = [];
  kube.seed(R.serviceNamespaces, obj);
  const r = new ServiceNamespaceReconciler({
    kube: {
      ...kube.client,
      updateStatus: async (...a: Parameters<typeof kube.client.updateStatus>) => {
        order.push(`status ${(a[1] as APIServiceNamespace).status?.namespace}`);
        return kube.client.updateStatus(...a);
      },
    } as typeof kube.client,
    serviceNamespaces: kube.cache(R.serviceNamespaces),
    logger: silentLogger,
    rbacChanged: (ns) => rbac.push(ns),
    grantNamespace: async (clusterNs, target) => {
      order.push(`grant ${clusterNs} ${target}`);
      await grant(clusterNs, target);
    },
  });
  return { kube, rbac, order, reconcile: () => r.reconcile('cluster-a/default') };
}

describe('ServiceNamespaceReconciler', () => {
  it('adds its finalizer first', async () => {
    const t = setup(sn({ finalizers: [] }));
    await t.reconcile();
    expect(t.kube.writes()).toEqual([expect.objectContaining({ verb: 'update', resource: 'apiservicenamespaces' })]);
    expect((t.kube.writes()[0].body as APIServiceNamespace).metadata.finalizers).toEqual([SERVICE_NAMESPACE_FINALIZER]);
    expect(t.rbac).toEqual([]);
  });

  it('creates the annotated provider namespace <clusterNs>-<name>, reports it, and asks for RBAC', async () => {
    const t = setup(sn());
    await t.reconcile();
    const [create, status] = t.kube.writes();
    expect(create).toMatchObject({ verb: 'create', resource: 'namespaces', name: 'cluster-a-default' });
    expect((create.body as APIServiceNamespace).metadata.annotations).toEqual({ [API_SERVICE_NAMESPACE_ANNOTATION]: 'cluster-a/default' });
    expect((status.body as APIServiceNamespace).status).toEqual({ namespace: 'cluster-a-default' });
    expect(t.rbac).toEqual(['cluster-a']);
  });

  it('grants the consumer its role in the namespace before it reports it, and reports nothing when the grant fails', async () => {
    const t = setup(sn());
    await t.reconcile();
    // the konnector syncs into the namespace once reported: the grant comes first, so it is never refused
    expect(t.order).toEqual(['grant cluster-a cluster-a-default', 'status cluster-a-default']);

    const failing = setup(sn(), new FakeApiServer(), async () => {
      throw new Error('rolebindings.rbac.authorization.k8s.io is forbidden');
    });
    await expect(failing.reconcile()).rejects.toThrow('rolebindings.rbac.authorization.k8s.io is forbidden');
    expect(failing.order).toEqual(['grant cluster-a cluster-a-default']);
    expect(failing.kube.writes().map((w) => w.resource)).toEqual(['namespaces']);
  });

  it('does not grant again once the namespace is reported', async () => {
    const kube = new FakeApiServer().seed(R.namespaces, {
      metadata: { name: 'cluster-a-default', annotations: { [API_SERVICE_NAMESPACE_ANNOTATION]: 'cluster-a/default' } },
    });
    const t = setup(sn({}, { namespace: 'cluster-a-default' }), kube);
    await t.reconcile();
    expect(t.order).toEqual([]);
    expect(t.rbac).toEqual(['cluster-a']);
  });

  it('does not take over a namespace that belongs to someone else', async () => {
    const kube = new FakeApiServer().seed(R.namespaces, {
      metadata: { name: 'cluster-a-default', annotations: { [API_SERVICE_NAMESPACE_ANNOTATION]: 'other/x' } },
    });
    const t = setup(sn(), kube);
    await expect(t.reconcile()).rejects.toThrow(RequeueError);
    await expect(t.reconcile()).rejects.toThrow('namespace cluster-a-default exists and does not belong to APIServiceNamespace cluster-a/default');
    expect(kube.writes()).toEqual([]);
  });

  it('on deletion deletes its own namespace and releases the finalizer', async () => {
    const kube = new FakeApiServer().seed(R.namespaces, {
      metadata: { name: 'cluster-a-default', uid: 'n1', annotations: { [API_SERVICE_NAMESPACE_ANNOTATION]: 'cluster-a/default' } },
    });
    const t = setup(sn({ deletionTimestamp: new Date().toISOString() }), kube);
    await t.reconcile();
    const [del, upd] = kube.writes();
    expect(del).toEqual({ verb: 'delete', resource: 'namespaces', namespace: undefined, name: 'cluster-a-default', opts: { uid: 'n1' } });
    expect((upd.body as APIServiceNamespace).metadata.finalizers).toEqual([]);
    expect(t.rbac).toEqual(['cluster-a']);
  });

  it('creates nothing when the namespace name would exceed 63 characters', async () => {
    const long = { ...sn(), metadata: { ...sn().metadata, name: 'x'.repeat(60) } };
    const kube = new FakeApiServer().seed(R.serviceNamespaces, long);
    const r = new ServiceNamespaceReconciler({
      kube: kube.client,
      serviceNamespaces: kube.cache(R.serviceNamespaces),
      logger: silentLogger,
      rbacChanged: () => undefined,
      grantNamespace: async () => undefined,
    });
    await r.reconcile(`cluster-a/${'x'.repeat(60)}`);
    expect(kube.calls).toEqual([]);
  });
});
