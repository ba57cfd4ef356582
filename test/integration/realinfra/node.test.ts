// The harness's real node (startCluster({ nodes: 1 })): kubelet with a system:node identity, containerd +
// runc + the CNI bridge running pods from the harness's registry, kube-proxy for ClusterIP Services (from
// pods and from the host), the in-cluster API server address, the host-wide lock, and stop() putting the
// host back exactly as it was (compared with snapshots taken by this file, not by the harness).
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { execFileSync, spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RealCluster, startCluster } from '../../../runtime/realinfra/cluster.js';
import { clientOf } from '../../../runtime/realinfra/client.js';
import { NodeLockError } from '../../../runtime/realinfra/host.js';
import { NodeStartError } from '../../../runtime/realinfra/node.js';
import { killLeftovers } from '../../../runtime/realinfra/registry.js';
import { eventually, uniqueName } from '../../realinfra/util.js';

jest.setTimeout(300_000);

const log = (line: string) => process.stderr.write(`${line}\n`);

interface Obj {
  metadata: { name: string; namespace?: string; uid?: string };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown> & { conditions?: Array<{ type: string; status: string }> };
}

const api = (c: RealCluster) => clientOf(c.kubeConfig);

async function apply(c: RealCluster, p: string, obj: Record<string, unknown>): Promise<Obj> {
  return api(c).request<Obj>('PATCH', p, { body: obj, contentType: 'application/apply-patch+yaml', query: { fieldManager: 'node-test', force: true } });
}

async function createNamespace(c: RealCluster, prefix: string): Promise<string> {
  const ns = uniqueName(prefix);
  await apply(c, `/api/v1/namespaces/${ns}`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  return ns;
}

/** Runs a pod (restartPolicy Never) to completion; resolves with its phase and log (read through kubelet). */
async function runPod(c: RealCluster, ns: string, name: string, args: string[], serviceAccountName = 'default'): Promise<{ phase: string; log: string }> {
  await apply(c, `/api/v1/namespaces/${ns}/pods/${name}`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns },
    spec: { restartPolicy: 'Never', serviceAccountName, containers: [{ name: 'probe', image: c.node!.probeImage, args }] },
  });
  const phase = await eventually(
    `pod ${ns}/${name} to finish`,
    async () => {
      const p = await api(c).request<Obj>('GET', `/api/v1/namespaces/${ns}/pods/${name}`);
      const ph = p.status?.['phase'] as string | undefined;
      return ph === 'Succeeded' || ph === 'Failed' ? ph : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  const logText = await api(c).request<string>('GET', `/api/v1/namespaces/${ns}/pods/${name}/log`);
  return { phase, log: typeof logText === 'string' ? logText : JSON.stringify(logText) };
}

function httpGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: 5000, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`timeout: GET ${url}`)));
    req.on('error', reject);
  });
}

// ---------------------------------------------------------------------------------------------
// Host snapshots, made here independently of the harness's own record.

const SYSCTLS = [
  'vm.overcommit_memory',
  'vm.panic_on_oom',
  'kernel.panic',
  'kernel.panic_on_oops',
  'kernel.keys.root_maxkeys',
  'kernel.keys.root_maxbytes',
  'net.ipv4.ip_forward',
  'net.ipv4.conf.all.forwarding',
  'net.ipv4.conf.all.route_localnet',
  'net.bridge.bridge-nf-call-iptables',
  'net.netfilter.nf_conntrack_max',
];
const HOST_PATHS = ['/var/lib/kubelet', '/var/log/pods', '/var/log/containers', '/var/lib/cni', '/run/containerd', '/opt/containerd', '/var/lib/containerd'];
// Other suites' Crossplane harness makes veths kkt<6 hex>h (10.231.N.0/30) and namespaces /run/netns/kkt-*: not ours.
const OTHERS = /kkt[0-9a-f]{6}[hn]\b|10\.231\.|\/run\/netns\/kkt-/;

