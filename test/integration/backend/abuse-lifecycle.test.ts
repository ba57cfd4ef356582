// The backend's lifecycle under abuse (issue 21), with klutch-backend child processes on a real
// provider cluster and the real OIDC provider: SIGTERM drains a bind in flight; a leader whose
// informers cannot sync gives its lease up and comes back; a full API wait queue sheds requests with
// 503 + Retry-After instead of queueing them forever.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bindingCrds } from '../../../contract/api/index.js';
import { KubeClient, type KubeObject } from '../../../runtime/core/index.js';
import { applyManifests, startCluster, waitForCrdsEstablished, type RealCluster } from '../../../runtime/realinfra/index.js';
import { spawnBackend, type BackendProcess } from '../../support/backend-process.js';
import { CLIENT_ID, CLIENT_SECRET, startProvider, type ProviderEnv } from './_fixture.js';

jest.setTimeout(400_000);

const HOLD_PRELOAD = fileURLToPath(new URL('../../support/hold-request.mjs', import.meta.url));
const leaseRef = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true };
let env: ProviderEnv;
const procs: BackendProcess[] = [];
const tmp = mkdtempSync(path.join(tmpdir(), 'abuse-lifecycle-'));

beforeAll(async () => {
  // the in-process backend of the fixture only serves the OIDC client registration; the child processes are the backend
  env = await startProvider('abuse-lifecycle', [], { controllers: false });
}, 240_000);
afterAll(async () => {
  for (const p of procs) await p.kill9().catch(() => undefined);
  await env?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const args = (kubeconfig: string, extra: string[] = []) => [
  `--kubeconfig=${kubeconfig}`,
  '--listen-address=127.0.0.1:0',
  `--oidc-issuer-url=${env.op.issuer}`,
  `--oidc-issuer-client-id=${CLIENT_ID}`,
  `--oidc-issuer-client-secret=${CLIENT_SECRET}`,
  '--lease-namespace=default',
  '--oidc-bearer-audience',
  CLIENT_ID,
  ...extra,
];

async function eventually<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const bearer = async (sub: string) => {
  const now = Math.floor(Date.now() / 1000);
  return env.op.signAsIssuer({ iss: env.op.issuer, sub, aud: CLIENT_ID, iat: now, exp: now + 600 });
};
const bind = async (url: string, sub: string, clusterID: string) =>
  fetch(`${url}/bind`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${await bearer(sub)}` },
    body: JSON.stringify({ group: 'mangodb.com', resource: 'mangodbs', clusterID }),
  });

describe('SIGTERM', () => {
  it('readiness goes off first, a bind in flight completes, then the process exits 0', async () => {
    const release = path.join(tmp, 'release-bind');
    const p = await spawnBackend(args(env.cluster.kubeconfigPath, ['--no-controllers']), {
      preload: HOLD_PRELOAD,
      env: { HOLD_REQUEST: 'POST /api/v1/namespaces', HOLD_UNTIL_FILE: release },
    });
    procs.push(p);
    const exited = new Promise<number | null>((resolve) => p.proc.once('exit', (code) => resolve(code)));
    const inFlight = bind(p.url, 'draining-robot', 'drain-1').then(
      async (r) => ({ status: r.status, body: await r.text() }),
      (e: Error) => ({ status: 0, body: String(e.cause ?? e.message) }),
    );
    await eventually('the bind held at its namespace create', async () => p.output().includes('held POST /api/v1/namespaces'));
    p.proc.kill('SIGTERM');
    const readyz = await eventually('/readyz 503 after SIGTERM', async () => {
      const r = await fetch(`${p.url}/readyz`);
      return r.status === 503 ? r.text() : undefined;
    });
    expect(readyz).toMatch(/shutting down/);
    writeFileSync(release, '');
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ kind: 'BindingResponse' });
    expect(await exited).toBe(0);
    expect(existsSync(release)).toBe(true);
  });
});

describe('leader election', () => {
  let bare: RealCluster | undefined;
  afterAll(async () => {
    await bare?.stop();
  });

  it('a leader whose informers do not sync gives the lease up, and leads once they can sync', async () => {
    // a control plane without the binding CRDs: the controllers' informers cannot list them
    bare = await startCluster({ name: 'abuse-nosync' });
    const admin = new KubeClient(bare.kubeConfig);
    const p = await spawnBackend(args(bare.kubeconfigPath, ['--controller-sync-timeout=3s']));
    procs.push(p);
    type Lease = KubeObject & { spec: { holderIdentity?: string; leaseTransitions?: number } };
    await eventually('the replica holds the lease', async () =>
      (await admin.getOrNull<Lease>(leaseRef, 'default', 'klutch-backend'))?.spec.holderIdentity?.includes(`-${p.pid}-`),
    );
    // on the code before the fix it kept the lease with its controllers never running
    await eventually('the lease given up', async () => (await admin.get<Lease>(leaseRef, 'default', 'klutch-backend')).spec.holderIdentity === '', 120_000);
    expect(p.proc.exitCode).toBeNull();
    const readyz = await (await fetch(`${p.url}/readyz`)).text();
    expect(readyz).toMatch(/controllers failed to start \d+ time\(s\) in a row/);
    // once the CRDs are there, the next term (after the backoff) syncs
    const crds = bindingCrds() as unknown as KubeObject[];
    await applyManifests(bare.kubeConfig, crds as never[]);
    await waitForCrdsEstablished(
      bare.kubeConfig,
      crds.map((c) => c.metadata.name!),
    );
    const ready = await eventually(
      'the replica leads with its controllers synced',
      async () => {
        const r = await fetch(`${p.url}/readyz`);
        const t = await r.text();
        return r.status === 200 && t.includes('role: leader') && t.includes('\ncontrollers: ok\n') ? t : undefined;
      },
      120_000,
    );
    expect(ready).toMatch(/^ok\n/);
    await p.stop();
    admin.close();
  });
});

describe('the API wait queue', () => {
  it('is bounded: beyond it requests are answered 503 with Retry-After, none waits forever, none is a 500', async () => {
    const p = await spawnBackend(
      args(env.cluster.kubeconfigPath, ['--no-controllers', '--api-qps=2', '--api-burst=1', '--api-queue-limit=2', '--bind-rate=0']),
    );
    procs.push(p);
    const answers = await Promise.all(
      Array.from({ length: 20 }, async (_v, i) => {
        const r = await bind(p.url, `queue-robot-${i}`, 'q');
        return { status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.text() };
      }),
    );
    const shed = answers.filter((a) => a.status === 503);
    console.log(`20 binds at 2 QPS, queue 2: ${answers.filter((a) => a.status === 200).length} x 200, ${shed.length} x 503`);
    expect(answers.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([]);
    expect(shed.length).toBeGreaterThan(0);
    for (const s of shed) {
      expect(Number(s.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(s.body)).toMatchObject({ field: 'backend', error: expect.stringMatching(/the backend is busy/) });
    }
    expect((await fetch(`${p.url}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`${p.url}/metrics`)).text();
    expect(metrics).toContain(`klutch_backend_limit_refusals_total{limit="api_queue"} ${shed.length}`);
    await p.stop();
  });
});
