import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { CompactEncrypt } from 'jose';
import {
  decodeBindingResponse,
  encodeBindingResponse,
  isLoopbackRedirect,
  newBindingResponse,
  responseKubeconfig,
  type BindingResponse,
} from '../../../contract/wire.js';
import { ReplayCache, SealError, Sealer, parseCookieKeys } from '../../../runtime/backend/seal.js';
import { parseBackendOptions, parseDuration } from '../../../runtime/backend/options.js';
import { parseGoDuration } from '../../../runtime/backend/controllers.js';
import { base62Sha224, crdSpecHash, exportSpecFromCrd, stableJson } from '../../../runtime/backend/export.js';
import { exportRequestFor, externalCluster, identityHash, renderKubeconfig, validateNamespacePrefix } from '../../../runtime/backend/binder.js';
import { KubeClient } from '../../../runtime/core/index.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Crd } from '../../../runtime/backend/catalog.js';
import { errorPage, resourcesPage } from '../../../runtime/backend/html.js';

const response = (): BindingResponse =>
  newBindingResponse({
    sessionID: 'abc123',
    identity: 'https://issuer.example/user-1',
    kubeconfig: 'apiVersion: v1\nkind: Config\n# ~~~ ??? >>> bytes that give + and / in base64 ~~~\n',
    requests: [{ metadata: { name: 'mangodbs.mangodb.com' }, spec: { resources: [{ group: 'mangodb.com', resource: 'mangodbs' }] } } as never],
  });

describe('BindingResponse encoding (compatible with Klutch both ways)', () => {
  it("encodes standard base64 (what Klutch's CLI decodes) and round-trips", () => {
    const enc = encodeBindingResponse(response());
    expect(enc).toMatch(/^[A-Za-z0-9+/]+=*$/);
    // Go's shape: each request carries `"status":{}` (a struct field), as Klutch's backend writes it
    const want = response();
    (want.requests[0] as { status?: unknown }).status = {};
    expect(Buffer.from(enc, 'base64').toString()).toBe(JSON.stringify(want));
    const dec = decodeBindingResponse(enc);
    expect(dec).toEqual(want);
    expect(responseKubeconfig(dec)).toContain('kind: Config');
  });

  it("decodes Klutch's backend encoding (padded base64url)", () => {
    // pick a payload whose base64url has - or _, where the two alphabets differ
    let r = response();
    for (let i = 0; !/[-_]/.test(Buffer.from(JSON.stringify(r)).toString('base64url')); i++) {
      r = { ...r, authentication: { oauth2CodeGrant: { sid: 'abc123', id: `https://issuer.example/${'?'.repeat(i)}>~` } } };
    }
    const url = Buffer.from(JSON.stringify(r)).toString('base64url');
    const padded = url + '='.repeat((4 - (url.length % 4)) % 4);
    expect(decodeBindingResponse(padded)).toEqual(r);
    expect(decodeBindingResponse(url)).toEqual(r);
  });

  it('refuses other kinds, missing sid, empty requests, junk — naming the field', () => {
    const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64');
    expect(() => decodeBindingResponse('')).toThrow(/response: empty/);
    expect(() => decodeBindingResponse('%%%')).toThrow(/not base64/);
    expect(() => decodeBindingResponse(enc({ ...response(), kind: 'Other' }))).toThrow(/unexpected type klutch.anynines.com\/v1alpha1\/Other/);
    expect(() => decodeBindingResponse(enc({ ...response(), authentication: {} }))).toThrow(/oauth2CodeGrant: missing/);
    expect(() => decodeBindingResponse(enc({ ...response(), requests: [{ apiVersion: 'v1', kind: 'Pod' }] }))).toThrow(/requests\[0\]: is v1\/Pod/);
    expect(() => decodeBindingResponse(Buffer.from('not json').toString('base64'))).toThrow(/not JSON/);
  });

  it('accepts only loopback http callbacks with a port', () => {
    for (const ok of ['http://127.0.0.1:8080/callback', 'http://localhost:1/cb', 'http://[::1]:9000/callback']) expect(isLoopbackRedirect(ok)).toBe(true);
    for (const bad of [
      'https://127.0.0.1:8080/callback',
      'http://127.0.0.1/callback',
      'http://127.0.0.1.nip.io:80/x',
      'http://evil.example:8080/',
      'http://user:pw@127.0.0.1:80/',
      'http://10.0.0.1:80/',
      'javascript:alert(1)',
      'not a url',
    ]) {
      expect(isLoopbackRedirect(bad)).toBe(false);
    }
  });
});

