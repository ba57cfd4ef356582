// The backend as it runs in production: several klutch-backend processes (child processes, so they
// can be killed with SIGKILL) on one real provider cluster, behind a round-robin proxy on loopback
// (the stand-in for their Service), with the real OIDC provider. Covers: leader election of the
// controllers with HTTP served by all replicas; a login started on one replica finishing on the
// other; login-state replay refused across replicas and restarts; kill -9 in the middle of a bind
// (a retry finishes it, an abandoned one is swept); per-identity limits under a burst of binds.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { KubeObject } from '../../../runtime/core/index.js';
import { FetchBrowser } from '../../support/oidc-provider.js';
import { RoundRobinProxy } from '../../support/round-robin-proxy.js';
import { spawnBackend, type BackendProcess } from '../../support/backend-process.js';
import { subjectHash } from '../../../runtime/backend/binder.js';
import { CLIENT_ID, CLIENT_SECRET, USERS, clickBind, startProvider, type LoginResult, type ProviderEnv } from './_fixture.js';

jest.setTimeout(240_000);

const KILL_PRELOAD = fileURLToPath(new URL('../../support/kill-after-request.mjs', import.meta.url));
const nsRef = { group: '', version: 'v1', plural: 'namespaces', namespaced: false };
const cbRef = { group: 'klutch.anynines.com', version: 'v1alpha1', plural: 'clusterbindings', namespaced: true };
const secretRef = { group: '', version: 'v1', plural: 'secrets', namespaced: true };
const leaseRef = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true };
const IDENTITY = 'example-backend.klutch.anynines.com/identity';

let env: ProviderEnv;
const proxy = new RoundRobinProxy();
const cookieKey = randomBytes(32).toString('base64');
const replicas: BackendProcess[] = [];
const [alice] = USERS;

const args = () => [
  `--kubeconfig=${env.cluster.kubeconfigPath}`,
  '--listen-address=127.0.0.1:0',
  `--oidc-issuer-url=${env.op.issuer}`,
  `--oidc-issuer-client-id=${CLIENT_ID}`,
  `--oidc-issuer-client-secret=${CLIENT_SECRET}`,
  `--oidc-callback-url=${proxy.url}/callback`,
  `--cookie-signing-key=${cookieKey}`,
  '--lease-namespace=default',
  '--orphan-grace=10s',
  '--max-clusters-per-identity=5',
  '--bind-rate=60',
  '--bind-burst=12',
  '--pretty-name=HA Provider',
  '--oidc-bearer-audience',
  CLIENT_ID,
];

async function replica(opts: { killAfter?: string } = {}): Promise<BackendProcess> {
  const p = await spawnBackend(args(), opts.killAfter ? { preload: KILL_PRELOAD, env: { KILL_AFTER_REQUEST: opts.killAfter } } : {});
  replicas.push(p);
  return p;
}

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
    await new Promise((r) => setTimeout(r, 250));
  }
}

const readyz = async (p: BackendProcess) => {
  const r = await fetch(`${p.url}/readyz`);
  return { status: r.status, text: await r.text() };
};
const alive = (p: BackendProcess) => p.proc.exitCode === null && p.proc.signalCode === null;

/** The live replicas, once exactly one of them leads and every other stands by. */
async function leaderAndStandbys(): Promise<{ leader: BackendProcess; standbys: BackendProcess[] }> {
  return eventually('exactly one leader', async () => {
    const live = replicas.filter(alive);
    const states = await Promise.all(live.map(readyz));
    if (states.some((s) => s.status !== 200)) return false;
    // a leader is ready while its controllers sync; this waits until they have
    const leaders = live.filter((_p, i) => states[i].text.includes('role: leader') && states[i].text.includes('\ncontrollers: ok\n'));
    const standbys = live.filter((_p, i) => states[i].text.includes('role: standby'));
    return leaders.length === 1 && standbys.length === live.length - 1 ? { leader: leaders[0], standbys } : false;
  });
}

