/**
 * What the sandbox suites share: the CLI (scripts/sandbox.ts) run as a user runs it — `npm run sandbox -- <args>` in
 * the foreground and `npm run sandbox -- --down` from another shell — and whether a recorded process still runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
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

/** Runs `npm run sandbox -- --down` with `env` to its end. */
export async function sandboxDown(env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  const d = startSandboxCli(['--down'], env);
  const code = await d.exited;
  return { code, out: d.output() };
}
