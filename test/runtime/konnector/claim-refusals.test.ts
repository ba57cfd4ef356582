import { describe, expect, it } from '@jest/globals';
import type { RecordedEvent } from '../../../runtime/core/events.js';
import { CLAIM_REFUSED_CONDITION, ClaimRefusals, claimRefusalCondition, type ClaimRefusal } from '../../../runtime/konnector/claim-refusals.js';
import type { APIServiceBinding } from '../../../runtime/konnector/types.js';

const A = {
  apiVersion: 'klutch.anynines.com/v1alpha1',
  kind: 'APIServiceBinding',
  metadata: { name: 'a.example.com', namespace: 'klutch-bind', uid: 'uid-a' },
  spec: {},
} as APIServiceBinding;

function registry() {
  const events: Array<{ on: string } & RecordedEvent> = [];
  const changes: string[] = [];
  const r = new ClaimRefusals({
    binding: (uid) => (uid === 'uid-a' ? A : undefined),
    changed: (uid) => changes.push(uid),
    event: (b, e) => events.push({ on: b.metadata.name!, ...e }),
  });
  return { r, events, changes };
}

const token = (over: Partial<ClaimRefusal> = {}): ClaimRefusal => ({
  binding: 'uid-a',
  resource: 'secrets',
  namespace: 'team-e',
  name: 'deployer-token',
  direction: 'down',
  type: 'kubernetes.io/service-account-token',
  serviceAccount: 'deployer',
  why: 'the token controller mints a token',
  ...over,
});

describe('ClaimRefusals', () => {
  it('a new refusal: one Warning Event naming the Secret, its type and ServiceAccount; the condition lists it', () => {
    const { r, events, changes } = registry();
    expect(r.report('s1', token())).toBe(true);
    expect(r.report('s1', token())).toBe(false); // seen again: no Event storm
    expect(events).toEqual([
      {
        on: 'a.example.com',
        type: 'Warning',
        reason: 'SecretTypeRefused',
        message: `the provider's Secret team-e/deployer-token (type kubernetes.io/service-account-token, for ServiceAccount "deployer") is not copied: the token controller mints a token`,
      },
    ]);
    expect(changes).toEqual(['uid-a']);
    const c = claimRefusalCondition(r.of('uid-a'))!;
    expect(c).toMatchObject({ type: CLAIM_REFUSED_CONDITION, status: 'True', reason: 'SecretTypeNotAllowed' });
    expect(c.message).toContain('1 claimed object not copied');
    expect(c.message).toContain('team-e/deployer-token (type kubernetes.io/service-account-token, for ServiceAccount "deployer")');
    expect(r.of('uid-b')).toEqual([]);
  });

  it('resolved or its syncer stopped: the condition goes', () => {
    const { r, changes } = registry();
    r.report('s1', token());
    r.report('s1', token({ name: 'x', direction: 'up', type: 'helm.sh/release.v1', serviceAccount: undefined }));
    r.report('s2', token({ name: 'y' }));
    r.resolve('s1', 'team-e', 'deployer-token');
    expect(r.of('uid-a').map((x) => x.name)).toEqual(['x', 'y']);
    expect(claimRefusalCondition(r.of('uid-a'))!.message).toContain("the app cluster's Secret team-e/x (type helm.sh/release.v1)");
    r.resolveAll('s1');
    r.resolveAll('s2');
    expect(r.of('uid-a')).toEqual([]);
    expect(claimRefusalCondition(r.of('uid-a'))).toBeUndefined();
    expect(changes.length).toBe(6);
  });

  it('a changed type is a new refusal (new Event); more than five are summarised', () => {
    const { r, events } = registry();
    r.report('s1', token());
    r.report('s1', token({ type: 'bootstrap.kubernetes.io/token', serviceAccount: undefined }));
    expect(events).toHaveLength(2);
    for (let i = 0; i < 6; i++) r.report('s1', token({ name: `n${i}` }));
    expect(claimRefusalCondition(r.of('uid-a'))!.message).toContain('7 claimed objects not copied');
    expect(claimRefusalCondition(r.of('uid-a'))!.message).toContain('; and 2 more');
  });
});
