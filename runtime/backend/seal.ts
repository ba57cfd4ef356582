/**
 * Signed-then-encrypted tokens for the OIDC `state` parameter and the session cookie:
 * an HMAC-signed JWT (HS256 for 32-byte keys, HS512 for 64-byte keys) nested inside a JWE
 * (`dir` + AES-GCM). The signing and encryption keys are the `--cookie-signing-key` /
 * `--cookie-encryption-key` flags (base64). Without an encryption key one is derived from the
 * signing key with HKDF-SHA256, so state and cookies are never sent in the clear.
 */
import { createHash, hkdfSync, randomBytes } from 'node:crypto';
import { CompactEncrypt, SignJWT, compactDecrypt, jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';

export interface CookieKeys {
  signing: Uint8Array;
  encryption: Uint8Array;
}

function decodeKey(flag: string, value: string, allowed: number[]): Uint8Array {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) {
    throw new Error(`${flag}: "${value.slice(0, 8)}…" is not base64`);
  }
  const buf = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (!allowed.includes(buf.length)) {
    throw new Error(`${flag}: decodes to ${buf.length} bytes, expected ${allowed.join(' or ')}; generate one with "openssl rand -base64 ${allowed[0]}"`);
  }
  return new Uint8Array(buf);
}

/** Parses the cookie key flags; without a signing key a random one is used (sessions end on restart). */
export function parseCookieKeys(signingKey: string | undefined, encryptionKey: string | undefined): CookieKeys {
  const signing = signingKey ? decodeKey('--cookie-signing-key', signingKey, [32, 64]) : new Uint8Array(randomBytes(32));
  const encryption = encryptionKey
    ? decodeKey('--cookie-encryption-key', encryptionKey, [16, 24, 32])
    : new Uint8Array(hkdfSync('sha256', signing, Buffer.alloc(0), 'klutch-bind cookie encryption', 32));
  return { signing, encryption };
}

export class SealError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = 'SealError';
  }
}

export class Sealer {
  private readonly sigAlg: 'HS256' | 'HS512';
  private readonly enc: 'A128GCM' | 'A192GCM' | 'A256GCM';

  constructor(private readonly keys: CookieKeys) {
    this.sigAlg = keys.signing.length === 64 ? 'HS512' : 'HS256';
    this.enc = keys.encryption.length === 16 ? 'A128GCM' : keys.encryption.length === 24 ? 'A192GCM' : 'A256GCM';
  }

  /** Seals `payload` for `purpose` (`typ` header and audience), valid for `ttlSeconds`. */
  async seal(purpose: string, payload: JWTPayload, ttlSeconds: number): Promise<string> {
    const jws = await new SignJWT(payload)
      .setProtectedHeader({ alg: this.sigAlg, typ: purpose })
      .setAudience(purpose)
      .setIssuedAt()
      .setExpirationTime(`${ttlSeconds}s`)
      .sign(this.keys.signing);
    return new CompactEncrypt(new TextEncoder().encode(jws)).setProtectedHeader({ alg: 'dir', enc: this.enc, cty: 'JWT' }).encrypt(this.keys.encryption);
  }

  /** Opens a sealed token; throws SealError naming `field` when it was tampered with, forged or expired. */
  async open<T extends JWTPayload>(field: string, purpose: string, token: string): Promise<T> {
    if (!token) throw new SealError(field, 'missing');
    let inner: string;
    try {
      const { plaintext } = await compactDecrypt(token, this.keys.encryption, { contentEncryptionAlgorithms: [this.enc] });
      inner = new TextDecoder().decode(plaintext);
    } catch {
      throw new SealError(field, 'cannot be decrypted (tampered with, or sealed with another key)');
    }
    try {
      const { payload } = await jwtVerify(inner, this.keys.signing, {
        algorithms: [this.sigAlg],
        audience: purpose,
        typ: purpose,
        requiredClaims: ['exp', 'iat'],
      });
      return payload as T;
    } catch (e) {
      if (e instanceof joseErrors.JWTExpired) throw new SealError(field, 'expired; start again');
      throw new SealError(field, `invalid (${(e as Error).message})`);
    }
  }
}

export const sha256b64url = (s: string): string => createHash('sha256').update(s).digest('base64url');
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');

/** Remembers used one-time token ids until they expire (single-use state). */
export class ReplayCache {
  private readonly seen = new Map<string, number>();

  /** Returns false if `id` was used before; otherwise records it until `expSeconds` (epoch). */
  use(id: string, expSeconds: number): boolean {
    const now = Date.now() / 1000;
    if (this.seen.size > 1000) for (const [k, exp] of this.seen) if (exp < now) this.seen.delete(k);
    if (this.seen.has(id)) return false;
    this.seen.set(id, expSeconds);
    return true;
  }
}