function cmd(c: string, args: string[]): string {
  try {
    return execFileSync(c, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    return `(${c} failed: ${(e as Error).message.split('\n')[0]})`;
  }
}

interface HostSnapshot {
  /**
   * What only a node makes: `kubepods` cgroups, and iptables lines naming `KUBE-*`/`CNI-*` chains. Kept apart from
   * the rest, because a node sweeps such leftovers of earlier nodes when it starts: after a node, this is empty
   * whatever the host held before.
   */
  nodeState: string[];
  iptables: string;
  sysctls: Record<string, string>;
  links: string[];
  addresses: string[];
  routes: string[];
  mounts: string[];
  paths: Record<string, boolean>;
  cgroups: string[];
}

function snapshot(): HostSnapshot {
  const lines = (s: string) =>
    s
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !OTHERS.test(l));
  const iptables = ['iptables-save', 'ip6tables-save']
    .map((c) => cmd(c, []))
    .join('\n')
    .split('\n')
    .filter((l) => !l.startsWith('#'))
    .map((l) => l.replace(/\[\d+:\d+\]/g, '[0:0]'));
  const isNodeChainLine = (l: string) => /\b(KUBE|CNI)-/.test(l);
  const sysctls: Record<string, string> = {};
  for (const s of SYSCTLS) {
    try {
      sysctls[s] = fs.readFileSync(`/proc/sys/${s.replace(/\./g, '/')}`, 'utf8').trim();
    } catch {
      sysctls[s] = '(none)';
    }
  }
  const cgroups: string[] = [];
  for (const h of fs.readdirSync('/sys/fs/cgroup')) {
    const d = path.join('/sys/fs/cgroup', h);
    if (!fs.statSync(d).isDirectory()) continue;
    for (const e of fs.readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) cgroups.push(`${h}/${e.name}`);
  }
  const isKubepods = (c: string) => c.endsWith('/kubepods');
  return {
    nodeState: [...iptables.filter(isNodeChainLine), ...cgroups.filter(isKubepods)],
    iptables: iptables.filter((l) => !isNodeChainLine(l)).join('\n'),
    sysctls,
    links: lines(cmd('ip', ['-o', 'link', 'show'])).map((l) => l.split(':')[1]!.trim().split('@')[0]!),
    addresses: lines(cmd('ip', ['-o', 'addr', 'show'])).map((l) => l.split(/\s+/).slice(1, 4).join(' ')),
    routes: lines(cmd('ip', ['route', 'show', 'table', 'all'])),
    mounts: lines(fs.readFileSync('/proc/self/mountinfo', 'utf8')).map((l) => l.split(' ')[4]!),
    paths: Object.fromEntries(HOST_PATHS.map((p) => [p, fs.existsSync(p)])),
    cgroups: cgroups.filter((c) => !isKubepods(c)).sort(),
  };
}

/** The host after a node is the host before it, with no node state left (leftovers from before included). */
function expectRestored(before: HostSnapshot, after: HostSnapshot): void {
  expect(after.nodeState).toEqual([]);
  expect({ ...after, nodeState: [] }).toEqual({ ...before, nodeState: [] });
}

/**
 * Plants what a node killed after its lock file went leaves behind: empty `kubepods` cgroups in every hierarchy
 * and a `KUBE-*` chain. Returns what it planted.
 */
function plantNodeLeftovers(): string[] {
  const planted: string[] = [];
  for (const h of fs.readdirSync('/sys/fs/cgroup')) {
    const d = path.join('/sys/fs/cgroup', h);
    if (!fs.existsSync(path.join(d, 'cgroup.procs')) || fs.existsSync(path.join(d, 'kubepods'))) continue;
    try {
      fs.mkdirSync(path.join(d, 'kubepods'));
      planted.push(`${h}/kubepods`);
    } catch {
      // a symlinked hierarchy already got it (cpu → cpu,cpuacct)
    }
  }
  execFileSync('iptables', ['-t', 'filter', '-N', 'KUBE-KKT-LEFTOVER']);
  planted.push('iptables filter KUBE-KKT-LEFTOVER');
  return planted;
}

