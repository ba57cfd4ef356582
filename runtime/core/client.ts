/**
 * A small dynamic Kubernetes REST client on node:https, configured from a ClusterAccess (kubeconfig.ts:
 * tokens, certificates, exec credential plugins) or a client-node KubeConfig.
 *
 * Why not the generated client-node APIs: the konnector works on arbitrary GVRs (bound CRDs), needs
 * server-side apply, the status subresource, streaming watches with bookmarks and precise control of
 * `resourceVersion`, and one QPS/burst limiter per client. All of that is a few lines of HTTP.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
// Type only: the runtime never loads @kubernetes/client-node (~80 MB RSS); see kubeconfig.ts.
import type { KubeConfig } from '@kubernetes/client-node';
import { parseKubeconfig, type ClusterAccess } from './kubeconfig.js';
import type { ExecCredentialPlugin, ExecCredentialStatus } from './exec-credential.js';
import { TokenBucket } from './ratelimit.js';
import { LineSplitter } from './watch-lines.js';
import { headerLines, Http1Pool, ResponseTooLargeError, type Http1Response } from './http1.js';
import { setTimeout as delay } from 'node:timers/promises';

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  generateName?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: unknown[];
  [k: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [k: string]: unknown;
}

export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

/** Group/version/resource of a kind, plus whether it is namespaced. */
export interface ResourceRef {
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
  /** Kind, used to fill apiVersion/kind on list items (lists omit them). */
  kind?: string;
}

export const apiVersionOf = (r: { group: string; version: string }): string => (r.group ? `${r.group}/${r.version}` : r.version);

