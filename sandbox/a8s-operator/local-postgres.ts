/**
 * One real PostgreSQL server (Debian's `postgresql` package) run as a local process for the sandbox a8s
 * operator: `initdb` into its own folder, listening on one loopback address only (no Unix socket), password
 * (SCRAM) authentication from 127.0.0.0/8 only. PostgreSQL refuses to run as root: when this process is root the
 * server runs as the `postgres` system user the Debian package creates.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import pg from 'pg';
import type { Logger } from 'pino';
import { silentLogger } from '../../runtime/core/logger.js';
import { renderSettings, type ServerPlan } from './server-settings.js';

export interface PostgresBinaries {
  /** Folder with `postgres` and `initdb`. */
  readonly binDir: string;
  /** Major version (e.g. 15). */
  readonly major: number;
}

/** Debian's layout: /usr/lib/postgresql/<major>/bin; the newest major wins. */
export function findPostgresBinaries(root = '/usr/lib/postgresql'): PostgresBinaries {
  const majors = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((d) => /^\d+$/.test(d) && fs.existsSync(path.join(root, d, 'bin', 'postgres')) && fs.existsSync(path.join(root, d, 'bin', 'initdb')))
        .map(Number)
        .sort((a, b) => b - a)
    : [];
  if (!majors.length) {
    throw new Error(
      `sandbox a8s operator: no PostgreSQL server binaries under ${root}/<major>/bin; install Debian's postgresql package (apt-get install -y postgresql)`,
    );
  }
  return { binDir: path.join(root, String(majors[0]), 'bin'), major: majors[0]! };
}

export interface ServerUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/** The user the servers run as: this process's user, or `postgres` when this process is root. */
export function serverUser(name = 'postgres'): ServerUser | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
    return { name, uid, gid };
  } catch {
    throw new Error(
      `sandbox a8s operator: running as root, and PostgreSQL refuses to run as root, but there is no user ${JSON.stringify(name)} to run it as; install Debian's postgresql package (it creates that user)`,
    );
  }
}

/** Fails with a clear message when `user` cannot reach `dir` (e.g. a folder under /root, mode 700). */
export function assertReachable(dir: string, user: ServerUser | undefined, what: string): void {
  if (!user) return;
  let d = path.resolve(dir);
  for (;;) {
    const st = fs.statSync(d);
    const x = st.uid === user.uid ? 0o100 : st.gid === user.gid ? 0o010 : 0o001;
    if (!(st.mode & x)) {
      throw new Error(
        `${what} ${dir}: the PostgreSQL servers run as user ${user.name} (uid ${user.uid}), who cannot enter ${d} (mode ${(st.mode & 0o777).toString(8)}); pick a folder outside it`,
      );
    }
    const up = path.dirname(d);
    if (up === d) return;
    d = up;
  }
}

export interface ServerExit {
  readonly pid: number;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly at: Date;
}

export interface LocalPostgresOptions {
  /** The instance's own folder (created; holds `data/`, `server.log`, the superuser password). */
  readonly dir: string;
  readonly address: string;
  readonly port: number;
  readonly binaries: PostgresBinaries;
  /** @default this process's user */
  readonly user?: ServerUser;
  readonly logger?: Logger;
  /** Called when the server process exits without stop() having been asked. */
  readonly onUnexpectedExit?: (e: ServerExit) => void;
}

export class AddressInUseError extends Error {}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class LocalPostgresServer {
  readonly dir: string;
  readonly dataDir: string;
  readonly logFile: string;
  private readonly pwFile: string;
  private child: ChildProcess | undefined;
  private stopping = false;
  private exited: Promise<void> | undefined;
  private readonly log: Logger;
  private appliedSettings: Record<string, string> = {};

  constructor(private readonly opts: LocalPostgresOptions) {
    this.dir = opts.dir;
    this.dataDir = path.join(opts.dir, 'data');
    this.logFile = path.join(opts.dir, 'server.log');
    this.pwFile = path.join(opts.dir, 'superuser-password');
    this.log = (opts.logger ?? silentLogger).child({ server: opts.address });
  }

