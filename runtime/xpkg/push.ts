/**
 * Pushes images to an OCI registry with the distribution API (blob upload: POST then a monolithic
 * PUT; then the manifest PUT): Crossplane package images here, and through `pushBlob` /
 * `putManifest` the multi-platform runtime images of runtime/image. Registries on loopback (127.0.0.0/8, localhost, [::1]) are
 * spoken to over plain HTTP, every other over HTTPS; registries that ask for authentication are not
 * supported (the error says so).
 */
import type { PackageImage } from './image.js';
import { OCI_MANIFEST_MEDIA_TYPE } from './image.js';

/** A parsed image reference `<registry>/<repository>:<tag>`. */
export interface ImageRef {
  readonly registry: string;
  readonly repository: string;
  readonly tag: string;
}

const REF =
  /^((?:[a-zA-Z0-9-]+\.)*[a-zA-Z0-9-]+(?::[0-9]+)?|\[[0-9a-fA-F:]+\](?::[0-9]+)?)\/([a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*):([\w][\w.-]{0,127})$/;

/** Parses `<registry>/<repository>:<tag>`; throws naming the reference. */
export function parseImageRef(ref: string): ImageRef {
  const m = typeof ref === 'string' ? REF.exec(ref) : null;
  if (!m) throw new Error(`image reference ${JSON.stringify(ref)} is not "<registry>/<repository>:<tag>" (e.g. "127.0.0.1:5000/klutch/catalogue:v0.1.0")`);
  return { registry: m[1], repository: m[2], tag: m[3] };
}

/** Whether a registry host is on loopback (spoken to over plain HTTP). */
export function isLoopbackRegistry(registry: string): boolean {
  const host = registry.startsWith('[') ? registry.slice(1, registry.indexOf(']')) : registry.replace(/:[0-9]+$/, '');
  return host === 'localhost' || host === '::1' || /^127\.[0-9]+\.[0-9]+\.[0-9]+$/.test(host);
}

export interface PushOptions {
  /** fetch implementation (tests). @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** Progress lines. @default - none */
  readonly log?: (line: string) => void;
}

export interface PushResult {
  /** `<registry>/<repository>@<digest>`. */
  readonly pinned: string;
  readonly digest: string;
  /** Blobs uploaded (blobs the registry already had are skipped). */
  readonly uploaded: number;
}

/** Reads the body to the end, so the connection goes back to the pool (an unread body holds it). */
const drain = async (res: Response): Promise<void> => {
  await res.arrayBuffer().catch(() => undefined);
};

async function check(res: Response, what: string, ok: number[]): Promise<Response> {
  if (ok.includes(res.status)) {
    await drain(res);
    return res;
  }
  const body = (await res.text().catch(() => '')).slice(0, 300);
  if (res.status === 401 || res.status === 403) {
    throw new Error(
      `${what}: the registry answered ${res.status} (authentication required); klutch-kit package push only talks to registries without authentication`,
    );
  }
  throw new Error(`${what}: the registry answered ${res.status} ${res.statusText}${body ? `: ${body}` : ''}`);
}

/** `http(s)://<registry>/v2/<repository>` of a parsed reference. */
export const repositoryUrl = (r: { registry: string; repository: string }): string =>
  `${isLoopbackRegistry(r.registry) ? 'http' : 'https'}://${r.registry}/v2/${r.repository}`;

/**
 * Uploads one blob unless the registry has it (HEAD first): POST to start, then a monolithic PUT.
 * `data` is read only when the blob is missing. Returns whether it was uploaded.
 */
export async function pushBlob(ref: string, base: string, digest: string, data: () => Buffer, what: string, opts: PushOptions = {}): Promise<boolean> {
  const f = opts.fetch ?? globalThis.fetch;
  const head = await f(`${base}/blobs/${digest}`, { method: 'HEAD' }).catch((e: unknown) => {
    throw new Error(`push ${ref}: cannot reach the registry at ${base} (${e instanceof Error ? ((e.cause as Error)?.message ?? e.message) : String(e)})`);
  });
  await drain(head);
  if (head.status === 200) {
    opts.log?.(`${what} ${digest}: already in the registry`);
    return false;
  }
  const start = await check(await f(`${base}/blobs/uploads/`, { method: 'POST' }), `push ${ref}: start ${what} upload`, [202]);
  const location = start.headers.get('location');
  if (!location) throw new Error(`push ${ref}: start ${what} upload: the registry sent no Location header`);
  const url = new URL(location, `${base}/blobs/uploads/`);
  url.searchParams.set('digest', digest);
  const body = data();
  await check(
    await f(url, { method: 'PUT', body, headers: { 'content-type': 'application/octet-stream', 'content-length': String(body.length) } }),
    `push ${ref}: upload ${what} ${digest}`,
    [201, 204],
  );
  opts.log?.(`${what} ${digest}: uploaded (${body.length} bytes)`);
  return true;
}

/** PUTs a manifest (or index) under `reference` (a tag or a digest); checks the digest the registry reports. */
export async function putManifest(
  ref: string,
  base: string,
  reference: string,
  body: Buffer,
  mediaType: string,
  digest: string,
  opts: PushOptions = {},
): Promise<void> {
  const f = opts.fetch ?? globalThis.fetch;
  const res = await check(
    await f(`${base}/manifests/${reference}`, { method: 'PUT', body, headers: { 'content-type': mediaType } }),
    `push ${ref}: put manifest ${reference}`,
    [200, 201, 204],
  );
  const sent = res.headers.get('docker-content-digest');
  if (sent && sent !== digest) throw new Error(`push ${ref}: the registry stored the manifest as ${sent}, expected ${digest}`);
}

/** Pushes the image as `ref` (`<registry>/<repository>:<tag>`). */
export async function pushPackageImage(image: PackageImage, ref: string, opts: PushOptions = {}): Promise<PushResult> {
  const r = parseImageRef(ref);
  const base = repositoryUrl(r);
  let uploaded = 0;
  const blobs: Array<[string, Buffer, string]> = [
    [image.layerDescriptor.digest, image.layer, 'layer'],
    [image.configDescriptor.digest, image.config, 'config'],
  ];
  for (const [digest, data, what] of blobs) if (await pushBlob(ref, base, digest, () => data, what, opts)) uploaded++;
  await putManifest(ref, base, r.tag, image.manifest, OCI_MANIFEST_MEDIA_TYPE, image.digest, opts);
  opts.log?.(`manifest ${image.digest}: ${ref}`);
  return { pinned: `${r.registry}/${r.repository}@${image.digest}`, digest: image.digest, uploaded };
}
