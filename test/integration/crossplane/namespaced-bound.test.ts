/**
 * Bound without claims: the namespaced PostgreSQL of ApiStyle.NAMESPACED_XR ordered from an app cluster.
 *
 * The control plane runs real Crossplane 2.3 + function-patch-and-transform + provider-kubernetes
 * v1.2.1 with the namespaced catalogue (Configuration package) and the sandbox's a8s operator
 * (SandboxA8sOperator: real PostgreSQL servers). The app cluster is bound with APIServiceExports made
 * by the backend's own `exportSpecFromCrd` from the XR CRDs Crossplane created, with the permission
 * claims of the catalogue's export templates; a konnector (runtime/konnector) syncs. The minimal backend
 * of the konnector tests assigns provider namespaces.
 *
 * A PostgresqlInstance and a ServiceBinding created on the app cluster become namespaced XRs in the
 * provider namespace (no claim anywhere), are composed, reach a real server, and their Ready status and
 * the composed `<binding>-creds` Secret come down to the app cluster; the credentials open a session.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { ApiStyle } from '../../../constructs/dataservice/index.js';
import { CoreResources, KubeClient, type KubeObject, type ResourceRef } from '../../../runtime/core/client.js';
import { createLogger } from '../../../runtime/core/logger.js';
import { exportSpecFromCrd } from '../../../runtime/backend/export.js';
import type { Crd } from '../../../runtime/backend/catalog.js';
import { Konnector } from '../../../runtime/konnector/konnector.js';
import { startCluster, type RealCluster } from '../../../runtime/realinfra/index.js';
import { SandboxA8sOperator } from '../../../sandbox/a8s-operator/index.js';
import { bindOnApp, ensure, installBindingCRDs, MiniBackend, setUpConsumerOnProvider } from '../konnector/fixture.js';
import { type CatalogueCluster, condition, GROUP, type Obj, startCatalogueCluster, waitFor } from './_support.js';

jest.setTimeout(600_000);

const CLUSTER_NS = 'consumer-a';
const APP_NS = 'shop';
const PROVIDER_NS = `${CLUSTER_NS}-${APP_NS}`;
const ref = (plural: string, kind: string): ResourceRef => ({ group: 'anynines.com', version: 'v1', plural, kind, namespaced: true });
const PGI = ref('postgresqlinstances', 'PostgresqlInstance');
const SBI = ref('servicebindings', 'ServiceBinding');

let env: CatalogueCluster;
let app: RealCluster;
let cpc: KubeClient;
let ac: KubeClient;
let operator: SandboxA8sOperator;
let backend: MiniBackend;
let konnector: Konnector;
let tmp: string;

beforeAll(async () => {
  [env, app] = await Promise.all([
    startCatalogueCluster('xp-ns-bound', '2.3', { catalogue: { apiStyle: ApiStyle.NAMESPACED_XR, services: ['postgresql'], operations: ['servicebinding'] } }),
    startCluster({ name: 'xp-ns-bound-app' }),
  ]);
  cpc = new KubeClient(env.cluster.kubeConfig);
  ac = new KubeClient(app.kubeConfig);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-xp-ns-bound-'));
  fs.chmodSync(tmp, 0o711); // the servers run as `postgres` when the tests run as root
  operator = new SandboxA8sOperator({ client: cpc, dataDir: path.join(tmp, 'a8s') });
  await operator.start();

  await Promise.all([installBindingCRDs(cpc), installBindingCRDs(ac)]);
  backend = new MiniBackend(env.cluster);
  await backend.start();
  // The exports, as the backend makes them: from the XR CRDs Crossplane created, with the templates' permission claims.
  const templates = new Map<string, { resource: string; renderedPermissionClaims: readonly unknown[] }>();
  for (const s of [...env.catalogue.services.values(), ...env.catalogue.operations.values()]) templates.set(s.exportTemplate.resource, s.exportTemplate);
  const exports: KubeObject[] = [];
  for (const t of templates.values()) {
    const crd = (await cpc.get(CoreResources.crds, undefined, `${t.resource}.anynines.com`)) as unknown as Crd;
    const spec = exportSpecFromCrd(crd, { informerScope: 'Namespaced', permissionClaims: t.renderedPermissionClaims as never });
    exports.push({
      apiVersion: 'klutch.anynines.com/v1alpha1',
      kind: 'APIServiceExport',
      metadata: { name: `${t.resource}.anynines.com`, namespace: CLUSTER_NS },
      spec,
    } as KubeObject);
  }
  expect(exports.map((e) => e.metadata.name).sort()).toEqual(['postgresqlinstances.anynines.com', 'servicebindings.anynines.com']);
  const consumer = await setUpConsumerOnProvider(env.cluster, CLUSTER_NS, { exports });
  // The minimal backend grants the konnector its test group only; here it also manages the anynines.com XRs.
  await ensure(cpc, CoreResources.clusterroles, {
    metadata: { name: 'konnector-anynines' },
    rules: [{ apiGroups: ['anynines.com'], resources: ['*'], verbs: ['*'] }],
  } as KubeObject);
  await ensure(cpc, CoreResources.clusterrolebindings, {
    metadata: { name: 'konnector-anynines' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'konnector-anynines' },
    subjects: [{ kind: 'ServiceAccount', name: 'konnector', namespace: CLUSTER_NS }],
  } as KubeObject);
  for (const e of exports) {
    const claims = ((e as unknown as { spec: { permissionClaims?: unknown[] } }).spec.permissionClaims ?? []).map((c) => ({
      ...(c as object),
      state: 'Accepted',
    }));
    await bindOnApp(app, consumer, { name: e.metadata.name!, claims });
  }
  konnector = new Konnector({
    appKubeConfig: app.kubeConfig,
    heartbeatIntervalMs: 4000,
    providerSyncTimeoutMs: 10_000,
    resyncMs: 0,
    logger: createLogger('konnector-xp-ns-bound', process.env.KONNECTOR_TEST_LOG ?? 'silent'),
  });
  await konnector.start();
  await waitFor('the XR CRDs on the app cluster', async () => {
    for (const n of ['postgresqlinstances.anynines.com', 'servicebindings.anynines.com'])
      if (!(await ac.getOrNull(CoreResources.crds, undefined, n))) return undefined;
    return true;
  });
  await ensure(ac, CoreResources.namespaces, { metadata: { name: APP_NS } } as KubeObject);
}, 900_000);

afterAll(async () => {
  await konnector?.stop().catch(() => undefined);
  await backend?.stop();
  await operator?.stop();
  cpc?.close();
  ac?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  await Promise.all([env?.cluster.stop(), app?.stop()]);
}, 180_000);

const decode = (s: Obj): Record<string, string> =>
  Object.fromEntries(Object.entries((s as { data?: Record<string, string> }).data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));

describe('namespaced XRs bound to an app cluster (no claims)', () => {
  it('the app cluster gets the namespaced XR CRDs (scope Namespaced, with spec.crossplane)', async () => {
    const crd = (await ac.get(CoreResources.crds, undefined, 'postgresqlinstances.anynines.com')) as unknown as Crd;
    expect(crd.spec.scope).toBe('Namespaced');
    expect(Object.keys((crd.spec.versions[0].schema!.openAPIV3Schema as Record<string, any>).properties.spec.properties)).toEqual(
      expect.arrayContaining(['crossplane', 'service', 'plan']),
    );
  });

  it('PostgresqlInstance and ServiceBinding from the app cluster: composed on the control plane, Ready and credentials come down', async () => {
    await ac.create(PGI, {
      apiVersion: GROUP,
      kind: 'PostgresqlInstance',
      metadata: { name: 'orders', namespace: APP_NS },
      spec: { service: 'a9s-postgresql14', plan: 'postgresql-single-nano' },
    } as KubeObject);
    await ac.create(SBI, {
      apiVersion: GROUP,
      kind: 'ServiceBinding',
      metadata: { name: 'app', namespace: APP_NS },
      spec: { instanceRef: 'orders', serviceInstanceType: 'postgresql' },
    } as KubeObject);
    // On the control plane they are the XRs themselves, in the provider namespace.
    const xr = await waitFor(
      'PostgresqlInstance in the provider namespace',
      async () => (await cpc.getOrNull(PGI, PROVIDER_NS, 'orders')) ?? undefined,
      120_000,
    );
    expect(xr.metadata.labels?.['crossplane.io/claim-name']).toBeUndefined();
    await waitFor(
      'a8s Postgresql in the provider namespace, run as a real server',
      async () => (operator.instances.list().some((i) => i.key === `${PROVIDER_NS}/orders`) ? true : undefined),
      180_000,
    );
    const ready = async (r: ResourceRef, name: string) => condition((await ac.getOrNull(r, APP_NS, name)) as Obj | undefined, 'Ready')?.status === 'True';
    await waitFor('Ready on the app cluster', async () => ((await ready(PGI, 'orders')) && (await ready(SBI, 'app')) ? true : undefined), 300_000);
    const pgApp = (await ac.get(PGI, APP_NS, 'orders')) as Obj;
    expect(pgApp.status!.managed).toMatchObject({ clusterStatus: 'Running' });
    const secret = await waitFor(
      'app-creds on the app cluster',
      async () => (await ac.getOrNull(CoreResources.secrets, APP_NS, 'app-creds')) ?? undefined,
      120_000,
    );
    expect((secret as { type?: string }).type).toBe('connection.crossplane.io/v1alpha1');
    // The a8s operator's own Secret stays on the control plane.
    expect(await cpc.getOrNull(CoreResources.secrets, PROVIDER_NS, 'app-service-binding')).toBeTruthy();
    expect(await ac.getOrNull(CoreResources.secrets, APP_NS, 'app-service-binding')).toBeFalsy();
    const creds = decode(secret as Obj);
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
      expect((await db.query('SELECT current_user AS u')).rows).toEqual([{ u: creds.username }]);
    } finally {
      await db.end();
    }
  });
});
