// @realinfra pulumi (the sandbox runs `pulumi up`; it also needs provider-anynines for the a9s demo: built in the background on a new machine)
/**
 * The end-to-end test of klutch-kit: the `npm run sandbox` flow (sandbox/sandbox.ts), run
 * programmatically on this machine with real API servers and real processes, every step asserted:
 *
 * 1. a control plane running real Crossplane 2.3 and two app clusters (real kube-apiserver + etcd +
 *    kube-controller-manager each);
 * 2. the OIDC provider (a real oidc-provider instance) answers discovery;
 * 3. `pulumi up` of the stack program (runtime manifests mode, `klutch-kit:catalogue` set to the pushed package)
 *    put the topology into the right clusters; a preview and a second `pulumi up` afterwards change nothing;
 * 4. the catalogue is installed by Crossplane's package manager from its Configuration package, which pulumi up
 *    applied with the Function, provider-kubernetes and its ProviderConfig (all Healthy); the claim CRDs are
 *    Crossplane's, the export templates applied, the local a8s operator running;
 * 5. the backend and the konnectors run as local processes;
 * 6. `kubectl-bind` bound both app clusters: bindings Ready, one ClusterBinding per app cluster with heartbeats;
 * 7. a PostgresqlInstance and a ServiceBinding in app-1, each hop asserted: claim up → XR → provider-kubernetes
 *    Object → a8s object (served by the sandbox's local a8s operator: a real PostgreSQL server) → status and the
 *    a8s credentials Secret down to app-1 → a connection with those credentials writes and reads a row;
 * 8. a plan change in app-1 reaches the a8s object;
 * 9. deleting the ServiceBinding revokes its role (a new connection is refused); deleting the claim removes
 *    the server and its data;
 * then stop() ends every process, and the CLI (`scripts/sandbox.ts`) comes up with the demo (printing a psql
 * command) and goes down with `--down`, leaving no process, no PostgreSQL server and no data folder.
 *
 * Both API styles: the run above is the claims style (ApiStyle.CLAIMS, the default); the CLI run is
 * `--api-style namespaced` (ApiStyle.NAMESPACED_XR): the same demo through namespaced XRs with no claim
 * anywhere, ending in a PostgreSQL session opened with the composed `<binding>-creds` Secret read from app-1.
 * The two styles cannot share a control plane (the claim CRD and the namespaced XR CRD are both
 * postgresqlinstances.anynines.com), so each run has its own, as before.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CoreResources, KubeClient, type KubeObject, resourcePath } from '../../../runtime/core/client.js';
import { getCondition, type Condition } from '../../../runtime/core/conditions.js';
import { KubeConfig } from '@kubernetes/client-node';
import { type APIServiceBinding, type ClusterBinding } from '../../../runtime/konnector/types.js';
import { BINDING_RESOURCES } from '../../../contract/index.js';
import pg from 'pg';
import { A8S_RESOURCES } from '../../../sandbox/a8s-operator/index.js';
import {
  BIND_APIS,
  changeDemoPlan,
  clusterPids,
  DEMO,
  harnessPids,
  DEMO_PLANS,
  eventually,
  provisionDemo,
  SANDBOX_CLAIMS,
  startSandbox,
  type DemoResult,
  type Sandbox,
} from '../../../sandbox/sandbox.js';
import type { SandboxState } from '../../../sandbox/state.js';
import { alive, sandboxDown, startSandboxCli, untilUp } from './_cli.js';
import { A9S_DEMO, A9S_PROVIDER_CONFIGS, A9S_RESOURCES, a9sPostgresqlServices, provisionA9sDemo, type A9sDemoResult } from '../../../sandbox/a9s.js';
import { MANAGED_MESSAGE_COLUMN } from '../../../constructs/dataservice/index.js';

jest.setTimeout(300_000);

const started = Date.now();
const lines: string[] = [];
const log = (line: string) => {
  lines.push(line);
  process.stderr.write(`[sandbox +${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);
};

let sb: Sandbox | undefined;
let timings: Record<string, number> = {};
let tmp: string;
let cp: KubeClient;
let apps: KubeClient[];

async function connect(c: { username: string; password: string; database: string; instance_service: string }): Promise<pg.Client> {
  const db = new pg.Client({
    host: c.instance_service,
    port: 5432,
    user: c.username,
    password: c.password,
    database: c.database,
    connectionTimeoutMillis: 5_000,
  });
  db.on('error', () => undefined);
  await db.connect();
  return db;
}

async function pgErrorCode(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as { code?: string }).code ?? (e as Error).message;
  }
  throw new Error('expected the connection to fail');
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-sandbox-it-'));
  sb = await startSandbox({ log, dir: path.join(tmp, 'run'), a9s: true });
  timings = sb.timings;
  cp = new KubeClient(sb.controlPlane.kubeConfig);
  apps = sb.apps.map((a) => new KubeClient(a.kubeConfig));
}, 600_000);

afterAll(async () => {
  cp?.close();
  apps?.forEach((a) => a.close());
  await sb?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
  log(`step timings (s): ${JSON.stringify(timings)}`);
});

describe('npm run sandbox, end to end', () => {
  it('printed every step as it completed, in order', () => {
    const steps = lines.filter((l) => /^\[\d\/8\]/.test(l)).map((l) => l.slice(0, 5));
    expect(steps).toEqual(['[1/8]', '[2/8]', '[3/8]', '[4/8]', '[5/8]', '[6/8]']);
  });

  it('1: a control plane with real Crossplane and two app clusters, each a real API server of its own', async () => {
    const servers = [sb!.controlPlane, ...sb!.apps].map((c) => c.server);
    expect(new Set(servers).size).toBe(3);
    const xp = sb!.crossplane;
    expect(xp.versions.crossplane).toMatch(/^v2\.3\./);
    // every component of the harness runs (registry, core, function, provider, …)
    expect(Object.keys(xp.pids())).toEqual(expect.arrayContaining(['registry', 'crossplane', 'function-patch-and-transform', 'provider-kubernetes']));
    expect(Object.values(xp.pids()).filter((p) => p !== undefined && alive(p))).toHaveLength(Object.keys(xp.pids()).length);
    expect(sb!.apps.map((a) => a.crossplane)).toEqual([undefined, undefined]);
    for (const c of [cp, ...apps]) {
      const ns = await c.list(CoreResources.namespaces);
      expect(ns.items.map((n) => n.metadata.name)).toContain('kube-system');
    }
  });

  it('2: the OIDC provider answers discovery with its issuer', async () => {
    const res = await fetch(`${sb!.op!.issuer}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { issuer: string; token_endpoint: string };
    expect(doc.issuer).toBe(sb!.op!.issuer);
  });

  it('3: pulumi up put the topology into the right clusters; nothing left to change', async () => {
    // the engine wrote the state once, at the end (PULUMI_SKIP_CHECKPOINTS): it is whole, outputs, preview and a second up
    expect((sb!.stack.workspace as unknown as { envVars: Record<string, string> }).envVars['PULUMI_SKIP_CHECKPOINTS']).toBe('true');
    const outputs = await sb!.stack.outputs();
    expect(outputs['backendUrl']?.value).toBe(sb!.backendUrl);
    expect(outputs['kubeconfigs']?.secret).toBe(true);
    for (const c of [cp, ...apps]) expect(await c.getOrNull(CoreResources.crds, undefined, 'apiservicebindings.klutch.anynines.com')).toBeDefined();
    const deployments = { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true } as const;
    const backend = await cp.get(deployments, 'klutch-system', 'klutch-backend');
    expect(backend.metadata.annotations?.['pulumi.com/skipAwait']).toBe('true');
    expect(await apps[0]!.getOrNull(deployments, 'klutch-system', 'klutch-backend')).toBeUndefined();
    const preview = await sb!.stack.preview({ expectNoChanges: true, color: 'never' });
    expect(Object.keys(preview.changeSummary).filter((k) => k !== 'same')).toEqual([]);
    // a second pulumi up changes nothing either (Crossplane's status and defaults on the packages included)
    const again = await sb!.stack.up({ color: 'never' });
    expect(again.summary.result).toBe('succeeded');
    expect(Object.keys(again.summary.resourceChanges ?? {}).filter((k) => k !== 'same')).toEqual([]);
    expect(again.summary.resourceChanges?.['same']).toBeGreaterThan(0);
  });

  it("4: the catalogue is installed from its Configuration package; the claim APIs are Crossplane's", async () => {
    const conf = await cp.get<KubeObject & { spec?: { package?: string }; status?: { conditions?: Condition[] } }>(
      { group: 'pkg.crossplane.io', version: 'v1', plural: 'configurations', kind: 'Configuration', namespaced: false },
      undefined,
      'klutch-catalogue',
    );
    expect(conf.spec?.package).toBe(sb!.catalogue.packageRef);
    expect(getCondition(conf.status?.conditions, 'Healthy')?.status).toBe('True');
    // applied by pulumi up (klutch-kit:catalogue), not by the sandbox or the harness
    const state = await sb!.stack.exportStack();
    const managed = (state.deployment.resources as Array<{ type: string; outputs?: { metadata?: { name?: string } } }>).map(
      (r) => `${r.type} ${r.outputs?.metadata?.name ?? ''}`,
    );
    expect(managed).toEqual(
      expect.arrayContaining([
        'kubernetes:pkg.crossplane.io/v1:Configuration klutch-catalogue',
        'kubernetes:pkg.crossplane.io/v1:Function function-patch-and-transform',
        'kubernetes:pkg.crossplane.io/v1:Provider provider-kubernetes',
        'kubernetes:kubernetes.crossplane.io/v1alpha1:ProviderConfig kubernetes-provider',
      ]),
    );
    for (const [plural, kind, name] of [
      ['functions', 'Function', 'function-patch-and-transform'],
      ['providers', 'Provider', 'provider-kubernetes'],
    ] as const) {
      const p = await cp.get<KubeObject & { status?: { conditions?: Condition[] } }>(
        { group: 'pkg.crossplane.io', version: 'v1', plural, kind, namespaced: false },
        undefined,
        name,
      );
      expect({ name, healthy: getCondition(p.status?.conditions, 'Healthy')?.status }).toEqual({ name, healthy: 'True' });
    }
    for (const api of BIND_APIS) {
      const crd = (await cp.get(CoreResources.crds, undefined, api)) as KubeObject & { status?: { conditions?: Condition[] } };
      expect(getCondition(crd.status?.conditions, 'Established')?.status).toBe('True');
      // made by Crossplane from the package's XRD, not by the sandbox
      expect(crd.metadata.ownerReferences?.map((o) => o.kind)).toEqual(['CompositeResourceDefinition']);
    }
    const templates = await cp.list(
      {
        group: 'example-backend.klutch.anynines.com',
        version: 'v1alpha1',
        plural: 'apiserviceexporttemplates',
        kind: 'APIServiceExportTemplate',
        namespaced: true,
      },
      'crossplane-system',
    );
    expect(templates.items.map((t) => t.metadata.name).sort()).toEqual(['postgresqlinstances', 'servicebindings']);
    for (const crd of ['postgresqls.postgresql.anynines.com', 'servicebindings.servicebindings.anynines.com'])
      expect(await cp.getOrNull(CoreResources.crds, undefined, crd)).toBeDefined();
    expect(sb!.a8s.instances.list()).toEqual([]);
  });

  it('5: the backend and one konnector per app cluster run as local processes', async () => {
    expect(sb!.processes.map((p) => p.name).sort()).toEqual(['klutch-backend', 'konnector-sandbox-app-1', 'konnector-sandbox-app-2']);
    for (const p of sb!.processes) expect({ name: p.name, running: p.child.exitCode === null && alive(p.child.pid!) }).toEqual({ name: p.name, running: true });
    expect((await fetch(`${sb!.backendUrl}/readyz`)).status).toBe(200);
  });

  it('6: kubectl-bind bound both app clusters: bindings Ready, one ClusterBinding per app cluster with heartbeats', async () => {
    for (const [i, a] of apps.entries()) {
      for (const api of BIND_APIS) {
        expect(sb!.bindOutput[`${sb!.apps[i]!.name} ${api}`]).toMatch(new RegExp(`^${api.replace(/\./g, '\\.')}\\tkubeconfig-\\w+\\t`, 'm'));
        const b = await eventually(`binding ${api} Ready on ${sb!.apps[i]!.name}`, async () => {
          const x = await a.getOrNull<APIServiceBinding>(BINDING_RESOURCES.apiServiceBindings, 'klutch-bind', api);
          return getCondition(x?.status?.conditions as Condition[] | undefined, 'Ready')?.status === 'True' ? x : undefined;
        });
        expect(b.status?.providerPrettyName).toBe('Klutch sandbox');
      }
    }
    expect(sb!.bindOutput[`${sb!.apps[0]!.name} servicebindings.anynines.com`]).toContain('secrets:Accepted');
    // one kubectl-bind per app cluster, both APIs (`--resource` twice): one provider kubeconfig Secret for both
    for (const a of sb!.apps)
      expect(new Set(BIND_APIS.map((api) => sb!.bindOutput[`${a.name} ${api}`]!.split('\t')[1]))).toEqual(new Set([expect.stringMatching(/^kubeconfig-/)]));
    const cbs = await eventually('2 ClusterBindings with heartbeats', async () => {
      const l = (await cp.list<ClusterBinding>(BINDING_RESOURCES.clusterBindings)).items;
      return l.length === 2 && l.every((c) => c.status?.lastHeartbeatTime) ? l : undefined;
    });
    expect(new Set(cbs.map((c) => c.metadata.namespace)).size).toBe(2);
  });

  let demo: DemoResult;
  let a9sDemo: Promise<A9sDemoResult>;
  it('7: claims in app-1 go claim → XR → Object → a8s object → local PostgreSQL; status and a8s credentials come back down; the credentials connect', async () => {
    // the a9s demo (test 7 (a9s)) runs beside this one, as `npm run sandbox -- --a9s` runs them
    a9sDemo = provisionA9sDemo(sb!.a9s!, { controlPlane: sb!.controlPlane, app: sb!.apps[0] }, log);
    a9sDemo.catch(() => undefined);
    demo = await provisionDemo(sb!, log);
    const ns = demo.upstreamNamespace;
    expect(ns).toMatch(/^cluster-\w+-shop$/);
    // claim up, as written downstream, bound to its XR
    const { instance: i, binding: b } = demo;
    expect(i.claimUp.spec).toMatchObject({ service: 'a9s-postgresql14', plan: DEMO_PLANS[0] });
    expect(i.claimUp.spec?.resourceRef?.kind).toBe('XPostgresqlInstance');
    expect(b.claimUp.spec?.resourceRef?.kind).toBe('XServiceBinding');
    // XR → provider-kubernetes Object → a8s objects in the claim's namespace
    for (const p of [i, b]) {
      expect(p.xr.metadata.name).toBe(p.claimUp.spec!.resourceRef!.name);
      expect(p.object.kind).toBe('Object');
      expect(p.object.metadata.ownerReferences?.[0]?.name).toBe(p.xr.metadata.name);
      expect(p.a8s.metadata.namespace).toBe(ns);
    }
    expect(i.a8s.kind).toBe('Postgresql');
    expect(i.a8s.spec).toMatchObject({ replicas: 1, version: 14 });
    expect(b.a8s.kind).toBe('ServiceBinding');
    expect(b.a8s.spec).toMatchObject({ instance: { apiVersion: 'postgresql.anynines.com/v1beta3', kind: 'Postgresql', name: i.a8s.metadata.name } });
    // the a8s status as the local operator reports it
    const pgLive = await cp.get<KubeObject & { status?: Record<string, unknown> }>(A8S_RESOURCES.postgresqls, ns, i.a8s.metadata.name!);
    expect(pgLive.status).toMatchObject({ clusterStatus: 'Running', readyReplicas: 1 });
    const sbLive = await cp.get<KubeObject & { status?: Record<string, unknown> }>(A8S_RESOURCES.serviceBindings, ns, b.a8s.metadata.name!);
    expect(sbLive.status).toMatchObject({ implemented: true, secret: { name: `${b.a8s.metadata.name}-service-binding`, namespace: ns } });
    // claims Ready downstream (Crossplane's readiness checks on the a8s status)
    for (const c of [demo.instanceDown, demo.bindingDown]) expect(getCondition(c.status?.conditions, 'Ready')?.status).toBe('True');
    // the a8s Secret: written on the control plane by the operator, brought down by the konnector, same data
    const up = (await cp.get(CoreResources.secrets, ns, `${b.a8s.metadata.name}-service-binding`)) as KubeObject & {
      type: string;
      data: Record<string, string>;
    };
    expect(up.type).toBe('Opaque');
    expect(demo.secretDown.metadata.name).toBe(`${DEMO.binding}-service-binding`);
    expect(demo.secretDown.type).toBe('Opaque');
    expect(Object.keys(demo.secretDown.data!).sort()).toEqual(['database', 'instance_service', 'password', 'username']);
    expect(demo.secretDown.data).toEqual(up.data);
    expect(demo.credentials.instance_service).toBe(sb!.a8s.instances.get(`${ns}/${i.a8s.metadata.name}`)!.server.address);
    expect(demo.psql).toBe(
      `PGPASSWORD='${demo.credentials.password}' psql -h ${demo.credentials.instance_service} -p 5432 -U ${demo.credentials.username} ${demo.credentials.database}`,
    );
    // a connection with the app cluster's credentials writes and reads a row
    const c = await connect(demo.credentials);
    await c.query('CREATE TABLE orders (id int PRIMARY KEY, item text)');
    await c.query("INSERT INTO orders VALUES (1, 'espresso')");
    expect((await c.query('SELECT item FROM orders')).rows).toEqual([{ item: 'espresso' }]);
    await c.end();
    // app-2 bound the same APIs but has no claims: nothing of app-1's came to it
    expect((await apps[1]!.list(SANDBOX_CLAIMS.postgresqlInstances)).items).toEqual([]);
  });

  it('7 (a9s): an a9s PostgreSQL claimed in app-1 is reconciled by the real provider-anynines against the broker stand-in; its Secret comes down through the konnector and connects', async () => {
    const a9s = sb!.a9s!;
    // provider-anynines, installed by Crossplane's package manager; the ControlPlaneCluster's ProviderConfigs as applied, healthy
    const provider = await cp.get<KubeObject & { status?: { conditions?: Condition[] } }>(
      { group: 'pkg.crossplane.io', version: 'v1', plural: 'providers', kind: 'Provider', namespaced: false },
      undefined,
      'provider-anynines',
    );
    expect(['Installed', 'Healthy'].map((t) => getCondition(provider.status?.conditions, t)?.status)).toEqual(['True', 'True']);
    expect(a9s.providerConfigs.map((p) => p.metadata.name).sort()).toEqual([...A9S_PROVIDER_CONFIGS].sort());
    for (const pc of a9s.providerConfigs) {
      const live = await cp.get<KubeObject & { spec?: unknown; status?: { health?: { lastStatus?: boolean } } }>(
        A9S_RESOURCES.providerConfigs,
        undefined,
        pc.metadata.name!,
      );
      expect({ name: pc.metadata.name, spec: live.spec, healthy: live.status?.health?.lastStatus }).toEqual({
        name: pc.metadata.name,
        spec: pc.spec,
        healthy: true,
      });
    }
    const d = await a9sDemo;
    expect(d.upstreamNamespace).toBe(demo.upstreamNamespace);
    // claim → XR → provider-anynines ServiceInstance → the broker's provision: a real PostgreSQL server
    expect(d.serviceInstance.spec).toMatchObject({ forProvider: { serviceName: A9S_DEMO.service, planName: A9S_DEMO.plan } });
    expect(d.brokerInstance.state).toBe('provisioned');
    expect(d.brokerInstance.engine).toMatch(/^127\.\d+\.\d+\.\d+:5432$/);
    expect(a9s.broker.requests).toContain(`PUT /v2/service_instances/${d.brokerInstance.id} 202`);
    expect(d.brokerInstance.bindings.size).toBe(1);
    for (const c of [d.instanceDown, d.bindingDown]) expect(getCondition(c.status?.conditions, 'Ready')?.status).toBe('True');
    // the connection Secret provider-anynines wrote on the control plane, brought down to app-1 by the konnector, same data
    expect(d.secretUp.type).toBe('connection.crossplane.io/v1alpha1');
    expect(d.secretDown.metadata.name).toBe(`${A9S_DEMO.binding}-creds`);
    expect(d.secretDown.type).toBe('connection.crossplane.io/v1alpha1');
    expect(Object.keys(d.secretDown.data!).sort()).toEqual(['host', 'hosts', 'name', 'password', 'port', 'uri', 'username']);
    expect(d.secretDown.data).toEqual(d.secretUp.data);
    expect(`${d.credentials.host}:${d.credentials.port}`).toBe(d.brokerInstance.engine);
    expect(d.psql).toBe(
      `PGPASSWORD='${d.credentials.password}' psql -h ${d.credentials.host} -p ${d.credentials.port} -U ${d.credentials.username} ${d.credentials.name}`,
    );
    // a connection with app-1's credentials writes and reads a row, as the binding's own role
    const c = new pg.Client({
      host: d.credentials.host,
      port: d.credentials.port,
      user: d.credentials.username,
      password: d.credentials.password,
      database: d.credentials.name,
    });
    c.on('error', () => undefined);
    await c.connect();
    try {
      await c.query('CREATE TABLE invoices (id int PRIMARY KEY, item text)');
      await c.query("INSERT INTO invoices VALUES (1, 'a9s')");
      expect((await c.query('SELECT item, current_user AS u FROM invoices')).rows).toEqual([{ item: 'a9s', u: d.credentials.username }]);
    } finally {
      await c.end();
    }
    // app-2 bound the same APIs and got nothing of it
    expect(await apps[1]!.getOrNull(CoreResources.secrets, A9S_DEMO.namespace, `${A9S_DEMO.binding}-creds`)).toBeUndefined();
  });

  it('7 (a9s, refused): a provision the broker refuses shows its own description in app-1: the claim’s conditions and the Message column `kubectl get` prints', async () => {
    const a9s = sb!.a9s!;
    await a9sDemo;
    const plan = a9sPostgresqlServices()
      .find((x) => x.name === A9S_DEMO.service)!
      .plans.find((p) => p !== A9S_DEMO.plan)!;
    // the broker's quota for that plan is used up, as a real broker's instance limit would be
    a9s.broker.setInstanceLimit(plan, 0);
    const name = 'orders-db-refused';
    const said = new RegExp(`Service instance limit hit for the service plan ${plan}: 0 of 0 instances`);
    const claimPath = resourcePath(SANDBOX_CLAIMS.postgresqlInstances, A9S_DEMO.namespace, name);
    try {
      await apps[0]!.create(SANDBOX_CLAIMS.postgresqlInstances, {
        metadata: { name, namespace: A9S_DEMO.namespace },
        spec: { service: A9S_DEMO.service, plan, compositionRef: { name: A9S_DEMO.compositions.instance } },
      });
      // what `kubectl get postgresqlinstances` prints in app-1: the API server's table of the bound CRD
      const table = await eventually(
        'the broker’s description in app-1’s Message column',
        async () => {
          const t = await apps[0]!.request<{ columnDefinitions: Array<{ name: string }>; rows: Array<{ cells: unknown[] }> }>('GET', claimPath, {
            accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
          });
          const col = t.columnDefinitions.findIndex((c) => c.name === MANAGED_MESSAGE_COLUMN.name);
          return col > 0 && said.test(String(t.rows[0]?.cells[col] ?? '')) ? t : undefined;
        },
        180_000,
      );
      expect(table.rows).toHaveLength(1);
      // the same text in the claim's conditions as the konnector brought them down; never Ready
      const down = await apps[0]!.get<KubeObject & { status?: { conditions?: Condition[]; managed?: { conditions?: Condition[] } } }>(
        SANDBOX_CLAIMS.postgresqlInstances,
        A9S_DEMO.namespace,
        name,
      );
      expect(getCondition(down.status?.managed?.conditions, 'Synced')).toMatchObject({ status: 'False', message: expect.stringMatching(said) });
      expect(getCondition(down.status?.conditions, 'Ready')?.status).not.toBe('True');
      expect(a9s.broker.requests.some((r) => /^PUT \/v2\/service_instances\/[^/]+ 422$/.test(r))).toBe(true);
    } finally {
      a9s.broker.setInstanceLimit(plan, undefined);
      await apps[0]!.delete(SANDBOX_CLAIMS.postgresqlInstances, A9S_DEMO.namespace, name).catch(() => undefined);
    }
    await eventually(
      'the refused claim gone in app-1 and on the control plane',
      async () =>
        !(await apps[0]!.getOrNull(SANDBOX_CLAIMS.postgresqlInstances, A9S_DEMO.namespace, name)) &&
        !(await cp.getOrNull(SANDBOX_CLAIMS.postgresqlInstances, demo.upstreamNamespace, name)),
      180_000,
    );
  });

  it('8: a plan change in app-1 reaches the a8s object', async () => {
    const r = await changeDemoPlan(sb!, demo, log);
    expect(r.after['resources']).not.toEqual(r.before['resources']);
    expect(r.after['replicas']).toBe(1);
    expect(lines.some((l) => l.startsWith(`[8/8] plan ${DEMO_PLANS[0]} → ${DEMO_PLANS[1]}`))).toBe(true);
  });

  it('9: deleting the ServiceBinding revokes its role; deleting the claim removes the server and its data', async () => {
    const ns = demo.upstreamNamespace;
    await apps[0]!.delete(SANDBOX_CLAIMS.serviceBindings, DEMO.namespace, DEMO.binding);
    await eventually(
      'the a8s ServiceBinding gone',
      async () => !(await cp.getOrNull(A8S_RESOURCES.serviceBindings, ns, demo.binding.a8s.metadata.name!)),
      120_000,
    );
    expect(await pgErrorCode(connect(demo.credentials))).toBe('28P01');
    const key = `${ns}/${demo.instance.a8s.metadata.name}`;
    const server = sb!.a8s.instances.get(key)!.server;
    const pid = server.pid!;
    await apps[0]!.delete(SANDBOX_CLAIMS.postgresqlInstances, DEMO.namespace, DEMO.instance);
    await eventually('the a8s Postgresql gone', async () => !(await cp.getOrNull(A8S_RESOURCES.postgresqls, ns, demo.instance.a8s.metadata.name!)), 120_000);
    expect(alive(pid)).toBe(false);
    expect(fs.existsSync(server.dir)).toBe(false);
    expect(sb!.a8s.instances.list()).toEqual([]);
  });

  it('stop() ends every process it started and removes the clusters', async () => {
    const pids = [
      ...sb!.processes.map((p) => p.child.pid!),
      ...[sb!.controlPlane, ...sb!.apps].flatMap(clusterPids),
      ...harnessPids(sb!.crossplane),
      ...sb!.a9s!.pids(),
    ];
    // the a9s PostgreSQL server of the broker stand-in
    const a9sDir = sb!.a9s!.dataDir;
    const a9sServers = fs
      .readdirSync(a9sDir)
      .map((d) => path.join(a9sDir, d, 'data', 'postmaster.pid'))
      .filter((f) => fs.existsSync(f))
      .map((f) => Number(fs.readFileSync(f, 'utf8').split('\n')[0]));
    expect(a9sServers).toHaveLength(1);
    pids.push(...a9sServers);
    const dirs = [sb!.controlPlane, ...sb!.apps].map((c) => c.dir);
    // processes, clusters, Crossplane, provider-anynines with its two forwarders, the a9s server
    expect(pids.length).toBe(3 + 9 + Object.keys(sb!.crossplane.pids()).length + 3 + 1);
    cp.close();
    apps.forEach((a) => a.close());
    await sb!.stop();
    sb = undefined;
    expect(pids.filter(alive)).toEqual([]);
    expect(dirs.filter((d) => fs.existsSync(d))).toEqual([]);
    expect(fs.existsSync(a9sDir)).toBe(false);
  });
});

/** A client for a cluster the CLI sandbox recorded in its state file. */
function clientOf(state: SandboxState, name: string): KubeClient {
  const c = state.clusters.find((x) => x.name === name);
  if (!c) throw new Error(`no cluster ${name} in the state file (${state.clusters.map((x) => x.name).join(', ')})`);
  const kc = new KubeConfig();
  kc.loadFromFile(c.kubeconfigPath);
  return new KubeClient(kc);
}

