/**
 * docs/dataservice.md's migration from claims to namespaced XRs, on real Crossplane 2.3 +
 * function-patch-and-transform + provider-kubernetes v1.2.1, with a database behind the claim: the
 * sandbox's a8s operator (SandboxA8sOperator) runs the a8s Postgresql as a real PostgreSQL server.
 *
 * A claim PostgresqlInstance and a claim ServiceBinding are Ready and a row is written with the
 * binding's credentials; then the documented steps: orphan the composed Objects, delete the claims,
 * replace the claim catalogue (its Configuration) by the ApiStyle.NAMESPACED_XR catalogue, re-create
 * the claims as namespaced XRs. The a8s objects are adopted (same uid), the server is the same process
 * and the row is still there, read with the credentials of the composed `<binding>-creds` Secret.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { ApiStyle } from '../../../constructs/dataservice/index.js';
import { KubeClient } from '../../../runtime/core/client.js';
import { SandboxA8sOperator } from '../../../sandbox/a8s-operator/index.js';
import { type CatalogueCluster, claimOf, composed, condition, GROUP, installCatalogue, NS, type Obj, startCatalogueCluster, waitFor } from './_support.js';

jest.setTimeout(900_000);

const PG: [string, string] = ['postgresql.anynines.com/v1beta3', 'Postgresql'];
const SB: [string, string] = ['servicebindings.anynines.com/v1beta3', 'ServiceBinding'];
const catalogue = { services: ['postgresql'], operations: ['servicebinding'] } as const;

let env: CatalogueCluster;
let operator: SandboxA8sOperator;
let client: KubeClient;
let tmp: string;

beforeAll(async () => {
  env = await startCatalogueCluster('xp-migrate', '2.3', {
    catalogue: { ...catalogue, services: [...catalogue.services], operations: [...catalogue.operations] },
  });
  client = new KubeClient(env.cluster.kubeConfig);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-xp-migrate-'));
  fs.chmodSync(tmp, 0o711); // the servers run as `postgres` when the tests run as root
  operator = new SandboxA8sOperator({ client, dataDir: path.join(tmp, 'a8s') });
  await operator.start();
}, 900_000);

afterAll(async () => {
  await operator?.stop();
  client?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  await env?.cluster.stop();
}, 120_000);

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

describe('claims → namespaced XRs without losing the database', () => {
  it('runs the documented steps; the a8s objects are adopted and the data is still there', async () => {
    const { api } = env;
    // Claims in production, with data.
    await api.create(claimOf('PostgresqlInstance', 'orders', { service: 'a9s-postgresql14', plan: 'postgresql-single-nano' }));
    await api.create(claimOf('ServiceBinding', 'shop', { instanceRef: 'orders', serviceInstanceType: 'postgresql' }));
    await waitFor(
      'claims Ready',
      async () => ((await readyOf('PostgresqlInstance', 'orders')) && (await readyOf('ServiceBinding', 'shop')) ? true : undefined),
      240_000,
    );
    const oldCreds = decode((await api.get('v1', 'Secret', 'shop-service-binding', NS))!);
    await session(oldCreds, async (db) => {
      await db.query('CREATE TABLE orders (id int primary key, item text)');
      await db.query("INSERT INTO orders VALUES (1, 'from the claim era')");
    });
    const pgBefore = (await api.get(PG[0], PG[1], 'orders', NS))!;
    const sbBefore = (await api.get(SB[0], SB[1], 'shop', NS))!;
    const [server] = operator.instances.list().filter((i) => i.key === `${NS}/orders`);
    expect(server?.pid).toBeDefined();

    // 2. Save the claims.
    const saved = [(await api.get(GROUP, 'PostgresqlInstance', 'orders', NS))!, (await api.get(GROUP, 'ServiceBinding', 'shop', NS))!];

    // 3. Orphan what they composed.
    const composedObjects: Obj[] = [];
    for (const c of saved) {
      const { resources } = await composed(api, c.kind!, c.metadata!.name!);
      for (const r of resources) {
        await api.apply(
          { apiVersion: r.apiVersion, kind: r.kind, metadata: { name: r.metadata!.name }, spec: { deletionPolicy: 'Orphan' } } as Obj,
          'migration',
        );
        composedObjects.push(r);
      }
    }
    expect(composedObjects.map((o) => o.apiVersion)).toEqual(['kubernetes.crossplane.io/v1alpha1', 'kubernetes.crossplane.io/v1alpha1']);

    // 4. Delete the claims; XRs and Objects go, the a8s objects stay.
    for (const c of saved) await api.delete(GROUP, c.kind!, c.metadata!.name!, NS);
    await waitFor(
      'claims, XRs and Objects gone',
      async () => {
        for (const c of saved) if (await api.get(GROUP, c.kind!, c.metadata!.name!, NS)) return undefined;
        for (const o of composedObjects) if (await api.get(o.apiVersion!, o.kind!, o.metadata!.name!)) return undefined;
        return true;
      },
      180_000,
    );
    expect((await api.get(PG[0], PG[1], 'orders', NS))?.metadata!.uid).toBe(pgBefore.metadata!.uid);
    expect((await api.get(SB[0], SB[1], 'shop', NS))?.metadata!.uid).toBe(sbBefore.metadata!.uid);

    // 5. Replace the catalogue: the claim XRDs (and with them the claim CRDs) go, the namespaced ones come.
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

    // 6. Re-create each claim as a namespaced XR: same name, namespace and spec (compositionRef moves under spec.crossplane).
    for (const c of saved) {
      const { compositionRef, resourceRef, writeConnectionSecretToRef, compositeDeletePolicy, compositionUpdatePolicy, ...spec } = c.spec as Record<
        string,
        unknown
      >;
      void resourceRef;
      void writeConnectionSecretToRef;
      void compositeDeletePolicy;
      void compositionUpdatePolicy;
      await api.create({
        apiVersion: c.apiVersion,
        kind: c.kind,
        metadata: { name: c.metadata!.name, namespace: NS },
        spec: { ...spec, ...(compositionRef ? { crossplane: { compositionRef } } : {}) },
      });
    }
    await waitFor(
      'namespaced XRs Ready',
      async () => ((await readyOf('PostgresqlInstance', 'orders')) && (await readyOf('ServiceBinding', 'shop')) ? true : undefined),
      240_000,
    );

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
  });
});
