// A standby replica (no synced cache) answers /resources from lists shared by the requests of a few
// seconds: a flood of unauthenticated page views costs one pair of lists per interval, not one per request.
import { describe, expect, it } from '@jest/globals';
import { R } from '../../../runtime/backend/refs.js';
import { FakeApiServer } from '../../support/fake-api-server.js';
import { Catalog, UNCACHED_TTL_MS } from '../../../runtime/backend/catalog.js';

const crd = {
  metadata: { name: 'mangodbs.mangodb.com' },
  spec: { group: 'mangodb.com', scope: 'Namespaced', names: { plural: 'mangodbs', kind: 'MangoDB' }, versions: [{ name: 'v1', served: true, storage: true }] },
};
const template = { metadata: { name: 't', namespace: 'crossplane-system' }, spec: { APIServiceSelector: { group: 'mangodb.com', resource: 'mangodbs' } } };

function fakeKube(fail = false) {
  const api = new FakeApiServer().seed(R.crds, crd).seed(R.templates, template);
  if (fail) api.fail('list', new Error('connection refused'));
  return {
    kube: api.client,
    /** The resources listed so far. */
    lists: () => api.calls.filter((c) => c.verb === 'list').map((c) => c.resource),
  };
}

describe('Catalog without a synced cache', () => {
  it('50 concurrent page views make one list of templates and one of CRDs', async () => {
    let now = 0;
    const { kube, lists } = fakeKube();
    const c = new Catalog(kube, 'Namespaced', () => now);
    const pages = await Promise.all(Array.from({ length: 50 }, () => c.list()));
    expect(pages.every((p) => p.length === 1 && p[0]!.kind === 'MangoDB')).toBe(true);
    expect(lists().sort()).toEqual(['apiserviceexporttemplates', 'customresourcedefinitions']);
    now += UNCACHED_TTL_MS; // stale: listed again
    await c.list();
    expect(lists()).toHaveLength(4);
  });

  it('does not keep a failed list', async () => {
    const f = fakeKube(true);
    const c = new Catalog(f.kube, 'Namespaced', () => 0);
    await expect(c.list()).rejects.toThrow('connection refused');
    await expect(c.list()).rejects.toThrow('connection refused');
    expect(f.lists()).toHaveLength(4);
  });
});
