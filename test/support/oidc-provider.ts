/**
 * A real OpenID Provider for tests: panva's OpenID-certified `oidc-provider`, on 127.0.0.1,
 * with a password-checked login page (no dev interactions, nothing auto-approved except consent for
 * the first-party clients registered here), authorization code + PKCE, client credentials with JWT
 * access tokens for resource indicators, and RS256 keys the test can use to *play* the issuer
 * (`signAsIssuer`) for expired/odd tokens, or a foreign key for forged ones (`signForged`).
 *
 * Also a tiny cookie-keeping HTTP "browser" (`FetchBrowser`) to drive login pages without Chromium.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK, type JWTPayload } from 'jose';
// oidc-provider ships no type declarations; the few parts used here are typed below.
// @ts-expect-error -- untyped ESM package
import ProviderCtor from 'oidc-provider';

type Ctx = any;
interface Provider {
  callback(): (req: http.IncomingMessage, res: http.ServerResponse) => void;
  interactionDetails(req: http.IncomingMessage, res: http.ServerResponse): Promise<{ uid: string; prompt: { name: string } }>;
  interactionFinished(req: http.IncomingMessage, res: http.ServerResponse, result: object, opts?: { mergeWithLastSubmission?: boolean }): Promise<void>;
}
const Provider = ProviderCtor as new (issuer: string, config: object) => Provider;

export interface TestUser {
  username: string;
  password: string;
  sub: string;
  email: string;
}

export interface TestClient {
  client_id: string;
  client_secret?: string;
  redirect_uris?: string[];
  grant_types?: string[];
  response_types?: string[];
  token_endpoint_auth_method?: string;
  scope?: string;
}

/** Resource servers for client-credentials JWT access tokens: resource indicator → audience. */
export type ResourceServers = Record<string, { audience: string; scope: string }>;

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function loginPage(uid: string, error?: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Sign in</title></head><body>
<h1>Sign in to the test issuer</h1>${error ? `<p id="error">${esc(error)}</p>` : ''}
<form method="post" action="/interaction/${esc(uid)}/login">
<label>Username <input id="username" name="login" autocomplete="username" required></label>
<label>Password <input id="password" name="password" type="password" autocomplete="current-password" required></label>
<button id="signin" type="submit">Sign in</button></form></body></html>`;
}

async function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export class OidcTestProvider {
  provider: Provider | undefined;
  readonly logins: string[] = [];

  private constructor(
    readonly issuer: string,
    private readonly server: http.Server,
    private readonly users: TestUser[],
    private readonly privateKey: CryptoKey,
    private readonly publicJwk: JWK,
    private readonly privateJwk: JWK,
  ) {}

  /**
   * Listens on 127.0.0.1 (random port); call `start()` with the clients before the first request.
   * `opts.host` + `opts.tls` serve https on another address (e.g. a node IP pods reach).
   */
  static async listen(users: TestUser[], opts: { host?: string; tls?: { key: string; cert: string } } = {}): Promise<OidcTestProvider> {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const privateJwk = { ...(await exportJWK(privateKey)), kid: `test-${randomUUID().slice(0, 8)}`, alg: 'RS256', use: 'sig' };
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicJwk } = privateJwk;
    let self: OidcTestProvider | undefined;
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
      if (!self?.provider) {
        res.writeHead(503).end('provider not started');
        return;
      }
      void self.handle(req, res);
    };
    const server: http.Server = opts.tls ? https.createServer(opts.tls, handler) : http.createServer(handler);
    const host = opts.host ?? '127.0.0.1';
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    const port = (server.address() as AddressInfo).port;
    self = new OidcTestProvider(`${opts.tls ? 'https' : 'http'}://${host}:${port}`, server, users, privateKey, publicJwk, privateJwk);
    return self;
  }

  start(clients: TestClient[], resourceServers: ResourceServers = {}, opts: { idTokenTtl?: number } = {}): this {
    const users = this.users;
    const firstParty = new Set(clients.map((c) => c.client_id));
    this.provider = new Provider(this.issuer, {
      clients: clients.map((c) => ({
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: c.client_secret ? 'client_secret_basic' : 'none',
        redirect_uris: [],
        ...c,
      })),
      jwks: { keys: [this.privateJwk as never] },
      cookies: { keys: [randomUUID()] },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'] },
      findAccount: async (_ctx: Ctx, sub: string) => {
        const u = users.find((x) => x.sub === sub);
        if (!u) return undefined;
        return { accountId: sub, claims: async () => ({ sub, email: u.email, email_verified: true, preferred_username: u.username }) };
      },
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: async (_ctx: Ctx, _client: Ctx, oneOf?: string) => oneOf ?? undefined,
          useGrantedResource: async () => false,
          getResourceServerInfo: async (_ctx: Ctx, resource: string) => {
            const rs = resourceServers[resource];
            if (!rs) throw new Error(`unknown resource ${resource}`);
            return { scope: rs.scope, audience: rs.audience, accessTokenFormat: 'jwt', accessTokenTTL: 300, jwt: { sign: { alg: 'RS256' } } };
          },
        },
      },
      // like Dex and most issuers: scope claims (email) go into the id_token too
      conformIdTokenClaims: false,
      pkce: { required: () => true },
      ttl: { IdToken: opts.idTokenTtl ?? 3600, AccessToken: 600, AuthorizationCode: 60, Interaction: 600, Session: 3600, Grant: 3600 },
      interactions: { url: async (_ctx: Ctx, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
      // consent is implied for the first-party clients of the test: grant what was asked for
      loadExistingGrant: async (ctx: Ctx) => {
        const client = ctx.oidc.client;
        const accountId = ctx.oidc.session?.accountId;
        if (!client || !accountId || !firstParty.has(client.clientId)) return undefined;
        const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId });
        const scope = ctx.oidc.params?.scope as string | undefined;
        if (scope) grant.addOIDCScope(scope);
        await grant.save();
        return grant;
      },
    });
    return this;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const p = this.provider!;
    const url = new URL(req.url ?? '/', this.issuer);
    const m = /^\/interaction\/([^/]+)(\/login)?$/.exec(url.pathname);
    if (!m) {
      p.callback()(req, res);
      return;
    }
    try {
      const details = await p.interactionDetails(req, res);
      if (details.uid !== m[1]) throw new Error('interaction mismatch');
      if (details.prompt.name !== 'login') {
        await p.interactionFinished(req, res, {}, { mergeWithLastSubmission: true });
        return;
      }
      if (req.method === 'GET' && !m[2]) {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(loginPage(details.uid));
        return;
      }
      if (req.method === 'POST' && m[2]) {
        const form = await readForm(req);
        const user = this.users.find((u) => u.username === form.get('login') && u.password === form.get('password'));
        if (!user) {
          res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(loginPage(details.uid, 'Invalid username or password'));
          return;
        }
        this.logins.push(user.username);
        await p.interactionFinished(req, res, { login: { accountId: user.sub } }, { mergeWithLastSubmission: false });
        return;
      }
      res.writeHead(405).end();
    } catch (e) {
      res.writeHead(400, { 'Content-Type': 'text/plain' }).end(`interaction failed: ${(e as Error).message}`);
    }
  }

  /** Signs claims with the issuer's own key (to test claim checks: expiry, audience, …). */
  signAsIssuer(claims: JWTPayload, header: Record<string, unknown> = {}): Promise<string> {
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: this.privateJwk.kid, ...header }).sign(this.privateKey);
  }

  /** Signs claims with a foreign key but the issuer's kid (a forged token). */
  async signForged(claims: JWTPayload): Promise<string> {
    const { privateKey } = await generateKeyPair('RS256');
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: this.privateJwk.kid }).sign(privateKey);
  }

  get jwk(): JWK {
    return this.publicJwk;
  }

  /** OAuth client-credentials grant at the token endpoint. */
  async clientCredentials(clientId: string, secret: string, params: Record<string, string>): Promise<{ access_token: string; [k: string]: unknown }> {
    const res = await fetch(`${this.issuer}/token`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: 'Basic ' + Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64'),
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', ...params }),
    });
    const body = (await res.json()) as { access_token: string; error?: string; error_description?: string };
    if (!res.ok) throw new Error(`client_credentials failed: ${res.status} ${body.error}: ${body.error_description}`);
    return body;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

