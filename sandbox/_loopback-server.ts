/**
 * SANDBOX ONLY — what the a9s broker stand-in's engine servers share (sandbox/local-redis.ts,
 * sandbox/local-mariadb.ts, sandbox/local-prometheus.ts, sandbox/local-rabbitmq.ts): one server process on
 * 127.0.0.1, its port, whether it runs, and its stop; and where a Debian program is.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Logger } from 'pino';

/**
 * The first of `names` found on PATH or in `extraDirs` (then /usr/sbin, /usr/bin), or an error naming the
 * programs and the Debian package(s) `install` that bring them.
 */
export function findProgram(names: readonly string[], install: string, extraDirs: readonly string[] = []): string {
  const dirs = [...extraDirs, ...(process.env['PATH'] ?? '/usr/bin:/bin').split(':'), '/usr/sbin', '/usr/bin'].filter(Boolean);
  for (const name of names) {
    for (const dir of dirs) {
      const f = path.join(dir, name);
      if (fs.existsSync(f)) return f;
    }
  }
  throw new Error(
    `${names.join(' or ')}: not found in ${[...extraDirs, 'PATH', '/usr/sbin', '/usr/bin'].join(', ')}; install ${install} (listed in .ci/apt-packages.txt)`,
  );
}

/**
 * How many processes of process group `pgid` are alive (zombies not counted: a member orphaned to an init that does
 * not reap stays one, and can no longer do anything).
 */
export function liveMembers(pgid: number): number {
  let n = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so read after the last ')'
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z') n++;
  }
  return n;
}

/** How {@link LoopbackServerProcess.launch} starts the server. */
export interface LaunchOptions {
  /** Variables added to its environment (which otherwise holds only PATH). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Starts it in a process group of its own, and stop() signals the whole group: for a server that a script
   * starts and does not replace (RabbitMQ's `rabbitmq-server` script and its Erlang VM).
   * @default false
   */
  readonly group?: boolean;
}

export abstract class LoopbackServerProcess {
  readonly address = '127.0.0.1';
  protected child: ChildProcess | undefined;
  protected exited: Promise<void> = Promise.resolve();
  protected portNumber = 0;
  private group = false;

  /** @param name the server's name in log lines (`redis-server`, `mariadbd`). */
  protected constructor(
    private readonly name: string,
    protected readonly log: Logger,
  ) {}

  get port(): number {
    return this.portNumber;
  }

  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * Starts `binary args` in `cwd` as the server process (stdin and stdout closed, only PATH in its environment; its
   * exit resolves `exited`); returns what it has written to stderr so far, spawn errors included.
   */
  protected launch(binary: string, args: readonly string[], cwd: string, opts: LaunchOptions = {}): () => string {
    const child = spawn(binary, [...args], {
      cwd,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...opts.env },
      detached: opts.group ?? false,
    });
    this.group = opts.group ?? false;
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.on('error', (e) => (stderr += e.message));
    this.child = child;
    this.exited = new Promise<void>((r) => child.once('exit', () => r()));
    return () => stderr;
  }

  /** SIGTERM to the server process (its group when launched with `group`), SIGKILL after `graceMs`. */
  protected async stopProcess(graceMs: number): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const group = this.group && child.pid ? child.pid : undefined;
    const signal = (sig: NodeJS.Signals | 0): boolean => {
      try {
        if (group) process.kill(-group, sig);
        else child.kill(sig || undefined);
        return true;
      } catch {
        return false; // already gone
      }
    };
    signal('SIGTERM');
    const deadline = Date.now() + graceMs;
    const t = setTimeout(() => signal('SIGKILL'), graceMs);
    await this.exited;
    // a group outlives its leader while its other members shut down (an Erlang VM takes seconds)
    while (group && liveMembers(group) > 0) {
      if (Date.now() > deadline) signal('SIGKILL');
      await new Promise((r) => setTimeout(r, 100));
    }
    clearTimeout(t);
    this.log.info({ pid: child.pid }, `${this.name} stopped`);
  }
}
