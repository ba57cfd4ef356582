/**
 * The catalogue on real Crossplane (2.3, the harness of runtime/realinfra): one cluster with Crossplane
 * core, function-patch-and-transform and provider-kubernetes for the whole file.
 *
 * - The catalogue is synthesized by our ControlPlaneCluster as a Configuration package source
 *   (synthTopology), built and pushed by `klutch-kit package push` (runPush: klutch-kit's own xpkg code,
 *   no crane) to the harness's registry, and installed by Crossplane's package manager from the
 *   `Configuration` object the control plane carries.
 * - The claim and XR CRDs Crossplane creates equal deriveClaimCrd / deriveXrCrd.
 * - Every service × backend: a claim reaches an XR and its composed resource, asserted field by field
 *   against the catalogue model (plans → replicas, cpu, memory, volume size; service → version;
 *   parameters → operator fields or broker names; claim labels).
 * - a8s: the claim is not Ready until the **a8s operator stand-in** (test/integration/crossplane/
 *   _support.ts, operator level only) reports the a8s object ready; status comes back to the claim;
 *   deleting the claim deletes the XR, the Object and the a8s object.
 * - a9s: here the a9s managed resources (ServiceInstance, ServiceBinding, Backup, Restore) are only
 *   composed (their CRDs from imports/crds/provider-anynines); the real provider-anynines reconciles
 *   them against the broker stand-in in test/integration/a9s/.
 * - ServiceBinding, Backup and Restore compose; the docs' ClickHouse worked example composes.
 * - The docs' operator-profile example (a Redis-like operator, not PostgreSQL) reaches Ready against
 *   the **Redis operator stand-in** (_redis-operator.ts, operator level only: it writes the status of
 *   its RedisClusters).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as constructs from 'constructs';
import { App, Chart } from 'cdk8s';
import ts from 'typescript';
import type { Catalogue } from '../../../constructs/catalogue/index.js';
import { AnyninesProviderConfig, type IProviderConfig } from '../../../constructs/crossplane/index.js';
import * as dataservice from '../../../constructs/dataservice/index.js';
import { A9sBackend, type DataService, ParameterLocation } from '../../../constructs/dataservice/index.js';
import { deriveClaimCrd, deriveXrCrd, SchemaValidator } from '../../../constructs/validate/index.js';
import { applyManifests } from '../../../runtime/realinfra/index.js';
import {
  A8sOperatorStandIn,
  Api,
  CATALOGUE_PACKAGE_REPOSITORY,
  type CatalogueCluster,
  claimOf,
  composed,
  condition,
  crdSpec,
  GROUP,
  NS,
  type Obj,
  REPO,
  startCatalogueCluster,
  waitFor,
} from './_support.js';
import { REDIS_API_VERSION, REDIS_OPERATOR, RedisOperatorStandIn, redisOperatorManifests } from './_redis-operator.js';

const OBJECT = 'kubernetes.crossplane.io/v1alpha1';
const CLAIM_NAME = 'crossplane.io/claim-name';
const CLAIM_NAMESPACE = 'crossplane.io/claim-namespace';

let env: CatalogueCluster;
let api: Api;
let a8s: A8sOperatorStandIn;
let catalogue: Catalogue;

beforeAll(async () => {
  env = await startCatalogueCluster('xp-catalogue', '2.3');
  ({ api, a8s, catalogue } = env);
}, 900_000);

afterAll(async () => {
  if (env) process.stdout.write(`crossplane 2.3 catalogue test timings (ms): ${JSON.stringify(env.timings)}\n`);
  await env?.cluster.stop();
}, 120_000);

const ready = async (kind: string, name: string) => condition(await api.get(GROUP, kind, name, NS), 'Ready');
const composedOf = (kind: string, name: string, count = 1) => composed(api, kind, name, count);

/**
 * Deletes claims and waits until each claim, its XR, its composed Objects and the a8s object are gone
 * (provider-kubernetes removes an Object's finalizer once it has seen the a8s object gone).
 */
