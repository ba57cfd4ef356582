import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '../../../../runtime/core/logger.js';
import type { Crd } from '../../../../runtime/backend/catalog.js';
import { crdSpecHash } from '../../../../runtime/backend/export.js';
import { R, SOURCE_SPEC_HASH_ANNOTATION } from '../../../../runtime/backend/refs.js';
import { ExportReconciler } from '../../../../runtime/backend/reconcilers/export.js';
import type { APIServiceExport } from '../../../../runtime/backend/reconcilers/types.js';
import { FakeApiServer } from '../../../support/fake-api-server.js';

const crd = (description = 'v1'): Crd => ({
  metadata: { name: 'mangodbs.mangodb.com' },
  spec: {
    group: 'mangodb.com',
    names: { plural: 'mangodbs', kind: 'MangoDB' },
    scope: 'Namespaced',
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', description } } }],
  },
});
const exportOf = (hash: string): APIServiceExport => ({
  metadata: { name: 'mangodbs.mangodb.com', namespace: 'cluster-a', uid: 'e1', annotations: { [SOURCE_SPEC_HASH_ANNOTATION]: hash } },
  spec: { group: 'mangodb.com', names: { plural: 'mangodbs', kind: 'MangoDB' }, scope: 'Namespaced', versions: [], informerScope: 'Namespaced' },
});
const run = async (exp: APIServiceExport, crds: Crd[]) => {
  const api = new FakeApiServer().seed(R.exports, exp).seed(R.crds, ...crds);
  await new ExportReconciler({ kube: api.client, exports: api.cache(R.exports), crds: api.cache(R.crds), logger: silentLogger }).reconcile(
    'cluster-a/mangodbs.mangodb.com',
  );
  return api.writes();
};

describe('ExportReconciler', () => {
  it('deletes the export when its CRD is gone', async () => {
    expect(await run(exportOf('x'), [])).toEqual([
      { verb: 'delete', resource: 'apiserviceexports', namespace: 'cluster-a', name: 'mangodbs.mangodb.com', opts: { uid: 'e1' } },
    ]);
  });

  it('updates the export spec and hash when the CRD changed', async () => {
    const [w] = await run(exportOf(crdSpecHash(crd('old'))), [crd('new')]);
    expect(w).toMatchObject({ verb: 'update', resource: 'apiserviceexports' });
    expect((w.body as APIServiceExport).metadata.annotations![SOURCE_SPEC_HASH_ANNOTATION]).toBe(crdSpecHash(crd('new')));
    expect(JSON.stringify((w.body as APIServiceExport).spec.versions)).toContain('"new"');
  });

  it('sets ProviderInSync once, then writes nothing', async () => {
    const [w] = await run(exportOf(crdSpecHash(crd())), [crd()]);
    expect(w.verb).toBe('updateStatus');
    const synced = w.body as APIServiceExport;
    expect(synced.status?.conditions).toEqual([expect.objectContaining({ type: 'ProviderInSync', status: 'True', reason: 'InSync' })]);
    expect(await run(synced, [crd()])).toEqual([]);
  });
});
