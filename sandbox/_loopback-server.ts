/**
 * SANDBOX ONLY — what the a9s broker stand-in's engine servers share (sandbox/local-redis.ts,
 * sandbox/local-mariadb.ts): one server process on 127.0.0.1, its port, whether it runs, and its stop.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';

export abstract class LoopbackServerProcess {
  readonly address = '127.0.0.1';
  protected child: ChildProcess | undefined;
  protected exited: Promise<void> = Promise.resolve();
  protected portNumber = 0;

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
  protected launch(binary: string, args: readonly string[], cwd: string): () => string {
    const child = spawn(binary, [...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' } });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.on('error', (e) => (stderr += e.message));
    this.child = child;
    this.exited = new Promise<void>((r) => child.once('exit', () => r()));
    return () => stderr;
  }

  /** SIGTERM to the server process, SIGKILL after `graceMs`. */
  protected async stopProcess(graceMs: number): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(t);
    this.log.info({ pid: child.pid }, `${this.name} stopped`);
  }
}
