/**
 * Health and metrics HTTP server: `/healthz` (liveness), `/readyz` (readiness), `/metrics`
 * (Prometheus text). Listens on 127.0.0.1 unless told otherwise. Checks return true/undefined for ok
 * or a string/false for failure; the response is JSON `{check: "ok" | "<reason>"}` with 200 or 500.
 * `info` entries are added to the /readyz body without deciding it (e.g. the last unexpected error).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export type Check = () => boolean | string | undefined | Promise<boolean | string | undefined>;

export interface HealthServerOptions {
  /** @default 127.0.0.1 */
  host?: string;
  /** 0 picks a free port. @default 8080 */
  port?: number;
  registry?: Registry;
  healthz?: Record<string, Check>;
  readyz?: Record<string, Check>;
  /** Shown on /readyz, never failing it. */
  info?: Record<string, () => string>;
}

export class HealthServer {
  private server: http.Server | undefined;
  readonly healthz: Record<string, Check>;
  readonly readyz: Record<string, Check>;

  constructor(private readonly opts: HealthServerOptions = {}) {
    this.healthz = { ...(opts.healthz ?? {}) };
    this.readyz = { ...(opts.readyz ?? {}) };
  }

  /** Resolves with the bound port. */
  async start(): Promise<number> {
    const srv = http.createServer((req, res) => void this.handle(req, res));
    this.server = srv;
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(this.opts.port ?? 8080, this.opts.host ?? '127.0.0.1', () => resolve());
    });
    return (srv.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections?.();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  private async run(checks: Record<string, Check>): Promise<{ ok: boolean; body: Record<string, string> }> {
    const body: Record<string, string> = {};
    let ok = true;
    for (const [name, check] of Object.entries(checks)) {
      let r: boolean | string | undefined;
      try {
        r = await check();
      } catch (e) {
        r = (e as Error).message;
      }
      if (r === true || r === undefined) body[name] = 'ok';
      else {
        ok = false;
        body[name] = typeof r === 'string' ? r : 'failed';
      }
    }
    return { ok, body };
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    try {
      if (path === '/healthz' || path === '/readyz' || path === '/livez') {
        const { ok, body } = await this.run(path === '/readyz' ? { ...this.healthz, ...this.readyz } : this.healthz);
        if (path === '/readyz') {
          for (const [k, f] of Object.entries(this.opts.info ?? {})) {
            try {
              body[k] = f();
            } catch (e) {
              body[k] = (e as Error).message;
            }
          }
        }
        res.writeHead(ok ? 200 : 500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(body));
      } else if (path === '/metrics' && this.opts.registry) {
        const text = await this.opts.registry.metrics();
        res.writeHead(200, { 'Content-Type': this.opts.registry.contentType });
        res.end(text);
      } else {
        res.writeHead(404, { 'Content-Type': 'text/plain' });
        res.end('not found: try /healthz, /readyz or /metrics\n');
      }
    } catch (e) {
      res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(String((e as Error).message));
    }
  }
}
