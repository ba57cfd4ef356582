/**
 * docs/dataservice.md's migration from claims to namespaced XRs, on real Crossplane 2.3 +
 * function-patch-and-transform + provider-kubernetes v1.2.1, with a database behind the claim: the
 * sandbox's a8s operator (SandboxA8sOperator) runs the a8s Postgresql as a real PostgreSQL server;
 * the claims come from an app cluster, synced by the real konnector (runtime/konnector).
 *
 * The app cluster (a bare API server, started next to the control plane) is bound to the claim CRDs
 * by exports made with the backend's own `exportSpecFromCrd` and the export templates' permission
 * claims; the minimal backend of the konnector tests assigns provider namespaces. A PostgresqlInstance
 * and a ServiceBinding created there (naming their backends in `spec.compositionRef`) are Ready and a row
 * is written with the binding's credentials as they came down; then the documented steps: 1. stop the
 * konnector; 2. `klutch-kit migrate release-claims` (save the claims, pause their XRs, orphan and delete
 * the composed Objects, delete the claims, let the XRs go); 3. replace the claim catalogue (its
 * Configuration) by the ApiStyle.NAMESPACED_XR catalogue; 4. `klutch-kit migrate create-xrs` (the claims
 * as namespaced XRs); 5. bind again (the backend deletes an export whose CRD is gone and exports the new CRD
 * with the new template's claims on the next bind: done here as the backend does it, with the
 * minimal backend standing in for it), start the konnector, re-apply the app's objects with
 * `spec.crossplane.compositionRef`. The a8s objects are adopted (same uid), the server is the same
 * process, and the row is still there, read with the credentials of the composed `<binding>-creds`
 * Secret as it came down to the app cluster.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { parse } from 'yaml';
import { main } from '../../../runtime/cli/main.js';
import type { Catalogue } from '../../../constructs/catalogue/index.js';
import { ApiStyle } from '../../../constructs/dataservice/index.js';
import type { Crd } from '../../../runtime/backend/catalog.js';
import { exportSpecFromCrd } from '../../../runtime/backend/export.js';
import { CoreResources, KubeClient, type KubeObject, type ResourceRef } from '../../../runtime/core/client.js';
import { createLogger } from '../../../runtime/core/logger.js';
import { Konnector } from '../../../runtime/konnector/konnector.js';
import { BINDING_RESOURCES } from '../../../contract/index.js';
import { startCluster, type RealCluster } from '../../../runtime/realinfra/index.js';
import { SandboxA8sOperator } from '../../../sandbox/a8s-operator/index.js';
import { bindOnApp, type ConsumerOnProvider, ensure, installBindingCRDs, MiniBackend, setUpConsumerOnProvider } from '../konnector/fixture.js';
import { type CatalogueCluster, composed, condition, GROUP, installCatalogue, type Obj, startCatalogueCluster, waitFor } from './_support.js';

jest.setTimeout(900_000);

const PG: [string, string] = ['postgresql.anynines.com/v1beta3', 'Postgresql'];
const SB: [string, string] = ['servicebindings.anynines.com/v1beta3', 'ServiceBinding'];
const catalogue = { services: ['postgresql'], operations: ['servicebinding'] } as const;
const CLUSTER_NS = 'consumer-a';
const APP_NS = 'shop';
/** The provider namespace the minimal backend gives the app's namespace: where the claims (then the XRs) live. */
const NS = `${CLUSTER_NS}-${APP_NS}`;
const ref = (plural: string, kind: string): ResourceRef => ({ group: 'anynines.com', version: 'v1', plural, kind, namespaced: true });
const PGI = ref('postgresqlinstances', 'PostgresqlInstance');
const SBI = ref('servicebindings', 'ServiceBinding');
const APIS = ['postgresqlinstances.anynines.com', 'servicebindings.anynines.com'];

let env: CatalogueCluster;
let app: RealCluster;
let operator: SandboxA8sOperator;
let client: KubeClient;
let ac: KubeClient;
let backend: MiniBackend;
let consumer: ConsumerOnProvider;
let konnector: Konnector | undefined;
let tmp: string;

