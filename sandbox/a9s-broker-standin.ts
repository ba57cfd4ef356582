/**
 * SANDBOX ONLY — a stand-in for an a9s service broker and the a9s backup manager, at their own level.
 *
 * No a9s service broker (it provisions VMs through BOSH) and no a9s backup manager can run here, so
 * `SandboxA9sServiceBroker` serves their HTTP APIs on 127.0.0.1 exactly as provider-anynines calls them
 * (its clients `clients/a9s-open-service-broker` and `clients/a9s-backup-manager` of the klutchio sources):
 *
 * - Open Service Broker API v2: `GET /v2/catalog`; `PUT|PATCH|DELETE|GET /v2/service_instances/:id` with
 *   asynchronous operations (`202` + `operation`, `GET …/last_operation?operation=`); `PUT|GET|DELETE
 *   …/service_bindings/:bid`; basic auth (401) and the `X-Broker-API-Version` header (412 when missing
 *   or older than 2.14, the version provider-anynines sends). The real broker's errors are served:
 *   409 for a different instance or binding under an existing id, 422 `AsyncRequired` without
 *   `accepts_incomplete=true`, 410 when unbinding or deprovisioning what is gone, a failed last operation
 *   (plans listed in `failPlans`).
 * - a9s extensions: `GET /instances`, `GET /instances/:id` (state, GUIDs, context: what the provider
 *   observes; an unknown instance is 404 `InstanceNotFound`, the error provider-anynines tells apart), `HEAD /osb_ext/v1/healthy` (the ProviderConfig health check the constructs emit).
 * - the backup manager under `/backup-manager`: `GET /v2/healthy`, backups, restores and the instance's
 *   backup config of `/instances/:id/…`.
 *
 * Engines (`A9S_ENGINES`): PostgreSQL provisions a real Debian PostgreSQL server on a loopback address (the sandbox
 * a8s operator's helpers) and bind creates a real login role; KeyValue provisions a real Debian `redis-server` on
 * 127.0.0.1 (sandbox/local-redis.ts) and bind creates a real ACL user; MariaDB provisions a real Debian `mariadbd`
 * on 127.0.0.1 with a database of the instance (sandbox/local-mariadb.ts) and bind creates a real user with every
 * privilege on that database only; Messaging provisions a real Debian RabbitMQ node on 127.0.0.1 with the management
 * plugin (sandbox/local-rabbitmq.ts) and bind creates a real user with every permission on the vhost `/`; Prometheus
 * provisions a real Debian Prometheus on 127.0.0.1 behind basic auth (sandbox/local-prometheus.ts) and bind adds a real
 * user (the real service's Alertmanager, Grafana and Graphite exporter have no engine: their URLs in the credentials
 * have `.invalid` hosts). MongoDB, Search and Logme2 have no engine on this machine (no Debian package): their
 * instances are status only, and the last operation's description and the credentials' `.invalid` hosts say so.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import type { Logger } from 'pino';
import { silentLogger } from '../runtime/core/logger.js';
import { LocalInstances } from './a8s-operator/instances.js';
import { assertReachable, dropLoginRole, findPostgresBinaries, serverUser, type PostgresBinaries, type ServerUser } from './a8s-operator/local-postgres.js';
import { planServer } from './a8s-operator/server-settings.js';
import { LocalMariadbServer, type MariadbBinaries } from './local-mariadb.js';
import { LocalPrometheusServer } from './local-prometheus.js';
import { LocalRabbitmqServer, type RabbitmqBinaries } from './local-rabbitmq.js';
import { LocalRedisServer } from './local-redis.js';

/** The a9s data services of the catalogue (each has its own broker, `<ds>-service-broker`). */
export type A9sDataService = 'postgresql' | 'keyvalue' | 'mariadb' | 'messaging' | 'mongodb' | 'search' | 'logme2' | 'prometheus';

/** The data services the stand-in runs a real engine for (a Debian package on this machine). */
export const A9S_ENGINES: Readonly<Record<A9sDataService, string | undefined>> = {
  postgresql: 'Debian PostgreSQL',
  keyvalue: 'Debian redis-server',
  mariadb: 'Debian MariaDB',
  messaging: 'Debian RabbitMQ',
  mongodb: undefined,
  search: undefined,
  logme2: undefined,
  prometheus: 'Debian Prometheus',
};

/** Suffix of the catalogue's service names (the real catalogue suffixes them too; provider-anynines matches by prefix). */
export const SERVICE_NAME_SUFFIX = '-ms-sandbox';
/** The OSB API version the stand-in requires at least (what provider-anynines sends). */
export const MIN_BROKER_API_VERSION = '2.14';

export interface SandboxA9sServiceBrokerOptions {
  readonly dataService: A9sDataService;
  /** The services and plans to serve, e.g. `[{ name: 'a9s-postgresql15', plans: ['postgresql-single-nano', …] }]` (from the catalogue). */
  readonly services: ReadonlyArray<{ readonly name: string; readonly plans: readonly string[] }>;
  /** Basic auth of the broker and the backup manager. */
  readonly username: string;
  readonly password: string;
  /** Folder for the engines' data (one server's folder per instance). Required for the data services of {@link A9S_ENGINES}. */
  readonly dataDir?: string;
  /** @default 0 (a free port) */
  readonly port?: number;
  /** How long an asynchronous operation stays `in progress` at least. @default 1000 */
  readonly operationMs?: number;
  /** Plans whose provisioning ends in a failed last operation (the real broker's failure path). @default none */
  readonly failPlans?: readonly string[];
  /**
   * Live instances a plan may have, e.g. `{ 'postgresql-single-big': 0 }`: a provision beyond is refused at once
   * with the real broker's `422 InstanceLimitError` and its description. @default no limit
   */
  readonly instanceLimits?: Readonly<Record<string, number>>;
  readonly logger?: Logger;
  /** @default the newest /usr/lib/postgresql/<major>/bin */
  readonly postgresBinaries?: PostgresBinaries;
  /** @default postgres when root */
  readonly postgresUser?: ServerUser;
  /** @default redis-server from PATH */
  readonly redisServer?: string;
  /** @default mariadbd, mariadb-install-db and mariadb from PATH, /usr/sbin or /usr/bin */
  readonly mariadbBinaries?: MariadbBinaries;
  /** @default /usr/lib/rabbitmq/bin/rabbitmq-server and epmd */
  readonly rabbitmqBinaries?: RabbitmqBinaries;
  /** @default prometheus from PATH, /usr/sbin or /usr/bin */
  readonly prometheusBinary?: string;
  /**
   * Serve HTTPS with this certificate and key (PEM) instead of HTTP, as the real broker and backup manager do;
   * `setTls()` replaces them while serving (e.g. with a certificate for an address known only later). @default HTTP
   */
  readonly tls?: { readonly cert: string; readonly key: string };
}

