/**
 * What the sandbox suites share: the CLI (scripts/sandbox.ts) run as a user runs it — `npm run sandbox -- <args>` in
 * the foreground and `npm run sandbox -- --down` from another shell —, whether a recorded process still runs, and the
 * psql commands it prints, parsed and used.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import pg from 'pg';
import { pidAlive } from '../../../runtime/realinfra/registry.js';
import { REPO_ROOT } from '../../../sandbox/sandbox.js';

export { pidAlive as alive };

const TSX = path.join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const SCRIPT = path.join(REPO_ROOT, 'scripts', 'sandbox.ts');

/** A running `npm run sandbox -- <args>`: its output so far and its exit. */
export interface SandboxCli {
  readonly child: ChildProcess;
  /** stdout and stderr, as printed so far. */
  output(): string;
  readonly exited: Promise<number | null>;
}

/** Starts `scripts/sandbox.ts <args>` (what `npm run sandbox -- <args>` runs) with `env`. */
export function startSandboxCli(args: readonly string[], env: NodeJS.ProcessEnv): SandboxCli {
  const child = spawn(process.execPath, [TSX, SCRIPT, ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, output: () => out, exited };
}

/**
 * Resolves once the CLI printed `Klutch sandbox is up.`; rejects with its output as soon as it exits before that (a
 * failed start fails the test at once, not after `timeoutMs`), or after `timeoutMs`.
 */
export async function untilUp(cli: SandboxCli, what: string, timeoutMs: number): Promise<void> {
  const up = 'Klutch sandbox is up.';
  let timer: NodeJS.Timeout | undefined;
  let poll: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      new Promise<void>((resolve) => {
        const check = () => (cli.output().includes(up) ? resolve() : (poll = setTimeout(check, 250)));
        check();
      }),
      cli.exited.then((code) => {
        // the last output can arrive after the exit event
        if (!cli.output().includes(up)) throw new Error(`${what}: the CLI exited (${code}) before it was up:\n${cli.output()}`);
      }),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not up after ${timeoutMs} ms:\n${cli.output()}`)), timeoutMs))),
    ]);
  } finally {
    clearTimeout(timer);
    clearTimeout(poll);
  }
}

/** Runs `npm run sandbox -- --down` with `env` to its end. */
export async function sandboxDown(env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  const d = startSandboxCli(['--down'], env);
  const code = await d.exited;
  return { code, out: d.output() };
}

/** A `psql` command the sandbox printed, parsed. */
export interface PsqlLine {
  readonly password: string;
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
}

const PSQL = /^PGPASSWORD='((?:[^']|'\\'')*)' psql -h (\S+) -p (\d+) -U (\S+) (\S+)$/;

/** Parses one `PGPASSWORD='…' psql -h … -p … -U … <database>` command (the shell quoting of the password undone). */
export function parsePsql(command: string): PsqlLine {
  const m = PSQL.exec(command.trim());
  if (!m) throw new Error(`not a psql command of the sandbox: ${JSON.stringify(command)}`);
  return { password: m[1]!.replace(/'\\''/g, "'"), host: m[2]!, port: Number(m[3]), user: m[4]!, database: m[5]! };
}

/**
 * The psql commands of the sandbox's closing summary (`  psql              …`, `  psql (a9s)        …`) by backend;
 * throws with the output when the a8s one is missing.
 */
export function psqlLines(out: string): { a8s: PsqlLine; a9s?: PsqlLine } {
  const line = (label: string) => new RegExp(`^ {2}${label.replace(/[()]/g, '\\$&')} +(PGPASSWORD=.*)$`, 'm').exec(out)?.[1];
  const a8s = line('psql');
  if (!a8s) throw new Error(`no psql line in the output:\n${out}`);
  const a9s = line('psql (a9s)');
  return { a8s: parsePsql(a8s), ...(a9s ? { a9s: parsePsql(a9s) } : {}) };
}

/**
 * Opens a session with a printed command's credentials, creates `table`, writes a row and reads it back; resolves to
 * what it read (`[{ item, u }]`, `u` the session's user).
 */
export async function writeAndRead(psql: PsqlLine, table: string, item: string): Promise<Array<{ item: string; u: string }>> {
  const db = new pg.Client({
    password: psql.password,
    host: psql.host,
    port: psql.port,
    user: psql.user,
    database: psql.database,
    connectionTimeoutMillis: 5_000,
  });
  db.on('error', () => undefined);
  await db.connect();
  try {
    await db.query(`CREATE TABLE ${table} (id int PRIMARY KEY, item text)`);
    await db.query(`INSERT INTO ${table} VALUES (1, $1)`, [item]);
    return (await db.query<{ item: string; u: string }>(`SELECT item, current_user AS u FROM ${table}`)).rows;
  } finally {
    await db.end();
  }
}
