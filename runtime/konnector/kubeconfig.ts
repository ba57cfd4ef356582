/** Reading and validating the provider kubeconfig from a binding's Secret. */
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeconfigLoadError, parseKubeconfig, type ClusterAccess } from '../core/kubeconfig.js';
import type { Secret } from './types.js';

export interface ParsedKubeconfig {
  text: string;
  access: ClusterAccess | KubeConfig;
  /** The current context's namespace: the consumer's cluster namespace on the provider. */
  namespace: string;
  server: string;
}

export class KubeconfigError extends Error {
  constructor(
    readonly reason: 'KubeconfigSecretNotFound' | 'KubeconfigSecretInvalid',
    message: string,
  ) {
    super(message);
    this.name = 'KubeconfigError';
  }
}

/**
 * Extracts and checks the kubeconfig at `key` of `secret` (`ref` only names it in messages).
 * Throws KubeconfigError with a reason for the SecretValid condition.
 */
export function parseKubeconfigSecret(
  secret: Secret | undefined,
  ref: { namespace: string; name: string; key: string },
  opts: { requireNamespace?: boolean } = {},
): ParsedKubeconfig {
  const where = `Secret ${ref.namespace}/${ref.name}`;
  const repair = 'rerun `kubectl bind` (or restore the Secret from the provider) to repair the binding';
  if (!secret) throw new KubeconfigError('KubeconfigSecretNotFound', `${where} not found; ${repair}`);
  const b64 = secret.data?.[ref.key];
  if (!b64) throw new KubeconfigError('KubeconfigSecretInvalid', `${where} has no key "${ref.key}"; ${repair}`);
  const text = Buffer.from(b64, 'base64').toString('utf8');
  let access: ClusterAccess;
  try {
    access = parseKubeconfig(text, { source: `${where} key "${ref.key}"` });
  } catch (e) {
    if (!(e instanceof KubeconfigLoadError)) throw e;
    throw new KubeconfigError('KubeconfigSecretInvalid', `${e.message}; ${repair}`);
  }
  if (!access.namespace && opts.requireNamespace !== false) {
    throw new KubeconfigError(
      'KubeconfigSecretInvalid',
      `${where}: context "${access.context}" has no namespace; the namespace is the consumer's cluster namespace on the provider; ${repair}`,
    );
  }
  return { text, access, namespace: access.namespace ?? '', server: access.server };
}
