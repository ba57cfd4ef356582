// Faults on real clusters: kill -9 of the konnector process while it syncs 500 objects, leader
// election between two replicas, a control-plane kube-apiserver restart, watches that expire
// (410 Gone: the control plane runs without watch cache and compacts etcd every few seconds), and
// concurrent edits on both sides. Every test checks the final state object by object.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CoreResources, type KubeClient, type KubeObject } from '../../../runtime/core/client.js';
import { Informer } from '../../../runtime/core/informer.js';
import { SYNCER_FINALIZER } from '../../../runtime/konnector/types.js';
import { BINDING_RESOURCES } from '../../../contract/index.js';
import { startCluster, type RealCluster } from '../../../runtime/realinfra/index.js';
import {
  admin,
  bindOnApp,
  createCRDs,
  ensure,
  eventually,
  installBindingCRDs,
  MiniBackend,
  setUpConsumerOnProvider,
  sleep,
  widgetCRD,
  WIDGETS,
  WIDGETS_NAME,
} from './fixture.js';

jest.setTimeout(180_000);

type Widget = KubeObject & { spec?: { size?: number; color?: string }; status?: { phase?: string; message?: string } };

const repo = fileURLToPath(new URL('../../../', import.meta.url));
let cp: RealCluster;
let app: RealCluster;
let cpc: KubeClient;
let ac: KubeClient;
let backend: MiniBackend;
const children = new Set<ChildProcess>();

interface Replica {
  child: ChildProcess;
  port: number;
  identity: string;
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts `klutch-konnector` (runtime/konnector/main.ts under tsx) against the app cluster. */
function startReplica(identity: string, extra: string[] = []): Promise<Replica> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'runtime/konnector/main.ts',
      '--kubeconfig',
      app.kubeconfigPath,
      '--health-address',
      '127.0.0.1:0',
      '--lease-namespace',
      'klutch-bind',
      '--heartbeat-interval',
      '10s',
      '--leader-elect-lease-duration',
      '4s',
      '--leader-elect-renew-deadline',
      '3s',
      '--leader-elect-retry-period',
      '500ms',
      // the namespaces this suite's objects live in (the program refuses to start without a namespace choice)
      '--allow-namespace=bulk,restart,race',
      ...extra,
    ],
    { cwd: repo, env: { ...process.env, POD_NAME: identity, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.add(child);
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => (children.delete(child), r(code))));
  let out = '';
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /"port":(\d+)[^\n]*klutch-konnector up/.exec(out);
      if (m) resolve({ child, port: Number(m[1]), identity, output: () => out, exited });
    });
    void exited.then((code) => reject(new Error(`konnector ${identity} exited (${code}) before it was up:\n${out}`)));
  });
}

async function readyz(r: Replica): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${r.port}/readyz`);
  return res.status;
}

async function leaseHolder(): Promise<string | undefined> {
  const l = await ac.getOrNull<KubeObject & { spec?: { holderIdentity?: string } }>(CoreResources.leases, 'klutch-bind', 'klutch-bind');
  return l?.spec?.holderIdentity || undefined;
}

const names = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`);

async function createMany(c: KubeClient, ns: string, list: string[], concurrency = 32): Promise<void> {
  let i = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (i < list.length) {
        const name = list[i++]!;
        await c.create(WIDGETS, { metadata: { name, namespace: ns }, spec: { size: Number(name.slice(-4)), color: 'c' } });
      }
    }),
  );
}

