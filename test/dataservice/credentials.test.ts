import { describe, expect, it } from '@jest/globals';
import { a8sBindingSecretClaim, CONNECTION_SECRET_TYPE, credentialsSecretClaim } from '../../constructs/dataservice/index.js';
import { renderPermissionClaim } from '../../constructs/runtime/index.js';
import { ownerAllowed, selects } from '../../runtime/konnector/selector.js';

const secret = (name: string, type: string, labels?: Record<string, string>) =>
  ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'cluster-x-team-a', ...(labels ? { labels } : {}) }, type }) as never;

describe('credentialsSecretClaim', () => {
  const claim = renderPermissionClaim('claim', credentialsSecretClaim(), false) as { selector: never };

  it('is a required claim on provider-owned core Secrets, narrowed to Crossplane connection Secrets', () => {
    expect(credentialsSecretClaim()).toEqual({
      group: '',
      resource: 'secrets',
      version: 'v1',
      required: true,
      selector: { owner: 'Provider', fieldSelectors: [`type=${CONNECTION_SECRET_TYPE}`] },
    });
  });

  it("selects the ServiceBinding's <claim>-creds Secret and no other Secret of the namespace (klutch-kit's konnector)", () => {
    expect(selects(claim.selector, secret('app-db-creds', 'connection.crossplane.io/v1alpha1'), 'team-a')).toBe(true);
    expect(selects(claim.selector, secret('db-admin', 'Opaque'), 'team-a')).toBe(false);
    expect(selects(claim.selector, secret('default-token', 'kubernetes.io/service-account-token'), 'team-a')).toBe(false);
    expect(selects(claim.selector, secret('registry', 'kubernetes.io/dockerconfigjson'), 'team-a')).toBe(false);
    expect(ownerAllowed(claim.selector, 'Provider')).toBe(true);
    expect(ownerAllowed(claim.selector, 'Consumer')).toBe(false);
  });

  it('can be narrowed by labels instead', () => {
    const c = renderPermissionClaim('claim', credentialsSecretClaim({ fieldSelectors: [], labelSelectors: [{ 'app.kubernetes.io/part-of': 'db' }] })) as {
      selector: never;
    };
    expect(selects(c.selector, secret('x', 'Opaque', { 'app.kubernetes.io/part-of': 'db' }), 'team-a')).toBe(true);
    expect(selects(c.selector, secret('y', 'Opaque'), 'team-a')).toBe(false);
  });

  it('a8sBindingSecretClaim selects exactly the a8s ServiceBinding Secrets (<binding>-service-binding, Opaque)', () => {
    const c = renderPermissionClaim('claim', a8sBindingSecretClaim(), false) as { selector: never };
    expect(c).toMatchObject({ required: true, selector: { names: ['*-service-binding'], fieldSelectors: ['type=Opaque'], owner: 'Provider' } });
    expect(selects(c.selector, secret('app-db-service-binding', 'Opaque'), 'team-a')).toBe(true);
    expect(selects(c.selector, secret('db-admin', 'Opaque'), 'team-a')).toBe(false);
    expect(selects(c.selector, secret('app-db-creds', 'connection.crossplane.io/v1alpha1'), 'team-a')).toBe(false);
    expect(credentialsSecretClaim({ names: ['*-creds'] }).selector).toEqual({
      names: ['*-creds'],
      owner: 'Provider',
      fieldSelectors: [`type=${CONNECTION_SECRET_TYPE}`],
    });
  });
});
