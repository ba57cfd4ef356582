// @realinfra late (provider-anynines: built in the background on a new machine; scripts/_lanes.ts)
/**
 * a9s for real: the catalogue's a9s claims reconciled by the real provider-anynines (built from the klutchio
 * sources, installed by Crossplane's package manager) against the broker stand-in (sandbox/a9s-broker-standin.ts,
 * the only stand-in, at the broker's level). PostgreSQL ends in a real server and a real login, KeyValue in a real
 * redis-server and a real ACL user, MariaDB in a real mariadbd and a real user of the instance's database, Messaging
 * in a real RabbitMQ node and user, Prometheus in a real Prometheus and basic-auth user; MongoDB, Search and Logme2
 * have no engine here and are status only (the broker says so in its last operation).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Chart } from 'cdk8s';
import amqp from 'amqplib';
import pg from 'pg';
import { AnyninesProviderConfig, AnyninesServiceType } from '../../../constructs/crossplane/index.js';
import { PROVIDER_ANYNINES_PACKAGE } from '../../../constructs/topology/index.js';
import { probe } from '../../../runtime/realinfra/probe.js';
import { A9S_ENGINES } from '../../../sandbox/a9s-broker-standin.js';
import { mariadbQuery } from '../../../sandbox/local-mariadb.js';
import { respCommands } from '../../../sandbox/local-redis.js';
import { clientOf } from '../../../runtime/realinfra/index.js';
import { MANAGED_MESSAGE_COLUMN } from '../../../constructs/dataservice/index.js';
import { NS, claimOf, condition, waitFor, type Obj } from '../crossplane/_support.js';
import { CA_SECRET, type A9sCluster, type A9sService, amqpRoundTrip, bindingSecret, makeTestCa, startA9sCluster } from './_support.js';

const GROUP = 'anynines.com/v1';
const A9S = 'dataservices.anynines.com/v1';
const CLAIM_NAME = 'crossplane.io/claim-name';

let env: A9sCluster;
const figures: string[] = [];
/** The plan of a9s PostgreSQL whose provisioning the stand-in fails (a failed last operation). */
let failPlan = '';
/** The plan of a9s PostgreSQL whose provisioning the stand-in refuses (422 InstanceLimitError: no instance allowed). */
const limitPlan = 'postgresql-replica-small';

beforeAll(async () => {
  failPlan = 'postgresql-single-big';
  env = await startA9sCluster('a9s', '2.3', { failPlans: { postgresql: [failPlan] }, instanceLimits: { postgresql: { [limitPlan]: 0 } } });
}, 900_000);

afterAll(async () => {
  await env?.stop();
  if (figures.length) process.stdout.write(`a9s claim → Ready (Crossplane 2.3, provider-anynines ${env?.a9s.version}):\n${figures.join('\n')}\n`);
}, 120_000);

const claimSpec = (s: A9sService, plan?: string) => {
  const svc = s.services[s.services.length - 1]!;
  return { service: svc.name, plan: plan ?? svc.plans[0]!, ...(s.compositionRef ? { compositionRef: s.compositionRef } : {}) };
};
const get = (kind: string, name: string) => env.api.get(GROUP, kind, name, NS);

/** The ServiceInstance composed for a claim. */
async function serviceInstanceOf(claimName: string): Promise<Obj> {
  return waitFor(`the ServiceInstance of claim ${claimName}`, async () => {
    const items = await env.api.list(A9S, 'ServiceInstance', undefined, `${CLAIM_NAME}=${claimName}`);
    return items[0];
  });
}