const bearer = async (sub: string) => {
  const now = Math.floor(Date.now() / 1000);
  return env.op.signAsIssuer({ iss: env.op.issuer, sub, aud: CLIENT_ID, iat: now, exp: now + 600 });
};
const bearerBind = async (url: string, sub: string, clusterID: string) =>
  fetch(`${url}/bind`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${await bearer(sub)}` },
    body: JSON.stringify({ group: 'mangodb.com', resource: 'mangodbs', clusterID }),
  });

async function namespacesOf(sub: string) {
  return (await env.kube.list(nsRef, undefined, { labelSelector: 'example-backend.klutch.anynines.com/identity-hash' })).items.filter(
    (n) => !n.metadata.deletionTimestamp && (n.metadata.annotations?.[IDENTITY] ?? '').startsWith(`${sub}#`),
  );
}

async function metric(p: BackendProcess, name: string): Promise<string[]> {
  const text = await (await fetch(`${p.url}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith(name));
}

beforeAll(async () => {
  await proxy.start();
  // the in-process backend of the fixture only serves HTTP; the replicas below are the backend
  env = await startProvider('ha-backend', [], { controllers: false, redirectUris: [`${proxy.url}/callback`] });
  await replica();
  await replica();
  proxy.targets = replicas.map((r) => r.url);
}, 240_000);

afterAll(async () => {
  for (const r of replicas) await r.stop().catch(() => undefined);
  await proxy.stop();
  await env?.stop();
});

describe('replicas', () => {
  it('elect one leader for the controllers; every replica serves HTTP and is ready', async () => {
    const { leader, standbys } = await leaderAndStandbys();
    expect(standbys).toHaveLength(1);
    const lease = await env.kube.get<KubeObject & { spec: { holderIdentity: string } }>(leaseRef, 'default', 'klutch-backend');
    expect(lease.spec.holderIdentity).toContain(`-${leader.pid}-`);
    for (const r of [leader, ...standbys]) {
      expect((await fetch(`${r.url}/export`)).status).toBe(200);
    }
    expect((await readyz(standbys[0])).text).toContain(`role: standby (leader: ${lease.spec.holderIdentity})`);
  });

  it('a login started on one replica completes on the other; its state replayed is refused by both and after a restart', async () => {
    const s = randomBytes(4).toString('hex');
    const browser = new FetchBrowser();
    const first = await browser.request(`${proxy.url}/authorize?p=41234&s=${s}&c=ha-cluster`);
    expect(first.status).toBe(302);
    const loginPage = await browser.follow(first.headers.get('location')!);
    const signedIn = await browser.signIn(loginPage.url, await loginPage.res!.text(), alice, (l) => l.startsWith(`${proxy.url}/callback`));
    const callbackUrl = signedIn.stoppedAt!;
    expect(callbackUrl).toBeDefined();
    const cookie = browser.cookieHeader(new URL(callbackUrl)); // the login cookie of this browser
    const done = await browser.follow(callbackUrl);
    expect(done.res!.status).toBe(200);
    const authorizeBy = proxy.log.find((l) => l.path.startsWith('/authorize'))!.target;
    const callbackBy = proxy.log.find((l) => l.path.startsWith('/callback'))!.target;
    expect(callbackBy).not.toBe(authorizeBy);
    const login: LoginResult = { browser, resourcesUrl: done.url, resourcesHtml: await done.res!.text() };
    const bind = await clickBind({ ...env, backend: { ...env.backend, url: proxy.url } }, login, 'mangodbs.mangodb.com');
    expect(bind.status).toBe(303);
    expect((await namespacesOf(alice.sub)).map((n) => n.metadata.annotations?.[IDENTITY])).toEqual([`${alice.sub}#ha-cluster`]);

    // replay of the used state (same URL, same login cookie) on each replica: the one that took it
    // refuses it from memory; another one writes nothing before the identity is proven (issue 21),
    // so the issuer refuses the used code
    const path = new URL(callbackUrl).pathname + new URL(callbackUrl).search;
    for (const r of replicas.filter(alive)) {
      const res = await fetch(`${r.url}${path}`, { headers: { Cookie: cookie, Accept: 'application/json' }, redirect: 'manual' });
      const j = (await res.json()) as { field: string; error: string };
      if (r.url === callbackBy) {
        expect(res.status).toBe(400);
        expect(j).toEqual({ field: 'state', error: 'state: was already used; start again with kubectl bind' });
      } else {
        expect(res.status).toBe(401);
        expect(j).toMatchObject({ field: 'code', error: expect.stringMatching(/the issuer refused the login: invalid_grant/) });
      }
    }
    // the record lives in the API server, with the state's expiry
    const records = await env.kube.list<KubeObject & { spec: { leaseDurationSeconds: number } }>(leaseRef, 'default', {
      labelSelector: 'klutch.anynines.com/login-state=used',
    });
    expect(records.items).toHaveLength(1);
    expect(records.items[0].spec.leaseDurationSeconds).toBeGreaterThan(500); // --state-ttl 600s
    // a replica killed and started again still refuses it
    const { standbys } = await leaderAndStandbys();
    await standbys[0].kill9();
    const restarted = await replica();
    proxy.targets = replicas.filter(alive).map((r) => r.url);
    const res = await fetch(`${restarted.url}${path}`, { headers: { Cookie: cookie, Accept: 'application/json' }, redirect: 'manual' });
    expect(res.status).toBe(401); // a new process: the issuer refuses the used code, no Lease is written
    expect(((await res.json()) as { error: string }).error).toMatch(/the issuer refused the login: invalid_grant/);
  });

  it('a standby that takes the lease over stays ready while its new controllers sync', async () => {
    const { leader, standbys } = await leaderAndStandbys();
    const [standby] = standbys;
    // The standby's /readyz, asked again and again from before the leader stops until the standby leads
    // with its controllers synced. Before the fix it answered 503 between taking the lease and the sync:
    // in a two-replica set, the one replica left taken out of the Service.
    const notReady: string[] = [];
    let sawPending = false;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const r = await readyz(standby!);
        if (r.status !== 200) notReady.push(`${r.status}: ${r.text.split('\n').slice(0, 4).join(' | ')}`);
        if (r.text.includes('role: leader') && r.text.includes('\ncontrollers: pending\n')) sawPending = true;
        await new Promise((res) => setTimeout(res, 10));
      }
    })();
    try {
      await leader.stop(); // SIGTERM: drains, then releases the lease; only the standby campaigns
      await eventually('the standby leads with its controllers synced', async () => {
        const r = await readyz(standby!);
        return r.text.includes('role: leader') && r.text.includes('\ncontrollers: ok\n');
      });
    } finally {
      watching = false;
      await watch;
    }
    expect(notReady).toEqual([]);
    // whether the 10 ms polls caught the sync window depends on the machine; said, not asserted
    console.log(`takeover: the new leader's /readyz was seen with its controllers pending: ${sawPending}`);
    // two replicas again for what follows
    await replica();
    proxy.targets = replicas.filter(alive).map((r) => r.url);
    await leaderAndStandbys();
  });
});