async function deleteAndExpectCascade(claims: ReadonlyArray<{ kind: string; name: string; a8s: [apiVersion: string, kind: string] }>): Promise<void> {
  const seen: Array<{ c: (typeof claims)[number]; xr: { apiVersion: string; kind: string; name: string }; objects: Obj[] }> = [];
  for (const c of claims) {
    const { xr, resources } = await composedOf(c.kind, c.name);
    seen.push({ c, xr: { apiVersion: xr.apiVersion!, kind: xr.kind!, name: xr.metadata!.name! }, objects: resources });
  }
  for (const { c } of seen) await api.delete(GROUP, c.kind, c.name, NS);
  for (const { c, xr, objects } of seen) {
    await waitFor(
      `${c.kind} ${c.name}, its XR, Object and a8s ${c.a8s[1]} gone`,
      async () => {
        if (await api.get(GROUP, c.kind, c.name, NS)) return undefined;
        if (await api.get(xr.apiVersion, xr.kind, xr.name)) return undefined;
        for (const o of objects) if (await api.get(o.apiVersion!, o.kind!, o.metadata!.name!)) return undefined;
        return (await api.get(c.a8s[0], c.a8s[1], c.name, NS)) ? undefined : true;
      },
      120_000,
    );
  }
}
const PG: [string, string] = ['postgresql.anynines.com/v1beta3', 'Postgresql'];
const BK: [string, string] = ['backups.anynines.com/v1beta3', 'Backup'];
const RS: [string, string] = ['backups.anynines.com/v1beta3', 'Restore'];

function service(name: string): DataService {
  return catalogue.service(name as never);
}

describe('the catalogue as a Configuration package', () => {
  it("is installed by the package manager from the pushed image: the XRDs and Compositions are the package revision's", async () => {
    const conf = await api.get('pkg.crossplane.io/v1', 'Configuration', 'klutch-catalogue');
    expect(conf!.spec!.package).toBe(env.packageRef);
    expect(condition(conf, 'Installed')?.status).toBe('True');
    const revs = await api.list('pkg.crossplane.io/v1', 'ConfigurationRevision');
    const rev = revs.find((r) => r.metadata!.ownerReferences?.some((o) => o.name === 'klutch-catalogue'))!;
    // The revision was unpacked from the image klutch-kit pushed (same digest).
    expect(rev.spec!.image).toBe(env.packageRef);
    expect(rev.status?.resolvedImage ?? rev.spec!.image).toContain(CATALOGUE_PACKAGE_REPOSITORY);
    const res = await fetch(`http://${env.cluster.crossplane!.registry}/v2/${CATALOGUE_PACKAGE_REPOSITORY}/manifests/v0.1.0`, {
      method: 'HEAD',
      headers: { accept: 'application/vnd.oci.image.manifest.v1+json' },
    });
    await res.arrayBuffer();
    expect(res.headers.get('docker-content-digest')).toBe(env.pushedDigest);
    for (const x of env.xrds) {
      const live = await api.get('apiextensions.crossplane.io/v1', 'CompositeResourceDefinition', x.metadata!.name!);
      // Controlled by the package revision (2.x also lists the Configuration as an owner).
      expect(live!.metadata!.ownerReferences?.find((o) => o.controller)).toMatchObject({ kind: 'ConfigurationRevision', name: rev.metadata!.name });
    }
    const compositions = await api.list('apiextensions.crossplane.io/v1', 'Composition');
    expect(compositions.map((c) => c.metadata!.name).sort()).toEqual(
      [...catalogue.services.values(), ...catalogue.operations.values()].flatMap((s) => [...s.compositions.keys()]).sort(),
    );
  });

  it('deriveClaimCrd / deriveXrCrd equal the CRDs Crossplane creates', async () => {
    const strip = crdSpec;
    for (const x of env.xrds) {
      const xrd = x as never;
      const derivedXr = deriveXrCrd(xrd, { crossplane: '2' });
      const derivedClaim = deriveClaimCrd(xrd, { crossplane: '2' });
      const liveXr = await api.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', derivedXr.metadata.name!);
      const liveClaim = await api.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', derivedClaim.metadata.name!);
      expect({ name: derivedXr.metadata.name, spec: strip(liveXr!) }).toEqual({ name: derivedXr.metadata.name, spec: strip(derivedXr as never) });
      expect({ name: derivedClaim.metadata.name, spec: strip(liveClaim!) }).toEqual({ name: derivedClaim.metadata.name, spec: strip(derivedClaim as never) });
    }
  });
});

