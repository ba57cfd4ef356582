// Proves that startCluster() gives a real Kubernetes control plane: behaviour that only a real
// kube-apiserver (with etcd) and kube-controller-manager have.
import { beforeAll, describe, expect, it, jest } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  VersionApi,
  Watch,
  type KubernetesObject,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import { ApplyError, applyManifests, clientOf, DEFAULT_API_SERVER_ENV, type RealCluster } from '../../../runtime/realinfra/index.js';
import { ensureKubectl, requiredVersion } from '../../../runtime/realinfra/build.js';
import { apiFailure, eventually, statusOf, uniqueName, useCluster } from '../../realinfra/util.js';

jest.setTimeout(120_000);

// GOMEMLIMIT: the soft memory limit bench:scale and docs/scale.md recommend for control planes; far above what this cluster uses
const realness = useCluster({ name: 'realness', apiServerEnv: { GOMEMLIMIT: '4GiB' } });
let cluster: RealCluster;
let core: CoreV1Api;

beforeAll(() => {
  cluster = realness();
  core = cluster.kubeConfig.makeApiClient(CoreV1Api);
});

async function createNamespace(prefix: string): Promise<string> {
  const name = uniqueName(prefix);
  await core.createNamespace({ body: { metadata: { name } } });
  return name;
}

const GROUP = 'realinfra.klutch-kit.test';

function widgetCrd(plural = 'widgets', kind = 'Widget') {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  required: ['replicas', 'maxReplicas'],
                  properties: { replicas: { type: 'integer', minimum: 0 }, maxReplicas: { type: 'integer' } },
                  'x-kubernetes-validations': [{ rule: 'self.replicas <= self.maxReplicas', message: 'replicas must not exceed maxReplicas' }],
                },
              },
            },
          },
        },
      ],
    },
  };
}