describe('kill -9 in the middle of a login', () => {
  it('the replica that began a login is killed; the login and the bind finish on another', async () => {
    const s = randomBytes(4).toString('hex');
    const browser = new FetchBrowser();
    const first = await browser.request(`${proxy.url}/authorize?p=41235&s=${s}&c=ha-cluster-2`);
    expect(first.status).toBe(302);
    const began = proxy.log[proxy.log.length - 1];
    expect(began.path).toMatch(/^\/authorize/);
    const victim = replicas.find((r) => r.url === began.target)!;
    await victim.kill9();
    if (replicas.filter(alive).length < 2) await replica();
    proxy.targets = replicas.filter(alive).map((r) => r.url);
    const loginPage = await browser.follow(first.headers.get('location')!);
    const done = await browser.signIn(loginPage.url, await loginPage.res!.text(), alice);
    expect(done.res!.status).toBe(200);
    expect(proxy.log.filter((l) => l.path.startsWith('/callback')).pop()!.target).not.toBe(victim.url);
    const login: LoginResult = { browser, resourcesUrl: done.url, resourcesHtml: await done.res!.text() };
    const bind = await clickBind({ ...env, backend: { ...env.backend, url: proxy.url } }, login, 'mangodbs.mangodb.com');
    expect(bind.status).toBe(303);
    expect((await namespacesOf(alice.sub)).map((n) => n.metadata.annotations?.[IDENTITY]).sort()).toEqual([
      `${alice.sub}#ha-cluster`,
      `${alice.sub}#ha-cluster-2`,
    ]);
  });
});

