/**
 * The sandbox's local a8s operator (sandbox/a8s-operator) on a real cluster (kube-apiserver + etcd +
 * kube-controller-manager of the harness) with the vendored a8s CRDs and real PostgreSQL servers (Debian's
 * postgresql package): a Postgresql becomes a server on its own loopback address, a ServiceBinding a role and
 * the credentials Secret in the a8s format; connections with those credentials (npm `pg`) write and read rows;
 * a second binding's role cannot read the first one's table; parameters reach the server; what a local server
 * cannot honour is named in status; a killed server is reported and restarted; deleting a binding revokes it and
 * deleting the instance removes the server and its data.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { CoreResources, KubeClient, type KubeObject, type WatchHandle } from '../../../runtime/core/client.js';
import {
  A8S_RESOURCES,
  APP_DATABASE,
  installA8sCrds,
  SandboxA8sOperator,
  type A8sServiceBinding,
  type Postgresql,
} from '../../../sandbox/a8s-operator/index.js';
import { eventually, uniqueName, useCluster } from '../../realinfra/util.js';
import { alive } from './_cli.js';

jest.setTimeout(120_000);

const cluster = useCluster({ name: 'a8s-operator' });
let client: KubeClient;
let operator: SandboxA8sOperator;
let dataDir: string;
const ns = 'shop';

type Secret = KubeObject & { type?: string; data?: Record<string, string> };
interface Creds {
  username: string;
  password: string;
  database: string;
  instance_service: string;
}

const decode = (s: Secret): Record<string, string> =>
  Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));

async function connect(c: Creds): Promise<pg.Client> {
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
  throw new Error('expected the statement to fail');
}

function postgresql(name: string, spec: Record<string, unknown>): KubeObject {
  return { metadata: { name, namespace: ns }, spec: { version: 14, replicas: 1, ...spec } } as KubeObject;
}

function binding(name: string, instance: string, kind = 'Postgresql', apiVersion = 'postgresql.anynines.com/v1beta3'): KubeObject {
  return { metadata: { name, namespace: ns }, spec: { instance: { apiVersion, kind, name: instance, namespace: ns } } } as KubeObject;
}

const getPg = (name: string) => client.get<Postgresql>(A8S_RESOURCES.postgresqls, ns, name);
const getSb = (name: string) => client.get<A8sServiceBinding>(A8S_RESOURCES.serviceBindings, ns, name);

async function running(name: string): Promise<Postgresql> {
  return eventually(`Postgresql ${name} Running`, async () => {
    const o = await getPg(name);
    return o.status?.clusterStatus === 'Running' && o.status.readyReplicas === 1 ? o : undefined;
  });
}

async function implemented(name: string): Promise<{ sb: A8sServiceBinding; secret: Secret; creds: Creds }> {
  const sb = await eventually(`ServiceBinding ${name} implemented`, async () => {
    const o = await getSb(name);
    return o.status?.implemented === true ? o : undefined;
  });
  const secret = await client.get<Secret>(CoreResources.secrets, ns, `${name}-service-binding`);
  return { sb, secret, creds: decode(secret) as unknown as Creds };
}

beforeAll(async () => {
  await installA8sCrds(cluster().kubeConfig);
  client = new KubeClient(cluster().kubeConfig);
  await client.create(CoreResources.namespaces, { metadata: { name: ns } });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-a8s-it-'));
  fs.chmodSync(tmp, 0o711); // the servers run as `postgres` when the tests run as root
  dataDir = path.join(tmp, 'a8s');
  operator = new SandboxA8sOperator({ client, dataDir });
  await operator.start();
}, 180_000);

afterAll(async () => {
  await operator?.stop();
  client?.close();
  if (dataDir) fs.rmSync(path.dirname(dataDir), { recursive: true, force: true });
});

describe('SandboxA8sOperator', () => {
  it('rejects options it cannot use, naming the option and value', () => {
    expect(() => new SandboxA8sOperator({ client, dataDir: '' })).toThrow(/SandboxA8sOperatorOptions\.dataDir: ""/);
    expect(() => new SandboxA8sOperator({ client, dataDir, port: 70000 })).toThrow(/SandboxA8sOperatorOptions\.port: 70000/);
  });

  it('runs a Postgresql as a real server, binds two roles with a8s-format Secrets, revokes, removes the server', async () => {
    const db = uniqueName('orders');
    await client.create(
      A8S_RESOURCES.postgresqls,
      postgresql(db, { parameters: { maxConnections: 40 }, resources: { limits: { cpu: '500m', memory: '512Mi' } } }),
    );
    const pgObj = await running(db);
    // what one local server cannot honour is named in status, the instance still runs
    expect(pgObj.status?.error).toMatch(/^not applied by the sandbox's local server: .*spec\.version 14 \(the local server is PostgreSQL \d+/);
    expect(pgObj.status?.error).toMatch(/spec\.resources limits\.cpu=500m, limits\.memory=512Mi/);
    const [inst] = operator.instances.list().filter((i) => i.key === `${ns}/${db}`);
    expect(inst?.address).toMatch(/^127\.\d+\.\d+\.\d+$/);
    expect(inst?.address).not.toBe('127.0.0.1');
    const serverPid = inst!.pid!;
    expect(alive(serverPid)).toBe(true);

    // first binding: Secret exactly in the a8s format
    const b1 = uniqueName('b1');
    await client.create(A8S_RESOURCES.serviceBindings, binding(b1, db));
    const one = await implemented(b1);
    expect(one.sb.status?.secret).toEqual({ name: `${b1}-service-binding`, namespace: ns });
    expect(one.secret.type).toBe('Opaque');
    expect(Object.keys(one.secret.data ?? {}).sort()).toEqual(['database', 'instance_service', 'password', 'username']);
    expect(one.creds.instance_service).toBe(inst!.address);
    expect(one.creds.database).toBe(APP_DATABASE);
    expect(one.secret.metadata.labels?.['a8s.a9s/dsi-name']).toBe(db);

    const c1 = await connect(one.creds);
    await c1.query('CREATE TABLE orders (id int PRIMARY KEY, item text)');
    await c1.query("INSERT INTO orders VALUES (1, 'coffee')");
    expect((await c1.query('SELECT item FROM orders WHERE id = 1')).rows).toEqual([{ item: 'coffee' }]);
    expect((await c1.query('SHOW max_connections')).rows).toEqual([{ max_connections: '40' }]);
    await c1.end();

    // second binding: another role, which cannot read the first one's table unless granted
    const b2 = uniqueName('b2');
    await client.create(A8S_RESOURCES.serviceBindings, binding(b2, db));
    const two = await implemented(b2);
    expect(two.creds.username).not.toBe(one.creds.username);
    const c2 = await connect(two.creds);
    expect(await pgErrorCode(c2.query('SELECT * FROM orders'))).toBe('42501'); // insufficient_privilege
    const c1b = await connect(one.creds);
    await c1b.query(`GRANT SELECT ON orders TO ${c1b.escapeIdentifier(two.creds.username)}`);
    await c1b.end();
    expect((await c2.query('SELECT item FROM orders')).rows).toEqual([{ item: 'coffee' }]);
    await c2.end();

    // a parameter change reaches the server: restart-only (max_connections) and reloadable (statement_timeout)
    await client.mergePatch(A8S_RESOURCES.postgresqls, ns, db, { spec: { parameters: { maxConnections: 60, statementTimeoutMillis: 15000 } } });
    await eventually('max_connections 60 and statement_timeout 15s', async () => {
      const c = await connect(two.creds);
      try {
        const mc = (await c.query('SHOW max_connections')).rows[0].max_connections;
        const st = (await c.query('SHOW statement_timeout')).rows[0].statement_timeout;
        return mc === '60' && st === '15s';
      } finally {
        await c.end();
      }
    });
    await running(db);

    // deleting a binding revokes it: Secret gone, a new connection with its credentials refused, data kept
    await client.delete(A8S_RESOURCES.serviceBindings, ns, b1);
    await eventually(`ServiceBinding ${b1} gone`, async () => !(await client.getOrNull(A8S_RESOURCES.serviceBindings, ns, b1)));
    expect(await client.getOrNull(CoreResources.secrets, ns, `${b1}-service-binding`)).toBeUndefined();
    expect(await pgErrorCode(connect(one.creds))).toBe('28P01'); // invalid_password: the role is gone
    const c2b = await connect(two.creds);
    expect((await c2b.query('SELECT item FROM orders')).rows).toEqual([{ item: 'coffee' }]);
    await c2b.end();

    // deleting the instance stops the server and removes its data
    const instDir = operator.instances.get(`${ns}/${db}`)!.server.dir;
    const pidNow = operator.instances.get(`${ns}/${db}`)!.server.pid!;
    expect(fs.existsSync(path.join(instDir, 'data', 'PG_VERSION'))).toBe(true);
    await client.delete(A8S_RESOURCES.postgresqls, ns, db);
    await eventually(`Postgresql ${db} gone`, async () => !(await client.getOrNull(A8S_RESOURCES.postgresqls, ns, db)));
    expect(alive(pidNow)).toBe(false);
    expect(fs.existsSync(instDir)).toBe(false);
    expect(await pgErrorCode(connect(two.creds))).toBe('ECONNREFUSED');
    await client.delete(A8S_RESOURCES.serviceBindings, ns, b2);
    await eventually(`ServiceBinding ${b2} gone`, async () => !(await client.getOrNull(A8S_RESOURCES.serviceBindings, ns, b2)));
  });

  it('reports a killed server in status and an Event, and starts it again', async () => {
    const db = uniqueName('crash');
    await client.create(A8S_RESOURCES.postgresqls, postgresql(db, {}));
    await running(db);
    const b = uniqueName('cb');
    await client.create(A8S_RESOURCES.serviceBindings, binding(b, db));
    const { creds } = await implemented(b);
    const pid = operator.instances.get(`${ns}/${db}`)!.server.pid!;
    const seen: Array<Postgresql['status']> = [];
    const w: WatchHandle = await client.watch<Postgresql>(A8S_RESOURCES.postgresqls, ns, { fieldSelector: `metadata.name=${db}` }, (ev) => {
      if (ev.type === 'MODIFIED') seen.push((ev.object as Postgresql).status);
    });
    try {
      process.kill(pid, 'SIGKILL');
      await eventually('a NotRunning status naming the killed process', async () =>
        seen.find((s) => s?.clusterStatus === 'NotRunning' && s.readyReplicas === 0 && s.error?.includes(`(pid ${pid}) exited unexpectedly (signal SIGKILL)`)),
      );
      await eventually('Running again with a new server process', async () => {
        const o = await getPg(db);
        const p = operator.instances.get(`${ns}/${db}`)?.server.pid;
        return o.status?.clusterStatus === 'Running' && p !== undefined && p !== pid;
      });
    } finally {
      w.abort();
    }
    const events = (
      await client.list<KubeObject & { reason?: string; message?: string; involvedObject?: { name?: string } }>(A8S_RESOURCES.events, ns)
    ).items.filter((e) => e.involvedObject?.name === db);
    expect(events.map((e) => e.reason)).toEqual(expect.arrayContaining(['ServerExited', 'ServerRestarted']));
    // the data and the binding's role survived the crash
    const c = await connect(creds);
    expect((await c.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await c.end();
    await client.delete(A8S_RESOURCES.serviceBindings, ns, b);
    await client.delete(A8S_RESOURCES.postgresqls, ns, db);
    await eventually(`Postgresql ${db} gone`, async () => !(await client.getOrNull(A8S_RESOURCES.postgresqls, ns, db)));
  });

  it('names in status what it cannot honour: replicas > 1, a binding to another kind; replicas 0 stops the server', async () => {
    const db = uniqueName('rep');
    await client.create(A8S_RESOURCES.postgresqls, postgresql(db, { replicas: 3 }));
    const o = await eventually('NotRunning with a replicas message', async () => {
      const x = await getPg(db);
      return x.status?.readyReplicas === 1 && x.status.clusterStatus === 'NotRunning' && x.status.error ? x : undefined;
    });
    expect(o.status?.error).toMatch(/spec\.replicas 3 cannot be honoured: the sandbox runs one local PostgreSQL server per instance/);
    await client.mergePatch(A8S_RESOURCES.postgresqls, ns, db, { spec: { replicas: 1 } });
    await running(db);
    const pid = operator.instances.get(`${ns}/${db}`)!.server.pid!;
    await client.mergePatch(A8S_RESOURCES.postgresqls, ns, db, { spec: { replicas: 0 } });
    await eventually('NotRunning with replicas 0', async () => {
      const x = await getPg(db);
      return x.status?.clusterStatus === 'NotRunning' && x.status.readyReplicas === 0;
    });
    expect(alive(pid)).toBe(false);

    const b = uniqueName('redis');
    await client.create(A8S_RESOURCES.serviceBindings, binding(b, 'cache', 'Redis', 'redis.anynines.com/v1beta1'));
    const sb = await eventually('binding error', async () => {
      const x = await getSb(b);
      return x.status?.error ? x : undefined;
    });
    expect(sb.status?.implemented).toBe(false);
    expect(sb.status?.error).toBe(
      'spec.instance redis.anynines.com/v1beta1 Redis: the sandbox a8s operator binds only Postgresql (postgresql.anynines.com/v1beta3)',
    );
    expect(await client.getOrNull(CoreResources.secrets, ns, `${b}-service-binding`)).toBeUndefined();
    await client.delete(A8S_RESOURCES.serviceBindings, ns, b);
    await client.delete(A8S_RESOURCES.postgresqls, ns, db);
    await eventually(`Postgresql ${db} gone`, async () => !(await client.getOrNull(A8S_RESOURCES.postgresqls, ns, db)));
  });

  it('stop() leaves no server process and no data behind', async () => {
    const db = uniqueName('left');
    await client.create(A8S_RESOURCES.postgresqls, postgresql(db, {}));
    await running(db);
    const pid = operator.instances.get(`${ns}/${db}`)!.server.pid!;
    await operator.stop();
    expect(alive(pid)).toBe(false);
    expect(fs.readdirSync(dataDir)).toEqual([]);
    // a fresh operator for afterAll (and proof that it starts again on the same folder)
    operator = new SandboxA8sOperator({ client, dataDir });
    await operator.start();
    await running(db);
  });
});
