// jest globalTeardown of the `integration` project: ends every process of a cluster that this run
// (or a crashed earlier run) started and did not stop, even when a test failed, and removes its folder;
// a real node's host changes are restored from the node lock's record.
import { restoreAbandonedNode } from '../../runtime/realinfra/host.js';
import { RUN_ID_ENV, killLeftovers } from '../../runtime/realinfra/registry.js';

export async function globalTeardown(): Promise<void> {
  const killed = killLeftovers({ runId: process.env[RUN_ID_ENV] });
  for (const k of killed) {
    process.stderr.write(
      `[realinfra] teardown: ended cluster "${k.name}" that a test did not stop (pids ${k.killed.map((p) => p.pid).join(', ') || 'none alive'})\n`,
    );
  }
  // A node whose test did not stop it (or whose process died): put the host back and free the lock.
  const node = restoreAbandonedNode({ ownProcess: true, log: (l) => process.stderr.write(`[realinfra] teardown: ${l}\n`) });
  if (node) process.stderr.write(`[realinfra] teardown: restored the host state of node "${node.cluster}" that a test did not stop\n`);
}
