/**
 * npm run bench:abuse [-- --requests 4000 --seconds 60 --concurrency 16 --rounds 3]
 *
 * The unauthenticated floods of issue 21 against 2 `klutch-backend` replicas (child processes with
 * leader election on one real control plane, runtime/realinfra; the real OIDC test issuer), on
 * 127.0.0.1 only, bounded by --requests and --seconds: replays of one used /callback, fresh states
 * from /authorize with made-up codes, distinct malformed cookie names, and 4 MB bodies with an invalid
 * bearer token (1 request in 20), spread over both replicas. Meanwhile one legitimate bearer bind
 * after another goes to the replicas in turn.
 *
 * The flood runs --rounds times. Prints: leader changes (the Lease's holder, polled every 250 ms, and
 * leaseTransitions; must be 0), answers by status, p50/p99 of the legitimate binds during the floods,
 * each replica's RSS and /metrics size before and after each round (the first round creates what is
 * created once; bounded memory is flat from then on), and the Lease POSTs the kube-apiserver served
 * during the floods (its own apiserver_request_total). Exit code 1 when the leader changed or a
 * legitimate bind failed. RSS includes tsx, which the replicas run under (as in the tests).
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { Command } from 'commander';
import { bindingCrds } from '../contract/api/index.js';
import { KubeClient, type KubeObject } from '../runtime/core/client.js';
import { applyManifests, startCluster, waitForCrdsEstablished } from '../runtime/realinfra/index.js';
import { FetchBrowser, OidcTestProvider } from '../test/support/oidc-provider.js';
import { spawnBackend, type BackendProcess } from '../test/support/backend-process.js';
import { CLIENT_ID, CLIENT_SECRET, SECRETS_CLAIM, USERS, mangoCrd, template } from '../test/integration/backend/_fixture.js';
import { metricSum, percentile, rssMb } from './_bench-procs.js';

const num = (flag: string, min: number) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`${flag}: "${v}" must be an integer >= ${min}`);
  return n;
};
const opts = new Command('bench-abuse')
  .option('--requests <n>', 'unauthenticated requests in the flood, at most', num('--requests', 1), 4000)
  .option('--seconds <n>', 'length of the flood, at most', num('--seconds', 1), 60)
  .option('--concurrency <n>', 'flood requests in flight', num('--concurrency', 1), 16)
  .option('--rounds <n>', 'floods one after another (memory is judged flat between the first and the last)', num('--rounds', 1), 3)
  .parse(process.argv)
  .opts<{ requests: number; seconds: number; concurrency: number; rounds: number }>();

const leaseRef = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true };
type Lease = KubeObject & { spec?: { holderIdentity?: string; leaseTransitions?: number } };
const log = (s: string) => process.stdout.write(`[bench-abuse] ${s}\n`);

/** One raw request (so Host, Cookie and large bodies go out as given); resolves with the status, 0 on a transport error. */
function send(url: string, o: { method?: string; headers?: Record<string, string>; body?: Buffer } = {}): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(url, { method: o.method ?? 'GET', headers: o.headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(0));
    });
    req.on('error', () => resolve(0));
    req.end(o.body);
  });
}

