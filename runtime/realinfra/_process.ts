/**
 * One child process of the harness (a cluster component or a Crossplane process): output appended to
 * its log file, never keeping Node alive, exit recorded, stopped with SIGTERM then SIGKILL.
 * Shared by cluster.ts and crossplane.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';

/** Resolves to true when `p` settles within `ms`, else false; leaves no timer behind. */
export async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

export interface HarnessProcessOptions<C extends string> {
  /** The component name used in errors and the process registry. */
  readonly component: C;
  /** The binary that ends up running (recorded for the registry). */
  readonly binary: string;
  /** What is spawned: the binary itself, or e.g. `ip` that execs it in a namespace (keeping the PID). @default binary */
  readonly command?: string;
  readonly args: readonly string[];
  readonly logFile: string;
  readonly cwd: string;
  /** @default the harness's environment */
  readonly env?: NodeJS.ProcessEnv;
}

export class HarnessProcess<C extends string> {
  readonly component: C;
  readonly binary: string;
  readonly logFile: string;
  readonly child: ChildProcess;
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  readonly exited: Promise<void>;

  constructor(opts: HarnessProcessOptions<C>) {
    this.component = opts.component;
    this.binary = opts.binary;
    this.logFile = opts.logFile;
    const command = opts.command ?? opts.binary;
    const fd = fs.openSync(opts.logFile, 'a');
    try {
      fs.writeSync(fd, `### ${new Date().toISOString()} ${command} ${opts.args.join(' ')}\n`);
      // Same process group as the harness: a Ctrl-C in the terminal reaches the components too, so they
      // end even when the harness's process dies without running its exit hook.
      this.child = spawn(command, [...opts.args], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', fd, fd] });
    } finally {
      fs.closeSync(fd);
    }
    // Never keep the Node process alive just because a cluster is running; the exit hook ends it.
    this.child.unref();
    this.exited = new Promise<void>((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve();
      });
      this.child.on('error', (e) => {
        this.exit = { code: null, signal: null };
        fs.appendFileSync(opts.logFile, `\n### failed to start ${command}: ${e.message}\n`);
        resolve();
      });
    });
  }

  /** The PID while the process runs; undefined once it has exited. */
  get pid(): number | undefined {
    return this.exit ? undefined : this.child.pid;
  }

  describeExit(): string {
    if (!this.exit) return 'is running';
    return this.exit.signal ? `was killed by ${this.exit.signal}` : `exited with code ${this.exit.code}`;
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs: number): Promise<void> {
    const pid = this.pid;
    if (pid === undefined) return;
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      return;
    }
    if (await within(this.exited, graceMs)) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await within(this.exited, 5000);
  }

  killSync(): void {
    const pid = this.pid;
    if (pid === undefined) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
