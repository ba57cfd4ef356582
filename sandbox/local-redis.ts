/**
 * SANDBOX ONLY — a real Redis server (Debian's `redis-server`, Redis 7.0: the protocol and ACLs Valkey forked from)
 * for the a9s broker stand-in's KeyValue instances, and a small RESP client for it.
 *
 * Each server listens on 127.0.0.1 only, on a port of its own (one the kernel hands out), with its own folder
 * (config, log; no persistence), no Unix socket, and the `default` user behind a password only the stand-in
 * knows. A binding is an ACL user of its own with a generated password; unbinding deletes it (Redis then drops
 * its connections).
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { Logger } from 'pino';
import { silentLogger } from '../runtime/core/logger.js';
import { freePort } from '../runtime/realinfra/cluster.js';
import { findProgram, LoopbackServerProcess } from './_loopback-server.js';

/** A RESP reply: simple string / bulk string (null when absent), integer, array, or an error reply. */
export type RespReply = string | number | null | RespError | RespReply[];
export class RespError extends Error {}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Parses one reply at `at`; undefined while the buffer holds only part of it. */
function parseReply(buf: Buffer, at: number): { value: RespReply; next: number } | undefined {
  const eol = buf.indexOf('\r\n', at);
  if (eol < 0) return undefined;
  const line = buf.toString('utf8', at + 1, eol);
  const next = eol + 2;
  switch (String.fromCharCode(buf[at]!)) {
    case '+':
      return { value: line, next };
    case '-':
      return { value: new RespError(line), next };
    case ':':
      return { value: Number(line), next };
    case '$': {
      const n = Number(line);
      if (n < 0) return { value: null, next };
      if (buf.length < next + n + 2) return undefined;
      return { value: buf.toString('utf8', next, next + n), next: next + n + 2 };
    }
    case '*': {
      const n = Number(line);
      if (n < 0) return { value: null, next };
      const items: RespReply[] = [];
      let p = next;
      for (let i = 0; i < n; i++) {
        const r = parseReply(buf, p);
        if (!r) return undefined;
        items.push(r.value);
        p = r.next;
      }
      return { value: items, next: p };
    }
    default:
      throw new Error(`RESP: unexpected reply type ${JSON.stringify(String.fromCharCode(buf[at]!))}`);
  }
}

