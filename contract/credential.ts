/**
 * The consumer credential's life cycle, agreed by klutch-backend and the konnector (not exported from
 * contract/index.ts: it uses node:crypto, which the constructs do not need).
 *
 * - Every token handed to a consumer is a TokenRequest token bound (`boundObjectRef`) to the Secret
 *   {@link CREDENTIAL_SECRET} in its cluster namespace. Deleting that Secret invalidates every token
 *   issued for it at once (revocation); a re-bind replaces it, so the tokens of earlier binds die.
 * - The Secret carries {@link CREDENTIAL_EXPIRY_ANNOTATION}: the credential's maximum life. No token is
 *   issued beyond it, and the backend deletes the Secret when it is reached.
 * - A rotated kubeconfig reaches the konnector sealed (AES-256-GCM) in the ClusterBinding annotation
 *   {@link SEALED_KUBECONFIG_ANNOTATION}, under a key that travels only inside the kubeconfig itself
 *   (the kubeconfig extension {@link ROTATION_KEY_EXTENSION}) and is never sent to the API server. The
 *   consumer's token cannot read the backend's kubeconfig Secret, so a token alone (leaked from a log,
 *   a proxy, an audit trail) cannot fetch its successor; only the holder of the whole kubeconfig can.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { parse } from 'yaml';
import { BIND_GROUP } from './api/constants.js';
import { CREDENTIAL_SECRET } from './binder-rbac.js';

/** The per-credential object every consumer token is bound to; deleting it revokes them all. */
export { CREDENTIAL_SECRET };
/** Annotation on the credential Secret (and the ClusterBinding): the end of its maximum life (RFC 3339). */
export const CREDENTIAL_EXPIRY_ANNOTATION = `${BIND_GROUP}/credential-expiration`;
/** Annotation on the ClusterBinding: the current kubeconfig, sealed with the rotation key. */
export const SEALED_KUBECONFIG_ANNOTATION = `${BIND_GROUP}/sealed-kubeconfig`;
/** Name of the kubeconfig extension (top-level `extensions`) that holds the rotation key. */
export const ROTATION_KEY_EXTENSION = `${BIND_GROUP}/rotation-key`;

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class CredentialSealError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CredentialSealError';
  }
}

/** A fresh 32-byte rotation key. */
export function newRotationKey(): Buffer {
  return randomBytes(32);
}

/** The kubeconfig `extensions` entry carrying `key`. */
export function rotationKeyExtension(key: Buffer): { name: string; extension: { key: string } } {
  return { name: ROTATION_KEY_EXTENSION, extension: { key: key.toString('base64') } };
}

/** The rotation key inside kubeconfig text, or undefined when it has none (or is no kubeconfig). */
export function rotationKeyOf(kubeconfig: string): Buffer | undefined {
  let raw: unknown;
  try {
    raw = parse(kubeconfig);
  } catch {
    return undefined;
  }
  const exts = (raw as { extensions?: unknown } | null)?.extensions;
  if (!Array.isArray(exts)) return undefined;
  const e = exts.find((x) => (x as { name?: unknown })?.name === ROTATION_KEY_EXTENSION) as { extension?: { key?: unknown } } | undefined;
  const k = e?.extension?.key;
  if (typeof k !== 'string') return undefined;
  const buf = Buffer.from(k, 'base64');
  return buf.length === 32 ? buf : undefined;
}

/** Seals `kubeconfig` for the consumer of `clusterNamespace` (the namespace is authenticated, not secret). */
export function sealKubeconfig(key: Buffer, clusterNamespace: string, kubeconfig: string): string {
  const iv = randomBytes(IV_BYTES);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(`${VERSION}\n${clusterNamespace}`));
  const body = Buffer.concat([c.update(kubeconfig, 'utf8'), c.final()]);
  return `${VERSION}.${Buffer.concat([iv, body, c.getAuthTag()]).toString('base64')}`;
}

/** Opens what {@link sealKubeconfig} sealed; throws CredentialSealError naming what is wrong. */
export function unsealKubeconfig(key: Buffer, clusterNamespace: string, sealed: string): string {
  const [version, b64, extra] = sealed.split('.');
  if (version !== VERSION || !b64 || extra !== undefined) {
    throw new CredentialSealError(`annotation ${SEALED_KUBECONFIG_ANNOTATION} is not a "${VERSION}.<base64>" sealed kubeconfig`);
  }
  const buf = Buffer.from(b64, 'base64');
  if (buf.length < IV_BYTES + TAG_BYTES + 1) throw new CredentialSealError(`annotation ${SEALED_KUBECONFIG_ANNOTATION} is too short`);
  const d = createDecipheriv('aes-256-gcm', key, buf.subarray(0, IV_BYTES));
  d.setAAD(Buffer.from(`${VERSION}\n${clusterNamespace}`));
  d.setAuthTag(buf.subarray(buf.length - TAG_BYTES));
  try {
    return Buffer.concat([d.update(buf.subarray(IV_BYTES, buf.length - TAG_BYTES)), d.final()]).toString('utf8');
  } catch {
    throw new CredentialSealError(
      `annotation ${SEALED_KUBECONFIG_ANNOTATION} does not open with this kubeconfig's rotation key (sealed for another credential or namespace, or altered)`,
    );
  }
}
