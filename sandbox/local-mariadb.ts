/**
 * SANDBOX ONLY — a real MariaDB server (Debian's `mariadb-server-core`, MariaDB 10.11) for the a9s broker stand-in's
 * MariaDB instances, and a small client for it over the `mariadb` command-line client (no npm dependency).
 *
 * Each server has its own folder (config, data, log, Unix socket): `mariadb-install-db` initialises the data
 * without networking and with `root@localhost` reachable only through the Unix socket by the system user root
 * (`unix_socket` authentication); `mariadbd` then runs as root (`--user=root`) on 127.0.0.1 only, on a port of its
 * own (one the kernel hands out), without name resolution, binary log, performance schema, and with small InnoDB
 * buffers so that it starts in well under a second. The stand-in administers it as root over the socket. A
 * binding is a user of its own (`'name'@'%'`) with a generated password and every privilege on one database;
 * unbinding drops the user and ends its connections.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Logger } from 'pino';
import { silentLogger } from '../runtime/core/logger.js';
import { freePort } from '../runtime/realinfra/cluster.js';
import { findProgram, liveMembers, LoopbackServerProcess } from './_loopback-server.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The Debian MariaDB programs the server needs. */
export interface MariadbBinaries {
  /** The server, e.g. /usr/sbin/mariadbd. */
  readonly mariadbd: string;
  /** Initialises a data folder, e.g. /usr/bin/mariadb-install-db. */
  readonly installDb: string;
  /** The command-line client, e.g. /usr/bin/mariadb. */
  readonly client: string;
}

/** `mariadbd`, `mariadb-install-db` and `mariadb` from PATH, /usr/sbin or /usr/bin (Debian packages `mariadb-server-core`, `mariadb-client-core`), or an error saying what to install. */
export function findMariadbBinaries(): MariadbBinaries {
  const install = 'the Debian packages mariadb-server-core and mariadb-client-core';
  return { mariadbd: findProgram(['mariadbd'], install), installDb: findProgram(['mariadb-install-db'], install), client: findProgram(['mariadb'], install) };
}

// ---- SQL text -----------------------------------------------------------------------------------

/** User and database names the server accepts here: a letter, then letters, digits and `_` (MariaDB's limits: user 80, database 64 characters). */
const NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** `value` when it is a user name of {@link NAME}'s pattern and at most 80 characters, else an error naming the field and the value. */
export function mariadbUserName(value: string, field = 'username'): string {
  if (typeof value !== 'string' || !NAME.test(value) || value.length > 80) {
    throw new Error(`MariaDB ${field}: ${JSON.stringify(value)} is not a user name here (a letter, then letters, digits or _; at most 80 characters)`);
  }
  return value;
}

/** `value` when it is a database name of {@link NAME}'s pattern and at most 64 characters, else an error naming the field and the value. */
export function mariadbDatabaseName(value: string, field = 'database'): string {
  if (typeof value !== 'string' || !NAME.test(value) || value.length > 64) {
    throw new Error(`MariaDB ${field}: ${JSON.stringify(value)} is not a database name here (a letter, then letters, digits or _; at most 64 characters)`);
  }
  return value;
}

/**
 * The `mysql_native_password` hash of `password` (`*` and the upper-case hex of SHA1(SHA1(password))), what
 * `CREATE USER … IDENTIFIED BY PASSWORD '<hash>'` takes: the password itself never appears in SQL text, so no
 * character of it needs escaping.
 */
export function nativePasswordHash(password: string): string {
  if (typeof password !== 'string' || password.length === 0) throw new Error('MariaDB password: must be a non-empty string');
  const once = createHash('sha1').update(password, 'utf8').digest();
  return `*${createHash('sha1').update(once).digest('hex').toUpperCase()}`;
}

/** A user `'name'@'%'` with `password` and every privilege on `database` (and nothing else): the SQL statements. */
export function createUserSql(username: string, password: string, database: string): string[] {
  const user = `'${mariadbUserName(username)}'@'%'`;
  return [
    `CREATE USER ${user} IDENTIFIED BY PASSWORD '${nativePasswordHash(password)}'`,
    `GRANT ALL PRIVILEGES ON \`${mariadbDatabaseName(database)}\`.* TO ${user}`,
  ];
}