describe('PostgresqlInstance on a8s (the default backend: no compositionRef)', () => {
  const name = 'orders-db';
  const spec = {
    service: 'a9s-postgresql14',
    plan: 'postgresql-replica-small',
    expose: 'Internal',
    parameters: { maxConnections: 150, logMinMessages: 'WARNING', tempFileLimit: 2048 },
  };

  it('claim → XR → Object → a8s Postgresql, field by field; Ready only once the operator reports Running; status comes back', async () => {
    const t0 = Date.now();
    await api.create(claimOf('PostgresqlInstance', name, spec));
    const {
      claim,
      xr,
      resources: [obj],
    } = await composedOf('PostgresqlInstance', name);
    const pg = await waitFor('the a8s Postgresql', async () => api.get('postgresql.anynines.com/v1beta3', 'Postgresql', name, NS));
    env.timings.claimToA8sObject = Date.now() - t0;
    // The default composition applied, and the claim took it over.
    expect(xr.spec!.compositionRef).toEqual({ name: 'a8s-postgresql' });
    expect(claim.spec!.compositionRef).toEqual({ name: 'a8s-postgresql' });
    expect(xr.metadata!.labels).toMatchObject({ [CLAIM_NAME]: name, [CLAIM_NAMESPACE]: NS });
    expect(obj.apiVersion).toBe(OBJECT);
    expect(obj.metadata!.labels).toMatchObject({ [CLAIM_NAME]: name, [CLAIM_NAMESPACE]: NS });
    expect(obj.spec!.providerConfigRef).toEqual({ name: 'kubernetes-provider' });
    const plan = service('postgresql').model.plans.get(spec.plan)!;
    const expected = {
      version: 14,
      expose: 'Internal',
      replicas: plan.replicas,
      volumeSize: plan.size.storage,
      resources: { requests: { cpu: plan.size.cpu, memory: plan.size.memory }, limits: { cpu: plan.size.cpu, memory: plan.size.memory } },
      parameters: { maxConnections: 150, logMinMessages: 'warning', tempFileLimitKiloBytes: 2048 },
    };
    // Exactly what the Composition wrote; the live object also has the a8s CRD's defaults.
    expect(obj.spec!.forProvider.manifest).toEqual({
      apiVersion: 'postgresql.anynines.com/v1beta3',
      kind: 'Postgresql',
      metadata: { name, namespace: NS },
      spec: expected,
    });
    expect(pg!.spec).toMatchObject(expected);
    // Not Ready while the operator reports nothing, nor while it reports NotRunning.
    await a8s.postgresqlNotRunning(name, NS);
    await waitFor('NotRunning observed on the claim', async () =>
      (await api.get(GROUP, 'PostgresqlInstance', name, NS))?.status?.managed?.clusterStatus === 'NotRunning' ? true : undefined,
    );
    expect((await ready('PostgresqlInstance', name))?.status).not.toBe('True');
    const t1 = Date.now();
    await a8s.postgresqlRunning(name, NS);
    await waitFor('claim Ready=True', async () => ((await ready('PostgresqlInstance', name))?.status === 'True' ? true : undefined), 120_000);
    env.timings.operatorReadyToClaimReady = Date.now() - t1;
    const managed = (await api.get(GROUP, 'PostgresqlInstance', name, NS))!.status!.managed;
    expect(managed).toMatchObject({ clusterStatus: 'Running', readyReplicas: plan.replicas });
    await deleteAndExpectCascade([{ kind: 'PostgresqlInstance', name, a8s: PG }]);
  }, 300_000);

  it('a plan upgrade reaches the a8s object', async () => {
    const name = 'growing-db';
    const bigger = 'postgresql-replica-medium';
    await api.create(claimOf('PostgresqlInstance', name, spec));
    await waitFor('the Postgresql', async () => api.get(...PG, name, NS));
    await api.apply(claimOf('PostgresqlInstance', name, { ...spec, plan: bigger }));
    const plan = service('postgresql').model.plans.get(bigger)!;
    const pg = await waitFor('the upgraded Postgresql', async () => {
      const o = await api.get('postgresql.anynines.com/v1beta3', 'Postgresql', name, NS);
      return o?.spec?.volumeSize === plan.size.storage ? o : undefined;
    });
    expect(pg.spec!.resources).toEqual({
      requests: { cpu: plan.size.cpu, memory: plan.size.memory },
      limits: { cpu: plan.size.cpu, memory: plan.size.memory },
    });
    await api.delete(GROUP, 'PostgresqlInstance', name, NS); // the cascade is asserted above (≈30 s each)
  }, 240_000);
});

