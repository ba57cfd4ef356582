/**
 * `npm run bench:bind`: bind flows against a real provider cluster (kube-apiserver + etcd + KCM from
 * runtime/realinfra), a real OIDC provider on loopback and the backend: 100 sequential and 20
 * concurrent full flows (authorize → issuer login page → callback → /resources → Bind → loopback
 * callback), each a new consumer (new cluster id). Prints p50/p99 latency of the whole flow and of
 * the Bind POST, and the Kubernetes API calls per bind.
 *
 * Flags: --sequential N (default 100), --concurrent N[,N…] (default 20; a list runs each level and
 * charts flows/s and p99 against it), --chart <file> (default docs/images/bench-bind.svg; drawn
 * when at least two concurrency levels ran).
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { svgChart } from './_svg-chart.js';
import { USERS, clickBind, loginViaHttp, responseFromCallback, startProvider } from '../test/integration/backend/_fixture.js';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return def;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 0) throw new Error(`--${name}: "${process.argv[i + 1]}" is not a non-negative integer`);
  return v;
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
};

async function main(): Promise<void> {
  const sequential = arg('sequential', 100);
  const ci = process.argv.indexOf('--concurrent');
  const levels =
    ci < 0
      ? [20]
      : String(process.argv[ci + 1])
          .split(',')
          .map((x) => {
            const v = Number(x);
            if (!Number.isInteger(v) || v < 0) throw new Error(`--concurrent: "${process.argv[ci + 1]}" is not a list of non-negative integers`);
            return v;
          })
          .filter((v) => v > 0);
  const hi = process.argv.indexOf('--chart');
  const chart = hi >= 0 ? process.argv[hi + 1] : 'docs/images/bench-bind.svg';
  const points: Array<{ n: number; flowsPerS: number; p99: number; bindP99: number }> = [];
  const t0 = Date.now();
  // controllers off: the API-call count is then exactly what the bind path costs; no per-identity
  // limits (two test users make every flow, the bench measures the flow, not the limiter)
  const env = await startProvider('bench-bind', ['--log-level=silent', '--bind-rate=0', '--max-clusters-per-identity=0'], { controllers: false });
  process.stderr.write(`provider ready in ${((Date.now() - t0) / 1000).toFixed(1)} s (backend ${env.backend.url})\n`);
  const stats = env.backend.kube.stats;

  async function flow(i: number): Promise<{ total: number; bind: number; bindCalls: number }> {
    const start = performance.now();
    const login = await loginViaHttp(env, USERS[i % USERS.length], {
      port: 40000 + (i % 1000),
      s: randomBytes(6).toString('hex'),
      c: `bench-${i}-${randomBytes(3).toString('hex')}`,
    });
    const before = performance.now();
    const calls0 = stats.requests;
    const res = await clickBind(env, login, 'mangodbs.mangodb.com');
    const bind = performance.now() - before;
    const bindCalls = stats.requests - calls0;
    if (res.status !== 303 || !res.location) throw new Error(`bind ${i} failed: ${res.status} ${res.body ?? ''}`);
    responseFromCallback(res.location);
    return { total: performance.now() - start, bind, bindCalls };
  }

  const report = (name: string, rs: Array<{ total: number; bind: number; bindCalls: number }>, apiCalls: number, wallMs: number) => {
    const totals = rs.map((r) => r.total);
    const binds = rs.map((r) => r.bind);
    if (name !== 'sequential')
      points.push({ n: rs.length, flowsPerS: rs.length / (wallMs / 1000), p99: pct(totals, 99) / 1000, bindP99: pct(binds, 99) / 1000 });
    process.stdout.write(
      `${name.padEnd(14)} n=${String(rs.length).padEnd(4)} flow p50 ${pct(totals, 50).toFixed(0)} ms  p99 ${pct(totals, 99).toFixed(0)} ms | ` +
        `bind p50 ${pct(binds, 50).toFixed(0)} ms  p99 ${pct(binds, 99).toFixed(0)} ms | ` +
        `API calls/flow ${(apiCalls / rs.length).toFixed(1)}` +
        (name === 'sequential' ? ` (POST /bind alone ${(rs.reduce((a, r) => a + r.bindCalls, 0) / rs.length).toFixed(1)})` : '') +
        ` | ${(rs.length / (wallMs / 1000)).toFixed(1)} flows/s\n`,
    );
  };

  try {
    if (sequential) {
      const r0 = stats.requests;
      const w0 = Date.now();
      const rs = [];
      for (let i = 0; i < sequential; i++) rs.push(await flow(i));
      report('sequential', rs, stats.requests - r0, Date.now() - w0);
    }
    for (const [li, concurrent] of levels.entries()) {
      const r0 = stats.requests;
      const w0 = Date.now();
      const rs = await Promise.all(Array.from({ length: concurrent }, (_x, i) => flow(10_000 * (li + 1) + i)));
      report(`concurrent(${concurrent})`, rs, stats.requests - r0, Date.now() - w0);
    }
    if (points.length >= 2) {
      writeFileSync(
        chart,
        svgChart({
          title: 'bind flows: throughput and p99 against concurrent flows',
          subtitle: `${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)} (npm run bench:bind)`,
          xLabel: 'concurrent flows (N)',
          logX: false,
          panels: [
            { title: 'Throughput', yLabel: 'flows/s', series: [{ name: 'whole flow (login to callback)', points: points.map((p) => [p.n, p.flowsPerS]) }] },
            {
              title: 'p99 latency',
              yLabel: 'seconds',
              series: [
                { name: 'whole flow', points: points.map((p) => [p.n, p.p99]) },
                { name: 'POST /bind', points: points.map((p) => [p.n, p.bindP99]) },
              ],
            },
          ],
        }),
      );
      process.stdout.write(`chart: ${chart}\n`);
    }
  } finally {
    await env.stop();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`bench:bind failed: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
