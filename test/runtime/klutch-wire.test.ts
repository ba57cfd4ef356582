/**
 * Contract tests against Klutch's own wire messages (issue 11, item 1). The fixtures in
 * test/fixtures/klutch-wire/ reproduce, byte for byte, what Klutch's Go backend, kubectl-bind and
 * konnector send (SOURCES.md names the Go type and file of each). Every message of Klutch's is parsed
 * by our CLI or backend; every message of ours is checked against what Klutch's code requires
 * (the rules of Klutch's Go code are restated in `klutch*` helpers below, each naming its source).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import type { JSONSchemaProps } from '../../contract/api/index.js';
import { SchemaValidator } from '../../constructs/validate/index.js';
import { exportRequestFor, renderKubeconfig } from '../../runtime/backend/binder.js';
import type { BindableApi } from '../../runtime/backend/catalog.js';
import { parseGoDuration } from '../../runtime/backend/controllers.js';
import { BackendMetrics } from '../../runtime/backend/metrics.js';
import { Sealer, parseCookieKeys } from '../../runtime/backend/seal.js';
import { BACKEND_VERSION, BackendServer } from '../../runtime/backend/server.js';
import {
  decodeBindingResponse,
  encodeBindingResponse,
  goJson,
  responseKubeconfig,
  responseRequests,
  validateBindingProvider,
  validateBindingResponse,
  type BindingResponse,
} from '../../contract/wire.js';
import { silentLogger } from '../../runtime/core/logger.js';
import { goDuration } from '../../runtime/konnector/provider.js';
import { KONNECTOR_VERSION, klutchKonnectorVersion } from '../../runtime/konnector/version.js';
import { exportRequestBody, parseExportRequest, type ExportRequestDoc } from '../../runtime/kubectl-bind/apiservice.js';
import { authorizeUrl, fetchProvider } from '../../runtime/kubectl-bind/bind.js';
import { CallbackServer } from '../../runtime/kubectl-bind/callback.js';
import { parseRemoteKubeconfig } from '../../runtime/kubectl-bind/util.js';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const fixture = (f: string) => readFileSync(join(root, 'test', 'fixtures', 'klutch-wire', f), 'utf8');

/** Validator for one kind, from Klutch's CRD (imports/crds/klutch-reference) or ours (contract/api/crds). */
function crdValidator(dir: 'klutch-reference' | 'ours', file: string): SchemaValidator {
  const path = dir === 'ours' ? join(root, 'contract', 'api', 'crds', file) : join(root, 'imports', 'crds', 'klutch-reference', file);
  const crd = parseYaml(readFileSync(path, 'utf8')) as { spec: { versions: Array<{ schema: { openAPIV3Schema: JSONSchemaProps } }> } };
  return new SchemaValidator(crd.spec.versions[0].schema.openAPIV3Schema);
}

// ---------------------------------------------------------------- Klutch's rules, restated

/** pkg/kubectl/bind/plugin/bind.go + authenticate.go: what Klutch's CLI requires of `GET /export`. */
function klutchCliAcceptsProvider(body: string): string | undefined {
  const p = JSON.parse(body) as {
    apiVersion?: string;
    version?: string;
    authenticationMethods?: Array<{ method?: string; oauth2CodeGrant?: { authenticatedURL?: string } }>;
  };
  if (p.apiVersion !== 'v1alpha1') return `unsupported binding provider version: ${JSON.stringify(p.apiVersion)}`;
  const v = p.version ?? '';
  if (v === '') return 'provider version is empty';
  if (v !== 'v0.0.0') {
    const m = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(v);
    if (!m) return `provider version ${JSON.stringify(v)} cannot be parsed`;
    if (Number(m[1]) === 0 && Number(m[2]) < 3) return `provider version ${v} is not supported, must be at least v0.3.0`;
  }
  const m = p.authenticationMethods?.find((x) => x.method === 'OAuth2CodeGrant')?.oauth2CodeGrant;
  if (!m) return 'server does not support OAuth2 code grant flow';
  try {
    new URL(m.authenticatedURL ?? '');
  } catch {
    return 'failed to parse auth url';
  }
  return undefined;
}

