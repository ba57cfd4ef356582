/**
 * The PostgreSQL data service as namespaced composite resources (ApiStyle.NAMESPACED_XR) on real
 * Crossplane 2.3 + function-patch-and-transform + provider-kubernetes v1.2.1 (the harness of
 * runtime/realinfra), with no claim anywhere:
 *
 * - the catalogue (PostgreSQL, ServiceBinding, Backup, Restore; a8s and a9s) is synthesized by ControlPlaneCluster as a
 *   Configuration package, pushed by `klutch-kit package push` and installed by the package manager;
 *   its XRDs are v2, `scope: Namespaced`, and the CRDs Crossplane creates equal deriveXrCrd;
 * - the sandbox's a8s operator stand-in (sandbox/a8s-operator, SandboxA8sOperator) runs every a8s
 *   `Postgresql` as a real PostgreSQL server (Debian's postgresql package) and every a8s
 *   `ServiceBinding` as a real role with the a8s credentials Secret;
 * - a `PostgresqlInstance` created in a namespace composes a `kubernetes.m.crossplane.io` Object
 *   (ClusterProviderConfig) → the a8s Postgresql in the same namespace → a running server; the XR is
 *   Ready only once the operator reports it Running;
 * - a `ServiceBinding` composes the a8s ServiceBinding and the credentials Secret `<binding>-creds`
 *   (or the `*-creds` name in `spec.writeConnectionSecretToRef.name`: validated by the API server, immutable)
 *   (no XR connection details); its credentials open a session on that server;
 * - deleting the XRs removes the Objects, the a8s objects, the server's role and the Secret;
 * - a Backup and a Restore compose namespaced Objects with the a8s Backup and Restore, Ready once their
 *   Ready condition is True (written by the operator stand-in of _support.ts: no backup agent runs).
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { ApiStyle } from '../../../constructs/dataservice/index.js';
import { deriveXrCrd } from '../../../constructs/validate/index.js';
import { KubeClient } from '../../../runtime/core/client.js';
import { SandboxA8sOperator } from '../../../sandbox/a8s-operator/index.js';
import { Api, type CatalogueCluster, condition, crdSpec, GROUP, NS, type Obj, startCatalogueCluster, waitFor } from './_support.js';

jest.setTimeout(600_000);

const OBJECT_M = 'kubernetes.m.crossplane.io/v1alpha1';
const PG: [string, string] = ['postgresql.anynines.com/v1beta3', 'Postgresql'];
const SB: [string, string] = ['servicebindings.anynines.com/v1beta3', 'ServiceBinding'];

let env: CatalogueCluster;
let api: Api;
let operator: SandboxA8sOperator;
let client: KubeClient;
let tmp: string;

beforeAll(async () => {
  env = await startCatalogueCluster('xp-namespaced', '2.3', {
    catalogue: { apiStyle: ApiStyle.NAMESPACED_XR, services: ['postgresql'], operations: ['servicebinding', 'backup', 'restore'] },
  });
  api = env.api;
  client = new KubeClient(env.cluster.kubeConfig);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-xp-ns-'));
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

const xr = (kind: string, name: string, spec: Record<string, unknown>): Obj => ({ apiVersion: GROUP, kind, metadata: { name, namespace: NS }, spec });

/** The namespaced XR and its composed resources (resourceRefs under spec.crossplane, in the XR's namespace). */
async function composedNs(kind: string, name: string, count: number): Promise<{ xr: Obj; resources: Obj[] }> {
  return waitFor(`${kind} ${NS}/${name} with ${count} composed resource(s)`, async () => {
    const o = await api.get(GROUP, kind, name, NS);
    const refs = (o?.spec?.crossplane?.resourceRefs ?? []) as Array<{ apiVersion: string; kind: string; name: string }>;
    if (!o || refs.length < count) return undefined;
    const resources: Obj[] = [];
    for (const r of refs) {
      const c = await api.get(r.apiVersion, r.kind, r.name, NS);
      if (!c) return undefined;
      resources.push(c);
    }
    return { xr: o, resources };
  });
}

const decode = (s: Obj): Record<string, string> =>
  Object.fromEntries(Object.entries((s as { data?: Record<string, string> }).data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));

