// The konnector's side of the resource policy: a binding whose export or accepted claim is outside the
// admin's allow-list gets ResourcesAllowed=False naming it, its CRD is not created, its claim not synced.
import { describe, expect, it } from '@jest/globals';
import { CoreResources, type KubeObject } from '../../../runtime/core/client.js';
import { FakeApiServer } from '../../support/fake-api-server.js';
import { silentLogger } from '../../../runtime/core/logger.js';
import { ObjectStore } from '../../../runtime/core/object-cache.js';
import type { CRD } from '../../../runtime/konnector/crd.js';
import { ClaimSync } from '../../../runtime/konnector/claims.js';
import type { SyncContext } from '../../../runtime/konnector/context.js';
import { CrdReconciler } from '../../../runtime/konnector/provider-crds.js';
import { exportOfBinding, ResourceGate } from '../../../runtime/konnector/resource-gate.js';
import type { AcceptablePermissionClaim, APIServiceBinding, APIServiceExport } from '../../../runtime/konnector/types.js';

const claim = (group: string, resource: string, state: 'Accepted' | 'Rejected' = 'Accepted'): AcceptablePermissionClaim =>
  ({ group, resource, version: 'v1', state }) as AcceptablePermissionClaim;
const binding = (name: string, claims: AcceptablePermissionClaim[] = []) =>
  ({ metadata: { name, namespace: 'klutch-bind', uid: 'b1' }, spec: { permissionClaims: claims } }) as unknown as APIServiceBinding;

describe('ResourceGate', () => {
  it('parses the allowances, naming the option and the value when wrong', () => {
    expect(ResourceGate.from('KonnectorOptions.allowedResources', ['daemonsets.apps']).allowed).toEqual([{ group: 'apps', resource: 'daemonsets' }]);
    expect(ResourceGate.from('KonnectorOptions.allowedResources', undefined)).toBe(ResourceGate.DEFAULT);
    expect(() => ResourceGate.from('KonnectorOptions.allowedResources', ['roles.rbac.authorization.k8s.io'])).toThrow(
      /^KonnectorOptions\.allowedResources\[0\]: "roles\.rbac\.authorization\.k8s\.io" can never be allowed/,
    );
    expect(exportOfBinding('daemonsets.apps')).toEqual({ group: 'apps', resource: 'daemonsets' });
    expect(exportOfBinding('gateways.gateway.networking.k8s.io')).toEqual({ group: 'gateway.networking.k8s.io', resource: 'gateways' });
  });

  it('ResourcesAllowed: True for a Klutch-style binding; False naming each refused export or accepted claim and the flag', () => {
    const ok = ResourceGate.DEFAULT.condition(binding('postgresqlinstances.anynines.com', [claim('', 'secrets'), claim('apps', 'daemonsets', 'Rejected')]));
    expect(ok).toMatchObject({ type: 'ResourcesAllowed', status: 'True', reason: 'WithinAllowList' });
    const bad = ResourceGate.DEFAULT.condition(binding('daemonsets.apps', [claim('', 'secrets'), claim('apps', 'daemonsets'), claim('', 'pods')]));
    expect(bad).toMatchObject({ type: 'ResourcesAllowed', status: 'False', severity: 'Error', reason: 'ResourceNotAllowed' });
    expect(bad.message).toMatch(
      /^not synced: the export of daemonsets\.apps is outside the allow-list: workloads .*allow it with --allow-resource=daemonsets\.apps on the konnector \(KonnectorProps\.allowedResources, or bind again with kubectl bind --allow-resource daemonsets\.apps\); the permission claim on daemonsets\.apps is outside/,
    );
    expect(bad.message).toContain('the permission claim on pods is outside the allow-list');
    expect(bad.message).not.toContain('claim on secrets');
    const allowed = ResourceGate.from('x', ['daemonsets.apps', 'pods']).condition(binding('daemonsets.apps', [claim('apps', 'daemonsets'), claim('', 'pods')]));
    expect(allowed.status).toBe('True');
  });

  it('keeps only the allowed accepted claims for syncing', () => {
    const claims = [claim('', 'secrets'), claim('apps', 'daemonsets'), claim('', 'configmaps')];
    expect(ResourceGate.DEFAULT.allowedClaims(claims).map((c) => c.resource)).toEqual(['secrets', 'configmaps']);
  });

  it('a claim syncer for a refused claim is never built', () => {
    const ctx = { resourceGate: ResourceGate.DEFAULT } as unknown as SyncContext;
    expect(() => new ClaimSync(ctx, claim('apps', 'daemonsets'), { name: 'x.y', uid: 'u' })).toThrow(
      /^the permission claim on daemonsets\.apps is outside the allow-list/,
    );
  });
});

describe('CrdReconciler with a resource gate', () => {
  const exp = (group: string, plural: string) =>
    ({
      metadata: { name: `${plural}.${group}`, namespace: 'cluster-a' },
      spec: {
        group,
        names: { plural, kind: 'X' },
        scope: 'Namespaced',
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
      },
    }) as unknown as APIServiceExport;
  const setup = (name: string, gate?: ResourceGate) => {
    const [plural, ...g] = name.split('.');
    const key = `klutch-bind/${name}`;
    const app = new FakeApiServer();
    const r = new CrdReconciler({
      app: app.client,
      clusterNamespace: 'cluster-a',
      exports: ObjectStore.of(exp(g.join('.'), plural)),
      crds: app.cache<CRD>(CoreResources.crds),
      bindings: { has: (k) => k === key, keys: () => [key], named: () => [key] },
      getBinding: () => binding(name),
      ownerBindingGone: () => false,
      log: silentLogger,
      resourceGate: gate,
      changed: () => undefined,
    });
    return { r, key, calls: () => app.writes().map((c) => c.body as KubeObject) };
  };

  it('does not create the CRD of a refused export and says why on Connected', async () => {
    const t = setup('daemonsets.apps');
    await t.r.reconcile(t.key);
    expect(t.calls()).toEqual([]);
    expect(t.r.state(t.key)).toMatchObject({
      status: 'False',
      reason: 'ResourceNotAllowed',
      message: expect.stringMatching(/^the export of daemonsets\.apps is outside the allow-list: .*--allow-resource=daemonsets\.apps on the konnector/),
    });
  });

  it("creates the CRD of the provider's own API", async () => {
    const t = setup('mangodbs.mangodb.com');
    await t.r.reconcile(t.key);
    expect(t.calls().map((c) => c.metadata.name)).toEqual(['mangodbs.mangodb.com']);
  });
});