interface Cookie {
  name: string;
  value: string;
  path: string;
}

/** A cookie-keeping HTTP client that follows redirects by hand, like a browser without JavaScript. */
export class FetchBrowser {
  /** @param doFetch the fetch to use (e.g. one that trusts a test CA). @default the global fetch */
  constructor(private readonly doFetch: typeof fetch = fetch) {}

  private readonly jar = new Map<string, Map<string, Cookie>>();
  /** Every URL visited, in order. */
  readonly visited: string[] = [];

  private store(url: URL, res: Response): void {
    const host = url.host;
    if (!this.jar.has(host)) this.jar.set(host, new Map());
    const jar = this.jar.get(host)!;
    for (const sc of res.headers.getSetCookie()) {
      const [pair, ...attrs] = sc.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      let path = '/';
      let expired = false;
      for (const a of attrs) {
        const [k, v] = a.trim().split('=');
        if (k.toLowerCase() === 'path' && v) path = v;
        if (k.toLowerCase() === 'max-age' && Number(v) <= 0) expired = true;
        if (k.toLowerCase() === 'expires' && v && Date.parse(v) < Date.now()) expired = true;
      }
      const key = `${name};${path}`;
      if (expired || value === '') jar.delete(key);
      else jar.set(key, { name, value, path });
    }
  }