describe('PostgreSQL as namespaced XRs on Crossplane 2.3 (no claims)', () => {
  it('the package installs v2 namespaced XRDs; Crossplane creates exactly the CRDs deriveXrCrd derives, and no claim CRD', async () => {
    expect(env.xrds.map((x) => [x.apiVersion, x.metadata!.name, x.spec!.scope]).sort()).toEqual([
      ['apiextensions.crossplane.io/v2', 'backups.anynines.com', 'Namespaced'],
      ['apiextensions.crossplane.io/v2', 'postgresqlinstances.anynines.com', 'Namespaced'],
      ['apiextensions.crossplane.io/v2', 'restores.anynines.com', 'Namespaced'],
      ['apiextensions.crossplane.io/v2', 'servicebindings.anynines.com', 'Namespaced'],
    ]);
    for (const x of env.xrds) {
      const live = await api.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', x.metadata!.name!);
      expect(live?.spec?.scope).toBe('Namespaced');
      expect(crdSpec(live!)).toEqual(crdSpec(deriveXrCrd(x as never, { crossplane: '2' })));
    }
    const crds = await api.list('apiextensions.k8s.io/v1', 'CustomResourceDefinition');
    expect(crds.filter((c) => c.spec!.group === 'anynines.com').map((c) => c.metadata!.name)).toEqual(
      expect.arrayContaining(['postgresqlinstances.anynines.com', 'servicebindings.anynines.com']),
    );
    expect(crds.filter((c) => ((c.spec!.names as { categories?: string[] }).categories ?? []).includes('claim'))).toEqual([]);
  });

  it('PostgresqlInstance → kubernetes.m Object → a8s Postgresql → a real server; ServiceBinding → its credentials Secret → a session; deletion cleans up', async () => {
    await api.create(xr('PostgresqlInstance', 'orders', { service: 'a9s-postgresql14', plan: 'postgresql-single-nano', expose: 'Internal' }));
    const { xr: pgXr, resources } = await composedNs('PostgresqlInstance', 'orders', 1);
    // The default backend applied: Crossplane wrote it under spec.crossplane.
    expect(pgXr.spec!.crossplane.compositionRef).toEqual({ name: 'a8s-postgresql' });
    expect(pgXr.metadata!.labels?.['crossplane.io/claim-name']).toBeUndefined();
    const [obj] = resources;
    expect(obj.apiVersion).toBe(OBJECT_M);
    expect(obj.metadata!.namespace).toBe(NS);
    expect(obj.spec!.providerConfigRef).toEqual({ name: 'kubernetes-provider', kind: 'ClusterProviderConfig' });
    expect(obj.spec!.forProvider.manifest).toMatchObject({
      apiVersion: PG[0],
      kind: PG[1],
      metadata: { name: 'orders', namespace: NS },
      spec: { version: 14, replicas: 1, volumeSize: '3Gi', expose: 'Internal', resources: { limits: { cpu: '2', memory: '1Gi' } } },
    });
    // Ready only once the operator runs the server; status comes back to the XR.
    const ready = await waitFor(
      'PostgresqlInstance orders Ready',
      async () => {
        const o = await api.get(GROUP, 'PostgresqlInstance', 'orders', NS);
        return condition(o, 'Ready')?.status === 'True' ? o : undefined;
      },
      180_000,
    );
    expect(ready.status!.managed).toMatchObject({ clusterStatus: 'Running', readyReplicas: 1 });
    const [inst] = operator.instances.list().filter((i) => i.key === `${NS}/orders`);
    expect(inst?.address).toMatch(/^127\.\d+\.\d+\.\d+$/);

    await api.create(xr('ServiceBinding', 'shop', { instanceRef: 'orders', serviceInstanceType: 'postgresql' }));
    const { resources: sbRes } = await composedNs('ServiceBinding', 'shop', 2);
    expect(sbRes.map((r) => [r.apiVersion, r.spec!.forProvider.manifest.kind]).sort()).toEqual([
      [OBJECT_M, 'Secret'],
      [OBJECT_M, 'ServiceBinding'],
    ]);
    await waitFor(
      'ServiceBinding shop Ready',
      async () => (condition(await api.get(GROUP, 'ServiceBinding', 'shop', NS), 'Ready')?.status === 'True' ? true : undefined),
      180_000,
    );
    const secret = await waitFor('Secret shop-creds', async () => api.get('v1', 'Secret', 'shop-creds', NS), 60_000);
    expect((secret as { type?: string }).type).toBe('connection.crossplane.io/v1alpha1');
    const creds = decode(secret);
    expect(Object.keys(creds).sort()).toEqual(['database', 'instance_service', 'password', 'username']);
    expect(creds.instance_service).toBe(inst!.address);
    // The XR itself carries no connection details.
    const sbXr = await api.get(GROUP, 'ServiceBinding', 'shop', NS);
    expect(JSON.stringify(sbXr)).not.toMatch(/writeConnectionSecretToRef|connectionDetails/);

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
      await db.query('CREATE TABLE IF NOT EXISTS orders (id int primary key, item text)');
      await db.query("INSERT INTO orders VALUES (1, 'namespaced')");
      expect((await db.query('SELECT item FROM orders WHERE id = 1')).rows).toEqual([{ item: 'namespaced' }]);
    } finally {
      await db.end();
    }

    // A ServiceBinding may name its credentials Secret (spec.writeConnectionSecretToRef.name, a *-creds name).
    const rejected = async (name: string, spec: Record<string, unknown>) => {
      try {
        await api.create(xr('ServiceBinding', name, { instanceRef: 'orders', serviceInstanceType: 'postgresql', ...spec }));
      } catch (e) {
        return String((e as Error).message);
      }
      await api.delete(GROUP, 'ServiceBinding', name, NS);
      return 'accepted';
    };
    const bad = await rejected('badname', { writeConnectionSecretToRef: { name: 'orders-secret' } });
    expect(bad).toMatch(/spec\.writeConnectionSecretToRef\.name: Invalid value: "orders-secret": spec\.writeConnectionSecretToRef\.name in body should match/);
    await api.create(
      xr('ServiceBinding', 'named', { instanceRef: 'orders', serviceInstanceType: 'postgresql', writeConnectionSecretToRef: { name: 'orders-app-creds' } }),
    );
    await waitFor(
      'ServiceBinding named Ready',
      async () => (condition(await api.get(GROUP, 'ServiceBinding', 'named', NS), 'Ready')?.status === 'True' ? true : undefined),
      180_000,
    );
    const named = decode(await waitFor('Secret orders-app-creds', async () => api.get('v1', 'Secret', 'orders-app-creds', NS), 60_000));
    expect(await api.get('v1', 'Secret', 'named-creds', NS)).toBeUndefined();
    // its own role, copied from the a8s Secret of that binding
    expect(named.username).not.toBe(creds.username);
    expect(named).toEqual(decode((await api.get('v1', 'Secret', 'named-service-binding', NS))!));
    const db2 = new pg.Client({ host: named.instance_service, port: 5432, user: named.username, password: named.password, database: named.database });
    db2.on('error', () => undefined);
    await db2.connect();
    try {
      expect((await db2.query('SELECT current_user AS u')).rows).toEqual([{ u: named.username }]);
    } finally {
      await db2.end();
    }
    // immutable once set
    let renamed = 'accepted';
    try {
      await api.apply(
        xr('ServiceBinding', 'named', { instanceRef: 'orders', serviceInstanceType: 'postgresql', writeConnectionSecretToRef: { name: 'other-creds' } }),
      );
    } catch (e) {
      renamed = String((e as Error).message);
    }
    expect(renamed).toContain('spec.writeConnectionSecretToRef.name is immutable');
    await api.delete(GROUP, 'ServiceBinding', 'named', NS);
    await waitFor(
      'ServiceBinding named and its Secret orders-app-creds gone',
      async () => ((await api.get(GROUP, 'ServiceBinding', 'named', NS)) || (await api.get('v1', 'Secret', 'orders-app-creds', NS)) ? undefined : true),
      120_000,
    );

    // Deleting the XRs deletes the Objects, the a8s objects (and with them the role and Secrets) and the server.
    await api.delete(GROUP, 'ServiceBinding', 'shop', NS);
    await waitFor(
      'ServiceBinding shop, its Objects, the a8s ServiceBinding and both Secrets gone',
      async () => {
        if (await api.get(GROUP, 'ServiceBinding', 'shop', NS)) return undefined;
        for (const r of sbRes) if (await api.get(r.apiVersion!, r.kind!, r.metadata!.name!, NS)) return undefined;
        if (await api.get(SB[0], SB[1], 'shop', NS)) return undefined;
        if (await api.get('v1', 'Secret', 'shop-service-binding', NS)) return undefined;
        return (await api.get('v1', 'Secret', 'shop-creds', NS)) ? undefined : true;
      },
      120_000,
    );
    await api.delete(GROUP, 'PostgresqlInstance', 'orders', NS);
    await waitFor(
      'PostgresqlInstance orders, its Object, the a8s Postgresql and the server gone',
      async () => {
        if (await api.get(GROUP, 'PostgresqlInstance', 'orders', NS)) return undefined;
        if (await api.get(obj.apiVersion!, obj.kind!, obj.metadata!.name!, NS)) return undefined;
        if (await api.get(PG[0], PG[1], 'orders', NS)) return undefined;
        return operator.instances.list().some((i) => i.key === `${NS}/orders`) ? undefined : true;
      },
      120_000,
    );
  });

  it('Backup and Restore compose namespaced Objects with the a8s Backup and Restore; Ready follows their Ready condition', async () => {
    const BK: [string, string] = ['backups.anynines.com/v1beta3', 'Backup'];
    const RS: [string, string] = ['backups.anynines.com/v1beta3', 'Restore'];
    await api.create(xr('Backup', 'bk', { instanceRef: 'db1', serviceInstanceType: 'postgresql' }));
    await api.create(xr('Restore', 'rs', { backupRef: 'bk', instanceRef: 'db1', serviceInstanceType: 'postgresql' }));
    const [bkObj] = (await composedNs('Backup', 'bk', 1)).resources;
    const [rsObj] = (await composedNs('Restore', 'rs', 1)).resources;
    for (const o of [bkObj, rsObj]) {
      expect([o.apiVersion, o.metadata!.namespace, o.spec!.providerConfigRef.kind, o.spec!.readiness]).toEqual([
        OBJECT_M,
        NS,
        'ClusterProviderConfig',
        { policy: 'DeriveFromObject' },
      ]);
    }
    expect(bkObj.spec!.forProvider.manifest).toMatchObject({
      apiVersion: BK[0],
      kind: BK[1],
      metadata: { name: 'bk', namespace: NS },
      spec: { serviceInstance: { apiGroup: 'postgresql.anynines.com', kind: 'PostgreSQL', name: 'db1' } },
    });
    expect(rsObj.spec!.forProvider.manifest).toMatchObject({
      apiVersion: RS[0],
      kind: RS[1],
      metadata: { name: 'rs', namespace: NS },
      spec: { backupName: 'bk', serviceInstance: { name: 'db1' } },
    });
    // The a8s objects exist, the XRs are not Ready until the operator (its stand-in here: no backup agent runs) reports them Ready.
    await waitFor('a8s Backup and Restore', async () =>
      (await api.get(BK[0], BK[1], 'bk', NS)) && (await api.get(RS[0], RS[1], 'rs', NS)) ? true : undefined,
    );
    expect(condition(await api.get(GROUP, 'Backup', 'bk', NS), 'Ready')?.status).not.toBe('True');
    await env.a8s.conditionReady('Backup', 'bk', NS);
    await env.a8s.conditionReady('Restore', 'rs', NS);
    for (const [kind, name] of [
      ['Backup', 'bk'],
      ['Restore', 'rs'],
    ]) {
      await waitFor(
        `${kind} ${name} Ready`,
        async () => (condition(await api.get(GROUP, kind, name, NS), 'Ready')?.status === 'True' ? true : undefined),
        120_000,
      );
    }
    await api.delete(GROUP, 'Restore', 'rs', NS);
    await api.delete(GROUP, 'Backup', 'bk', NS);
    await waitFor(
      'Backup, Restore, their Objects and a8s objects gone',
      async () => {
        for (const [a, k, n] of [
          [GROUP, 'Backup', 'bk'],
          [GROUP, 'Restore', 'rs'],
          [OBJECT_M, 'Object', bkObj.metadata!.name!],
          [OBJECT_M, 'Object', rsObj.metadata!.name!],
          [...BK, 'bk'],
          [...RS, 'rs'],
        ])
          if (await api.get(a, k, n, NS)) return undefined;
        return true;
      },
      120_000,
    );
  });

  it('admission reads spec.crossplane.compositionRef: an a9s-only service on the default (a8s) backend is rejected, on a9s accepted', async () => {
    const reject = async (spec: Record<string, unknown>) => {
      try {
        await api.create(xr('PostgresqlInstance', 'rejected', spec));
      } catch (e) {
        return String((e as Error).message);
      }
      await api.delete(GROUP, 'PostgresqlInstance', 'rejected', NS);
      return 'accepted';
    };
    expect(await reject({ service: 'a9s-postgresql17', plan: 'postgresql-single-nano' })).toContain('Unsupported service used for postgresql');
    expect(await reject({ service: 'a9s-postgresql14', plan: 'postgresql-single-nano', crossplane: { compositionRef: { name: 'a9s-postgresql' } } })).toContain(
      'Unsupported service used for postgresql',
    );
    expect(await reject({ service: 'a9s-postgresql15', plan: 'postgresql-single-nano', crossplane: { compositionRef: { name: 'a9s-postgresql' } } })).toBe(
      'accepted',
    );
  });
});