/** PIDs of the processes in the node's pod cgroups (any hierarchy). */
function podProcesses(): number[] {
  const out = new Set<number>();
  const walk = (d: string) => {
    try {
      for (const p of fs.readFileSync(path.join(d, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) out.add(Number(p));
      for (const e of fs.readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(path.join(d, e.name));
    } catch {
      // gone
    }
  };
  for (const h of fs.readdirSync('/sys/fs/cgroup')) walk(path.join('/sys/fs/cgroup', h, 'kubepods'));
  return [...out];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Processes whose command line mentions `dir` (every node process and containerd shim does). */
function processesMentioning(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmdline.includes(dir)) out.push(`${e}: ${cmdline}`);
    } catch {
      // gone
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

describe('a real node', () => {
  let cluster: RealCluster;
  beforeAll(async () => {
    cluster = await startCluster({ name: uniqueName('node'), nodes: 1, log });
  }, 600_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 120_000);

  it('registers as a Ready Node with a system:node:<name> client certificate', async () => {
    const node = cluster.node!;
    const n = await api(cluster).request<Obj>('GET', `/api/v1/nodes/${node.name}`);
    expect(n.status!.conditions!.find((c) => c.type === 'Ready')?.status).toBe('True');
    const addresses = n.status!['addresses'] as Array<{ type: string; address: string }>;
    expect(addresses).toContainEqual({ type: 'InternalIP', address: node.ip });
    const kubeconfig = fs.readFileSync(path.join(node.dir, 'kubelet.kubeconfig'), 'utf8');
    const certB64 = /client-certificate-data: (\S+)/.exec(kubeconfig)![1]!;
    const cert = new X509Certificate(Buffer.from(certB64, 'base64'));
    expect(cert.subject).toContain(`CN=system:node:${node.name}`);
    expect(cert.subject).toContain('O=system:nodes');
  });

  it('runs a Deployment of an image from the harness registry until it is Available', async () => {
    const ns = await createNamespace(cluster, 'deploy');
    await apply(cluster, `/apis/apps/v1/namespaces/${ns}/deployments/web`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: ns },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            containers: [
              {
                name: 'web',
                image: cluster.node!.probeImage,
                args: ['serve', '8080'],
                ports: [{ containerPort: 8080 }],
                readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
                resources: { limits: { memory: '64Mi', cpu: '100m' } },
              },
            ],
          },
        },
      },
    });
    const d = await eventually(
      'Deployment web Available with 2 ready replicas',
      async () => {
        const dep = await api(cluster).request<Obj>('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web`);
        const ok = dep.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') && dep.status?.['readyReplicas'] === 2;
        return ok ? dep : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    expect(d.status!['availableReplicas']).toBe(2);
    const pods = await api(cluster).request<{ items: Obj[] }>('GET', `/api/v1/namespaces/${ns}/pods`, { query: { labelSelector: 'app=web' } });
    for (const p of pods.items) {
      expect(p.spec!['nodeName']).toBe(cluster.node!.name);
      expect(p.status!['podIP']).toMatch(/^10\.250\.0\.\d+$/);
    }
  });

  it('lets a pod reach the API server at the in-cluster address with its ServiceAccount token', async () => {
    const ns = await createNamespace(cluster, 'incluster');
    await apply(cluster, `/api/v1/namespaces/${ns}/serviceaccounts/reader`, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'reader', namespace: ns },
    });
    await apply(cluster, `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles/pod-reader`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'pod-reader', namespace: ns },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }],
    });
    await apply(cluster, `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings/pod-reader`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'pod-reader', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: ns }],
    });
    const allowed = await runPod(cluster, ns, 'list-pods', ['kube', `/api/v1/namespaces/${ns}/pods`], 'reader');
    expect(allowed.phase).toBe('Succeeded');
    expect(allowed.log).toContain('GET https://10.0.0.1:443/');
    expect(allowed.log).toContain('status 200');
    expect(allowed.log).toContain('"kind":"PodList"');
    // The same token outside its Role: authenticated as the ServiceAccount, denied by RBAC.
    const denied = await runPod(cluster, ns, 'list-nodes', ['kube', '/api/v1/nodes'], 'reader');
    expect(denied.log).toContain('status 403');
    expect(denied.log).toContain(`system:serviceaccount:${ns}:reader`);
  });

  it('serves a ClusterIP Service from a pod and from the host', async () => {
    const ns = await createNamespace(cluster, 'svc');
    await apply(cluster, `/api/v1/namespaces/${ns}/pods/backend`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'backend', namespace: ns, labels: { app: 'backend' } },
      spec: {
        containers: [
          { name: 'web', image: cluster.node!.probeImage, args: ['serve', '8080'], readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 } },
        ],
      },
    });
    const svc = await apply(cluster, `/api/v1/namespaces/${ns}/services/backend`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'backend', namespace: ns },
      spec: { selector: { app: 'backend' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    const clusterIP = svc.spec!['clusterIP'] as string;
    expect(clusterIP).toMatch(/^10\.0\.0\.\d+$/);
    const fromHost = await eventually(
      `http://${clusterIP}/ from the host`,
      async () => {
        const r = await httpGet(`http://${clusterIP}/`);
        return r.status === 200 ? r : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    expect(fromHost.body).toBe('hello from backend\n');
    const fromPod = await runPod(cluster, ns, 'client', ['get', `http://${clusterIP}/`]);
    expect(fromPod.phase).toBe('Succeeded');
    expect(fromPod.log).toContain('status 200');
    expect(fromPod.log).toContain('hello from backend');
  });

  it('lets no second node start on the same host while this one runs', async () => {
    const err = await startCluster({ name: uniqueName('second'), nodes: 1, node: { lockTimeoutMs: 0 }, log }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(NodeLockError);
    expect((err as Error).message).toContain(`held by pid ${process.pid}`);
    expect((err as Error).message).toContain(`cluster "${cluster.name}"`);
    // and the running node is untouched
    const n = await api(cluster).request<Obj>('GET', `/api/v1/nodes/${cluster.node!.name}`);
    expect(n.status!.conditions!.find((c) => c.type === 'Ready')?.status).toBe('True');
  });
});

describe('stop()', () => {
  it('leaves no process and restores every host change the node made', async () => {
    const before = snapshot();
    const cluster = await startCluster({ name: uniqueName('restore'), nodes: 1, log });
    let during: HostSnapshot;
    let pids: number[];
    try {
      const ns = await createNamespace(cluster, 'restore');
      // A running pod with a volume (the ServiceAccount token), a veth, cgroups and containerd mounts.
      await apply(cluster, `/api/v1/namespaces/${ns}/pods/sleeper`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'sleeper', namespace: ns },
        spec: { terminationGracePeriodSeconds: 30, containers: [{ name: 'sleep', image: cluster.node!.probeImage, args: ['sleep'] }] },
      });
      await eventually('pod sleeper Running', async () => {
        const p = await api(cluster).request<Obj>('GET', `/api/v1/namespaces/${ns}/pods/sleeper`);
        return p.status?.['phase'] === 'Running';
      });
      during = snapshot();
      pids = [...podProcesses(), ...Object.values(cluster.node!.pids()).filter((p): p is number => p !== undefined)];
    } finally {
      await cluster.stop();
    }
    const after = snapshot();
    expectRestored(before, after);
    // The node did change the host (otherwise this test would prove nothing) …
    expect(during.links).toContain('kktnode0');
    expect(during.nodeState.join('\n')).toContain('KUBE-SERVICES');
    expect(during.nodeState.some((c) => c.endsWith('/kubepods'))).toBe(true);
    expect(pids.length).toBeGreaterThan(6);
    // … and stop() put every part back.
    expect(after.nodeState).toEqual([]);
    expect(after.iptables).toBe(before.iptables);
    expect(after.sysctls).toEqual(before.sysctls);
    expect(after.links).toEqual(before.links);
    expect(after.addresses).toEqual(before.addresses);
    expect(after.routes).toEqual(before.routes);
    expect(after.mounts).toEqual(before.mounts);
    expect(after.paths).toEqual(before.paths);
    expect(after.cgroups).toEqual(before.cgroups);
    expect(pids.filter(alive)).toEqual([]);
    expect(processesMentioning(cluster.dir)).toEqual([]);
    expect(fs.existsSync('/run/klutch-kit-realinfra-node.lock')).toBe(false);
  });
});

