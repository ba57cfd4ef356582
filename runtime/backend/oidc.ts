/**
 * OIDC relying party of the bind backend, on openid-client (code flow) and jose (bearer tokens).
 *
 * - Authorization code flow with PKCE S256 and a random nonce.
 * - The id_token from the token endpoint is fully verified: JWS signature against the issuer's
 *   JWKS (`enableNonRepudiationChecks`), `iss`, `aud`/`azp`, `exp`/`iat`, and `nonce`.
 * - Bearer tokens (non-interactive binding): a JWT from the same issuer — an id_token or a JWT
 *   access token from the client-credentials grant — verified against the JWKS, `iss`, `exp` and
 *   an audience in `bearerAudiences` (default: our client id).
 */
import * as client from 'openid-client';
import { createRemoteJWKSet, jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';

export interface OidcOptions {
  issuerUrl: string;
  clientId: string;
  clientSecret?: string;
  callbackUrl: string;
  scopes: string[];
  /** Audiences accepted on bearer tokens. @default [clientId] */
  bearerAudiences?: string[];
  /** Clock tolerance for exp/iat/nbf, seconds. @default 30 */
  clockToleranceSeconds?: number;
}

export interface Identity {
  iss: string;
  sub: string;
  email?: string;
}

/** A login or token check failed; `field` names what was wrong (for the 4xx answer). */
export class AuthError extends Error {
  constructor(
    readonly field: string,
    message: string,
    readonly status = 401,
  ) {
    super(`${field}: ${message}`);
    this.name = 'AuthError';
  }
}

const isLoopbackHost = (u: URL): boolean => ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);

export class OidcRelyingParty {
  private config: client.Configuration | undefined;
  private discovering: Promise<client.Configuration> | undefined;
  private jwks: ReturnType<typeof createRemoteJWKSet> | undefined;

  constructor(readonly opts: OidcOptions) {
    const u = new URL(opts.issuerUrl);
    if (u.protocol !== 'https:' && !(u.protocol === 'http:' && isLoopbackHost(u))) {
      throw new Error(`--oidc-issuer-url: "${opts.issuerUrl}" must be https:// (plain http is only accepted on a loopback address, for tests)`);
    }
  }

  get ready(): boolean {
    return this.config !== undefined;
  }

  /** Discovery (cached; retried on the next call after a failure). */
  async discover(): Promise<client.Configuration> {
    if (this.config) return this.config;
    if (!this.discovering) {
      const issuer = new URL(this.opts.issuerUrl);
      const auth = this.opts.clientSecret ? client.ClientSecretBasic(this.opts.clientSecret) : client.None();
      this.discovering = client
        .discovery(issuer, this.opts.clientId, undefined, auth, {
          execute: issuer.protocol === 'http:' ? [client.allowInsecureRequests] : [],
          timeout: 10,
        })
        .then((cfg) => {
          client.enableNonRepudiationChecks(cfg);
          const jwksUri = cfg.serverMetadata().jwks_uri;
          if (!jwksUri) throw new Error(`issuer ${this.opts.issuerUrl} publishes no jwks_uri`);
          this.jwks = createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: 10_000 });
          this.config = cfg;
          return cfg;
        })
        .finally(() => {
          this.discovering = undefined;
        });
    }
    return this.discovering;
  }

  /** The issuer's authorization URL for one login. */
  async authorizationUrl(p: { state: string; nonce: string; codeVerifier: string }): Promise<URL> {
    const cfg = await this.discover();
    const challenge = await client.calculatePKCECodeChallenge(p.codeVerifier);
    return client.buildAuthorizationUrl(cfg, {
      redirect_uri: this.opts.callbackUrl,
      scope: this.opts.scopes.join(' '),
      response_type: 'code',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: p.state,
      nonce: p.nonce,
    });
  }

  /** Exchanges the code of `callbackUrl` and verifies the id_token. */
  async finishLogin(callbackUrl: URL, checks: { state: string; nonce: string; codeVerifier: string }): Promise<Identity & { claims: JWTPayload }> {
    const cfg = await this.discover();
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(
        cfg,
        callbackUrl,
        {
          pkceCodeVerifier: checks.codeVerifier,
          expectedNonce: checks.nonce,
          expectedState: checks.state,
          idTokenExpected: true,
        },
        { redirect_uri: this.opts.callbackUrl },
      );
    } catch (e) {
      throw describeClientError(e);
    }
    const claims = tokens.claims();
    if (!claims) throw new AuthError('id_token', 'the issuer returned no id_token');
    return { iss: claims.iss, sub: claims.sub, email: claims.email as string | undefined, claims };
  }

  /** Verifies a bearer JWT from the issuer (id_token or JWT access token). */
  async verifyBearer(token: string): Promise<Identity & { claims: JWTPayload }> {
    const cfg = await this.discover();
    if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)) {
      throw new AuthError('Authorization', 'bearer token is not a JWS compact JWT');
    }
    const meta = cfg.serverMetadata();
    const audiences = this.opts.bearerAudiences?.length ? this.opts.bearerAudiences : [this.opts.clientId];
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.jwks!, {
        issuer: meta.issuer,
        audience: audiences,
        algorithms: meta.id_token_signing_alg_values_supported?.filter((a) => a !== 'none') ?? ['RS256'],
        requiredClaims: ['exp', 'iat', 'iss'],
        clockTolerance: this.opts.clockToleranceSeconds ?? 30,
      }));
    } catch (e) {
      throw describeJoseError(e, audiences);
    }
    // jose checks iat only with maxTokenAge; a token issued in the future is refused here.
    const skew = this.opts.clockToleranceSeconds ?? 30;
    const now = Math.floor(Date.now() / 1000);
    if (typeof payload.iat === 'number' && payload.iat > now + skew) {
      throw new AuthError('Authorization', `bearer token iat ${payload.iat} is ${payload.iat - now} s in the future (allowed clock skew ${skew} s)`);
    }
    const sub = payload.sub ?? (payload.client_id as string | undefined);
    if (!sub) throw new AuthError('Authorization', 'bearer token has neither sub nor client_id');
    return { iss: payload.iss!, sub, email: payload.email as string | undefined, claims: payload };
  }
}