/** Drops the user `'name'@'%'` (when it exists) and ends its connections: the SQL statements. */
export function dropUserSql(username: string): string[] {
  const name = mariadbUserName(username);
  return [`DROP USER IF EXISTS '${name}'@'%'`, `KILL USER '${name}'`];
}

// ---- the command-line client --------------------------------------------------------------------

/** Where and as whom the client connects: over TCP (`host`, `port`) or a Unix socket (`socket`, as the system user). */
export interface MariadbConnection {
  readonly host?: string;
  readonly port?: number;
  readonly socket?: string;
  readonly user: string;
  readonly password?: string;
  readonly database?: string;
}

/** The client failed: its exit code and what it printed (e.g. `ERROR 1045 (28000): Access denied for user …`). */
export class MariadbClientError extends Error {
  constructor(
    message: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(message);
    this.name = 'MariadbClientError';
  }
}

/**
 * Runs `sql` (statements separated by `;`) with the `mariadb` client (`client`, default from
 * {@link findMariadbBinaries}) over TCP or the socket of `conn`; the rows of the result sets, each a list of
 * column values (batch mode, no column names). The password goes through the environment (`MYSQL_PWD`), not the
 * command line; no option file is read. A failure throws {@link MariadbClientError} with the client's message.
 */
export function mariadbQuery(conn: MariadbConnection, sql: string, opts: { client?: string; timeoutMs?: number } = {}): Promise<string[][]> {
  const client = opts.client ?? findMariadbBinaries().client;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const where = conn.socket ? `socket ${conn.socket}` : `${conn.host}:${conn.port}`;
  const args = ['--no-defaults', '--batch', '--skip-column-names', `--connect-timeout=${Math.max(1, Math.ceil(timeoutMs / 1000))}`, `--user=${conn.user}`];
  if (conn.socket) args.push('--protocol=socket', `--socket=${conn.socket}`);
  else {
    if (!conn.host || !conn.port) throw new Error('mariadbQuery: give host and port, or socket');
    args.push('--protocol=tcp', `--host=${conn.host}`, `--port=${conn.port}`);
  }
  if (conn.database) args.push(`--database=${conn.database}`);
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...(conn.password !== undefined ? { MYSQL_PWD: conn.password } : {}) };
    const child = spawn(client, args, { stdio: ['pipe', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      err += `no answer within ${timeoutMs / 1000} s`;
    }, timeoutMs);
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new MariadbClientError(`mariadb client (${client}) on ${where} as ${conn.user}: ${e.message}`, null, err));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0)
        resolve(
          out === ''
            ? []
            : out
                .replace(/\n$/, '')
                .split('\n')
                .map((l) => l.split('\t')),
        );
      else {
        // the client's ERROR lines (it also echoes the failed statement around them); all of it when there are none
        const said =
          err
            .split('\n')
            .filter((l) => /^ERROR /.test(l))
            .join('\n') || err.trim();
        reject(new MariadbClientError(`mariadb client on ${where} as ${conn.user}: ${said || `exit code ${code}`}`, code, err));
      }
    });
    child.stdin.on('error', () => undefined); // a client that ends early (cannot connect) closes its stdin
    child.stdin.end(sql.trim().endsWith(';') ? `${sql}\n` : `${sql};\n`);
  });
}

// ---- the server ---------------------------------------------------------------------------------

export interface LocalMariadbServerOptions {
  /** The server's own folder (config, data, log, socket), created by start(), removed by destroy(). */
  readonly dir: string;
  /** @default findMariadbBinaries() */
  readonly binaries?: MariadbBinaries;
  readonly logger?: Logger;
}

/** The longest Unix socket path Linux takes (sun_path is 108 bytes, with its terminating NUL). */
const MAX_SOCKET_PATH = 107;

/** The last `n` lines of `file` after its first `from` bytes, trimmed ('' when there is no file). */
const tailOf = (file: string, from: number, n = 8) =>
  fs.existsSync(file) ? fs.readFileSync(file).subarray(from).toString('utf8').trim().split('\n').slice(-n).join('\n') : '';

/** SANDBOX ONLY: one mariadbd process on 127.0.0.1 (see the file comment). */
export class LocalMariadbServer extends LoopbackServerProcess {
  private installer: ChildProcess | undefined;
  private destroyed = false;
  private binaries: MariadbBinaries | undefined;

