// A minimal raw REST client on top of a KubeConfig. The typed @kubernetes/client-node clients
// (KubernetesObjectApi included) serialize request bodies through their generated models, which
// silently drops wire-format keys they do not model — notably `x-kubernetes-validations`,
// `x-kubernetes-preserve-unknown-fields` and `$ref` inside CRD schemas. Manifests are therefore sent
// as-is, in JSON, through this client.
import * as http from 'node:http';
import * as https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** A non-2xx answer of the API server. */
export class KubeApiError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly reason: string | undefined,
    readonly apiMessage: string,
    readonly body: unknown,
  ) {
    super(`${method} ${path}: ${status}${reason ? ` ${reason}` : ''}: ${apiMessage}`);
    this.name = 'KubeApiError';
  }
}

export interface RawRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path with query string, e.g. `/api/v1/namespaces?limit=1`. */
  readonly path: string;
  readonly body?: unknown;
  /** @default application/json when a body is given */
  readonly contentType?: string;
  /** @default 30000 */
  readonly timeoutMs?: number;
}

/** Sends one request to the current cluster of `kc`; resolves to the parsed JSON answer, rejects with KubeApiError. */
export async function kubeRequest<T = unknown>(kc: KubeConfig, req: RawRequest): Promise<T> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeRequest: the KubeConfig has no current cluster');
  const url = new URL(req.path, cluster.server);
  const opts: https.RequestOptions = {
    method: req.method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port,
    path: `${url.pathname}${url.search}`,
    headers: { Accept: 'application/json' },
    agent: false,
  };
  await kc.applyToHTTPSOptions(opts);
  const payload = req.body === undefined ? undefined : typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
  if (payload !== undefined) {
    opts.headers = { ...opts.headers, 'Content-Type': req.contentType ?? 'application/json', 'Content-Length': Buffer.byteLength(payload) };
  }
  const mod = url.protocol === 'https:' ? https : http;
  const timeoutMs = req.timeoutMs ?? 30_000;
  return new Promise<T>((resolve, reject) => {
    const r = mod.request(opts, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        let parsed: unknown = text;
        try {
          parsed = text === '' ? undefined : JSON.parse(text);
        } catch {
          // not JSON: keep the text
        }
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          resolve(parsed as T);
          return;
        }
        const p = parsed as { message?: string; reason?: string } | undefined;
        reject(new KubeApiError(req.method, opts.path!, status, p?.reason, p?.message ?? String(text).slice(0, 500), parsed));
      });
    });
    r.setTimeout(timeoutMs, () => r.destroy(new Error(`${req.method} ${opts.path}: no answer within ${timeoutMs / 1000} s`)));
    r.on('error', reject);
    if (payload !== undefined) r.write(payload);
    r.end();
  });
}

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

/** Resolves `apiVersion` + `kind` to a REST path through discovery, with a per-instance cache. */
export class ResourcePaths {
  private readonly cache = new Map<string, ApiResource[]>();

  constructor(private readonly kc: KubeConfig) {}

  private async resources(apiVersion: string, refresh: boolean): Promise<ApiResource[]> {
    if (!refresh) {
      const hit = this.cache.get(apiVersion);
      if (hit) return hit;
    }
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const list = await kubeRequest<{ resources: ApiResource[] }>(this.kc, { method: 'GET', path: base });
    const resources = list.resources.filter((r) => !r.name.includes('/'));
    this.cache.set(apiVersion, resources);
    return resources;
  }

  /** The resource of a kind; refreshes discovery once when the kind is not (yet) known. */
  async resource(apiVersion: string, kind: string): Promise<ApiResource> {
    let found = (await this.resources(apiVersion, false).catch(() => [])).find((r) => r.kind === kind);
    if (!found) {
      try {
        found = (await this.resources(apiVersion, true)).find((r) => r.kind === kind);
      } catch (e) {
        if (e instanceof KubeApiError && e.status === 404) {
          throw new KubeApiError('GET', apiVersion, 404, 'NotFound', `the API server does not serve ${apiVersion} (kind ${kind}); is its CRD installed?`, e.body);
        }
        throw e;
      }
    }
    if (!found) throw new KubeApiError('GET', apiVersion, 404, 'NotFound', `the API server serves ${apiVersion} but has no kind ${kind}`, undefined);
    return found;
  }

  /** `/apis/g/v/namespaces/ns/plural/name` (or cluster-scoped) for an object. */
  async objectPath(obj: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }, defaultNamespace = 'default'): Promise<string> {
    const r = await this.resource(obj.apiVersion, obj.kind);
    const base = obj.apiVersion.includes('/') ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`;
    const ns = r.namespaced ? `/namespaces/${encodeURIComponent(obj.metadata.namespace ?? defaultNamespace)}` : '';
    return `${base}${ns}/${r.name}/${encodeURIComponent(obj.metadata.name)}`;
  }
}
