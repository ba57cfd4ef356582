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

function setup(obj: APIServiceNamespace, kube = new FakeApiServer()) {
  const rbac: string[] = [];
  kube.seed(R.serviceNamespaces, obj);
  const r = new ServiceNamespaceReconciler({
    kube: kube.client,
    serviceNamespaces: kube.cache(R.serviceNamespaces),
    logger: silentLogger,
    rbacChanged: (ns) => rbac.push(ns),
  });
  return { kube, rbac, reconcile: () => r.reconcile('cluster-a/default') };
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
    });
    await r.reconcile(`cluster-a/${'x'.repeat(60)}`);
    expect(kube.calls).toEqual([]);
  });
});
