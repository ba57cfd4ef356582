/**
 * Registry side of runtime images: pulling a base image named by digest (anonymous pull, with the
 * distribution token flow that public registries such as gcr.io and ghcr.io ask for), and pushing a
 * multi-platform image of an OCI layout with the blob and manifest calls of runtime/xpkg/push.ts.
 */
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isLoopbackRegistry, parseImageRef, pushBlob, putManifest, repositoryUrl, type PushOptions } from '../xpkg/push.js';
import {
  DOCKER_LAYER_GZIP,
  DOCKER_MANIFEST,
  DOCKER_MANIFEST_LIST,
  OCI_INDEX,
  OCI_LAYER_GZIP,
  OCI_MANIFEST,
  layoutIndex,
  readLayoutBlob,
  sha256,
  type Descriptor,
  type ImageConfig,
  type Layer,
  type Platform,
} from './oci.js';

/** `<registry>/<repository>@sha256:<hex>` (a tag before the digest is allowed and ignored). */
export interface DigestRef {
  readonly registry: string;
  readonly repository: string;
  readonly digest: string;
}

const DIGEST_REF =
  /^((?:[a-zA-Z0-9-]+\.)*[a-zA-Z0-9-]+(?::[0-9]+)?|\[[0-9a-fA-F:]+\](?::[0-9]+)?)\/([a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*)(?::[\w][\w.-]{0,127})?@(sha256:[0-9a-f]{64})$/;

/** Parses a base image reference pinned by digest; throws naming the value and how to find a digest. */
export function parseDigestRef(ref: string): DigestRef {
  const m = DIGEST_REF.exec(ref);
  if (!m) {
    throw new Error(
      `base image ${JSON.stringify(ref)} is not "<registry>/<repository>@sha256:<64 hex>" (a base is named by digest so builds are reproducible; ` +
        `find the digest of a tag with \`crane digest <registry>/<repository>:<tag>\`), or "local"`,
    );
  }
  return { registry: m[1]!, repository: m[2]!, digest: m[3]! };
}

export interface PullOptions {
  readonly fetch?: typeof fetch;
  /** Folder of blobs already pulled (content-addressed, checked on read). @default - none */
  readonly cacheDir?: string;
  readonly log?: (line: string) => void;
}

/** A base image for one platform: its config and its layers (compressed blobs as the registry serves them). */
export interface BaseImage {
  readonly config: ImageConfig;
  readonly layers: readonly Layer[];
  /** The digest of the platform manifest. */
  readonly manifestDigest: string;
}

const ACCEPT = [OCI_INDEX, OCI_MANIFEST, DOCKER_MANIFEST_LIST, DOCKER_MANIFEST].join(', ');

/** A fetch that answers a `401` with a `WWW-Authenticate: Bearer …` challenge by getting an anonymous token once. */
function anonymousFetch(f: typeof fetch, scope: string): (url: string, init?: RequestInit) => Promise<Response> {
  let token: string | undefined;
  return async (url, init = {}) => {
    const send = () => f(url, { ...init, headers: { ...(init.headers as Record<string, string>), ...(token ? { authorization: `Bearer ${token}` } : {}) } });
    let res = await send();
    if (res.status !== 401 || token) return res;
    const challenge = res.headers.get('www-authenticate') ?? '';
    await res.arrayBuffer().catch(() => undefined);
    const m = /^Bearer\s+(.*)$/i.exec(challenge);
    if (!m) return res;
    const params = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1]!.toLowerCase(), x[2]!]));
    if (!params['realm']) return res;
    const t = new URL(params['realm']);
    if (params['service']) t.searchParams.set('service', params['service']);
    t.searchParams.set('scope', params['scope'] ?? scope);
    const tr = await f(t);
    if (!tr.ok) throw new Error(`anonymous token from ${t.origin}${t.pathname}: ${tr.status} ${tr.statusText} (klutch-kit pulls public base images only)`);
    const body = (await tr.json()) as { token?: string; access_token?: string };
    token = body.token ?? body.access_token;
    if (!token) throw new Error(`anonymous token from ${t.origin}${t.pathname}: the answer holds no token`);
    res = await send();
    return res;
  };
}