describe('sealed state and sessions', () => {
  const keys = () => parseCookieKeys(randomBytes(32).toString('base64'), randomBytes(32).toString('base64'));

  it('round-trips, is encrypted (no plaintext), and refuses tampering, other keys, other purposes, expiry', async () => {
    const s = new Sealer(keys());
    const token = await s.seal('state', { red: 'http://127.0.0.1:1234/callback', sid: 'secret-sid' }, 60);
    expect(token.split('.')).toHaveLength(5);
    expect(token).not.toContain('127.0.0.1');
    expect(Buffer.from(token.split('.')[3], 'base64url').toString('latin1')).not.toContain('secret-sid');
    await expect(s.open('state', 'state', token)).resolves.toMatchObject({ sid: 'secret-sid' });
    const tampered = token.slice(0, -5) + (token.at(-5) === 'A' ? 'B' : 'A') + token.slice(-4);
    await expect(s.open('state', 'state', tampered)).rejects.toThrow(/state: cannot be decrypted/);
    await expect(new Sealer(keys()).open('state', 'state', token)).rejects.toThrow(SealError);
    await expect(s.open('session', 'session', token)).rejects.toThrow(/session: invalid/);
    const expired = await s.seal('state', { a: 1 }, -10);
    await expect(s.open('state', 'state', expired)).rejects.toThrow(/state: expired/);
    await expect(s.open('state', 'state', '')).rejects.toThrow(/state: missing/);
  });

  it('refuses an encrypted but unsigned payload (encryption alone is not enough)', async () => {
    const k = keys();
    const forged = await new CompactEncrypt(new TextEncoder().encode('{"sid":"x"}'))
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', cty: 'JWT' })
      .encrypt(k.encryption);
    await expect(new Sealer(k).open('state', 'state', forged)).rejects.toThrow(/state: invalid/);
  });

  it('validates key sizes with the flag name and a hint', () => {
    expect(() => parseCookieKeys(randomBytes(20).toString('base64'), undefined)).toThrow(/--cookie-signing-key: decodes to 20 bytes, expected 32 or 64/);
    expect(() => parseCookieKeys(randomBytes(32).toString('base64'), randomBytes(8).toString('base64'))).toThrow(/--cookie-encryption-key: decodes to 8 bytes/);
    expect(() => parseCookieKeys('***', undefined)).toThrow(/--cookie-signing-key: .* is not base64/);
    expect(parseCookieKeys(undefined, undefined).encryption).toHaveLength(32);
  });

  it('single use: a replay cache refuses the second use', () => {
    const c = new ReplayCache();
    const exp = Date.now() / 1000 + 60;
    expect(c.use('a', exp)).toBe(true);
    expect(c.use('a', exp)).toBe(false);
    expect(c.use('b', exp)).toBe(true);
  });
});

