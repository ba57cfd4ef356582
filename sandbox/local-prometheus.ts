/**
 * SANDBOX ONLY — a real Prometheus server (Debian's `prometheus`, 2.42) for the a9s broker stand-in's Prometheus
 * instances.
 *
 * Each server listens on 127.0.0.1 only, on a port of its own (one the kernel hands out), with its own folder
 * (config, TSDB, web config), and scrapes itself so that a query has data. Every HTTP request needs basic auth: the
 * web config (`--web.config.file`) lists the users by bcrypt hash, and Prometheus reads that file on every request,
 * so a binding is a user added to it and unbinding removes the user — effective at once, no restart. The stand-in
 * administers the server as `admin`, a user with a password only it knows.
 */
import bcrypt from 'bcryptjs';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Logger } from 'pino';
import { silentLogger } from '../runtime/core/logger.js';
import { freePort } from '../runtime/realinfra/cluster.js';
import { findProgram, LoopbackServerProcess } from './_loopback-server.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** User names the web config takes here: a letter, then letters, digits, `_` or `-`; at most 64 characters. */
const USER = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** `value` when it is a user name of {@link USER}'s pattern, else an error naming the field and the value. */
export function prometheusUserName(value: string, field = 'username'): string {
  if (typeof value !== 'string' || !USER.test(value) || value === ADMIN) {
    throw new Error(
      `Prometheus ${field}: ${JSON.stringify(value)} is not a user name here (a letter, then letters, digits, _ or -; at most 64 characters; not "${ADMIN}")`,
    );
  }
  return value;
}

/** The stand-in's own user on every server. */
const ADMIN = 'admin';

/** bcrypt's cost for the web config's hashes: Prometheus checks a hash once per user and password, then caches the result. */
const BCRYPT_COST = 10;

/** `prometheus` from PATH, /usr/sbin or /usr/bin (Debian package `prometheus`), or an error saying what to install. */
export function findPrometheus(): string {
  return findProgram(['prometheus'], 'the Debian package prometheus');
}

/** The web config's text: `users` (name → bcrypt hash) as basic-auth users. */
export function webConfigText(users: ReadonlyMap<string, string>): string {
  // bcrypt hashes and the names of USER's pattern need no quoting in YAML; quoted anyway, with JSON's escapes (valid YAML)
  return ['basic_auth_users:', ...[...users].map(([u, h]) => `  ${JSON.stringify(u)}: ${JSON.stringify(h)}`), ''].join('\n');
}

export interface LocalPrometheusServerOptions {
  /** The server's own folder (config, TSDB, log), created by start(), removed by destroy(). */
  readonly dir: string;
  /** @default findPrometheus() */
  readonly binary?: string;
  readonly logger?: Logger;
}

/** SANDBOX ONLY: one prometheus process on 127.0.0.1 (see the file comment). */
export class LocalPrometheusServer extends LoopbackServerProcess {
  private readonly adminPassword = randomBytes(24).toString('base64url');
  /** The web config's users: name → bcrypt hash, and the password (to check that a removed user is refused). */
  private readonly users = new Map<string, { hash: string; password: string }>();
  private destroyed = false;

  constructor(private readonly opts: LocalPrometheusServerOptions) {
    super('prometheus', opts.logger ?? silentLogger);
  }

  /** The server's log (its standard error). */
  get logFile(): string {
    return path.join(this.opts.dir, 'prometheus.log');
  }

  /** `http://127.0.0.1:<port>` */
  get url(): string {
    return `http://${this.address}:${this.port}`;
  }

  private get webConfig(): string {
    return path.join(path.resolve(this.opts.dir), 'web.yml');
  }

  /** Writes the web config whole, then renames it into place: Prometheus never reads half a file. */
  private writeWebConfig(): void {
    const tmp = `${this.webConfig}.tmp`;
    fs.writeFileSync(tmp, webConfigText(new Map([...this.users].map(([u, { hash }]) => [u, hash]))), { mode: 0o600 });
    fs.renameSync(tmp, this.webConfig);
  }

