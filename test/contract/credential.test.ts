import { describe, expect, it } from '@jest/globals';
import { CredentialSealError, ROTATION_KEY_EXTENSION, newRotationKey, rotationKeyOf, sealKubeconfig, unsealKubeconfig } from '../../contract/credential.js';
import { BINDER_RULES, CREDENTIAL_SECRET } from '../../contract/binder-rbac.js';
import { renderKubeconfig } from '../../runtime/backend/binder.js';
import { parseKubeconfig } from '../../runtime/core/kubeconfig.js';

describe('the consumer credential (contract/credential.ts)', () => {
  const key = newRotationKey();
  const text = renderKubeconfig({ server: 'https://cp.example:6443' }, 'cluster-a', 'tok', key);

  it('carries the rotation key in a kubeconfig extension that kubeconfig loaders ignore', () => {
    expect(key).toHaveLength(32);
    expect(rotationKeyOf(text)).toEqual(key);
    expect(text).toContain(ROTATION_KEY_EXTENSION);
    expect(parseKubeconfig(text)).toMatchObject({ server: 'https://cp.example:6443', token: 'tok', namespace: 'cluster-a' });
    expect(rotationKeyOf(renderKubeconfig({ server: 'https://cp.example:6443' }, 'cluster-a', 'tok'))).toBeUndefined();
    expect(rotationKeyOf('not: [yaml')).toBeUndefined();
  });

  it('seals a kubeconfig that only the same key and cluster namespace open', () => {
    const sealed = sealKubeconfig(key, 'cluster-a', text);
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9+/]+=*$/);
    expect(sealed).not.toContain('tok');
    expect(unsealKubeconfig(key, 'cluster-a', sealed)).toBe(text);
    expect(sealKubeconfig(key, 'cluster-a', text)).not.toBe(sealed); // a fresh IV each time
    expect(() => unsealKubeconfig(newRotationKey(), 'cluster-a', sealed)).toThrow(CredentialSealError);
    expect(() => unsealKubeconfig(key, 'cluster-b', sealed)).toThrow(/does not open with this kubeconfig's rotation key/);
    const bytes = Buffer.from(sealed.slice(3), 'base64');
    bytes[20] ^= 1;
    expect(() => unsealKubeconfig(key, 'cluster-a', `v1.${bytes.toString('base64')}`)).toThrow(CredentialSealError);
    expect(() => unsealKubeconfig(key, 'cluster-a', 'v2.AAAA')).toThrow(/is not a "v1.<base64>" sealed kubeconfig/);
    expect(() => unsealKubeconfig(key, 'cluster-a', 'v1.AAAA')).toThrow(/too short/);
  });

  it('gives the consumer no read of Secrets, only the delete of its credential Secret (revocation)', () => {
    const secretRules = BINDER_RULES.filter((r) => r.resources.includes('secrets'));
    expect(secretRules.map(({ verbs, resourceNames }) => ({ verbs, resourceNames }))).toEqual([{ verbs: ['delete'], resourceNames: [CREDENTIAL_SECRET] }]);
  });
});
