// --consumer-scope=Cluster: every consumer gets its own ClusterRoleBinding to its own ClusterRole;
// nothing is shared, so no binding flips between consumers (Klutch's bug).
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type KubeObject } from '../../../runtime/core/index.js';
import { responseKubeconfig, type BindingResponse } from '../../../contract/wire.js';
import { eventually } from '../../realinfra/util.js';
import { CLIENT_ID, startProvider, template, type ProviderEnv } from './_fixture.js';
import { applyManifests, waitForCrdsEstablished } from '../../../runtime/realinfra/index.js';
import { consumerIsolationPolicyName } from '../../../contract/consumer-isolation.js';

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

/** The BindBackend construct's objects for a backend like this one (consumer scope Cluster, the default prefix). */
async function backendManifests(): Promise<Array<KubeObject & { kind: string }>> {
  const { App, Chart } = await import('cdk8s');
  const { BindBackend } = await import('../../../constructs/runtime/index.js');
  const chart = new Chart(new App({ outdir: '/nonexistent-never-written' }), 'backend');
  new BindBackend(chart, 'B', {
    consumerScope: 'Cluster',
    oidc: {
      issuerUrl: 'https://bind.example.com/dex',
      clientId: 'klutch-backend',
      clientSecret: { name: 'oidc', key: 'client-secret' },
      callbackUrl: 'https://bind.example.com/callback',
    },
    cookies: { signingKey: { name: 'cookies', key: 'signing' }, encryptionKey: { name: 'cookies', key: 'encryption' } },
    externalAddress: 'https://api.control-plane.example.com:6443',
    externalCa: { name: 'external-ca', key: 'ca.crt' },
  });
  return chart.toJson() as Array<KubeObject & { kind: string }>;
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

  it("a consumer cannot update, delete or squat another consumer's cluster-scoped objects (the BindBackend's admission policy)", async () => {
    const GADGETS = { group: 'example.klutch.test', version: 'v1', plural: 'gadgets', namespaced: false, kind: 'Gadget' };
    const VAP = {
      group: 'admissionregistration.k8s.io',
      version: 'v1',
      plural: 'validatingadmissionpolicies',
      namespaced: false,
      kind: 'ValidatingAdmissionPolicy',
    };
    const VAPB = { ...VAP, plural: 'validatingadmissionpolicybindings', kind: 'ValidatingAdmissionPolicyBinding' };
    const name = consumerIsolationPolicyName('cluster');
    const a = await bind('iso-a');
    const b = await bind('iso-b');
    const gadget = (n: string, owner: string) => ({
      apiVersion: 'example.klutch.test/v1',
      kind: 'Gadget',
      metadata: { name: n, annotations: { 'klutch.anynines.com/cluster-namespace': owner } },
    });
    const created: string[] = [];
    try {
      // the policy as the BindBackend construct renders it for this backend (--consumer-scope=Cluster, prefix "cluster")
      await applyManifests(env.cluster.kubeConfig, (await backendManifests()).filter((o) => o.kind.startsWith('ValidatingAdmissionPolicy')) as never[]);
      for (const x of [a, b])
        await x.client.create(REQ, {
          metadata: { name: 'gadgets', namespace: x.ns },
          spec: { resources: [{ group: 'example.klutch.test', resource: 'gadgets' }] },
        });
      for (const x of [a, b]) await eventually(`gadget rights of ${x.ns}`, () => env.kube.getOrNull(CRB, undefined, `klutch-binder-${x.ns}`));
      // the policy in force (the API server loads it asynchronously): B's squat of A's name prefix is refused
      await eventually('the isolation policy in force', async () => {
        try {
          await b.client.create(GADGETS, gadget(`${a.ns}-probe`, b.ns) as KubeObject);
          await env.kube.delete(GADGETS, undefined, `${a.ns}-probe`);
          return false;
        } catch (e) {
          return (e as { code?: number }).code === 403 && (e as Error).message.includes(`must be named ${b.ns}-<name>`);
        }
      });
      // A's own object (named and annotated as the konnector writes it)
      await eventually("A's gadget", () => a.client.create(GADGETS, gadget(`${a.ns}-db`, a.ns) as KubeObject));
      created.push(`${a.ns}-db`);
      const own = await env.kube.get(GADGETS, undefined, `${a.ns}-db`);
      // B: update, patch, relabel as its own, delete — all refused, naming the owner rule
      const refusedB = async (p: Promise<unknown>) => {
        await expect(p).rejects.toMatchObject({ code: 403 });
        await p.catch((e: Error) =>
          expect(e.message).toContain(`belongs to another consumer: only objects annotated klutch.anynines.com/cluster-namespace=${b.ns}`),
        );
      };
      await refusedB(b.client.mergePatch(GADGETS, undefined, `${a.ns}-db`, { spec: { owner: 'b' } }));
      await refusedB(b.client.mergePatch(GADGETS, undefined, `${a.ns}-db`, { metadata: { annotations: { 'klutch.anynines.com/cluster-namespace': b.ns } } }));
      await refusedB(b.client.delete(GADGETS, undefined, `${a.ns}-db`));
      // B's create with its name prefix but A's annotation: refused
      await expect(b.client.create(GADGETS, gadget(`${b.ns}-x`, a.ns) as KubeObject)).rejects.toMatchObject({ code: 403 });
      // A cannot give its object away either
      await expect(
        a.client.mergePatch(GADGETS, undefined, `${a.ns}-db`, { metadata: { annotations: { 'klutch.anynines.com/cluster-namespace': b.ns } } }),
      ).rejects.toMatchObject({
        code: 403,
      });
      expect((await env.kube.get(GADGETS, undefined, `${a.ns}-db`)).metadata.resourceVersion).toBe(own.metadata.resourceVersion);
      // the barrier: B's own object goes in, and B may change and delete it
      await b.client.create(GADGETS, gadget(`${b.ns}-db`, b.ns) as KubeObject);
      created.push(`${b.ns}-db`);
      await b.client.mergePatch(GADGETS, undefined, `${b.ns}-db`, { spec: { size: 2 } });
      await b.client.delete(GADGETS, undefined, `${b.ns}-db`);
    } finally {
      for (const n of created) await env.kube.delete(GADGETS, undefined, n).catch(() => undefined);
      await env.kube.delete(VAPB, undefined, name).catch(() => undefined);
      await env.kube.delete(VAP, undefined, name).catch(() => undefined);
      a.client.close();
      b.client.close();
    }
  });
});
