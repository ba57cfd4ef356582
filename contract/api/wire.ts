/**
 * Non-CRD wire types of the binding protocol, exchanged as JSON over HTTP between the backend and
 * kubectl-bind. Their schemas are exported so both sides can validate what they receive
 * (`validateWire` / `parseWire` in constructs/validate/wire.ts).
 */
import { arr, obj, preserve, str, type TypeOf } from './_schema.js';
import { apiServiceExportRequestSpecSchema, apiServiceExportRequestStatusSchema } from './api-service-export-request.js';
import { BIND_API_VERSION, OAUTH2_CODE_GRANT } from './constants.js';

export const authenticationMethodSchema = obj(
  {
    method: str({ enum: [OAUTH2_CODE_GRANT], description: 'Authentication method (only OAuth2CodeGrant).' }),
    oauth2CodeGrant: obj(
      { authenticatedURL: str({ minLength: 1, description: 'URL the browser opens to authenticate (the backend /authorize).' }) },
      { required: ['authenticatedURL'] },
    ),
  },
  { required: ['method'] },
);
export type AuthenticationMethod = TypeOf<typeof authenticationMethodSchema>;

/** `GET /export`: what the backend offers before authentication. */
export const bindingProviderSchema = obj(
  {
    apiVersion: str(),
    kind: str(),
    providerPrettyName: str({ minLength: 1, description: 'Display name of the provider.' }),
    version: str({ description: 'Klutch bind version of the backend; kubectl-bind checks compatibility.' }),
    authenticationMethods: arr(authenticationMethodSchema, { minItems: 1, description: 'Supported methods, preferred first.' }),
  },
  { required: ['authenticationMethods', 'providerPrettyName', 'version'] },
);
export type BindingProvider = TypeOf<typeof bindingProviderSchema>;

/** An APIServiceExportRequest without ObjectMeta except `metadata.name` (one entry of `BindingResponse.requests`). */
export const apiServiceExportRequestResponseSchema = obj(
  {
    apiVersion: str(),
    kind: str(),
    metadata: obj({ name: str() }),
    spec: apiServiceExportRequestSpecSchema,
    status: apiServiceExportRequestStatusSchema,
  },
  { required: ['metadata', 'spec'] },
);
export type APIServiceExportRequestResponse = TypeOf<typeof apiServiceExportRequestResponseSchema>;

/** Handed to the kubectl-bind callback (base64url JSON in `?response=`) after authentication. */
export const bindingResponseSchema = obj(
  {
    apiVersion: str(),
    kind: str(),
    authentication: obj({
      oauth2CodeGrant: obj(
        {
          sid: str({ description: 'Session id chosen by kubectl-bind.' }),
          id: str({ description: 'Identity: `<issuer>/<subject>` of the ID token.' }),
        },
        { required: ['id', 'sid'] },
      ),
    }),
    kubeconfig: str({ format: 'byte', description: 'Provider kubeconfig, base64 (Go []byte).' }),
    requests: arr(preserve(), { minItems: 1, description: 'Requests; each an APIServiceExportRequestResponse.' }),
  },
  { required: ['kubeconfig', 'requests'] },
);
export type BindingResponse = TypeOf<typeof bindingResponseSchema>;

/**
 * `BindingProvider.apiVersion` as Klutch's Go backend sends it and Klutch's Go kubectl-bind requires
 * it: the bare version (`bindv1alpha1.GroupVersion`), not `<group>/<version>` (anynines/klutchio
 * `bind/contrib/example-backend/http/handler.go`, `bind/pkg/kubectl/bind/plugin/bind.go`).
 */
export const BINDING_PROVIDER_API_VERSION = 'v1alpha1';
/** Every `BindingProvider.apiVersion` a client accepts: Klutch's form and klutch-kit's before 0.2 (`klutch.anynines.com/v1alpha1`). */
export const BINDING_PROVIDER_API_VERSIONS: readonly string[] = [BINDING_PROVIDER_API_VERSION, BIND_API_VERSION];

/** Builds a BindingProvider document (keys in the order Go's encoding/json writes them). */
export function newBindingProvider(prettyName: string, version: string, authenticatedURL: string): BindingProvider {
  if (!prettyName) throw new Error(`BindingProvider.providerPrettyName: must be non-empty, got ${JSON.stringify(prettyName)}`);
  if (!/^https?:\/\//.test(authenticatedURL)) {
    throw new Error(
      `BindingProvider.authenticationMethods[0].oauth2CodeGrant.authenticatedURL: must be an http(s) URL, got ${JSON.stringify(authenticatedURL)}`,
    );
  }
  return {
    kind: 'BindingProvider',
    apiVersion: BINDING_PROVIDER_API_VERSION,
    providerPrettyName: prettyName,
    version,
    authenticationMethods: [{ method: OAUTH2_CODE_GRANT, oauth2CodeGrant: { authenticatedURL } }],
  };
}

/** Builds a BindingResponse document; `kubeconfig` is the kubeconfig YAML text (base64-encoded here). */
export function newBindingResponse(opts: {
  sessionID: string;
  identity: string;
  kubeconfig: string;
  requests: APIServiceExportRequestResponse[];
}): BindingResponse {
  if (opts.requests.length === 0) throw new Error('BindingResponse.requests: at least one request is needed, got []');
  return {
    kind: 'BindingResponse',
    apiVersion: BIND_API_VERSION,
    authentication: { oauth2CodeGrant: { sid: opts.sessionID, id: opts.identity } },
    kubeconfig: Buffer.from(opts.kubeconfig, 'utf8').toString('base64'),
    requests: opts.requests.map((r) => ({ kind: 'APIServiceExportRequest', apiVersion: BIND_API_VERSION, ...structuredClone(r) })),
  };
}

/** Decodes `BindingResponse.kubeconfig` to the kubeconfig text. */
export function bindingResponseKubeconfig(r: BindingResponse): string {
  return Buffer.from(r.kubeconfig, 'base64').toString('utf8');
}