describe('kill -9 in the middle of a bind', () => {
  it('a retry through the Service finishes the bind the killed replica began', async () => {
    const doomed = await replica({ killAfter: 'POST /api/v1/namespaces' });
    // the client's first attempt lands on the replica that dies right after creating the namespace
    await expect(bearerBind(doomed.url, 'retry-robot', 'cluster-r')).rejects.toThrow();
    await eventually('the replica gone', async () => !alive(doomed));
    expect(doomed.proc.signalCode).toBe('SIGKILL');
    const [half] = await namespacesOf('retry-robot');
    expect(half).toBeDefined();
    expect(await env.kube.getOrNull(cbRef, half.metadata.name!, 'cluster')).toBeUndefined(); // half done
    // the retry goes to a live replica and completes it, in the same namespace
    const retry = await bearerBind(proxy.url, 'retry-robot', 'cluster-r');
    expect(retry.status).toBe(200);
    const after = await namespacesOf('retry-robot');
    expect(after.map((n) => n.metadata.uid)).toEqual([half.metadata.uid]);
    expect(await env.kube.getOrNull(cbRef, half.metadata.name!, 'cluster')).toBeDefined();
    expect(await env.kube.getOrNull(secretRef, half.metadata.name!, 'kubeconfig')).toBeDefined();
  });

  it('when the leader is killed a standby takes over, and sweeps a bind nobody finished', async () => {
    const { leader } = await leaderAndStandbys();
    await leader.kill9();
    proxy.targets = replicas.filter(alive).map((r) => r.url);
    const doomed = await replica({ killAfter: 'POST /api/v1/namespaces' });
    await expect(bearerBind(doomed.url, 'orphan-robot', 'cluster-o')).rejects.toThrow();
    const [orphan] = await namespacesOf('orphan-robot');
    expect(orphan).toBeDefined();
    expect(await env.kube.getOrNull(cbRef, orphan.metadata.name!, 'cluster')).toBeUndefined();
    const next = await leaderAndStandbys(); // after the old leader's lease expired
    expect(next.leader.pid).not.toBe(leader.pid);
    // --orphan-grace=10s: the new leader's sweeper deletes it
    await eventually('the orphaned cluster namespace deleted', async () => (await namespacesOf('orphan-robot')).length === 0, 90_000);
    expect(await metric(next.leader, 'klutch_backend_sweeps_total')).toContain('klutch_backend_sweeps_total{reason="incomplete",mode="delete"} 1');
    // the completed binds were left alone
    expect(await namespacesOf('retry-robot')).toHaveLength(1);
    expect(await namespacesOf(alice.sub)).toHaveLength(2);
  });
});