type OpState = 'in progress' | 'succeeded' | 'failed';
interface Operation {
  readonly key: string;
  readonly type: 'provision' | 'update' | 'deprovision';
  state: OpState;
  description: string;
}
interface Binding {
  readonly id: string;
  readonly serviceId: string;
  readonly planId: string;
  readonly credentials: Record<string, unknown>;
  readonly username: string;
}
interface Backup {
  readonly id: number;
  status: 'queued' | 'running' | 'done' | 'failed' | 'deleted';
  readonly triggeredAt: string;
  finishedAt: string;
}
interface Restore {
  readonly id: number;
  readonly backupId: number;
  status: 'queued' | 'running' | 'done' | 'failed';
  readonly triggeredAt: string;
  finishedAt: string;
}
/** An instance as the stand-in keeps it (read by tests through `instance()`). */
export interface StandInInstance {
  readonly id: string;
  readonly number: number;
  serviceId: string;
  planId: string;
  readonly organizationGuid: string;
  readonly spaceGuid: string;
  parameters: Record<string, unknown>;
  /** `/instances/:id` state: deploying, provisioned, failed, deleting, deleted. */
  state: 'deploying' | 'provisioned' | 'failed' | 'deleting' | 'deleted';
  readonly operations: Map<string, Operation>;
  readonly bindings: Map<string, Binding>;
  readonly backups: Backup[];
  readonly restores: Restore[];
  readonly createdAt: string;
  provisionedAt: string;
  updatedAt: string;
  deletedAt: string;
  /** `<address>:<port>` of the real engine, when there is one. */
  engine?: string;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(String(body['description'] ?? body['error'] ?? status));
  }
}

const now = () => new Date().toISOString();
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** A stable GUID-shaped id of a name (service and plan ids of the catalogue). */
const guidOf = (s: string) => {
  const h = createHash('sha256').update(s).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
};

function versionAtLeast(v: string, min: string): boolean {
  const [a, b] = v.split('.').map(Number);
  const [c, d] = min.split('.').map(Number);
  if (!Number.isInteger(a) || !Number.isInteger(b)) return false;
  return a! > c! || (a === c && b! >= d!);
}

/** SANDBOX ONLY: an a9s service broker + backup manager stand-in for one a9s data service (see the file comment). */
export class SandboxA9sServiceBroker {
  readonly dataService: A9sDataService;
  private readonly log: Logger;
  private server: http.Server | https.Server | undefined;
  private readonly instancesById = new Map<string, StandInInstance>();
  private readonly engines: Engine | undefined;
  private readonly catalog: Array<{ id: string; name: string; plans: Array<{ id: string; name: string }> }>;
  private counter = 0;
  private readonly pending = new Set<Promise<unknown>>();
  private stopped = false;
  /** Live instances allowed per plan (`instanceLimits`, then `setInstanceLimit`). */
  private readonly limits = new Map<string, number>();
  /** Every request served: `METHOD path status` (tests read which calls the provider made). */
  readonly requests: string[] = [];

  constructor(private readonly opts: SandboxA9sServiceBrokerOptions) {
    if (!opts || !(opts.dataService in A9S_ENGINES)) {
      throw new Error(`SandboxA9sServiceBrokerOptions.dataService: ${JSON.stringify(opts?.dataService)} is not one of ${Object.keys(A9S_ENGINES).join(', ')}`);
    }
    if (!opts.services?.length) throw new Error('SandboxA9sServiceBrokerOptions.services: give at least one service with its plans');
    this.dataService = opts.dataService;
    this.log = (opts.logger ?? silentLogger).child({ component: `a9s-broker-standin-${opts.dataService}` });
    this.catalog = opts.services.map((s) => ({
      id: guidOf(`service/${s.name}`),
      name: `${s.name}${SERVICE_NAME_SUFFIX}`,
      plans: s.plans.map((p) => ({ id: guidOf(`plan/${s.name}/${p}`), name: p })),
    }));
    for (const [plan, n] of Object.entries(opts.instanceLimits ?? {}))
      this.limits.set(plan, this.checkLimit('SandboxA9sServiceBrokerOptions.instanceLimits', plan, n));
    if (this.engine && !opts.dataDir) {
      throw new Error(`SandboxA9sServiceBrokerOptions.dataDir: required for ${opts.dataService} (the ${this.engine} servers' data folders)`);
    }
    if (opts.dataService === 'postgresql') {
      this.engines = new PostgresEngine(
        new LocalInstances({
          dataDir: opts.dataDir!,
          binaries: opts.postgresBinaries ?? findPostgresBinaries(),
          ...((opts.postgresUser ?? serverUser()) ? { user: opts.postgresUser ?? serverUser()! } : {}),
          logger: this.log,
        }),
      );
    } else if (opts.dataService === 'keyvalue') {
      this.engines = new RedisEngine(opts.dataDir!, opts.redisServer, this.log);
    } else if (opts.dataService === 'mariadb') {
      this.engines = new MariadbEngine(opts.dataDir!, opts.mariadbBinaries, this.log);
    } else if (opts.dataService === 'messaging') {
      this.engines = new RabbitmqEngine(opts.dataDir!, opts.rabbitmqBinaries, this.log);
    } else if (opts.dataService === 'prometheus') {
      this.engines = new PrometheusEngine(opts.dataDir!, opts.prometheusBinary, this.log);
    }
  }

