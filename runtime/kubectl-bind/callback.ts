/**
 * The loopback callback server of `kubectl bind`: listens on 127.0.0.1 (random port), accepts
 * `GET /callback?response=<base64 BindingResponse>` for our session id only; anything else is
 * answered with an error and ignored (the wait goes on), so a stray or hostile request cannot end
 * or hijack the login.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeBindingResponse, type BindingResponse } from '../../contract/wire.js';

const page = (title: string, text: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`;

export class CallbackServer {
  private server: http.Server | undefined;
  private resolve!: (r: BindingResponse) => void;
  readonly response: Promise<BindingResponse>;
  /** Requests refused so far, with why (for the error message on timeout). */
  readonly refused: string[] = [];
  port = 0;

  constructor(private readonly sessionId: string) {
    this.response = new Promise((resolve) => (this.resolve = resolve));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/callback`;
  }

  async start(): Promise<void> {
    let done = false;
    this.server = http.createServer((req, res) => {
      let u: URL;
      try {
        u = new URL(req.url ?? '/', 'http://127.0.0.1');
      } catch {
        // Node accepts targets such as `//[`: the sender's error, never an exception that ends the login.
        this.refused.push(`request target ${JSON.stringify((req.url ?? '').slice(0, 200))} is not a valid URL path`);
        res.writeHead(400, { 'Content-Type': 'text/plain' }).end('bad request target');
        return;
      }
      if (u.pathname !== '/callback' || req.method !== 'GET') {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
        return;
      }
      if (done) {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(page('Already bound', 'You can close this tab.'));
        return;
      }
      let r: BindingResponse;
      try {
        r = decodeBindingResponse(u.searchParams.get('response') ?? '');
      } catch (e) {
        this.refused.push((e as Error).message);
        res.writeHead(400, { 'Content-Type': 'text/html; charset=utf-8' }).end(page('Not understood', (e as Error).message.replace(/</g, '&lt;')));
        return;
      }
      const sid = r.authentication?.oauth2CodeGrant?.sid;
      if (sid !== this.sessionId) {
        this.refused.push(`answer for session "${sid}", not ours`);
        res.writeHead(400, { 'Content-Type': 'text/html; charset=utf-8' }).end(page('Wrong session', 'This answer belongs to another kubectl bind session.'));
        return;
      }
      done = true;
      res
        .writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' })
        .end(page('Authenticated', 'You have been authenticated successfully. Head back to the command line.'));
      this.resolve(r);
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(0, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    await new Promise<void>((resolve) => {
      s.close(() => resolve());
      s.closeAllConnections();
    });
  }
}