describe('ServiceBinding, Backup and Restore on a8s', () => {
  // The a8s objects name the instance; the instance itself need not exist for them to compose.
  const instance = 'orders-db';

  it('a ServiceBinding composes the a8s ServiceBinding of the instance; Ready once implemented', async () => {
    await api.create(claimOf('ServiceBinding', 'orders-creds', { instanceRef: instance, serviceInstanceType: 'postgresql' }));
    const {
      xr,
      resources: [obj],
    } = await composedOf('ServiceBinding', 'orders-creds');
    expect(xr.spec!.compositionRef).toEqual({ name: 'a8s-servicebinding' });
    expect(obj.spec!.forProvider.manifest).toMatchObject({
      apiVersion: 'servicebindings.anynines.com/v1beta3',
      kind: 'ServiceBinding',
      metadata: { name: 'orders-creds', namespace: NS },
    });
    const sb = await waitFor('the a8s ServiceBinding', async () => api.get('servicebindings.anynines.com/v1beta3', 'ServiceBinding', 'orders-creds', NS));
    expect(sb.spec).toEqual({ instance: { apiVersion: 'postgresql.anynines.com/v1beta3', kind: 'Postgresql', name: instance, namespace: NS } });
    expect((await ready('ServiceBinding', 'orders-creds'))?.status).not.toBe('True');
    await a8s.bindingImplemented('orders-creds', NS);
    await waitFor('ServiceBinding claim Ready', async () => ((await ready('ServiceBinding', 'orders-creds'))?.status === 'True' ? true : undefined), 120_000);
    expect((await api.get(GROUP, 'ServiceBinding', 'orders-creds', NS))!.status!.managed).toMatchObject({
      implemented: true,
      secret: { name: 'orders-creds-service-binding', namespace: NS },
    });
    await api.delete(GROUP, 'ServiceBinding', 'orders-creds', NS); // cascades of operations: asserted for Backup and Restore
  }, 300_000);

  it('a Backup and a Restore compose the a8s Backup and Restore; Ready follows their Ready condition', async () => {
    await api.create(claimOf('Backup', 'orders-bk', { instanceRef: instance, serviceInstanceType: 'postgresql' }));
    const {
      resources: [bkObj],
    } = await composedOf('Backup', 'orders-bk');
    expect(bkObj.spec!.readiness).toEqual({ policy: 'DeriveFromObject' });
    const bk = await waitFor('the a8s Backup', async () => api.get(...BK, 'orders-bk', NS));
    expect(bkObj.spec!.forProvider.manifest.spec).toEqual({ serviceInstance: { apiGroup: 'postgresql.anynines.com', kind: 'PostgreSQL', name: instance } });
    expect(bk.spec).toMatchObject({ serviceInstance: { apiGroup: 'postgresql.anynines.com', kind: 'PostgreSQL', name: instance } });
    await api.create(claimOf('Restore', 'orders-rs', { instanceRef: instance, backupRef: 'orders-bk', serviceInstanceType: 'postgresql' }));
    const {
      resources: [rsObj],
    } = await composedOf('Restore', 'orders-rs');
    expect(rsObj.spec!.forProvider.manifest.spec).toEqual({
      backupName: 'orders-bk',
      serviceInstance: { apiGroup: 'postgresql.anynines.com', kind: 'PostgreSQL', name: instance },
    });
    const rs = await waitFor('the a8s Restore', async () => api.get('backups.anynines.com/v1beta3', 'Restore', 'orders-rs', NS));
    expect(rs.spec).toMatchObject({ backupName: 'orders-bk', serviceInstance: { apiGroup: 'postgresql.anynines.com', kind: 'PostgreSQL', name: instance } });
    expect((await ready('Backup', 'orders-bk'))?.status).not.toBe('True');
    await a8s.conditionReady('Backup', 'orders-bk', NS);
    await a8s.conditionReady('Restore', 'orders-rs', NS);
    await waitFor(
      'Backup and Restore claims Ready',
      async () => ((await ready('Backup', 'orders-bk'))?.status === 'True' && (await ready('Restore', 'orders-rs'))?.status === 'True' ? true : undefined),
      120_000,
    );
    await deleteAndExpectCascade([
      { kind: 'Restore', name: 'orders-rs', a8s: RS },
      { kind: 'Backup', name: 'orders-bk', a8s: BK },
    ]);
  }, 300_000);
});