function describeJoseError(e: unknown, audiences: string[]): AuthError {
  if (e instanceof joseErrors.JWTExpired) return new AuthError('Authorization', 'bearer token expired; get a fresh one from the issuer');
  if (e instanceof joseErrors.JWSSignatureVerificationFailed) {
    return new AuthError('Authorization', "bearer token signature does not verify against the issuer's JWKS");
  }
  if (e instanceof joseErrors.JWKSNoMatchingKey) {
    return new AuthError('Authorization', "bearer token is signed with a key the issuer's JWKS does not contain");
  }
  if (e instanceof joseErrors.JWTClaimValidationFailed) {
    if (e.claim === 'aud') {
      return new AuthError('Authorization', `bearer token audience is not one of [${audiences.join(', ')}]`);
    }
    return new AuthError('Authorization', `bearer token claim "${e.claim}" invalid: ${e.message}`);
  }
  if (e instanceof joseErrors.JOSEAlgNotAllowed) return new AuthError('Authorization', `bearer token algorithm not allowed: ${e.message}`);
  return new AuthError('Authorization', `bearer token rejected: ${(e as Error).message}`);
}

function describeClientError(e: unknown): AuthError {
  const err = e as Error & { code?: string; error?: string; error_description?: string; cause?: unknown };
  if (err instanceof client.AuthorizationResponseError || err instanceof client.ResponseBodyError) {
    return new AuthError('code', `the issuer refused the login: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}`);
  }
  // openid-client may wrap oauth4webapi's error; look through the cause chain for the claim name
  let claim: string | undefined;
  for (let c: unknown = err; c && !claim; c = (c as { cause?: unknown }).cause) {
    const o = c as { claim?: string; message?: string };
    claim = o.claim ?? (typeof o.message === 'string' ? /"(\w+)"[^"]*claim/.exec(o.message)?.[1] : undefined);
  }
  switch (err.code) {
    case 'OAUTH_JWT_CLAIM_COMPARISON_FAILED':
      return new AuthError(`id_token.${claim ?? 'claim'}`, `does not match the login request: ${err.message}`);
    case 'OAUTH_JWS_SIGNATURE_VERIFICATION_FAILED':
      return new AuthError('id_token', "signature does not verify against the issuer's JWKS");
    case 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED':
      return new AuthError('id_token', `time check failed: ${err.message}`);
    default:
      return new AuthError('id_token', `login could not be completed: ${err.message}`);
  }
}
