// The pure parts of the backend's abuse limits (issue 21): the closed set of auth-failure labels,
// the lazy cookie parser, heartbeat times in the future, the per-cluster quotas of the reconcilers
// (with fakes of their injected interfaces) and secrets read from files.
import { describe, expect, it } from '@jest/globals';
import { AUTH_FAILURE_FIELDS, authFailureField } from '../../../runtime/backend/metrics.js';
import { HttpError, cookieValue } from '../../../runtime/backend/server.js';
import { HEARTBEAT_SKEW_MS, heartbeatAge } from '../../../runtime/backend/reconcilers/cluster-binding.js';
import { ServiceNamespaceReconciler, SERVICE_NAMESPACE_FINALIZER } from '../../../runtime/backend/reconcilers/service-namespace.js';
import { ExportRequestReconciler } from '../../../runtime/backend/reconcilers/export-request.js';
import type { ClusterBinding, APIServiceExportRequest, APIServiceNamespace } from '../../../runtime/backend/reconcilers/types.js';
import { parseBackendOptions } from '../../../runtime/backend/options.js';
import { silentLogger } from '../../../runtime/core/index.js';
import { R } from '../../../runtime/backend/refs.js';
import { FakeApiServer } from '../../support/fake-api-server.js';

describe('auth failure labels', () => {
  it.each([
    ['Authorization', 'Authorization'],
    ['state', 'state'],
    ['id_token.nonce', 'id_token'],
    ['cookie klutch-bind-abc', 'cookie'],
    ['cookie tracker_123', 'cookie'],
    ['s', 'request'],
    ['clusterID', 'request'],
    ['Content-Type', 'request'],
    ['something-new', 'other'],
  ])('%s counts as %s', (field, want) => {
    expect(authFailureField(field)).toBe(want);
  });

  it('any string maps into the closed set', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++)
      seen
        .add(authFailureField(`cookie x${i}`))
        .add(authFailureField(`f${i}.y`))
        .add(authFailureField(String.fromCharCode(i)));
    for (const v of seen) expect(AUTH_FAILURE_FIELDS).toContain(v);
  });
});

describe('cookieValue', () => {
  it('decodes only the cookie asked for; a malformed foreign cookie is ignored', () => {
    expect(cookieValue('_ga=%E0%A4%A; klutch-bind-s1=a%20b; x=%', 'klutch-bind-s1')).toBe('a b');
    expect(cookieValue('_ga=%E0%A4%A', 'klutch-bind-s1')).toBeUndefined();
    expect(cookieValue(undefined, 'a')).toBeUndefined();
    expect(cookieValue('a=1; a=2', 'a')).toBe('1');
  });

  it('a malformed cookie of ours is a 400 naming it', () => {
    expect(() => cookieValue('klutch-bind-s1=%', 'klutch-bind-s1')).toThrow(HttpError);
    expect(() => cookieValue('klutch-bind-s1=%', 'klutch-bind-s1')).toThrow(/cookie klutch-bind-s1: value "%" is not percent-encoded/);
  });
});

describe('heartbeatAge', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');
  it('is the age of a past heartbeat, 0 within the allowed skew, undefined for the future or no time', () => {
    expect(heartbeatAge('2029-12-31T23:59:00Z', now)).toBe(60_000);
    expect(heartbeatAge(new Date(now + HEARTBEAT_SKEW_MS).toISOString(), now)).toBe(0);
    expect(heartbeatAge('2099-01-01T00:00:00Z', now)).toBeUndefined();
    expect(heartbeatAge('yesterday', now)).toBeUndefined();
    expect(heartbeatAge(undefined, now)).toBeUndefined();
  });
});

const sn = (name: string, created: string, served = false): APIServiceNamespace => ({
  apiVersion: 'klutch.anynines.com/v1alpha1',
  kind: 'APIServiceNamespace',
  metadata: { name, namespace: 'cluster-a', uid: `uid-${name}`, creationTimestamp: created, finalizers: [SERVICE_NAMESPACE_FINALIZER] },
  status: served ? { namespace: `cluster-a-${name}` } : {},
});
const cb: ClusterBinding = {
  metadata: { name: 'cluster', namespace: 'cluster-a', resourceVersion: '1' },
  spec: { kubeconfigSecretRef: { name: 'kubeconfig', key: 'kubeconfig' }, providerPrettyName: 'provider' },
  status: { conditions: [] },
};