/** Go's url.ParseQuery: `+` is a space, then percent-decoding. */
function goQuery(search: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of search.replace(/^\?/, '').split('&')) {
    if (!part) continue;
    const [k, v = ''] = part.split('=', 2);
    const dec = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    if (!out.has(dec(k))) out.set(dec(k), dec(v));
  }
  return out;
}

/** authenticator.go callback: base64.StdEncoding (strict alphabet, padding) → UniversalDeserializer; bind.go checks. */
function klutchCliDecodesCallback(location: string, sid: string): BindingResponse {
  const response = goQuery(new URL(location).search).get('response') ?? '';
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(response) || response.length % 4 !== 0) throw new Error(`illegal base64 data: ${response.slice(0, 20)}…`);
  const r = JSON.parse(Buffer.from(response, 'base64').toString('utf8')) as BindingResponse & { requests: Array<{ apiVersion?: string }> };
  if (r.apiVersion !== 'klutch.anynines.com/v1alpha1' || r.kind !== 'BindingResponse') throw new Error(`unexpected response type ${r.apiVersion}/${r.kind}`);
  if (!r.authentication?.oauth2CodeGrant) throw new Error('authentication.oauth2CodeGrant is nil');
  if (r.authentication.oauth2CodeGrant.sid !== sid) throw new Error('sessionID does not match');
  r.requests.forEach((q, i) => {
    if (q.apiVersion !== 'klutch.anynines.com/v1alpha1') throw new Error(`request #${i} is not klutch.anynines.com/v1alpha1, got ${q.apiVersion}`);
  });
  return r;
}

/** example-backend http/handler.go handleAuthorize: what Klutch's backend requires of the login URL. */
function klutchBackendAcceptsAuthorize(u: URL): { redirectURL: string } | string {
  const q = goQuery(u.search);
  let redirectURL = q.get('u') ?? '';
  const p = q.get('p') ?? '';
  if (p && !redirectURL) redirectURL = `http://localhost:${p}/callback`;
  if (!redirectURL || !q.get('s') || !q.get('c')) return 'missing redirect_url or session_id';
  return { redirectURL };
}

// ---------------------------------------------------------------- our backend, started on 127.0.0.1

let server: BackendServer;
let backendUrl: string;
beforeAll(async () => {
  server = new BackendServer(
    {
      listenHost: '127.0.0.1',
      listenPort: 0,
      prettyName: 'example-backend',
      // an issuer nobody answers at: /authorize then fails at the issuer step (503), after checking its query
      oidc: { issuerUrl: 'http://127.0.0.1:9/', clientId: 'c', scopes: ['openid'], bearerAudiences: [] },
      sessionTtl: 60,
      stateTtl: 60,
    },
    {
      metrics: new BackendMetrics(),
      logger: silentLogger,
      sealer: new Sealer(parseCookieKeys(randomBytes(32).toString('base64'), randomBytes(32).toString('base64'))),
    } as never,
  );
  backendUrl = await server.start();
});
afterAll(() => server.stop());