/**
 * The namespaced run, no claim anywhere: no claim CRD or claim XRD on the control plane; the PostgresqlInstance and
 * ServiceBinding the konnector synced up are the namespaced XRs themselves, composing kubernetes.m Objects; app-1's
 * composed `<binding>-creds` Secret opens a PostgreSQL session that writes and reads a row.
 */
async function assertNamespacedRun(state: SandboxState): Promise<void> {
  const cpc = clientOf(state, 'sandbox-cp');
  const app = clientOf(state, 'sandbox-app-1');
  try {
    type Crd = KubeObject & { spec: { group: string; scope: string; names: { plural: string; categories?: string[] } } };
    const crds = (await cpc.list<Crd>(CoreResources.crds)).items;
    expect(crds.filter((c) => c.spec.names.categories?.includes('claim')).map((c) => c.metadata.name)).toEqual([]);
    expect(crds.filter((c) => c.spec.group === 'anynines.com' && c.spec.names.plural.startsWith('x')).map((c) => c.metadata.name)).toEqual([]);
    const xrds = (
      await cpc.list<KubeObject & { apiVersion?: string; spec?: { scope?: string; claimNames?: unknown } }>({
        group: 'apiextensions.crossplane.io',
        version: 'v1',
        plural: 'compositeresourcedefinitions',
        kind: 'CompositeResourceDefinition',
        namespaced: false,
      })
    ).items;
    expect(xrds.length).toBeGreaterThan(0);
    expect(xrds.filter((x) => x.spec?.claimNames !== undefined || x.spec?.scope !== 'Namespaced').map((x) => x.metadata.name)).toEqual([]);
    for (const api of BIND_APIS) {
      const crd = crds.find((c) => c.metadata.name === api)!;
      expect({ api, scope: crd.spec.scope, categories: crd.spec.names.categories }).toEqual({ api, scope: 'Namespaced', categories: ['composite'] });
    }
    // upstream: the XRs themselves, in the provider namespace, composing namespaced Objects
    type Xr = KubeObject & { spec?: { crossplane?: { compositionRef?: { name: string }; resourceRefs?: Array<{ apiVersion: string; kind: string }> } } };
    const [inst] = (await cpc.list<Xr>(SANDBOX_CLAIMS.postgresqlInstances)).items;
    expect(inst?.metadata.name).toBe(DEMO.instance);
    expect(inst!.metadata.namespace).toMatch(/^cluster-\w+-shop$/);
    expect(inst!.metadata.labels?.['crossplane.io/claim-name']).toBeUndefined();
    expect(inst!.spec?.crossplane?.compositionRef?.name).toBe('a8s-postgresql');
    expect(inst!.spec?.crossplane?.resourceRefs?.map((r) => `${r.apiVersion} ${r.kind}`)).toEqual(['kubernetes.m.crossplane.io/v1alpha1 Object']);
    const [bind] = (await cpc.list<Xr>(SANDBOX_CLAIMS.serviceBindings)).items;
    expect(bind?.metadata.name).toBe(DEMO.binding);
    expect(bind!.spec?.crossplane?.resourceRefs?.map((r) => `${r.apiVersion} ${r.kind}`).sort()).toEqual([
      'kubernetes.m.crossplane.io/v1alpha1 Object',
      'kubernetes.m.crossplane.io/v1alpha1 Object',
    ]);
    // downstream: Ready, and the composed credentials Secret (the a8s operator's own Secret stays on the control plane)
    for (const r of [SANDBOX_CLAIMS.postgresqlInstances, SANDBOX_CLAIMS.serviceBindings]) {
      const o = (await app.list<KubeObject & { status?: { conditions?: Condition[] } }>(r, DEMO.namespace)).items;
      expect(o.map((x) => [x.metadata.name, getCondition(x.status?.conditions, 'Ready')?.status])).toEqual([
        [r === SANDBOX_CLAIMS.serviceBindings ? DEMO.binding : DEMO.instance, 'True'],
      ]);
    }
    const secret = (await app.get(CoreResources.secrets, DEMO.namespace, `${DEMO.binding}-creds`)) as KubeObject & {
      type: string;
      data: Record<string, string>;
    };
    expect(secret.type).toBe('connection.crossplane.io/v1alpha1');
    expect(await app.getOrNull(CoreResources.secrets, DEMO.namespace, `${DEMO.binding}-service-binding`)).toBeUndefined();
    const d = (k: string) => Buffer.from(secret.data[k] ?? '', 'base64').toString('utf8');
    const db = await connect({ username: d('username'), password: d('password'), database: d('database'), instance_service: d('instance_service') });
    try {
      await db.query('CREATE TABLE orders (id int PRIMARY KEY, item text)');
      await db.query("INSERT INTO orders VALUES (1, 'flat white')");
      expect((await db.query('SELECT item, current_user AS u FROM orders')).rows).toEqual([{ item: 'flat white', u: d('username') }]);
    } finally {
      await db.end();
    }
  } finally {
    cpc.close();
    app.close();
  }
}

