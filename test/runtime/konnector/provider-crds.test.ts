/** The konnector's CRD reconciler with its injected dependencies faked (caches, the app cluster a FakeApiServer). */
import { describe, expect, it } from '@jest/globals';
import { CoreResources, type KubeObject } from '../../../runtime/core/client.js';
import { FakeApiServer } from '../../support/fake-api-server.js';
import { silentLogger } from '../../../runtime/core/logger.js';
import { ObjectStore } from '../../../runtime/core/object-cache.js';
import type { CRD } from '../../../runtime/konnector/crd.js';
import { CrdReconciler } from '../../../runtime/konnector/provider-crds.js';
import { EXPORTED_LABEL, type APIServiceBinding, type APIServiceExport } from '../../../runtime/konnector/types.js';

const NAME = 'mangodbs.mangodb.com';
const KEY = `klutch-bind/${NAME}`;
const binding = { metadata: { name: NAME, namespace: 'klutch-bind', uid: 'b1' }, spec: {} } as unknown as APIServiceBinding;
const exp = {
  metadata: { name: NAME, namespace: 'cluster-a' },
  spec: {
    group: 'mangodb.com',
    names: { plural: 'mangodbs', kind: 'MangoDB' },
    scope: 'Namespaced',
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
  },
} as unknown as APIServiceExport;
const owned = (uid: string, established = true, extra: Partial<CRD['metadata']> = {}): CRD =>
  ({
    metadata: {
      name: NAME,
      labels: { [EXPORTED_LABEL]: 'true' },
      ownerReferences: [{ apiVersion: 'klutch.anynines.com/v1alpha1', kind: 'APIServiceBinding', name: NAME, uid, controller: true }],
      ...extra,
    },
    spec: {
      group: 'mangodb.com',
      names: { plural: 'mangodbs', kind: 'MangoDB', singular: 'mangodb', listKind: 'MangoDBList' },
      scope: 'Namespaced',
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
    },
    status: established ? { conditions: [{ type: 'Established', status: 'True' }] } : {},
  }) as unknown as CRD;

function setup(o: { exports?: APIServiceExport[]; crd?: CRD; ownerGone?: boolean; attached?: boolean }) {
  const app = new FakeApiServer().seed(CoreResources.crds, ...(o.crd ? [o.crd] : []));
  const changed: string[] = [];
  const r = new CrdReconciler({
    app: app.client,
    clusterNamespace: 'cluster-a',
    exports: ObjectStore.of(...(o.exports ?? [exp])),
    crds: app.cache<CRD>(CoreResources.crds),
    bindings: { has: (k) => (o.attached ?? true) && k === KEY, keys: () => [KEY], named: (n) => (n === NAME ? [KEY] : []) },
    getBinding: (k) => (k === KEY ? binding : undefined),
    ownerBindingGone: () => o.ownerGone ?? false,
    log: silentLogger,
    changed: (k) => changed.push(k),
  });
  return {
    r,
    changed,
    /** The writes to the app cluster. */
    get calls() {
      return app.writes().map((c) => ({ verb: c.verb, obj: c.body as KubeObject }));
    },
  };
}

describe('CrdReconciler', () => {
  it('reports a missing export and changes nothing', async () => {
    const t = setup({ exports: [] });
    await t.r.reconcile(KEY);
    expect(t.r.state(KEY)).toMatchObject({ status: 'False', reason: 'APIServiceExportNotFound' });
    expect(t.calls).toEqual([]);
    expect(t.changed).toEqual([KEY]);
  });

  it('creates the CRD owned by the binding, then waits for it to be established', async () => {
    const t = setup({});
    await t.r.reconcile(KEY);
    expect(t.calls).toHaveLength(1);
    expect(t.calls[0].verb).toBe('create');
    expect(t.calls[0].obj.metadata).toMatchObject({
      name: NAME,
      labels: { [EXPORTED_LABEL]: 'true' },
      ownerReferences: [expect.objectContaining({ uid: 'b1', controller: true })],
    });
    expect(t.r.state(KEY)).toMatchObject({ reason: 'CustomResourceDefinitionNotEstablished' });
  });

  it('is Connected when its own established CRD matches, without writing', async () => {
    const t = setup({ crd: owned('b1') });
    await t.r.reconcile(KEY);
    expect(t.calls).toEqual([]);
    expect(t.r.state(KEY)).toEqual({ status: 'True', reason: 'Connected', message: `bound to APIServiceExport cluster-a/${NAME}` });
    t.r.forget(KEY);
    expect(t.r.state(KEY)).toBeUndefined();
  });

  it('does not take over a CRD of someone else', async () => {
    const t = setup({ crd: owned('other') });
    await t.r.reconcile(KEY);
    expect(t.calls).toEqual([]);
    expect(t.r.state(KEY)).toMatchObject({
      reason: 'ForeignCustomResourceDefinition',
      message: expect.stringContaining('owned by APIServiceBinding mangodbs.mangodb.com (uid other)'),
    });
  });

  it('adopts the CRD of a deleted binding of the same name', async () => {
    const t = setup({ crd: owned('gone'), ownerGone: true });
    await t.r.reconcile(KEY);
    expect(t.calls.map((c) => c.verb)).toEqual(['update']);
    expect(t.calls[0].obj.metadata.ownerReferences).toEqual([expect.objectContaining({ uid: 'b1' })]);
  });

  it('ignores bindings that are not attached', async () => {
    const t = setup({ attached: false });
    await t.r.reconcile(KEY);
    expect(t.calls).toEqual([]);
    expect(t.r.state(KEY)).toBeUndefined();
  });
});
