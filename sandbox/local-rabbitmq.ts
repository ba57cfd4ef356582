/**
 * SANDBOX ONLY — a real RabbitMQ server (Debian's `rabbitmq-server`, RabbitMQ 3.10 on Erlang/OTP 25) for the a9s
 * broker stand-in's Messaging instances.
 *
 * Each server is its own Erlang node with its own folder (config, enabled plugins, Mnesia, logs, Erlang cookie in
 * `HOME`) and four ports the kernel hands out, all on 127.0.0.1: AMQP 0-9-1, the management plugin's HTTP API, the
 * Erlang distribution port (`inet_dist_use_interface`) and an `epmd` of its own (`ERL_EPMD_PORT`), which the server
 * starts first and ends last; the Erlang VM never starts a shared `epmd` daemon (`-start_epmd false`), so nothing
 * outlives the server and nothing listens beyond loopback. The stand-in administers the server through the HTTP API
 * as a user with a password only it knows. A binding is a user of its own (tag `management`, every permission on
 * the vhost `/`); unbinding deletes the user and closes its connections.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { Logger } from 'pino';
import { silentLogger } from '../runtime/core/logger.js';
import { freePort } from '../runtime/realinfra/cluster.js';
import { findProgram, LoopbackServerProcess } from './_loopback-server.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The Debian RabbitMQ and Erlang programs the server needs. */
export interface RabbitmqBinaries {
  /** The server script that runs in the foreground as the calling user: /usr/lib/rabbitmq/bin/rabbitmq-server (not /usr/sbin's, which switches user). */
  readonly server: string;
  /** Erlang's port mapper, e.g. /usr/bin/epmd. */
  readonly epmd: string;
}

/** The programs from the Debian package `rabbitmq-server` (and `erlang-base`, which it depends on), or an error saying what to install. */
export function findRabbitmqBinaries(): RabbitmqBinaries {
  return {
    server: findProgram(['rabbitmq-server'], 'the Debian package rabbitmq-server', ['/usr/lib/rabbitmq/bin']),
    epmd: findProgram(['epmd'], 'the Debian package erlang-base (rabbitmq-server depends on it)', ['/usr/lib/erlang/bin']),
  };
}

/** User names the server takes here: a letter, then letters, digits, `_` or `-`; at most 64 characters. */
const USER = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** `value` when it is a user name of {@link USER}'s pattern, else an error naming the field and the value. */
export function rabbitmqUserName(value: string, field = 'username'): string {
  if (typeof value !== 'string' || !USER.test(value)) {
    throw new Error(`RabbitMQ ${field}: ${JSON.stringify(value)} is not a user name here (a letter, then letters, digits, _ or -; at most 64 characters)`);
  }
  return value;
}

/** The ports of one server, all on 127.0.0.1. */
export interface RabbitmqPorts {
  readonly amqp: number;
  readonly management: number;
  readonly distribution: number;
  readonly epmd: number;
}

/** The server's `rabbitmq.conf` (new-style config). */
export function rabbitmqConfText(address: string, ports: RabbitmqPorts, admin: { username: string; password: string }): string {
  return [
    '# SANDBOX ONLY: a RabbitMQ server of the a9s broker stand-in (sandbox/local-rabbitmq.ts)',
    `listeners.tcp.1 = ${address}:${ports.amqp}`,
    'listeners.ssl = none',
    `management.tcp.ip = ${address}`,
    `management.tcp.port = ${ports.management}`,
    // the stand-in's administrator (no `guest`: it would be a second way in)
    `default_user = ${admin.username}`,
    `default_pass = ${admin.password}`,
    'default_user_tags.administrator = true',
    'default_permissions.configure = .*',
    'default_permissions.read = .*',
    'default_permissions.write = .*',
    // a sandbox machine's disk is shared: block publishers only when under 50 MB free
    'disk_free_limit.absolute = 50MB',
    'log.console = false',
    'log.file.level = warning',
    '',
  ].join('\n');
}

export interface LocalRabbitmqServerOptions {
  /** The server's own folder (config, Mnesia, logs, cookie), created by start(), removed by destroy(). */
  readonly dir: string;
  /** @default findRabbitmqBinaries() */
  readonly binaries?: RabbitmqBinaries;
  readonly logger?: Logger;
}

/** SANDBOX ONLY: one RabbitMQ node and its epmd on 127.0.0.1 (see the file comment). */
export class LocalRabbitmqServer extends LoopbackServerProcess {
  private readonly admin = { username: 'sandbox-admin', password: randomBytes(24).toString('base64url') };
  private epmd: ChildProcess | undefined;
  private ports: RabbitmqPorts | undefined;
  private destroyed = false;

