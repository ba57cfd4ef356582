// The backend controllers on a real provider cluster: export requests (success, missing CRD → Failed),
// export kept in sync with its CRD, APIServiceNamespace lifecycle, heartbeat health, token rotation.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type KubeObject } from '../../../runtime/core/index.js';
import { responseKubeconfig } from '../../../contract/wire.js';
import { eventually } from '../../realinfra/util.js';
import { CLIENT_ID, SECRETS_CLAIM, startProvider, template, widgetCrd, type ProviderEnv } from './_fixture.js';
import { applyManifests } from '../../../runtime/realinfra/index.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { parseKubeconfig } from '../../../runtime/core/kubeconfig.js';
import { run as kubectlBind } from '../../../runtime/kubectl-bind/main.js';
import {
  CREDENTIAL_EXPIRY_ANNOTATION,
  CREDENTIAL_SECRET,
  SEALED_KUBECONFIG_ANNOTATION,
  newRotationKey,
  rotationKeyOf,
  unsealKubeconfig,
} from '../../../contract/credential.js';

jest.setTimeout(120_000);

let env: ProviderEnv;
let clusterNs: string;
let consumer: KubeClient;

const B = (plural: string, kind: string) => ({ group: 'klutch.anynines.com', version: 'v1alpha1', plural, namespaced: true, kind });
const REQ = B('apiserviceexportrequests', 'APIServiceExportRequest');
const EXP = B('apiserviceexports', 'APIServiceExport');
const SN = B('apiservicenamespaces', 'APIServiceNamespace');
const CB = B('clusterbindings', 'ClusterBinding');
const NS = { group: '', version: 'v1', plural: 'namespaces', namespaced: false, kind: 'Namespace' };
const SECRET = { group: '', version: 'v1', plural: 'secrets', namespaced: true, kind: 'Secret' };
const CRD = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', namespaced: false, kind: 'CustomResourceDefinition' };

type Obj = KubeObject & { spec?: any; status?: any; data?: any };