/** Every listed object exists upstream exactly once with the downstream spec, and nothing else is there. */
async function expectConverged(ns: string, list: string[]): Promise<void> {
  const pns = `cluster-faults-${ns}`;
  await eventually(
    `${list.length} objects upstream`,
    async () => {
      const up = await cpc.list<Widget>(WIDGETS, pns);
      return up.items.length === list.length && up.items.every((w) => w.spec?.size === Number(w.metadata.name!.slice(-4)));
    },
    120_000,
    500,
  );
  const up = (await cpc.list<Widget>(WIDGETS, pns)).items;
  expect(up.map((w) => w.metadata.name).sort()).toEqual([...list].sort());
  const down = (await ac.list<Widget>(WIDGETS, ns)).items;
  expect(down.map((w) => w.metadata.name).sort()).toEqual([...list].sort());
  for (const d of down) {
    expect(d.metadata.finalizers).toEqual([SYNCER_FINALIZER]);
    const u = up.find((x) => x.metadata.name === d.metadata.name)!;
    expect(u.spec).toEqual(d.spec);
  }
}

beforeAll(async () => {
  [cp, app] = await Promise.all([
    // No watch cache and etcd compaction every 3 s on the control plane: watches resumed from an old
    // resourceVersion get 410 Gone, so every provider informer goes through relists during this suite.
    startCluster({ name: 'kf-cp', apiServerArgs: { 'watch-cache': 'false', 'etcd-compaction-interval': '3s' } }),
    startCluster({ name: 'kf-app' }),
  ]);
  cpc = admin(cp);
  ac = admin(app);
  await Promise.all([installBindingCRDs(cpc), createCRDs(cpc, [widgetCRD()]), installBindingCRDs(ac)]);
  backend = new MiniBackend(cp);
  await backend.start();
  const p = await setUpConsumerOnProvider(cp, 'cluster-faults');
  await bindOnApp(app, p);
  for (const ns of ['bulk', 'restart', 'race']) await ensure(ac, CoreResources.namespaces, { metadata: { name: ns } });
}, 240_000);

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await backend?.stop();
  cpc?.close();
  ac?.close();
  await Promise.all([cp?.stop(), app?.stop()]);
}, 120_000);