describe('BindingProvider (GET /export)', () => {
  it("Klutch's backend's answer is accepted by our CLI, over HTTP", async () => {
    const body = fixture('binding-provider.json');
    const srv = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(body));
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    try {
      const p = await fetchProvider(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/export`);
      expect(p).toEqual(JSON.parse(body));
      expect(p.apiVersion).toBe('v1alpha1');
    } finally {
      await new Promise((r) => srv.close(r));
    }
  });

  it("our CLI accepts both forms of apiVersion (Klutch's and klutch-kit's before) and names a wrong one", () => {
    const doc = JSON.parse(fixture('binding-provider.json')) as Record<string, unknown>;
    expect(validateBindingProvider(doc, 'x').apiVersion).toBe('v1alpha1');
    expect(validateBindingProvider({ ...doc, apiVersion: 'klutch.anynines.com/v1alpha1' }, 'x').apiVersion).toBe('klutch.anynines.com/v1alpha1');
    expect(() => validateBindingProvider({ ...doc, apiVersion: 'kube-bind.io/v1alpha1' }, 'https://b/export')).toThrow(
      'https://b/export: unsupported binding provider: apiVersion "kube-bind.io/v1alpha1", kind "BindingProvider"; expected kind BindingProvider with apiVersion "v1alpha1" or "klutch.anynines.com/v1alpha1"',
    );
  });

  it("our backend's answer has Klutch's bytes (same keys, order and apiVersion) and passes Klutch's CLI checks", async () => {
    const res = await fetch(`${backendUrl}/export`);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = await res.text();
    const expected = JSON.parse(fixture('binding-provider.json')) as {
      version: string;
      authenticationMethods: Array<{ oauth2CodeGrant: { authenticatedURL: string } }>;
    };
    expected.version = BACKEND_VERSION;
    expected.authenticationMethods[0].oauth2CodeGrant.authenticatedURL = `${backendUrl}/authorize`;
    expect(body).toBe(JSON.stringify(expected));
    expect(klutchCliAcceptsProvider(body)).toBeUndefined();
    // the rule restated above refuses what our backend sent before this change
    expect(klutchCliAcceptsProvider(body.replace('"v1alpha1"', '"klutch.anynines.com/v1alpha1"'))).toBe(
      'unsupported binding provider version: "klutch.anynines.com/v1alpha1"',
    );
  });
});

describe('BindingResponse (the callback ?response=)', () => {
  const json = fixture('binding-response.json');
  const std = fixture('binding-response.base64.txt');
  const url = fixture('binding-response.base64url.txt');

  it('the fixtures are the same document in the two alphabets, which differ in this one', () => {
    expect(Buffer.from(std, 'base64').toString('utf8')).toBe(json);
    expect(Buffer.from(url, 'base64url').toString('utf8')).toBe(json);
    expect(std).not.toBe(url); // "zoë.weiß" puts a `/` into standard base64, a `_` into base64url
    expect(fixture('callback-location.txt')).toBe(`http://localhost:38271/callback?response=${url.replace(/=/g, '%3D')}`);
  });

  it('our CLI decodes standard and URL-safe base64 to the same response, kubeconfig and requests', () => {
    for (const enc of [std, url, url.replace(/=+$/, '')]) {
      const r = decodeBindingResponse(enc);
      expect(r).toEqual(JSON.parse(json));
      expect(r.authentication?.oauth2CodeGrant).toEqual({ sid: 'x7Kq2Z', id: 'https://login.example.com/realms/dev/zoë.weiß@example.com' });
      expect(responseKubeconfig(r)).toBe(fixture('binding-response.kubeconfig.yaml'));
      expect(parseRemoteKubeconfig(responseKubeconfig(r))).toEqual({ server: 'https://203.0.113.10:6443', namespace: 'cluster-7x9kq' });
      expect(responseRequests(r).map((q) => q.metadata.name)).toEqual(['servicebindings.anynines.com']);
    }
  });

  it("our CLI's callback server takes the 302 Location of Klutch's backend (base64url) as sent", async () => {
    const cb = new CallbackServer('x7Kq2Z');
    await cb.start();
    try {
      const location = new URL(fixture('callback-location.txt'));
      const res = await fetch(`${cb.url}${location.search}`);
      expect(res.status).toBe(200);
      expect(await cb.response).toEqual(JSON.parse(json));
    } finally {
      await cb.stop();
    }
  });

  it("Klutch's own CLI cannot read its backend's base64url here; it reads ours (standard base64)", () => {
    expect(() => klutchCliDecodesCallback(fixture('callback-location.txt'), 'x7Kq2Z')).toThrow(/illegal base64 data/);
    const target = new URL('http://127.0.0.1:38271/callback'); // as the backend's browser bind answers
    target.searchParams.set('response', encodeBindingResponse(JSON.parse(json) as BindingResponse));
    expect(klutchCliDecodesCallback(target.href, 'x7Kq2Z')).toEqual(JSON.parse(json));
  });

  it('our encoding of the same response is byte for byte what Klutch marshals', () => {
    const doc = JSON.parse(json) as BindingResponse;
    expect(goJson('BindingResponse', doc)).toBe(json);
    expect(encodeBindingResponse(doc)).toBe(std);
    // key order comes from Go's structs, not from how the object was built
    const shuffled = { requests: doc.requests, kubeconfig: doc.kubeconfig, authentication: doc.authentication, apiVersion: doc.apiVersion, kind: doc.kind };
    expect(goJson('BindingResponse', shuffled)).toBe(json);
    expect(validateBindingResponse(doc)).toBe(doc);
  });

  it("our backend's kubeconfig has what Klutch's CLI and konnector read from theirs (server, CA, token, context namespace)", () => {
    const shape = (text: string) => {
      const k = parseYaml(text) as {
        'current-context': string;
        contexts: Array<{ name: string; context: { cluster: string; user: string; namespace?: string } }>;
        clusters: Array<{ name: string; cluster: Record<string, unknown> }>;
        users: Array<{ name: string; user: Record<string, unknown> }>;
      };
      const ctx = k.contexts.find((c) => c.name === k['current-context'])!.context;
      const cluster = k.clusters.find((c) => c.name === ctx.cluster)!.cluster;
      const user = k.users.find((u) => u.name === ctx.user)!.user;
      return { clusterKeys: Object.keys(cluster).sort(), userKeys: Object.keys(user).sort(), namespace: typeof ctx.namespace };
    };
    const klutch = shape(fixture('binding-response.kubeconfig.yaml'));
    const ca = Buffer.from('-----BEGIN CERTIFICATE-----\n').toString('base64');
    const ours = shape(renderKubeconfig({ server: 'https://203.0.113.10:6443', caData: ca }, 'cluster-7x9kq', 'token'));
    expect(ours).toEqual(klutch);
    expect(klutch).toEqual({ clusterKeys: ['certificate-authority-data', 'server'], userKeys: ['token'], namespace: 'string' });
  });

  it('goJson escapes as encoding/json does', () => {
    expect(goJson('BindingProvider', { kind: 'BindingProvider', providerPrettyName: 'a<b>&c\u2028' })).toBe(
      '{"kind":"BindingProvider","providerPrettyName":"a\\u003cb\\u003e\\u0026c\\u2028"}',
    );
  });
});

describe('APIServiceExportRequest bodies', () => {
  const servicebindings: BindableApi = {
    group: 'anynines.com',
    resource: 'servicebindings',
    kind: 'ServiceBinding',
    scope: 'Namespaced',
    versions: ['v1'],
    template: { namespace: 'crossplane-system', name: 'servicebindings' },
    // the servicebindings template's claims as the API server returns them (CRD defaults applied)
    permissionClaims: ['secrets', 'configmaps'].map((resource) => ({
      group: '',
      resource,
      version: 'v1',
      selector: { names: ['*'], namespaces: ['*'], owner: 'Provider' },
      read: {},
      onConflict: { recreateWhenConsumerSideDeleted: true },
    })) as never,
  };

  it("our backend's request entry for the same template is Klutch's, byte for byte", () => {
    expect(goJson('APIServiceExportRequest', exportRequestFor(servicebindings))).toBe(fixture('export-request-response.json'));
  });

  it("our CLI reads the request Klutch's backend sends (as `kubectl bind apiservice -f` input too)", () => {
    const doc = parseExportRequest(fixture('export-request-response.json'), 'file');
    expect(doc.metadata.name).toBe('servicebindings.anynines.com');
    expect(doc.spec.resources[0].permissionClaims?.map((c) => c.resource)).toEqual(['secrets', 'configmaps']);
  });

  it("the body Klutch's CLI POSTs is valid for our APIServiceExportRequest CRD; ours is valid for Klutch's", () => {
    const created = JSON.parse(fixture('export-request-create.json')) as Record<string, unknown>;
    expect(crdValidator('ours', 'klutch.anynines.com_apiserviceexportrequests.yaml').validate(created)).toEqual([]);
    const ours = exportRequestBody(parseExportRequest(fixture('export-request-response.json'), 'f'), 'cluster-7x9kq', { name: 'servicebindings.anynines.com' });
    const klutchCrd = crdValidator('klutch-reference', 'klutch.anynines.com_apiserviceexportrequests.yaml');
    expect(klutchCrd.validate(ours)).toEqual([]);
    expect(
      klutchCrd.validate(exportRequestBody({ ...(ours as unknown as ExportRequestDoc), spec: { resources: [] } }, 'ns', { generateName: 'x-' })),
    ).not.toEqual([]);
    // same spec as Klutch's body
    expect((ours as unknown as { spec: unknown }).spec).toEqual(created.spec);
  });
});

describe('callback query parameters (/authorize)', () => {
  it("our backend takes Klutch's CLI's login URL (c, p, s; no u) past its checks to the issuer", async () => {
    const klutch = new URL(fixture('authorize-url.txt'));
    const res = await fetch(`${backendUrl}/authorize${klutch.search}`, { redirect: 'manual' });
    const text = await res.text();
    expect(res.status).toBe(503);
    expect(text).toMatch(/cannot reach the OIDC issuer/);
    // and the same checks refuse a URL without the session id, naming the field
    const bad = await fetch(`${backendUrl}/authorize?c=Ab3dE9&p=38271`, { redirect: 'manual' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/\bs\b.*not a session id/);
  });

  it("our CLI's login URL satisfies Klutch's backend, which sends the browser to our callback", () => {
    const u = authorizeUrl('https://bind.example.com/authorize', {
      callbackUrl: 'http://127.0.0.1:38271/callback',
      port: 38271,
      sessionId: 'x7Kq2Z',
      clusterId: 'Ab3dE9',
    });
    expect(klutchBackendAcceptsAuthorize(u)).toEqual({ redirectURL: 'http://127.0.0.1:38271/callback' });
    expect(klutchBackendAcceptsAuthorize(new URL(fixture('authorize-url.txt')))).toEqual({ redirectURL: 'http://localhost:38271/callback' });
    // Klutch's parameters, in Klutch's (sorted) order, then ours
    expect(u.href.startsWith(fixture('authorize-url.txt'))).toBe(true);
  });
});

describe('ClusterBinding heartbeat', () => {
  const patch = JSON.parse(fixture('clusterbinding-heartbeat-patch.json')) as {
    status: { heartbeatInterval: string; konnectorVersion: string; lastHeartbeatTime: string };
  };

  it("Klutch's konnector's status is valid for our ClusterBinding CRD and our backend reads its interval", () => {
    const cb = {
      apiVersion: 'klutch.anynines.com/v1alpha1',
      kind: 'ClusterBinding',
      metadata: { name: 'cluster', namespace: 'cluster-7x9kq' },
      spec: { kubeconfigSecretRef: { name: 'kubeconfig', key: 'kubeconfig' }, providerPrettyName: 'example-backend' },
      status: patch.status,
    };
    expect(crdValidator('ours', 'klutch.anynines.com_clusterbindings.yaml').validate(cb)).toEqual([]);
    expect(parseGoDuration(patch.status.heartbeatInterval)).toBe(300_000);
    expect(Number.isNaN(Date.parse(patch.status.lastHeartbeatTime))).toBe(false);
  });

  it("our konnector writes Go's duration format and Klutch's konnectorVersion format", () => {
    expect(goDuration(300_000)).toBe(patch.status.heartbeatInterval);
    expect([4_000, 90_000, 3_600_000, 5_400_000].map(goDuration)).toEqual(['4s', '1m30s', '1h0m0s', '1h30m0s']);
    expect(klutchKonnectorVersion(KONNECTOR_VERSION)).toMatch(/^v\d+\.\d+\.\d+$/);
    expect(['v1.5.0', '0.1.0', 'v0.1.0-bench', '1.2.3+sha.abc', 'v0.0.0', 'dev', 'v1.2'].map(klutchKonnectorVersion)).toEqual([
      'v1.5.0',
      'v0.1.0',
      'v0.1.0',
      'v1.2.3',
      'v0.0.0',
      'unknown',
      'unknown',
    ]);
    const ours = {
      heartbeatInterval: goDuration(300_000),
      konnectorVersion: klutchKonnectorVersion(KONNECTOR_VERSION),
      lastHeartbeatTime: new Date(0).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    };
    const cb = {
      apiVersion: 'klutch.anynines.com/v1alpha1',
      kind: 'ClusterBinding',
      metadata: { name: 'cluster', namespace: 'n' },
      spec: { kubeconfigSecretRef: { name: 'kubeconfig', key: 'kubeconfig' }, providerPrettyName: 'p' },
      status: ours,
    };
    expect(crdValidator('klutch-reference', 'klutch.anynines.com_clusterbindings.yaml').validate(cb)).toEqual([]);
    expect(ours.lastHeartbeatTime).toBe('1970-01-01T00:00:00Z'); // RFC 3339 seconds, as metav1.Time marshals
  });
});
