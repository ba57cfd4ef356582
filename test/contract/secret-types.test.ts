import { describe, expect, it } from '@jest/globals';
import { checkAllowedSecretType, DEFAULT_SECRET_TYPES, NEVER_SECRET_TYPES, SecretTypePolicy, secretTypeOf } from '../../contract/secret-types.js';

describe('the Secret type allow-list of claimed copies', () => {
  it('lets the data-carrying types through, an absent type as Opaque', () => {
    const p = SecretTypePolicy.DEFAULT;
    for (const t of ['Opaque', 'connection.crossplane.io/v1alpha1', 'servicebinding.io/postgresql', 'kubernetes.io/basic-auth', 'kubernetes.io/tls']) {
      expect(p.decide(t)).toMatchObject({ allowed: true });
    }
    expect(secretTypeOf({})).toBe('Opaque');
    expect(secretTypeOf({ type: '' })).toBe('Opaque');
    expect(secretTypeOf({ type: 'kubernetes.io/tls' })).toBe('kubernetes.io/tls');
  });

  it('refuses ServiceAccount and bootstrap tokens, saying why, whatever the admin adds', () => {
    const p = SecretTypePolicy.create(['kubernetes.io/dockerconfigjson']);
    const sa = p.decide('kubernetes.io/service-account-token');
    expect(sa).toMatchObject({ allowed: false, never: true });
    expect(!sa.allowed && sa.why).toContain('mints a token of the ServiceAccount');
    expect(p.decide('bootstrap.kubernetes.io/token')).toMatchObject({ allowed: false, never: true });
    expect(NEVER_SECRET_TYPES.map((r) => r.type)).toEqual(['kubernetes.io/service-account-token', 'bootstrap.kubernetes.io/token']);
  });

  it('refuses any other type, naming the flag that allows it; the admin allows it by exact name', () => {
    const helm = SecretTypePolicy.DEFAULT.decide('helm.sh/release.v1');
    expect(helm).toMatchObject({ allowed: false, never: false });
    expect(!helm.allowed && helm.why).toContain('--allow-secret-type=helm.sh/release.v1');
    expect(SecretTypePolicy.DEFAULT.decide('kubernetes.io/dockerconfigjson')).toMatchObject({ allowed: false });
    const p = SecretTypePolicy.create(['kubernetes.io/dockerconfigjson'], 'KonnectorOptions.allowedSecretTypes');
    expect(p.decide('kubernetes.io/dockerconfigjson')).toMatchObject({ allowed: true, rule: { why: 'added by the app cluster’s admin' } });
    expect(p.decide('kubernetes.io/dockercfg')).toMatchObject({ allowed: false });
    expect(p.rules.slice(0, DEFAULT_SECRET_TYPES.length)).toEqual(DEFAULT_SECRET_TYPES);
  });

  it('refuses a bad or never-allowed addition with the field and value', () => {
    expect(() => SecretTypePolicy.create(['kubernetes.io/service-account-token'], 'KonnectorOptions.allowedSecretTypes')).toThrow(
      'KonnectorOptions.allowedSecretTypes[0]: "kubernetes.io/service-account-token" is never copied (the token controller mints',
    );
    expect(() => checkAllowedSecretType('--allow-secret-type', 'example.com/*')).toThrow('--allow-secret-type: "example.com/*" must be a Secret type');
    expect(() => checkAllowedSecretType('--allow-secret-type', '')).toThrow('--allow-secret-type: "" must be a Secret type');
    expect(() => SecretTypePolicy.create('Opaque' as unknown as string[], 'x')).toThrow('x: "Opaque" must be a list of Secret types');
  });
});
