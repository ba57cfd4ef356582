// Helpers for tests that run against real clusters (runtime/realinfra). Shared: other suites may use them.
import { afterAll, beforeAll } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { apiErrorDetails } from '../../runtime/realinfra/apply.js';
import { type RealCluster, type StartClusterOptions, startCluster } from '../../runtime/realinfra/cluster.js';

/** A DNS-label name unique within the test run, e.g. `cm-3f9a1c`. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString('hex')}`;
}

/**
 * Polls `fn` until it returns a value other than undefined/false, or throws after `timeoutMs` naming
 * `what` and the last error thrown by `fn`.
 */
export async function eventually<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  { timeoutMs = 60_000, intervalMs = 200 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${last ? ` (last error: ${last})` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Awaits `p`, expects it to fail with an API error; returns its HTTP status and the API server's message. */
export async function apiFailure(p: Promise<unknown>): Promise<{ status: number; message: string; reason?: string }> {
  try {
    await p;
  } catch (e) {
    return apiErrorDetails(e);
  }
  throw new Error('expected the API call to fail, but it succeeded');
}

/** Resolves to the HTTP status of an API call: 200 when it succeeds, else the error's status. */
export async function statusOf(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (e) {
    return apiErrorDetails(e).status;
  }
}

/**
 * Starts a real cluster for the enclosing jest file (beforeAll) and stops it afterwards (afterAll);
 * returns a getter, e.g. `const cluster = useCluster({ name: 'control-plane' });` then `cluster().kubeConfig`.
 */
export function useCluster(opts: StartClusterOptions, startTimeoutMs = 180_000): () => RealCluster {
  let cluster: RealCluster | undefined;
  beforeAll(async () => {
    cluster = await startCluster(opts);
  }, startTimeoutMs);
  afterAll(async () => {
    await cluster?.stop();
  }, 30_000);
  return () => {
    if (!cluster) throw new Error(`useCluster("${opts.name}"): the cluster is not running (did beforeAll fail?)`);
    return cluster;
  };
}