  private writeConfig(): string {
    const file = path.join(path.resolve(this.opts.dir), 'prometheus.yml');
    const passwordFile = path.join(path.resolve(this.opts.dir), 'admin-password');
    fs.writeFileSync(passwordFile, this.adminPassword, { mode: 0o600 });
    fs.writeFileSync(
      file,
      [
        '# SANDBOX ONLY: a Prometheus server of the a9s broker stand-in (sandbox/local-prometheus.ts)',
        'global:',
        '  scrape_interval: 5s',
        'scrape_configs:',
        '  - job_name: prometheus',
        '    basic_auth:',
        `      username: ${ADMIN}`,
        `      password_file: ${JSON.stringify(passwordFile)}`,
        '    static_configs:',
        `      - targets: [${JSON.stringify(`${this.address}:${this.portNumber}`)}]`,
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    return file;
  }

  /** GET `path` of the HTTP API as `user`; the status and the body's text. */
  async get(pathname: string, user: { username: string; password: string } = { username: ADMIN, password: this.adminPassword }, timeoutMs = 5_000) {
    const res = await fetch(`${this.url}${pathname}`, {
      headers: { authorization: `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: res.status, body: await res.text() };
  }

  /** Starts the server on a free port and waits until `/-/ready` answers 200 to `admin`. */
  async start(timeoutMs = 60_000): Promise<void> {
    if (this.running) return;
    if (this.destroyed) throw new Error(`LocalPrometheusServer ${this.opts.dir}: destroyed; make a new one`);
    fs.mkdirSync(this.opts.dir, { recursive: true, mode: 0o700 });
    const binary = this.opts.binary ?? findPrometheus();
    this.users.set(ADMIN, { hash: bcrypt.hashSync(this.adminPassword, BCRYPT_COST), password: this.adminPassword });
    this.writeWebConfig();
    for (let attempt = 1; ; attempt++) {
      this.portNumber = await freePort();
      const config = this.writeConfig();
      const stderr = this.launch(
        binary,
        [
          `--config.file=${config}`,
          `--web.config.file=${this.webConfig}`,
          `--web.listen-address=${this.address}:${this.portNumber}`,
          `--storage.tsdb.path=${path.join(path.resolve(this.opts.dir), 'data')}`,
          '--storage.tsdb.retention.time=1d',
          '--log.level=warn',
        ],
        this.opts.dir,
      );
      const end = Date.now() + timeoutMs;
      let last: string;
      for (;;) {
        if (!this.running) {
          await this.exited;
          const tail = stderr().trim().split('\n').slice(-5).join('\n');
          fs.writeFileSync(this.logFile, stderr());
          if (/address already in use/i.test(tail) && attempt < 5 && !this.destroyed) break;
          throw new Error(`prometheus on ${this.address}:${this.portNumber} exited during start-up: ${tail || '(no output)'}`);
        }
        try {
          const r = await this.get('/-/ready', undefined, 2_000);
          if (r.status === 200) {
            this.log.info({ pid: this.pid, port: this.portNumber }, 'prometheus running');
            return;
          }
          last = `HTTP ${r.status} ${r.body.trim()}`;
        } catch (e) {
          last = (e as Error).message;
        }
        if (Date.now() > end) {
          fs.writeFileSync(this.logFile, stderr());
          await this.stop();
          throw new Error(`prometheus on ${this.address}:${this.portNumber} was not ready within ${timeoutMs / 1000} s (last: ${last}); log ${this.logFile}`);
        }
        await sleep(100);
      }
    }
  }

  /** The server's version, e.g. `2.42.0+ds`. */
  async version(): Promise<string> {
    const r = await this.get('/api/v1/status/buildinfo');
    if (r.status !== 200) throw new Error(`prometheus ${this.url}: GET /api/v1/status/buildinfo: HTTP ${r.status} ${r.body.trim()}`);
    return String((JSON.parse(r.body) as { data?: { version?: string } }).data?.version ?? 'unknown');
  }

  /**
   * Adds the user `username` with `password` to the web config and waits until the server lets it in (Prometheus
   * reads the file per request, so this is at once).
   */
  async createUser(username: string, password: string): Promise<void> {
    prometheusUserName(username);
    if (typeof password !== 'string' || password.length === 0) throw new Error('Prometheus password: must be a non-empty string');
    this.users.set(username, { hash: await bcrypt.hash(password, BCRYPT_COST), password });
    this.writeWebConfig();
    await this.untilStatus({ username, password }, 200, `user ${username} let in`);
  }

  /** Removes the user `username` from the web config and waits until the server refuses it. */
  async deleteUser(username: string): Promise<void> {
    prometheusUserName(username);
    const user = this.users.get(username);
    if (!user) return;
    this.users.delete(username);
    this.writeWebConfig();
    await this.untilStatus({ username, password: user.password }, 401, `user ${username} refused`);
  }

  private async untilStatus(user: { username: string; password: string }, status: number, what: string, timeoutMs = 10_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    let last: string;
    for (;;) {
      try {
        const r = await this.get('/api/v1/status/buildinfo', user);
        if (r.status === status) return;
        last = `HTTP ${r.status}`;
      } catch (e) {
        last = (e as Error).message;
      }
      if (Date.now() > end) throw new Error(`prometheus ${this.url}: ${what}: not within ${timeoutMs / 1000} s (last: ${last})`);
      await sleep(50);
    }
  }

  /** SIGTERM, SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    await this.stopProcess(graceMs);
  }

  /** Stops the server and removes its folder; the server cannot start again. */
  async destroy(): Promise<void> {
    this.destroyed = true;
    await this.stop();
    fs.rmSync(this.opts.dir, { recursive: true, force: true });
  }
}
