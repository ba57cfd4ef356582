/**
 * The non-CRUD wire types exchanged between the bind backend and `kubectl-bind`
 * (`klutch.anynines.com/v1alpha1` BindingProvider and BindingResponse), and their encoding.
 *
 * Compatibility with Klutch's Go implementation:
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
  type APIServiceExportRequestResponse,
  type BindingProvider,
  type BindingResponse,
  type PermissionClaim,
} from '../../constructs/api/index.js';

export { BIND_API_VERSION, BIND_GROUP, BIND_VERSION, newBindingProvider, newBindingResponse } from '../../constructs/api/index.js';
export type { APIServiceExportRequestResponse, BindingProvider, BindingResponse, PermissionClaim };

/** Encodes a BindingResponse for the `response` query parameter of the CLI callback. */
export function encodeBindingResponse(r: BindingResponse): string {
  return Buffer.from(JSON.stringify(r), 'utf8').toString('base64');
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
    throw new Error(`response: decoded value is not JSON (${(e as Error).message})`);
  }
  return validateBindingResponse(parsed);
}

export function validateBindingResponse(v: unknown): BindingResponse {
  const o = v as Partial<BindingResponse> | null;
  if (!o || typeof o !== 'object') throw new Error('BindingResponse: not an object');
  if (o.apiVersion !== BIND_API_VERSION || o.kind !== 'BindingResponse') {
    throw new Error(
      `BindingResponse: unexpected type ${String(o.apiVersion)}/${String(o.kind)}, only ${BIND_API_VERSION}/BindingResponse is supported`,
    );
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
export const responseRequests = (r: BindingResponse): APIServiceExportRequestResponse[] =>
  r.requests as APIServiceExportRequestResponse[];

/** kubeconfig YAML carried by a BindingResponse. */
export function responseKubeconfig(r: BindingResponse): string {
  return Buffer.from(r.kubeconfig, 'base64').toString('utf8');
}

export function validateBindingProvider(v: unknown, source: string): BindingProvider {
  const o = v as Partial<BindingProvider> | null;
  if (!o || typeof o !== 'object') throw new Error(`${source}: answer is not a JSON object`);
  if (o.apiVersion !== BIND_API_VERSION || o.kind !== 'BindingProvider') {
    throw new Error(
      `${source}: unsupported binding provider ${String(o.apiVersion)}/${String(o.kind)}; expected ${BIND_API_VERSION}/BindingProvider — is this a klutch bind backend's /export URL?`,
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