  constructor(private readonly opts: LocalRabbitmqServerOptions) {
    super('rabbitmq-server', opts.logger ?? silentLogger);
  }

  /** The server's log folder. */
  get logDir(): string {
    return path.join(path.resolve(this.opts.dir), 'log');
  }

  /** The port of the management plugin's HTTP API (the AMQP port is `port`). */
  get managementPort(): number {
    return this.ports?.management ?? 0;
  }

  /** `http://127.0.0.1:<management port>/api` */
  get apiUrl(): string {
    return `http://${this.address}:${this.managementPort}/api`;
  }

  /** Every process id of the server (the script, the Erlang VM's leader) and its epmd, while they run. */
  get pids(): number[] {
    return [this.pid, this.epmd && this.epmd.exitCode === null && this.epmd.signalCode === null ? this.epmd.pid : undefined].filter(
      (p): p is number => p !== undefined,
    );
  }

  /** A request to the HTTP API as the stand-in's administrator; the status and the parsed body (undefined when empty). */
  async api(method: string, pathname: string, body?: unknown, timeoutMs = 10_000): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${this.apiUrl}${pathname}`, {
      method,
      headers: {
        authorization: `Basic ${Buffer.from(`${this.admin.username}:${this.admin.password}`).toString('base64')}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    return { status: res.status, body: parsed };
  }

  /** The same request; an error naming method, path, status and answer unless the status is 2xx. */
  private async apiOk(method: string, pathname: string, body?: unknown): Promise<unknown> {
    const r = await this.api(method, pathname, body);
    if (r.status < 200 || r.status > 299) throw new Error(`rabbitmq ${this.apiUrl}: ${method} ${pathname}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }

  private env(ports: RabbitmqPorts): Record<string, string> {
    const dir = path.resolve(this.opts.dir);
    return {
      HOME: dir, // the Erlang cookie
      RABBITMQ_NODENAME: 'rabbit@localhost',
      RABBITMQ_CONFIG_FILE: path.join(dir, 'rabbitmq'), // .conf appended
      RABBITMQ_ENABLED_PLUGINS_FILE: path.join(dir, 'enabled_plugins'),
      RABBITMQ_MNESIA_BASE: path.join(dir, 'mnesia'),
      RABBITMQ_LOG_BASE: this.logDir,
      RABBITMQ_PID_FILE: path.join(dir, 'rabbitmq.pid'),
      RABBITMQ_DIST_PORT: String(ports.distribution),
      ERL_EPMD_PORT: String(ports.epmd),
      ERL_EPMD_ADDRESS: this.address,
      RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: `-start_epmd false -kernel inet_dist_use_interface {${this.address.split('.').join(',')}}`,
      RABBITMQ_CTL_ERL_ARGS: '-start_epmd false',
    };
  }

  /** Starts this server's epmd on `port` and waits until it accepts connections. */
  private async startEpmd(binary: string, port: number, timeoutMs: number): Promise<void> {
    const child = spawn(binary, ['-address', this.address, '-port', String(port)], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { PATH: process.env['PATH'] ?? '' },
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.on('error', (e) => (stderr += e.message));
    this.epmd = child;
    const end = Date.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`epmd on ${this.address}:${port} exited: ${stderr.trim() || '(no output)'}`);
      const open = await new Promise<boolean>((resolve) => {
        const s = net.connect({ host: this.address, port }, () => (s.destroy(), resolve(true)));
        s.on('error', () => resolve(false));
      });
      if (open) return;
      if (Date.now() > end) throw new Error(`epmd on ${this.address}:${port} did not accept connections within ${timeoutMs / 1000} s`);
      await sleep(50);
    }
  }

  private async stopEpmd(): Promise<void> {
    const child = this.epmd;
    this.epmd = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    await gone;
  }

  /** The end of the server's log files (start-up errors), for error messages. */
  private logTail(lines = 8): string {
    if (!fs.existsSync(this.logDir)) return '';
    return fs
      .readdirSync(this.logDir)
      .filter((f) => f.endsWith('.log'))
      .map((f) => fs.readFileSync(path.join(this.logDir, f), 'utf8').trim().split('\n').slice(-lines).join('\n'))
      .filter(Boolean)
      .join('\n');
  }

  /**
   * Starts epmd and the server on free ports and waits until the HTTP API answers the administrator and the AMQP
   * port accepts connections (RabbitMQ opens it once the node has booted).
   */
  async start(timeoutMs = 120_000): Promise<void> {
    if (this.running) return;
    if (this.destroyed) throw new Error(`LocalRabbitmqServer ${this.opts.dir}: destroyed; make a new one`);
    const b = this.opts.binaries ?? findRabbitmqBinaries();
    const dir = path.resolve(this.opts.dir);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    for (let attempt = 1; ; attempt++) {
      const ports: RabbitmqPorts = { amqp: await freePort(), management: await freePort(), distribution: await freePort(), epmd: await freePort() };
      this.ports = ports;
      this.portNumber = ports.amqp;
      fs.writeFileSync(path.join(dir, 'rabbitmq.conf'), rabbitmqConfText(this.address, ports, this.admin), { mode: 0o600 });
      fs.writeFileSync(path.join(dir, 'enabled_plugins'), '[rabbitmq_management].\n', { mode: 0o600 });
      const end = Date.now() + timeoutMs;
      try {
        await this.startEpmd(b.epmd, ports.epmd, Math.min(timeoutMs, 10_000));
      } catch (e) {
        await this.stopEpmd();
        if (attempt < 5 && !this.destroyed && /exited/.test((e as Error).message)) continue; // its port was taken meanwhile
        throw e;
      }
      const stderr = this.launch(b.server, [], dir, { env: this.env(ports), group: true });
      let last: string;
      for (;;) {
        if (!this.running) {
          await this.stop();
          const tail = `${stderr().trim()}\n${this.logTail()}`.trim();
          if (/eaddrinuse/i.test(tail) && attempt < 5 && !this.destroyed) break;
          throw new Error(
            `rabbitmq-server on ${this.address}:${ports.amqp} exited during start-up; its output and the end of ${this.logDir}:\n${tail || '(empty)'}`,
          );
        }
        try {
          const r = await this.api('GET', '/overview', undefined, 2_000);
          if (r.status === 200) {
            await new Promise<void>((resolve, reject) => {
              const s = net.connect({ host: this.address, port: ports.amqp }, () => (s.destroy(), resolve()));
              s.on('error', reject);
            });
            this.log.info({ pid: this.pid, port: ports.amqp, management: ports.management }, 'rabbitmq-server running');
            return;
          }
          last = `HTTP ${r.status}`;
        } catch (e) {
          last = (e as Error).message;
        }
        if (Date.now() > end) {
          await this.stop();
          throw new Error(
            `rabbitmq-server on ${this.address}:${ports.amqp} was not ready within ${timeoutMs / 1000} s (last: ${last}); the end of ${this.logDir}:\n${this.logTail() || '(empty)'}`,
          );
        }
        await sleep(250);
      }
    }
  }

  /** The server's version, e.g. `3.10.8`. */
  async version(): Promise<string> {
    const o = (await this.apiOk('GET', '/overview')) as { rabbitmq_version?: string };
    return o.rabbitmq_version ?? 'unknown';
  }

  /** Creates the user `username` with `password`, tag `management`, every permission on the vhost `/`. */
  async createUser(username: string, password: string): Promise<void> {
    const u = encodeURIComponent(rabbitmqUserName(username));
    if (typeof password !== 'string' || password.length === 0) throw new Error('RabbitMQ password: must be a non-empty string');
    await this.apiOk('PUT', `/users/${u}`, { password, tags: 'management' });
    await this.apiOk('PUT', `/permissions/%2F/${u}`, { configure: '.*', write: '.*', read: '.*' });
  }

  /**
   * Deletes the user `username` and closes its connections. Deleting a user alone leaves its connections open, and
   * the API closes a user's connections only while the user exists: so first a password nobody knows (no new
   * login), then the connections, then the user.
   */
  async deleteUser(username: string): Promise<void> {
    const u = encodeURIComponent(rabbitmqUserName(username));
    const locked = await this.api('PUT', `/users/${u}`, { password: randomBytes(24).toString('base64url'), tags: '' });
    if (locked.status === 404) return;
    if (locked.status !== 204 && locked.status !== 201)
      throw new Error(`rabbitmq ${this.apiUrl}: PUT /users/${u}: HTTP ${locked.status} ${JSON.stringify(locked.body)}`);
    await this.apiOk('DELETE', `/connections/username/${u}`);
    await this.apiOk('DELETE', `/users/${u}`);
  }

  /** SIGTERM to the server's process group (the Erlang VM shuts down in seconds), SIGKILL after `graceMs`; then its epmd. */
  async stop(graceMs = 30_000): Promise<void> {
    await this.stopProcess(graceMs);
    await this.stopEpmd();
  }

  /** Stops the server and removes its folder; the server cannot start again. */
  async destroy(): Promise<void> {
    this.destroyed = true;
    await this.stop();
    fs.rmSync(this.opts.dir, { recursive: true, force: true });
  }
}