  /** The real engine provisioning starts (PostgreSQL, Redis, MariaDB, RabbitMQ, Prometheus), or undefined: status only. */
  get engine(): string | undefined {
    return A9S_ENGINES[this.dataService];
  }

  get port(): number {
    const a = this.server?.address() as AddressInfo | null | undefined;
    if (!a) throw new Error('SandboxA9sServiceBroker: not started');
    return a.port;
  }

  /** `http(s)://127.0.0.1:<port>` (the broker) — a provider in another network namespace needs a forwarder to it. */
  get url(): string {
    return `${this.opts.tls ? 'https' : 'http'}://127.0.0.1:${this.port}`;
  }

  /** Serves with another certificate and key from now on (HTTPS stand-ins only). */
  setTls(tls: { readonly cert: string; readonly key: string }): void {
    if (!(this.server instanceof https.Server)) throw new Error('SandboxA9sServiceBroker.setTls: the stand-in serves HTTP; start it with the tls option');
    this.server.setSecureContext({ cert: tls.cert, key: tls.key });
  }

  instance(id: string): StandInInstance | undefined {
    return this.instancesById.get(id);
  }

  instances(): StandInInstance[] {
    return [...this.instancesById.values()];
  }

  /** The process ids of the engines' servers running now. */
  enginePids(): number[] {
    return this.engines?.pids() ?? [];
  }

  /**
   * Changes how many live instances `plan` may have from now on (as an operator changes a real broker's quota);
   * `undefined` lifts the limit. Instances already provisioned stay.
   */
  setInstanceLimit(plan: string, limit: number | undefined): void {
    if (limit === undefined) this.limits.delete(plan);
    else this.limits.set(plan, this.checkLimit('SandboxA9sServiceBroker.setInstanceLimit', plan, limit));
  }

