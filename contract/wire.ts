/**
 * The non-CRUD wire types exchanged between the bind backend and `kubectl-bind`
 * (`klutch.anynines.com/v1alpha1` BindingProvider and BindingResponse), and their encoding.
 *
 * Compatibility with Klutch's Go implementation (contract tests: test/runtime/klutch-wire.test.ts
 * against the fixtures in test/fixtures/klutch-wire/):
 * - `BindingProvider.apiVersion` is the bare `v1alpha1` — what Klutch's backend sends and Klutch's
 *   CLI requires; we send that and accept it as well as `klutch.anynines.com/v1alpha1`.
 * - Documents are written with Go's encoding/json key order and omitempty rules (`goJson`), so
 *   our bytes equal Klutch's for the same values.
 * - `BindingResponse.kubeconfig` is a Go `[]byte`, i.e. standard base64 inside the JSON.
 * - `requests[]` are raw JSON objects (`runtime.RawExtension`), each an APIServiceExportRequest
 *   without ObjectMeta except `metadata.name`.
 * - The response travels to the CLI callback as the `response` query parameter. Klutch's backend
 *   encodes it with base64url (padded) while Klutch's CLI decodes standard base64 — that only works
 *   while no `-`/`_` appear. We *encode* standard base64 (so Klutch's CLI can read our answers; the
 *   query string is percent-encoded) and *decode* both alphabets (so our CLI can read Klutch's).
 */

import {
  BIND_API_VERSION,
  BINDING_PROVIDER_API_VERSION,
  BINDING_PROVIDER_API_VERSIONS,
  type APIServiceExportRequestResponse,
  type BindingProvider,
  type BindingResponse,
  type PermissionClaim,
} from './api/index.js';

export {
  BIND_API_VERSION,
  BIND_GROUP,
  BIND_VERSION,
  BINDING_PROVIDER_API_VERSION,
  BINDING_PROVIDER_API_VERSIONS,
  newBindingProvider,
  newBindingResponse,
} from './api/index.js';
export type { APIServiceExportRequestResponse, BindingProvider, BindingResponse, PermissionClaim };

/** Field order of a Go struct (json tags in declaration order); `sub` orders nested objects and list items. */
interface GoOrder {
  keys: readonly string[];
  /** Fields tagged omitempty whose zero value ("" / false) Go leaves out. */
  omitEmpty?: readonly string[];
  /** Fields Go always writes, with their zero value when absent (non-pointer structs, plain bools). */
  always?: Readonly<Record<string, unknown>>;
  sub?: Readonly<Record<string, GoOrder>>;
}
const MATCHER: GoOrder = { keys: ['pattern'] };
const CLAIM: GoOrder = {
  // apiservicebinding_types.go PermissionClaim (GroupResource inlined)
  keys: ['group', 'resource', 'version', 'selector', 'required', 'read', 'create', 'autoAdopt', 'autoDonate', 'onConflict', 'update'],
  omitEmpty: ['group', 'autoAdopt', 'autoDonate'],
  always: { required: false },
  sub: {
    selector: { keys: ['names', 'namespaces', 'labelSelectors', 'fieldSelectors', 'owner'], omitEmpty: ['owner'] },
    read: {
      keys: ['labels', 'labelsOnProviderOwnedObjects', 'annotations', 'overrideAnnotations'],
      sub: { labels: MATCHER, labelsOnProviderOwnedObjects: MATCHER, annotations: MATCHER, overrideAnnotations: MATCHER },
    },
    create: { keys: ['replaceExisting'], omitEmpty: ['replaceExisting'] },
    onConflict: { keys: ['recreateWhenConsumerSideDeleted'], always: { recreateWhenConsumerSideDeleted: false } },
    update: {
      keys: ['fields', 'preserving', 'alwaysRecreate', 'labels', 'labelsOnConsumerOwnedObjects', 'annotations', 'annotationsOnConsumerOwnedObjects'],
      omitEmpty: ['alwaysRecreate'],
    },
  },
};
/** apiserviceexportrequest_types.go APIServiceExportRequestResponse (`status` is a struct: always written). */
const EXPORT_REQUEST: GoOrder = {
  keys: ['kind', 'apiVersion', 'metadata', 'spec', 'status'],
  always: { status: {} },
  sub: {
    metadata: { keys: ['name'] },
    spec: {
      keys: ['parameters', 'resources'],
      sub: { resources: { keys: ['group', 'resource', 'versions', 'permissionClaims'], omitEmpty: ['group'], sub: { permissionClaims: CLAIM } } },
    },
    status: { keys: ['phase', 'terminalMessage', 'conditions'], omitEmpty: ['phase', 'terminalMessage'] },
  },
};
const GO_ORDERS = {
  // bindingprovider_types.go
  BindingProvider: {
    keys: ['kind', 'apiVersion', 'providerPrettyName', 'version', 'authenticationMethods'],
    sub: { authenticationMethods: { keys: ['method', 'oauth2CodeGrant'], sub: { oauth2CodeGrant: { keys: ['authenticatedURL'] } } } },
  },
  // bindingresponse_types.go (`authentication` is a struct: always written)
  BindingResponse: {
    keys: ['kind', 'apiVersion', 'authentication', 'kubeconfig', 'requests'],
    always: { authentication: {} },
    sub: { authentication: { keys: ['oauth2CodeGrant'], sub: { oauth2CodeGrant: { keys: ['sid', 'id'] } } }, requests: EXPORT_REQUEST },
  },
  APIServiceExportRequest: EXPORT_REQUEST,
} satisfies Record<string, GoOrder>;