describe('startCluster() runs a real control plane', () => {
  it('serves the version the wrapper module pins, behind TLS with the generated CA', async () => {
    const pinned = requiredVersion(fs.readFileSync(new URL('../../../tools/kube/go.mod', import.meta.url), 'utf8'), 'k8s.io/kubernetes');
    const v = await cluster.kubeConfig.makeApiClient(VersionApi).getCode();
    expect(v.gitVersion).toBe(pinned);
    expect(v.major).toBe('1');
    expect(cluster.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(cluster.caPem).toContain('BEGIN CERTIFICATE');
    // The kubeconfig file on disk is a working admin credential.
    const fromFile = new KubeConfig();
    fromFile.loadFromFile(cluster.kubeconfigPath);
    const ns = await fromFile.makeApiClient(CoreV1Api).readNamespace({ name: 'kube-system' });
    expect(ns.metadata?.name).toBe('kube-system');
    // Without a credential the API server authenticates us as anonymous and RBAC forbids listing.
    const anon = cluster.kubeconfigForToken('not-a-valid-token');
    expect(await statusOf(anon.makeApiClient(CoreV1Api).listNamespace())).toBe(401);
  });

  it("gives a kubectl of the same release (tools/kube) that works with the cluster's kubeconfig file", async () => {
    const pinned = requiredVersion(fs.readFileSync(new URL('../../../tools/kube/go.mod', import.meta.url), 'utf8'), 'k8s.io/kubernetes');
    const kubectl = await ensureKubectl();
    const version = JSON.parse(execFileSync(kubectl, ['version', '--kubeconfig', cluster.kubeconfigPath, '-o', 'json'], { encoding: 'utf8' })) as {
      clientVersion: { gitVersion: string };
      serverVersion: { gitVersion: string };
    };
    expect(version.clientVersion.gitVersion).toBe(pinned);
    expect(version.serverVersion.gitVersion).toBe(pinned);
    const name = uniqueName('kubectl');
    execFileSync(kubectl, ['--kubeconfig', cluster.kubeconfigPath, 'create', 'namespace', name], { encoding: 'utf8' });
    expect((await core.readNamespace({ name })).metadata?.name).toBe(name);
    expect(execFileSync(kubectl, ['--kubeconfig', cluster.kubeconfigPath, 'get', 'namespace', name, '-o', 'name'], { encoding: 'utf8' }).trim()).toBe(
      `namespace/${name}`,
    );
  }, 600_000); // a cold kubectl build (CI builds it before the tests, `npm run realinfra`)

  it('establishes a CRD and its CEL rule rejects a bad object', async () => {
    const ext = cluster.kubeConfig.makeApiClient(ApiextensionsV1Api);
    const crd = widgetCrd();
    // Raw JSON: the typed client's model would drop the wire-format key `x-kubernetes-validations`.
    await clientOf(cluster.kubeConfig).request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
    await eventually('CRD Established', async () => {
      const c = await ext.readCustomResourceDefinition({ name: crd.metadata.name });
      return c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True');
    });
    const ns = await createNamespace('crd');
    const custom = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
    const widget = (name: string, replicas: number, maxReplicas: number) => ({
      group: GROUP,
      version: 'v1',
      namespace: ns,
      plural: 'widgets',
      body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name }, spec: { replicas, maxReplicas } },
    });
    await eventually('the Widget API is served', async () => (await custom.createNamespacedCustomObject(widget('good', 2, 3))) !== undefined);
    const bad = await apiFailure(custom.createNamespacedCustomObject(widget('bad', 5, 3)));
    expect(bad.status).toBe(422);
    expect(bad.message).toContain('replicas must not exceed maxReplicas');
    // The OpenAPI schema is enforced too (minimum: 0).
    const negative = await apiFailure(custom.createNamespacedCustomObject(widget('negative', -1, 3)));
    expect(negative.status).toBe(422);
    expect(negative.message).toMatch(/spec\.replicas/);
    const stored = (await custom.listNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: ns, plural: 'widgets' })) as {
      items: KubernetesObject[];
    };
    expect(stored.items.map((i) => i.metadata?.name)).toEqual(['good']);
  });

  it('gives a ServiceAccount token (TokenRequest) bound to a namespaced Role 403 outside that namespace', async () => {
    const home = await createNamespace('sa-home');
    const other = await createNamespace('sa-other');
    const rbac = cluster.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    await core.createNamespacedServiceAccount({ namespace: home, body: { metadata: { name: 'reader' } } });
    await rbac.createNamespacedRole({
      namespace: home,
      body: { metadata: { name: 'cm-reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: home,
      body: {
        metadata: { name: 'reader-cm-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: home }],
      },
    });
    const tr = await core.createNamespacedServiceAccountToken({
      name: 'reader',
      namespace: home,
      body: { spec: { audiences: [cluster.serviceAccountIssuer], expirationSeconds: 600 } },
    });
    const token = tr.status?.token;
    expect(token).toMatch(/^ey/);
    const asSa = cluster.kubeconfigForToken(token!, home).makeApiClient(CoreV1Api);
    expect(await statusOf(asSa.listNamespacedConfigMap({ namespace: home }))).toBe(200);
    const denied = await apiFailure(asSa.listNamespacedConfigMap({ namespace: other }));
    expect(denied.status).toBe(403);
    expect(denied.message).toContain(`system:serviceaccount:${home}:reader`);
    expect(await statusOf(asSa.listNamespace())).toBe(403);
    // The Role grants reads only.
    expect(await statusOf(asSa.createNamespacedConfigMap({ namespace: home, body: { metadata: { name: 'nope' } } }))).toBe(403);
  });

  it('completes a namespace deletion (namespace controller) and publishes kube-root-ca.crt into new namespaces', async () => {
    const ns = await createNamespace('doomed');
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'content' }, data: { a: '1' } } });
    const rootCa = await eventually('kube-root-ca.crt in the new namespace', async () => {
      return core.readNamespacedConfigMap({ namespace: ns, name: 'kube-root-ca.crt' });
    });
    expect(rootCa.data?.['ca.crt']).toBe(cluster.caPem);
    await core.deleteNamespace({ name: ns });
    // The API server only marks it Terminating (the `kubernetes` finalizer); the namespace controller
    // of kube-controller-manager must empty it and remove the finalizer.
    const during = await core.readNamespace({ name: ns }).catch(() => undefined);
    if (during) expect(during.status?.phase).toBe('Terminating');
    await eventually('the namespace to be gone', async () => (await statusOf(core.readNamespace({ name: ns }))) === 404);
  });

  it('garbage-collects dependents through ownerReferences', async () => {
    const ns = await createNamespace('gc');
    const owner = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'owner' } } });
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: {
          name: 'dependent',
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! }],
        },
      },
    });
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'bystander' } } });
    await core.deleteNamespacedConfigMap({ namespace: ns, name: 'owner', propagationPolicy: 'Background' });
    await eventually(
      'the dependent ConfigMap to be collected',
      async () => (await statusOf(core.readNamespacedConfigMap({ namespace: ns, name: 'dependent' }))) === 404,
    );
    expect(await statusOf(core.readNamespacedConfigMap({ namespace: ns, name: 'bystander' }))).toBe(200);
  });

  it('populates the aggregated ClusterRoles (clusterrole-aggregation controller)', async () => {
    const rbac = cluster.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    const admin = await eventually('rules in ClusterRole admin', async () => {
      const r = await rbac.readClusterRole({ name: 'admin' });
      return (r.rules?.length ?? 0) > 0 ? r : undefined;
    });
    expect(admin.aggregationRule).toBeDefined();
    expect(admin.rules!.some((r) => r.resources?.includes('configmaps'))).toBe(true);
  });

  it('delivers, to a watch started from a resourceVersion, the events after that version', async () => {
    const ns = await createNamespace('watch');
    const list = await core.listNamespacedConfigMap({ namespace: ns });
    const fromVersion = list.metadata!.resourceVersion!;
    // Changes made after `fromVersion` but before the watch starts must be replayed …
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'early' }, data: { v: '1' } } });
    const early = await core.readNamespacedConfigMap({ namespace: ns, name: 'early' });
    await core.replaceNamespacedConfigMap({ namespace: ns, name: 'early', body: { ...early, data: { v: '2' } } });
    const events: string[] = [];
    const watch = new Watch(cluster.kubeConfig);
    let watchError: unknown;
    const ctl = await watch.watch(
      `/api/v1/namespaces/${ns}/configmaps`,
      { resourceVersion: fromVersion },
      (phase: string, obj: V1ConfigMap) => {
        if (obj.metadata?.name !== 'kube-root-ca.crt') events.push(`${phase} ${obj.metadata?.name} v=${obj.data?.['v'] ?? ''}`);
      },
      (err: unknown) => {
        watchError = err;
      },
    );
    try {
      // … and changes after the watch started must arrive as well.
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'late' }, data: { v: '3' } } });
      await core.deleteNamespacedConfigMap({ namespace: ns, name: 'early' });
      await eventually('all four watch events', async () => events.length >= 4 || (watchError ? Promise.reject(watchError) : false), { timeoutMs: 30_000 });
      expect(events).toEqual(['ADDED early v=1', 'MODIFIED early v=2', 'ADDED late v=3', 'DELETED early v=2']);
    } finally {
      ctl.abort();
    }
  });

  it('changes nothing on a server-side apply with dryRun', async () => {
    const ns = await createNamespace('dryrun');
    const objects = KubernetesObjectApi.makeApiClient(cluster.kubeConfig);
    const cm = (v: string, name = 'settings') => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { v } });
    const created = await objects.patch<KubernetesObject>(cm('1'), undefined, undefined, 'realinfra-test', true, PatchStrategy.ServerSideApply);
    const dry = await objects.patch<KubernetesObject>(cm('2'), undefined, 'All', 'realinfra-test', true, PatchStrategy.ServerSideApply);
    expect((dry as V1ConfigMap).data).toEqual({ v: '2' }); // the answer shows the would-be result …
    const after = await core.readNamespacedConfigMap({ namespace: ns, name: 'settings' });
    expect(after.data).toEqual({ v: '1' }); // … but nothing was stored
    expect(after.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
    // A dry-run create stores nothing either.
    await objects.patch(cm('x', 'phantom'), undefined, 'All', 'realinfra-test', true, PatchStrategy.ServerSideApply);
    expect(await statusOf(core.readNamespacedConfigMap({ namespace: ns, name: 'phantom' }))).toBe(404);
  });

  it('applyManifests() applies CRDs and Namespaces first, whatever the input order, and reports rejected objects', async () => {
    const ns = uniqueName('apply');
    const crd = widgetCrd('gadgets', 'Gadget');
    const gadget = (name: string, replicas: number) => ({
      apiVersion: `${GROUP}/v1`,
      kind: 'Gadget',
      metadata: { name, namespace: ns },
      spec: { replicas, maxReplicas: 3 },
    });
    const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'r', namespace: ns }, rules: [] };
    // Custom resource first, CRD and Namespace last: the helper must reorder.
    const applied = await applyManifests(cluster.kubeConfig, [gadget('g1', 1), role, crd, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }]);
    expect(applied.map((o) => o.kind)).toEqual(['Namespace', 'CustomResourceDefinition', 'Role', 'Gadget']);
    const custom = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
    const g1 = (await custom.getNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: ns, plural: 'gadgets', name: 'g1' })) as KubernetesObject;
    expect(g1.metadata?.managedFields?.[0]?.manager).toBe('klutch-kit');

    // Dry run: the valid one is accepted, the invalid one is rejected by the CEL rule, nothing is stored.
    let err: unknown;
    try {
      await applyManifests(cluster.kubeConfig, [gadget('g2', 2), gadget('g3', 9)], { dryRun: true });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApplyError);
    const failures = (err as ApplyError).failures;
    expect(failures.map((f) => f.ref)).toEqual([`Gadget/${ns}/g3`]);
    expect(failures[0]!.status).toBe(422);
    expect(failures[0]!.message).toContain('replicas must not exceed maxReplicas');
    expect((err as ApplyError).applied.map((o) => o.metadata?.name)).toEqual(['g2']);
    expect(await statusOf(custom.getNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: ns, plural: 'gadgets', name: 'g2' }))).toBe(404);
  });

  it('keeps its data and its apiServerEnv across restartApiServer()', async () => {
    const envOf = (pid: number | undefined) => fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    const ns = await createNamespace('restart');
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'kept' }, data: { k: 'v' } } });
    const oldPid = cluster.pids()['kube-apiserver'];
    expect(envOf(oldPid)).toContain('GOMEMLIMIT=4GiB');
    // the given variable replaces the default's; the other default stays (DEFAULT_API_SERVER_ENV)
    expect(envOf(oldPid)).not.toContain(`GOMEMLIMIT=${DEFAULT_API_SERVER_ENV.GOMEMLIMIT}`);
    expect(envOf(oldPid)).toContain(`GOGC=${DEFAULT_API_SERVER_ENV.GOGC}`);
    await cluster.restartApiServer();
    expect(cluster.pids()['kube-apiserver']).not.toBe(oldPid);
    expect(envOf(cluster.pids()['kube-apiserver'])).toContain('GOMEMLIMIT=4GiB');
    const cm = await core.readNamespacedConfigMap({ namespace: ns, name: 'kept' });
    expect(cm.data).toEqual({ k: 'v' });
    // The log of both runs is kept in the cluster folder.
    const log = fs.readFileSync(cluster.logs['kube-apiserver'], 'utf8');
    expect(log.match(/^### /gm)?.length).toBe(2);
    expect(path.dirname(cluster.logs['kube-apiserver'])).toBe(path.join(cluster.dir, 'logs'));
  });
});