/** Pulls `ref` (pinned by digest) for each platform; every blob is checked against its digest. */
export async function pullBase(ref: string, platforms: readonly Platform[], opts: PullOptions = {}): Promise<Map<string, BaseImage>> {
  const r = parseDigestRef(ref);
  const base = repositoryUrl(r);
  const get = anonymousFetch(opts.fetch ?? globalThis.fetch, `repository:${r.repository}:pull`);
  const fetchChecked = async (path: string, digest: string, accept?: string): Promise<{ data: Buffer; type: string }> => {
    const cached = opts.cacheDir ? join(opts.cacheDir, digest.replace(':', '-')) : undefined;
    if (cached && statSync(cached, { throwIfNoEntry: false })) {
      const data = readFileSync(cached);
      if (sha256(data) === digest) return { data, type: '' };
    }
    const res = await get(`${base}/${path}/${digest}`, accept ? { headers: { accept } } : {}).catch((e: unknown) => {
      throw new Error(
        `pull ${ref}: cannot reach ${isLoopbackRegistry(r.registry) ? 'the registry' : r.registry} (${e instanceof Error ? ((e.cause as Error)?.message ?? e.message) : String(e)}); ` +
          `without a route to it, build with --base local`,
      );
    });
    if (!res.ok) throw new Error(`pull ${ref}: GET ${path}/${digest}: ${res.status} ${res.statusText}`);
    const data = Buffer.from(await res.arrayBuffer());
    if (sha256(data) !== digest) throw new Error(`pull ${ref}: ${path}/${digest}: the registry sent content with digest ${sha256(data)}`);
    if (cached) {
      mkdirSync(opts.cacheDir!, { recursive: true });
      writeFileSync(`${cached}.tmp-${process.pid}`, data);
      renameSync(`${cached}.tmp-${process.pid}`, cached);
    }
    return { data, type: res.headers.get('content-type') ?? '' };
  };
  const top = await fetchChecked('manifests', r.digest, ACCEPT);
  const topDoc = JSON.parse(top.data.toString('utf8')) as { mediaType?: string; manifests?: Descriptor[]; config?: Descriptor; layers?: Descriptor[] };
  const out = new Map<string, BaseImage>();
  for (const p of platforms) {
    let manifest = topDoc;
    let manifestDigest = r.digest;
    if (topDoc.manifests) {
      const d = topDoc.manifests.find((m) => m.platform?.os === p.os && m.platform?.architecture === p.architecture);
      if (!d)
        throw new Error(
          `pull ${ref}: the index has no ${p.os}/${p.architecture} image (it has ${topDoc.manifests.map((m) => `${m.platform?.os}/${m.platform?.architecture}`).join(', ')})`,
        );
      manifestDigest = d.digest;
      manifest = JSON.parse((await fetchChecked('manifests', d.digest, ACCEPT)).data.toString('utf8')) as typeof topDoc;
    }
    if (!manifest.config || !manifest.layers) throw new Error(`pull ${ref}: manifest ${manifestDigest} has no config or layers`);
    const config = JSON.parse((await fetchChecked('blobs', manifest.config.digest)).data.toString('utf8')) as ImageConfig;
    if (config.architecture !== p.architecture || config.os !== p.os) {
      throw new Error(`pull ${ref}: the ${p.os}/${p.architecture} image's config says ${config.os}/${config.architecture}`);
    }
    const layers: Layer[] = [];
    for (const [i, l] of manifest.layers.entries()) {
      if (l.mediaType !== OCI_LAYER_GZIP && l.mediaType !== DOCKER_LAYER_GZIP)
        throw new Error(`pull ${ref}: layer ${l.digest} has media type ${l.mediaType}; only gzip layers are supported`);
      const blob = (await fetchChecked('blobs', l.digest)).data;
      layers.push({ blob, descriptor: { mediaType: OCI_LAYER_GZIP, digest: l.digest, size: l.size }, diffId: config.rootfs.diff_ids[i]! });
    }
    opts.log?.(`base ${ref} ${p.os}/${p.architecture}: ${layers.length} layer(s), manifest ${manifestDigest}`);
    out.set(p.architecture, { config, layers, manifestDigest });
  }
  return out;
}

export interface LayoutPushResult {
  /** `<registry>/<repository>:<tag>@<index digest>`. */
  readonly pinned: string;
  readonly digest: string;
  readonly uploaded: number;
}

/** Pushes the image `name` of an OCI layout (an index and its platform manifests) as `ref` (`<registry>/<repository>:<tag>`). */
export async function pushLayoutImage(layout: string, name: string, ref: string, opts: PushOptions = {}): Promise<LayoutPushResult> {
  const r = parseImageRef(ref);
  const named = layoutIndex(layout)[name];
  if (!named) throw new Error(`image layout ${layout} has no image named ${JSON.stringify(name)} (it has ${Object.keys(layoutIndex(layout)).join(', ')})`);
  const base = repositoryUrl(r);
  const index = readLayoutBlob(layout, named.digest);
  const doc = JSON.parse(index.toString('utf8')) as { manifests: Descriptor[] };
  let uploaded = 0;
  for (const md of doc.manifests) {
    const manifest = readLayoutBlob(layout, md.digest);
    const mdoc = JSON.parse(manifest.toString('utf8')) as { config: Descriptor; layers: Descriptor[] };
    for (const [i, b] of [...mdoc.layers, mdoc.config].entries()) {
      const what = i === mdoc.layers.length ? 'config' : `layer ${i + 1}/${mdoc.layers.length}`;
      if (await pushBlob(ref, base, b.digest, () => readLayoutBlob(layout, b.digest), `${md.platform?.architecture ?? ''} ${what}`, opts)) uploaded++;
    }
    await putManifest(ref, base, md.digest, manifest, OCI_MANIFEST, md.digest, opts);
  }
  await putManifest(ref, base, r.tag, index, OCI_INDEX, named.digest, opts);
  opts.log?.(`index ${named.digest}: ${ref}`);
  return { pinned: `${ref}@${named.digest}`, digest: named.digest, uploaded };
}
