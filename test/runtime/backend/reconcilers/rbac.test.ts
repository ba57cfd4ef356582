import { describe, expect, it } from '@jest/globals';
import { ApiError, type KubeObject } from '../../../../runtime/core/index.js';
import { IDENTITY_ANNOTATION, R } from '../../../../runtime/backend/refs.js';
import { RbacReconciler, exportedResourceRules } from '../../../../runtime/backend/reconcilers/rbac.js';
import type { APIServiceExport, APIServiceNamespace } from '../../../../runtime/backend/reconcilers/types.js';
import { FakeApiServer } from '../../../support/fake-api-server.js';

const exp = (
  plural: string,
  group: string,
  scope: 'Namespaced' | 'Cluster' = 'Namespaced',
  claims: APIServiceExport['spec']['permissionClaims'] = [],
): APIServiceExport => ({
  metadata: { name: `${plural}.${group}`, namespace: 'cluster-a' },
  spec: { group, names: { plural, kind: 'K' }, scope, versions: [], informerScope: 'Namespaced', permissionClaims: claims },
});
const sn = (name: string, target?: string): APIServiceNamespace => ({
  metadata: { name, namespace: 'cluster-a' },
  status: target ? { namespace: target } : undefined,
});
const clusterNs = { metadata: { name: 'cluster-a', uid: 'ns1', annotations: { [IDENTITY_ANNOTATION]: 'user#c1' } } };

describe('exportedResourceRules', () => {
  it('grants the exported resources with status and the claimed resources, sorted by group', () => {
    const rules = exportedResourceRules([exp('pgs', 'anynines.com', 'Namespaced', [{ group: '', resource: 'secrets' } as never])]);
    expect(rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], verbs: expect.any(Array) },
      { apiGroups: ['anynines.com'], resources: ['pgs', 'pgs/status'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
    ]);
  });
  it('skips exports being deleted; cluster-only keeps cluster-scoped exports and no claims', () => {
    const gone = { ...exp('olds', 'a.com'), metadata: { ...exp('olds', 'a.com').metadata, deletionTimestamp: 'x' } };
    expect(exportedResourceRules([gone])).toEqual([]);
    const rules = exportedResourceRules([exp('pgs', 'a.com'), exp('buckets', 'b.com', 'Cluster', [{ group: '', resource: 'secrets' } as never])], true);
    expect(rules).toEqual([{ apiGroups: ['b.com'], resources: ['buckets', 'buckets/status'], verbs: expect.any(Array) }]);
  });
});

describe('RbacReconciler', () => {
  const setup = (
    scope: 'Namespaced' | 'Cluster',
    exports: APIServiceExport[],
    sns: APIServiceNamespace[],
    kube = new FakeApiServer().seed(R.namespaces, clusterNs),
  ) => {
    kube.seed(R.exports, ...exports).seed(R.serviceNamespaces, ...sns);
    return {
      kube,
      r: new RbacReconciler({ kube: kube.client, exports: kube.cache(R.exports), serviceNamespaces: kube.cache(R.serviceNamespaces), consumerScope: scope }),
    };
  };

  it('does nothing for a namespace without a consumer identity', async () => {
    const { kube, r } = setup('Namespaced', [exp('pgs', 'a.com')], [], new FakeApiServer().seed(R.namespaces, { metadata: { name: 'cluster-a' } }));
    await r.reconcile('cluster-a');
    expect(kube.writes()).toEqual([]);
  });

  it('applies the per-cluster role owned by the namespace and binds it only in assigned provider namespaces', async () => {
    const { kube, r } = setup('Namespaced', [exp('pgs', 'a.com')], [sn('default', 'cluster-a-default'), sn('pending')]);
    await r.reconcile('cluster-a');
    const w = kube.writes();
    expect(w.map((c) => `${c.verb} ${c.resource} ${c.namespace ?? ''}/${c.name}`)).toEqual([
      'apply clusterroles /klutch-binder-cluster-a',
      'apply rolebindings cluster-a-default/klutch-binder',
      'delete clusterrolebindings /klutch-binder-cluster-a',
      'delete clusterroles /klutch-binder-cluster-a-cluster',
    ]);
    expect((w[0].body as KubeObject).metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Namespace', name: 'cluster-a', uid: 'ns1' })]);
    expect(w[1].body).toMatchObject({ subjects: [{ kind: 'ServiceAccount', name: 'klutch-binder', namespace: 'cluster-a' }] });
  });

  it('with consumer scope Cluster, binds cluster-scoped exports through a per-consumer ClusterRoleBinding', async () => {
    const { kube, r } = setup('Cluster', [exp('buckets', 'b.com', 'Cluster')], []);
    await r.reconcile('cluster-a');
    const w = kube.writes();
    expect(w.map((c) => `${c.verb} ${c.resource} ${c.name}`)).toEqual([
      'apply clusterroles klutch-binder-cluster-a',
      'apply clusterroles klutch-binder-cluster-a-cluster',
      'apply clusterrolebindings klutch-binder-cluster-a',
    ]);
    expect(w[2].body).toMatchObject({ roleRef: { name: 'klutch-binder-cluster-a-cluster' }, subjects: [{ namespace: 'cluster-a' }] });
  });

  it('tolerates a provider namespace that is not there (yet); other errors fail the reconcile', async () => {
    const notFound = setup('Namespaced', [], [sn('default', 'cluster-a-default')]);
    notFound.kube.fail('apply', new ApiError(404, 'NotFound', 'namespaces "cluster-a-default" not found', 'PATCH', '/rolebindings'), {
      resource: 'rolebindings',
    });
    await expect(notFound.r.reconcile('cluster-a')).resolves.toBeUndefined();
    const forbidden = setup('Namespaced', [], [sn('default', 'cluster-a-default')]);
    forbidden.kube.fail('apply', new ApiError(403, 'Forbidden', 'forbidden', 'PATCH', '/rolebindings'), { resource: 'rolebindings' });
    await expect(forbidden.r.reconcile('cluster-a')).rejects.toThrow('forbidden');
  });
});
