/**
 * The a9s broker stand-in (sandbox/a9s-broker-standin.ts) over HTTP, as provider-anynines' clients call it:
 * auth and API version checks, the real broker's errors, asynchronous operations, a real PostgreSQL
 * server and login per PostgreSQL instance and binding, a real redis-server and ACL user per KeyValue
 * instance and binding, a real mariadbd and user per MariaDB instance and binding, a real RabbitMQ node and user
 * per Messaging instance and binding, a real Prometheus and basic-auth user per Prometheus instance and binding,
 * status only for the others, the backup manager.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import amqp from 'amqplib';
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { SandboxA9sServiceBroker, type A9sDataService } from '../../../sandbox/a9s-broker-standin.js';
import { LocalMariadbServer, MariadbClientError, mariadbQuery } from '../../../sandbox/local-mariadb.js';
import { RespError, respCommands } from '../../../sandbox/local-redis.js';
import { waitFor } from '../crossplane/_support.js';
import { amqpRoundTrip } from './_support.js';

const AUTH = `Basic ${Buffer.from('admin:pw').toString('base64')}`;
const HEADERS = { authorization: AUTH, 'x-broker-api-version': '2.14', 'content-type': 'application/json' };
let dir: string;
let pgBroker: SandboxA9sServiceBroker;
let kvBroker: SandboxA9sServiceBroker;
let mariadbBroker: SandboxA9sServiceBroker;
let msgBroker: SandboxA9sServiceBroker;
let promBroker: SandboxA9sServiceBroker;
let mongoBroker: SandboxA9sServiceBroker;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'klutch-a9s-standin-test-'));
  chmodSync(dir, 0o711);
  pgBroker = new SandboxA9sServiceBroker({
    dataService: 'postgresql',
    services: [{ name: 'a9s-postgresql17', plans: ['postgresql-single-nano', 'postgresql-single-big', 'postgresql-single-small'] }],
    username: 'admin',
    password: 'pw',
    dataDir: join(dir, 'pg'),
    operationMs: 100,
    failPlans: ['postgresql-single-big'],
    instanceLimits: { 'postgresql-single-small': 0 },
  });
  /** A broker of `dataService` serving one service with one plan; its engine's folder `dataDir` under `dir`. */
  const standIn = (dataService: A9sDataService, service: string, plan: string, dataDir?: string) =>
    new SandboxA9sServiceBroker({
      dataService,
      services: [{ name: service, plans: [plan] }],
      username: 'admin',
      password: 'pw',
      ...(dataDir ? { dataDir: join(dir, dataDir) } : {}),
      operationMs: 100,
    });
  kvBroker = standIn('keyvalue', 'a9s-keyvalue8', 'keyvalue-single-small', 'kv');
  mariadbBroker = standIn('mariadb', 'a9s-mariadb106', 'mariadb-single-small', 'mariadb');
  msgBroker = standIn('messaging', 'a9s-messaging313', 'messaging-single-small', 'msg');
  promBroker = standIn('prometheus', 'a9s-prometheus', 'prometheus-single-small', 'prom');
  mongoBroker = standIn('mongodb', 'a9s-mongodb70', 'mongodb-single-small');
  for (const b of [pgBroker, kvBroker, mariadbBroker, msgBroker, promBroker, mongoBroker]) await b.start();
}, 60_000);

