// --consumer-scope=Cluster: every consumer gets its own ClusterRoleBinding to its own ClusterRole;
// nothing is shared, so no binding flips between consumers (Klutch's bug).
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type KubeObject } from '../../../runtime/core/index.js';
import { responseKubeconfig, type BindingResponse } from '../../../contract/wire.js';
import { eventually } from '../../realinfra/util.js';
import { CLIENT_ID, startProvider, template, type ProviderEnv } from './_fixture.js';
import { applyManifests, waitForCrdsEstablished } from '../../../runtime/realinfra/index.js';

jest.setTimeout(120_000);

let env: ProviderEnv;
beforeAll(async () => {
  env = await startProvider('bind-cscope', ['--consumer-scope=Cluster']);
  const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
  await applyManifests(env.cluster.kubeConfig, [
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.example.klutch.test' },
      spec: {
        group: 'example.klutch.test',
        names: { kind: 'Gadget', plural: 'gadgets', listKind: 'GadgetList', singular: 'gadget' },
        scope: 'Cluster',
        versions: [{ name: 'v1', served: true, storage: true, schema }],
      },
    } as never,
  ]);
  await waitForCrdsEstablished(env.cluster.kubeConfig, ['gadgets.example.klutch.test']);
  await applyManifests(env.cluster.kubeConfig, [template('gadgets', 'example.klutch.test', 'gadgets') as never]);
}, 180_000);
afterAll(async () => {
  await env?.stop();
});

const CR = { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterroles', namespaced: false, kind: 'ClusterRole' };
const CRB = { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterrolebindings', namespaced: false, kind: 'ClusterRoleBinding' };
const REQ = { group: 'klutch.anynines.com', version: 'v1alpha1', plural: 'apiserviceexportrequests', namespaced: true, kind: 'APIServiceExportRequest' };
const EXP = { group: 'klutch.anynines.com', version: 'v1alpha1', plural: 'apiserviceexports', namespaced: true, kind: 'APIServiceExport' };

async function bind(sub: string): Promise<{ ns: string; client: KubeClient }> {
  const now = Math.floor(Date.now() / 1000);
  const tok = await env.op.signAsIssuer({ iss: env.op.issuer, sub, aud: CLIENT_ID, iat: now, exp: now + 300 });
  const res = await fetch(`${env.backend.url}/bind`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${tok}` },
    body: JSON.stringify({ group: 'mangodb.com', resource: 'mangodbs', clusterID: `c-${sub}` }),
  });
  expect(res.status).toBe(200);
  const kc = new KubeConfig();
  kc.loadFromString(responseKubeconfig((await res.json()) as BindingResponse));
  return { ns: kc.getContextObject(kc.getCurrentContext())!.namespace!, client: new KubeClient(kc) };
}

describe('--consumer-scope=Cluster', () => {
  it('cluster-scoped exports: one ClusterRoleBinding per consumer to its own role; claims and namespaced exports stay namespace-bound', async () => {
    const a = await bind('scope-a');
    const b = await bind('scope-b');
    const resources = [
      { group: 'mangodb.com', resource: 'mangodbs' },
      { group: 'example.klutch.test', resource: 'gadgets' },
    ];
    try {
      for (const x of [a, b]) await x.client.create(REQ, { metadata: { name: 'both', namespace: x.ns }, spec: { resources } });
      for (const x of [a, b]) {
        await eventually(`exports in ${x.ns}`, async () => (await env.kube.list(EXP, x.ns)).items.length === 2);
      }
      const gadgetExport = (await env.kube.get(EXP, a.ns, 'gadgets.example.klutch.test')) as KubeObject & { spec: Record<string, unknown> };
      expect(gadgetExport.spec).toMatchObject({ scope: 'Cluster', informerScope: 'Cluster', clusterScopedIsolation: 'Prefixed' });
      const crbOf = (ns: string) =>
        eventually(`CRB of ${ns}`, () => env.kube.getOrNull<KubeObject & { subjects?: unknown[]; roleRef?: unknown }>(CRB, undefined, `klutch-binder-${ns}`));
      const [ca, cb] = [await crbOf(a.ns), await crbOf(b.ns)];
      expect(ca.subjects).toEqual([{ kind: 'ServiceAccount', name: 'klutch-binder', namespace: a.ns }]);
      expect(cb.subjects).toEqual([{ kind: 'ServiceAccount', name: 'klutch-binder', namespace: b.ns }]);
      expect(ca.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `klutch-binder-${a.ns}-cluster` });
      const role = (await env.kube.get(CR, undefined, `klutch-binder-${a.ns}-cluster`)) as KubeObject & { rules: unknown[] };
      expect(role.rules).toEqual([
        {
          apiGroups: ['example.klutch.test'],
          resources: ['gadgets', 'gadgets/status'],
          verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
        },
      ]);
      // more reconciles for A leave B's binding alone
      await a.client.create(REQ, { metadata: { name: 'again', namespace: a.ns }, spec: { resources } });
      await eventually(
        'second request handled',
        async () => ((await env.kube.get(REQ, a.ns, 'again')) as KubeObject & { status?: { phase?: string } }).status?.phase === 'Succeeded',
      );
      const cb2 = await crbOf(b.ns);
      expect(cb2.subjects).toEqual(cb.subjects);
      expect(cb2.metadata.resourceVersion).toBe(cb.metadata.resourceVersion);
      // the real API server: cluster-scoped gadgets readable; claims (secrets) and namespaced mangodbs not cluster-wide
      // (a just-created CRD may answer 429 "storage is (re)initializing" for a moment)
      await eventually(
        'A lists gadgets cluster-wide',
        async () => (await a.client.list({ group: 'example.klutch.test', version: 'v1', plural: 'gadgets', namespaced: false })).items.length === 0,
      );
      await expect(a.client.list({ group: '', version: 'v1', plural: 'secrets', namespaced: true }, b.ns)).rejects.toMatchObject({ code: 403 });
      await expect(a.client.list({ group: 'mangodb.com', version: 'v1alpha1', plural: 'mangodbs', namespaced: true })).rejects.toMatchObject({ code: 403 });
    } finally {
      a.client.close();
      b.client.close();
    }
  });
});