  get address(): string {
    return this.opts.address;
  }
  get port(): number {
    return this.opts.port;
  }
  get pid(): number | undefined {
    return this.running ? this.child!.pid : undefined;
  }
  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }
  /** The settings the running server was started or reloaded with. */
  get settings(): Readonly<Record<string, string>> {
    return this.appliedSettings;
  }

  private get idOpts(): { uid?: number; gid?: number } {
    return this.opts.user ? { uid: this.opts.user.uid, gid: this.opts.user.gid } : {};
  }

  private superuserPassword(): string {
    return fs.readFileSync(this.pwFile, 'utf8').trim();
  }

  /**
   * Copies an initdb'd, never started folder (`template.dataDir`, see init()) instead of running initdb again;
   * the superuser password is replaced by a new one at the first start.
   */
  async initFrom(template: LocalPostgresServer): Promise<void> {
    if (fs.existsSync(path.join(this.dataDir, 'PG_VERSION'))) return;
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const u = this.opts.user;
    if (u) fs.chownSync(this.dir, u.uid, u.gid);
    await new Promise<void>((resolve, reject) => {
      const c = spawn('cp', ['-a', template.dataDir, this.dataDir], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      c.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      c.on('error', reject);
      c.on('close', (code) =>
        code === 0 ? resolve() : reject(new Error(`copying ${template.dataDir} to ${this.dataDir} failed (exit ${code}): ${err.trim()}`)),
      );
    });
    fs.copyFileSync(template.pwFile, this.pwFile);
    fs.writeFileSync(path.join(this.dir, '.rotate-superuser-password'), '');
  }

  /** initdb once (a no-op when the data folder exists). */
  async init(): Promise<void> {
    if (fs.existsSync(path.join(this.dataDir, 'PG_VERSION'))) return;
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const u = this.opts.user;
    if (u) fs.chownSync(this.dir, u.uid, u.gid);
    const password = randomBytes(24).toString('base64url');
    fs.writeFileSync(this.pwFile, `${password}\n`, { mode: 0o600 });
    const tmpPw = path.join(this.dir, '.initdb-pw');
    fs.writeFileSync(tmpPw, `${password}\n`, { mode: 0o600 });
    if (u) fs.chownSync(tmpPw, u.uid, u.gid);
    try {
      await new Promise<void>((resolve, reject) => {
        const c = spawn(
          path.join(this.opts.binaries.binDir, 'initdb'),
          ['-D', this.dataDir, '-U', 'postgres', `--pwfile=${tmpPw}`, '--auth=scram-sha-256', '-E', 'UTF8', '--no-locale', '--no-sync', '--no-instructions'],
          { ...this.idOpts, cwd: this.dir, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let out = '';
        c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
        c.stderr!.on('data', (d: Buffer) => (out += d.toString()));
        c.on('error', reject);
        c.on('close', (code) =>
          code === 0 ? resolve() : reject(new Error(`initdb ${this.dataDir} failed (exit ${code}): ${out.trim().split('\n').slice(-3).join(' | ')}`)),
        );
      });
    } finally {
      fs.rmSync(tmpPw, { force: true });
    }
    // password logins over TCP from loopback only; no Unix socket is opened (sandbox.conf)
    fs.writeFileSync(
      path.join(this.dataDir, 'pg_hba.conf'),
      '# sandbox a8s operator: SCRAM password logins from loopback only\nhost all all 127.0.0.0/8 scram-sha-256\n',
    );
    fs.appendFileSync(path.join(this.dataDir, 'postgresql.conf'), "\n# sandbox a8s operator\ninclude_if_exists = 'sandbox.conf'\n");
    this.log.info({ dataDir: this.dataDir }, 'initdb done');
  }

  /** Writes sandbox.conf for a plan (read at the next start or reload). */
  writeSettings(plan: ServerPlan): void {
    const file = path.join(this.dataDir, 'sandbox.conf');
    fs.writeFileSync(file, renderSettings(plan));
    if (this.opts.user) fs.chownSync(file, this.opts.user.uid, this.opts.user.gid);
  }

  /** Starts the server and waits until it accepts a superuser login. */
  async start(plan: ServerPlan, timeoutMs = 30_000): Promise<void> {
    if (this.running) return;
    this.writeSettings(plan);
    const fd = fs.openSync(this.logFile, 'a');
    this.stopping = false;
    const child = spawn(path.join(this.opts.binaries.binDir, 'postgres'), ['-D', this.dataDir], {
      ...this.idOpts,
      cwd: this.dir,
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C' },
      stdio: ['ignore', fd, fd],
    });
    fs.closeSync(fd);
    this.child = child;
    this.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        resolve();
        if (this.child === child && !this.stopping) {
          this.log.warn({ pid: child.pid, code, signal }, 'PostgreSQL server exited unexpectedly');
          this.opts.onUnexpectedExit?.({ pid: child.pid!, code, signal, at: new Date() });
        }
      });
    });
    child.on('error', (e) => this.log.error({ err: e.message }, 'cannot run postgres'));
    const logStart = fs.statSync(this.logFile).size;
    const end = Date.now() + timeoutMs;
    let last: string;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        const tail = this.logTail(logStart);
        if (/could not bind|Address already in use/i.test(tail)) throw new AddressInUseError(`${this.address}:${this.port} is in use: ${tail}`);
        throw new Error(
          `the PostgreSQL server exited during start-up (${child.exitCode !== null ? `exit ${child.exitCode}` : child.signalCode}): ${tail || 'see ' + this.logFile}`,
        );
      }
      try {
        const c = await this.superuser('postgres');
        await c.end();
        break;
      } catch (e) {
        last = (e as Error).message;
      }
      if (Date.now() > end) {
        await this.stop();
        throw new Error(
          `the PostgreSQL server on ${this.address}:${this.port} did not accept connections within ${timeoutMs / 1000} s (last error: ${last}); log ${this.logFile}`,
        );
      }
      await sleep(100);
    }
    const rotate = path.join(this.dir, '.rotate-superuser-password');
    if (fs.existsSync(rotate)) {
      // a copy of the template: its superuser password becomes this instance's own
      const password = randomBytes(24).toString('base64url');
      const c = await this.superuser('postgres');
      try {
        await c.query(`ALTER ROLE postgres PASSWORD ${c.escapeLiteral(password)}`);
      } finally {
        await c.end();
      }
      fs.writeFileSync(this.pwFile, `${password}\n`, { mode: 0o600 });
      fs.rmSync(rotate);
    }
    this.appliedSettings = { ...plan.settings };
    this.log.info({ pid: child.pid }, 'PostgreSQL server running');
  }

  /** Re-reads sandbox.conf (settings that need no restart). */
  reload(plan: ServerPlan): void {
    this.writeSettings(plan);
    if (this.running) this.child!.kill('SIGHUP');
    this.appliedSettings = { ...plan.settings };
  }

  /** Fast shutdown (SIGINT), SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    this.stopping = true;
    child.kill('SIGINT');
    const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(t);
  }

  /** Stops the server and removes its folder (data, log, password). */
  async destroy(): Promise<void> {
    await this.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** A connected superuser client (TCP, password); the caller ends it. */
  async superuser(database: string): Promise<pg.Client> {
    const c = new pg.Client({
      host: this.address,
      port: this.port,
      user: 'postgres',
      password: this.superuserPassword(),
      database,
      connectionTimeoutMillis: 5_000,
    });
    c.on('error', () => undefined);
    await c.connect();
    return c;
  }

  /** The last lines the server logged since `from` (bytes). */
  logTail(from = 0, lines = 3): string {
    try {
      const buf = fs.readFileSync(this.logFile);
      return buf
        .subarray(from)
        .toString('utf8')
        .trim()
        .split('\n')
        .filter((l) => /FATAL|ERROR|PANIC|LOG: {2}could not/.test(l))
        .slice(-lines)
        .join(' | ');
    } catch {
      return '';
    }
  }
}

/**
 * Drops the login role `username` through a superuser connection: no new logins, its sessions ended, what it
 * owned handed to `postgres` (the data stays), its privileges gone with it.
 */
export async function dropLoginRole(c: pg.Client, username: string): Promise<void> {
  const role = c.escapeIdentifier(username);
  await c.query(`ALTER ROLE ${role} NOLOGIN`);
  await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [username]);
  await c.query(`REASSIGN OWNED BY ${role} TO postgres`);
  await c.query(`DROP OWNED BY ${role}`);
  await c.query(`DROP ROLE ${role}`);
}
