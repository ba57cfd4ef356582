// Binder's credential handling with its API client faked (the calls it makes recorded); the real
// API server's side (bound tokens, 401 after deletion) is in test/integration/backend/controllers.test.ts.
import { describe, expect, it } from '@jest/globals';
import { ApiError, type KubeClient, type KubeObject } from '../../../runtime/core/client.js';
import { Binder, MIN_TOKEN_SECONDS, ROTATION_KEY_DATA, validateCredentialMaxLife } from '../../../runtime/backend/binder.js';
import { CREDENTIAL_EXPIRY_ANNOTATION, CREDENTIAL_SECRET } from '../../../contract/credential.js';

function fakeKube(opts: { existing?: KubeObject } = {}) {
  const calls: Array<{ verb: string; name?: string; body?: unknown }> = [];
  const kube = {
    async delete(_r: unknown, _ns: string, name: string) {
      calls.push({ verb: 'delete', name });
    },
    async create(_r: unknown, body: KubeObject) {
      calls.push({ verb: 'create', name: body.metadata.name, body });
      if (opts.existing) throw new ApiError(409, 'AlreadyExists', 'exists', 'POST', '/x');
      return { ...body, metadata: { ...body.metadata, uid: 'new-uid' } };
    },
    async get() {
      calls.push({ verb: 'get' });
      return opts.existing;
    },
    async request(_m: string, _p: string, o: { body: { spec: { expirationSeconds: number; boundObjectRef: unknown } } }) {
      calls.push({ verb: 'tokenrequest', body: o.body.spec });
      return { status: { token: 't', expirationTimestamp: 'x' } };
    },
  };
  return { kube: kube as unknown as KubeClient, calls };
}
const binder = (kube: KubeClient, o: { ttl?: number; maxLife?: number } = {}) =>
  new Binder(kube, {
    namespacePrefix: 'cluster',
    prettyName: 'P',
    external: { server: 'https://p.example' },
    tokenTtlSeconds: o.ttl ?? 86400,
    credentialMaxLifeSeconds: o.maxLife,
  });

describe('Binder credentials', () => {
  it('replaces the credential Secret on each bind: delete, then create with its end and a rotation key', async () => {
    const f = fakeKube();
    const before = Date.now();
    const cred = await binder(f.kube).replaceCredential('cluster-a');
    expect(f.calls.map((c) => c.verb)).toEqual(['delete', 'create']);
    expect(f.calls[0]!.name).toBe(CREDENTIAL_SECRET);
    const body = f.calls[1]!.body as KubeObject & { data: Record<string, string> };
    expect(Buffer.from(body.data[ROTATION_KEY_DATA]!, 'base64')).toEqual(cred.rotationKey);
    expect(cred).toMatchObject({ name: CREDENTIAL_SECRET, uid: 'new-uid' });
    expect(cred.expiresAt).toBeGreaterThanOrEqual(before + 30 * 86400_000);
    expect(Date.parse(body.metadata.annotations![CREDENTIAL_EXPIRY_ANNOTATION]!)).toBe(cred.expiresAt);
  });

  it('shares the credential (and its rotation key) a concurrent bind created a moment before', async () => {
    const key = Buffer.alloc(32, 9);
    const existing = {
      metadata: { name: CREDENTIAL_SECRET, uid: 'other-uid', annotations: { [CREDENTIAL_EXPIRY_ANNOTATION]: '2031-01-01T00:00:00.000Z' } },
      data: { [ROTATION_KEY_DATA]: key.toString('base64') },
    } as KubeObject;
    const cred = await binder(fakeKube({ existing }).kube).replaceCredential('cluster-a');
    expect(cred).toEqual({ name: CREDENTIAL_SECRET, uid: 'other-uid', expiresAt: Date.parse('2031-01-01T00:00:00.000Z'), rotationKey: key });
  });

  it('issues tokens bound to the credential Secret, never beyond its end, none under 10 minutes', async () => {
    const f = fakeKube();
    const b = binder(f.kube);
    const now = Date.parse('2030-01-01T00:00:00Z');
    const cred = { name: CREDENTIAL_SECRET, uid: 'u1', expiresAt: now + 3600_000, rotationKey: Buffer.alloc(32) };
    await b.issueToken('cluster-a', cred, now);
    expect(f.calls.at(-1)!.body).toEqual({ expirationSeconds: 3600, boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: CREDENTIAL_SECRET, uid: 'u1' } });
    await b.issueToken('cluster-a', { ...cred, expiresAt: now + 40 * 86400_000 }, now);
    expect((f.calls.at(-1)!.body as { expirationSeconds: number }).expirationSeconds).toBe(86400);
    await expect(b.issueToken('cluster-a', { ...cred, expiresAt: now + (MIN_TOKEN_SECONDS - 1) * 1000 }, now)).rejects.toThrow(
      `credential cluster-a/${CREDENTIAL_SECRET} ends in ${MIN_TOKEN_SECONDS - 1}s, less than the shortest token (600s); the consumer binds again`,
    );
  });

  it('checks the maximum life against the minimum token and the token TTL', () => {
    expect(validateCredentialMaxLife(86400, 86400)).toBe(86400);
    expect(() => validateCredentialMaxLife(300, 300)).toThrow('--credential-max-life: 300 must be a whole number of seconds >= 600');
    expect(() => binder(fakeKube().kube, { ttl: 86400, maxLife: 3600 })).toThrow(
      'BinderOptions.credentialMaxLifeSeconds: 3600 is shorter than --token-ttl (86400s); raise it or lower --token-ttl',
    );
  });
});
