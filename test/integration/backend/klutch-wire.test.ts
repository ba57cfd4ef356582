// Klutch's own messages (test/fixtures/klutch-wire, byte for byte what Klutch's Go kubectl-bind and
// konnector send) against klutch-kit's backend on a real API server: the export request body
// Klutch's CLI POSTs is exported, and Klutch's konnector's heartbeat patch makes the ClusterBinding
// Healthy. (The HTTP messages are checked in test/runtime/klutch-wire.test.ts.)
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient, parseKubeconfig, type KubeObject } from '../../../runtime/core/index.js';
import { responseKubeconfig } from '../../../contract/wire.js';
import { eventually } from '../../realinfra/util.js';
import { CLIENT_ID, startProvider, type ProviderEnv } from './_fixture.js';

jest.setTimeout(120_000);

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..');
const fixture = (f: string) => readFileSync(join(root, 'test', 'fixtures', 'klutch-wire', f), 'utf8');
const B = (plural: string, kind: string) => ({ group: 'klutch.anynines.com', version: 'v1alpha1', plural, namespaced: true, kind });
const REQ = B('apiserviceexportrequests', 'APIServiceExportRequest');
const EXP = B('apiserviceexports', 'APIServiceExport');
const CB = B('clusterbindings', 'ClusterBinding');
type Obj = KubeObject & { spec?: any; status?: any };

let env: ProviderEnv;
let clusterNs: string;
let consumer: KubeClient;

beforeAll(async () => {
  env = await startProvider('klutch-wire');
  const now = Math.floor(Date.now() / 1000);
  const tok = await env.op.signAsIssuer({ iss: env.op.issuer, sub: 'klutch-cli-user', aud: CLIENT_ID, iat: now, exp: now + 300 });
  const res = await fetch(`${env.backend.url}/bind`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${tok}` },
    body: JSON.stringify({ group: 'mangodb.com', resource: 'mangodbs', clusterID: 'kw' + randomBytes(3).toString('hex') }),
  });
  expect(res.status).toBe(200);
  const access = parseKubeconfig(responseKubeconfig((await res.json()) as never));
  clusterNs = access.namespace!;
  consumer = new KubeClient(access); // the provider kubeconfig both CLIs and konnectors use
}, 180_000);
afterAll(async () => {
  consumer?.close();
  await env?.stop();
});

describe("Klutch's messages on our backend (real API server)", () => {
  it("the APIServiceExportRequest body Klutch's kubectl-bind POSTs is exported (Succeeded, APIServiceExport created)", async () => {
    // Klutch's body for the servicebindings template, for an API this provider offers
    const text = fixture('export-request-create.json')
      .replaceAll('servicebindings.anynines.com', 'mangodbs.mangodb.com')
      .replaceAll('"group":"anynines.com","resource":"servicebindings"', '"group":"mangodb.com","resource":"mangodbs"');
    const body = JSON.parse(text) as Record<string, unknown>;
    expect(JSON.stringify(body)).toBe(text); // what goes on the wire is Klutch's bytes
    await consumer.request('POST', `/apis/klutch.anynines.com/v1alpha1/namespaces/${clusterNs}/apiserviceexportrequests`, { body });
    const req = await eventually('request Succeeded', async () => {
      const r = (await consumer.get(REQ, clusterNs, 'mangodbs.mangodb.com')) as Obj;
      return r.status?.phase === 'Succeeded' || r.status?.phase === 'Failed' ? r : undefined;
    });
    expect({ phase: req.status.phase, message: req.status.terminalMessage }).toEqual({ phase: 'Succeeded', message: undefined });
    const exp = (await consumer.get(EXP, clusterNs, 'mangodbs.mangodb.com')) as Obj;
    expect(exp.spec).toMatchObject({ group: 'mangodb.com', names: { plural: 'mangodbs' } });
    // the claims come from the provider's template (as in Klutch), not from the request
    expect(exp.spec.permissionClaims.map((c: { resource: string }) => c.resource)).toEqual(['secrets']);
  });

  it("Klutch's konnector's heartbeat (merge patch on clusterbindings/status) makes the ClusterBinding Healthy", async () => {
    const cb = (await consumer.get(CB, clusterNs, 'cluster')) as Obj;
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const patch = JSON.parse(fixture('clusterbinding-heartbeat-patch.json').replaceAll('2026-11-23T10:00:00Z', now)) as { metadata: Record<string, string> };
    patch.metadata = { resourceVersion: cb.metadata.resourceVersion!, uid: cb.metadata.uid! };
    await consumer.request('PATCH', `/apis/klutch.anynines.com/v1alpha1/namespaces/${clusterNs}/clusterbindings/cluster/status`, {
      body: patch,
      contentType: 'application/merge-patch+json',
    });
    const healthy = await eventually('Healthy', async () => {
      const c = (await env.kube.get(CB, clusterNs, 'cluster')) as Obj;
      const h = (c.status?.conditions ?? []).find((x: { type: string }) => x.type === 'Healthy');
      return h?.status === 'True' ? { h, st: c.status } : undefined;
    });
    expect(healthy.h.reason).toBe('Heartbeating');
    expect(healthy.st).toMatchObject({ konnectorVersion: 'v1.5.0', heartbeatInterval: '5m0s', lastHeartbeatTime: now });
  });
});