/** A value of a parameter that the claim schema accepts (checked with the shared validator first). */
function sampleParameter(ds: DataService, backend: string, base: Record<string, unknown>): { name: string; value: unknown } | undefined {
  const crd = deriveClaimCrd(ds.xrd.apiObject.toJson() as never, { crossplane: '2' });
  const v = new SchemaValidator(crd.spec.versions[0].schema!.openAPIV3Schema!);
  for (const p of ds.model.parameters.filter((x) => x.location === ParameterLocation.PARAMETERS && x.allowedOn(backend))) {
    const s = p.schema as { type?: string; enum?: unknown[]; minimum?: number };
    const candidates = [
      ...(s.enum ?? []),
      ...(s.type === 'boolean' ? [true] : []),
      ...(s.type === 'integer' || s.type === 'number' ? [Math.max(s.minimum ?? 1, 1) + 1] : []),
    ];
    for (const value of candidates) {
      const obj = { apiVersion: GROUP, kind: ds.model.claimKind, metadata: { name: 'x', namespace: NS }, spec: { ...base, parameters: { [p.name]: value } } };
      if (v.validate(obj).length === 0) return { name: p.name, value };
    }
  }
  return undefined;
}

describe('a9s: claims compose provider-anynines managed resources (reconciled in test/integration/a9s/)', () => {
  const a9sServices = () => [...catalogue.services.entries()].filter(([, ds]) => ds.backends.some((b) => b.automation === 'a9s'));

  it('every a9s service: claim → XR → ServiceInstance with service, plan, broker parameters, claim labels and its ProviderConfig', async () => {
    const cases = a9sServices().map(([svc, ds]) => {
      const b = ds.backends.find((x) => x.automation === 'a9s') as A9sBackend;
      const s = ds.model.services.find((x) => b.serviceNames(ds.model).includes(x.name))!;
      const plan = s.plans.find((p) => b.planNames(ds.model).includes(p))!;
      const base: Record<string, unknown> = { service: s.name, plan, ...(b.name === ds.defaultBackend ? {} : { compositionRef: { name: b.name } }) };
      const param = sampleParameter(ds, b.name, base);
      return { svc, ds, b, s: s.name, plan, spec: { ...base, ...(param ? { parameters: { [param.name]: param.value } } : {}) }, param };
    });
    expect(cases.length).toBe(8);
    expect(cases.filter((c) => c.param).length).toBeGreaterThanOrEqual(6);
    for (const c of cases) await api.create(claimOf(c.ds.model.claimKind, `${c.svc}-vm`, c.spec));
    for (const c of cases) {
      const {
        xr,
        resources: [si],
      } = await composedOf(c.ds.model.claimKind, `${c.svc}-vm`);
      expect(xr.spec!.compositionRef).toEqual({ name: c.b.name });
      expect(si.apiVersion).toBe('dataservices.anynines.com/v1');
      expect(si.kind).toBe('ServiceInstance');
      expect(si.metadata!.labels).toMatchObject({ [CLAIM_NAME]: `${c.svc}-vm`, [CLAIM_NAMESPACE]: NS });
      expect(si.spec!.providerConfigRef).toEqual({ name: c.b.providerConfig.name });
      const p = c.param ? c.ds.model.parameters.find((x) => x.name === c.param!.name && x.location === ParameterLocation.PARAMETERS)! : undefined;
      expect(si.spec!.forProvider).toEqual({
        serviceName: c.s,
        planName: c.plan,
        acceptsIncomplete: true,
        organizationGuid: c.b.organizationGuid,
        spaceGuid: c.b.spaceGuid,
        ...(p ? { parameters: { [c.b.brokerNameOf(p.name, p.brokerName)]: c.param!.value } } : {}),
      });
      // Nothing reconciles it, so the claim is not Ready (readiness follows the MR's Ready condition).
      expect((await ready(c.ds.model.claimKind, `${c.svc}-vm`))?.status).not.toBe('True');
    }
  }, 300_000);

  it('a9s ServiceBinding, Backup and Restore compose their managed resources', async () => {
    const base = { serviceInstanceType: 'keyvalue' };
    await api.create(claimOf('ServiceBinding', 'kv-creds', { ...base, instanceRef: 'keyvalue-vm', compositionRef: { name: 'a9s-servicebinding' } }));
    await api.create(claimOf('Backup', 'kv-bk', { ...base, instanceRef: 'keyvalue-vm', compositionRef: { name: 'a9s-backup' } }));
    await api.create(claimOf('Restore', 'kv-rs', { ...base, backupRef: 'kv-bk', compositionRef: { name: 'a9s-restore' } }));
    const [sb] = (await composedOf('ServiceBinding', 'kv-creds')).resources;
    expect(sb.kind).toBe('ServiceBinding');
    expect(sb.metadata!.labels).toMatchObject({ 'klutch.io/instance-type': 'keyvalue', [CLAIM_NAME]: 'kv-creds', [CLAIM_NAMESPACE]: NS });
    expect(sb.spec!.forProvider).toEqual({ acceptsIncomplete: true, instanceName: 'keyvalue-vm' });
    expect(sb.spec!.providerConfigRef).toEqual({ name: 'keyvalue-service-broker' });
    expect(sb.spec!.writeConnectionSecretToRef).toEqual({ name: 'kv-creds-creds', namespace: NS });
    const [bk] = (await composedOf('Backup', 'kv-bk')).resources;
    expect([bk.kind, bk.spec!.forProvider, bk.spec!.providerConfigRef]).toEqual([
      'Backup',
      { instanceName: 'keyvalue-vm' },
      { name: 'keyvalue-backup-manager' },
    ]);
    const [rs] = (await composedOf('Restore', 'kv-rs')).resources;
    expect([rs.kind, rs.spec!.forProvider, rs.spec!.providerConfigRef]).toEqual(['Restore', { backupName: 'kv-bk' }, { name: 'keyvalue-backup-manager' }]);
  }, 240_000);
});

