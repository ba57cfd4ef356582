/**
 * The bind backend's HTTP server.
 *
 *   GET  /export      BindingProvider (JSON)
 *   GET  /authorize   ?p=<port>|u=<loopback url>&s=<session id>&c=<cluster id> → 302 to the issuer
 *   GET  /callback    ?code&state → verified login → session cookie → 302 /resources?s=
 *   GET  /resources   ?s= → HTML catalogue with a Bind button per API
 *   POST /bind        form (s, csrf, group, resource) with the session cookie → 303 to the CLI callback
 *                     with ?response=<base64 BindingResponse>; or `Authorization: Bearer <JWT>` with a
 *                     JSON body {group, resource, clusterID, sessionID?} → BindingResponse JSON (CI)
 *   GET  /healthz /readyz /metrics
 */
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { ApiError, type KubeClient } from '../core/client.js';
import { AuthError, OidcRelyingParty, type Identity } from './oidc.js';
import { SealError, Sealer, ReplayCache, randomToken, sha256b64url } from './seal.js';
import { Binder, exportRequestFor } from './binder.js';
import { Catalog, CatalogError } from './catalog.js';
import { errorPage, resourcesPage, RESOURCES_CSP } from './html.js';
import { authFailureField, type BackendMetrics } from './metrics.js';
import { UnexpectedErrors, isNetworkError } from './unexpected.js';
import { ReplayStoreUnavailable, type ReplayStore } from './login-state.js';
import { LimitError, type LeaseBindRateLimiter } from './limits.js';
import type { ControllerReadiness } from './readiness.js';
import { RateLimitQueueFull } from '../core/ratelimit.js';
import { BIND_API_VERSION, bindingProviderJson, encodeBindingResponse, isLoopbackRedirect, type BindingResponse } from '../../contract/wire.js';

/**
 * `BindingProvider.version`: the Klutch bind protocol version this backend speaks (Klutch 1.5.0).
 * Klutch's kubectl-bind ≥ v0.3.0 refuses providers older than v0.3.0, so this is not klutch-kit's
 * own package version.
 */
export const BACKEND_VERSION = 'v1.5.0';
const STATE_PURPOSE = 'klutch-bind-state';
const SESSION_PURPOSE = 'klutch-bind-session';
const SESSION_ID_RE = /^[A-Za-z0-9]{1,64}$/;
const CLUSTER_ID_RE = /^[A-Za-z0-9_-]{1,128}$/;
const MAX_BODY = 64 * 1024;
/**
 * A refused request's body is read and discarded up to this many bytes before the answer, so the
 * client (which may still be sending) reads the answer instead of a reset; beyond it the answer is
 * sent with `Connection: close`.
 */
const DISCARD_BODY_LIMIT = 8 * 1024 * 1024;
/** Login-state ids this replica saw used or refused, kept to refuse replays without any API request. */
const USED_STATES_KEPT = 10_000;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = 'HttpError';
  }
}

interface StatePayload {
  jti: string;
  red: string;
  sid: string;
  cid: string;
  nonce: string;
  cv: string;
  bh: string;
  [k: string]: unknown;
}

interface SessionPayload {
  iss: string;
  sub: string;
  email?: string;
  sid: string;
  cid: string;
  red: string;
  csrf: string;
  [k: string]: unknown;
}

export interface BackendServerOptions {
  listenHost: string;
  listenPort: number;
  tls?: { certFile: string; keyFile: string };
  prettyName: string;
  oidc: { issuerUrl: string; clientId: string; clientSecret?: string; callbackUrl?: string; scopes: string[]; bearerAudiences: string[] };
  authorizeUrl?: string;
  sessionTtl: number;
  stateTtl: number;
}