/** The exports of the bound APIs as the backend makes them: from the CRDs on the control plane, with the templates' permission claims. */
async function exportsOf(cat: Catalogue): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const s of [...cat.services.values(), ...cat.operations.values()]) {
    const t = s.exportTemplate;
    const crd = (await client.get(CoreResources.crds, undefined, `${t.resource}.anynines.com`)) as unknown as Crd;
    const spec = exportSpecFromCrd(crd, { informerScope: 'Namespaced', permissionClaims: t.renderedPermissionClaims as never });
    out.push({
      apiVersion: 'klutch.anynines.com/v1alpha1',
      kind: 'APIServiceExport',
      metadata: { name: crd.metadata.name, namespace: CLUSTER_NS },
      spec,
    } as KubeObject);
  }
  expect(out.map((e) => e.metadata.name).sort()).toEqual(APIS);
  return out;
}

/** The app side of `kubectl bind`: an APIServiceBinding per export, its permission claims accepted. */
async function bindAll(exports: readonly KubeObject[]): Promise<void> {
  for (const e of exports) {
    const claims = ((e as unknown as { spec: { permissionClaims?: unknown[] } }).spec.permissionClaims ?? []).map((c) => ({
      ...(c as object),
      state: 'Accepted',
    }));
    const existing = await ac.getOrNull(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', e.metadata.name!);
    if (existing) await ac.mergePatch(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', e.metadata.name!, { spec: { permissionClaims: claims } });
    else await bindOnApp(app, consumer, { name: e.metadata.name!, claims });
  }
}

async function startKonnector(): Promise<void> {
  konnector = new Konnector({
    appKubeConfig: app.kubeConfig,
    heartbeatIntervalMs: 4000,
    providerSyncTimeoutMs: 10_000,
    resyncMs: 0,
    logger: createLogger('konnector-xp-migrate', process.env.KONNECTOR_TEST_LOG ?? 'silent'),
  });
  await konnector.start();
}

beforeAll(async () => {
  // both settled before any failure is thrown, so that afterAll stops whichever started
  const [e, a] = await Promise.allSettled([
    startCatalogueCluster('xp-migrate', '2.3', { catalogue: { ...catalogue, services: [...catalogue.services], operations: [...catalogue.operations] } }),
    startCluster({ name: 'xp-migrate-app' }),
  ]);
  if (e.status === 'fulfilled') env = e.value;
  if (a.status === 'fulfilled') app = a.value;
  for (const r of [e, a]) if (r.status === 'rejected') throw r.reason;
  client = new KubeClient(env.cluster.kubeConfig);
  ac = new KubeClient(app.kubeConfig);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-xp-migrate-'));
  fs.chmodSync(tmp, 0o711); // the servers run as `postgres` when the tests run as root
  operator = new SandboxA8sOperator({ client, dataDir: path.join(tmp, 'a8s') });
  await operator.start();
  await Promise.all([installBindingCRDs(client), installBindingCRDs(ac)]);
  backend = new MiniBackend(env.cluster);
  await backend.start();
  consumer = await setUpConsumerOnProvider(env.cluster, CLUSTER_NS, { exports: await exportsOf(env.catalogue) });
  // The minimal backend grants the konnector its test group only; here it also manages the anynines.com objects.
  await ensure(client, CoreResources.clusterroles, {
    metadata: { name: 'konnector-anynines' },
    rules: [{ apiGroups: ['anynines.com'], resources: ['*'], verbs: ['*'] }],
  } as KubeObject);
  await ensure(client, CoreResources.clusterrolebindings, {
    metadata: { name: 'konnector-anynines' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'konnector-anynines' },
    subjects: [{ kind: 'ServiceAccount', name: 'konnector', namespace: CLUSTER_NS }],
  } as KubeObject);
  await bindAll(await exportsOf(env.catalogue));
  await startKonnector();
  await waitFor('the claim CRDs on the app cluster', async () => {
    for (const n of APIS) if (!(await ac.getOrNull(CoreResources.crds, undefined, n))) return undefined;
    return true;
  });
  await ensure(ac, CoreResources.namespaces, { metadata: { name: APP_NS } } as KubeObject);
}, 900_000);

afterAll(async () => {
  await konnector?.stop().catch(() => undefined);
  await backend?.stop();
  await operator?.stop();
  client?.close();
  ac?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  await Promise.all([env?.cluster.stop(), app?.stop()]);
}, 180_000);

/** Runs `klutch-kit <args>` in-process: its exit code and what it wrote to stderr. */
async function cli(args: readonly string[]): Promise<{ code: number; err: string }> {
  let err = '';
  const before = process.exitCode;
  await main(['node', 'klutch-kit', ...args], { write: (s: string) => (err += s) });
  const code = Number(process.exitCode ?? 0);
  process.exitCode = before;
  return { code, err };
}

const decode = (s: Obj): Record<string, string> =>
  Object.fromEntries(Object.entries((s as { data?: Record<string, string> }).data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));

async function session<T>(creds: Record<string, string>, fn: (db: pg.Client) => Promise<T>): Promise<T> {
  const db = new pg.Client({
    host: creds.instance_service,
    port: 5432,
    user: creds.username,
    password: creds.password,
    database: creds.database,
    connectionTimeoutMillis: 5_000,
  });
  db.on('error', () => undefined);
  await db.connect();
  try {
    return await fn(db);
  } finally {
    await db.end();
  }
}

const readyOf = async (kind: string, name: string) => condition(await env.api.get(GROUP, kind, name, NS), 'Ready')?.status === 'True';
const readyOnApp = async (r: ResourceRef, name: string) => condition((await ac.getOrNull(r, APP_NS, name)) as Obj | undefined, 'Ready')?.status === 'True';
const appSecret = (name: string) =>
  waitFor(`Secret ${APP_NS}/${name} on the app cluster`, async () => (await ac.getOrNull(CoreResources.secrets, APP_NS, name)) ?? undefined, 120_000);

describe('claims → namespaced XRs without losing the database', () => {
  it('runs the documented steps; the a8s objects are adopted and the data is still there', async () => {
    const { api } = env;
    // Claims in production, from an app cluster, naming their backends, with data.
    await ac.create(PGI, {
      metadata: { name: 'orders', namespace: APP_NS },
      spec: { service: 'a9s-postgresql14', plan: 'postgresql-single-nano', compositionRef: { name: 'a8s-postgresql' } },
    } as KubeObject);
    await ac.create(SBI, {
      metadata: { name: 'shop', namespace: APP_NS },
      spec: { instanceRef: 'orders', serviceInstanceType: 'postgresql', compositionRef: { name: 'a8s-servicebinding' } },
    } as KubeObject);
    await waitFor(
      'claims Ready on the app cluster',
      async () => ((await readyOnApp(PGI, 'orders')) && (await readyOnApp(SBI, 'shop')) ? true : undefined),
      300_000,
    );
    expect(await readyOf('PostgresqlInstance', 'orders')).toBe(true);
    // the a8s Secret, as it came down to the app cluster (the claims style's permission claim)
    const oldCreds = decode((await appSecret('shop-service-binding')) as Obj);
    expect(oldCreds).toEqual(decode((await api.get('v1', 'Secret', 'shop-service-binding', NS))!));
    await session(oldCreds, async (db) => {
      await db.query('CREATE TABLE orders (id int primary key, item text)');
      await db.query("INSERT INTO orders VALUES (1, 'from the claim era')");
    });
    const pgBefore = (await api.get(PG[0], PG[1], 'orders', NS))!;
    const sbBefore = (await api.get(SB[0], SB[1], 'shop', NS))!;
    const [server] = operator.instances.list().filter((i) => i.key === `${NS}/orders`);
    expect(server?.pid).toBeDefined();

    // 1. Stop the round trip from the app cluster (the konnector: scaled to 0 in a cluster, stopped here).
    await konnector!.stop();
    konnector = undefined;

    // 2. `klutch-kit migrate release-claims`: saves the claims, pauses their XRs, orphans and deletes the
    //    composed Objects, deletes the claims and lets the XRs go. The a8s objects stay.
    const savedFile = path.join(tmp, 'claims.yaml');
    const composedObjects: Obj[] = [];
    for (const [kind, name] of [
      ['PostgresqlInstance', 'orders'],
      ['ServiceBinding', 'shop'],
    ] as const)
      composedObjects.push(...(await composed(api, kind, name, 1, NS)).resources);
    expect(composedObjects.map((o) => o.apiVersion)).toEqual(['kubernetes.crossplane.io/v1alpha1', 'kubernetes.crossplane.io/v1alpha1']);
    expect(await cli(['migrate', 'release-claims', '--kubeconfig', env.cluster.kubeconfigPath, '--save', savedFile, '--quiet'])).toEqual({ code: 0, err: '' });
    for (const kind of ['PostgresqlInstance', 'ServiceBinding']) expect(await api.list(GROUP, kind, NS)).toEqual([]);
    for (const o of composedObjects) expect(await api.get(o.apiVersion!, o.kind!, o.metadata!.name!)).toBeUndefined();
    expect((await api.get(PG[0], PG[1], 'orders', NS))?.metadata!.uid).toBe(pgBefore.metadata!.uid);
    expect((await api.get(SB[0], SB[1], 'shop', NS))?.metadata!.uid).toBe(sbBefore.metadata!.uid);
    // Run again (as after an interruption): nothing left to release, nothing changed.
    const again = path.join(tmp, 'claims-again.yaml');
    expect(await cli(['migrate', 'release-claims', '--kubeconfig', env.cluster.kubeconfigPath, '--save', again, '--quiet'])).toEqual({ code: 0, err: '' });
    expect((parse(fs.readFileSync(again, 'utf8')) as { items: Obj[] }).items).toEqual([]);
    const saved = (parse(fs.readFileSync(savedFile, 'utf8')) as { items: Obj[] }).items;
    expect(saved.map((c) => [c.kind, c.metadata!.name, c.spec!.compositionRef])).toEqual([
      ['PostgresqlInstance', 'orders', { name: 'a8s-postgresql' }],
      ['ServiceBinding', 'shop', { name: 'a8s-servicebinding' }],
    ]);

    // 3. Replace the catalogue: the claim XRDs (and with them the claim CRDs) go, the namespaced ones come.
    await api.delete('pkg.crossplane.io/v1', 'Configuration', 'klutch-catalogue');
    await waitFor(
      'claim XRDs and CRDs gone',
      async () => {
        for (const x of env.xrds) if (await api.get('apiextensions.crossplane.io/v1', 'CompositeResourceDefinition', x.metadata!.name!)) return undefined;
        return (await api.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'postgresqlinstances.anynines.com')) ? undefined : true;
      },
      240_000,
    );
    const ns = await installCatalogue(env.cluster, api, 'v0.2.0', {
      catalogue: { services: [...catalogue.services], operations: [...catalogue.operations], apiStyle: ApiStyle.NAMESPACED_XR },
    });
    expect(ns.xrds.map((x) => x.apiVersion)).toEqual(['apiextensions.crossplane.io/v2', 'apiextensions.crossplane.io/v2']);

    // 4. `klutch-kit migrate create-xrs`: each claim as a namespaced XR, same name, namespace and spec
    //    (compositionRef under spec.crossplane), Ready.
    expect(await cli(['migrate', 'create-xrs', '--kubeconfig', env.cluster.kubeconfigPath, '--from', savedFile, '--quiet'])).toEqual({ code: 0, err: '' });
    expect(await readyOf('PostgresqlInstance', 'orders')).toBe(true);
    expect(await readyOf('ServiceBinding', 'shop')).toBe(true);

    // Adopted, not re-created: same a8s objects, same server process, same data.
    const pgAfter = (await api.get(PG[0], PG[1], 'orders', NS))!;
    expect(pgAfter.metadata!.uid).toBe(pgBefore.metadata!.uid);
    expect((await api.get(SB[0], SB[1], 'shop', NS))?.metadata!.uid).toBe(sbBefore.metadata!.uid);
    const xr = (await api.get(GROUP, 'PostgresqlInstance', 'orders', NS))!;
    const ref = (xr.spec!.crossplane.resourceRefs as Array<{ apiVersion: string; kind: string; name: string }>)[0];
    expect(ref.apiVersion).toBe('kubernetes.m.crossplane.io/v1alpha1');
    const [serverAfter] = operator.instances.list().filter((i) => i.key === `${NS}/orders`);
    expect(serverAfter?.pid).toBe(server!.pid);
    const creds = decode(await waitFor('Secret shop-creds', async () => api.get('v1', 'Secret', 'shop-creds', NS), 60_000));
    expect(creds).toEqual(oldCreds);
    const rows = await session(creds, async (db) => (await db.query('SELECT item FROM orders ORDER BY id')).rows);
    expect(rows).toEqual([{ item: 'from the claim era' }]);

    // 5. Bind again: the backend deletes an export whose CRD is gone (runtime/backend/reconcilers/export.ts) and,
    //    on the next `kubectl bind`, exports the new CRD with the namespaced template's permission claims; the
    //    consumer accepts them. Done here as the backend and kubectl bind do it.
    for (const n of APIS) await client.delete(BINDING_RESOURCES.apiServiceExports, CLUSTER_NS, n);
    const newExports = await exportsOf(ns.catalogue);
    for (const e of newExports) await client.create(BINDING_RESOURCES.apiServiceExports, e);
    await bindAll(newExports);
    //    Start the konnector: it installs the new CRD on the app cluster, which prunes spec.compositionRef …
    await startKonnector();
    const pruned = await waitFor(
      'the namespaced XR CRD on the app cluster, spec.compositionRef pruned',
      async () => {
        const o = (await ac.getOrNull(PGI, APP_NS, 'orders')) as Obj | undefined;
        const crd = (await ac.getOrNull(CoreResources.crds, undefined, 'postgresqlinstances.anynines.com')) as unknown as Crd | undefined;
        const props = (crd?.spec.versions[0]?.schema?.openAPIV3Schema as { properties?: { spec?: { properties?: Record<string, unknown> } } })?.properties?.spec
          ?.properties;
        return props?.crossplane && o && !o.spec!.compositionRef ? o : undefined;
      },
      120_000,
    );
    expect(pruned.spec).toMatchObject({ service: 'a9s-postgresql14', plan: 'postgresql-single-nano' });
    //    … so the app's objects that name a backend are re-applied with it under spec.crossplane.
    for (const [r, name, composition] of [
      [PGI, 'orders', 'a8s-postgresql'],
      [SBI, 'shop', 'a8s-servicebinding'],
    ] as const)
      await ac.mergePatch(r, APP_NS, name, { spec: { crossplane: { compositionRef: { name: composition } } } });
    await waitFor(
      'Ready on the app cluster again',
      async () => ((await readyOnApp(PGI, 'orders')) && (await readyOnApp(SBI, 'shop')) ? true : undefined),
      180_000,
    );
    // The XRs keep their Composition, the a8s objects and the server are still the same.
    for (const [kind, name, composition] of [
      ['PostgresqlInstance', 'orders', 'a8s-postgresql'],
      ['ServiceBinding', 'shop', 'a8s-servicebinding'],
    ] as const) {
      const x = (await api.get(GROUP, kind, name, NS))!;
      expect({ kind, ref: x.spec!.crossplane.compositionRef, claim: x.metadata!.labels?.['crossplane.io/claim-name'] }).toEqual({
        kind,
        ref: { name: composition },
        claim: undefined,
      });
    }
    expect((await api.get(PG[0], PG[1], 'orders', NS))?.metadata!.uid).toBe(pgBefore.metadata!.uid);
    expect(operator.instances.list().filter((i) => i.key === `${NS}/orders`)[0]?.pid).toBe(server!.pid);
    // The composed <binding>-creds comes down to the app cluster and reads the claim era's row.
    const appCreds = decode((await appSecret('shop-creds')) as Obj);
    expect(appCreds).toEqual(oldCreds);
    expect(await session(appCreds, async (db) => (await db.query('SELECT item FROM orders ORDER BY id')).rows)).toEqual([{ item: 'from the claim era' }]);
  });
});