describe('a node whose process died', () => {
  it('is ended by killLeftovers(), which restores its host changes from the node lock record; a node sweeps unrecorded leftovers', async () => {
    const repo = fileURLToPath(new URL('../../../', import.meta.url));
    const registry = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-test-node-registry-'));
    const unplanted = snapshot();
    // An earlier node's leftovers that no lock records: without the sweep, this node's restore keeps them as
    // "there before", and its pod's processes inside them (CI, 2026-11-28).
    expect(plantNodeLeftovers().length).toBeGreaterThan(1);
    // The host to come back to: the leftovers are node state (swept), but planting the chain also loads the
    // filter table on a host where nothing had (a brand-new machine, CI 2026-11-30): its empty built-in chains
    // are the host's from now on, not the node's to remove. Nothing else may differ.
    const before = snapshot();
    expect({ ...before, nodeState: [], iptables: '' }).toEqual({ ...unplanted, nodeState: [], iptables: '' });
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(repo, 'test/realinfra/fixtures/start-node-child.ts'), uniqueName('orphan')], {
      cwd: repo,
      env: { ...process.env, KLUTCH_KIT_REALINFRA_REGISTRY: registry },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let dir: string | undefined;
    try {
      dir = await new Promise<string>((resolve, reject) => {
        let out = '';
        let err = '';
        child.stdout!.on('data', (b: Buffer) => {
          out += b.toString();
          const line = out.split('\n').find((l) => l.startsWith('{'));
          if (line) resolve((JSON.parse(line) as { dir: string }).dir);
        });
        child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
        child.on('exit', (code) => reject(new Error(`child exited with ${code} before its node was up:\n${err}`)));
      });
      expect(podProcesses().length).toBeGreaterThan(0);
      // No exit hook, no stop(): the node's processes, its pod and the host changes stay behind.
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      expect(snapshot().links).toContain('kktnode0');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      const ended = killLeftovers({ registryDir: registry });
      expect(ended.flatMap((e) => e.killed.map((p) => p.component))).toEqual(expect.arrayContaining(['kubelet', 'containerd', 'kube-apiserver']));
      fs.rmSync(registry, { recursive: true, force: true });
    }
    expectRestored(before, snapshot());
    expect(podProcesses()).toEqual([]);
    expect(processesMentioning(dir!)).toEqual([]);
    expect(fs.existsSync('/run/klutch-kit-realinfra-node.lock')).toBe(false);
  });
});

describe('a node that does not come up', () => {
  it('fails naming the component with its log, and leaves the host as it found it', async () => {
    const before = snapshot();
    // kubelet 1.35's default on a cgroup v1 host like this one: it refuses to start.
    const err = await startCluster({ name: uniqueName('badnode'), nodes: 1, node: { kubeletConfig: { failCgroupV1: true } }, log }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(NodeStartError);
    expect((err as NodeStartError).component).toBe('kubelet');
    expect((err as Error).message).toMatch(/realinfra: node: kubelet (exited with code \d+|did not get ready)/);
    expect((err as NodeStartError).logTail).toMatch(/cgroup v1/i);
    expectRestored(before, snapshot());
    expect(fs.existsSync('/run/klutch-kit-realinfra-node.lock')).toBe(false);
  });
});