beforeAll(async () => {
  env = await startProvider('bind-ctrl', ['--export-request-retention=20s']);
  await applyManifests(env.cluster.kubeConfig, [template('ghosts', 'example.klutch.test', 'ghosts', [SECRETS_CLAIM]) as never]);
  const now = Math.floor(Date.now() / 1000);
  const tok = await env.op.signAsIssuer({ iss: env.op.issuer, sub: 'ctrl-user', aud: CLIENT_ID, iat: now, exp: now + 300 });
  const res = await fetch(`${env.backend.url}/bind`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${tok}` },
    body: JSON.stringify({ group: 'example.klutch.test', resource: 'widgets', clusterID: 'ctrl-' + randomBytes(3).toString('hex') }),
  });
  expect(res.status).toBe(200);
  const kc = new KubeConfig();
  kc.loadFromString(responseKubeconfig((await res.json()) as never));
  clusterNs = kc.getContextObject(kc.getCurrentContext())!.namespace!;
  consumer = new KubeClient(kc);
}, 180_000);
afterAll(async () => {
  consumer?.close();
  await env?.stop();
});

describe('APIServiceExportRequest → APIServiceExport', () => {
  it('snapshots the CRD (served versions, schema, subresources, printer columns), claims from the template, hash; Succeeded', async () => {
    await consumer.create(REQ, {
      metadata: { name: 'widgets.example.klutch.test', namespace: clusterNs },
      spec: { resources: [{ group: 'example.klutch.test', resource: 'widgets' }] },
    });
    const req = await eventually('request Succeeded', async () => {
      const r = (await consumer.get(REQ, clusterNs, 'widgets.example.klutch.test')) as Obj;
      return r.status?.phase === 'Succeeded' ? r : undefined;
    });
    expect(req.status.conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'ExportsReady', status: 'True' }), expect.objectContaining({ type: 'Ready', status: 'True' })]),
    );
    const exp = (await consumer.get(EXP, clusterNs, 'widgets.example.klutch.test')) as Obj;
    expect(exp.metadata.annotations!['klutch.anynines.com/source-spec-hash']).toMatch(/^[0-9a-zA-Z]{30,}$/);
    expect(exp.spec.group).toBe('example.klutch.test');
    expect(exp.spec.names).toMatchObject({ kind: 'Widget', plural: 'widgets' });
    expect(exp.spec.informerScope).toBe('Namespaced');
    expect(exp.spec.versions.map((v: { name: string }) => v.name)).toEqual(['v1']); // v1beta1 is not served
    expect(exp.spec.versions[0]).toMatchObject({
      served: true,
      storage: true,
      subresources: { status: {} },
      additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }],
    });
    expect(exp.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.type).toBe('integer');
    await eventually('ProviderInSync', async () => {
      const e = (await env.kube.get(EXP, clusterNs, 'widgets.example.klutch.test')) as Obj;
      return e.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'ProviderInSync' && c.status === 'True');
    });
  });

  it('keeps the export in sync when the CRD changes', async () => {
    const before = (await env.kube.get(EXP, clusterNs, 'widgets.example.klutch.test')) as Obj;
    const crd = (await env.kube.get(CRD, undefined, 'widgets.example.klutch.test')) as Obj;
    crd.spec.versions = widgetCrd(true).spec ? (widgetCrd(true) as Obj).spec.versions : crd.spec.versions;
    await env.kube.update(CRD, crd);
    const after = await eventually('export updated from the CRD', async () => {
      const e = (await env.kube.get(EXP, clusterNs, 'widgets.example.klutch.test')) as Obj;
      return e.metadata.annotations!['klutch.anynines.com/source-spec-hash'] !== before.metadata.annotations!['klutch.anynines.com/source-spec-hash']
        ? e
        : undefined;
    });
    expect(after.spec.versions[0].additionalPrinterColumns.map((c: { name: string }) => c.name)).toEqual(['Size', 'Age']);
  });

  it('a request for a missing CRD ends Failed with a message after the grace period', async () => {
    await consumer.create(REQ, {
      metadata: { name: 'ghosts', namespace: clusterNs },
      spec: { resources: [{ group: 'example.klutch.test', resource: 'ghosts' }] },
    });
    const pending = await eventually('Pending with CRDNotFound', async () => {
      const r = (await consumer.get(REQ, clusterNs, 'ghosts')) as Obj;
      return r.status?.conditions?.some((c: { reason?: string }) => c.reason === 'CRDNotFound') ? r : undefined;
    });
    expect(pending.status.phase).toBe('Pending');
    const failed = await eventually('Failed', async () => {
      const r = (await consumer.get(REQ, clusterNs, 'ghosts')) as Obj;
      return r.status?.phase === 'Failed' ? r : undefined;
    });
    expect(failed.status.terminalMessage).toMatch(/CustomResourceDefinition ghosts\.example\.klutch\.test not found on the provider within 3s/);
    expect(await env.kube.getOrNull(EXP, clusterNs, 'ghosts.example.klutch.test')).toBeUndefined();
  });

  it('a request for an API no template offers fails at once, nothing exported', async () => {
    await consumer.create(REQ, {
      metadata: { name: 'sneaky', namespace: clusterNs },
      spec: { resources: [{ group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' }] },
    });
    const r = await eventually('Failed', async () => {
      const x = (await consumer.get(REQ, clusterNs, 'sneaky')) as Obj;
      return x.status?.phase === 'Failed' ? x : undefined;
    });
    expect(r.status.terminalMessage).toMatch(/not offered by any APIServiceExportTemplate/);
    expect((await env.kube.list(EXP, clusterNs)).items.map((e) => e.metadata.name)).toEqual(['widgets.example.klutch.test']);
  });
});

describe('cleanup', () => {
  it('finished export requests are deleted after the retention period; their exports stay', async () => {
    await eventually('finished requests deleted', async () => (await env.kube.list(REQ, clusterNs)).items.length === 0, { timeoutMs: 40_000 });
    expect(await env.kube.getOrNull(EXP, clusterNs, 'widgets.example.klutch.test')).toBeDefined();
  });
});

describe('APIServiceNamespace', () => {
  it('creates <clusterNs>-<name> with a RoleBinding, and deletes it with the APIServiceNamespace', async () => {
    await consumer.create(SN, { metadata: { name: 'team-a', namespace: clusterNs } });
    const target = `${clusterNs}-team-a`;
    await eventually('status.namespace', async () => ((await consumer.get(SN, clusterNs, 'team-a')) as Obj).status?.namespace === target);
    const ns = await env.kube.get(NS, undefined, target);
    expect(ns.metadata.annotations!['klutch.anynines.com/api-service-namespace']).toBe(`${clusterNs}/team-a`);
    const rb = await eventually('RoleBinding', () =>
      env.kube.getOrNull({ group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'rolebindings', namespaced: true }, target, 'klutch-binder'),
    );
    expect((rb as Obj).roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `klutch-binder-${clusterNs}` });
    expect((rb as Obj).subjects).toEqual([{ kind: 'ServiceAccount', name: 'klutch-binder', namespace: clusterNs }]);
    await consumer.delete(SN, clusterNs, 'team-a');
    await eventually('provider namespace gone', async () => {
      const n = await env.kube.getOrNull(NS, undefined, target);
      return !n || Boolean(n.metadata.deletionTimestamp);
    });
    await eventually('APIServiceNamespace gone (finalizer released)', async () => !(await env.kube.getOrNull(SN, clusterNs, 'team-a')));
  });
});

describe('ClusterBinding health', () => {
  it('FirstHeartbeatPending, then Healthy from a fresh heartbeat, then HeartbeatTimeout', async () => {
    const healthy = async () =>
      (((await env.kube.get(CB, clusterNs, 'cluster')) as Obj).status?.conditions ?? []).find((c: { type: string }) => c.type === 'Healthy');
    await eventually('FirstHeartbeatPending', async () => (await healthy())?.reason === 'FirstHeartbeatPending');
    // the konnector's heartbeat, written with the consumer's own credentials (RBAC allows status updates)
    const cb = (await consumer.get(CB, clusterNs, 'cluster')) as Obj;
    await consumer.updateStatus(CB, {
      ...cb,
      status: { ...cb.status, lastHeartbeatTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), heartbeatInterval: '5s' },
    });
    await eventually('Healthy', async () => (await healthy())?.status === 'True');
    const timedOut = await eventually(
      'HeartbeatTimeout',
      async () => {
        const h = await healthy();
        return h?.reason === 'HeartbeatTimeout' ? h : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(timedOut.status).toBe('False');
    expect(timedOut.message).toMatch(/is the konnector running/);
  });
});

describe('token rotation', () => {
  it('re-issues the TokenRequest token when 2/3 of its lifetime passed', async () => {
    const s = (await env.kube.get(SECRET, clusterNs, 'kubeconfig')) as Obj;
    const oldKubeconfig = Buffer.from(s.data.kubeconfig, 'base64').toString();
    // pretend the token was issued long ago: 2/3 of its lifetime has passed
    const exp = Date.parse(s.metadata.annotations!['klutch.anynines.com/token-expiration']);
    await env.kube.mergePatch(SECRET, clusterNs, 'kubeconfig', {
      metadata: { annotations: { 'klutch.anynines.com/token-issued': new Date(exp - 86400_000 * 30).toISOString() } },
    });
    const rotated = await eventually('rotated kubeconfig', async () => {
      const x = (await env.kube.get(SECRET, clusterNs, 'kubeconfig')) as Obj;
      const k = Buffer.from(x.data.kubeconfig, 'base64').toString();
      return k !== oldKubeconfig ? x : undefined;
    });
    expect(Date.parse(rotated.metadata.annotations!['klutch.anynines.com/token-issued'])).toBeGreaterThan(Date.now() - 60_000);
    const kc = new KubeConfig();
    kc.loadFromString(Buffer.from(rotated.data.kubeconfig, 'base64').toString());
    const k = new KubeClient(kc);
    try {
      expect((await k.list(EXP, clusterNs)).items.length).toBeGreaterThan(0);
    } finally {
      k.close();
    }
    const m = await (await fetch(`${env.backend.url}/metrics`)).text();
    expect(m).toMatch(/klutch_backend_token_rotations_total [1-9]/);
  });

  /** A bind of its own (a fresh app cluster id): the tests below revoke what they bind. */
  async function bindFresh(sub: string): Promise<{ text: string; ns: string; client: KubeClient }> {
    const now = Math.floor(Date.now() / 1000);
    const tok = await env.op.signAsIssuer({ iss: env.op.issuer, sub, aud: CLIENT_ID, iat: now, exp: now + 300 });
    const res = await fetch(`${env.backend.url}/bind`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${tok}` },
      body: JSON.stringify({ group: 'example.klutch.test', resource: 'widgets', clusterID: 'leak-' + randomBytes(3).toString('hex') }),
    });
    expect(res.status).toBe(200);
    const text = responseKubeconfig((await res.json()) as never);
    const access = parseKubeconfig(text);
    return { text, ns: access.namespace!, client: new KubeClient(access) };
  }
  const tokenOf = (kubeconfig: string) => parseKubeconfig(kubeconfig).token!;
  const withToken = (kubeconfig: string, token: string) => new KubeClient({ ...parseKubeconfig(kubeconfig), token });
  /** Whether a token is refused (401) on its own ClusterBinding; anything else but 200 is an error. */
  const refused = async (k: KubeClient, ns: string) =>
    k.get(CB, ns, 'cluster').then(
      () => false,
      (e: { code?: number }) => {
        if (e.code === 401) return true;
        throw e;
      },
    );

  it('a leaked token cannot fetch its successor, and kubectl bind revoke ends the old and the rotated token at once', async () => {
    const b = await bindFresh('leak-user');
    const leaked = b.client; // a copy of the token alone (from a log, a proxy, a debugging session)
    const dir = mkdtempSync(join(tmpdir(), 'revoke-'));
    let successor: KubeClient | undefined;
    try {
      // the token reads its own binding objects, but not the Secret that holds the current token
      expect((await leaked.get(CB, b.ns, 'cluster')).metadata.name).toBe('cluster');
      await expect(leaked.get(SECRET, b.ns, 'kubeconfig')).rejects.toMatchObject({ code: 403 });
      await expect(leaked.list(SECRET, b.ns)).rejects.toMatchObject({ code: 403 });
      // rotation (2/3 of the lifetime "passed")
      const s = (await env.kube.get(SECRET, b.ns, 'kubeconfig')) as Obj;
      const exp = Date.parse(s.metadata.annotations!['klutch.anynines.com/token-expiration']);
      await env.kube.mergePatch(SECRET, b.ns, 'kubeconfig', {
        metadata: { annotations: { 'klutch.anynines.com/token-issued': new Date(exp - 86400_000 * 30).toISOString() } },
      });
      const rotated = await eventually('rotated kubeconfig', async () => {
        const x = (await env.kube.get(SECRET, b.ns, 'kubeconfig')) as Obj;
        const k = Buffer.from(x.data.kubeconfig, 'base64').toString();
        return tokenOf(k) !== tokenOf(b.text) ? k : undefined;
      });
      const next = tokenOf(rotated);
      // after the rotation the leaked token still cannot read the Secret with its successor …
      await expect(leaked.get(SECRET, b.ns, 'kubeconfig')).rejects.toMatchObject({ code: 403 });
      await expect(leaked.list(SECRET, b.ns)).rejects.toMatchObject({ code: 403 });
      // … and what it can read (the ClusterBinding) carries the successor sealed: only the rotation key
      // inside the whole kubeconfig (the konnector's copy) opens it
      const cb = await leaked.get(CB, b.ns, 'cluster');
      const sealed = cb.metadata.annotations![SEALED_KUBECONFIG_ANNOTATION]!;
      expect(sealed).not.toContain(next);
      expect(() => unsealKubeconfig(newRotationKey(), b.ns, sealed)).toThrow();
      expect(tokenOf(unsealKubeconfig(rotationKeyOf(b.text)!, b.ns, sealed))).toBe(next);
      expect(Date.parse(cb.metadata.annotations![CREDENTIAL_EXPIRY_ANNOTATION]!)).toBeGreaterThan(Date.now() + 29 * 86400_000);
      successor = withToken(b.text, next);
      expect((await successor.get(CB, b.ns, 'cluster')).metadata.name).toBe('cluster');

      // explicit revoke with the CLI, holding the rotated kubeconfig: both tokens end
      const file = join(dir, 'provider.kubeconfig');
      writeFileSync(file, rotated);
      const out = new PassThrough();
      const err = new PassThrough();
      let printed = '';
      out.on('data', (d: Buffer) => (printed += d.toString()));
      err.on('data', (d: Buffer) => (printed += d.toString()));
      expect(await kubectlBind(['revoke', '--remote-kubeconfig', file], { out, err, in: new PassThrough() })).toBe(0);
      expect(printed).toContain(`Revoked the credential of ${file} (cluster namespace ${b.ns}`);
      expect(await env.kube.getOrNull(SECRET, b.ns, CREDENTIAL_SECRET)).toBeUndefined();
      // the API server caches a successful token review for up to 10 s
      await eventually('the leaked and the rotated token refused (401)', async () => (await refused(leaked, b.ns)) && (await refused(successor!, b.ns)), {
        timeoutMs: 30_000,
      });
      // revoking again: the credential is already invalid, which is what was asked
      printed = '';
      expect(await kubectlBind(['revoke', '--remote-kubeconfig', file], { out, err, in: new PassThrough() })).toBe(0);
      expect(printed).toContain('is already invalid (revoked, replaced by a newer bind, or past its maximum life)');
    } finally {
      leaked.close();
      successor?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ends every token of a credential at its maximum life: the backend deletes the credential Secret', async () => {
    const b = await bindFresh('maxlife-user');
    try {
      const cred = (await env.kube.get(SECRET, b.ns, CREDENTIAL_SECRET)) as Obj;
      // the default maximum life: 30 days from the bind, also on the kubeconfig Secret and the ClusterBinding
      const end = Date.parse(cred.metadata.annotations![CREDENTIAL_EXPIRY_ANNOTATION]!);
      expect(end).toBeGreaterThan(Date.now() + 29 * 86400_000);
      expect(end).toBeLessThan(Date.now() + 31 * 86400_000);
      // the token is bound to the credential Secret
      const claims = JSON.parse(Buffer.from(tokenOf(b.text).split('.')[1]!, 'base64url').toString()) as {
        'kubernetes.io': { secret?: { name: string; uid: string } };
      };
      expect(claims['kubernetes.io'].secret).toEqual({ name: CREDENTIAL_SECRET, uid: cred.metadata.uid });
      // the end has come (as if 30 days had passed): the next reconcile revokes the credential
      await env.kube.mergePatch(SECRET, b.ns, CREDENTIAL_SECRET, {
        metadata: { annotations: { [CREDENTIAL_EXPIRY_ANNOTATION]: new Date(Date.now() - 1000).toISOString() } },
      });
      await env.kube.mergePatch(SECRET, b.ns, 'kubeconfig', { metadata: { annotations: { 'klutch.anynines.com/poke': String(Date.now()) } } });
      await eventually('the credential Secret deleted', async () => !(await env.kube.getOrNull(SECRET, b.ns, CREDENTIAL_SECRET)));
      await eventually('the token refused (401)', () => refused(b.client, b.ns), { timeoutMs: 30_000 });
    } finally {
      b.client.close();
    }
  });
});
