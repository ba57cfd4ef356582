// @realinfra late (provider-anynines-v2: built in the background on a new machine; scripts/_lanes.ts)
/**
 * Namespaced a9s for real, claim-free: the catalogue in the namespaced API style (Crossplane v2 namespaced XRs) on real
 * Crossplane 2.3, whose a9s Compositions compose the namespaced managed resources of provider-anynines from Klutch's
 * Crossplane v2 branch (built from its klutchio sources, installed by Crossplane's package manager from the Provider
 * the constructs emit for that API style), against the broker stand-in (sandbox/a9s-broker-standin.ts). Every a9s
 * service of the catalogue, all at once on one cluster: XR → ServiceInstance in the XR's namespace → broker provision
 * → Ready; ServiceBinding XR → broker bind → the connection Secret in that namespace with the broker's credentials;
 * deletion → unbind, deprovision, nothing left. The claims style of the same services: provider-anynines.test.ts.
 */
import { AnyninesProviderFlavour } from '../../../constructs/crossplane/index.js';
import { ApiStyle } from '../../../constructs/dataservice/index.js';
import { PROVIDER_ANYNINES_NAMESPACED_PACKAGE } from '../../../constructs/topology/index.js';
import { NS, claimOf, condition, waitFor, type Obj } from '../crossplane/_support.js';
import { type A9sCluster, type A9sService, bindingSecret, startA9sCluster } from './_support.js';

const GROUP = 'anynines.com/v1';
const A9S = 'dataservices.anynines.com/v1';
const COMPOSITE = 'crossplane.io/composite';

let env: A9sCluster;
const figures: string[] = [];

beforeAll(async () => {
  env = await startA9sCluster('a9s-ns', '2.3', { apiStyle: ApiStyle.NAMESPACED_XR });
}, 900_000);

afterAll(async () => {
  await env?.stop();
  if (figures.length) process.stdout.write(`namespaced a9s XR → Ready (Crossplane 2.3, provider-anynines ${env?.a9s.version}):\n${figures.join('\n')}\n`);
}, 120_000);

const get = (kind: string, name: string) => env.api.get(GROUP, kind, name, NS);
const ready = (o: Obj | undefined) => condition(o, 'Ready')?.status === 'True';

/** The broker's credentials as provider-anynines writes them into the Secret: nested objects flattened with dots, string values. */
function flatStrings(o: Record<string, unknown>, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(o)) {
    if (typeof v === 'string') out[`${prefix}${k}`] = v;
    else if (v && typeof v === 'object' && !Array.isArray(v)) Object.assign(out, flatStrings(v as Record<string, unknown>, `${prefix}${k}.`));
  }
  return out;
}

