/** Reading and validating the provider kubeconfig from a binding's Secret. */
import { KubeConfig } from '@kubernetes/client-node';
import type { Secret } from './types.js';

export interface ParsedKubeconfig {
  text: string;
  kubeConfig: KubeConfig;
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
export function parseKubeconfigSecret(secret: Secret | undefined, ref: { namespace: string; name: string; key: string }): ParsedKubeconfig {
  const where = `Secret ${ref.namespace}/${ref.name}`;
  const repair = 'rerun `kubectl bind` (or restore the Secret from the provider) to repair the binding';
  if (!secret) throw new KubeconfigError('KubeconfigSecretNotFound', `${where} not found; ${repair}`);
  const b64 = secret.data?.[ref.key];
  if (!b64) throw new KubeconfigError('KubeconfigSecretInvalid', `${where} has no key "${ref.key}"; ${repair}`);
  const text = Buffer.from(b64, 'base64').toString('utf8');
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
  } catch (e) {
    throw new KubeconfigError('KubeconfigSecretInvalid', `${where} key "${ref.key}" is not a valid kubeconfig (${(e as Error).message}); ${repair}`);
  }
  const ctxName = kc.getCurrentContext();
  const ctx = ctxName ? kc.getContextObject(ctxName) : null;
  if (!ctx) throw new KubeconfigError('KubeconfigSecretInvalid', `${where}: kubeconfig has no current-context; ${repair}`);
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server) throw new KubeconfigError('KubeconfigSecretInvalid', `${where}: context "${ctxName}" names no cluster with a server; ${repair}`);
  if (!ctx.namespace) {
    throw new KubeconfigError(
      'KubeconfigSecretInvalid',
      `${where}: context "${ctxName}" has no namespace; the namespace is the consumer's cluster namespace on the provider; ${repair}`,
    );
  }
  return { text, kubeConfig: kc, namespace: ctx.namespace, server: cluster.server };
}
