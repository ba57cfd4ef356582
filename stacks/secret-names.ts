/**
 * The names of the Secrets the stack creates from its secret config values: the manifests
 * (manifests.ts, catalogue.ts, topology-source.ts) only reference them, the control-plane component
 * writes them. A leaf, so that every part of the stack can name them without importing another part.
 */
import { BACKEND_NAMESPACE } from '../constructs/runtime/index.js';

/** Names of the Secrets the stack creates from config secrets (the manifests only reference them). */
export const STACK_SECRETS = {
  namespace: BACKEND_NAMESPACE,
  oidc: { name: 'klutch-backend-oidc', clientSecretKey: 'client-secret' },
  cookies: { name: 'klutch-backend-cookies', signingKey: 'signing-key', encryptionKey: 'encryption-key' },
} as const;