describe('provider-anynines on real Crossplane 2.3', () => {
  it('is installed by the package manager from the Provider our constructs emit, and reads their ProviderConfigs (health visible)', async () => {
    const provider = await env.api.get('pkg.crossplane.io/v1', 'Provider', 'provider-anynines');
    expect(provider!.spec!.package).toBe(PROVIDER_ANYNINES_PACKAGE);
    expect(condition(provider, 'Installed')?.status).toBe('True');
    expect(condition(provider, 'Healthy')?.status).toBe('True');
    // 8 service brokers + 8 backup managers, as the constructs emit them; the CRD accepted every one
    expect(env.providerConfigs.map((p) => p.metadata!.name).sort()).toEqual(
      env.services.flatMap((s) => [`${s.ds}-backup-manager`, `${s.ds}-service-broker`]).sort(),
    );
    for (const pc of env.providerConfigs) {
      const live = await waitFor(`ProviderConfig ${pc.metadata!.name} health checked and healthy`, async () => {
        const o = await env.api.get(A9S, 'ProviderConfig', pc.metadata!.name!);
        return o?.status?.health?.lastStatus === true ? o : undefined;
      });
      expect(live.spec).toEqual(pc.spec);
    }
    // the health checks went to the paths the constructs emit, with basic auth and the API version accepted
    const pgBroker = env.brokers.get('postgresql')!;
    expect(pgBroker.requests).toContain('HEAD /osb_ext/v1/healthy 200');
    expect(pgBroker.requests).toContain('GET /backup-manager/v2/healthy 200');
    // the provider's own health endpoints, per ProviderConfig
    expect((await probe(`http://${env.a9s.nsIp}:8081/healthz`, {}, 5000)).status).toBe(200);
    const backend = await probe(`http://${env.a9s.nsIp}:8081/backend-health`, {}, 5000);
    expect(backend.status).toBe(200);
  }, 240_000);

  it('TLS: the PostgreSQL stand-in serves HTTPS with a certificate of a test CA; the ProviderConfigs carry that CA (ControlPlaneCluster anynines.tls) and are healthy; a wrong CA shows as unhealthy', async () => {
    const pcOf = (name: string) => env.providerConfigs.find((p) => p.metadata!.name === name)!;
    for (const name of ['postgresql-service-broker', 'postgresql-backup-manager']) {
      expect(pcOf(name).spec).toMatchObject({ url: expect.stringMatching(/^https:\/\//), tls: { caBundleSecretRef: CA_SECRET } });
      const live = await waitFor(`ProviderConfig ${name} healthy over HTTPS`, async () => {
        const o = await env.api.get(A9S, 'ProviderConfig', name);
        return o?.status?.health?.lastStatus === true ? o : undefined;
      });
      expect(live.spec).toEqual(pcOf(name).spec);
    }
    // the plain-http stand-ins' ProviderConfigs carry no TLS settings
    expect(pcOf('keyvalue-service-broker').spec!.tls).toBeUndefined();
    // the same endpoint with a CA that did not sign its certificate: the health check fails, and says why
    const dir = mkdtempSync(join(tmpdir(), 'klutch-a9s-wrong-ca-'));
    try {
      const wrong = makeTestCa(dir, 'some-other-ca');
      const chart = new Chart(new App(), 'wrong-ca');
      const creds = (key: string) => ({ namespace: 'crossplane-system', name: 'postgresql-service-broker-credentials', key });
      new AnyninesProviderConfig(chart, 'pc', {
        name: 'postgresql-wrong-ca',
        serviceType: AnyninesServiceType.SERVICE_BROKER,
        url: pcOf('postgresql-service-broker').spec!.url as string,
        username: creds('username'),
        password: creds('password'),
        healthCheckEndpoint: '/osb_ext/v1/healthy',
        tls: { caBundleSecretRef: { namespace: 'crossplane-system', name: 'a9s-wrong-ca', key: 'ca.crt' } },
      });
      await env.api.apply({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'a9s-wrong-ca', namespace: 'crossplane-system' },
        stringData: { 'ca.crt': wrong.certPem },
      } as Obj);
      for (const o of chart.toJson() as Obj[]) await env.api.apply(o);
      const live = await waitFor('ProviderConfig postgresql-wrong-ca health checked', async () => {
        const o = await env.api.get(A9S, 'ProviderConfig', 'postgresql-wrong-ca');
        return o?.status?.health?.lastCheckTime ? o : undefined;
      });
      // lastStatus false (the provider omits it when false), the reason in the health status
      expect(live.status!.health.lastStatus).not.toBe(true);
      expect(JSON.stringify(live.status!.health)).toMatch(/x509|certificate/);
    } finally {
      await env.api.delete(A9S, 'ProviderConfig', 'postgresql-wrong-ca').catch(() => undefined);
      await env.api.delete('v1', 'Secret', 'a9s-wrong-ca', 'crossplane-system').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);

  it('a9s PostgreSQL: claim → ServiceInstance → broker provision → Ready only once the last operation succeeded; binding → Secret → a real login; deletion → unbind, deprovision, nothing left', async () => {
    const s = env.services.find((x) => x.ds === 'postgresql')!;
    const broker = env.brokers.get('postgresql')!;
    const t0 = Date.now();
    await env.api.create(claimOf(s.claimKind, 'pg-vm', claimSpec(s)));
    const si = await serviceInstanceOf('pg-vm');
    const ready = await waitFor(
      'claim pg-vm Ready',
      async () => {
        const claim = await get(s.claimKind, 'pg-vm');
        const live = await env.api.get(A9S, 'ServiceInstance', si.metadata!.name!);
        const id = live?.status?.atProvider?.instanceId as string | undefined;
        const op = id ? [...(broker.instance(id)?.operations.values() ?? [])].find((o) => o.type === 'provision') : undefined;
        // read the claim first: if it is Ready, the broker's operation must have succeeded before
        if (condition(claim, 'Ready')?.status === 'True') {
          expect(op?.state).toBe('succeeded');
          return { claim: claim!, id: id! };
        }
        return undefined;
      },
      180_000,
    );
    figures.push(`  postgresql (real ${A9S_ENGINES.postgresql}): ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const inst = broker.instance(ready.id)!;
    expect(inst.state).toBe('provisioned');
    expect(inst.engine).toMatch(/^127\.\d+\.\d+\.\d+:5432$/);
    expect(broker.requests.some((r) => /^PUT \/v2\/service_instances\/[^/]+ 202$/.test(r))).toBe(true);
    const live = (await env.api.get(A9S, 'ServiceInstance', si.metadata!.name!))!;
    expect(live.status!.atProvider).toMatchObject({ state: 'provisioned', instanceId: ready.id, serviceId: inst.serviceId, planId: inst.planId });
    expect(ready.claim.status?.managed?.state).toBe('provisioned');

    // ServiceBinding → broker bind → the credentials Secret → a real PostgreSQL login
    await env.api.create(
      claimOf('ServiceBinding', 'pg-creds', { serviceInstanceType: 'postgresql', instanceRef: 'pg-vm', compositionRef: { name: 'a9s-servicebinding' } }),
    );
    const { type, data } = await bindingSecret(env.api, 'pg-creds-creds', 'password');
    expect(type).toBe('connection.crossplane.io/v1alpha1');
    expect(Object.keys(data).sort()).toEqual(['host', 'hosts', 'name', 'password', 'port', 'uri', 'username']);
    expect(`${data.host}:${data.port}`).toBe(inst.engine);
    const c = new pg.Client({ host: data.host, port: Number(data.port), user: data.username, password: data.password, database: data.name });
    await c.connect();
    try {
      await c.query('CREATE TABLE t (v text)');
      await c.query("INSERT INTO t VALUES ('from the a9s binding')");
      expect((await c.query('SELECT v, current_user AS u FROM t')).rows).toEqual([{ v: 'from the a9s binding', u: data.username }]);
    } finally {
      await c.end();
    }
    await waitFor(
      'claim pg-creds Ready',
      async () => (condition(await get('ServiceBinding', 'pg-creds'), 'Ready')?.status === 'True' ? true : undefined),
      120_000,
    );
    expect(inst.bindings.size).toBe(1);

    // deletion: the binding is unbound (its role dropped), the instance deprovisioned (its server gone)
    await env.api.delete(GROUP, 'ServiceBinding', 'pg-creds', NS);
    await waitFor('the binding unbound at the broker', async () => (inst.bindings.size === 0 ? true : undefined), 120_000);
    await expect(
      (async () => {
        const c2 = new pg.Client({ host: data.host, port: Number(data.port), user: data.username, password: data.password, database: data.name });
        c2.on('error', () => undefined);
        try {
          await c2.connect();
        } finally {
          await c2.end().catch(() => undefined);
        }
      })(),
    ).rejects.toThrow(/password authentication failed|does not exist/);
    await env.api.delete(GROUP, s.claimKind, 'pg-vm', NS);
    await waitFor('the instance deprovisioned at the broker', async () => (inst.state === 'deleted' ? true : undefined), 180_000);
    expect(inst.engine).toBeUndefined();
    await waitFor(
      'no a9s managed resource, claim or Secret left',
      async () =>
        (await env.api.list(A9S, 'ServiceInstance')).length === 0 &&
        (await env.api.list(A9S, 'ServiceBinding')).length === 0 &&
        !(await get(s.claimKind, 'pg-vm')) &&
        !(await env.api.get('v1', 'Secret', 'pg-creds-creds', NS))
          ? true
          : undefined,
      180_000,
    );
    expect(broker.requests).toContain(`DELETE /v2/service_instances/${ready.id} 202`);
  }, 600_000);

  it('a9s PostgreSQL plan change: claim → ServiceInstance planName → broker update (PATCH, async) → the instance on the new plan, Ready again; then Backup and Restore through the backup manager', async () => {
    const s = env.services.find((x) => x.ds === 'postgresql')!;
    const broker = env.brokers.get('postgresql')!;
    const svc = s.services[s.services.length - 1]!;
    const [from, to] = ['postgresql-single-nano', 'postgresql-single-small'];
    expect(svc.plans).toEqual(expect.arrayContaining([from, to]));
    await env.api.create(claimOf(s.claimKind, 'pg-plan', { service: svc.name, plan: from, ...(s.compositionRef ? { compositionRef: s.compositionRef } : {}) }));
    await waitFor('claim pg-plan Ready', async () => (condition(await get(s.claimKind, 'pg-plan'), 'Ready')?.status === 'True' ? true : undefined), 240_000);
    const si = await serviceInstanceOf('pg-plan');
    const id = (await env.api.get(A9S, 'ServiceInstance', si.metadata!.name!))!.status!.atProvider.instanceId as string;
    const inst = broker.instance(id)!;
    const before = inst.planId;
    const claim = (await get(s.claimKind, 'pg-plan'))!;
    await env.api.apply({ apiVersion: GROUP, kind: s.claimKind, metadata: { name: 'pg-plan', namespace: NS }, spec: { ...claim.spec, plan: to } });
    await waitFor(
      'the broker update done',
      async () => ([...inst.operations.values()].some((o) => o.type === 'update' && o.state === 'succeeded') ? true : undefined),
      240_000,
    );
    expect(inst.planId).not.toBe(before);
    expect(broker.requests).toContain(`PATCH /v2/service_instances/${id} 202`);
    await waitFor(
      'the ServiceInstance on the new plan and the claim Ready',
      async () => {
        const live = await env.api.get(A9S, 'ServiceInstance', si.metadata!.name!);
        const c = await get(s.claimKind, 'pg-plan');
        return live?.spec?.forProvider?.planName === to && live?.status?.atProvider?.planId === inst.planId && condition(c, 'Ready')?.status === 'True'
          ? true
          : undefined;
      },
      240_000,
    );

    // Backup and Restore of that instance: claims → composed provider-anynines Backup / Restore → the backup manager API
    const bm = '/backup-manager/instances';
    await env.api.create(
      claimOf('Backup', 'pg-plan-bk', { serviceInstanceType: 'postgresql', instanceRef: 'pg-plan', compositionRef: { name: 'a9s-backup' } }),
    );
    const backupClaim = await waitFor(
      'Backup pg-plan-bk Ready',
      async () => {
        const c = await get('Backup', 'pg-plan-bk');
        return condition(c, 'Ready')?.status === 'True' ? c : undefined;
      },
      240_000,
    );
    expect(broker.requests).toContain(`POST ${bm}/${id}/backups 201`);
    expect(inst.backups.map((b) => ({ id: b.id, status: b.status }))).toEqual([{ id: 1, status: 'done' }]);
    expect(broker.requests).toContain(`GET ${bm}/${id}/backups/1 200`);
    // the backup manager's answer, through the managed resource, in the claim's status
    expect(backupClaim.status?.managed).toMatchObject({ id: 1, status: 'done', size: 1024 });
    const backupMr = (await env.api.list(A9S, 'Backup', undefined, `${CLAIM_NAME}=pg-plan-bk`))[0]!;
    expect(backupMr.spec).toMatchObject({ forProvider: { instanceName: 'pg-plan' }, providerConfigRef: { name: 'postgresql-backup-manager' } });
    expect(backupMr.status?.atProvider).toMatchObject({ instanceId: id, id: 1, status: 'done' });

    await env.api.create(
      claimOf('Restore', 'pg-plan-rs', { serviceInstanceType: 'postgresql', backupRef: 'pg-plan-bk', compositionRef: { name: 'a9s-restore' } }),
    );
    const restoreClaim = await waitFor(
      'Restore pg-plan-rs Ready',
      async () => {
        const c = await get('Restore', 'pg-plan-rs');
        return condition(c, 'Ready')?.status === 'True' ? c : undefined;
      },
      240_000,
    );
    expect(broker.requests).toContain(`POST ${bm}/${id}/backups/1/restore 202`);
    expect(inst.restores.map((r) => ({ id: r.id, backupId: r.backupId, status: r.status }))).toEqual([{ id: 1, backupId: 1, status: 'done' }]);
    expect(restoreClaim.status?.managed).toMatchObject({ restoreId: 1, state: 'done' });

    // deletion: the Restore goes (nothing to delete at the backup manager), the Backup is deleted there
    await env.api.delete(GROUP, 'Restore', 'pg-plan-rs', NS);
    await env.api.delete(GROUP, 'Backup', 'pg-plan-bk', NS);
    await waitFor(
      'the backup deleted at the backup manager and no Backup / Restore left',
      async () =>
        inst.backups[0]!.status === 'deleted' &&
        (await env.api.list(A9S, 'Backup')).length === 0 &&
        (await env.api.list(A9S, 'Restore')).length === 0 &&
        !(await get('Backup', 'pg-plan-bk')) &&
        !(await get('Restore', 'pg-plan-rs'))
          ? true
          : undefined,
      180_000,
    );
    expect(broker.requests).toContain(`DELETE ${bm}/${id}/backups/1 200`);

    await env.api.delete(GROUP, s.claimKind, 'pg-plan', NS);
    await waitFor('pg-plan deprovisioned', async () => (inst.state === 'deleted' ? true : undefined), 180_000);
  }, 900_000);

  it('a provision the broker fails (failed last operation) shows on the claim: state failed, not Ready', async () => {
    const s = env.services.find((x) => x.ds === 'postgresql')!;
    const broker = env.brokers.get('postgresql')!;
    const svc = s.services.find((x) => x.plans.includes(failPlan))!;
    await env.api.create(
      claimOf(s.claimKind, 'pg-broken', { service: svc.name, plan: failPlan, ...(s.compositionRef ? { compositionRef: s.compositionRef } : {}) }),
    );
    const claim = await waitFor(
      'claim pg-broken to report the failed provision',
      async () => {
        const c = await get(s.claimKind, 'pg-broken');
        return c?.status?.managed?.state === 'failed' ? c : undefined;
      },
      180_000,
    );
    expect(condition(claim, 'Ready')?.status).toBe('False');
    const managedReady = (claim.status!.managed.conditions as Array<{ type: string; status: string; reason: string }>).find((c) => c.type === 'Ready');
    expect(managedReady).toMatchObject({ status: 'False', reason: 'Unavailable' });
    const failed = broker.instances().find((i) => [...i.operations.values()].some((o) => o.state === 'failed'))!;
    expect([...failed.operations.values()][0]!.description).toMatch(/fails on purpose/);
    await env.api.delete(GROUP, s.claimKind, 'pg-broken', NS);
    await waitFor('pg-broken gone', async () => (!(await get(s.claimKind, 'pg-broken')) ? true : undefined), 180_000);
    expect(failed.state).toBe('deleted');
  }, 400_000);

  it('a provision the broker refuses (422 InstanceLimitError) shows the broker’s own description on the claim: in status.managed.conditions and in the Message column the API server prints', async () => {
    const s = env.services.find((x) => x.ds === 'postgresql')!;
    const broker = env.brokers.get('postgresql')!;
    const svc = s.services.find((x) => x.plans.includes(limitPlan))!;
    await env.api.create(
      claimOf(s.claimKind, 'pg-refused', { service: svc.name, plan: limitPlan, ...(s.compositionRef ? { compositionRef: s.compositionRef } : {}) }),
    );
    const before = broker.instances().length;
    const said = /Service instance limit hit for the service plan postgresql-replica-small: 0 of 0 instances/;
    const claim = await waitFor(
      'claim pg-refused to carry the broker’s description',
      async () => {
        const c = await get(s.claimKind, 'pg-refused');
        const conds = (c?.status?.managed?.conditions ?? []) as Array<{ type: string; status: string; reason: string; message?: string }>;
        return conds.some((x) => x.reason === 'ReconcileError' && said.test(x.message ?? '')) ? c : undefined;
      },
      180_000,
    );
    expect(condition(claim, 'Ready')?.status).not.toBe('True');
    const synced = (claim.status!.managed.conditions as Array<{ type: string; status: string; message: string }>).find((c) => c.type === 'Synced');
    expect(synced).toMatchObject({ status: 'False', message: expect.stringMatching(said) });
    expect(broker.requests.some((r) => /^PUT \/v2\/service_instances\/[^/]+ 422$/.test(r))).toBe(true);
    // what `kubectl get` shows: the API server's own printing of the claim, with the column the constructs emit
    const table = await clientOf(env.cluster.kubeConfig).request<{ columnDefinitions: Array<{ name: string }>; rows: Array<{ cells: unknown[] }> }>(
      'GET',
      await env.api.path(GROUP, s.claimKind, 'pg-refused', NS),
      { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    );
    const col = table.columnDefinitions.findIndex((c) => c.name === MANAGED_MESSAGE_COLUMN.name);
    expect(col).toBeGreaterThan(0);
    expect(String(table.rows[0]!.cells[col])).toMatch(said);
    await env.api.delete(GROUP, s.claimKind, 'pg-refused', NS);
    await waitFor(
      'pg-refused and its ServiceInstance gone',
      async () =>
        !(await get(s.claimKind, 'pg-refused')) && (await env.api.list(A9S, 'ServiceInstance', undefined, `${CLAIM_NAME}=pg-refused`)).length === 0
          ? true
          : undefined,
      180_000,
    );
    // the broker made no instance for it
    expect(broker.instances().length).toBe(before);
  }, 400_000);

  it('a9s KeyValue: claim → broker provision → a real redis-server; binding → Secret of the a9s shape → a real connection (AUTH as the binding’s ACL user, PING, SET/GET); unbind removes the user; deletion stops the server', async () => {
    const s = env.services.find((x) => x.ds === 'keyvalue')!;
    const broker = env.brokers.get('keyvalue')!;
    const t0 = Date.now();
    await env.api.create(claimOf(s.claimKind, 'kv-vm', claimSpec(s)));
    await waitFor('claim kv-vm Ready', async () => (condition(await get(s.claimKind, 'kv-vm'), 'Ready')?.status === 'True' ? true : undefined), 240_000);
    figures.push(`  keyvalue (real ${A9S_ENGINES.keyvalue}): ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const [inst] = broker.instances();
    expect(inst!.state).toBe('provisioned');
    expect(inst!.engine).toMatch(/^127\.0\.0\.1:\d+$/);
    const [pid] = broker.enginePids();
    await env.api.create(
      claimOf('ServiceBinding', 'kv-creds', { serviceInstanceType: 'keyvalue', instanceRef: 'kv-vm', compositionRef: { name: 'a9s-servicebinding' } }),
    );
    const { type, data } = await bindingSecret(env.api, 'kv-creds-creds', 'valkey.password');
    expect(type).toBe('connection.crossplane.io/v1alpha1');
    expect(Object.keys(data).sort()).toEqual(['host', 'hosts', 'load_balanced_host', 'valkey.password', 'valkey.port', 'valkey.username']);
    expect(`${data.host}:${data['valkey.port']}`).toBe(inst!.engine);
    const login = (...cmds: string[][]) =>
      respCommands(data.host!, Number(data['valkey.port']), [['AUTH', data['valkey.username']!, data['valkey.password']!], ...cmds]);
    expect(await login(['PING'], ['SET', 'greeting', 'from the a9s binding'], ['GET', 'greeting'])).toEqual(['OK', 'PONG', 'OK', 'from the a9s binding']);
    await waitFor(
      'claim kv-creds Ready',
      async () => (condition(await get('ServiceBinding', 'kv-creds'), 'Ready')?.status === 'True' ? true : undefined),
      120_000,
    );
    await env.api.delete(GROUP, 'ServiceBinding', 'kv-creds', NS);
    await waitFor('the binding unbound at the broker', async () => (inst!.bindings.size === 0 ? true : undefined), 120_000);
    expect(await login()).toEqual([expect.objectContaining({ message: expect.stringMatching(/^WRONGPASS/) })]);
    await env.api.delete(GROUP, s.claimKind, 'kv-vm', NS);
    await waitFor('kv-vm deprovisioned at the broker', async () => (inst!.state === 'deleted' ? true : undefined), 180_000);
    expect(broker.enginePids()).toEqual([]);
    expect(() => process.kill(pid!, 0)).toThrow(/ESRCH/);
  }, 600_000);

  it('a9s MariaDB: claim → broker provision → a real mariadbd; binding → Secret of the a9s shape → a real connection (the binding’s user: CREATE TABLE, INSERT, SELECT in the instance’s database); unbind drops the user; deletion stops the server', async () => {
    const s = env.services.find((x) => x.ds === 'mariadb')!;
    const broker = env.brokers.get('mariadb')!;
    const t0 = Date.now();
    await env.api.create(claimOf(s.claimKind, 'mariadb-vm', claimSpec(s)));
    await waitFor(
      'claim mariadb-vm Ready',
      async () => (condition(await get(s.claimKind, 'mariadb-vm'), 'Ready')?.status === 'True' ? true : undefined),
      240_000,
    );
    figures.push(`  mariadb (real ${A9S_ENGINES.mariadb}): ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const [inst] = broker.instances();
    expect(inst!.state).toBe('provisioned');
    expect(inst!.engine).toMatch(/^127\.0\.0\.1:\d+$/);
    expect([...inst!.operations.values()][0]!.description).toMatch(/^provisioned: a real Debian MariaDB 10\.\d+\.\d+ server on 127\.0\.0\.1:\d+$/);
    const [pid] = broker.enginePids();
    await env.api.create(
      claimOf('ServiceBinding', 'mariadb-creds', { serviceInstanceType: 'mariadb', instanceRef: 'mariadb-vm', compositionRef: { name: 'a9s-servicebinding' } }),
    );
    const { type, data } = await bindingSecret(env.api, 'mariadb-creds-creds', 'password');
    expect(type).toBe('connection.crossplane.io/v1alpha1');
    expect(Object.keys(data).sort()).toEqual(['host', 'name', 'password', 'port', 'uri', 'username']);
    expect(`${data.host}:${data.port}`).toBe(inst!.engine);
    expect(data.uri).toBe(`mysql://${data.username}:${encodeURIComponent(data.password!)}@${data.host}:${data.port}/${data.name}`);
    const login = { host: data.host!, port: Number(data.port), user: data.username!, password: data.password!, database: data.name! };
    expect(
      await mariadbQuery(login, "CREATE TABLE t (v VARCHAR(64)); INSERT INTO t VALUES ('from the a9s binding'); SELECT v, CURRENT_USER(), DATABASE() FROM t"),
    ).toEqual([['from the a9s binding', `${data.username}@%`, data.name]]);
    await waitFor(
      'claim mariadb-creds Ready',
      async () => (condition(await get('ServiceBinding', 'mariadb-creds'), 'Ready')?.status === 'True' ? true : undefined),
      120_000,
    );
    await env.api.delete(GROUP, 'ServiceBinding', 'mariadb-creds', NS);
    await waitFor('the binding unbound at the broker', async () => (inst!.bindings.size === 0 ? true : undefined), 120_000);
    await expect(mariadbQuery(login, 'SELECT 1')).rejects.toThrow(/ERROR (1045|1698) .*Access denied/);
    await env.api.delete(GROUP, s.claimKind, 'mariadb-vm', NS);
    await waitFor('mariadb-vm deprovisioned at the broker', async () => (inst!.state === 'deleted' ? true : undefined), 180_000);
    expect(broker.enginePids()).toEqual([]);
    expect(() => process.kill(pid!, 0)).toThrow(/ESRCH/);
  }, 600_000);

  it('a9s Messaging and Prometheus, claimed together: claim → broker provision → a real RabbitMQ node and a real Prometheus; binding → Secret → a real AMQP round trip and a real query; unbind refuses the binding; deletion ends the servers', async () => {
    const services = (['messaging', 'prometheus'] as const).map((ds) => env.services.find((x) => x.ds === ds)!);
    const t0 = Date.now();
    for (const s of services) await env.api.create(claimOf(s.claimKind, `${s.ds}-vm`, claimSpec(s)));
    for (const s of services) {
      await waitFor(
        `claim ${s.ds}-vm Ready`,
        async () => (condition(await get(s.claimKind, `${s.ds}-vm`), 'Ready')?.status === 'True' ? true : undefined),
        240_000,
      );
      figures.push(`  ${s.ds} (real ${A9S_ENGINES[s.ds]}; claimed together with ${services.length - 1} other): ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
    const msg = env.brokers.get('messaging')!.instances()[0]!;
    const prom = env.brokers.get('prometheus')!.instances()[0]!;
    expect([...msg.operations.values()][0]!.description).toMatch(/^provisioned: a real Debian RabbitMQ 3\.\d+\.\d+ server on 127\.0\.0\.1:\d+$/);
    expect([...prom.operations.values()][0]!.description).toMatch(/^provisioned: a real Debian Prometheus 2\.\d+\.\d+\S* server on 127\.0\.0\.1:\d+$/);
    const pids = [...env.brokers.get('messaging')!.enginePids(), ...env.brokers.get('prometheus')!.enginePids()];
    expect(pids.length).toBe(3); // the RabbitMQ node, its epmd, Prometheus
    for (const s of services) {
      await env.api.create(
        claimOf('ServiceBinding', `${s.ds}-creds`, { serviceInstanceType: s.ds, instanceRef: `${s.ds}-vm`, compositionRef: { name: 'a9s-servicebinding' } }),
      );
    }

    // Messaging: the provider flattens the broker's nested credentials into the Secret's keys
    const m = await bindingSecret(env.api, 'messaging-creds-creds', 'protocols.amqp.uri');
    expect(m.type).toBe('connection.crossplane.io/v1alpha1');
    expect(m.data['protocols.amqp.uri']).toMatch(new RegExp(`^amqp://a9s[0-9a-f]{12}:[^@]+@${msg.engine!.replace(/\./g, '\\.')}$`));
    const { closed } = await amqpRoundTrip(m.data['protocols.amqp.uri']!, 'from the a9s binding');

    // Prometheus: the URL list as the provider writes it ("[url]"), the binding's user and password
    const p = await bindingSecret(env.api, 'prometheus-creds-creds', 'password');
    expect(p.type).toBe('connection.crossplane.io/v1alpha1');
    expect(p.data['prometheus_urls']).toBe(`[http://${prom.engine}]`);
    const promUrl = p.data['prometheus_urls']!.slice(1, -1);
    const auth = { authorization: `Basic ${Buffer.from(`${p.data['username']}:${p.data['password']}`).toString('base64')}` };
    const query = `${promUrl}/api/v1/query?query=${encodeURIComponent('up{job="prometheus"}')}`;
    await waitFor('up{job="prometheus"} == 1 as the binding’s user', async () => {
      const body = (await (await fetch(query, { headers: auth })).json()) as { data: { result: Array<{ value: [number, string] }> } };
      return body.data.result[0]?.value[1] === '1' ? true : undefined;
    });
    expect((await fetch(query)).status).toBe(401);

    for (const s of services) {
      await waitFor(
        `claim ${s.ds}-creds Ready`,
        async () => (condition(await get('ServiceBinding', `${s.ds}-creds`), 'Ready')?.status === 'True' ? true : undefined),
        180_000,
      );
    }
    for (const s of services) await env.api.delete(GROUP, 'ServiceBinding', `${s.ds}-creds`, NS);
    for (const inst of [msg, prom]) await waitFor(`${inst.id}: unbound at the broker`, async () => (inst.bindings.size === 0 ? true : undefined), 180_000);
    await closed; // unbinding closed the binding's AMQP connection
    await expect(amqp.connect(m.data['protocols.amqp.uri']!)).rejects.toThrow(/ACCESS.REFUSED/);
    expect((await fetch(query, { headers: auth })).status).toBe(401);
    for (const s of services) await env.api.delete(GROUP, s.claimKind, `${s.ds}-vm`, NS);
    for (const inst of [msg, prom])
      await waitFor(`${inst.id}: deprovisioned at the broker`, async () => (inst.state === 'deleted' ? true : undefined), 180_000);
    expect(env.brokers.get('messaging')!.enginePids()).toEqual([]);
    expect(env.brokers.get('prometheus')!.enginePids()).toEqual([]);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
  }, 900_000);

  it('every other a9s service: claim → broker provision → Ready (status only), binding → credentials Secret, deletion → unbind and deprovision', async () => {
    const others = env.services.filter((s) => !A9S_ENGINES[s.ds]);
    expect(others.map((s) => s.ds).sort()).toEqual(['logme2', 'mongodb', 'search']);
    const started = new Map<string, number>();
    for (const s of others) {
      started.set(s.ds, Date.now());
      await env.api.create(claimOf(s.claimKind, `${s.ds}-vm`, claimSpec(s)));
    }
    for (const s of others) {
      await waitFor(
        `claim ${s.ds}-vm Ready`,
        async () => (condition(await get(s.claimKind, `${s.ds}-vm`), 'Ready')?.status === 'True' ? true : undefined),
        240_000,
      );
      figures.push(`  ${s.ds} (status only; created together with ${others.length - 1} others): ${((Date.now() - started.get(s.ds)!) / 1000).toFixed(1)} s`);
      const broker = env.brokers.get(s.ds)!;
      const [inst] = broker.instances();
      expect(inst!.state).toBe('provisioned');
      expect([...inst!.operations.values()][0]!.description).toMatch(/status only/);
    }
    for (const s of others) {
      await env.api.create(
        claimOf('ServiceBinding', `${s.ds}-creds`, { serviceInstanceType: s.ds, instanceRef: `${s.ds}-vm`, compositionRef: { name: 'a9s-servicebinding' } }),
      );
    }
    for (const s of others) {
      expect((await bindingSecret(env.api, `${s.ds}-creds-creds`, 'password')).type).toBe('connection.crossplane.io/v1alpha1');
      await waitFor(
        `claim ${s.ds}-creds Ready`,
        async () => (condition(await get('ServiceBinding', `${s.ds}-creds`), 'Ready')?.status === 'True' ? true : undefined),
        180_000,
      );
    }
    for (const s of others) await env.api.delete(GROUP, 'ServiceBinding', `${s.ds}-creds`, NS);
    for (const s of others) {
      const [inst] = env.brokers.get(s.ds)!.instances();
      await waitFor(`${s.ds}: unbound at the broker`, async () => (inst!.bindings.size === 0 ? true : undefined), 180_000);
      await env.api.delete(GROUP, s.claimKind, `${s.ds}-vm`, NS);
    }
    for (const s of others) {
      const [inst] = env.brokers.get(s.ds)!.instances();
      await waitFor(`${s.ds}: deprovisioned at the broker`, async () => (inst!.state === 'deleted' ? true : undefined), 180_000);
    }
    const names = new Set(others.map((s) => `${s.ds}-vm`));
    await waitFor(
      'no a9s managed resource of these claims left',
      async () => ((await env.api.list(A9S, 'ServiceInstance')).some((o) => names.has(o.metadata!.labels?.[CLAIM_NAME] ?? '')) ? undefined : true),
      180_000,
    );
  }, 900_000);
});