  private checkLimit(where: string, plan: string, n: number): number {
    if (!this.opts.services.some((s) => s.plans.includes(plan))) throw new Error(`${where}: ${JSON.stringify(plan)} is not a plan of the services`);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${where}[${JSON.stringify(plan)}]: ${JSON.stringify(n)} is not an integer >= 0`);
    return n;
  }

  async start(): Promise<void> {
    if (this.server) return;
    if (this.engines) {
      const dir = path.resolve(this.opts.dataDir!);
      fs.mkdirSync(dir, { recursive: true });
      // the servers' own folders are 0700 and theirs; this one only needs to be entered
      fs.chmodSync(dir, 0o711);
      if (this.engines instanceof PostgresEngine) assertReachable(dir, this.opts.postgresUser ?? serverUser(), 'SandboxA9sServiceBrokerOptions.dataDir');
      this.engines.warm();
    }
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => void this.handle(req, res);
    const server = this.opts.tls ? https.createServer({ cert: this.opts.tls.cert, key: this.opts.tls.key }, handler) : http.createServer(handler);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port ?? 0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.log.info({ url: this.url, engine: this.engine ?? 'none (status only)' }, 'a9s broker stand-in listening');
  }

  /** Stops the server and every engine, removes their data. */
  async stop(): Promise<void> {
    this.stopped = true;
    const s = this.server;
    this.server = undefined;
    if (s) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
    await Promise.allSettled([...this.pending]);
    await this.engines?.destroyAll();
  }

  // ---- HTTP ---------------------------------------------------------------------------------

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    let status: number;
    let body: unknown;
    try {
      const raw = await new Promise<string>((resolve, reject) => {
        let s = '';
        req.on('data', (c: Buffer) => {
          s += c.toString('utf8');
          if (s.length > 1_000_000) reject(new HttpError(413, { error: 'PayloadTooLarge', description: 'request body over 1 MB' }));
        });
        req.on('end', () => resolve(s));
        req.on('error', reject);
      });
      let json: Record<string, unknown> = {};
      if (raw.trim() !== '') {
        try {
          json = JSON.parse(raw) as Record<string, unknown>;
        } catch {
          throw new HttpError(400, { error: 'BadRequest', description: 'the request body is not JSON' });
        }
      }
      this.authenticate(req);
      const p = url.pathname;
      if (p.startsWith('/backup-manager/')) [status, body] = this.backupManager(req.method ?? 'GET', p.slice('/backup-manager'.length), json);
      else {
        if (p === '/osb_ext/v1/healthy' || (p === '/instances' && req.method === 'HEAD')) [status, body] = [200, {}];
        else if (p === '/instances' && req.method === 'GET') [status, body] = [200, this.instancesPage()];
        else if (p.startsWith('/instances/') && req.method === 'GET') [status, body] = [200, this.a9sInstance(decodeURIComponent(p.split('/')[2] ?? ''))];
        else {
          this.checkApiVersion(req);
          [status, body] = await this.osb(req.method ?? 'GET', p, url.searchParams, json);
        }
      }
    } catch (e) {
      if (e instanceof HttpError) [status, body] = [e.status, e.body];
      else {
        this.log.error({ err: (e as Error).message }, 'stand-in error');
        [status, body] = [500, { error: 'InternalError', description: (e as Error).message }];
      }
    }
    this.requests.push(`${req.method} ${url.pathname} ${status}`);
    const text = req.method === 'HEAD' ? '' : JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', ...(status === 401 ? { 'www-authenticate': 'Basic realm="a9s"' } : {}) });
    res.end(text);
  }

  private authenticate(req: http.IncomingMessage): void {
    const h = req.headers.authorization ?? '';
    const m = /^Basic (.+)$/.exec(h);
    const [u, ...rest] = m ? Buffer.from(m[1]!, 'base64').toString('utf8').split(':') : [];
    if (u !== this.opts.username || rest.join(':') !== this.opts.password) {
      throw new HttpError(401, { error: 'Unauthorized', description: 'basic auth credentials are missing or wrong' });
    }
  }

  private checkApiVersion(req: http.IncomingMessage): void {
    const v = req.headers['x-broker-api-version'];
    if (typeof v !== 'string' || !versionAtLeast(v, MIN_BROKER_API_VERSION)) {
      throw new HttpError(412, {
        error: 'PreconditionFailed',
        description: `X-Broker-API-Version ${JSON.stringify(v ?? null)}: this broker needs ${MIN_BROKER_API_VERSION} or later`,
      });
    }
  }

  // ---- Open Service Broker API --------------------------------------------------------------

  private async osb(method: string, p: string, q: URLSearchParams, body: Record<string, unknown>): Promise<[number, unknown]> {
    if (p === '/v2/catalog' && method === 'GET') {
      return [
        200,
        {
          services: this.catalog.map((s) => ({
            id: s.id,
            name: s.name,
            description: `a9s ${this.dataService} (sandbox stand-in${this.engine ? `, ${this.engine}` : ', status only'})`,
            bindable: true,
            instances_retrievable: true,
            bindings_retrievable: true,
            plan_updateable: true,
            plans: s.plans.map((pl) => ({ id: pl.id, name: pl.name, description: pl.name, free: true, bindable: true })),
          })),
        },
      ];
    }
    const m = /^\/v2\/service_instances\/([^/]+)(?:\/(last_operation)|\/service_bindings\/([^/]+)(?:\/(last_operation))?)?$/.exec(p);
    if (!m) throw new HttpError(404, { error: 'NotFound', description: `${method} ${p} is not an OSB endpoint` });
    const id = decodeURIComponent(m[1]!);
    const bindingId = m[3] ? decodeURIComponent(m[3]) : undefined;
    if (m[2] === 'last_operation' && method === 'GET') return [200, this.lastOperation(id, q.get('operation') ?? undefined)];
    if (bindingId !== undefined) {
      if (m[4]) throw new HttpError(400, { error: 'BadRequest', description: 'bindings are synchronous here; there is no binding last_operation' });
      if (method === 'PUT') return this.bind(id, bindingId, body);
      if (method === 'GET') return [200, { credentials: this.bindingOf(id, bindingId).credentials }];
      if (method === 'DELETE') return this.unbind(id, bindingId);
    } else {
      if (method === 'PUT') return this.provision(id, q, body);
      if (method === 'PATCH') return this.update(id, q, body);
      if (method === 'DELETE') return this.deprovision(id, q);
      if (method === 'GET') {
        const inst = this.live(id);
        return [
          200,
          {
            id: inst.id,
            service_id: inst.serviceId,
            plan_id: inst.planId,
            dashboard_url: '',
            parameters: inst.parameters,
            context: { organization_guid: inst.organizationGuid, space_guid: inst.spaceGuid },
          },
        ];
      }
    }
    throw new HttpError(405, { error: 'MethodNotAllowed', description: `${method} ${p}` });
  }

  private planOf(serviceId: unknown, planId: unknown): { service: string; plan: string } {
    const s = this.catalog.find((x) => x.id === serviceId);
    if (!s) throw new HttpError(400, { error: 'BadRequest', description: `service_id ${JSON.stringify(serviceId)} is not in the catalog` });
    const pl = s.plans.find((x) => x.id === planId);
    if (!pl) throw new HttpError(400, { error: 'BadRequest', description: `plan_id ${JSON.stringify(planId)} is not a plan of ${s.name}` });
    return { service: s.name, plan: pl.name };
  }

  private requireAsync(q: URLSearchParams): void {
    if (q.get('accepts_incomplete') !== 'true') {
      throw new HttpError(422, { error: 'AsyncRequired', description: 'This service plan requires client support for asynchronous service operations.' });
    }
  }

  /** Instances that exist (deleted ones are gone for the OSB endpoints). */
  private live(id: string): StandInInstance {
    const inst = this.instancesById.get(id);
    if (!inst || inst.state === 'deleted') throw new HttpError(404, { error: 'InstanceNotFound', description: `service instance ${id} does not exist` });
    return inst;
  }

  private provision(id: string, q: URLSearchParams, body: Record<string, unknown>): [number, unknown] {
    const { plan } = this.planOf(body['service_id'], body['plan_id']);
    const org = body['organization_guid'];
    const space = body['space_guid'];
    if (typeof org !== 'string' || typeof space !== 'string' || !org || !space) {
      throw new HttpError(400, { error: 'BadRequest', description: 'organization_guid and space_guid are required' });
    }
    const params = (body['parameters'] ?? {}) as Record<string, unknown>;
    const have = this.instancesById.get(id);
    if (have) {
      const same =
        have.serviceId === body['service_id'] &&
        have.planId === body['plan_id'] &&
        JSON.stringify(have.parameters) === JSON.stringify(params) &&
        have.state !== 'deleted';
      if (!same) throw new HttpError(409, { error: 'Conflict', description: `service instance ${id} already exists with other attributes` });
      const op = [...have.operations.values()].find((o) => o.type === 'provision');
      if (op?.state === 'in progress') return [202, { operation: op.key }];
      return [200, { dashboard_url: '' }];
    }
    this.requireAsync(q);
    const limit = this.limits.get(plan);
    if (limit !== undefined) {
      const live = [...this.instancesById.values()].filter((i) => i.planId === body['plan_id'] && i.state !== 'deleted' && i.state !== 'failed').length;
      if (live >= limit) {
        throw new HttpError(422, {
          error: 'InstanceLimitError',
          description: `Service instance limit hit for the service plan ${plan}: ${live} of ${limit} instances (sandbox stand-in: instanceLimits)`,
        });
      }
    }
    const t = now();
    const inst: StandInInstance = {
      id,
      number: ++this.counter,
      serviceId: String(body['service_id']),
      planId: String(body['plan_id']),
      organizationGuid: org,
      spaceGuid: space,
      parameters: params,
      state: 'deploying',
      operations: new Map(),
      bindings: new Map(),
      backups: [],
      restores: [],
      createdAt: t,
      provisionedAt: '',
      updatedAt: t,
      deletedAt: '',
    };
    this.instancesById.set(id, inst);
    const op = this.startOperation(inst, 'provision', async () => {
      if ((this.opts.failPlans ?? []).includes(plan)) {
        throw new Error(`sandbox stand-in: provisioning plan ${plan} fails on purpose (failPlans), as a failed BOSH deployment would`);
      }
      if (this.engines) {
        const { endpoint, version } = await this.engines.provision(inst);
        inst.engine = endpoint;
        return `provisioned: a real ${this.engine} ${version} server on ${inst.engine}`;
      }
      return `provisioned (status only): the sandbox has no a9s ${this.dataService} engine on this machine; no server runs for this instance`;
    });
    return [202, { operation: op.key, dashboard_url: '' }];
  }

  private update(id: string, q: URLSearchParams, body: Record<string, unknown>): [number, unknown] {
    const inst = this.live(id);
    this.requireAsync(q);
    if (body['service_id'] !== inst.serviceId) throw new HttpError(400, { error: 'BadRequest', description: 'service_id cannot change' });
    const planId = body['plan_id'] === undefined ? inst.planId : body['plan_id'];
    const { plan } = this.planOf(inst.serviceId, planId);
    if ([...inst.operations.values()].some((o) => o.state === 'in progress')) {
      throw new HttpError(422, { error: 'ConcurrencyError', description: 'another operation for this service instance is in progress' });
    }
    const params = body['parameters'] as Record<string, unknown> | undefined;
    const op = this.startOperation(inst, 'update', async () => {
      inst.planId = String(planId);
      if (params) inst.parameters = { ...inst.parameters, ...params };
      inst.state = 'provisioned';
      return `updated: plan ${plan}${params ? `, parameters ${Object.keys(params).join(', ')}` : ''}`;
    });
    inst.state = 'deploying';
    return [202, { operation: op.key, dashboard_url: '' }];
  }

  private deprovision(id: string, q: URLSearchParams): [number, unknown] {
    const inst = this.instancesById.get(id);
    if (!inst || inst.state === 'deleted')
      throw new HttpError(410, { error: 'InstanceNotFound', description: `service instance ${id} does not exist (any more)` });
    this.requireAsync(q);
    const running = [...inst.operations.values()].find((o) => o.type === 'deprovision' && o.state === 'in progress');
    if (running) return [202, { operation: running.key }];
    const op = this.startOperation(inst, 'deprovision', async () => {
      for (const b of [...inst.bindings.values()]) await this.dropBinding(inst, b);
      await this.engines?.deprovision(id);
      inst.engine = undefined;
      return 'deprovisioned';
    });
    inst.state = 'deleting';
    return [202, { operation: op.key }];
  }

  private startOperation(inst: StandInInstance, type: Operation['type'], work: () => Promise<string>): Operation {
    const op: Operation = { key: `${type}-${inst.number}-${inst.operations.size + 1}`, type, state: 'in progress', description: `${type} in progress` };
    inst.operations.set(op.key, op);
    const run = (async () => {
      await sleep(this.opts.operationMs ?? 1000);
      if (this.stopped) return;
      try {
        op.description = await work();
        op.state = 'succeeded';
        const t = now();
        inst.updatedAt = t;
        if (type === 'provision') [inst.state, inst.provisionedAt] = ['provisioned', t];
        if (type === 'deprovision') [inst.state, inst.deletedAt] = ['deleted', t];
      } catch (e) {
        op.state = 'failed';
        op.description = (e as Error).message;
        if (type === 'provision') inst.state = 'failed';
        if (type === 'deprovision') inst.state = 'failed';
      }
      this.log.info({ instance: inst.id, operation: op.key, state: op.state, description: op.description }, 'operation finished');
    })();
    this.pending.add(run);
    void run.finally(() => this.pending.delete(run));
    return op;
  }

  private lastOperation(id: string, key: string | undefined): unknown {
    const inst = this.instancesById.get(id);
    if (!inst) throw new HttpError(410, { error: 'InstanceNotFound', description: `service instance ${id} does not exist` });
    const ops = [...inst.operations.values()];
    const op = key ? inst.operations.get(key) : ops[ops.length - 1];
    if (!op) throw new HttpError(400, { error: 'BadRequest', description: `operation ${JSON.stringify(key)} is not an operation of ${id}` });
    return { state: op.state, description: op.description };
  }

  private bindingOf(id: string, bindingId: string): Binding {
    const b = this.live(id).bindings.get(bindingId);
    if (!b) throw new HttpError(404, { error: 'NotFound', description: `binding ${bindingId} of ${id} does not exist` });
    return b;
  }

  private async bind(id: string, bindingId: string, body: Record<string, unknown>): Promise<[number, unknown]> {
    const inst = this.live(id);
    const have = inst.bindings.get(bindingId);
    if (have) {
      if (have.serviceId !== body['service_id'] || have.planId !== body['plan_id']) {
        throw new HttpError(409, { error: 'Conflict', description: `binding ${bindingId} already exists with other attributes` });
      }
      return [200, { credentials: have.credentials }];
    }
    if (inst.state !== 'provisioned') {
      throw new HttpError(422, { error: 'ConcurrencyError', description: `service instance ${id} is ${inst.state}, not provisioned` });
    }
    this.planOf(body['service_id'], body['plan_id']);
    const username = `a9s${randomBytes(6).toString('hex')}`;
    const password = randomBytes(18).toString('base64url');
    const credentials = this.engines ? await this.engines.bind(inst, username, password) : this.statusOnlyCredentials(inst, username, password);
    const b: Binding = { id: bindingId, serviceId: String(body['service_id']), planId: String(body['plan_id']), credentials, username };
    inst.bindings.set(bindingId, b);
    return [201, { credentials }];
  }

  /** Credentials of the shape the real broker returns (what provider-anynines reads), with `.invalid` hosts: no engine runs. */
  private statusOnlyCredentials(inst: StandInInstance, username: string, password: string): Record<string, unknown> {
    const host = `${this.dataService}-${inst.number}.no-engine.sandbox.invalid`;
    switch (this.dataService) {
      case 'mongodb':
        return { hosts: [`${host}:27017`], username, password, default_database: `db${inst.number}` };
      case 'search':
        return { host: [`${host}:9200`], username, password };
      case 'logme2':
        return { host: `https://${host}:9200`, username, password };
      default:
        return { host, username, password };
    }
  }

  private async unbind(id: string, bindingId: string): Promise<[number, unknown]> {
    const inst = this.instancesById.get(id);
    const b = inst?.bindings.get(bindingId);
    if (!inst || !b) throw new HttpError(410, { error: 'Gone', description: `binding ${bindingId} of ${id} does not exist (any more)` });
    await this.dropBinding(inst, b);
    return [200, {}];
  }

  private async dropBinding(inst: StandInInstance, b: Binding): Promise<void> {
    await this.engines?.unbind(inst.id, b.username);
    inst.bindings.delete(b.id);
  }

  // ---- a9s extensions ------------------------------------------------------------------------

  private a9sInstance(id: string): unknown {
    const inst = this.instancesById.get(id);
    if (!inst) throw new HttpError(404, { error: 'InstanceNotFound', description: `instance ${id} does not exist` });
    return {
      id: inst.number,
      plan_guid: inst.planId,
      service_guid: inst.serviceId,
      context: { organization_guid: inst.organizationGuid, space_guid: inst.spaceGuid },
      dashboard_url: '',
      deployment_name: `${this.dataService}-sandbox-${inst.number}`,
      state: inst.state,
      guid_at_tenant: inst.id,
      tenant_id: inst.organizationGuid,
      provisioned_at: inst.provisionedAt,
      deleted_at: inst.deletedAt,
      created_at: inst.createdAt,
      updated_at: inst.updatedAt,
      credentials: [...inst.bindings.values()].map((b, i) => ({ id: i + 1, instance_id: inst.number, guid_at_tenant: b.id })),
      vm_details: null,
    };
  }

  private instancesPage(): unknown {
    const resources = [...this.instancesById.keys()].map((id) => this.a9sInstance(id));
    return { total_results: resources.length, total_pages: 1, current_page: 1, prev_url: null, next_url: null, resources };
  }

  // ---- backup manager ------------------------------------------------------------------------

  private backupManager(method: string, p: string, body: Record<string, unknown>): [number, unknown] {
    if (p === '/v2/healthy' || p === '/instances') return [200, {}];
    const m = /^\/instances\/([^/]+)(?:\/(backups|restores|config)(?:\/([^/]+)(?:\/(restore))?)?)?$/.exec(p);
    if (!m) throw new HttpError(404, { error: 'NotFound', description: `${method} ${p} is not a backup manager endpoint` });
    const inst = this.instancesById.get(decodeURIComponent(m[1]!));
    if (!inst || inst.state === 'deleted') throw new HttpError(404, { message: `instance ${m[1]} not found` });
    const t = now();
    const bk = (b: Backup) => ({
      id: b.id,
      size: b.status === 'done' ? 1024 : 0,
      status: b.status,
      triggered_at: b.triggeredAt,
      finished_at: b.finishedAt,
      downloadable: false,
    });
    const rs = (r: Restore) => ({ id: r.id, backup_id: r.backupId, status: r.status, triggered_at: r.triggeredAt, finished_at: r.finishedAt });
    const finishSoon = (o: Backup | Restore) => {
      setTimeout(() => {
        o.status = 'done';
        o.finishedAt = now();
      }, this.opts.operationMs ?? 1000).unref();
    };
    if (m[2] === 'config') {
      if (method === 'GET')
        return [200, { min_backup_count: 3, retention_time: 14, min_encryption_key_length: 8, exclude_from_auto_backup: false, backup_type: 'full' }];
      return [200, { message: 'config updated' }];
    }
    if (m[2] === 'backups' && !m[3]) {
      if (method === 'POST') {
        const b: Backup = { id: inst.backups.length + 1, status: 'queued', triggeredAt: t, finishedAt: '' };
        inst.backups.push(b);
        finishSoon(b);
        return [201, { id: b.id, message: `backup ${b.id} queued${this.engine ? '' : ' (status only: no engine)'}` }];
      }
      return [200, inst.backups.filter((b) => b.status !== 'deleted').map(bk)];
    }
    if (m[2] === 'backups' && m[3]) {
      const b = inst.backups.find((x) => String(x.id) === m[3]);
      // a deleted backup stays readable, in state deleted (what provider-anynines expects to finish a deletion)
      if (!b || (b.status === 'deleted' && method !== 'GET')) throw new HttpError(404, { message: `backup ${m[3]} not found` });
      if (m[4] === 'restore' && method === 'POST') {
        if (b.status !== 'done') throw new HttpError(422, { message: `backup ${b.id} is ${b.status}, not done` });
        const r: Restore = { id: inst.restores.length + 1, backupId: b.id, status: 'queued', triggeredAt: t, finishedAt: '' };
        inst.restores.push(r);
        finishSoon(r);
        return [202, { id: r.id }];
      }
      if (method === 'DELETE') {
        b.status = 'deleted';
        return [200, { message: `backup ${b.id} deleted` }];
      }
      return [200, bk(b)];
    }
    if (m[2] === 'restores') {
      if (!m[3]) return [200, inst.restores.map(rs)];
      const r = inst.restores.find((x) => String(x.id) === m[3]);
      if (!r) throw new HttpError(404, { message: `restore ${m[3]} not found` });
      return [200, rs(r)];
    }
    return [200, { id: inst.number, guid: inst.id, state: inst.state, body }];
  }
}

