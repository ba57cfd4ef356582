// jest globalSetup of the `integration` project: names this test run (workers inherit the env var, so
// the teardown can find this run's clusters), ends processes left behind by crashed earlier runs, and
// builds (or finds in the cache) the real control-plane binaries.
import { randomUUID } from 'node:crypto';
import { ensureBinaries } from '../../runtime/realinfra/build.js';
import { RUN_ID_ENV, killLeftovers } from '../../runtime/realinfra/registry.js';

export async function globalSetup(): Promise<void> {
  process.env[RUN_ID_ENV] ??= `jest-${process.pid}-${randomUUID().slice(0, 8)}`;
  const started = Date.now();
  const log = (line: string) => process.stderr.write(`[realinfra +${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);
  for (const k of killLeftovers({ runId: process.env[RUN_ID_ENV] })) {
    log(`ended leftover cluster "${k.name}" of an earlier run (pids ${k.killed.map((p) => p.pid).join(', ') || 'none alive'})`);
  }
  await ensureBinaries({ log });
}
