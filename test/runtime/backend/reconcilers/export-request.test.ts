import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '../../../../runtime/core/logger.js';
import type { Crd, ExportTemplate } from '../../../../runtime/backend/catalog.js';
import { crdSpecHash } from '../../../../runtime/backend/export.js';
import { R, SOURCE_SPEC_HASH_ANNOTATION } from '../../../../runtime/backend/refs.js';
import { ExportRequestReconciler } from '../../../../runtime/backend/reconcilers/export-request.js';
import type { APIServiceExport, APIServiceExportRequest } from '../../../../runtime/backend/reconcilers/types.js';
import { FakeApiServer } from '../../../support/fake-api-server.js';
import { minutesAgo } from './_fixtures.js';

const crd = (scope: 'Namespaced' | 'Cluster' = 'Namespaced'): Crd => ({
  metadata: { name: 'postgresqlinstances.anynines.com' },
  spec: {
    group: 'anynines.com',
    names: { plural: 'postgresqlinstances', kind: 'PostgresqlInstance' },
    scope,
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
  },
});
const template: ExportTemplate = {
  metadata: { name: 'pg', namespace: 'backend' },
  spec: { APIServiceSelector: { group: 'anynines.com', resource: 'postgresqlinstances' }, permissionClaims: [{ group: '', resource: 'secrets' } as never] },
};
const request = (created = minutesAgo(0), status?: APIServiceExportRequest['status']): APIServiceExportRequest => ({
  metadata: { name: 'req', namespace: 'cluster-a', uid: 'u1', creationTimestamp: created },
  spec: { resources: [{ group: 'anynines.com', resource: 'postgresqlinstances' }] },
  status,
});

function reconciler(o: {
  req: APIServiceExportRequest;
  crds?: Crd[];
  templates?: ExportTemplate[];
  exports?: APIServiceExport[];
  scope?: 'Namespaced' | 'Cluster';
  graceMs?: number;
}) {
  const kube = new FakeApiServer()
    .seed(R.exportRequests, o.req)
    .seed(R.exports, ...(o.exports ?? []))
    .seed(R.crds, ...(o.crds ?? [crd()]))
    .seed(R.templates, ...(o.templates ?? [template]));
  const r = new ExportRequestReconciler({
    kube: kube.client,
    requests: kube.cache(R.exportRequests),
    exports: kube.cache(R.exports),
    crds: kube.cache(R.crds),
    templates: kube.cache(R.templates),
    logger: silentLogger,
    consumerScope: o.scope ?? 'Namespaced',
    exportRequestGraceMs: o.graceMs ?? 60_000,
  });
  return { kube, r };
}

describe('ExportRequestReconciler', () => {
  it('creates the export from the CRD with the template claims and the spec hash, then Succeeded', async () => {
    const { kube, r } = reconciler({ req: request() });
    const res = await r.reconcile('cluster-a/req');
    const [create, status] = kube.writes();
    expect(create).toMatchObject({ verb: 'create', resource: 'apiserviceexports', namespace: 'cluster-a', name: 'postgresqlinstances.anynines.com' });
    expect((create.body as APIServiceExport).metadata.annotations![SOURCE_SPEC_HASH_ANNOTATION]).toBe(crdSpecHash(crd()));
    expect((create.body as APIServiceExport).spec).toMatchObject({
      group: 'anynines.com',
      informerScope: 'Namespaced',
      permissionClaims: [{ group: '', resource: 'secrets' }],
    });
    expect(status).toMatchObject({ verb: 'updateStatus', resource: 'apiserviceexportrequests' });
    expect((status.body as APIServiceExportRequest).status).toMatchObject({ phase: 'Succeeded' });
    expect(res?.requeueAfterMs).toBeGreaterThan(0);
  });

  it('fails a request for a resource no template offers, naming it', async () => {
    const { kube, r } = reconciler({ req: request(), templates: [] });
    await r.reconcile('cluster-a/req');
    const [status] = kube.writes();
    expect((status.body as APIServiceExportRequest).status).toMatchObject({
      phase: 'Failed',
      terminalMessage: expect.stringContaining('resource postgresqlinstances.anynines.com is not offered'),
    });
  });

  it('refuses a cluster-scoped CRD unless the consumer scope is Cluster', async () => {
    const { kube, r } = reconciler({ req: request(), crds: [crd('Cluster')] });
    await r.reconcile('cluster-a/req');
    expect((kube.writes()[0].body as APIServiceExportRequest).status?.terminalMessage).toContain('--consumer-scope=Namespaced');
    const ok = reconciler({ req: request(), crds: [crd('Cluster')], scope: 'Cluster' });
    await ok.r.reconcile('cluster-a/req');
    expect(ok.kube.writes()[0]).toMatchObject({ verb: 'create', resource: 'apiserviceexports' });
  });

  it('waits Pending for a missing CRD within the grace period, then fails', async () => {
    const waiting = reconciler({ req: request(), crds: [], graceMs: 60_000 });
    const res = await waiting.r.reconcile('cluster-a/req');
    expect((waiting.kube.writes()[0].body as APIServiceExportRequest).status).toMatchObject({
      phase: 'Pending',
      conditions: expect.arrayContaining([expect.objectContaining({ reason: 'CRDNotFound' })]),
    });
    expect(res?.requeueAfterMs).toBeGreaterThan(0);
    const late = reconciler({ req: request(minutesAgo(5)), crds: [], graceMs: 60_000 });
    await late.r.reconcile('cluster-a/req');
    expect((late.kube.writes()[0].body as APIServiceExportRequest).status).toMatchObject({
      phase: 'Failed',
      terminalMessage: expect.stringContaining('within 60s'),
    });
  });

  it('deletes a finished request after the retention period, with its uid as precondition', async () => {
    const { kube, r } = reconciler({ req: request(minutesAgo(11), { phase: 'Succeeded' }) });
    await r.reconcile('cluster-a/req');
    expect(kube.writes()).toEqual([{ verb: 'delete', resource: 'apiserviceexportrequests', namespace: 'cluster-a', name: 'req', opts: { uid: 'u1' } }]);
  });

  it('leaves an export with the same hash and claims alone', async () => {
    const existing: APIServiceExport = {
      metadata: { name: 'postgresqlinstances.anynines.com', namespace: 'cluster-a', annotations: { [SOURCE_SPEC_HASH_ANNOTATION]: crdSpecHash(crd()) } },
      spec: { permissionClaims: template.spec.permissionClaims } as APIServiceExport['spec'],
    };
    const { kube, r } = reconciler({ req: request(), exports: [existing] });
    await r.reconcile('cluster-a/req');
    expect(kube.writes().map((c) => c.verb)).toEqual(['updateStatus']);
  });
});
