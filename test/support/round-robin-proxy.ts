/**
 * A round-robin HTTP reverse proxy on loopback: the stand-in for a Kubernetes Service in front of
 * several backend replicas. Each request goes to the next target; a target that refuses the
 * connection (a killed replica) is skipped for that request, as an endpoint a readiness probe has
 * removed. A request whose target dies while answering gets a 502, as from a real load balancer.
 * `log` records which target served each request.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export class RoundRobinProxy {
  private server: http.Server | undefined;
  private next = 0;
  targets: string[] = [];
  readonly log: Array<{ method: string; path: string; target: string; status: number }> = [];
  url = '';

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', () => resolve()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const n = this.targets.length;
    const first = this.next++;
    for (let i = 0; i < n; i++) {
      const target = this.targets[(first + i) % n];
      const outcome = await this.forward(target, req, body, res);
      if (outcome !== 'refused') return;
    }
    res.writeHead(503, { 'Content-Type': 'text/plain' }).end('no replica accepted the connection');
  }

  private forward(target: string, req: http.IncomingMessage, body: Buffer, res: http.ServerResponse): Promise<'done' | 'refused'> {
    return new Promise((resolve) => {
      const headers = { ...req.headers, 'content-length': String(body.length) };
      delete headers['transfer-encoding'];
      const up = http.request(`${target}${req.url}`, { method: req.method, headers });
      up.on('response', (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
        r.on('end', () => {
          this.log.push({ method: req.method!, path: req.url!, target, status: r.statusCode ?? 0 });
          resolve('done');
        });
        r.on('error', () => {
          res.destroy();
          resolve('done');
        });
      });
      up.on('error', (e) => {
        if ((e as NodeJS.ErrnoException).code === 'ECONNREFUSED') return resolve('refused');
        this.log.push({ method: req.method!, path: req.url!, target, status: 502 });
        if (!res.headersSent) res.writeHead(502, { 'Content-Type': 'text/plain' }).end(`replica ${target} failed: ${e.message}`);
        else res.destroy();
        resolve('done');
      });
      up.end(body);
    });
  }
}
