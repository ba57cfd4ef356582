// The harness talks to its clusters through the runtime's one REST client (runtime/core/client.ts),
// one unthrottled client per KubeConfig so connections are reused across calls.
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../core/client.js';

const clients = new WeakMap<KubeConfig, KubeClient>();

/** The harness's client for `kc` (no client-side rate limit: the harness waits on the server, not itself). */
export function clientOf(kc: KubeConfig): KubeClient {
  let c = clients.get(kc);
  if (!c) {
    c = new KubeClient(kc, { qps: 0, userAgent: 'klutch-kit-realinfra' });
    clients.set(kc, c);
  }
  return c;
}
