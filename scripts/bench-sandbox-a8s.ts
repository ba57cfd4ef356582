/**
 * `npm run bench:sandbox-a8s`: the sandbox's local a8s operator (sandbox/a8s-operator) on a real cluster
 * (runtime/realinfra): for N instances one after the other, the time from creating a `Postgresql` and a
 * `ServiceBinding` to Running, to the credentials Secret, and to the first successful connection with those
 * credentials (npm `pg`); then the memory (RSS) of each PostgreSQL process of one instance, and of this process
 * (which runs the operator). Removes everything it made.
 *
 * Flags: --instances N (default 3).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { CoreResources, KubeClient, type KubeObject } from '../runtime/core/client.js';
import { startCluster } from '../runtime/realinfra/index.js';
import { A8S_RESOURCES, installA8sCrds, SandboxA8sOperator, type A8sServiceBinding, type Postgresql } from '../sandbox/a8s-operator/index.js';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return def;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name}: "${process.argv[i + 1]}" is not a positive integer`);
  return v;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
async function until<T>(fn: () => Promise<T | undefined>, what: string, timeoutMs = 120_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch {
      /* not yet */
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function main(): Promise<void> {
  const n = arg('instances', 3);
  const cluster = await startCluster({ name: 'bench-a8s' });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-bench-a8s-'));
  fs.chmodSync(tmp, 0o711);
  const client = new KubeClient(cluster.kubeConfig);
  const operator = new SandboxA8sOperator({ client, dataDir: path.join(tmp, 'a8s') });
  try {
    await installA8sCrds(cluster.kubeConfig);
    await client.create(CoreResources.namespaces, { metadata: { name: 'bench' } });
    await operator.start();
    const rows: string[] = [];
    for (let i = 0; i < n; i++) {
      const name = `db-${i}`;
      const t0 = performance.now();
      await client.create(A8S_RESOURCES.postgresqls, { metadata: { name, namespace: 'bench' }, spec: { version: 14, replicas: 1 } } as KubeObject);
      await client.create(A8S_RESOURCES.serviceBindings, {
        metadata: { name: `${name}-b`, namespace: 'bench' },
        spec: { instance: { apiVersion: 'postgresql.anynines.com/v1beta3', kind: 'Postgresql', name } },
      } as KubeObject);
      await until(
        async () => ((await client.get<Postgresql>(A8S_RESOURCES.postgresqls, 'bench', name)).status?.clusterStatus === 'Running' ? true : undefined),
        'Running',
      );
      const tRunning = performance.now();
      await until(
        async () => ((await client.get<A8sServiceBinding>(A8S_RESOURCES.serviceBindings, 'bench', `${name}-b`)).status?.implemented ? true : undefined),
        'implemented',
      );
      const secret = await client.get<KubeObject & { data: Record<string, string> }>(CoreResources.secrets, 'bench', `${name}-b-service-binding`);
      const tSecret = performance.now();
      const d = (k: string) => Buffer.from(secret.data[k]!, 'base64').toString('utf8');
      await until(async () => {
        const c = new pg.Client({ host: d('instance_service'), port: 5432, user: d('username'), password: d('password'), database: d('database') });
        c.on('error', () => undefined);
        await c.connect();
        await c.query('SELECT 1');
        await c.end();
        return true;
      }, 'a connection');
      const tConn = performance.now();
      const s = (t: number) => ((t - t0) / 1000).toFixed(2);
      rows.push(`| ${name} | ${s(tRunning)} s | ${s(tSecret)} s | ${s(tConn)} s |`);
    }
    process.stdout.write(['| instance | → Running | → Secret | → first connection |', '|---|---|---|---|', ...rows, ''].join('\n'));
    const pid = operator.instances.get('bench/db-0')!.server.pid!;
    const ps = execFileSync('ps', ['-o', 'pid=,rss=,args=', '--pid', String(pid), '--ppid', String(pid)], { encoding: 'utf8' })
      .trim()
      .split('\n');
    let total = 0;
    process.stdout.write('\nPostgreSQL processes of one instance (RSS; shared buffers counted in each):\n');
    for (const l of ps) {
      const [p, rss, ...a] = l.trim().split(/\s+/);
      total += Number(rss);
      process.stdout.write(`  ${p} ${(Number(rss) / 1024).toFixed(1)} MB  ${a.join(' ').slice(0, 60)}\n`);
    }
    process.stdout.write(`  sum ${(total / 1024).toFixed(1)} MB over ${ps.length} processes\n`);
    process.stdout.write(`bench process (operator, its informers and a harness client) RSS ${(process.memoryUsage().rss / 1024 / 1024).toFixed(1)} MB\n`);
  } finally {
    await operator.stop();
    client.close();
    await cluster.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`bench:sandbox-a8s: ${(e as Error).stack ?? e}\n`);
    process.exit(1);
  },
);