const encode = (args: readonly string[]) => `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;

/**
 * Opens a connection to `host:port`, sends `commands` (each an argument list, e.g. `['AUTH', user, password]`),
 * returns their replies in order (error replies as `RespError` values, not thrown) and closes the connection.
 */
export function respCommands(host: string, port: number, commands: ReadonlyArray<readonly string[]>, timeoutMs = 10_000): Promise<RespReply[]> {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host, port });
    let buf = Buffer.alloc(0);
    const replies: RespReply[] = [];
    const done = (e?: Error) => {
      clearTimeout(timer);
      sock.destroy();
      if (e) reject(e);
      else resolve(replies);
    };
    const timer = setTimeout(() => done(new Error(`RESP ${host}:${port}: no complete answer within ${timeoutMs / 1000} s`)), timeoutMs);
    sock.on('connect', () => sock.write(commands.map(encode).join('')));
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      try {
        for (;;) {
          if (buf.length === 0) break;
          const r = parseReply(buf, 0);
          if (!r) break;
          replies.push(r.value);
          buf = buf.subarray(r.next);
        }
      } catch (e) {
        done(e as Error);
        return;
      }
      if (replies.length >= commands.length) done();
    });
    sock.on('error', (e) => done(e));
    sock.on('close', () => {
      if (replies.length < commands.length)
        done(new Error(`RESP ${host}:${port}: the connection closed after ${replies.length} of ${commands.length} replies`));
    });
  });
}

/** `redis-server` from PATH (Debian package `redis-server`), or an error saying what to install. */
export function findRedisServer(): string {
  return findProgram(['redis-server'], 'the Debian package redis-server');
}

export interface LocalRedisServerOptions {
  /** The server's own folder (config and log), created by start(), removed by destroy(). */
  readonly dir: string;
  /** @default findRedisServer() */
  readonly binary?: string;
  readonly logger?: Logger;
}

/** SANDBOX ONLY: one redis-server process on 127.0.0.1 (see the file comment). */
export class LocalRedisServer extends LoopbackServerProcess {
  /** The `default` user's password (the stand-in's administration). */
  private readonly adminPassword = randomBytes(24).toString('base64url');

  constructor(private readonly opts: LocalRedisServerOptions) {
    super('redis-server', opts.logger ?? silentLogger);
  }

  get logFile(): string {
    return path.join(this.opts.dir, 'redis.log');
  }

  /** Starts the server on a free port and waits until it answers PING as `default`. */
  async start(timeoutMs = 30_000): Promise<void> {
    if (this.running) return;
    fs.mkdirSync(this.opts.dir, { recursive: true, mode: 0o700 });
    const binary = this.opts.binary ?? findRedisServer();
    for (let attempt = 1; ; attempt++) {
      this.portNumber = await freePort();
      const conf = path.join(this.opts.dir, 'redis.conf');
      fs.writeFileSync(
        conf,
        [
          `bind ${this.address}`,
          `port ${this.portNumber}`,
          'protected-mode yes',
          'daemonize no',
          'unixsocket ""',
          `dir ${this.opts.dir}`,
          `logfile ${this.logFile}`,
          'save ""',
          'appendonly no',
          `requirepass ${this.adminPassword}`,
          '',
        ].join('\n'),
        { mode: 0o600 },
      );
      const logStart = fs.existsSync(this.logFile) ? fs.statSync(this.logFile).size : 0;
      const stderr = this.launch(binary, [conf], this.opts.dir);
      const end = Date.now() + timeoutMs;
      let last: string;
      for (;;) {
        if (!this.running) {
          await this.exited;
          const tail = `${stderr()}${fs.existsSync(this.logFile) ? fs.readFileSync(this.logFile, 'utf8').slice(logStart) : ''}`
            .trim()
            .split('\n')
            .slice(-5)
            .join('\n');
          if (/Address already in use/i.test(tail) && attempt < 5) break;
          throw new Error(`redis-server on ${this.address}:${this.portNumber} exited during start-up: ${tail || `see ${this.logFile}`}`);
        }
        try {
          const [pong] = await this.admin([['PING']], 2_000);
          if (pong === 'PONG') {
            this.log.info({ pid: this.pid, port: this.portNumber }, 'redis-server running');
            return;
          }
          last = String(pong instanceof Error ? pong.message : pong);
        } catch (e) {
          last = (e as Error).message;
        }
        if (Date.now() > end) {
          await this.stop();
          throw new Error(
            `redis-server on ${this.address}:${this.portNumber} did not answer PING within ${timeoutMs / 1000} s (last: ${last}); log ${this.logFile}`,
          );
        }
        await sleep(100);
      }
    }
  }

  /** Runs `commands` as the `default` user (AUTH first); returns their replies (without AUTH's). */
  async admin(commands: ReadonlyArray<readonly string[]>, timeoutMs = 10_000): Promise<RespReply[]> {
    const [auth, ...replies] = await respCommands(this.address, this.portNumber, [['AUTH', 'default', this.adminPassword], ...commands], timeoutMs);
    if (auth instanceof RespError) throw new Error(`redis-server ${this.address}:${this.portNumber}: AUTH as default: ${auth.message}`);
    return replies;
  }

  /** The server's version, e.g. `7.0.15` (`INFO server`). */
  async version(): Promise<string> {
    const [info] = await this.admin([['INFO', 'server']]);
    return /redis_version:(\S+)/.exec(String(info))?.[1] ?? 'unknown';
  }

  /** Creates the ACL user `username` with `password` and every command outside @admin and @dangerous, on every key and channel. */
  async createUser(username: string, password: string): Promise<void> {
    const [r] = await this.admin([['ACL', 'SETUSER', username, 'reset', 'on', `>${password}`, '~*', '&*', '+@all', '-@admin', '-@dangerous']]);
    if (r !== 'OK') throw new Error(`redis-server ${this.address}:${this.port}: ACL SETUSER ${username}: ${r instanceof Error ? r.message : String(r)}`);
  }

  /** Deletes the ACL user `username` (its connections are closed by the server). */
  async deleteUser(username: string): Promise<void> {
    const [r] = await this.admin([['ACL', 'DELUSER', username]]);
    if (r instanceof Error) throw new Error(`redis-server ${this.address}:${this.port}: ACL DELUSER ${username}: ${r.message}`);
  }

  /** SIGTERM, SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    await this.stopProcess(graceMs);
  }

  /** Stops the server and removes its folder. */
  async destroy(): Promise<void> {
    await this.stop();
    fs.rmSync(this.opts.dir, { recursive: true, force: true });
  }
}