function goOrdered(v: unknown, order: GoOrder | undefined): unknown {
  if (Array.isArray(v)) return v.map((x) => goOrdered(x, order));
  if (!order || !v || typeof v !== 'object') return v;
  const src = { ...order.always, ...(v as Record<string, unknown>) };
  const out: Record<string, unknown> = {};
  const put = (k: string) => {
    const x = src[k];
    if (x === undefined || x === null) return;
    if (order.omitEmpty?.includes(k) && (x === '' || x === false)) return;
    out[k] = goOrdered(x, order.sub?.[k]);
  };
  for (const k of order.keys) put(k);
  for (const k of Object.keys(src)) if (!(k in out) && !order.keys.includes(k)) put(k);
  return out;
}

/**
 * JSON text of a wire document as Go's encoding/json writes the same struct: struct field order,
 * omitempty zero values left out, always-written structs present, and `<`, `>`, `&`, U+2028,
 * U+2029 escaped. Fields unknown to Klutch's types follow the known ones.
 */
export function goJson(kind: keyof typeof GO_ORDERS, doc: unknown): string {
  return JSON.stringify(goOrdered(doc, GO_ORDERS[kind])).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The `GET /export` body: a BindingProvider with Klutch's `apiVersion` and Go's key order. */
export function bindingProviderJson(p: { prettyName: string; version: string; authorizeUrl: string }): string {
  const doc: BindingProvider = {
    kind: 'BindingProvider',
    apiVersion: BINDING_PROVIDER_API_VERSION,
    providerPrettyName: p.prettyName,
    version: p.version,
    authenticationMethods: [{ method: 'OAuth2CodeGrant', oauth2CodeGrant: { authenticatedURL: p.authorizeUrl } }],
  };
  return goJson('BindingProvider', doc);
}

/** Encodes a BindingResponse for the `response` query parameter of the CLI callback (standard base64 of Go-shaped JSON). */
export function encodeBindingResponse(r: BindingResponse): string {
  return Buffer.from(goJson('BindingResponse', r), 'utf8').toString('base64');
}

/** Decodes the `response` query parameter (standard or URL-safe base64, padded or not). */
export function decodeBindingResponse(encoded: string): BindingResponse {
  if (!encoded) throw new Error('response: empty; the backend sent no BindingResponse');
  if (!/^[A-Za-z0-9+/_=-]+$/.test(encoded)) {
    throw new Error(`response: not base64 (first characters "${encoded.slice(0, 16)}")`);
  }
  const std = encoded.replace(/-/g, '+').replace(/_/g, '/');
  const json = Buffer.from(std, 'base64').toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (e) {
    throw new Error(`response: decoded value is not JSON (${(e as Error).message})`, { cause: e });
  }
  return validateBindingResponse(parsed);
}

export function validateBindingResponse(v: unknown): BindingResponse {
  const o = v as Partial<BindingResponse> | null;
  if (!o || typeof o !== 'object') throw new Error('BindingResponse: not an object');
  if (o.apiVersion !== BIND_API_VERSION || o.kind !== 'BindingResponse') {
    throw new Error(`BindingResponse: unexpected type ${String(o.apiVersion)}/${String(o.kind)}, only ${BIND_API_VERSION}/BindingResponse is supported`);
  }
  if (!o.authentication?.oauth2CodeGrant) {
    throw new Error('BindingResponse.authentication.oauth2CodeGrant: missing');
  }
  if (typeof o.kubeconfig !== 'string' || !o.kubeconfig) throw new Error('BindingResponse.kubeconfig: missing');
  if (!Array.isArray(o.requests)) throw new Error('BindingResponse.requests: not a list');
  (o.requests as Array<Partial<APIServiceExportRequestResponse> | undefined>).forEach((req, i) => {
    if (req?.apiVersion !== BIND_API_VERSION || req?.kind !== 'APIServiceExportRequest') {
      throw new Error(
        `BindingResponse.requests[${i}]: is ${String(req?.apiVersion)}/${String(req?.kind)}, expected ${BIND_API_VERSION}/APIServiceExportRequest`,
      );
    }
    if (!req.metadata?.name) throw new Error(`BindingResponse.requests[${i}].metadata.name: missing`);
    if (!Array.isArray(req.spec?.resources) || req.spec.resources.length === 0) {
      throw new Error(`BindingResponse.requests[${i}].spec.resources: must list at least one resource`);
    }
  });
  return o as BindingResponse;
}

/** The export requests of a (validated) BindingResponse. */
export const responseRequests = (r: BindingResponse): APIServiceExportRequestResponse[] => r.requests as APIServiceExportRequestResponse[];

/** kubeconfig YAML carried by a BindingResponse. */
export function responseKubeconfig(r: BindingResponse): string {
  return Buffer.from(r.kubeconfig, 'base64').toString('utf8');
}

export function validateBindingProvider(v: unknown, source: string): BindingProvider {
  const o = v as Partial<BindingProvider> | null;
  if (!o || typeof o !== 'object') throw new Error(`${source}: answer is not a JSON object`);
  if (!BINDING_PROVIDER_API_VERSIONS.includes(String(o.apiVersion)) || o.kind !== 'BindingProvider') {
    throw new Error(
      `${source}: unsupported binding provider: apiVersion ${JSON.stringify(o.apiVersion)}, kind ${JSON.stringify(o.kind)}; expected kind BindingProvider with apiVersion ${BINDING_PROVIDER_API_VERSIONS.map((v) => JSON.stringify(v)).join(' or ')} — is this a klutch bind backend's /export URL?`,
    );
  }
  if (!Array.isArray(o.authenticationMethods)) throw new Error(`${source}: authenticationMethods missing`);
  return o as BindingProvider;
}

/** Is `u` an http URL on a loopback host with an explicit port (where a CLI may listen)? */
export function isLoopbackRedirect(u: string): boolean {
  let url: URL;
  try {
    url = new URL(u);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:') return false;
  if (url.username || url.password) return false;
  if (!url.port) return false;
  return url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]';
}
