/**
 * pullBase against an HTTP server on 127.0.0.1 that speaks the distribution API the way public registries
 * (gcr.io, ghcr.io) do for anonymous pulls: 401 with a `WWW-Authenticate: Bearer realm=…,service=…,scope=…`
 * challenge, a token endpoint, then the content with the token. The server serves a layout this test builds;
 * the client must follow the challenge, pick the platform from the index and check every digest.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { imageIndex, layerFromEntries, PLATFORMS, platformImage, type ImageIndex } from '../../runtime/image/oci.js';
import { pullBase } from '../../runtime/image/registry.js';

const dir = mkdtempSync(join(tmpdir(), 'klutch-image-pull-'));
let server: Server;
let port = 0;
let index: ImageIndex;
const blobs = new Map<string, Buffer>();
const tokenQueries: string[] = [];
let unauthorized = 0;
let tamper: string | undefined;

beforeAll(async () => {
  index = imageIndex(
    PLATFORMS.map((p) =>
      platformImage(p, [layerFromEntries([{ type: 'file', path: 'nodejs/bin/node', data: Buffer.from(`node for ${p.architecture}`), mode: 0o755 }])], {
        User: '65532',
        Entrypoint: ['/nodejs/bin/node'],
        Env: ['PATH=/usr/bin:/bin', 'SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt'],
      }),
    ),
  );
  blobs.set(index.descriptor.digest, index.index);
  for (const i of index.images) {
    blobs.set(i.descriptor.digest, i.manifest);
    blobs.set(JSON.parse(i.manifest.toString()).config.digest, i.config);
    for (const l of i.layers) blobs.set(l.descriptor.digest, l.blob);
  }
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
    if (url.pathname === '/token') {
      tokenQueries.push(url.search);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token: 'anon-token' }));
      return;
    }
    if (req.headers.authorization !== 'Bearer anon-token') {
      unauthorized++;
      res
        .writeHead(401, { 'www-authenticate': `Bearer realm="http://127.0.0.1:${port}/token",service="test-registry",scope="repository:base/node:pull"` })
        .end('{"errors":[{"code":"UNAUTHORIZED"}]}');
      return;
    }
    const m = /^\/v2\/base\/node\/(manifests|blobs)\/(sha256:[0-9a-f]{64})$/.exec(url.pathname);
    const data = m ? blobs.get(m[2]!) : undefined;
    if (!data) {
      res.writeHead(404).end();
      return;
    }
    const type = m![1] === 'manifests' ? JSON.parse(data.toString()).mediaType : 'application/octet-stream';
    res.writeHead(200, { 'content-type': type }).end(m![2] === tamper ? Buffer.concat([data, Buffer.from(' ')]) : data);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('pullBase', () => {
  it('follows the Bearer challenge once, picks each platform from the index and returns its config and layers', async () => {
    const ref = `127.0.0.1:${port}/base/node:nonroot@${index.descriptor.digest}`;
    const pulled = await pullBase(ref, PLATFORMS);
    expect(tokenQueries).toEqual(['?service=test-registry&scope=repository%3Abase%2Fnode%3Apull']);
    expect(unauthorized).toBe(1);
    for (const [i, p] of PLATFORMS.entries()) {
      const b = pulled.get(p.architecture)!;
      expect(b.manifestDigest).toBe(index.images[i]!.descriptor.digest);
      expect(b.config.architecture).toBe(p.architecture);
      expect(b.config.config.Entrypoint).toEqual(['/nodejs/bin/node']);
      expect(b.layers.map((l) => l.blob)).toEqual(index.images[i]!.layers.map((l) => l.blob));
      expect(b.layers.map((l) => l.diffId)).toEqual(index.images[i]!.layers.map((l) => l.diffId));
    }
  });

  it('caches blobs by digest, and refuses content that does not match its digest', async () => {
    const ref = `127.0.0.1:${port}/base/node@${index.descriptor.digest}`;
    const cacheDir = join(dir, 'cache');
    await pullBase(ref, [PLATFORMS[0]!], { cacheDir });
    tamper = index.images[0]!.layers[0]!.descriptor.digest;
    await expect(pullBase(ref, [PLATFORMS[0]!])).rejects.toThrow(`blobs/${tamper}: the registry sent content with digest sha256:`);
    // With the cache, the layer is not fetched again: the tampering server is not asked for it.
    await expect(pullBase(ref, [PLATFORMS[0]!], { cacheDir })).resolves.toBeDefined();
    tamper = undefined;
    await expect(pullBase(`127.0.0.1:${port}/base/node@sha256:${'0'.repeat(64)}`, [PLATFORMS[0]!])).rejects.toThrow(': 404');
  });
});