describe("docs/dataservice.md's worked example (ClickHouse)", () => {
  /** The documented code, compiled and run (as test/dataservice/worked-example.test.ts does). */
  function addClickHouse(scope: constructs.Construct): DataService {
    const doc = readFileSync(join(REPO, 'docs', 'dataservice.md'), 'utf8');
    const code = /```ts\n([\s\S]*?)```/.exec(doc.slice(doc.indexOf('## Worked example')))![1];
    const js = ts.transpileModule(code, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
    const modules: Record<string, unknown> = { 'klutch-kit/dataservice': dataservice, constructs, cdk8s: { App, Chart } };
    const module = { exports: {} as Record<string, unknown> };
    new Function('require', 'module', 'exports', js)((id: string) => modules[id], module, module.exports);
    const broker = AnyninesProviderConfig.fromName(scope, 'Broker', 'clickhouse-service-broker');
    return (module.exports.addClickHouse as (s: constructs.Construct, b: IProviderConfig) => DataService)(scope, broker);
  }

  it('composes: claim → XR → Object → the operator resource, with plan, version and parameters', async () => {
    const chart = new Chart(new App(), 'clickhouse');
    const ds = addClickHouse(chart);
    const objects = (chart.toJson() as Obj[]).filter((o) => o.kind === 'CompositeResourceDefinition' || o.kind === 'Composition');
    // The operator's CRD is a stand-in (the example's operator is fictitious); provider-kubernetes may manage it.
    const k8s = ds.backends.find((b) => b.automation === 'a8s') as dataservice.A8sBackend;
    const manifest = { group: 'clickhouse.example.com', kind: 'ClickHouse', plural: 'clickhouses' };
    await applyManifests(
      env.cluster.kubeConfig,
      [
        {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          metadata: { name: `${manifest.plural}.${manifest.group}` },
          spec: {
            group: manifest.group,
            scope: 'Namespaced',
            names: { kind: manifest.kind, plural: manifest.plural },
            versions: [
              {
                name: 'v1',
                served: true,
                storage: true,
                subresources: { status: {} },
                schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
              },
            ],
          },
        } as Obj,
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: 'test-provider-kubernetes-clickhouse' },
          rules: [{ apiGroups: [manifest.group], resources: [manifest.plural], verbs: ['*'] }],
        } as Obj,
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: 'test-provider-kubernetes-clickhouse' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'test-provider-kubernetes-clickhouse' },
          subjects: [{ kind: 'ServiceAccount', name: 'provider-kubernetes', namespace: 'crossplane-system' }],
        } as Obj,
        ...objects,
      ],
      { continueOnError: false },
    );
    const xrdName = objects.find((o) => o.kind === 'CompositeResourceDefinition')!.metadata!.name!;
    await waitFor(
      'the ClickHouse XRD offered',
      async () =>
        condition(await api.get('apiextensions.crossplane.io/v1', 'CompositeResourceDefinition', xrdName), 'Offered')?.status === 'True' ? true : undefined,
      120_000,
    );
    const spec = { service: 'clickhouse25', plan: 'clickhouse-cluster-big-ssl', parameters: { maxConcurrentQueries: 50 } };
    const claimApi = `${ds.model.group}/${ds.model.version}`;
    await api.create({ apiVersion: claimApi, kind: ds.model.claimKind, metadata: { name: 'events', namespace: NS }, spec });
    const ch = await waitFor('the ClickHouse object', async () => api.get(`${manifest.group}/v1`, manifest.kind, 'events', NS), 120_000);
    const plan = ds.model.plans.get(spec.plan)!;
    expect(ch.spec).toMatchObject({
      version: 25,
      replicas: plan.replicas,
      volumeSize: plan.size.storage,
      resources: { requests: { cpu: plan.size.cpu, memory: plan.size.memory } },
      parameters: { maxConcurrentQueries: 50 },
    });
    const xr = (await api.get(claimApi, ds.model.claimKind, 'events', NS))!.spec!.resourceRef;
    expect(xr.kind).toBe(ds.model.kind);
    expect(k8s.name).toBe(ds.defaultBackend);
    await api.delete(claimApi, ds.model.claimKind, 'events', NS);
    await waitFor(
      'the ClickHouse object deleted',
      async () => (!(await api.get(`${manifest.group}/v1`, manifest.kind, 'events', NS)) ? true : undefined),
      120_000,
    );
  }, 300_000);
});

