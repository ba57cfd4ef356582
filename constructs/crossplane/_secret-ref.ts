/**
 * Checks a Secret key reference given to a ProviderConfig (internal).
 */
import type { SecretKeyRef } from './secret-key-ref.js';
import { checkDnsLabel, checkDnsSubdomain, fail, isPlainObject } from './_util.js';

export function checkSecretKeyRef(prop: string, r: SecretKeyRef): SecretKeyRef {
  if (!isPlainObject(r)) fail(prop, r, 'must be {namespace, name, key}');
  checkDnsLabel(`${prop}.namespace`, r.namespace);
  checkDnsSubdomain(`${prop}.name`, r.name);
  if (typeof r.key !== 'string' || !/^[-._a-zA-Z0-9]+$/.test(r.key)) fail(`${prop}.key`, r.key, 'is not a valid Secret key ([-._a-zA-Z0-9]+)');
  return { namespace: r.namespace, name: r.name, key: r.key };
}