async function main(): Promise<number> {
  const cluster = await startCluster({ name: 'bench-abuse' });
  const procs: BackendProcess[] = [];
  let op: OidcTestProvider | undefined;
  const kube = new KubeClient(cluster.kubeConfig);
  try {
    const crds = bindingCrds() as unknown as KubeObject[];
    await applyManifests(cluster.kubeConfig, [
      ...(crds as never[]),
      mangoCrd() as never,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'crossplane-system' } } as never,
    ]);
    await waitForCrdsEstablished(cluster.kubeConfig, [...crds.map((c) => c.metadata.name!), 'mangodbs.mangodb.com']);
    await applyManifests(cluster.kubeConfig, [template('mangodbs', 'mangodb.com', 'mangodbs', [SECRETS_CLAIM]) as never]);
    op = await OidcTestProvider.listen(USERS);
    const cookieKey = randomBytes(32).toString('base64');
    for (let i = 0; i < 2; i++) {
      procs.push(
        await spawnBackend(
          [
            `--kubeconfig=${cluster.kubeconfigPath}`,
            '--listen-address=127.0.0.1:0',
            `--oidc-issuer-url=${op.issuer}`,
            `--oidc-issuer-client-id=${CLIENT_ID}`,
            `--cookie-signing-key=${cookieKey}`,
            '--lease-namespace=default',
            '--bind-rate=0',
            '--max-clusters-per-identity=0',
            '--log-level=info',
            '--shutdown-delay=0s',
            '--oidc-bearer-audience',
            CLIENT_ID,
          ],
          { env: { OIDC_CLIENT_SECRET: CLIENT_SECRET, POD_NAME: `bench-abuse-${i}` } },
        ),
      );
    }
    op.start([{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: procs.map((p) => `${p.url}/callback`) }]);
    // both ready, one of them leads
    for (const p of procs) {
      for (let t = 0; t < 600; t++) {
        if ((await fetch(`${p.url}/readyz`).catch(() => undefined))?.status === 200) break;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    let lease = await kube.get<Lease>(leaseRef, 'default', 'klutch-backend');
    const holder0 = lease.spec?.holderIdentity ?? '';
    const transitions0 = lease.spec?.leaseTransitions ?? 0;
    log(`2 replicas ready (${procs.map((p) => `${p.url} pid ${p.pid}`).join(', ')}); leader ${holder0}`);

    // a used login: its callback URL and cookie, replayed in the flood
    const browser = new FetchBrowser();
    let callback = '';
    const first = await browser.request(`${procs[0].url}/authorize?p=40100&s=benchabuse&c=bench`);
    const page = await browser.follow(first.headers.get('location')!);
    await browser.signIn(page.url, await page.res!.text(), USERS[0], (l) => {
      if (l.includes('/callback')) callback = l;
      return l.includes('/callback');
    });
    const replayCookie = browser.cookieHeader(new URL(callback));
    if ((await send(callback, { headers: { Cookie: replayCookie } })) !== 302) throw new Error('the login to replay did not complete');
    const replayPath = new URL(callback).pathname + new URL(callback).search;

    const metricsSize = async () => Promise.all(procs.map(async (p) => (await (await fetch(`${p.url}/metrics`)).text()).length));
    const apiLeasePosts = async () => {
      const t = await kube.request<string>('GET', '/metrics');
      return t
        .split('\n')
        .filter((l) => l.startsWith('apiserver_request_total{') && l.includes('resource="leases"') && l.includes('verb="POST"'))
        .reduce((a, l) => a + Number(l.split(' ').pop()), 0);
    };
    // settle, so "before" is the replicas at rest
    await new Promise((r) => setTimeout(r, 3000));
    const rssBefore = procs.map((p) => rssMb(p.pid));
    const metricsBefore = await metricsSize();
    const authSeriesBefore = await Promise.all(
      procs.map(
        async (p) => (await (await fetch(`${p.url}/metrics`)).text()).split('\n').filter((l) => l.startsWith('klutch_backend_auth_failures_total{')).length,
      ),
    );
    const posts0 = await apiLeasePosts();

    // the Lease, watched throughout
    let leaderChanges = 0;
    let polling = true;
    const poller = (async () => {
      let holder = holder0;
      while (polling) {
        const l = await kube.getOrNull<Lease>(leaseRef, 'default', 'klutch-backend').catch(() => undefined);
        const h = l?.spec?.holderIdentity;
        if (h !== undefined && h !== holder) {
          leaderChanges++;
          log(`leader changed: ${holder} → ${h}`);
          holder = h;
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    })();

    // the flood, --rounds times: round 1 creates what is created once (series of the closed label
    // sets, pools, JIT); memory that is bounded is flat from round 1 to the last
    const big = Buffer.alloc(4 * 1024 * 1024, 'a');
    const kinds = [...Array.from({ length: 19 }, (_v, i) => ['replay', 'fresh', 'cookie'][i % 3]), 'body'];
    const sample = async () => {
      await new Promise((r) => setTimeout(r, 3000));
      const texts = await Promise.all(procs.map(async (p) => (await fetch(`${p.url}/metrics`)).text()));
      return {
        rss: procs.map((p) => rssMb(p.pid)),
        metrics: texts.map((t) => t.length),
        authSeries: texts.map((t) => t.split('\n').filter((l) => l.startsWith('klutch_backend_auth_failures_total{')).length),
        refusals: texts.map((t) => metricSum(t, 'klutch_backend_limit_refusals_total')),
        heap: texts.map((t) => metricSum(t, 'klutch_backend_nodejs_heap_size_used_bytes') / 1048576),
      };
    };
    const heapBefore = await Promise.all(
      procs.map(async (p) => metricSum(await (await fetch(`${p.url}/metrics`)).text(), 'klutch_backend_nodejs_heap_size_used_bytes') / 1048576),
    );
    const samples = [{ rss: rssBefore, metrics: metricsBefore, authSeries: authSeriesBefore, refusals: [0, 0], heap: heapBefore }];
    const latencies: number[] = [];
    let bindFailures = 0;
    let sent = 0;
    for (let round = 1; round <= opts.rounds; round++) {
      const byStatus = new Map<string, number>();
      const end = Date.now() + opts.seconds * 1000;
      const t0 = Date.now();
      let next = 0;
      const one = async (i: number) => {
        const base = procs[i % 2].url;
        const kind = kinds[i % kinds.length];
        const id = `${round}x${i}`;
        let status: number;
        if (kind === 'replay') status = await send(`${base}${replayPath}`, { headers: { Cookie: replayCookie, Accept: 'application/json' } });
        else if (kind === 'fresh') {
          const b = new FetchBrowser();
          const r = await b.request(`${base}/authorize?p=40101&s=f${round}x${i}&c=bench`);
          const state = new URL(r.headers.get('location')!).searchParams.get('state')!;
          const url = `${base}/callback?code=made-up-${id}&state=${encodeURIComponent(state)}`;
          status = await send(url, { headers: { Cookie: b.cookieHeader(new URL(url)), Accept: 'application/json' } });
        } else if (kind === 'cookie') {
          status = await send(`${base}/resources?s=c${round}x${i}`, {
            headers: { Cookie: `junk_${id}_${randomBytes(3).toString('hex')}=%E0%A4%A; klutch-bind-c${round}x${i}=%`, Accept: 'application/json' },
          });
        } else {
          status = await send(`${base}/bind`, { method: 'POST', headers: { Authorization: 'Bearer a.b.c', 'Content-Length': String(big.length) }, body: big });
        }
        const k = `${kind} ${status}`;
        byStatus.set(k, (byStatus.get(k) ?? 0) + 1);
      };
      let flooding = true;
      const flood = Promise.all(
        Array.from({ length: opts.concurrency }, async () => {
          while (next < opts.requests && Date.now() < end) await one(next++);
        }),
      ).finally(() => (flooding = false));
      // legitimate binds during the flood, one after another, to the replicas in turn
      for (let i = 0; flooding; i++) {
        const now = Math.floor(Date.now() / 1000);
        const tok = await op.signAsIssuer({ iss: op.issuer, sub: `bench-user-${i % 5}`, aud: CLIENT_ID, iat: now, exp: now + 600 });
        const b0 = performance.now();
        const r = await fetch(`${procs[i % 2].url}/bind`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${tok}` },
          body: JSON.stringify({ group: 'mangodb.com', resource: 'mangodbs', clusterID: `bench-${i % 20}` }),
        });
        await r.arrayBuffer();
        latencies.push(performance.now() - b0);
        if (r.status !== 200) bindFailures++;
      }
      await flood;
      sent += next;
      log(
        `round ${round}: ${next} unauthenticated requests in ${((Date.now() - t0) / 1000).toFixed(1)} s; answers ${JSON.stringify(Object.fromEntries([...byStatus].sort()))}`,
      );
      samples.push(await sample());
    }
    polling = false;
    await poller;
    const posts1 = await apiLeasePosts();
    lease = await kube.get<Lease>(leaseRef, 'default', 'klutch-backend');
    const transitions = (lease.spec?.leaseTransitions ?? 0) - transitions0;

    log(
      `flood: ${sent} unauthenticated requests in ${opts.rounds} round(s) (at most ${opts.requests} or ${opts.seconds} s each), concurrency ${opts.concurrency}`,
    );
    log(`leader changes: ${leaderChanges} (leaseTransitions +${transitions}); holder ${lease.spec?.holderIdentity}`);
    log(
      `Lease POSTs served by kube-apiserver during the floods: ${posts1 - posts0} (binds with --max-clusters-per-identity=0 and --bind-rate=0 take no Lease)`,
    );
    log(
      `legitimate binds during the floods: ${latencies.length}, ${bindFailures} failed; p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms`,
    );
    for (let i = 0; i < procs.length; i++) {
      const series = (f: (x: (typeof samples)[number]) => number[], d = 1) => samples.map((x) => f(x)[i].toFixed(d)).join(' → ');
      log(
        `replica ${i} (${holder0 === `bench-abuse-${i}` ? 'leader' : 'standby'}, pid ${procs[i].pid}), before → after each round: RSS ${series((x) => x.rss)} MiB; V8 heap used ${series((x) => x.heap)} MiB; /metrics ${series((x) => x.metrics, 0)} bytes; auth_failures series ${series((x) => x.authSeries, 0)}; limit refusals ${series((x) => x.refusals, 0)}`,
      );
    }
    return leaderChanges === 0 && transitions === 0 && bindFailures === 0 ? 0 : 1;
  } finally {
    for (const p of procs) await p.stop().catch(() => undefined);
    await op?.stop().catch(() => undefined);
    kube.close();
    await cluster.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`bench-abuse: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
