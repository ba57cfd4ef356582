// The konnector's client metrics: requests and time spent waiting for the client-side rate limit,
// counted by clients that share one stats object per side, read on every scrape.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { KubeClient } from '../../../runtime/core/client.js';
import { konnectorMetrics } from '../../../runtime/konnector/metrics.js';

describe('konnector client metrics', () => {
  it('sum the requests and throttled time of every client of a side, also of clients already closed', async () => {
    const server = http.createServer((_req, res) => res.end('{}'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const registry = new Registry();
    const m = konnectorMetrics(registry);
    try {
      // two provider connections with a limit of 2 requests a second and no burst beyond one
      const a = new KubeClient({ server: url }, { qps: 2, burst: 1, stats: m.clientStats.provider });
      const b = new KubeClient({ server: url }, { qps: 2, burst: 1, stats: m.clientStats.provider });
      await Promise.all([a.request('GET', '/x'), a.request('GET', '/y'), b.request('GET', '/z')]);
      a.close();
      b.close();
      const app = new KubeClient({ server: url }, { qps: 0, stats: m.clientStats.app });
      await app.request('GET', '/w');
      app.close();

      const text = await registry.metrics();
      expect(text).toContain('klutch_konnector_client_requests_total{cluster="provider"} 3');
      expect(text).toContain('klutch_konnector_client_requests_total{cluster="app"} 1');
      const throttled = (cluster: string) =>
        Number(new RegExp(`klutch_konnector_client_throttled_seconds_total\\{cluster="${cluster}"\\} (\\S+)`).exec(text)?.[1]);
      expect(throttled('provider')).toBeGreaterThan(0); // client a's second request waited for a token
      expect(throttled('app')).toBe(0); // QPS 0: no limit, never waits
      expect(konnectorMetrics(registry).clientStats).toBe(m.clientStats); // one per registry
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
