// REST paths of arbitrary kinds through API discovery, for callers that handle manifests of kinds
// they do not know in advance (server-side apply of a synthesized topology, the test harness).
import { ApiError, type KubeClient } from './client.js';

/** One resource of an API group version as discovery lists it. */
export interface DiscoveredResource {
  readonly name: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

/** An object's identity as far as its REST path is concerned. */
export interface ObjectIdentity {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
}

const basePath = (apiVersion: string): string => (apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`);

/** Resolves `apiVersion` + `kind` to a REST path through discovery, with a per-instance cache. */
export class ResourcePaths {
  private readonly cache = new Map<string, DiscoveredResource[]>();

  constructor(private readonly client: KubeClient) {}

  private async resources(apiVersion: string, refresh: boolean): Promise<DiscoveredResource[]> {
    if (!refresh) {
      const hit = this.cache.get(apiVersion);
      if (hit) return hit;
    }
    const list = await this.client.request<{ resources: DiscoveredResource[] }>('GET', basePath(apiVersion));
    const resources = list.resources.filter((r) => !r.name.includes('/'));
    this.cache.set(apiVersion, resources);
    return resources;
  }

  /**
   * The resource of a kind; refreshes discovery once when the kind is not (yet) known. A kind the
   * server does not serve is an ApiError 404 with method `DISCOVER` naming the kind.
   */
  async resource(apiVersion: string, kind: string): Promise<DiscoveredResource> {
    let found = (await this.resources(apiVersion, false).catch(() => [])).find((r) => r.kind === kind);
    if (!found) {
      try {
        found = (await this.resources(apiVersion, true)).find((r) => r.kind === kind);
      } catch (e) {
        if (e instanceof ApiError && e.code === 404) {
          throw new ApiError(404, 'NotFound', `the API server does not serve ${apiVersion} (kind ${kind}); is its CRD installed?`, 'DISCOVER', apiVersion);
        }
        throw e;
      }
    }
    if (!found) throw new ApiError(404, 'NotFound', `the API server serves ${apiVersion} but has no kind ${kind}`, 'DISCOVER', apiVersion);
    return found;
  }

  /** `/apis/g/v/namespaces/ns/plural/name` (or cluster-scoped) for an object. */
  async objectPath(obj: ObjectIdentity, defaultNamespace = 'default'): Promise<string> {
    const r = await this.resource(obj.apiVersion, obj.kind);
    const ns = r.namespaced ? `/namespaces/${encodeURIComponent(obj.metadata.namespace ?? defaultNamespace)}` : '';
    return `${basePath(obj.apiVersion)}${ns}/${r.name}/${encodeURIComponent(obj.metadata.name)}`;
  }

  /** The collection path of a kind (`…/namespaces/ns/plural` or `…/plural`). */
  async collectionPath(apiVersion: string, kind: string, namespace?: string): Promise<string> {
    const r = await this.resource(apiVersion, kind);
    const ns = r.namespaced && namespace !== undefined ? `/namespaces/${encodeURIComponent(namespace)}` : '';
    return `${basePath(apiVersion)}${ns}/${r.name}`;
  }
}

/** True when `e` says a kind is not (yet) served — discovery had no such kind. */
export const isKindNotServed = (e: unknown): boolean => e instanceof ApiError && e.code === 404 && e.method === 'DISCOVER';