export interface BackendDeps {
  kube: KubeClient;
  sealer: Sealer;
  binder: Binder;
  catalog: Catalog;
  logger: Logger;
  metrics: BackendMetrics;
  /** What this replica's controllers say for /readyz (readiness.ts: `ready`, and its `controllers:` line); ready and synced if not given. */
  controllers?: () => ControllerReadiness;
  /** Unexpected errors of this process (reported on /readyz); one is made if not given. */
  unexpected?: UnexpectedErrors;
  /** Per-identity bind rate (429 beyond it); unlimited if not given. */
  bindRate?: Pick<LeaseBindRateLimiter, 'take'>;
  /** Where used login states are recorded; in process memory if not given (one replica only). */
  replay?: ReplayStore;
  /** Extra lines for /readyz (configured limits, leadership, …). */
  status?: () => string[];
}

/**
 * The value of cookie `name` (the first one of that name), percent-decoded. Only that cookie is
 * decoded: a malformed cookie of another application on the same host does not fail the request;
 * a malformed one of ours is a 400 naming it.
 */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i <= 0 || part.slice(0, i).trim() !== name) continue;
    const raw = part.slice(i + 1).trim();
    try {
      return decodeURIComponent(raw);
    } catch {
      throw new HttpError(400, `cookie ${name}`, `value ${JSON.stringify(raw.slice(0, 100))} is not percent-encoded correctly`);
    }
  }
  return undefined;
}

/**
 * Reads and drops what is left of a request's body, up to `limit` bytes (then it stops waiting and
 * lets the rest flow away) or `timeoutMs`. Answering before the body is read makes Node close the
 * connection with unread data, which the client sees as a reset instead of the answer.
 */
export function discardBody(req: http.IncomingMessage, limit = DISCARD_BODY_LIMIT, timeoutMs = 10_000): Promise<void> {
  if (req.complete || req.readableEnded || req.destroyed) {
    req.resume();
    return Promise.resolve();
  }
  return new Promise<void>((resolve) => {
    let n = 0;
    const finish = () => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', finish);
      req.off('close', finish);
      req.off('error', finish);
      resolve();
    };
    const onData = (c: Buffer) => {
      n += c.length;
      if (n > limit) finish();
    };
    const timer = setTimeout(finish, timeoutMs);
    req.on('data', onData);
    req.once('end', finish);
    req.once('close', finish);
    req.once('error', finish);
    req.resume();
  });
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY) {
    req.resume(); // discard what the client sends; the 413 is answered without reading it
    throw new HttpError(413, 'body', `${declared} bytes is larger than ${MAX_BODY} bytes`);
  }
  // Events rather than for-await: leaving a for-await loop early destroys the socket, so the client
  // would see a reset instead of the 413.
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        req.off('data', onData);
        req.resume();
        reject(new HttpError(413, 'body', `larger than ${MAX_BODY} bytes`));
        return;
      }
      chunks.push(c);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

/**
 * Parses a request target. Node accepts request lines such as `GET //[ HTTP/1.1` whose target is no
 * valid URL; those are the client's error (400), never an exception outside the request's handler.
 */
export function parseTarget(target: string | undefined): URL {
  try {
    return new URL(target ?? '/', 'http://backend.invalid');
  } catch {
    throw new HttpError(400, 'target', `request target ${JSON.stringify((target ?? '').slice(0, 200))} is not a valid URL path`);
  }
}