describe('APIServiceNamespace quota', () => {
  const make = (objs: APIServiceNamespace[]) => {
    const requeued: string[] = [];
    const kube = new FakeApiServer().seed(R.serviceNamespaces, ...objs).seed(R.clusterBindings, cb);
    const r = new ServiceNamespaceReconciler({
      kube: kube.client,
      serviceNamespaces: kube.cache(R.serviceNamespaces),
      logger: silentLogger,
      rbacChanged: () => undefined,
      grantNamespace: async () => undefined,
      maxPerCluster: 2,
      clusterBindings: kube.cache(R.clusterBindings),
      requeue: (k) => requeued.push(k),
    });
    return { r, kube, requeued };
  };

  it('serves the oldest ones; the next gets no namespace, a False condition on the ClusterBinding and an event', async () => {
    const { r, kube } = make([sn('a', '2030-01-01T00:00:01Z', true), sn('b', '2030-01-01T00:00:02Z', true), sn('c', '2030-01-01T00:00:03Z')]);
    await r.reconcile('cluster-a/c');
    expect(kube.writes().filter((c) => c.resource === 'namespaces')).toEqual([]);
    const status = kube.writes().find((c) => c.verb === 'updateStatus' && c.resource === 'clusterbindings');
    expect((status?.body as ClusterBinding).status?.conditions).toEqual([
      expect.objectContaining({
        type: 'ServiceNamespacesWithinQuota',
        status: 'False',
        reason: 'QuotaExceeded',
        message: expect.stringMatching(/APIServiceNamespace c not served/),
      }),
    ]);
    expect(kube.writes().filter((c) => c.resource === 'events')).toHaveLength(1);
  });

  it('one within the quota is served', async () => {
    const { r, kube } = make([sn('a', '2030-01-01T00:00:01Z', true), sn('b', '2030-01-01T00:00:02Z')]);
    await r.reconcile('cluster-a/b');
    expect(
      kube
        .writes()
        .filter((c) => c.verb === 'create' && c.resource === 'namespaces')
        .map((c) => c.name),
    ).toEqual(['cluster-a-b']);
  });

  it('deleting one requeues those without a namespace', async () => {
    const gone = {
      ...sn('a', '2030-01-01T00:00:01Z', true),
      metadata: { ...sn('a', '2030-01-01T00:00:01Z').metadata, deletionTimestamp: '2030-01-02T00:00:00Z' },
    };
    const { r, requeued } = make([gone, sn('b', '2030-01-01T00:00:02Z', true), sn('c', '2030-01-01T00:00:03Z')]);
    await r.reconcile('cluster-a/a');
    expect(requeued).toEqual(['cluster-a/c']);
  });
});

describe('export request quota', () => {
  const req = (name: string, created: string): APIServiceExportRequest => ({
    metadata: { name, namespace: 'cluster-a', uid: `uid-${name}`, creationTimestamp: created },
    spec: { resources: [{ group: 'mangodb.com', resource: 'mangodbs' }] },
  });
  it('the request past the quota fails with QuotaExceeded before anything is exported', async () => {
    const now = new Date().toISOString();
    const reqs = [req('r1', now), req('r2', now), req('r3', now)];
    const kube = new FakeApiServer().seed(R.exportRequests, ...reqs);
    const r = new ExportRequestReconciler({
      kube: kube.client,
      requests: kube.cache(R.exportRequests),
      exports: kube.cache(R.exports),
      crds: kube.cache(R.crds),
      templates: kube.cache(R.templates),
      logger: silentLogger,
      consumerScope: 'Namespaced',
      exportRequestGraceMs: 60_000,
      maxPerCluster: 2,
    });
    await r.reconcile('cluster-a/r3');
    const w = kube.writes();
    expect(w).toHaveLength(1);
    expect((w[0].body as APIServiceExportRequest).status).toMatchObject({
      phase: 'Failed',
      conditions: expect.arrayContaining([expect.objectContaining({ type: 'ExportsReady', reason: 'QuotaExceeded' })]),
    });
  });
});

describe('secrets from files', () => {
  const base = ['--oidc-issuer-url=https://issuer.example', '--oidc-issuer-client-id=c'];
  const files: Record<string, string> = { '/s/secret': 'from-file\n', '/s/key': 'a2V5LWtleS1rZXkta2V5LWtleS1rZXkta2V5LWtleS0=\n', '/s/empty': '' };
  const read = (f: string) => {
    if (!(f in files)) throw new Error('ENOENT: no such file');
    return files[f];
  };
  it('reads the client secret and cookie keys from files, without the trailing newline', () => {
    const o = parseBackendOptions([...base, '--oidc-issuer-client-secret-file=/s/secret', '--cookie-signing-key-file=/s/key'], {}, read);
    expect(o.oidcIssuerClientSecret).toBe('from-file');
    expect(o.cookieSigningKey).toBe('a2V5LWtleS1rZXkta2V5LWtleS1rZXkta2V5LWtleS0=');
  });
  it('names the flag when the file is missing, empty or given with the value too', () => {
    expect(() => parseBackendOptions([...base, '--oidc-issuer-client-secret-file=/nope'], {}, read)).toThrow(
      /--oidc-issuer-client-secret-file: cannot read "\/nope"/,
    );
    expect(() => parseBackendOptions([...base, '--cookie-signing-key-file=/s/empty'], {}, read)).toThrow(/--cookie-signing-key-file: "\/s\/empty" is empty/);
    expect(() => parseBackendOptions([...base, '--oidc-issuer-client-secret=x', '--oidc-issuer-client-secret-file=/s/secret'], {}, read)).toThrow(
      /set one of them/,
    );
  });
  it('has the abuse limits with their defaults', () => {
    const o = parseBackendOptions(base, {});
    expect(o).toMatchObject({
      controllerSyncTimeout: 60,
      apiQps: 100,
      apiBurst: 200,
      apiQueueLimit: 200,
      maxServiceNamespacesPerCluster: 100,
      maxExportRequestsPerCluster: 100,
      shutdownDelay: 5,
      shutdownGrace: 25,
    });
  });
});