// ---- engines -----------------------------------------------------------------------------------

/** A real server per instance and a real user per binding (PostgreSQL, Redis, MariaDB). */
interface Engine {
  /** Prepares what the first instance needs (in the background). */
  warm(): void;
  /** Starts the instance's server; its `<address>:<port>` and version. */
  provision(inst: StandInInstance): Promise<{ endpoint: string; version: string }>;
  /** Creates the binding's user; the credentials as the real broker returns them. */
  bind(inst: StandInInstance, username: string, password: string): Promise<Record<string, unknown>>;
  /** Removes the binding's user (when the server still runs). */
  unbind(instanceId: string, username: string): Promise<void>;
  /** Stops the instance's server and removes its data. */
  deprovision(instanceId: string): Promise<void>;
  destroyAll(): Promise<void>;
  pids(): number[];
}

const notRunning = (what: string, id: string) => new HttpError(500, { error: 'InternalError', description: `the ${what} server of ${id} is not running` });

/** The instance's database (PostgreSQL, MariaDB). */
function databaseOf(instanceId: string): string {
  return `a9s_${instanceId
    .replace(/[^a-z0-9]/gi, '')
    .slice(0, 16)
    .toLowerCase()}`;
}

/** A real Debian PostgreSQL server per instance (the sandbox a8s operator's helpers), a login role per binding. */
class PostgresEngine implements Engine {
  constructor(private readonly pg: LocalInstances) {}

