/**
 * Runs `klutch-backend` (runtime/backend/main.ts through tsx) as a child process, as it runs in a
 * pod: its own process, so a test can `kill -9` it. Resolves when it logs that it serves.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../', import.meta.url));

export interface BackendProcess {
  url: string;
  pid: number;
  proc: ChildProcess;
  /** stdout/stderr so far (JSON log lines). */
  output(): string;
  /** SIGKILL, resolves when it is gone. */
  kill9(): Promise<void>;
  /** SIGTERM (graceful), resolves when it exited. */
  stop(): Promise<void>;
}

export async function spawnBackend(args: string[], opts: { env?: Record<string, string>; preload?: string; timeoutMs?: number } = {}): Promise<BackendProcess> {
  const nodeArgs = ['--import', 'tsx', ...(opts.preload ? ['--import', opts.preload] : []), `${repo}runtime/backend/main.ts`, ...args];
  const proc = spawn(process.execPath, nodeArgs, { cwd: repo, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL'); // a child that never served is not left behind
      reject(new Error(`klutch-backend did not start within ${opts.timeoutMs ?? 60_000} ms:\n${out.slice(-3000)}`));
    }, opts.timeoutMs ?? 60_000);
    const check = () => {
      const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*klutch-backend serving/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    proc.stdout!.on('data', check);
    proc.once('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`klutch-backend exited (${code ?? sig}) before serving:\n${out.slice(-3000)}`));
    });
  });
  const gone = async (sig: NodeJS.Signals) => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(sig);
    await exited;
  };
  return { url, pid: proc.pid!, proc, output: () => out, kill9: () => gone('SIGKILL'), stop: () => gone('SIGTERM') };
}