export class BackendServer {
  private server: http.Server | https.Server | undefined;
  oidc!: OidcRelyingParty;
  url = '';
  readonly unexpected: UnexpectedErrors;
  private readonly replay: ReplayStore;
  /** Login-state ids used or refused here (insertion order = age; the oldest are dropped). */
  private readonly usedStates = new Set<string>();
  /** Requests being handled. */
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];
  private draining = false;

  constructor(
    readonly opts: BackendServerOptions,
    readonly deps: BackendDeps,
  ) {
    this.unexpected = deps.unexpected ?? new UnexpectedErrors(deps.logger, deps.metrics);
    this.replay = deps.replay ?? new ReplayCache();
  }

  private get secure(): boolean {
    return this.oidc.opts.callbackUrl.startsWith('https:');
  }

  async start(): Promise<string> {
    // handle() catches per request; this last guard keeps an unexpected rejection (a bug) from
    // becoming an unhandled rejection that would exit the process.
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => void this.handle(req, res).catch((e: unknown) => this.lastResort(res, e));
    this.server = this.opts.tls
      ? https.createServer({ cert: readFileSync(this.opts.tls.certFile), key: readFileSync(this.opts.tls.keyFile) }, handler)
      : http.createServer(handler);
    this.server.headersTimeout = 60_000;
    this.server.requestTimeout = 120_000;
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.opts.listenPort, this.opts.listenHost, () => resolve());
    });
    const addr = this.server.address() as AddressInfo;
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    this.url = `${this.opts.tls ? 'https' : 'http'}://${host}:${addr.port}`;
    this.oidc = new OidcRelyingParty({
      issuerUrl: this.opts.oidc.issuerUrl,
      clientId: this.opts.oidc.clientId,
      clientSecret: this.opts.oidc.clientSecret,
      callbackUrl: this.opts.oidc.callbackUrl ?? `${this.url}/callback`,
      scopes: this.opts.oidc.scopes,
      bearerAudiences: this.opts.oidc.bearerAudiences,
    });
    void this.oidc.discover().catch((e) => this.deps.logger.warn({ err: (e as Error).message }, 'OIDC discovery failed; retrying on demand'));
    return this.url;
  }

  /** Whether shutdown began (`/readyz` answers 503). */
  get isDraining(): boolean {
    return this.draining;
  }

  /** Requests being handled now. */
  get requestsInFlight(): number {
    return this.inFlight;
  }

  /**
   * Graceful stop: `/readyz` answers 503 at once (the Service takes the replica out) while requests
   * are still served for `delayMs`; then the listener closes, idle keep-alive connections are closed,
   * requests in flight finish (their connections close after the answer) for up to `graceMs` after
   * the start; what is left is closed. `stop()` without arguments closes at once.
   */
  async stop(opts: { delayMs?: number; graceMs?: number } = {}): Promise<void> {
    const s = this.server;
    if (!s) return;
    const t0 = Date.now();
    const grace = Math.max(opts.graceMs ?? 0, opts.delayMs ?? 0);
    this.draining = true;
    if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs).unref?.());
    this.server = undefined;
    const closed = new Promise<void>((resolve) => s.close(() => resolve()));
    s.closeIdleConnections();
    const left = grace - (Date.now() - t0);
    if (this.inFlight > 0 && left > 0) {
      this.deps.logger.info({ inFlight: this.inFlight, graceMs: left }, 'draining requests in flight');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.idleWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (this.inFlight > 0) this.deps.logger.warn({ inFlight: this.inFlight }, 'shutdown grace period over; closing requests still in flight');
    }
    s.closeAllConnections();
    await closed;
  }

  private route(path: string): string {
    return ['/export', '/authorize', '/callback', '/resources', '/bind', '/healthz', '/readyz', '/metrics'].includes(path) ? path : 'other';
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const t0 = performance.now();
    let route = 'other';
    this.inFlight++;
    try {
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      // while draining, no connection is kept for another request
      if (this.draining) res.setHeader('Connection', 'close');
      const url = parseTarget(req.url);
      route = this.route(url.pathname);
      await this.dispatch(req, res, url);
    } catch (e) {
      await this.fail(req, res, e, route);
    } finally {
      if (--this.inFlight === 0) for (const w of this.idleWaiters.splice(0)) w();
      this.deps.metrics.httpRequests.inc({ route, code: String(res.statusCode) });
      this.deps.metrics.httpDuration.observe({ route }, (performance.now() - t0) / 1000);
      if (route !== 'other' && route !== '/healthz' && route !== '/readyz' && route !== '/metrics') {
        this.deps.logger.info({ method: req.method, route, status: res.statusCode, ms: Math.round(performance.now() - t0) }, 'http');
      }
    }
  }

  /** Answers 500 when handle() itself threw (a bug), logging it instead of letting Node exit. */
  private lastResort(res: http.ServerResponse, e: unknown): void {
    this.unexpected.record('http', e, { stage: 'handler' });
    try {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end('internal error; see the backend log');
    } catch {
      res.destroy();
    }
  }

  private wantsJson(req: http.IncomingMessage): boolean {
    return Boolean(req.headers.authorization) || (req.headers.accept ?? '').includes('application/json') || req.url?.startsWith('/export') === true;
  }

  private async fail(req: http.IncomingMessage, res: http.ServerResponse, e: unknown, route: string): Promise<void> {
    let status = 500;
    let field = 'internal';
    let message = 'internal error; see the backend log';
    if (e instanceof HttpError || e instanceof AuthError || e instanceof SealError) {
      status = e instanceof SealError ? 400 : e.status;
      field = e.field;
      message = e.message;
      this.deps.metrics.authFailures.inc({ field: authFailureField(field) });
    } else if (e instanceof RateLimitQueueFull) {
      // the shared API client's wait queue is full: shed this request instead of queueing it forever
      status = 503;
      field = 'backend';
      message = `the backend is busy (${e.message}); try again in a moment`;
      this.deps.metrics.limitRefusals.inc({ limit: 'api_queue' });
      if (!res.headersSent) res.setHeader('Retry-After', String(e.retryAfterSeconds));
    } else if (e instanceof LimitError) {
      status = e.status;
      field = e.field;
      message = e.message;
      this.deps.metrics.limitRefusals.inc({ limit: e.limit });
      if (e.retryAfterSeconds && !res.headersSent) res.setHeader('Retry-After', String(e.retryAfterSeconds));
    } else if (e instanceof CatalogError) {
      status = 400;
      field = 'resource';
      message = e.message;
    } else if (e instanceof ApiError && (e.code === 409 || e.code === 422)) {
      status = 409;
      field = 'provider';
      message = e.message;
    } else if ((e instanceof ApiError && (e.code === 0 || e.code === 429 || e.code >= 500)) || isNetworkError(e)) {
      status = 503;
      field = 'provider';
      message = `the provider's API server did not answer (${(e as Error).message}); try again in a moment`;
    }
    if (status === 500 && !(e instanceof HttpError)) this.unexpected.record('http', e, { route, method: req.method });
    else if (status >= 500) this.deps.logger.error({ err: e instanceof Error ? e.message : String(e), route }, 'request failed');
    else this.deps.logger.warn({ route, status, field, reason: message }, 'request refused');
    if (res.headersSent) {
      res.end();
      return;
    }
    // a body the client may still be sending is read first, so it can read the answer (no reset)
    if (!req.complete) {
      await discardBody(req);
      if (!req.complete) res.setHeader('Connection', 'close');
    }
    if (status === 413) res.setHeader('Connection', 'close');
    if (this.wantsJson(req)) {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: message, field }));
    } else {
      res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(errorPage(status, message));
    }
  }

  private async dispatch(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const m = req.method ?? 'GET';
    const only = (method: string) => {
      if (m !== method && !(method === 'GET' && m === 'HEAD')) throw new HttpError(405, 'method', `${m} not allowed on ${url.pathname}, use ${method}`);
    };
    switch (url.pathname) {
      case '/healthz':
        res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
        return;
      case '/readyz': {
        const oidcOk = this.oidc.ready;
        const { ready: ctlOk, controllersSynced: synced } = this.deps.controllers?.() ?? { ready: true, controllersSynced: true };
        if (!oidcOk) void this.oidc.discover().catch(() => undefined);
        if (this.draining) {
          res.writeHead(503, { 'Content-Type': 'text/plain' }).end(`not ready: shutting down, ${this.inFlight - 1} requests in flight\n`);
          return;
        }
        const lines = [
          oidcOk && ctlOk ? 'ok' : 'not ready: OIDC discovery or controllers pending',
          `oidc: ${oidcOk ? 'ok' : 'discovery pending'}`,
          `controllers: ${synced ? 'ok' : 'pending'}`,
          this.unexpected.summary(),
          ...(this.deps.status?.() ?? []),
        ];
        res.writeHead(oidcOk && ctlOk ? 200 : 503, { 'Content-Type': 'text/plain' }).end(lines.join('\n') + '\n');
        return;
      }
      case '/metrics':
        res.writeHead(200, { 'Content-Type': this.deps.metrics.registry.contentType }).end(await this.deps.metrics.registry.metrics());
        return;
      case '/export':
        only('GET');
        return this.handleExport(req, res);
      case '/authorize':
        only('GET');
        return this.handleAuthorize(req, res, url);
      case '/callback':
        only('GET');
        return this.handleCallback(req, res, url);
      case '/resources':
        only('GET');
        return this.handleResources(req, res, url);
      case '/bind':
        only('POST');
        return req.headers.authorization ? this.handleBearerBind(req, res) : this.handleBrowserBind(req, res);
      default:
        throw new HttpError(404, 'path', `${url.pathname} does not exist; start at /export`);
    }
  }

  /**
   * The authorize URL announced by /export: `--oidc-authorize-url`, else `/authorize` next to the
   * callback URL (`--oidc-callback-url`, else the listen address): never built from the request's
   * `Host` header, which any client sets (a poisoned cache or proxy would send users elsewhere).
   */
  get authorizeUrl(): string {
    return this.opts.authorizeUrl ?? new URL('/authorize', this.oidc.opts.callbackUrl).href;
  }

  private handleExport(_req: http.IncomingMessage, res: http.ServerResponse): void {
    const authorize = this.authorizeUrl;
    // Klutch's wire form (apiVersion "v1alpha1", Go key order): Klutch's kubectl-bind refuses any other
    res
      .writeHead(200, { 'Content-Type': 'application/json' })
      .end(bindingProviderJson({ prettyName: this.opts.prettyName, version: BACKEND_VERSION, authorizeUrl: authorize }));
  }

  private cookie(name: string, value: string, maxAge: number, path = '/'): string {
    return `${name}=${encodeURIComponent(value)}; Path=${path}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${this.secure ? '; Secure' : ''}`;
  }

  private async handleAuthorize(_req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const q = url.searchParams;
    const sid = q.get('s') ?? '';
    const cid = q.get('c') ?? '';
    let red = q.get('u') ?? '';
    const port = q.get('p') ?? '';
    if (!red && port) {
      if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) throw new HttpError(400, 'p', `"${port}" is not a port number`);
      red = `http://localhost:${port}/callback`; // as Klutch: its CLI listens on localhost:<p>
    }
    if (!red) throw new HttpError(400, 'u', 'missing: pass the CLI callback as u=<http://127.0.0.1:port/callback> or p=<port>');
    if (!isLoopbackRedirect(red)) {
      throw new HttpError(
        400,
        'u',
        `"${red}" is not a loopback callback; only http://127.0.0.1:<port>, http://localhost:<port> or http://[::1]:<port> are allowed`,
      );
    }
    if (!SESSION_ID_RE.test(sid)) throw new HttpError(400, 's', `"${sid}" is not a session id (1-64 letters and digits)`);
    if (!CLUSTER_ID_RE.test(cid)) throw new HttpError(400, 'c', `"${cid}" is not a cluster id (1-128 of [A-Za-z0-9_-])`);

    const binding = randomToken();
    const state: StatePayload = {
      jti: randomToken(16),
      red,
      sid,
      cid,
      nonce: randomToken(),
      cv: randomToken(48),
      bh: sha256b64url(binding),
    };
    const sealed = await this.deps.sealer.seal(STATE_PURPOSE, state, this.opts.stateTtl);
    let authUrl: URL;
    try {
      authUrl = await this.oidc.authorizationUrl({ state: sealed, nonce: state.nonce, codeVerifier: state.cv });
    } catch (e) {
      throw new HttpError(503, 'issuer', `cannot reach the OIDC issuer ${this.oidc.opts.issuerUrl} (${(e as Error).message}); try again in a moment`);
    }
    res.writeHead(302, {
      Location: authUrl.href,
      'Set-Cookie': this.cookie(`klutch-bind-auth-${sid}`, binding, this.opts.stateTtl, '/callback'),
    });
    res.end();
  }

  private async handleCallback(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const q = url.searchParams;
    if (q.get('error')) {
      throw new HttpError(
        400,
        'error',
        `the issuer refused the login: ${q.get('error')}${q.get('error_description') ? ` (${q.get('error_description')})` : ''}`,
      );
    }
    if (!q.get('code')) throw new HttpError(400, 'code', 'missing');
    const stateToken = q.get('state') ?? '';
    const state = await this.deps.sealer.open<StatePayload>('state', STATE_PURPOSE, stateToken);
    const binding = cookieValue(req.headers.cookie, `klutch-bind-auth-${state.sid}`);
    if (!binding || sha256b64url(binding) !== state.bh) {
      throw new HttpError(400, 'state', 'was not issued to this browser (login cookie missing or different); start again with kubectl bind');
    }
    // Nothing is written to the API server before the identity is proven (the code exchanged and the
    // id_token verified): a replay this replica saw is refused from memory; any other replay reaches
    // the issuer, which refuses a used code; a state is recorded as used (Lease) only after that.
    if (this.usedStates.has(state.jti)) throw new HttpError(400, 'state', 'was already used; start again with kubectl bind');
    const callbackUrl = new URL(this.oidc.opts.callbackUrl);
    callbackUrl.search = url.search;
    let identity: Awaited<ReturnType<OidcRelyingParty['finishLogin']>>;
    try {
      identity = await this.oidc.finishLogin(callbackUrl, { state: stateToken, nonce: state.nonce, codeVerifier: state.cv });
    } catch (e) {
      if (e instanceof AuthError) this.rememberState(state.jti); // the issuer refused this code: a retry cannot succeed
      throw e;
    }
    let firstUse: boolean;
    try {
      firstUse = await this.replay.use(state.jti, (state.exp as number) ?? 0);
    } catch (e) {
      if (!(e instanceof ReplayStoreUnavailable)) throw e;
      throw new HttpError(503, 'state', `${e.message}; try the login again in a moment`);
    }
    this.rememberState(state.jti);
    if (!firstUse) {
      throw new HttpError(400, 'state', 'was already used; start again with kubectl bind');
    }
    const session: SessionPayload = {
      iss: identity.iss,
      sub: identity.sub,
      email: identity.email,
      sid: state.sid,
      cid: state.cid,
      red: state.red,
      csrf: randomToken(),
    };
    const sealed = await this.deps.sealer.seal(SESSION_PURPOSE, session, this.opts.sessionTtl);
    res.writeHead(302, {
      Location: `/resources?s=${encodeURIComponent(state.sid)}`,
      'Set-Cookie': [this.cookie(`klutch-bind-${state.sid}`, sealed, this.opts.sessionTtl), this.cookie(`klutch-bind-auth-${state.sid}`, '', 0, '/callback')],
    });
    res.end();
  }

  private rememberState(jti: string): void {
    this.usedStates.add(jti);
    if (this.usedStates.size > USED_STATES_KEPT) this.usedStates.delete(this.usedStates.values().next().value!);
  }

  private async session(req: http.IncomingMessage, sid: string): Promise<SessionPayload> {
    if (!SESSION_ID_RE.test(sid)) throw new HttpError(400, 's', `"${sid}" is not a session id`);
    const token = cookieValue(req.headers.cookie, `klutch-bind-${sid}`);
    if (!token) throw new HttpError(401, 'session', 'no login for this session in this browser; start again with kubectl bind');
    const s = await this.deps.sealer.open<SessionPayload>('session', SESSION_PURPOSE, token);
    if (s.sid !== sid) throw new HttpError(401, 'session', 'belongs to another session id');
    return s;
  }

  private async handleResources(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const s = await this.session(req, url.searchParams.get('s') ?? '');
    const apis = await this.deps.catalog.list();
    res.writeHead(200, {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': RESOURCES_CSP,
      'X-Frame-Options': 'DENY',
    });
    res.end(
      resourcesPage({ prettyName: this.opts.prettyName, user: s.email ?? s.sub, sessionId: s.sid, csrf: s.csrf, apis, query: url.searchParams.get('q') ?? '' }),
    );
  }

  /** Validates the API, provisions the consumer and builds the BindingResponse. */
  private async bindFor(identity: Identity, clusterId: string, sid: string, group: string, resource: string): Promise<BindingResponse> {
    if (!/^[a-z][-a-z0-9]*[a-z0-9]$/.test(resource)) throw new HttpError(400, 'resource', `"${resource}" is not a resource (plural) name`);
    if (!/^(|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$/.test(group))
      throw new HttpError(400, 'group', `"${group}" is not an API group`);
    await this.deps.bindRate?.take(`${identity.iss}\n${identity.sub}`, identity.sub);
    const api = await this.deps.catalog.find(group, resource);
    const result = await this.deps.binder.bind({ iss: identity.iss, sub: identity.sub, clusterId });
    this.deps.logger.info(
      { namespace: result.namespace, created: result.namespaceCreated, api: `${resource}.${group}`, tokenExpiration: result.tokenExpiration },
      'bound consumer',
    );
    return {
      apiVersion: BIND_API_VERSION,
      kind: 'BindingResponse',
      authentication: { oauth2CodeGrant: { sid, id: `${identity.iss}/${identity.sub}` } },
      kubeconfig: Buffer.from(result.kubeconfig).toString('base64'),
      requests: [exportRequestFor(api)],
    };
  }

  private async handleBrowserBind(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const ct = req.headers['content-type'] ?? '';
    if (!ct.startsWith('application/x-www-form-urlencoded')) {
      throw new HttpError(
        415,
        'Content-Type',
        `"${ct}" is not a form post; use the Bind button on /resources, or send Authorization: Bearer for non-interactive binding`,
      );
    }
    const form = new URLSearchParams(await readBody(req));
    const s = await this.session(req, form.get('s') ?? '');
    if (form.get('csrf') !== s.csrf) throw new HttpError(403, 'csrf', 'does not match this session; reload /resources');
    if (!isLoopbackRedirect(s.red)) throw new HttpError(400, 'u', `"${s.red}" is not a loopback callback`);
    let response: BindingResponse;
    try {
      response = await this.bindFor(s, s.cid, s.sid, form.get('group') ?? '', form.get('resource') ?? '');
      this.deps.metrics.binds.inc({ flow: 'browser', result: 'ok' });
    } catch (e) {
      this.deps.metrics.binds.inc({ flow: 'browser', result: 'error' });
      throw e;
    }
    const target = new URL(s.red);
    target.searchParams.set('response', encodeBindingResponse(response));
    res.writeHead(303, { Location: target.href });
    res.end();
  }

  private async handleBearerBind(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const auth = req.headers.authorization ?? '';
    const m = /^Bearer\s+(\S+)$/i.exec(auth);
    if (!m) throw new HttpError(401, 'Authorization', 'expected "Bearer <JWT from the issuer>"');
    const identity = await this.oidc.verifyBearer(m[1]);
    const text = await readBody(req); // 413 when too large, before any parsing
    let parsed: unknown;
    try {
      parsed = JSON.parse(text || '{}');
    } catch (e) {
      throw new HttpError(400, 'body', `not JSON: ${(e as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new HttpError(400, 'body', `expected a JSON object {"clusterID": …}, got ${Array.isArray(parsed) ? 'an array' : JSON.stringify(parsed)}`);
    }
    const body = parsed as Record<string, unknown>;
    const str = (field: string): string => {
      const v = body[field];
      if (v === undefined || v === null) return '';
      if (typeof v !== 'string')
        throw new HttpError(400, field, `expected a string, got ${typeof v === 'object' ? JSON.stringify(v).slice(0, 100) : String(v)}`);
      return v;
    };
    const cid = str('clusterID');
    const sid = str('sessionID');
    if (!CLUSTER_ID_RE.test(cid)) throw new HttpError(400, 'clusterID', `"${cid}" is not a cluster id (1-128 of [A-Za-z0-9_-])`);
    if (sid && !SESSION_ID_RE.test(sid)) throw new HttpError(400, 'sessionID', `"${sid}" is not a session id`);
    try {
      const response = await this.bindFor(identity, cid, sid, str('group'), str('resource'));
      this.deps.metrics.binds.inc({ flow: 'bearer', result: 'ok' });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(response));
    } catch (e) {
      this.deps.metrics.binds.inc({ flow: 'bearer', result: 'error' });
      throw e;
    }
  }
}