afterAll(async () => {
  for (const b of [pgBroker, kvBroker, mariadbBroker, msgBroker, promBroker, mongoBroker]) await b?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

async function call(b: SandboxA9sServiceBroker, method: string, p: string, body?: unknown, headers: Record<string, string> = HEADERS): Promise<[number, any]> {
  const r = await fetch(`${b.url}${p}`, { method, headers, ...(body ? { body: JSON.stringify(body) } : {}) });
  const t = await r.text();
  return [r.status, t ? JSON.parse(t) : undefined];
}

async function catalogOf(b: SandboxA9sServiceBroker): Promise<{ id: string; name: string; plans: Array<{ id: string; name: string }> }> {
  return (await call(b, 'GET', '/v2/catalog'))[1].services[0];
}

/** PUT of instance `id` on the first plan of the broker's service; the catalogue entry and the 202 body. */
async function provisionFirstPlan(b: SandboxA9sServiceBroker, id: string): Promise<[Awaited<ReturnType<typeof catalogOf>>, { operation: string }]> {
  const s = await catalogOf(b);
  const body = { service_id: s.id, plan_id: s.plans[0]!.id, organization_guid: 'org', space_guid: 'space' };
  const [code, prov] = await call(b, 'PUT', `/v2/service_instances/${id}?accepts_incomplete=true`, body);
  expect(code).toBe(202);
  return [s, prov];
}

async function lastOperation(b: SandboxA9sServiceBroker, id: string, op: string): Promise<{ state: string; description: string }> {
  return waitFor(`operation ${op} of ${id} finished`, async () => {
    const [, lo] = await call(b, 'GET', `/v2/service_instances/${id}/last_operation?operation=${op}`);
    return lo.state === 'in progress' ? undefined : lo;
  });
}

/** The listening TCP sockets (`ss` lines) of the processes whose command line mentions `text`, and of `pids`. */
function listenersOf(text: string, pids: readonly number[] = []): string[] {
  const owners = new Set([...processesMentioning(text).map((l) => Number(l.split(' ')[0])), ...pids]);
  return execFileSync('ss', ['-Hltnp'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => [...l.matchAll(/pid=(\d+)/g)].some((m) => owners.has(Number(m[1]))));
}

/** Basic auth of a URL's user and password (fetch takes no URL with credentials). */
function withUserOf(url: string): [string, { authorization: string }] {
  const u = new URL(url);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
  u.username = '';
  u.password = '';
  return [u.toString(), { authorization: auth }];
}

/** Processes whose command line mentions `text` (read from /proc). */
function processesMentioning(text: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(text)) found.push(`${pid} ${cmd}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe('SandboxA9sServiceBroker', () => {
  it('checks basic auth and X-Broker-API-Version, serves the catalogue with suffixed service names', async () => {
    expect((await call(pgBroker, 'GET', '/v2/catalog', undefined, { 'x-broker-api-version': '2.14' }))[0]).toBe(401);
    expect((await call(pgBroker, 'GET', '/v2/catalog', undefined, { authorization: AUTH }))[0]).toBe(412);
    expect((await call(pgBroker, 'GET', '/v2/catalog', undefined, { authorization: AUTH, 'x-broker-api-version': '2.13' }))[0]).toBe(412);
    const s = await catalogOf(pgBroker);
    expect(s.name).toBe('a9s-postgresql17-ms-sandbox');
    expect(s.plans.map((p) => p.name)).toEqual(['postgresql-single-nano', 'postgresql-single-big', 'postgresql-single-small']);
  });

  it('PostgreSQL: 422 without accepts_incomplete, async provision of a real server, 409 on a different duplicate, bind → a real login, 410 on unbind of a gone binding, deprovision', async () => {
    const s = await catalogOf(pgBroker);
    const body = { service_id: s.id, plan_id: s.plans[0]!.id, organization_guid: 'org', space_guid: 'space', parameters: { maxConnections: 50 } };
    expect(await call(pgBroker, 'PUT', '/v2/service_instances/i1', body)).toEqual([422, expect.objectContaining({ error: 'AsyncRequired' })]);
    const [code, prov] = await call(pgBroker, 'PUT', '/v2/service_instances/i1?accepts_incomplete=true', body);
    expect(code).toBe(202);
    expect((await call(pgBroker, 'PUT', '/v2/service_instances/i1?accepts_incomplete=true', { ...body, plan_id: s.plans[1]!.id }))[0]).toBe(409);
    expect((await lastOperation(pgBroker, 'i1', prov.operation)).state).toBe('succeeded');
    const [, a9s] = await call(pgBroker, 'GET', '/instances/i1');
    expect(a9s).toMatchObject({
      state: 'provisioned',
      guid_at_tenant: 'i1',
      plan_guid: s.plans[0]!.id,
      context: { organization_guid: 'org', space_guid: 'space' },
    });
    expect((await call(pgBroker, 'GET', '/v2/service_instances/i1'))[1]).toMatchObject({ plan_id: s.plans[0]!.id, parameters: { maxConnections: 50 } });
    const [bcode, bind] = await call(pgBroker, 'PUT', '/v2/service_instances/i1/service_bindings/b1', { service_id: s.id, plan_id: s.plans[0]!.id });
    expect(bcode).toBe(201);
    const cr = bind.credentials;
    expect(Object.keys(cr).sort()).toEqual(['host', 'hosts', 'name', 'password', 'port', 'uri', 'username']);
    const c = new pg.Client({ connectionString: cr.uri });
    await c.connect();
    expect((await c.query('SELECT current_user AS u, current_database() AS d')).rows).toEqual([{ u: cr.username, d: cr.name }]);
    await c.end();
    expect((await call(pgBroker, 'GET', '/v2/service_instances/i1/service_bindings/b1'))[1]).toEqual({ credentials: cr });
    expect((await call(pgBroker, 'DELETE', '/v2/service_instances/i1/service_bindings/b1?service_id=x&plan_id=y'))[0]).toBe(200);
    expect((await call(pgBroker, 'DELETE', '/v2/service_instances/i1/service_bindings/b1?service_id=x&plan_id=y'))[0]).toBe(410);
    const gone = new pg.Client({ connectionString: cr.uri });
    gone.on('error', () => undefined);
    await expect(gone.connect()).rejects.toThrow(/password authentication failed/);
    await gone.end().catch(() => undefined);
    const [dcode, dep] = await call(pgBroker, 'DELETE', '/v2/service_instances/i1?accepts_incomplete=true&service_id=x&plan_id=y');
    expect(dcode).toBe(202);
    expect((await lastOperation(pgBroker, 'i1', dep.operation)).state).toBe('succeeded');
    expect((await call(pgBroker, 'GET', '/instances/i1'))[1].state).toBe('deleted');
    expect((await call(pgBroker, 'GET', '/v2/service_instances/i1'))[0]).toBe(404);
    expect((await call(pgBroker, 'DELETE', '/v2/service_instances/i1?accepts_incomplete=true&service_id=x&plan_id=y'))[0]).toBe(410);
  }, 120_000);

  it('a failPlans provision ends in a failed last operation with a description', async () => {
    const s = await catalogOf(pgBroker);
    const body = { service_id: s.id, plan_id: s.plans[1]!.id, organization_guid: 'org', space_guid: 'space' };
    const [, prov] = await call(pgBroker, 'PUT', '/v2/service_instances/i2?accepts_incomplete=true', body);
    expect(await lastOperation(pgBroker, 'i2', prov.operation)).toEqual({ state: 'failed', description: expect.stringMatching(/fails on purpose/) });
    expect((await call(pgBroker, 'GET', '/instances/i2'))[1].state).toBe('failed');
  }, 60_000);

  it('instanceLimits (and setInstanceLimit at runtime): a provision beyond the plan’s limit is refused at once with the real broker’s 422 InstanceLimitError and its description', async () => {
    const s = await catalogOf(pgBroker);
    const body = { service_id: s.id, plan_id: s.plans[2]!.id, organization_guid: 'org', space_guid: 'space' };
    expect(await call(pgBroker, 'PUT', '/v2/service_instances/i3?accepts_incomplete=true', body)).toEqual([
      422,
      { error: 'InstanceLimitError', description: expect.stringMatching(/^Service instance limit hit for the service plan postgresql-single-small/) },
    ]);
    expect(pgBroker.instance('i3')).toBeUndefined();
    // the quota changes at runtime, as an operator changes a real broker's: a limit of 0 on another plan refuses it too
    pgBroker.setInstanceLimit('postgresql-single-nano', 0);
    try {
      const nano = { ...body, plan_id: s.plans[0]!.id };
      expect(await call(pgBroker, 'PUT', '/v2/service_instances/i4?accepts_incomplete=true', nano)).toEqual([
        422,
        { error: 'InstanceLimitError', description: expect.stringMatching(/^Service instance limit hit for the service plan postgresql-single-nano: 0 of 0/) },
      ]);
    } finally {
      pgBroker.setInstanceLimit('postgresql-single-nano', undefined);
    }
    expect(() => pgBroker.setInstanceLimit('q', 1)).toThrow('SandboxA9sServiceBroker.setInstanceLimit: "q" is not a plan of the services');
    expect(() => pgBroker.setInstanceLimit('postgresql-single-nano', -1)).toThrow(
      'SandboxA9sServiceBroker.setInstanceLimit["postgresql-single-nano"]: -1 is not an integer >= 0',
    );
    expect(
      () =>
        new SandboxA9sServiceBroker({
          dataService: 'mariadb',
          services: [{ name: 'm', plans: ['p'] }],
          username: 'a',
          password: 'b',
          instanceLimits: { q: 1 },
        }),
    ).toThrow('SandboxA9sServiceBrokerOptions.instanceLimits: "q" is not a plan of the services');
    expect(() => new SandboxA9sServiceBroker({ dataService: 'keyvalue', services: [{ name: 'k', plans: ['p'] }], username: 'a', password: 'b' })).toThrow(
      'SandboxA9sServiceBrokerOptions.dataDir: required for keyvalue',
    );
  });

  it('KeyValue: provision starts a real redis-server on 127.0.0.1; bind → an ACL user whose credentials (the a9s shape) open a real connection; unbind removes the user; deprovision stops the server', async () => {
    const [s, prov] = await provisionFirstPlan(kvBroker, 'k1');
    expect((await lastOperation(kvBroker, 'k1', prov.operation)).description).toMatch(
      /^provisioned: a real Debian redis-server 7\.\d+\.\d+ server on 127\.0\.0\.1:\d+$/,
    );
    const inst = kvBroker.instance('k1')!;
    const [pid] = kvBroker.enginePids();
    expect(pid).toEqual(expect.any(Number));
    const [, bind] = await call(kvBroker, 'PUT', '/v2/service_instances/k1/service_bindings/b1', { service_id: s.id, plan_id: s.plans[0]!.id });
    const cr = bind.credentials;
    expect(cr).toEqual({
      host: '127.0.0.1',
      hosts: ['127.0.0.1'],
      load_balanced_host: '127.0.0.1',
      valkey: { username: expect.stringMatching(/^a9s/), password: expect.any(String), port: Number(inst.engine!.split(':')[1]) },
    });
    const { username, password, port } = cr.valkey;
    expect(await respCommands(cr.host, port, [['AUTH', username, password], ['PING'], ['SET', 'k', 'from the binding'], ['GET', 'k']])).toEqual([
      'OK',
      'PONG',
      'OK',
      'from the binding',
    ]);
    // no way in without the binding's password, and no administration with it
    expect(await respCommands(cr.host, port, [['PING']])).toEqual([expect.objectContaining({ message: expect.stringMatching(/^NOAUTH/) })]);
    expect(
      (
        await respCommands(cr.host, port, [
          ['AUTH', username, password],
          ['CONFIG', 'GET', 'port'],
        ])
      )[1],
    ).toBeInstanceOf(RespError);
    expect((await call(kvBroker, 'DELETE', '/v2/service_instances/k1/service_bindings/b1?service_id=x&plan_id=y'))[0]).toBe(200);
    expect(await respCommands(cr.host, port, [['AUTH', username, password]])).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/^WRONGPASS/) }),
    ]);
    const [, dep] = await call(kvBroker, 'DELETE', '/v2/service_instances/k1?accepts_incomplete=true&service_id=x&plan_id=y');
    expect((await lastOperation(kvBroker, 'k1', dep.operation)).state).toBe('succeeded');
    expect(kvBroker.enginePids()).toEqual([]);
    expect(() => process.kill(pid!, 0)).toThrow(/ESRCH/);
  }, 60_000);

  it('MariaDB: provision starts a real mariadbd on 127.0.0.1 with the instance’s database; bind → a user whose credentials (the a9s shape) open a real TCP connection to that database only; unbind drops the user and ends its connections; deprovision stops the server and removes its folder', async () => {
    const [s, prov] = await provisionFirstPlan(mariadbBroker, 'm1');
    expect((await lastOperation(mariadbBroker, 'm1', prov.operation)).description).toMatch(
      /^provisioned: a real Debian MariaDB 10\.\d+\.\d+ server on 127\.0\.0\.1:\d+$/,
    );
    const inst = mariadbBroker.instance('m1')!;
    const [pid] = mariadbBroker.enginePids();
    expect(pid).toEqual(expect.any(Number));
    const folder = join(dir, 'mariadb', 'm1');
    expect(existsSync(join(folder, 'data', 'mysql'))).toBe(true);
    const bindBody = { service_id: s.id, plan_id: s.plans[0]!.id };
    const [bcode, bind] = await call(mariadbBroker, 'PUT', '/v2/service_instances/m1/service_bindings/b1', bindBody);
    expect(bcode).toBe(201);
    const cr = bind.credentials;
    expect(cr).toEqual({
      host: '127.0.0.1',
      port: Number(inst.engine!.split(':')[1]),
      name: 'a9s_m1',
      username: expect.stringMatching(/^a9s[0-9a-f]{12}$/),
      password: expect.any(String),
      uri: `mysql://${cr.username}:${encodeURIComponent(cr.password)}@127.0.0.1:${cr.port}/${cr.name}`,
    });
    const login = { host: cr.host, port: cr.port, user: cr.username, password: cr.password, database: cr.name };
    expect(
      await mariadbQuery(login, "CREATE TABLE t (v VARCHAR(64)); INSERT INTO t VALUES ('from the binding'); SELECT v, CURRENT_USER(), DATABASE() FROM t"),
    ).toEqual([['from the binding', `${cr.username}@%`, cr.name]]);
    // that database only: no other database is visible or reachable, no administration
    expect(await mariadbQuery(login, 'SHOW DATABASES')).toEqual([['a9s_m1'], ['information_schema']]);
    await expect(mariadbQuery({ ...login, database: 'mysql' }, 'SELECT 1')).rejects.toThrow(
      /ERROR 1044 .*Access denied for user '[^']+'@'%' to database 'mysql'/,
    );
    await expect(mariadbQuery(login, 'CREATE DATABASE other')).rejects.toThrow(/ERROR 1044 .*Access denied/);
    // the server listens on 127.0.0.1 only: not on another loopback address
    await expect(mariadbQuery({ ...login, host: '127.0.0.2' }, 'SELECT 1')).rejects.toThrow(/ERROR 2002 .*Can't connect|ERROR 2003/);
    // a second binding: a user of its own, with the same database
    const [, bind2] = await call(mariadbBroker, 'PUT', '/v2/service_instances/m1/service_bindings/b2', bindBody);
    expect(bind2.credentials.username).not.toBe(cr.username);
    const login2 = { host: cr.host, port: cr.port, user: bind2.credentials.username, password: bind2.credentials.password, database: cr.name };
    expect(await mariadbQuery(login2, 'SELECT v FROM t')).toEqual([['from the binding']]);
    // no way in without the password, nor with another binding's, nor as root over TCP
    await expect(mariadbQuery({ ...login, password: 'wrong' }, 'SELECT 1')).rejects.toThrow(/ERROR 1045 .*Access denied/);
    await expect(mariadbQuery({ ...login, password: bind2.credentials.password }, 'SELECT 1')).rejects.toThrow(/ERROR 1045 .*Access denied/);
    await expect(mariadbQuery({ host: cr.host, port: cr.port, user: 'root' }, 'SELECT 1')).rejects.toThrow(/not allowed to connect|Access denied/);

    // unbind while the binding's user has a query running: the user is dropped and its connection ended
    const running = mariadbQuery(login, 'SELECT SLEEP(60)', { timeoutMs: 90_000 });
    running.catch(() => undefined);
    await waitFor('the binding’s SLEEP query running', async () => {
      // a user sees its own connections in the process list (a second one of the binding's user here)
      const rows = await mariadbQuery(login, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP%'");
      return rows[0]![0] === '0' ? undefined : true;
    });
    expect((await call(mariadbBroker, 'DELETE', '/v2/service_instances/m1/service_bindings/b1?service_id=x&plan_id=y'))[0]).toBe(200);
    await expect(running).rejects.toThrow(MariadbClientError);
    await expect(running).rejects.toThrow(/Lost connection|server has gone away|Connection was killed|ERROR 19\d\d|ERROR 20\d\d/);
    await expect(mariadbQuery(login, 'SELECT 1')).rejects.toThrow(/ERROR (1045|1698) .*Access denied for user '[^']+'@'127\.0\.0\.1'/);
    // the other binding is untouched
    expect(await mariadbQuery(login2, 'SELECT COUNT(*) FROM t')).toEqual([['1']]);

    // deprovision: the remaining binding is unbound, the server ends, its folder goes
    const [, dep] = await call(mariadbBroker, 'DELETE', '/v2/service_instances/m1?accepts_incomplete=true&service_id=x&plan_id=y');
    expect((await lastOperation(mariadbBroker, 'm1', dep.operation)).state).toBe('succeeded');
    expect(inst.bindings.size).toBe(0);
    expect(mariadbBroker.enginePids()).toEqual([]);
    expect(() => process.kill(pid!, 0)).toThrow(/ESRCH/);
    expect(processesMentioning(folder)).toEqual([]);
    expect(existsSync(folder)).toBe(false);
    await expect(mariadbQuery(login2, 'SELECT 1')).rejects.toThrow(/ERROR 2002|ERROR 2003|Can't connect/);
  }, 120_000);

  it('LocalMariadbServer: destroy() while start() runs mariadb-install-db ends it (its whole process group); start() fails saying so; nothing is left', async () => {
    const folder = join(dir, 'mariadb-destroyed');
    const server = new LocalMariadbServer({ dir: folder });
    const starting = server.start();
    starting.catch(() => undefined);
    await server.destroy();
    await expect(starting).rejects.toThrow(/mariadb-install-db \(.*\) for .*mariadb-destroyed\/data failed \(signal SIGKILL/);
    expect(server.running).toBe(false);
    expect(existsSync(folder)).toBe(false);
    expect(processesMentioning(folder)).toEqual([]);
    await expect(server.start()).rejects.toThrow(`LocalMariadbServer ${folder}: destroyed; make a new one`);
  }, 60_000);

  it('Messaging: provision starts a real RabbitMQ node with its own epmd, everything on 127.0.0.1; bind → a user whose credentials (the a9s shape) publish and consume over AMQP and read the HTTP API; unbind deletes the user and closes its connections; deprovision ends every process and removes its folder', async () => {
    const [s, prov] = await provisionFirstPlan(msgBroker, 'q1');
    expect((await lastOperation(msgBroker, 'q1', prov.operation)).description).toMatch(
      /^provisioned: a real Debian RabbitMQ 3\.\d+\.\d+ server on 127\.0\.0\.1:\d+$/,
    );
    const inst = msgBroker.instance('q1')!;
    const folder = join(dir, 'msg', 'q1');
    // the Erlang VM, its epmd: every listening socket on loopback (AMQP, management, distribution, epmd)
    const listening = listenersOf(folder, msgBroker.enginePids());
    expect(listening.length).toBeGreaterThanOrEqual(4);
    for (const l of listening) expect(l).toMatch(/\s(127\.0\.0\.1|\[::1\]):\d+\s/);
    const bindBody = { service_id: s.id, plan_id: s.plans[0]!.id };
    const [bcode, bind] = await call(msgBroker, 'PUT', '/v2/service_instances/q1/service_bindings/b1', bindBody);
    expect(bcode).toBe(201);
    const cr = bind.credentials;
    const port = Number(inst.engine!.split(':')[1]);
    const auth = `${cr.username}:${encodeURIComponent(cr.password)}`;
    expect(cr).toEqual({
      host: '127.0.0.1',
      hosts: ['127.0.0.1'],
      port,
      username: expect.stringMatching(/^a9s[0-9a-f]{12}$/),
      password: expect.any(String),
      uri: `amqp://${auth}@127.0.0.1:${port}`,
      http_api_uri: expect.stringMatching(new RegExp(`^http://${auth}@127\\.0\\.0\\.1:\\d+/api/$`)),
      http_api_uris: [cr.http_api_uri],
      protocols: {
        amqp: { host: '127.0.0.1', hosts: ['127.0.0.1'], port, username: cr.username, password: cr.password, ssl: false, uri: cr.uri },
        management: expect.objectContaining({ username: cr.username, path: '/api', ssl: false, uri: cr.http_api_uri }),
      },
    });
    const { closed } = await amqpRoundTrip(cr.uri, 'from the binding');
    // the HTTP API as the binding's user: itself yes, administration no
    const [api, headers] = withUserOf(cr.http_api_uri);
    expect(await (await fetch(`${api}whoami`, { headers })).json()).toEqual(expect.objectContaining({ name: cr.username }));
    expect((await fetch(`${api}users`, { headers })).status).toBe(401);
    // no way in without the password
    await expect(amqp.connect(`amqp://${cr.username}:wrong@127.0.0.1:${port}`)).rejects.toThrow(/ACCESS.REFUSED/);
    // a second binding: a user of its own on the same node
    const [, bind2] = await call(msgBroker, 'PUT', '/v2/service_instances/q1/service_bindings/b2', bindBody);
    expect(bind2.credentials.username).not.toBe(cr.username);
    const conn2 = await amqp.connect(bind2.credentials.uri);
    conn2.on('error', () => undefined);

    // unbind with the connection open: the user goes, and so does its connection
    expect((await call(msgBroker, 'DELETE', '/v2/service_instances/q1/service_bindings/b1?service_id=x&plan_id=y'))[0]).toBe(200);
    await closed;
    await expect(amqp.connect(cr.uri)).rejects.toThrow(/ACCESS.REFUSED/);
    // the other binding is untouched
    const ch2 = await conn2.createChannel();
    expect((await ch2.checkQueue('greetings')).queue).toBe('greetings');
    const closed2 = new Promise<void>((r) => conn2.once('close', () => r()));

    // deprovision: the remaining binding is unbound, the node and its epmd end, the folder goes
    const pids = msgBroker.enginePids();
    const [, dep] = await call(msgBroker, 'DELETE', '/v2/service_instances/q1?accepts_incomplete=true&service_id=x&plan_id=y');
    expect((await lastOperation(msgBroker, 'q1', dep.operation)).state).toBe('succeeded');
    await closed2;
    expect(inst.bindings.size).toBe(0);
    expect(msgBroker.enginePids()).toEqual([]);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
    expect(processesMentioning(folder)).toEqual([]);
    expect(existsSync(folder)).toBe(false);
  }, 180_000);

  it('Prometheus: provision starts a real Prometheus on 127.0.0.1 behind basic auth that scrapes itself; bind → a user whose credentials (the a9s shape) query it; unbind removes the user at once; deprovision stops the server and removes its folder', async () => {
    const [s, prov] = await provisionFirstPlan(promBroker, 'p1');
    expect((await lastOperation(promBroker, 'p1', prov.operation)).description).toMatch(
      /^provisioned: a real Debian Prometheus 2\.\d+\.\d+\S* server on 127\.0\.0\.1:\d+$/,
    );
    const inst = promBroker.instance('p1')!;
    const folder = join(dir, 'prom', 'p1');
    const [pid] = promBroker.enginePids();
    for (const l of listenersOf(folder)) expect(l).toMatch(/\s127\.0\.0\.1:\d+\s/);
    const bindBody = { service_id: s.id, plan_id: s.plans[0]!.id };
    const [, bind] = await call(promBroker, 'PUT', '/v2/service_instances/p1/service_bindings/b1', bindBody);
    const cr = bind.credentials;
    expect(cr).toEqual({
      username: expect.stringMatching(/^a9s[0-9a-f]{12}$/),
      password: expect.any(String),
      prometheus_urls: [`http://${inst.engine}`],
      alertmanager_urls: [expect.stringMatching(/^http:\/\/prometheus-\d+\.no-engine\.sandbox\.invalid:9093$/)],
      grafana_urls: [expect.stringMatching(/^http:\/\/prometheus-\d+\.no-engine\.sandbox\.invalid:3000$/)],
      graphite_exporters: [expect.stringMatching(/^prometheus-\d+\.no-engine\.sandbox\.invalid$/)],
      graphite_exporter_port: 9109,
    });
    const as = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
    const query = `${cr.prometheus_urls[0]}/api/v1/query?query=${encodeURIComponent('up{job="prometheus"}')}`;
    // the server scrapes itself: its own `up` is 1 once the first scrape is in
    const result = await waitFor('up{job="prometheus"} == 1', async () => {
      const body = (await (await fetch(query, { headers: as(cr.username, cr.password) })).json()) as { data: { result: Array<{ value: [number, string] }> } };
      return body.data.result[0]?.value[1] === '1' ? body.data.result : undefined;
    });
    expect(result).toHaveLength(1);
    expect((await fetch(query)).status).toBe(401);
    expect((await fetch(query, { headers: as(cr.username, 'wrong') })).status).toBe(401);
    const [, bind2] = await call(promBroker, 'PUT', '/v2/service_instances/p1/service_bindings/b2', bindBody);
    const cr2 = bind2.credentials;
    expect(cr2.username).not.toBe(cr.username);
    expect((await fetch(query, { headers: as(cr2.username, cr2.password) })).status).toBe(200);
    // unbind: refused from the next request on; the other binding is untouched
    expect((await call(promBroker, 'DELETE', '/v2/service_instances/p1/service_bindings/b1?service_id=x&plan_id=y'))[0]).toBe(200);
    expect((await fetch(query, { headers: as(cr.username, cr.password) })).status).toBe(401);
    expect((await fetch(query, { headers: as(cr2.username, cr2.password) })).status).toBe(200);
    const [, dep] = await call(promBroker, 'DELETE', '/v2/service_instances/p1?accepts_incomplete=true&service_id=x&plan_id=y');
    expect((await lastOperation(promBroker, 'p1', dep.operation)).state).toBe('succeeded');
    expect(inst.bindings.size).toBe(0);
    expect(promBroker.enginePids()).toEqual([]);
    expect(() => process.kill(pid!, 0)).toThrow(/ESRCH/);
    expect(processesMentioning(folder)).toEqual([]);
    expect(existsSync(folder)).toBe(false);
  }, 120_000);

  it('MongoDB is status only: the operation says so, credentials of the real shape with an .invalid host; the backup manager answers', async () => {
    const [s, prov] = await provisionFirstPlan(mongoBroker, 'q1');
    expect((await lastOperation(mongoBroker, 'q1', prov.operation)).description).toMatch(/status only/);
    const [, bind] = await call(mongoBroker, 'PUT', '/v2/service_instances/q1/service_bindings/b1', { service_id: s.id, plan_id: s.plans[0]!.id });
    expect(bind.credentials).toEqual({
      hosts: [expect.stringMatching(/^mongodb-\d+\.no-engine\.sandbox\.invalid:27017$/)],
      username: expect.stringMatching(/^a9s/),
      password: expect.any(String),
      default_database: expect.stringMatching(/^db\d+$/),
    });
    expect((await call(mongoBroker, 'GET', '/backup-manager/v2/healthy'))[0]).toBe(200);
    const [bk, backup] = await call(mongoBroker, 'POST', '/backup-manager/instances/q1/backups');
    expect(bk).toBe(201);
    await waitFor('backup done', async () =>
      (await call(mongoBroker, 'GET', `/backup-manager/instances/q1/backups/${backup.id}`))[1].status === 'done' ? true : undefined,
    );
    const [rc, restore] = await call(mongoBroker, 'POST', `/backup-manager/instances/q1/backups/${backup.id}/restore`);
    expect(rc).toBe(202);
    await waitFor('restore done', async () =>
      (await call(mongoBroker, 'GET', `/backup-manager/instances/q1/restores/${restore.id}`))[1].status === 'done' ? true : undefined,
    );
  }, 60_000);
});