/** REST path of a collection or an object. */
export function resourcePath(r: ResourceRef, namespace?: string, name?: string, subresource?: string): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  let p = base;
  if (r.namespaced && namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${r.plural}`;
  if (name) p += `/${encodeURIComponent(name)}`;
  if (subresource) p += `/${subresource}`;
  return p;
}

/** Error returned by the API server (a metav1.Status), or a transport failure (code 0). */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    /** The API server's own message (metav1.Status `message`), without method and path. */
    readonly apiMessage: string,
    readonly method: string,
    readonly path: string,
    readonly details?: unknown,
    /** The response's `Retry-After` in seconds, when it had one (429, or 5xx). */
    readonly retryAfterSeconds?: number,
  ) {
    super(`${method} ${path}: ${code || 'transport error'} ${reason}: ${apiMessage}`);
    this.name = 'ApiError';
  }
}

export const isNotFound = (e: unknown): boolean => e instanceof ApiError && e.code === 404;
export const isConflict = (e: unknown): boolean => e instanceof ApiError && e.code === 409 && e.reason === 'Conflict';
export const isAlreadyExists = (e: unknown): boolean => e instanceof ApiError && e.code === 409 && e.reason === 'AlreadyExists';
export const isGone = (e: unknown): boolean => e instanceof ApiError && (e.code === 410 || e.reason === 'Expired');
export const isForbidden = (e: unknown): boolean => e instanceof ApiError && e.code === 403;

export interface ClientOptions {
  /** Requests per second (token bucket refill); 0 disables limiting. @default 50 */
  qps?: number;
  /** Bucket size. @default 100 */
  burst?: number;
  /** User-Agent header. @default klutch-kit */
  userAgent?: string;
  /** Per-request timeout for non-watch requests, ms. @default 30000 */
  timeoutMs?: number;
  /**
   * How long a pooled keep-alive connection may sit idle before the client closes it, ms; 0 keeps it until
   * the server closes it (kube-apiserver does after 90 s). Every idle TLS connection holds buffers and a
   * goroutine in kube-apiserver: after a burst a konnector with 16 workers left about 18 of them open per
   * app cluster (docs/scale.md). Watches are not affected. @default 10000
   */
  idleSocketTimeoutMs?: number;
  /**
   * Largest response body of a non-watch request, bytes. The other side of a konnector's connection is a
   * provider's server: a body past this is cut off and the request fails (`ResponseTooLarge`) instead of
   * growing the process without bound. A list page of the informers (500 objects) stays far below it.
   * @default 134217728 (128 MiB)
   */
  maxResponseBytes?: number;
  /**
   * Longest line (one event) of a watch stream, bytes. kube-apiserver keeps objects under 1.5 MiB (etcd's
   * limit), so a longer line is not an API server's: the watch is closed and the informer lists again.
   * @default 16777216 (16 MiB)
   */
  maxWatchLineBytes?: number;
  /**
   * Where this client counts its requests and the time they waited for the rate limiter; several
   * clients may share one object (e.g. every provider connection of a konnector), so the totals
   * outlive a client. @default - a counter of its own
   */
  stats?: ClientStats;
  /**
   * How many times a request is sent again when the API server asks for it with `Retry-After`, as client-go
   * does: a 429 (any method: the server did not act on it; e.g. "storage is (re)initializing" right after a
   * CRD is established, or API Priority and Fairness shedding load), or a 5xx to a GET. It waits the seconds
   * the server names (at most {@link MAX_RETRY_AFTER_SECONDS}); a response without the header fails at once.
   * 0 turns it off. @default 10
   */
  maxRetries?: number;
}

/** The longest wait a `Retry-After` may ask of one retry, seconds. */
export const MAX_RETRY_AFTER_SECONDS = 10;

/** `Retry-After` as seconds (its delta-seconds form; an HTTP date counts from now), or undefined. */
export function retryAfterSeconds(value: string | string[] | undefined): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** Whether the server asked for `e`'s request to be sent again (see {@link ClientOptions.maxRetries}). */
function asksForRetry(e: unknown, method: string): e is ApiError {
  return e instanceof ApiError && e.retryAfterSeconds !== undefined && (e.code === 429 || (e.code >= 500 && method === 'GET'));
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
export interface WatchEvent<T = KubeObject> {
  type: WatchEventType;
  object: T;
}

export interface WatchHandle {
  /** Resolves when the stream ends (server closed, error or abort); rejects on HTTP errors. */
  done: Promise<void>;
  abort(): void;
}

interface Prepared {
  /** Pool for ordinary requests (bounded): http1.ts. */
  pool: Http1Pool;
  /** Header lines of every ordinary request but Accept and Authorization (User-Agent, the kubeconfig's own). */
  headerLines: string;
  /** The Authorization of a request that brings none: the kubeconfig's header, or the server URL's user and password. */
  authorization: string | undefined;
  /**
   * Sockets for watches, apart from the pool: a watch holds its socket for minutes, so watches sharing
   * the bounded pool would, once there are as many as it has sockets, leave every other request waiting.
   */
  watchAgent: http.Agent;
  headers: Record<string, string>;
  base: URL;
  /** `base`'s path without its trailing slash. */
  basePath: string;
  /** The exec plugin's client certificate the agents were built with. */
  certFrom?: string;
}

/** How one request authenticates: the header, and the exec credential it came from (to drop it on 401). */
interface Auth {
  header?: string;
  cred?: ExecCredentialStatus;
}

/** Counter of requests, exposed for metrics and benchmarks. */
export interface ClientStats {
  requests: number;
  throttledMs: number;
}

/**
 * A path that parsing as a URL would leave as it is: only characters the URL path keeps unencoded, and no
 * dot segment (which a URL would resolve). Anything else goes through a URL as before.
 */
const PLAIN_PATH = /^\/[A-Za-z0-9\-._~%!$&'()*+,;=:@/]*$/;
const DOT_SEGMENT = /(^|\/)(\.|%2e){1,2}(\/|$)/i;
const isPlainPath = (path: string): boolean => PLAIN_PATH.test(path) && !DOT_SEGMENT.test(path);
/** The `Accept` line of an ordinary request, built once. */
const ACCEPT_JSON = headerLines({ Accept: 'application/json' });

/** Options of {@link KubeClient.apply}. */
export interface ApplyOptions {
  /** Take over fields other managers own. @default false */
  readonly force?: boolean;
  /** Apply to this subresource (e.g. `status`). @default the object itself */
  readonly subresource?: string;
  /** `false`: don't parse the applied object the API server returns; the call resolves with undefined. @default true */
  readonly result?: boolean;
}

/**
 * The agent of a client's watches (its other requests go through http1.ts): one API server, one TLS
 * configuration. node:https keys its
 * socket pool by a name built per request from the host, the port and every TLS option, the CA,
 * certificate and key PEMs included: several KB of string built and hashed per request, the same for
 * every request here. So the name is computed once (a measurable share of the konnector's CPU per synced
 * object in bench:konnector).
 */
class OneServerAgent extends https.Agent {
  private poolName: string | undefined;
  override getName(options?: https.RequestOptions): string {
    return (this.poolName ??= super.getName(options));
  }
}

export class KubeClient {
  readonly limiter: TokenBucket;
  readonly stats: ClientStats;
  private prepared: Promise<Prepared> | undefined;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly maxWatchLineBytes: number;
  private readonly idleSocketTimeoutMs: number;
  private readonly userAgent: string;
  private readonly maxRetries: number;

  /** Where requests go: a ClusterAccess, or a client-node KubeConfig (used through its methods only). */
  readonly source: ClusterAccess | KubeConfig;
  private tokenCache: { token: string; at: number } | undefined;

  constructor(source: ClusterAccess | KubeConfig, opts: ClientOptions = {}) {
    this.source = source;
    this.limiter = new TokenBucket(opts.qps ?? 50, opts.burst ?? 100);
    this.stats = opts.stats ?? { requests: 0, throttledMs: 0 };
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.maxRetries = opts.maxRetries ?? 10;
    this.maxResponseBytes = opts.maxResponseBytes ?? 128 * 1024 * 1024;
    this.maxWatchLineBytes = opts.maxWatchLineBytes ?? 16 * 1024 * 1024;
    this.idleSocketTimeoutMs = opts.idleSocketTimeoutMs ?? 10_000;
    if (!Number.isFinite(this.idleSocketTimeoutMs) || this.idleSocketTimeoutMs < 0) {
      throw new Error(`ClientOptions.idleSocketTimeoutMs must be a number of milliseconds >= 0, got ${opts.idleSocketTimeoutMs}`);
    }
    this.userAgent = opts.userAgent ?? 'klutch-kit';
    if (isKubeConfig(source)) {
      if (!source.getCurrentCluster()) {
        throw new Error(
          `kubeconfig has no current cluster (current-context "${source.getCurrentContext()}"); set current-context to a context that names a cluster`,
        );
      }
    } else if (!source.server) {
      throw new Error('ClusterAccess.server is empty; give the API server URL');
    }
  }

  static fromKubeconfigString(yaml: string, opts?: ClientOptions): KubeClient {
    return new KubeClient(parseKubeconfig(yaml), opts);
  }

  /**
   * The client-node KubeConfig this client was built from (kept for callers that read cluster details
   * from it). Throws for clients built from a ClusterAccess: read `source` instead.
   */
  get kubeConfig(): KubeConfig {
    if (isKubeConfig(this.source)) return this.source;
    throw new Error('KubeClient.kubeConfig: this client was built from a ClusterAccess, not a KubeConfig; read KubeClient.source');
  }

  /** Namespace of the kubeconfig's current context, if any. */
  get contextNamespace(): string | undefined {
    const s = this.source;
    if (!isKubeConfig(s)) return s.namespace;
    const ctx = s.getContextObject(s.getCurrentContext());
    return ctx?.namespace || undefined;
  }

  get server(): string {
    const s = this.source;
    return isKubeConfig(s) ? s.getCurrentCluster()!.server : s.server;
  }

  private get execPlugin(): ExecCredentialPlugin | undefined {
    return isKubeConfig(this.source) ? undefined : this.source.exec;
  }

  /**
   * Authorization for ClusterAccess sources: the exec plugin's credential (cached by the plugin until
   * it expires; a new client certificate rebuilds the connection pools), else the static token, token
   * file (re-read at most once a minute) or basic auth.
   */
  private async auth(): Promise<Auth> {
    const exec = this.execPlugin;
    if (exec) {
      const cred = await exec.credential();
      if (cred.clientCertificateData && this.prepared) {
        const p = await this.prepared;
        if (p.certFrom !== cred.clientCertificateData) this.reprepare(p);
      }
      return { header: cred.token ? `Bearer ${cred.token}` : undefined, cred };
    }
    return { header: this.authHeader() };
  }

  /** Builds new pools on the next request; the old ones end when their requests are done. */
  private reprepare(old: Prepared): void {
    this.prepared = undefined;
    setTimeout(() => {
      old.pool.destroy();
      old.watchAgent.destroy();
    }, this.timeoutMs).unref?.();
  }

  /** Static credentials of ClusterAccess sources (token files are re-read at most once a minute). */
  private authHeader(): string | undefined {
    const s = this.source;
    if (isKubeConfig(s)) return undefined;
    if (s.tokenFile) {
      if (!this.tokenCache || Date.now() - this.tokenCache.at > 60_000) {
        this.tokenCache = { token: readFileSync(s.tokenFile, 'utf8').trim(), at: Date.now() };
      }
      return `Bearer ${this.tokenCache.token}`;
    }
    if (s.token) return `Bearer ${s.token}`;
    if (s.username !== undefined) return 'Basic ' + Buffer.from(`${s.username}:${s.password ?? ''}`).toString('base64');
    return undefined;
  }

  private prepare(): Promise<Prepared> {
    if (!this.prepared) {
      this.prepared = (async () => {
        const opts: https.RequestOptions & { servername?: string } = {};
        let certFrom: string | undefined;
        const src = this.source;
        if (isKubeConfig(src)) {
          await src.applyToHTTPSOptions(opts);
        } else {
          opts.ca = src.caData;
          opts.cert = src.certData;
          opts.key = src.keyData;
          if (src.exec) {
            // the credential auth() just fetched for this request (a new client certificate later rebuilds the pools)
            const cred = src.exec.last ?? (await src.exec.credential());
            if (cred.clientCertificateData && cred.clientKeyData) {
              opts.cert = Buffer.from(cred.clientCertificateData);
              opts.key = Buffer.from(cred.clientKeyData);
              certFrom = cred.clientCertificateData;
            }
          }
          if (src.skipTLSVerify) opts.rejectUnauthorized = false;
          if (src.tlsServerName) opts.servername = src.tlsServerName;
        }
        const base = new URL(this.server);
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(opts.headers ?? {})) {
          if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
        }
        if (opts.auth) headers.Authorization = 'Basic ' + Buffer.from(opts.auth).toString('base64');
        headers['User-Agent'] = this.userAgent;
        headers.Accept = 'application/json';
        const https_ = base.protocol === 'https:';
        const agentOpts = {
          keepAlive: true,
          maxSockets: 64,
          ca: opts.ca,
          cert: opts.cert,
          key: opts.key,
          secureContext: https_ ? sharedSecureContext(opts) : undefined,
          rejectUnauthorized: opts.rejectUnauthorized,
          servername: opts.servername ?? serverNameOf(base),
        };
        const pool = new Http1Pool({
          protocol: https_ ? 'https:' : 'http:',
          host: base.hostname.startsWith('[') ? base.hostname.slice(1, -1) : base.hostname,
          port: Number(base.port) || (https_ ? 443 : 80),
          hostHeader: base.host,
          tls: https_
            ? {
                ...(agentOpts.secureContext ? { secureContext: agentOpts.secureContext } : { ca: opts.ca, cert: opts.cert, key: opts.key }),
                ...(opts.rejectUnauthorized !== undefined ? { rejectUnauthorized: opts.rejectUnauthorized } : {}),
                ...(agentOpts.servername ? { servername: agentOpts.servername } : {}),
              }
            : undefined,
          maxSockets: agentOpts.maxSockets,
          idleTimeoutMs: this.idleSocketTimeoutMs,
        });
        const { Accept: _accept, Authorization: configAuth, ...rest } = headers;
        const userinfo = base.username ? `${decodeURIComponent(base.username)}:${decodeURIComponent(base.password)}` : undefined;
        const authorization = configAuth ?? (userinfo !== undefined ? 'Basic ' + Buffer.from(userinfo).toString('base64') : undefined);
        const watchOpts = { ...agentOpts, maxSockets: Infinity };
        const watchAgent = https_ ? new OneServerAgent(watchOpts) : new http.Agent({ keepAlive: true });
        return {
          pool,
          headerLines: headerLines(rest),
          authorization,
          watchAgent,
          headers,
          base,
          basePath: base.pathname.replace(/\/$/, ''),
          certFrom,
        };
      })();
    }
    return this.prepared;
  }

  /** Closes pooled sockets (watches are aborted by their owners). */
  close(): void {
    void this.prepared?.then((p) => {
      p.pool.destroy();
      p.watchAgent.destroy();
    });
  }

  private url(base: URL, path: string, query?: Record<string, string | number | boolean | undefined>): URL {
    const u = new URL(base.pathname.replace(/\/$/, '') + path, base);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u;
  }

  /**
   * The request line's path of `path` and `query`: the same path and query string as {@link url}, built
   * without a URL object for an ordinary API path (one URL parse per request was a measurable part of
   * the konnector's CPU per synced object, bench:konnector).
   */
  private requestPath(p: Prepared, path: string, query?: Record<string, string | number | boolean | undefined>): string {
    if (!isPlainPath(path)) {
      const u = this.url(p.base, path, query);
      return u.pathname + u.search;
    }
    let search = '';
    if (query) {
      const q = new URLSearchParams();
      for (const k in query) if (query[k] !== undefined) q.set(k, String(query[k]));
      const s = q.toString();
      if (s) search = '?' + s;
    }
    return p.basePath + path + search;
  }

  /**
   * Raw request. Resolves with the parsed JSON body; throws ApiError on status >= 400. With an exec
   * credential plugin, a 401 drops the credential and the request is sent once more with a fresh one. A
   * response that asks for a retry (`Retry-After` on a 429, or on a 5xx to a GET) is retried after that wait,
   * up to `ClientOptions.maxRetries` times.
   */
  async request<T = unknown>(
    method: string,
    path: string,
    opts: {
      body?: unknown;
      contentType?: string;
      /** Another `Accept` than JSON, e.g. the server-side printing `application/json;as=Table;v=v1;g=meta.k8s.io`. */
      accept?: string;
      query?: Record<string, string | number | boolean | undefined>;
      signal?: AbortSignal;
      /** Resolve with undefined instead of parsing a successful response's body (error bodies are still read). */
      discardBody?: boolean;
    } = {},
  ): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.requestAuthenticated<T>(method, path, opts);
      } catch (e) {
        if (!asksForRetry(e, method) || attempt >= this.maxRetries || opts.signal?.aborted) throw e;
        try {
          await delay(Math.min(e.retryAfterSeconds!, MAX_RETRY_AFTER_SECONDS) * 1000, undefined, opts.signal ? { signal: opts.signal } : {});
        } catch {
          throw e; // aborted while waiting: the server's answer is the error
        }
      }
    }
  }

  private async requestAuthenticated<T>(method: string, path: string, opts: Parameters<KubeClient['requestOnce']>[2]): Promise<T> {
    const auth = await this.auth();
    try {
      return await this.requestOnce<T>(method, path, opts, auth);
    } catch (e) {
      if (!(auth.cred && e instanceof ApiError && e.code === 401)) throw e;
      this.execPlugin!.invalidate(auth.cred);
      return this.requestOnce<T>(method, path, opts, await this.auth());
    }
  }

  private async requestOnce<T>(
    method: string,
    path: string,
    opts: {
      body?: unknown;
      contentType?: string;
      accept?: string;
      query?: Record<string, string | number | boolean | undefined>;
      signal?: AbortSignal;
      discardBody?: boolean;
    },
    authorization: Auth,
  ): Promise<T> {
    const p = await this.prepare();
    if (!this.limiter.tryTake()) {
      // only a request that found no token waits, and only its wait counts as throttled
      const t0 = performance.now();
      await this.limiter.take();
      this.stats.throttledMs += performance.now() - t0;
    }
    this.stats.requests++;
    const requestPath = this.requestPath(p, path, opts.query);
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const auth = authorization.header ?? p.authorization;
    let lines = p.headerLines + (opts.accept === undefined ? ACCEPT_JSON : headerLines({ Accept: opts.accept }));
    if (auth !== undefined) lines += headerLines({ Authorization: auth });
    if (payload !== undefined) lines += headerLines({ 'Content-Type': opts.contentType ?? 'application/json' });
    let res: Http1Response;
    try {
      res = await p.pool.request({
        method,
        path: requestPath,
        headers: lines,
        body: payload,
        timeoutMs: this.timeoutMs,
        signal: opts.signal,
        maxBodyBytes: this.maxResponseBytes,
        discardBody: opts.discardBody === true,
      });
    } catch (e) {
      if (e instanceof ResponseTooLargeError) {
        throw new ApiError(
          0,
          'ResponseTooLarge',
          `the response of ${method} ${path} from ${p.base.host} exceeded ${this.maxResponseBytes} bytes (ClientOptions.maxResponseBytes); it was cut off`,
          method,
          path,
        );
      }
      throw e instanceof ApiError ? e : new ApiError(0, 'TransportError', (e as Error).message, method, path);
    }
    const code = res.status;
    if (opts.discardBody === true && code < 400) return undefined as T;
    const text = res.body === undefined ? '' : res.body.toString('utf8');
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    if (code >= 400) {
      const st = (body && typeof body === 'object' ? body : {}) as { reason?: string; message?: string; details?: unknown };
      throw new ApiError(
        code,
        st.reason ?? http.STATUS_CODES[code] ?? 'Unknown',
        st.message ?? (typeof body === 'string' ? body : ''),
        method,
        path,
        st.details,
        retryAfterSeconds(res.headers['retry-after']),
      );
    }
    return body as T;
  }

  get<T extends KubeObject = KubeObject>(r: ResourceRef, namespace: string | undefined, name: string): Promise<T> {
    return this.request<T>('GET', resourcePath(r, namespace, name));
  }

  /** GET that returns undefined on 404. */
  async getOrNull<T extends KubeObject = KubeObject>(r: ResourceRef, namespace: string | undefined, name: string): Promise<T | undefined> {
    try {
      return await this.get<T>(r, namespace, name);
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  list<T extends KubeObject = KubeObject>(
    r: ResourceRef,
    namespace?: string,
    query?: Record<string, string | number | boolean | undefined>,
  ): Promise<KubeList<T>> {
    return this.request<KubeList<T>>('GET', resourcePath(r, namespace), { query });
  }

  create<T extends KubeObject = KubeObject>(r: ResourceRef, obj: KubeObject): Promise<T> {
    return this.request<T>('POST', resourcePath(r, obj.metadata.namespace), { body: withTypeMeta(r, obj) });
  }

  update<T extends KubeObject = KubeObject>(r: ResourceRef, obj: KubeObject): Promise<T> {
    return this.request<T>('PUT', resourcePath(r, obj.metadata.namespace, obj.metadata.name), {
      body: withTypeMeta(r, obj),
    });
  }

  updateStatus<T extends KubeObject = KubeObject>(r: ResourceRef, obj: KubeObject): Promise<T> {
    return this.request<T>('PUT', resourcePath(r, obj.metadata.namespace, obj.metadata.name, 'status'), {
      body: withTypeMeta(r, obj),
    });
  }

  /** JSON merge patch (RFC 7386). */
  mergePatch<T extends KubeObject = KubeObject>(r: ResourceRef, namespace: string | undefined, name: string, patch: unknown, subresource?: string): Promise<T> {
    return this.request<T>('PATCH', resourcePath(r, namespace, name, subresource), {
      body: patch,
      contentType: 'application/merge-patch+json',
    });
  }

  /** JSON patch (RFC 6902). */
  jsonPatch<T extends KubeObject = KubeObject>(r: ResourceRef, namespace: string | undefined, name: string, ops: unknown[], subresource?: string): Promise<T> {
    return this.request<T>('PATCH', resourcePath(r, namespace, name, subresource), {
      body: ops,
      contentType: 'application/json-patch+json',
    });
  }

  /**
   * Server-side apply with a field manager. With `result: false` the API server's answer is not
   * parsed (a caller that never reads the applied object saves its JSON decoding); errors still are.
   */
  apply(r: ResourceRef, obj: KubeObject, fieldManager: string, opts: ApplyOptions & { readonly result: false }): Promise<void>;
  apply<T extends KubeObject = KubeObject>(r: ResourceRef, obj: KubeObject, fieldManager: string, opts?: ApplyOptions): Promise<T>;
  apply<T extends KubeObject = KubeObject>(r: ResourceRef, obj: KubeObject, fieldManager: string, opts: ApplyOptions = {}): Promise<T | undefined> {
    return this.request<T>('PATCH', resourcePath(r, obj.metadata.namespace, obj.metadata.name, opts.subresource), {
      body: withTypeMeta(r, obj),
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager, force: opts.force ? 'true' : undefined },
      ...(opts.result === false ? { discardBody: true } : {}),
    });
  }

  async delete(
    r: ResourceRef,
    namespace: string | undefined,
    name: string,
    opts: { uid?: string; resourceVersion?: string; propagationPolicy?: 'Foreground' | 'Background' | 'Orphan'; ignoreNotFound?: boolean } = {},
  ): Promise<void> {
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
    if (opts.uid || opts.resourceVersion) {
      body.preconditions = { ...(opts.uid ? { uid: opts.uid } : {}), ...(opts.resourceVersion ? { resourceVersion: opts.resourceVersion } : {}) };
    }
    if (opts.propagationPolicy) body.propagationPolicy = opts.propagationPolicy;
    try {
      await this.request('DELETE', resourcePath(r, namespace, name), { body });
    } catch (e) {
      if (opts.ignoreNotFound !== false && isNotFound(e)) return;
      throw e;
    }
  }

  /**
   * Opens a watch stream. Events are delivered in order to `onEvent`. Not rate limited (long-lived).
   * The returned promise resolves once the HTTP response headers arrived (status 200); it rejects
   * with ApiError otherwise (e.g. 410 when resourceVersion is too old on some servers).
   */
  async watch<T extends KubeObject = KubeObject>(
    r: ResourceRef,
    namespace: string | undefined,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (ev: WatchEvent<T>) => void,
  ): Promise<WatchHandle> {
    const auth = await this.auth();
    try {
      return await this.watchOnce(r, namespace, query, onEvent, auth);
    } catch (e) {
      if (!(auth.cred && e instanceof ApiError && e.code === 401)) throw e;
      this.execPlugin!.invalidate(auth.cred);
      return this.watchOnce(r, namespace, query, onEvent, await this.auth());
    }
  }

  private async watchOnce<T extends KubeObject>(
    r: ResourceRef,
    namespace: string | undefined,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (ev: WatchEvent<T>) => void,
    authorization: Auth,
  ): Promise<WatchHandle> {
    const p = await this.prepare();
    const path = resourcePath(r, namespace);
    const u = this.url(p.base, path, { ...query, watch: 'true' });
    const mod = u.protocol === 'https:' ? https : http;
    const ac = new AbortController();
    return new Promise<WatchHandle>((resolveOpen, rejectOpen) => {
      let resolveDone!: () => void;
      const done = new Promise<void>((res) => (resolveDone = res));
      const headers = authorization.header ? { ...p.headers, Authorization: authorization.header } : p.headers;
      const req = mod.request(u, { method: 'GET', headers, agent: p.watchAgent, signal: ac.signal }, (res) => {
        const code = res.statusCode ?? 0;
        if (code !== 200) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            let st: { reason?: string; message?: string } = {};
            try {
              st = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            } catch {
              /* not a Status */
            }
            rejectOpen(new ApiError(code, st.reason ?? http.STATUS_CODES[code] ?? '', st.message ?? '', 'WATCH', path));
          });
          return;
        }
        resolveOpen({ done, abort: () => ac.abort() });
        // Past maxWatchLineBytes without a newline, the stream is closed (the informer then lists again).
        const lines = new LineSplitter((line) => {
          if (!line.trim()) return;
          let ev: WatchEvent<T>;
          try {
            ev = JSON.parse(line) as WatchEvent<T>;
          } catch {
            return;
          }
          onEvent(ev);
        }, this.maxWatchLineBytes);
        res.on('data', (c: Buffer) => {
          if (!lines.push(c)) res.destroy();
        });
        const end = () => resolveDone();
        res.on('end', () => lines.end());
        res.on('error', end);
        res.on('close', end);
      });
      req.on('error', (e) => {
        resolveDone();
        rejectOpen(new ApiError(0, 'TransportError', e.message, 'WATCH', path));
      });
      req.end();
    });
  }
}

/**
 * One TLS context (the CA, the client certificate and its key, parsed) for every connection of a
 * client's pools. Without it node:tls parses the PEMs again for each new connection: a konnector opens
 * a connection per worker after every idle spell (bench:konnector). Undefined when they do not parse:
 * each connection then fails with the TLS error as it would without a shared context.
 */
function sharedSecureContext(opts: Pick<https.RequestOptions, 'ca' | 'cert' | 'key'>): tls.SecureContext | undefined {
  try {
    return tls.createSecureContext({ ca: opts.ca, cert: opts.cert, key: opts.key });
  } catch {
    return undefined;
  }
}

/**
 * The TLS server name (SNI, and the name the certificate is checked against) of `base` as node:https
 * derives it from a request's host: the host name, or '' for an IP address. Given to the agents up front,
 * it is not derived again for every request.
 */
export function serverNameOf(base: URL): string {
  const host = base.hostname.startsWith('[') ? base.hostname.slice(1, -1) : base.hostname;
  return isIP(host) ? '' : host;
}

function isKubeConfig(s: ClusterAccess | KubeConfig): s is KubeConfig {
  return typeof (s as KubeConfig).applyToHTTPSOptions === 'function';
}

function withTypeMeta(r: ResourceRef, obj: KubeObject): KubeObject {
  if (obj.apiVersion && obj.kind) return obj;
  return { ...obj, apiVersion: obj.apiVersion ?? apiVersionOf(r), kind: obj.kind ?? r.kind };
}

/** Well-known built-in resources. */
export const CoreResources = {
  namespaces: { group: '', version: 'v1', plural: 'namespaces', namespaced: false, kind: 'Namespace' },
  secrets: { group: '', version: 'v1', plural: 'secrets', namespaced: true, kind: 'Secret' },
  configmaps: { group: '', version: 'v1', plural: 'configmaps', namespaced: true, kind: 'ConfigMap' },
  serviceaccounts: { group: '', version: 'v1', plural: 'serviceaccounts', namespaced: true, kind: 'ServiceAccount' },
  leases: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true, kind: 'Lease' },
  crds: {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    plural: 'customresourcedefinitions',
    namespaced: false,
    kind: 'CustomResourceDefinition',
  },
  roles: { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'roles', namespaced: true, kind: 'Role' },
  rolebindings: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: 'rolebindings',
    namespaced: true,
    kind: 'RoleBinding',
  },
  clusterroles: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: 'clusterroles',
    namespaced: false,
    kind: 'ClusterRole',
  },
  clusterrolebindings: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: 'clusterrolebindings',
    namespaced: false,
    kind: 'ClusterRoleBinding',
  },
} satisfies Record<string, ResourceRef>;

/** `namespace/name` (or `name` for cluster-scoped objects). */
export const keyOf = (o: { metadata: ObjectMeta }): string => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : `${o.metadata.name}`);

/** The parts of a {@link keyOf} key: `namespace/name`, or `name` alone (no namespace) for a cluster-scoped object. */
export const splitKey = (key: string): { namespace?: string; name: string } => {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
};