describe('klutch-backend flags', () => {
  const base = ['--oidc-issuer-url=https://issuer.example', '--oidc-issuer-client-id=cid'];
  it('parses Klutch-compatible flags and defaults', () => {
    const o = parseBackendOptions([...base, '--consumer-scope', 'cluster', '--namespace-prefix', 'kube-bind', '--pretty-name', 'ACME'], {});
    expect(o).toMatchObject({
      consumerScope: 'Cluster',
      namespacePrefix: 'kube-bind',
      prettyName: 'ACME',
      listenAddress: '127.0.0.1:8080',
      tokenTtl: 86400,
      controllers: true,
    });
    expect(parseBackendOptions(base, { OIDC_CLIENT_SECRET: 's3', COOKIE_SIGNING_KEY: 'k' })).toMatchObject({
      oidcIssuerClientSecret: 's3',
      cookieSigningKey: 'k',
    });
  });
  it('names the flag and the value on errors', () => {
    expect(() => parseBackendOptions(['--oidc-issuer-client-id=x'], {})).toThrow('--oidc-issuer-url: required');
    expect(() => parseBackendOptions([...base, '--consumer-scope', 'galaxy'], {})).toThrow(/--consumer-scope: "galaxy" is neither Namespaced nor Cluster/);
    expect(() => parseBackendOptions([...base, '--listen-address', 'nohost'], {})).toThrow(/--listen-address: "nohost" is not host:port/);
    expect(() => parseBackendOptions([...base, '--token-ttl', '5m'], {})).toThrow(/--token-ttl: "5m" is shorter than the minimum of 600s/);
    expect(() => parseBackendOptions([...base, '--tls-cert-file', 'a.pem'], {})).toThrow(/set both or neither/);
    expect(() => parseBackendOptions([...base, '--state-ttl', 'soon'], {})).toThrow(/--state-ttl: "soon" is not a duration/);
  });
  it('--credential-max-life: 30 days by default, at least 10m and not below --token-ttl; --klutch-konnector-compat off by default', () => {
    expect(parseBackendOptions(base, {})).toMatchObject({ credentialMaxLife: 30 * 86400, klutchKonnectorCompat: false });
    expect(parseBackendOptions([...base, '--credential-max-life', '168h', '--klutch-konnector-compat'], {})).toMatchObject({
      credentialMaxLife: 7 * 86400,
      klutchKonnectorCompat: true,
    });
    expect(() => parseBackendOptions([...base, '--credential-max-life', '5m'], {})).toThrow(/--credential-max-life: "5m" is shorter than the minimum of 600s/);
    expect(() => parseBackendOptions([...base, '--credential-max-life', '2h'], {})).toThrow(
      '--credential-max-life: 7200s is shorter than --token-ttl (86400s); raise --credential-max-life or lower --token-ttl',
    );
    expect(parseBackendOptions([...base, '--credential-max-life', '2h', '--token-ttl', '1h'], {}).credentialMaxLife).toBe(7200);
  });
  it('durations', () => {
    expect(parseDuration('x', '90s')).toBe(90);
    expect(parseDuration('x', '1h30m')).toBe(5400);
    expect(parseDuration('x', '120')).toBe(120);
    expect(parseGoDuration('5m0s')).toBe(300_000);
    expect(parseGoDuration('1h0m0s')).toBe(3_600_000);
    expect(parseGoDuration('500ms')).toBe(500);
    expect(parseGoDuration('bogus')).toBeUndefined();
  });
  it('namespace prefix must leave room for the hash', () => {
    expect(validateNamespacePrefix('cluster')).toBe('cluster');
    expect(() => validateNamespacePrefix('Cluster_')).toThrow(/--namespace-prefix: "Cluster_" is not a DNS label/);
    expect(() => validateNamespacePrefix('a'.repeat(51))).toThrow(/at most 50/);
  });
});

describe('exports from CRDs', () => {
  const crd = (over: Partial<Crd['spec']> = {}): Crd => ({
    metadata: { name: 'things.example.io' },
    spec: {
      group: 'example.io',
      names: { kind: 'Thing', plural: 'things' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v2',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object' } },
          subresources: { status: {} },
          additionalPrinterColumns: [{ name: 'A', type: 'string', jsonPath: '.a' }],
        },
        { name: 'v1', served: true, storage: false, deprecated: true, schema: { openAPIV3Schema: { type: 'object' } } },
        { name: 'v0', served: false, storage: false, schema: { openAPIV3Schema: { type: 'object' } } },
      ],
      ...over,
    },
  });
  it('keeps served versions with schema, subresources and printer columns; claims; informer scope', () => {
    const s = exportSpecFromCrd(crd(), { informerScope: 'Namespaced', permissionClaims: [{ group: '', resource: 'secrets', version: 'v1' } as never] });
    expect(s.versions.map((v) => v.name)).toEqual(['v2', 'v1']);
    expect(s.versions[0]).toMatchObject({ storage: true, subresources: { status: {} }, additionalPrinterColumns: [{ name: 'A' }] });
    expect(s.versions[1]).toMatchObject({ deprecated: true, storage: false });
    expect(s.permissionClaims).toHaveLength(1);
    expect(s.informerScope).toBe('Namespaced');
    expect(s.clusterScopedIsolation).toBeUndefined();
  });
  it('webhook conversion: only the storage version; cluster scope gets isolation', () => {
    expect(exportSpecFromCrd(crd({ conversion: { strategy: 'Webhook' } }), { informerScope: 'Namespaced' }).versions.map((v) => v.name)).toEqual(['v2']);
    expect(exportSpecFromCrd(crd({ scope: 'Cluster' }), { informerScope: 'Namespaced' })).toMatchObject({
      informerScope: 'Cluster',
      clusterScopedIsolation: 'Prefixed',
    });
  });
  it('the source-spec hash is stable across key order and changes with the spec', () => {
    const a = crd();
    const b = JSON.parse(stableJson(a)) as Crd;
    expect(crdSpecHash(a)).toBe(crdSpecHash(b));
    expect(crdSpecHash(crd({ scope: 'Cluster' }))).not.toBe(crdSpecHash(a));
    expect(base62Sha224('x')).toMatch(/^[0-9a-zA-Z]+$/);
  });
  it('the request handed to the CLI names <resource>.<group> and carries the template claims', () => {
    const r = exportRequestFor({
      group: 'g.io',
      resource: 'things',
      kind: 'Thing',
      scope: 'Namespaced',
      versions: ['v1'],
      template: { namespace: 'x', name: 'y' },
      permissionClaims: [],
    });
    expect(r).toEqual({
      apiVersion: 'klutch.anynines.com/v1alpha1',
      kind: 'APIServiceExportRequest',
      metadata: { name: 'things.g.io' },
      spec: { resources: [{ group: 'g.io', resource: 'things' }] },
    });
  });
  it('kubeconfig and identity hash', () => {
    const k = renderKubeconfig({ server: 'https://api.example:6443', caData: 'Q0E=', tlsServerName: 'api' }, 'cluster-abc', 'tok');
    expect(k).toContain('namespace: cluster-abc');
    expect(k).toContain('certificate-authority-data: Q0E=');
    expect(k).toContain('tls-server-name: api');
    expect(k).toContain('token: tok');
    const id = { iss: 'https://i', sub: 's', clusterId: 'c' };
    expect(identityHash(id)).toBe(identityHash({ ...id }));
    expect(identityHash(id)).not.toBe(identityHash({ ...id, iss: 'https://other' }));
  });
});

