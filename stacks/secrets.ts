/** Stack secrets: read from config secrets, validated, never echoed; generated once by `generateStackSecrets`. */
import { randomBytes } from 'node:crypto';
import * as pulumi from '@pulumi/pulumi';
import { checkBase64Key, CONFIG_NAMESPACE, SECRET_KEYS, StackConfigError } from './config.js';
import type { ControlPlaneSecrets } from './control-plane.js';
import type { SecretConfigReader } from './cluster.js';

/** Fresh values for the secret config keys; set each with `pulumi config set --secret <key> <value>`. */
export function generateStackSecrets(): Record<(typeof SECRET_KEYS)[keyof typeof SECRET_KEYS], string> {
  return {
    [SECRET_KEYS.oidcClientSecret]: randomBytes(24).toString('base64url'),
    [SECRET_KEYS.cookieSigningKey]: randomBytes(32).toString('base64'),
    [SECRET_KEYS.cookieEncryptionKey]: randomBytes(32).toString('base64'),
  };
}

function required(cfg: SecretConfigReader, key: string, hint: string): pulumi.Output<string> {
  const v = cfg.getSecret(key);
  if (v === undefined) {
    throw new StackConfigError(`${CONFIG_NAMESPACE}:${key} is not set; set it with: pulumi config set --secret ${key} "${hint}"`);
  }
  return v;
}

/**
 * The control plane's secrets from config. Values are validated inside `apply` (they are only known at run time);
 * a bad value fails the update with a message naming the key, never the value.
 */
export function readStackSecrets(cfg: SecretConfigReader): ControlPlaneSecrets {
  const oidc = required(cfg, SECRET_KEYS.oidcClientSecret, '$(openssl rand -base64 24)');
  const signing = required(cfg, SECRET_KEYS.cookieSigningKey, '$(openssl rand -base64 32)');
  const encryption = cfg.getSecret(SECRET_KEYS.cookieEncryptionKey);
  return {
    oidcClientSecret: oidc.apply((v) => {
      if (v.trim().length < 16) {
        throw new StackConfigError(`${CONFIG_NAMESPACE}:${SECRET_KEYS.oidcClientSecret}: expected at least 16 characters, got ${v.trim().length}`);
      }
      return v;
    }),
    cookieSigningKey: signing.apply((v) => {
      checkBase64Key(SECRET_KEYS.cookieSigningKey, v, [32, 64]);
      return v;
    }),
    ...(encryption
      ? {
          cookieEncryptionKey: encryption.apply((v) => {
            checkBase64Key(SECRET_KEYS.cookieEncryptionKey, v, [32, 16, 24]);
            return v;
          }),
        }
      : {}),
  };
}
