// jest globalTeardown of the `integration` project: ends every process of a cluster that this run
// (or a crashed earlier run) started and did not stop, even when a test failed, and removes its folder.
import { RUN_ID_ENV, killLeftovers } from '../../runtime/realinfra/registry.js';

export async function globalTeardown(): Promise<void> {
  const killed = killLeftovers({ runId: process.env[RUN_ID_ENV] });
  for (const k of killed) {
    process.stderr.write(
      `[realinfra] teardown: ended cluster "${k.name}" that a test did not stop (pids ${k.killed.map((p) => p.pid).join(', ') || 'none alive'})\n`,
    );
  }
}