  constructor(private readonly opts: LocalMariadbServerOptions) {
    super('mariadbd', opts.logger ?? silentLogger);
    if (Buffer.byteLength(this.socket) > MAX_SOCKET_PATH) {
      throw new Error(
        `LocalMariadbServerOptions.dir: ${JSON.stringify(opts.dir)} is too long for the server's Unix socket ${this.socket} (${Buffer.byteLength(this.socket)} bytes, at most ${MAX_SOCKET_PATH})`,
      );
    }
  }

  /** The server's error log (start-up and shut-down notes, errors). */
  get logFile(): string {
    return path.join(this.opts.dir, 'mariadbd.err');
  }

  /** The Unix socket the stand-in administers the server through (as root). */
  get socket(): string {
    return path.join(path.resolve(this.opts.dir), 'mariadbd.sock');
  }

  private get dataDir(): string {
    return path.join(path.resolve(this.opts.dir), 'data');
  }

  private get configFile(): string {
    return path.join(path.resolve(this.opts.dir), 'my.cnf');
  }

  private writeConfig(): void {
    const dir = path.resolve(this.opts.dir);
    fs.writeFileSync(
      this.configFile,
      [
        '# SANDBOX ONLY: a MariaDB server of the a9s broker stand-in (sandbox/local-mariadb.ts)',
        '[mariadbd]',
        'user = root',
        `datadir = ${this.dataDir}`,
        `socket = ${this.socket}`,
        `pid-file = ${path.join(dir, 'mariadbd.pid')}`,
        `log-error = ${this.logFile}`,
        `tmpdir = ${path.join(dir, 'tmp')}`,
        `bind-address = ${this.address}`,
        `port = ${this.portNumber}`,
        'skip-name-resolve',
        'skip-log-bin',
        'performance_schema = OFF',
        'innodb_buffer_pool_size = 8M',
        'innodb_log_file_size = 4M',
        'innodb_temp_data_file_path = ibtmp1:1M:autoextend',
        'key_buffer_size = 1M',
        'max_connections = 100',
        'table_open_cache = 400',
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
  }

  /** Initialises the data folder with `mariadb-install-db` (once per folder; its bootstrap server opens no network port). */
  private async initialise(b: MariadbBinaries, timeoutMs: number): Promise<void> {
    if (fs.existsSync(path.join(this.dataDir, 'mysql'))) return;
    const out = path.join(this.opts.dir, 'install-db.log');
    const fd = fs.openSync(out, 'w', 0o600);
    let child: ChildProcess;
    try {
      // its own process group: a timeout ends the bootstrap mariadbd it starts as well
      child = spawn(
        b.installDb,
        [
          `--defaults-file=${this.configFile}`,
          '--user=root',
          `--datadir=${this.dataDir}`,
          '--auth-root-authentication-method=socket',
          '--skip-test-db',
          '--skip-name-resolve',
        ],
        { cwd: this.opts.dir, stdio: ['ignore', fd, fd], detached: true, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' } },
      );
    } finally {
      fs.closeSync(fd);
    }
    this.installer = child;
    const t0 = Date.now();
    try {
      const code = await new Promise<number | string>((resolve) => {
        const timer = setTimeout(() => {
          try {
            if (child.pid) process.kill(-child.pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }, timeoutMs);
        child.once('error', (e) => {
          clearTimeout(timer);
          resolve(e.message);
        });
        child.once('exit', (c, sig) => {
          clearTimeout(timer);
          resolve(c ?? `signal ${sig}`);
        });
      });
      if (code !== 0) {
        fs.rmSync(this.dataDir, { recursive: true, force: true }); // half a data folder: the next start() initialises anew
        throw new Error(
          `mariadb-install-db (${b.installDb}) for ${this.dataDir} failed (${code}${Date.now() - t0 >= timeoutMs ? `, ended after ${timeoutMs / 1000} s` : ''}): ${tailOf(out, 0) || `see ${out}`}`,
        );
      }
    } finally {
      this.installer = undefined;
    }
    this.log.info({ dataDir: this.dataDir, ms: Date.now() - t0 }, 'mariadb data folder initialised');
  }

  /** Initialises the data folder when new, starts the server on a free port and waits until root's `SELECT 1` over the socket answers. */
  async start(timeoutMs = 60_000): Promise<void> {
    if (this.running) return;
    if (this.destroyed) throw new Error(`LocalMariadbServer ${this.opts.dir}: destroyed; make a new one`);
    fs.mkdirSync(this.opts.dir, { recursive: true, mode: 0o700 });
    fs.mkdirSync(path.join(this.opts.dir, 'tmp'), { recursive: true, mode: 0o700 });
    const b = (this.binaries ??= this.opts.binaries ?? findMariadbBinaries());
    this.writeConfig();
    await this.initialise(b, timeoutMs);
    for (let attempt = 1; ; attempt++) {
      this.portNumber = await freePort();
      if (this.destroyed) throw new Error(`LocalMariadbServer ${this.opts.dir}: destroyed while starting`);
      this.writeConfig();
      const logStart = fs.existsSync(this.logFile) ? fs.statSync(this.logFile).size : 0;
      // --defaults-file must come first; nothing else is read (no /etc/mysql)
      const stderr = this.launch(b.mariadbd, [`--defaults-file=${this.configFile}`], this.opts.dir);
      const end = Date.now() + timeoutMs;
      let last: string;
      for (;;) {
        if (!this.running) {
          await this.exited;
          const tail = `${stderr().trim()}\n${tailOf(this.logFile, logStart)}`.trim();
          if (/Address already in use|Bind on TCP\/IP port/i.test(tail) && attempt < 5 && !this.destroyed) break;
          throw new Error(`mariadbd on ${this.address}:${this.portNumber} exited during start-up; the end of ${this.logFile}:\n${tail || '(empty)'}`);
        }
        try {
          await this.admin('SELECT 1', 2_000);
          this.log.info({ pid: this.pid, port: this.portNumber }, 'mariadbd running');
          return;
        } catch (e) {
          last = (e as Error).message;
        }
        if (Date.now() > end) {
          await this.stop();
          throw new Error(
            `mariadbd on ${this.address}:${this.portNumber} did not answer on ${this.socket} within ${timeoutMs / 1000} s (last: ${last}); the end of ${this.logFile}:\n${tailOf(this.logFile, logStart) || '(empty)'}`,
          );
        }
        await sleep(100);
      }
    }
  }

  /** Runs `sql` as root over the Unix socket; the rows of its result sets. */
  admin(sql: string, timeoutMs = 10_000): Promise<string[][]> {
    return mariadbQuery({ socket: this.socket, user: 'root' }, sql, {
      client: (this.binaries ??= this.opts.binaries ?? findMariadbBinaries()).client,
      timeoutMs,
    });
  }

  /** The server's version, e.g. `10.11.19` (without the distribution's suffix). */
  async version(): Promise<string> {
    const [[v] = []] = await this.admin('SELECT VERSION()');
    return (v ?? 'unknown').split('-')[0]!;
  }

  /** Creates the database `name` (when it does not exist). */
  async createDatabase(name: string): Promise<void> {
    await this.admin(`CREATE DATABASE IF NOT EXISTS \`${mariadbDatabaseName(name)}\``);
  }

  /** Creates the user `'username'@'%'` with `password` and every privilege on `database` only. */
  async createUser(username: string, password: string, database: string): Promise<void> {
    await this.admin(createUserSql(username, password, database).join(';\n'));
  }

  /** Drops the user `'username'@'%'` and ends its connections. */
  async deleteUser(username: string): Promise<void> {
    await this.admin(dropUserSql(username).join(';\n'));
  }

  /** SIGTERM (a clean shut-down), SIGKILL after `graceMs`; also ends a data-folder initialisation under way. */
  async stop(graceMs = 15_000): Promise<void> {
    const installer = this.installer;
    if (installer?.pid && installer.exitCode === null && installer.signalCode === null) {
      const gone = new Promise<void>((r) => installer.once('exit', () => r()));
      const killGroup = () => {
        try {
          process.kill(-installer.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
      };
      killGroup();
      await gone;
      // a subshell the script forked while the signal went out escapes it: signal the group until it is empty
      for (let i = 0; i < 100 && liveMembers(installer.pid) > 0; i++) {
        killGroup();
        await sleep(20);
      }
    }
    await this.stopProcess(graceMs);
  }

  /** Stops the server and removes its folder; the server cannot start again. */
  async destroy(): Promise<void> {
    this.destroyed = true;
    await this.stop();
    fs.rmSync(this.opts.dir, { recursive: true, force: true });
  }
}