describe('the cluster written into handed-out kubeconfigs', () => {
  const own = KubeClient.fromKubeconfigString(
    'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://10.0.0.1:6443", certificate-authority-data: T1dO}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: d, context: {cluster: c, user: u}}]\ncurrent-context: d\n',
  );
  it("defaults to the backend's own server and CA", () => {
    expect(externalCluster(own, {})).toEqual({ server: 'https://10.0.0.1:6443', caData: 'T1dO', tlsServerName: undefined, insecureSkipTlsVerify: undefined });
  });
  it('--external-address must be https; --external-ca-file must hold a PEM certificate', () => {
    expect(() => externalCluster(own, { externalAddress: 'http://api.example' })).toThrow('--external-address: "http://api.example" must be an https:// URL');
    expect(() => externalCluster(own, { externalAddress: 'nope' })).toThrow(/--external-address: "nope" is not a URL/);
    expect(() => externalCluster(own, { externalCaFile: '/nonexistent/ca.pem' })).toThrow(/--external-ca-file: cannot read "\/nonexistent\/ca.pem"/);
    const dir = mkdtempSync(join(tmpdir(), 'ext-ca-'));
    writeFileSync(join(dir, 'bad.pem'), 'hello');
    expect(() => externalCluster(own, { externalCaFile: join(dir, 'bad.pem') })).toThrow(/holds no PEM certificate/);
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    writeFileSync(join(dir, 'ca.pem'), pem);
    expect(externalCluster(own, { externalAddress: 'https://api.example:443', externalCaFile: join(dir, 'ca.pem'), externalServerName: 'api' })).toEqual({
      server: 'https://api.example:443',
      caData: Buffer.from(pem).toString('base64'),
      tlsServerName: 'api',
      insecureSkipTlsVerify: undefined,
    });
  });
});

describe('pages', () => {
  it('escapes everything that comes from tokens or the cluster', () => {
    const html = resourcesPage({
      prettyName: 'P<b>',
      user: '<script>alert(1)</script>@evil',
      sessionId: 's"1',
      csrf: 'c&d',
      apis: [
        {
          group: 'g.io',
          resource: 'things',
          kind: 'Thing<i>',
          scope: 'Namespaced',
          versions: ['v1'],
          template: { namespace: 'n', name: 't' },
          permissionClaims: [{ resource: 'secrets', version: 'v1' } as never],
        },
      ],
    });
    // The page's only script is its own filter script (allowed by hash in RESOURCES_CSP).
    expect(html.match(/<script>/g)).toHaveLength(1);
    expect(html).not.toContain('<script>alert');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;@evil');
    expect(html).toContain('value="s&quot;1"');
    expect(html).toContain('value="c&amp;d"');
    expect(html).toContain('Thing&lt;i&gt;');
    expect(html).toContain('<form method="post" action="/bind">');
    expect(errorPage(400, '<img src=x>')).toContain('&lt;img src=x&gt;');
  });
});