  warm(): void {
    this.pg.warm();
  }

  async provision(inst: StandInInstance): Promise<{ endpoint: string; version: string }> {
    const pi = await this.pg.ensure(inst.id);
    await pi.server.start(planServer({}, pi.server.address, pi.server.port, this.pg.binaries.major));
    const c = await pi.server.superuser('postgres');
    try {
      await c.query(`CREATE DATABASE ${c.escapeIdentifier(databaseOf(inst.id))}`);
    } finally {
      await c.end();
    }
    return { endpoint: `${pi.server.address}:${pi.server.port}`, version: String(this.pg.binaries.major) };
  }

  async bind(inst: StandInInstance, username: string, password: string): Promise<Record<string, unknown>> {
    const pi = this.pg.get(inst.id);
    if (!pi || !pi.server.running) throw notRunning('PostgreSQL', inst.id);
    const db = databaseOf(inst.id);
    const c = await pi.server.superuser(db);
    try {
      const role = c.escapeIdentifier(username);
      await c.query(`CREATE ROLE ${role} LOGIN PASSWORD ${c.escapeLiteral(password)}`);
      await c.query(`GRANT ALL PRIVILEGES ON DATABASE ${c.escapeIdentifier(db)} TO ${role}`);
      await c.query(`GRANT USAGE, CREATE ON SCHEMA public TO ${role}`);
    } finally {
      await c.end();
    }
    const host = pi.server.address;
    const port = pi.server.port;
    return { host, hosts: [host], port, name: db, username, password, uri: `postgres://${username}:${encodeURIComponent(password)}@${host}:${port}/${db}` };
  }