describe('per-identity limits', () => {
  it("a replica killed while holding an identity's bind lock delays that identity's next bind, never blocks it", async () => {
    // the bind's first Lease is the identity's rate bucket, the second its lock
    const doomed = await replica({ killAfter: 'POST /apis/coordination.k8s.io/v1/namespaces/default/leases#2' });
    await expect(bearerBind(doomed.url, 'lock-robot', 'cluster-l')).rejects.toThrow();
    const lock = `klutch-bind-lock-${subjectHash({ iss: env.op.issuer, sub: 'lock-robot' })}`;
    expect(await env.kube.getOrNull(leaseRef, 'default', lock)).toBeDefined(); // left by the killed holder
    expect(await namespacesOf('lock-robot')).toHaveLength(0); // killed before it counted or created
    proxy.targets = replicas.filter(alive).map((r) => r.url);
    const res = await bearerBind(proxy.url, 'lock-robot', 'cluster-l'); // waits out the dead holder's 15 s
    expect(res.status).toBe(200);
    expect(await namespacesOf('lock-robot')).toHaveLength(1);
    expect(await env.kube.getOrNull(leaseRef, 'default', lock)).toBeUndefined();
  });

  it('a burst of binds by one identity stays within 5 app clusters and the bind rate; limits in /readyz and metrics', async () => {
    if (replicas.filter(alive).length < 2) await replica(); // two replicas share the burst
    const live = replicas.filter(alive);
    proxy.targets = live.map((r) => r.url);
    const t0 = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 40 }, async (_v, i) => {
        const r = await bearerBind(proxy.url, 'hammer-robot', `hammer-${i}`);
        return { status: r.status, retryAfter: r.headers.get('retry-after'), body: (await r.json()) as { field?: string; error?: string } };
      }),
    );
    const seconds = Math.ceil((Date.now() - t0) / 1000);
    const by = (st: number) => answers.filter((a) => a.status === st);
    console.log(
      `hammer: 40 concurrent binds of one identity on ${live.length} replica(s) in ${seconds}s: ${by(200).length} x 200, ${by(403).length} x 403, ${by(429).length} x 429`,
    );
    expect(answers.filter((a) => ![200, 403, 429].includes(a.status))).toEqual([]);
    // count and create run under the identity's lock: exactly the limit, never more, never fewer
    const kept = await namespacesOf('hammer-robot');
    expect(kept).toHaveLength(5);
    expect(by(200)).toHaveLength(5);
    // the replicas share one bucket per identity (a Lease): 12 binds at once (--bind-burst), then one a second
    expect(by(429).length).toBeGreaterThanOrEqual(40 - (12 + seconds));
    expect(by(429)[0]).toMatchObject({
      retryAfter: '1',
      body: { field: 'rate', error: expect.stringMatching(/hammer-robot made more than 12 binds in a row/) },
    });
    expect(by(403)[0]?.body).toMatchObject({
      field: 'clusterID',
      error: expect.stringMatching(/hammer-robot already has 5 app clusters bound, the limit is 5 \(--max-clusters-per-identity\)/),
    });
    expect(by(403)).toHaveLength(40 - 5 - by(429).length);
    // one at a time (waiting as Retry-After says) the identity fills up to exactly 5, then the next
    // new app cluster is refused
    let waited = 0;
    const patiently = async (clusterID: string) => {
      for (;;) {
        const r = await bearerBind(proxy.url, 'hammer-robot', clusterID);
        if (r.status !== 429) return r;
        waited++;
        await new Promise((res) => setTimeout(res, Number(r.headers.get('retry-after')) * 1000));
      }
    };
    for (let i = 100; (await namespacesOf('hammer-robot')).length < 5; i++) {
      expect((await patiently(`hammer-${i}`)).status).toBe(200);
    }
    const over = await patiently('hammer-one-more');
    expect(over.status).toBe(403);
    expect(await namespacesOf('hammer-robot')).toHaveLength(5);
    // re-binding an app cluster that is bound is always allowed
    const again = await patiently((await namespacesOf('hammer-robot'))[0].metadata.annotations![IDENTITY].split('#')[1]);
    expect(again.status).toBe(200);
    expect(await namespacesOf('hammer-robot')).toHaveLength(5);

    const { leader } = await leaderAndStandbys();
    expect((await readyz(leader)).text).toContain('limits: 5 app clusters per identity, 60 binds/min (burst 12) per identity (shared by all replicas)');
    expect(await metric(leader, 'klutch_backend_limit{')).toEqual(
      expect.arrayContaining(['klutch_backend_limit{limit="clusters"} 5', 'klutch_backend_limit{limit="bind_rate_per_minute"} 60']),
    );
    let refusals = 0;
    for (const r of live) for (const l of await metric(r, 'klutch_backend_limit_refusals_total{')) refusals += Number(l.split(' ')[1]);
    expect(refusals).toBe(by(403).length + by(429).length + waited + 1);
    await eventually('the leader reports 5 app clusters for the busiest identity', async () =>
      (await metric(leader, 'klutch_backend_max_clusters_per_identity')).includes('klutch_backend_max_clusters_per_identity 5'),
    );
  });
});