describe('konnector faults', () => {
  // Each test gets the konnector it needs from running() / stopActive(), whatever ran before it.
  let active: Replica | undefined;
  let started = 0;

  /** The running konnector: the one an earlier test left, or a new one that holds the Lease. */
  async function running(): Promise<Replica> {
    if (!active || active.child.exitCode !== null || active.child.signalCode !== null) {
      const r = await startReplica(`replica-own-${++started}`);
      active = r;
      await eventually('the new replica leads', async () => (await leaseHolder()) === r.identity, 30_000);
      await eventually(
        'the binding is Ready',
        async () => {
          const b = await ac.getOrNull<KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } }>(
            BINDING_RESOURCES.apiServiceBindings,
            'klutch-bind',
            WIDGETS_NAME,
          );
          return b?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
        },
        60_000,
      );
    }
    return active;
  }

  async function stopActive(): Promise<void> {
    const r = active;
    active = undefined;
    if (r && r.child.exitCode === null && r.child.signalCode === null) {
      r.child.kill('SIGTERM');
      await r.exited;
    }
  }

  it('two replicas: one leader runs the controllers; SIGTERM hands over via the Lease', async () => {
    await stopActive();
    const [r1, r2] = await Promise.all([startReplica('replica-1'), startReplica('replica-2')]);
    const holder = await eventually('a lease holder', leaseHolder, 30_000);
    const [leader, standby] = holder === 'replica-1' ? [r1, r2] : [r2, r1];
    expect(['replica-1', 'replica-2']).toContain(holder);
    // The binding becomes Ready (the leader runs), the standby serves health but runs no controllers.
    await eventually('CRD created by the leader', () => ac.getOrNull(CoreResources.crds, undefined, WIDGETS_NAME), 60_000);
    await eventually('leader ready', async () => (await readyz(leader)) === 200, 60_000);
    expect(await readyz(standby)).toBe(200);
    const metrics = async (r: Replica) => (await fetch(`http://127.0.0.1:${r.port}/metrics`)).text();
    expect(await metrics(leader)).toMatch(/klutch_reconcile_total\{controller="bindings"/);
    expect(await metrics(standby)).not.toMatch(/klutch_reconcile_total\{controller="bindings"/);
    expect(await metrics(leader)).toContain('klutch_process_resident_memory_bytes');
    expect((await fetch(`http://127.0.0.1:${leader.port}/healthz`)).status).toBe(200);

    leader.child.kill('SIGTERM');
    expect(await leader.exited).toBe(0);
    await eventually('standby takes over', async () => (await leaseHolder()) === standby.identity, 15_000);
    await ac.create(WIDGETS, { metadata: { name: 'after-handover', namespace: 'restart' }, spec: { size: 1 } });
    await eventually('standby syncs', () => cpc.getOrNull(WIDGETS, 'cluster-faults-restart', 'after-handover'), 60_000);
    active = standby;
  });

  it('kill -9 while syncing 500 objects, start again: every object converges, none lost or duplicated', async () => {
    const list = names(500, 'bulk');
    const victim = await running();
    const creating = createMany(ac, 'bulk', list);
    await eventually('some objects upstream', async () => (await cpc.list(WIDGETS, 'cluster-faults-bulk')).items.length >= 50, 120_000, 50);
    victim.child.kill('SIGKILL');
    await victim.exited;
    await creating;
    const upAtKill = (await cpc.list(WIDGETS, 'cluster-faults-bulk')).items.length;
    expect(upAtKill).toBeLessThan(500);
    // Delete a few downstream while the konnector is down: their finalizer holds them until the new
    // process deletes the upstream copies.
    const gone = list.slice(0, 5);
    for (const n of gone) await ac.delete(WIDGETS, 'bulk', n);
    active = await startReplica('replica-3');
    const survivors = list.slice(5);
    await expectConverged('bulk', survivors);
    await eventually('deleted while down are gone on both sides', async () => {
      for (const n of gone) if ((await ac.getOrNull(WIDGETS, 'bulk', n)) || (await cpc.getOrNull(WIDGETS, 'cluster-faults-bulk', n))) return false;
      return true;
    });
    // Status of every object flows down.
    let i = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (i < survivors.length) {
          const n = survivors[i++]!;
          await cpc.mergePatch(WIDGETS, 'cluster-faults-bulk', n, { status: { phase: `p-${n}` } }, 'status');
        }
      }),
    );
    await eventually(
      'all statuses down',
      async () => (await ac.list<Widget>(WIDGETS, 'bulk')).items.every((w) => w.status?.phase === `p-${w.metadata.name}`),
      120_000,
      500,
    );
  });

  it('control-plane kube-apiserver restart (same etcd): reconnects and converges', async () => {
    await running();
    const list = names(20, 'rs');
    const restarting = cp.restartApiServer();
    await sleep(200);
    await createMany(ac, 'restart', list, 4);
    await restarting;
    await eventually(
      'objects created during the restart are upstream',
      async () => {
        for (const n of list) if (!(await cpc.getOrNull(WIDGETS, 'cluster-faults-restart', n))) return false;
        return true;
      },
      120_000,
      500,
    );
    // Watches are back: an upstream status change comes down, a downstream change goes up.
    await cpc.mergePatch(WIDGETS, 'cluster-faults-restart', 'rs-0000', { status: { phase: 'after-restart' } }, 'status');
    await eventually('status after restart', async () => (await ac.get<Widget>(WIDGETS, 'restart', 'rs-0000')).status?.phase === 'after-restart', 60_000);
    await ac.mergePatch(WIDGETS, 'restart', 'rs-0001', { spec: { size: 4242 } });
    await eventually('spec after restart', async () => (await cpc.get<Widget>(WIDGETS, 'cluster-faults-restart', 'rs-0001')).spec?.size === 4242, 60_000);
  });

  it('watches that expire (410 Gone) relist without losing events', async () => {
    await ensure(cpc, CoreResources.namespaces, { metadata: { name: 'gone-test' } });
    const inf = new Informer(cpc, CoreResources.configmaps, { namespace: 'gone-test', watchTimeoutSeconds: [1, 2] });
    const seen = new Map<string, string>();
    inf.addEventHandler({
      onAdd: (o) => seen.set(o.metadata.name!, String((o as { data?: { v?: string } }).data?.v)),
      onUpdate: (_, o) => seen.set(o.metadata.name!, String((o as { data?: { v?: string } }).data?.v)),
      onDelete: (o) => seen.delete(o.metadata.name!),
    });
    inf.start();
    await inf.waitForSync(30_000);
    try {
      // Bursts of writes separated by quiet periods longer than two compaction intervals: the watch
      // (re-opened every 1-2 s from its last resourceVersion) then asks for a compacted revision.
      let round = 0;
      const deadline = Date.now() + 90_000;
      for (let burst = 0; (burst < 3 || inf.stats.relistsOnGone === 0) && Date.now() < deadline; burst++) {
        for (let k = 0; k < 6; k++, round++) {
          const n = `cm-${round % 7}`;
          const existing = await cpc.getOrNull(CoreResources.configmaps, 'gone-test', n);
          if (!existing) await cpc.create(CoreResources.configmaps, { metadata: { name: n, namespace: 'gone-test' }, data: { v: String(round) } });
          else if (round % 5 === 0) await cpc.delete(CoreResources.configmaps, 'gone-test', n);
          else await cpc.mergePatch(CoreResources.configmaps, 'gone-test', n, { data: { v: String(round) } });
        }
        await sleep(8000);
      }
      expect(inf.stats.relistsOnGone).toBeGreaterThan(0);
      const live = (await cpc.list<KubeObject & { data?: { v?: string } }>(CoreResources.configmaps, 'gone-test')).items;
      const want = new Map(live.map((c) => [c.metadata.name!, String(c.data?.v)]));
      await eventually('handlers saw the final state', async () => JSON.stringify([...seen].sort()) === JSON.stringify([...want].sort()), 20_000);
      expect(new Set(inf.list().map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`))).toEqual(
        new Set(live.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`)),
      );
    } finally {
      await inf.stop();
    }
  });

  it('concurrent edits on both sides converge: the app cluster wins spec, the provider wins status', async () => {
    await running();
    await ac.create(WIDGETS, { metadata: { name: 'contested', namespace: 'race' }, spec: { size: 0, color: 'start' } });
    await eventually('contested upstream', () => cpc.getOrNull(WIDGETS, 'cluster-faults-race', 'contested'), 60_000);
    for (let i = 1; i <= 15; i++) {
      await Promise.all([
        ac.mergePatch(WIDGETS, 'race', 'contested', { spec: { size: i, color: `app-${i}` } }),
        cpc.mergePatch(WIDGETS, 'cluster-faults-race', 'contested', { spec: { size: 1000 + i, color: `provider-${i}` } }),
        cpc.mergePatch(WIDGETS, 'cluster-faults-race', 'contested', { status: { phase: `provider-${i}` } }, 'status'),
        ac.mergePatch(WIDGETS, 'race', 'contested', { status: { phase: `app-${i}` } }, 'status'),
      ]);
    }
    await eventually(
      'converged',
      async () => {
        const d = await ac.get<Widget>(WIDGETS, 'race', 'contested');
        const u = await cpc.get<Widget>(WIDGETS, 'cluster-faults-race', 'contested');
        return (
          d.spec?.size === 15 && u.spec?.size === 15 && u.spec?.color === 'app-15' && d.status?.phase === 'provider-15' && u.status?.phase === 'provider-15'
        );
      },
      60_000,
    );
    // The APIServiceBinding stayed healthy through all of it.
    const b = await ac.get<KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } }>(
      BINDING_RESOURCES.apiServiceBindings,
      'klutch-bind',
      WIDGETS_NAME,
    );
    expect(b.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
  });
});