/** One service's round trip: XR Ready, binding → Secret with the broker's credentials, deletion at the broker. */
async function roundTrip(s: A9sService): Promise<void> {
  const broker = env.brokers.get(s.ds)!;
  const svc = s.services[s.services.length - 1]!;
  const xr = `${s.ds}-ns`;
  const t0 = Date.now();
  await env.api.create(claimOf(s.claimKind, xr, { service: svc.name, plan: svc.plans[0]!, crossplane: { compositionRef: { name: s.backend.name } } }));
  const live = await waitFor(
    `XR ${xr} Ready`,
    async () => {
      const o = await get(s.claimKind, xr);
      return ready(o) ? o : undefined;
    },
    300_000,
  );
  figures.push(`  ${s.ds}: ${((Date.now() - t0) / 1000).toFixed(1)} s (all ${env.services.length} services at once)`);
  // the composed ServiceInstance: namespaced, in the XR's namespace, labelled with the XR (what the v2 provider binds by)
  const [si] = await env.api.list(A9S, 'ServiceInstance', NS, `${COMPOSITE}=${xr}`);
  expect(si!.metadata!.namespace).toBe(NS);
  expect(si!.metadata!.labels?.['crossplane.io/claim-name']).toBeUndefined();
  const id = si!.status!.atProvider.instanceId as string;
  const inst = broker.instance(id)!;
  expect(inst.state).toBe('provisioned');
  expect(live.status?.managed?.state).toBe('provisioned');
  expect(live.spec!.claimRef).toBeUndefined();

  // ServiceBinding XR → broker bind → the connection Secret `<binding>-creds` in the XR's namespace, with the broker's credentials
  const binding = `${s.ds}-ns-bind`;
  await env.api.create(
    claimOf('ServiceBinding', binding, { serviceInstanceType: s.ds, instanceRef: xr, crossplane: { compositionRef: { name: 'a9s-servicebinding' } } }),
  );
  await waitFor(`the binding of ${xr} at the broker`, async () => (inst.bindings.size === 1 ? true : undefined), 180_000);
  const [b] = [...inst.bindings.values()];
  const want = flatStrings(b!.credentials);
  // the key the provider writes last for each shape (Messaging: its URIs, after the flattened credentials)
  const key = ['protocols.amqp.uri', ...Object.keys(want).filter((k) => /password/.test(k))].find((k) => k in want) ?? Object.keys(want)[0]!;
  const { type, data } = await bindingSecret(env.api, `${binding}-creds`, key);
  expect(type).toBe('connection.crossplane.io/v1alpha1');
  // what the Secret carries of the broker's credentials is theirs (Messaging: the provider writes its protocols.* keys),
  // the secret one among them
  const carried = Object.keys(want).filter((k) => k in data);
  expect(carried).toContain(key);
  for (const k of carried) expect([k, data[k]]).toEqual([k, want[k]]);
  await waitFor(`ServiceBinding ${binding} Ready`, async () => (ready(await get('ServiceBinding', binding)) ? true : undefined), 180_000);
  const [sb] = await env.api.list(A9S, 'ServiceBinding', NS, `${COMPOSITE}=${binding}`);
  expect(sb!.spec!.writeConnectionSecretToRef).toEqual({ name: `${binding}-creds`, namespace: NS });

  // deletion: unbind (the Secret goes), then deprovision; no managed resource of this service left
  await env.api.delete(GROUP, 'ServiceBinding', binding, NS);
  await waitFor(
    `${binding}: unbound at the broker and its Secret gone`,
    async () => (inst.bindings.size === 0 && !(await env.api.get('v1', 'Secret', `${binding}-creds`, NS)) ? true : undefined),
    180_000,
  );
  await env.api.delete(GROUP, s.claimKind, xr, NS);
  await waitFor(`${xr}: deprovisioned at the broker`, async () => (inst.state === 'deleted' ? true : undefined), 240_000);
  await waitFor(
    `no XR or managed resource of ${s.ds} left`,
    async () =>
      !(await get(s.claimKind, xr)) &&
      (await env.api.list(A9S, 'ServiceInstance', NS, `${COMPOSITE}=${xr}`)).length === 0 &&
      (await env.api.list(A9S, 'ServiceBinding', NS, `${COMPOSITE}=${binding}`)).length === 0
        ? true
        : undefined,
    180_000,
  );
  expect(broker.requests).toContain(`DELETE /v2/service_instances/${id} 202`);
}

describe('namespaced a9s on real Crossplane 2.3 with provider-anynines of Klutch’s v2 branch', () => {
  it('the namespaced catalogue installs the namespaced provider-anynines (its managed resources namespaced), from the Provider the constructs emit', async () => {
    expect(env.a9s.flavour).toBe(AnyninesProviderFlavour.NAMESPACED);
    const provider = await env.api.get('pkg.crossplane.io/v1', 'Provider', 'provider-anynines');
    expect(provider!.spec!.package).toBe(PROVIDER_ANYNINES_NAMESPACED_PACKAGE);
    expect(condition(provider, 'Healthy')?.status).toBe('True');
    for (const r of ['serviceinstances', 'servicebindings', 'backups', 'restores']) {
      const crd = await env.api.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', `${r}.dataservices.anynines.com`);
      expect([r, crd!.spec!.scope]).toEqual([r, 'Namespaced']);
    }
    // no claim kinds: the XRDs are v2 namespaced ones
    expect(await env.api.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'xpostgresqlinstances.anynines.com')).toBeUndefined();
  }, 120_000);

  it('every a9s service, all at once: XR → Ready, ServiceBinding XR → the connection Secret with the broker’s credentials, deletion → unbind and deprovision', async () => {
    expect(env.services.map((s) => s.ds).sort()).toEqual(['keyvalue', 'logme2', 'mariadb', 'messaging', 'mongodb', 'postgresql', 'prometheus', 'search']);
    const results = await Promise.allSettled(env.services.map((s) => roundTrip(s)));
    const failed = results.map((r, i) => (r.status === 'rejected' ? `${env.services[i]!.ds}: ${(r.reason as Error).message}` : '')).filter(Boolean);
    expect(failed).toEqual([]);
  }, 900_000);
});