  async unbind(instanceId: string, username: string): Promise<void> {
    const pi = this.pg.get(instanceId);
    if (!pi?.server.running) return;
    const c = await pi.server.superuser(databaseOf(instanceId));
    try {
      await dropLoginRole(c, username);
    } finally {
      await c.end();
    }
  }

  deprovision(instanceId: string): Promise<void> {
    return this.pg.destroy(instanceId);
  }

  destroyAll(): Promise<void> {
    return this.pg.destroyAll();
  }

  pids(): number[] {
    return this.pg
      .list()
      .map((i) => i.pid)
      .filter((p): p is number => p !== undefined);
  }
}

/** What a per-instance engine server offers its engine (LocalRedisServer, LocalMariadbServer, LocalRabbitmqServer, LocalPrometheusServer). */
interface InstanceServer {
  readonly address: string;
  readonly port: number;
  readonly running: boolean;
  readonly pid: number | undefined;
  /** Every process id of the server when it has more than one (RabbitMQ: the node and its epmd). @default [pid] */
  readonly pids?: number[];
  start(): Promise<void>;
  version(): Promise<string>;
  deleteUser(username: string): Promise<void>;
  destroy(): Promise<void>;
}

/**
 * An engine with one real server per instance in its own folder under `dataDir`: provision starts it (made by
 * `make`), unbind deletes the binding's user, deprovision ends the instance's server and removes its folder.
 */
abstract class ServerPerInstanceEngine<S extends InstanceServer> implements Engine {
  protected readonly servers = new Map<string, S>();

  /**
   * @param name the engine's name in errors (`Redis`, `MariaDB`, …)
   * @param make a server of an instance in folder `dir`, not started
   */
  constructor(
    private readonly name: string,
    private readonly dataDir: string,
    protected readonly log: Logger,
    private readonly make: (dir: string, logger: Logger) => S,
  ) {}

  warm(): void {}

  abstract bind(inst: StandInInstance, username: string, password: string): Promise<Record<string, unknown>>;

  /** Starts and records the server of `inst`; its `<address>:<port>` and version. */
  async provision(inst: StandInInstance): Promise<{ endpoint: string; version: string }> {
    const server = await this.serverFor(inst);
    return { endpoint: `${server.address}:${server.port}`, version: await server.version() };
  }

  /** Makes, records and starts the server of `inst`. */
  protected async serverFor(inst: StandInInstance): Promise<S> {
    const server = this.make(path.join(this.dataDir, inst.id.replace(/[^A-Za-z0-9_-]/g, '_')), this.log.child({ instance: inst.id }));
    this.servers.set(inst.id, server);
    await server.start();
    return server;
  }

  /** The running server of `inst`, or an error naming the engine and the instance. */
  protected running(inst: StandInInstance): S {
    const server = this.servers.get(inst.id);
    if (!server?.running) throw notRunning(this.name, inst.id);
    return server;
  }

  async unbind(instanceId: string, username: string): Promise<void> {
    const server = this.servers.get(instanceId);
    if (server?.running) await server.deleteUser(username);
  }