/** A `ts` block of docs/dataservice.md (the first after `heading`), compiled and run; returns its exports. */
function docBlock(heading: string): Record<string, unknown> {
  const doc = readFileSync(join(REPO, 'docs', 'dataservice.md'), 'utf8');
  const at = doc.indexOf(heading);
  if (at < 0) throw new Error(`docs/dataservice.md has no "${heading}"`);
  const code = /```ts\n([\s\S]*?)```/.exec(doc.slice(at))![1];
  const js = ts.transpileModule(code, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
  const modules: Record<string, unknown> = { 'klutch-kit/dataservice': dataservice, constructs, cdk8s: { App, Chart } };
  const module = { exports: {} as Record<string, unknown> };
  new Function('require', 'module', 'exports', js)((id: string) => modules[id], module, module.exports);
  return module.exports;
}

describe("docs/dataservice.md's operator profile example (a Redis-like operator, not PostgreSQL)", () => {
  it('claim → XR → Object → RedisCluster laid out by the profile; Ready only once the Redis operator stand-in reports phase Ready', async () => {
    const chart = new Chart(new App(), 'redis');
    const ds = (docBlock('### Example: a Redis-like operator').addRedis as (s: constructs.Construct) => DataService)(chart);
    const objects = (chart.toJson() as Obj[]).filter((o) => o.kind === 'CompositeResourceDefinition' || o.kind === 'Composition');
    expect(objects.map((o) => `${o.kind}/${o.metadata!.name}`).sort()).toEqual([
      'CompositeResourceDefinition/xredisinstances.data.example.com',
      'Composition/k8s-redis',
    ]);
    await applyManifests(env.cluster.kubeConfig, [...redisOperatorManifests(), ...objects], { continueOnError: false });
    await waitFor(
      'the Redis XRD offered',
      async () =>
        condition(await api.get('apiextensions.crossplane.io/v1', 'CompositeResourceDefinition', 'xredisinstances.data.example.com'), 'Offered')?.status ===
        'True'
          ? true
          : undefined,
      120_000,
    );
    const operator = new RedisOperatorStandIn(api);
    operator.start();
    try {
      const claimApi = `${ds.model.group}/${ds.model.version}`;
      const name = 'sessions';
      const ready = async () => condition(await api.get(claimApi, 'RedisInstance', name, NS), 'Ready');
      const spec = { service: 'redis8', plan: 'redis-cluster-small', parameters: { evictionPolicy: 'allkeys-lru', databases: 4 } };
      await api.create({ apiVersion: claimApi, kind: 'RedisInstance', metadata: { name, namespace: NS }, spec });
      const rc = await waitFor('the RedisCluster', async () => api.get(REDIS_API_VERSION, REDIS_OPERATOR.kind, name, NS), 120_000);
      // Exactly the documented layout (the stand-in's CRD has a structural schema of it: nothing pruned, nothing extra).
      expect(rc.spec).toEqual({
        persistence: { enabled: true, size: '2Gi' },
        redisVersion: 8,
        maxMemory: '1Gi',
        nodes: 3,
        config: { maxmemoryPolicy: 'allkeys-lru', databases: 4 },
      });
      // The operator reports Provisioning: the claim sees it and is not Ready.
      await waitFor(
        'phase Provisioning on the claim',
        async () => ((await api.get(claimApi, 'RedisInstance', name, NS))?.status?.managed?.phase === 'Provisioning' ? true : undefined),
        120_000,
      );
      expect((await ready())?.status).not.toBe('True');
      operator.nodesUp(name, NS);
      await waitFor('the claim Ready', async () => ((await ready())?.status === 'True' ? true : undefined), 120_000);
      expect((await api.get(claimApi, 'RedisInstance', name, NS))!.status!.managed).toMatchObject({ phase: 'Ready', readyNodes: 3 });
      expect(operator.lastError).toBeUndefined();
      await api.delete(claimApi, 'RedisInstance', name, NS);
      await waitFor('the RedisCluster deleted', async () => (!(await api.get(REDIS_API_VERSION, REDIS_OPERATOR.kind, name, NS)) ? true : undefined), 120_000);
    } finally {
      await operator.stop();
    }
  }, 300_000);
});
