import { describe, expect, it } from '@jest/globals';
import { Counter, Registry } from 'prom-client';
import { HealthServer } from '../../../runtime/core/server.js';

describe('HealthServer', () => {
  it('serves healthz/readyz JSON with 200/500 and metrics, on 127.0.0.1', async () => {
    const registry = new Registry();
    new Counter({ name: 'demo_total', help: 'demo', registers: [registry] }).inc(3);
    let ready: string | boolean = 'informers not synced';
    const s = new HealthServer({
      port: 0,
      registry,
      healthz: { ping: () => true },
      readyz: { sync: () => ready },
      info: { 'unexpected-errors': () => 'none' },
    });
    const port = await s.start();
    try {
      const h = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(h.status).toBe(200);
      expect(await h.json()).toEqual({ ping: 'ok' });
      let r = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(r.status).toBe(500);
      expect(await r.json()).toEqual({ ping: 'ok', sync: 'informers not synced', 'unexpected-errors': 'none' });
      ready = true;
      r = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(r.status).toBe(200); // info entries never fail it
      const m = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(await m.text()).toContain('demo_total 3');
    } finally {
      await s.stop();
    }
  });
});