  async deprovision(instanceId: string): Promise<void> {
    await this.servers.get(instanceId)?.destroy();
    this.servers.delete(instanceId);
  }

  async destroyAll(): Promise<void> {
    await Promise.all([...this.servers.keys()].map((id) => this.deprovision(id)));
  }

  pids(): number[] {
    return [...this.servers.values()].flatMap((s) => s.pids ?? [s.pid]).filter((p): p is number => p !== undefined);
  }
}

/**
 * A real Debian redis-server per instance on 127.0.0.1 (sandbox/local-redis.ts), an ACL user per binding; the
 * credentials of the real a9s KeyValue broker's shape (`host`, `hosts`, `load_balanced_host`, `valkey.{username,
 * password, port}`; the real one adds `cacrt`: it serves TLS, this one does not).
 */
class RedisEngine extends ServerPerInstanceEngine<LocalRedisServer> {
  constructor(dataDir: string, binary: string | undefined, log: Logger) {
    super('Redis', dataDir, log, (dir, logger) => new LocalRedisServer({ dir, ...(binary ? { binary } : {}), logger }));
  }

  async bind(inst: StandInInstance, username: string, password: string): Promise<Record<string, unknown>> {
    const server = this.running(inst);
    await server.createUser(username, password);
    const host = server.address;
    return { host, hosts: [host], load_balanced_host: host, valkey: { username, password, port: server.port } };
  }
}

/**
 * A real Debian MariaDB server per instance on 127.0.0.1 (sandbox/local-mariadb.ts) with the instance's database, a
 * user per binding with every privilege on that database only. The credentials have the shape of the real a9s
 * MariaDB broker's: `host`, `port`, `name` (the database), `username`, `password`, `uri` (`mysql://…`) — the keys of
 * the a9s MariaDB binding Secret in provider-anynines' own tests (`status_connection_details_mariadb`), which reads
 * `host` and `port` of it; the real one's host is a Consul name, here 127.0.0.1.
 */
class MariadbEngine extends ServerPerInstanceEngine<LocalMariadbServer> {
  constructor(dataDir: string, binaries: MariadbBinaries | undefined, log: Logger) {
    super('MariaDB', dataDir, log, (dir, logger) => new LocalMariadbServer({ dir, ...(binaries ? { binaries } : {}), logger }));
  }

  async provision(inst: StandInInstance): Promise<{ endpoint: string; version: string }> {
    const started = await super.provision(inst);
    await this.running(inst).createDatabase(databaseOf(inst.id));
    return started;
  }

  async bind(inst: StandInInstance, username: string, password: string): Promise<Record<string, unknown>> {
    const server = this.running(inst);
    const name = databaseOf(inst.id);
    await server.createUser(username, password, name);
    const host = server.address;
    const port = server.port;
    return { host, port, name, username, password, uri: `mysql://${username}:${encodeURIComponent(password)}@${host}:${port}/${name}` };
  }
}

/**
 * A real Debian RabbitMQ node per instance on 127.0.0.1 (sandbox/local-rabbitmq.ts), a user per binding with every
 * permission on the vhost `/`. The credentials have the shape of the real a9s Messaging broker's (the binding Secret
 * of provider-anynines' own tests, `status_connection_details_messaging`): `host`, `hosts`, `port`, `username`,
 * `password`, `uri`, `http_api_uri(s)` and `protocols.{amqp,management}`; the real one serves TLS (`amqp_ssl`,
 * `https`), this one plain AMQP and HTTP on loopback.
 */
class RabbitmqEngine extends ServerPerInstanceEngine<LocalRabbitmqServer> {
  constructor(dataDir: string, binaries: RabbitmqBinaries | undefined, log: Logger) {
    super('RabbitMQ', dataDir, log, (dir, logger) => new LocalRabbitmqServer({ dir, ...(binaries ? { binaries } : {}), logger }));
  }

  async bind(inst: StandInInstance, username: string, password: string): Promise<Record<string, unknown>> {
    const server = this.running(inst);
    await server.createUser(username, password);
    const host = server.address;
    const auth = `${username}:${encodeURIComponent(password)}`;
    const uri = `amqp://${auth}@${host}:${server.port}`;
    const api = `http://${auth}@${host}:${server.managementPort}/api/`;
    return {
      host,
      hosts: [host],
      port: server.port,
      username,
      password,
      uri,
      http_api_uri: api,
      http_api_uris: [api],
      protocols: {
        amqp: { host, hosts: [host], port: server.port, username, password, ssl: false, uri },
        management: { host, hosts: [host], port: server.managementPort, username, password, path: '/api', ssl: false, uri: api, uris: [api] },
      },
    };
  }
}

/**
 * A real Debian Prometheus per instance on 127.0.0.1 behind basic auth (sandbox/local-prometheus.ts), a user per
 * binding. The credentials have the keys of the real a9s Prometheus broker's (`username`, `password`,
 * `prometheus_urls`, `alertmanager_urls`, `grafana_urls`, `graphite_exporters`, `graphite_exporter_port`: the binding
 * Secret of provider-anynines' own tests, which reads all of them); only Prometheus runs, so the other URLs have
 * `.invalid` hosts.
 */
class PrometheusEngine extends ServerPerInstanceEngine<LocalPrometheusServer> {
  constructor(dataDir: string, binary: string | undefined, log: Logger) {
    super('Prometheus', dataDir, log, (dir, logger) => new LocalPrometheusServer({ dir, ...(binary ? { binary } : {}), logger }));
  }

  async bind(inst: StandInInstance, username: string, password: string): Promise<Record<string, unknown>> {
    const server = this.running(inst);
    await server.createUser(username, password);
    const none = `prometheus-${inst.number}.no-engine.sandbox.invalid`;
    return {
      username,
      password,
      prometheus_urls: [server.url],
      alertmanager_urls: [`http://${none}:9093`],
      grafana_urls: [`http://${none}:3000`],
      graphite_exporters: [none],
      graphite_exporter_port: 9109,
    };
  }
}