describe('the CLI: npm run sandbox -- --api-style namespaced, then npm run sandbox -- --down', () => {
  it('comes up with the demo through namespaced XRs and a psql command, records its processes, and --down leaves no process, server or data', async () => {
    const dir = path.join(tmp, 'cli');
    const env = { ...process.env, KLUTCH_SANDBOX_DIR: dir, KUBECONFIG: '' };
    const up = startSandboxCli(['--api-style', 'namespaced'], env);
    try {
      await untilUp(up, 'the CLI sandbox up', 280_000);
      const out = up.output();
      for (let i = 1; i <= 8; i++) expect(out).toContain(`[${i}/8]`);
      expect(out).toContain('XRDs, API style namespaced');
      expect(out).toMatch(/namespaced XRs synced to the control plane \(namespace cluster-\w+-shop\)/);
      expect(out).not.toContain('claim bound to XR');
      const psql = /^ {2}PGPASSWORD='([^']+)' psql -h (127\.\d+\.\d+\.\d+) -p 5432 -U (\S+) (\S+)$/m.exec(out);
      expect(psql).not.toBeNull();
      // the printed command's credentials work
      const c = await connect({ password: psql![1]!, instance_service: psql![2]!, username: psql![3]!, database: psql![4]! });
      await c.end();
      const state = JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8')) as SandboxState;
      const a8sDir = state.a8sDataDir!;
      const postmasters = fs
        .readdirSync(a8sDir)
        .filter((d) => fs.existsSync(path.join(a8sDir, d, 'data', 'postmaster.pid')))
        .map((d) => Number(fs.readFileSync(path.join(a8sDir, d, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]));
      expect(postmasters).toHaveLength(1);
      const pids = [state.supervisorPid, ...state.processes.map((p) => p.pid), ...state.clusters.flatMap((c) => c.pids), ...postmasters];
      expect(state.clusters).toHaveLength(3);
      expect(state.processes).toHaveLength(3);
      expect(pids.filter(alive)).toEqual(pids);
      await assertNamespacedRun(state);

      const down = await sandboxDown(env);
      expect(down.code).toBe(0);
      expect(down.out).toContain('sandbox stopped');
      expect(await up.exited).toBe(0);
      expect(pids.filter(alive)).toEqual([]);
      expect(fs.existsSync(path.join(dir, 'state.json'))).toBe(false);
      expect(fs.existsSync(a8sDir)).toBe(false);
      expect(state.clusters.map((c) => c.dir).filter((d) => fs.existsSync(d))).toEqual([]);
    } finally {
      if (up.child.exitCode === null) up.child.kill('SIGTERM');
    }
  });
});