  cookieHeader(url: URL): string {
    const jar = this.jar.get(url.host);
    if (!jar) return '';
    return [...jar.values()]
      .filter((c) => url.pathname === c.path || url.pathname.startsWith(c.path.endsWith('/') ? c.path : c.path + '/') || c.path === '/')
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }

  cookies(host: string): Cookie[] {
    return [...(this.jar.get(host)?.values() ?? [])];
  }

  /** Drops all cookies of a host (another browser). */
  clear(host?: string): void {
    if (host) this.jar.delete(host);
    else this.jar.clear();
  }

  /** One request, no redirect following. */
  async request(url: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Response> {
    const u = new URL(url);
    const headers: Record<string, string> = { ...init.headers };
    const cookie = this.cookieHeader(u);
    if (cookie) headers.Cookie = cookie;
    let body: string | undefined;
    if (init.form) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    this.visited.push(`${init.method ?? 'GET'} ${url}`);
    const res = await this.doFetch(u, { method: init.method ?? (body ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
    this.store(u, res);
    return res;
  }

  /**
   * Requests `url` and follows redirects until a non-redirect answer, or until the next location
   * satisfies `stopAt` (returned without being requested).
   */
  async follow(
    url: string,
    init: { method?: string; form?: Record<string, string> } = {},
    stopAt?: (location: string) => boolean,
  ): Promise<{ res?: Response; url: string; stoppedAt?: string }> {
    let current = url;
    let res = await this.request(current, init);
    for (let i = 0; i < 20; i++) {
      const loc = res.headers.get('location');
      if (res.status < 300 || res.status >= 400 || !loc) return { res, url: current };
      const next = new URL(loc, current).href;
      if (stopAt?.(next)) {
        await res.arrayBuffer().catch(() => undefined);
        return { url: current, stoppedAt: next };
      }
      await res.arrayBuffer().catch(() => undefined);
      current = next;
      res = await this.request(current);
    }
    throw new Error(`too many redirects from ${url}`);
  }

  /** Fills the test issuer's login form found at `loginPageUrl`, then follows redirects. */
  async signIn(loginPageUrl: string, html: string, user: { username: string; password: string }, stopAt?: (l: string) => boolean) {
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
    if (!action) throw new Error(`no login form on ${loginPageUrl}: ${html.slice(0, 200)}`);
    return this.follow(
      new URL(
        action.replace(/&#(\d+);/g, (_m, c) => String.fromCharCode(Number(c))),
        loginPageUrl,
      ).href,
      {
        method: 'POST',
        form: { login: user.username, password: user.password },
      },
      stopAt,
    );
  }
}
