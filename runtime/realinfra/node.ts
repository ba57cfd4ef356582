// A real node on a harness cluster (`startCluster({ nodes: 1 })`): a private containerd (its own root,
// state and socket) running pods with runc and the CNI bridge plugin, kubelet with a `system:node:<name>`
// certificate, kube-proxy (iptables mode) for ClusterIP Services, kube-scheduler, and a local OCI registry
// (`crane registry serve` on 127.0.0.1) from which containerd pulls, holding the pause image and the
// pod-probe test image, both built here without Docker from one static Go binary each.
//
// The node IP is the bridge's host address (kubelet refuses loopback), so kubelet's port and a forwarder to
// the API server listen there: on this machine, reachable only from the host and its pods. The in-cluster
// address of the API server (the `kubernetes` Service, 10.0.0.1:443) is kube-proxy's DNAT to that forwarder.
// Host-wide state is recorded and restored by host.ts under a host-wide lock.
import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import { stringify as toYaml } from 'yaml';
import { HarnessProcess } from './_process.js';
import { type NodeBinaries, ensureComponent, ensureNodeBinaries } from './build.js';
import { clientOf } from './client.js';
import { FORWARDER_JS, freePort, logTail, sleep } from './_harness.js';
import { type HostRecord, NodeLockError, acquireNodeLock, captureHostRecord, restoreHost, rewriteNodeLock, sweepHostLeftovers } from './host.js';
import { type ClusterPki, createClientCertificate } from './pki.js';
import { probe } from './probe.js';
import { RUN_ID_ENV, type RegisteredProcess, killRegistered, registryDir, removeEntry, writeEntry } from './registry.js';

const execFileAsync = promisify(execFile);

/** Processes of the node. */
export type NodeComponent = 'registry' | 'containerd' | 'forwarder' | 'kubelet' | 'kube-proxy' | 'kube-scheduler';

/** The node's network: the CNI bridge, its host address (the node IP) and the pod subnet. */
export const NODE_NETWORK = { bridge: 'kktnode0', nodeIp: '10.250.0.1', podSubnet: '10.250.0.0/24', serviceSubnet: '10.0.0.0/24' } as const;

/** The controllers kube-controller-manager runs in addition to DEFAULT_CONTROLLERS when the cluster has a node. */
export const NODE_CONTROLLERS: readonly string[] = [
  'node-lifecycle-controller',
  'taint-eviction-controller',
  'deployment-controller',
  'replicaset-controller',
  'replicationcontroller-controller',
  'statefulset-controller',
  'daemonset-controller',
  'job-controller',
  'cronjob-controller',
  'ttl-after-finished-controller',
  'endpoints-controller',
  'endpointslice-controller',
  'endpointslice-mirroring-controller',
  'pod-garbage-collector-controller',
  'disruption-controller',
  'ttl-controller',
];

/** A component of the node did not come up; the message names it and carries the tail of its log. */
export class NodeStartError extends Error {
  constructor(
    readonly component: NodeComponent | 'host' | 'images' | 'node',
    readonly logTail: string,
    detail: string,
  ) {
    super(`realinfra: node: ${component} ${detail}${logTail ? `\n--- last lines of ${component}'s log ---\n${logTail}` : ''}`);
    this.name = 'NodeStartError';
  }
}

/** The real node of a harness cluster (`cluster.node`). */
export interface RealNode {
  /** The Node's name (also its `system:node:<name>` identity). */
  readonly name: string;
  /** The node IP: the CNI bridge's host address. */
  readonly ip: string;
  /** `127.0.0.1:<port>`: the OCI registry containerd pulls from (plain HTTP). Push with `crane` or `pushImage()`. */
  readonly registry: string;
  /** The pause image (sandbox image of every pod). */
  readonly pauseImage: string;
  /** An image holding only `/pod-probe` (entrypoint): `serve <port>`, `get <url>`, `kube <api path>`, `sleep`. */
  readonly probeImage: string;
  /** containerd's socket (`ctr -a <socket> -n k8s.io …`). */
  readonly containerdSocket: string;
  /** The node's folder (containerd root and state, kubelet root, CNI config, registry data, logs). */
  readonly dir: string;
  readonly logs: Readonly<Record<NodeComponent, string>>;
  pids(): Readonly<Record<NodeComponent, number | undefined>>;
  /**
   * Builds an image from files (path in the image → host file to copy, mode kept) and pushes it to the
   * registry as `<registry>/<repository>:<tag>`; resolves to that reference.
   */
  pushImage(ref: string, files: Readonly<Record<string, string>>, entrypoint: readonly string[]): Promise<string>;
  /**
   * Waits until the host reaches Service `namespace/name` through its ClusterIP (kube-proxy programs a Service
   * and each change of its endpoints a moment after the API has them): a TCP connection to the ClusterIP and
   * `port` (by name or number; the first port when left out) must open. Resolves to `{ host, port }`. On
   * timeout the error shows what decides reachability: the Service's EndpointSlices, the node's NAT rules for
   * it and the end of kube-proxy's log.
   */
  waitForService(namespace: string, name: string, opts?: { readonly port?: string | number; readonly timeoutMs?: number }): Promise<ServiceAddress>;
  /** Deletes the node's pods, stops every node process and restores the host. Idempotent. */
  stop(): Promise<void>;
}

/** Where the host reaches a Service: its ClusterIP and a Service port. */
export interface ServiceAddress {
  readonly host: string;
  readonly port: number;
}

export interface NodeOptions {
  /** Binaries. @default ensureNodeBinaries() */
  readonly binaries?: NodeBinaries;
  /** Extra or overriding kubelet configuration fields (KubeletConfiguration v1beta1). */
  readonly kubeletConfig?: Readonly<Record<string, unknown>>;
  /**
   * How long to wait for the host-wide node lock while another process's node runs (so suites that need
   * a node, in different jest runs, take turns); then NodeLockError names the holder. 0: fail at once.
   * @default 900000 (15 min)
   */
  readonly lockTimeoutMs?: number;
}

/** What the node needs of its cluster. */
export interface NodeClusterContext {
  readonly name: string;
  readonly dir: string;
  readonly server: string;
  readonly kubeConfig: KubeConfig;
  readonly pki: ClusterPki;
  readonly log: (line: string) => void;
  readonly readyTimeoutMs: number;
}

const tail = logTail;

/** Opens a TCP connection and closes it: '' when it opened, else why not. */
function tcpConnect(host: string, port: number, timeoutMs = 3000): Promise<string> {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port, timeout: timeoutMs });
    sock.once('connect', () => {
      sock.destroy();
      resolve('');
    });
    sock.once('timeout', () => {
      sock.destroy();
      resolve(`no answer within ${timeoutMs / 1000} s`);
    });
    sock.once('error', (e) => resolve(e.message));
  });
}

async function sh(cmd: string, args: readonly string[], what: string): Promise<string> {
  try {
    const { stdout } = await execFileAsync(cmd, [...args], { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    throw new Error(`${what}: "${cmd} ${args.join(' ')}" failed: ${(err.stderr || err.message).trim()}`, { cause: e });
  }
}

/** Host commands the node runs; each names the Debian package that has it. */
const HOST_COMMANDS: ReadonlyArray<[string, string]> = [
  ['containerd', 'containerd'],
  ['ctr', 'containerd'],
  ['runc', 'runc'],
  ['/usr/lib/cni/bridge', 'containernetworking-plugins'],
  ['iptables', 'iptables'],
  ['ip', 'iproute2'],
  ['tar', 'tar'],
];

/** The absolute path of a command (PATH, then /usr/sbin and /sbin); '' when not found. */
function resolveCommand(cmd: string): string {
  if (cmd.startsWith('/')) return fs.existsSync(cmd) ? cmd : '';
  for (const d of (process.env['PATH'] ?? '/usr/bin:/bin').split(':').concat(['/usr/sbin', '/sbin'])) {
    if (d && fs.existsSync(path.join(d, cmd))) return path.join(d, cmd);
  }
  return '';
}

function findCommand(cmd: string): boolean {
  return resolveCommand(cmd) !== '';
}

class NodeImpl implements RealNode {
  readonly ip = NODE_NETWORK.nodeIp;
  readonly name: string;
  readonly dir: string;
  readonly logs: Record<NodeComponent, string>;
  readonly containerdSocket: string;
  registry = '';
  pauseImage = '';
  probeImage = '';
  private readonly procs: Partial<Record<NodeComponent, HarnessProcess<NodeComponent>>> = {};
  private record: HostRecord | undefined;
  private readonly registryFile: string;
  private stopping: Promise<void> | undefined;
  private bins!: NodeBinaries;
  private crane = '';
  private t0 = Date.now();

  constructor(
    private readonly ctx: NodeClusterContext,
    private readonly opts: NodeOptions,
  ) {
    this.name = `${ctx.name}-node`;
    this.dir = path.join(ctx.dir, 'node');
    fs.mkdirSync(path.join(this.dir, 'logs'), { recursive: true });
    const l = (c: NodeComponent) => path.join(this.dir, 'logs', `${c}.log`);
    this.logs = {
      registry: l('registry'),
      containerd: l('containerd'),
      forwarder: l('forwarder'),
      kubelet: l('kubelet'),
      'kube-proxy': l('kube-proxy'),
      'kube-scheduler': l('kube-scheduler'),
    };
    this.containerdSocket = path.join(this.dir, 'containerd', 'containerd.sock');
    this.registryFile = path.join(registryDir(), `${process.pid}-${path.basename(ctx.dir)}-node.json`);
  }

  private get log() {
    return (line: string) => this.ctx.log(`${this.ctx.name}: node: ${line}`);
  }

  pids(): ReturnType<RealNode['pids']> {
    const pid = (c: NodeComponent) => this.procs[c]?.pid;
    return {
      registry: pid('registry'),
      containerd: pid('containerd'),
      forwarder: pid('forwarder'),
      kubelet: pid('kubelet'),
      'kube-proxy': pid('kube-proxy'),
      'kube-scheduler': pid('kube-scheduler'),
    };
  }

  private register(): void {
    const processes: RegisteredProcess[] = Object.values(this.procs)
      .filter((p) => p?.pid !== undefined)
      .map((p) => ({ component: p!.component, pid: p!.pid!, binary: p!.binary }));
    writeEntry(this.registryFile, {
      ownerPid: process.pid,
      runId: process.env[RUN_ID_ENV],
      name: `${this.ctx.name}-node`,
      dir: this.ctx.dir,
      processes,
      node: true,
    });
  }

  private spawn(component: NodeComponent, binary: string, args: string[], command?: string): HarnessProcess<NodeComponent> {
    const p = new HarnessProcess<NodeComponent>({ component, binary, ...(command ? { command } : {}), args, logFile: this.logs[component], cwd: this.dir });
    this.procs[component] = p;
    this.register();
    return p;
  }

  private async waitFor(component: NodeComponent | 'node', what: string, check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + this.ctx.readyTimeoutMs;
    const p = component === 'node' ? this.procs.kubelet : this.procs[component];
    let last = '';
    for (;;) {
      if (p?.exit) throw new NodeStartError(p.component, tail(p.logFile), `${p.describeExit()} before ${what}`);
      try {
        if (await check()) return;
      } catch (e) {
        last = e instanceof Error ? e.message : String(e);
      }
      if (Date.now() > deadline) {
        throw new NodeStartError(
          component,
          p ? tail(p.logFile) : '',
          `did not get ready within ${this.ctx.readyTimeoutMs / 1000} s (waiting for ${what}${last ? `; last error: ${last}` : ''})`,
        );
      }
      await sleep(250);
    }
  }

  /**
   * Starts the node, one named step after the other: the host checked and locked, the bridge, the registry with
   * the node's images, containerd, the API server's in-cluster address, then kubelet, kube-proxy and kube-scheduler
   * with identities of their own, until the Node is Ready.
   */
  async start(): Promise<void> {
    this.t0 = Date.now();
    await this.checkHost();
    await this.takeHostLock();
    await this.setUpBridge();
    const regPort = await this.startRegistry();
    await this.startContainerd(regPort);
    const apiPort = Number(new URL(this.ctx.server).port);
    await this.startApiForwarder(apiPort);
    const kubeconfigs = await this.writeKubeconfigs();
    await this.startKubelet(kubeconfigs.kubelet);
    await this.startProxyAndScheduler(kubeconfigs);
    await this.waitUntilReady();
  }

  /** Seconds since start(), for the progress lines. */
  private el(): string {
    return `${((Date.now() - this.t0) / 1000).toFixed(1)} s`;
  }

  /** The host commands and root the node needs, then its binaries (built on a cold cache). */
  private async checkHost(): Promise<void> {
    const missing = HOST_COMMANDS.filter(([c]) => !findCommand(c));
    if (missing.length > 0) {
      throw new NodeStartError(
        'host',
        '',
        `needs ${missing.map(([c]) => c).join(', ')}: apt-get install ${[...new Set(missing.map(([, p]) => p))].join(' ')} (Debian/Ubuntu)`,
      );
    }
    if (process.getuid?.() !== 0)
      throw new NodeStartError('host', '', 'needs root (kubelet, containerd and the CNI bridge change host networking and cgroups)');
    this.bins = this.opts.binaries ?? (await ensureNodeBinaries({ log: this.ctx.log }));
    this.crane = await ensureComponent('crane', { log: this.ctx.log });
  }

  /** The host-wide lock, with the state found before anything changes (from here on stop() restores the host). */
  private async takeHostLock(): Promise<void> {
    const lockDeadline = Date.now() + (this.opts.lockTimeoutMs ?? 900_000);
    for (let announced = false; ;) {
      // Captured right before each attempt: the state after the previous holder restored the host.
      const capture = () => captureHostRecord({ cluster: this.ctx.name, dir: this.dir, bridge: NODE_NETWORK.bridge, containerdSocket: this.containerdSocket });
      const record = capture();
      try {
        acquireNodeLock(record, this.log);
        const swept = sweepHostLeftovers();
        this.record = record;
        if (swept.length > 0) {
          this.log(`removed what an earlier node left on this host without a record: ${swept.join('; ')}`);
          // The record again, without the leftovers: what this node's stop() puts back.
          this.record = capture();
          rewriteNodeLock(this.record);
        }
        break;
      } catch (e) {
        if (!(e instanceof NodeLockError) || Date.now() >= lockDeadline) throw e;
        if (!announced) this.log(`waiting for the host's node lock: ${e.lockFile} is held by pid ${e.holder.pid} (cluster "${e.holder.cluster}")`);
        announced = true;
        await sleep(2000);
      }
    }
    this.log(`host lock taken (${this.el()})`);
  }

  /** The bridge first: its host address is the node IP kubelet needs before any pod exists. */
  private async setUpBridge(): Promise<void> {
    const br = NODE_NETWORK.bridge;
    try {
      await sh('ip', ['link', 'add', br, 'type', 'bridge'], 'bridge');
      await sh('ip', ['addr', 'add', `${this.ip}/24`, 'dev', br], 'bridge');
      await sh('ip', ['link', 'set', br, 'up'], 'bridge');
      // The Service range through the bridge, so the host reaches ClusterIPs whatever its default route is.
      await sh('ip', ['route', 'add', NODE_NETWORK.serviceSubnet, 'dev', br, 'src', this.ip], 'bridge');
    } catch (e) {
      throw new NodeStartError('host', '', `could not set up the bridge ${br}: ${(e as Error).message}`);
    }
  }

  /** The registry containerd pulls from, with the pause and pod-probe images in it; resolves to its port. */
  private async startRegistry(): Promise<number> {
    const regPort = await freePort();
    this.registry = `127.0.0.1:${regPort}`;
    fs.mkdirSync(path.join(this.dir, 'registry'), { recursive: true });
    this.spawn('registry', this.crane, ['registry', 'serve', '--address', this.registry, '--disk', path.join(this.dir, 'registry')]);
    await this.waitFor('registry', `GET http://${this.registry}/v2/`, async () => (await probe(`http://${this.registry}/v2/`, {}, 3000)).status === 200);
    try {
      [this.pauseImage, this.probeImage] = await Promise.all([
        this.pushImage('klutch-kit/pause:3.10', { pause: this.bins.pause }, ['/pause']),
        this.pushImage('klutch-kit/pod-probe:1', { 'pod-probe': this.bins.podProbe }, ['/pod-probe']),
      ]);
    } catch (e) {
      throw new NodeStartError('images', tail(this.logs.registry), `could not be pushed: ${(e as Error).message}`);
    }
    this.log(`registry ${this.registry} with ${this.pauseImage} and ${this.probeImage} (${this.el()})`);
    return regPort;
  }

  private async startContainerd(regPort: number): Promise<void> {
    const cdDir = path.join(this.dir, 'containerd');
    this.writeContainerdConfig(cdDir, regPort);
    this.spawn('containerd', resolveCommand('containerd'), ['--config', path.join(cdDir, 'config.toml')]);
    await this.waitFor('containerd', `ctr version on ${this.containerdSocket}`, async () => {
      if (!fs.existsSync(this.containerdSocket)) return false;
      await sh('ctr', ['-a', this.containerdSocket, 'version'], 'containerd');
      return true;
    });
    this.log(`containerd ready on ${this.containerdSocket} (${this.el()})`);
  }

  /** The in-cluster address of the API server: the `kubernetes` Service's endpoint is a forwarder on the node IP. */
  private async startApiForwarder(apiPort: number): Promise<void> {
    this.spawn('forwarder', process.execPath, ['-e', FORWARDER_JS, JSON.stringify([{ lh: this.ip, lp: apiPort, th: '127.0.0.1', tp: apiPort }])]);
    await this.waitFor('forwarder', 'its "ready" line', async () => /^ready$/m.test(fs.readFileSync(this.logs.forwarder, 'utf8')));
    await this.writeKubernetesEndpoints(apiPort);
  }

  /** The identities of kubelet (`system:node:<name>`), kube-proxy and kube-scheduler, each in a kubeconfig of its own. */
  private async writeKubeconfigs(): Promise<NodeKubeconfigs> {
    const pki = this.ctx.pki;
    const [nodeCert, proxyCert, schedCert] = await Promise.all([
      createClientCertificate(pki, 'node', `/O=system:nodes/CN=system:node:${this.name}`),
      createClientCertificate(pki, 'kube-proxy', '/CN=system:kube-proxy'),
      createClientCertificate(pki, 'kube-scheduler', '/CN=system:kube-scheduler'),
    ]);
    const kubeconfig = (base: string, cert: { certPem: string; keyPem: string }) => {
      const file = path.join(this.dir, `${base}.kubeconfig`);
      const b64 = (s: string) => Buffer.from(s).toString('base64');
      fs.writeFileSync(
        file,
        toYaml({
          apiVersion: 'v1',
          kind: 'Config',
          'current-context': base,
          clusters: [{ name: base, cluster: { server: this.ctx.server, 'certificate-authority-data': b64(pki.caPem) } }],
          users: [{ name: base, user: { 'client-certificate-data': b64(cert.certPem), 'client-key-data': b64(cert.keyPem) } }],
          contexts: [{ name: base, context: { cluster: base, user: base } }],
        }),
        { mode: 0o600 },
      );
      return file;
    };
    return { kubelet: kubeconfig('kubelet', nodeCert), proxy: kubeconfig('kube-proxy', proxyCert), scheduler: kubeconfig('kube-scheduler', schedCert) };
  }

  private async startKubelet(kubeconfig: string): Promise<void> {
    const [kubeletPort, kubeletHealthz] = [await freePort(), await freePort()];
    const kubeletRoot = path.join(this.dir, 'kubelet');
    fs.mkdirSync(kubeletRoot, { recursive: true });
    const kubeletConfig = path.join(this.dir, 'kubelet-config.yaml');
    fs.writeFileSync(
      kubeletConfig,
      toYaml({
        apiVersion: 'kubelet.config.k8s.io/v1beta1',
        kind: 'KubeletConfiguration',
        address: this.ip,
        port: kubeletPort,
        readOnlyPort: 0,
        healthzBindAddress: '127.0.0.1',
        healthzPort: kubeletHealthz,
        authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: this.ctx.pki.caCert } },
        authorization: { mode: 'Webhook' },
        containerRuntimeEndpoint: `unix://${this.containerdSocket}`,
        cgroupDriver: 'cgroupfs',
        // kubelet 1.35 refuses cgroup v1 by default; this host kind is cgroup v1 (hybrid).
        failCgroupV1: false,
        failSwapOn: false,
        cgroupsPerQOS: true,
        enforceNodeAllocatable: ['pods'],
        protectKernelDefaults: false,
        evictionHard: { 'memory.available': '100Mi' },
        imageGCHighThresholdPercent: 100,
        imageGCLowThresholdPercent: 99,
        podLogsDir: path.join(this.dir, 'pod-logs'),
        nodeStatusUpdateFrequency: '5s',
        serializeImagePulls: false,
        ...(this.opts.kubeletConfig ?? {}),
      }),
    );
    this.spawn('kubelet', this.bins.kubelet, [
      `--config=${kubeletConfig}`,
      `--kubeconfig=${kubeconfig}`,
      `--root-dir=${kubeletRoot}`,
      `--cert-dir=${path.join(this.dir, 'kubelet-pki')}`,
      `--hostname-override=${this.name}`,
      `--node-ip=${this.ip}`,
      '--v=1',
    ]);
    await this.waitFor(
      'kubelet',
      `GET http://127.0.0.1:${kubeletHealthz}/healthz`,
      async () => (await probe(`http://127.0.0.1:${kubeletHealthz}/healthz`)).status === 200,
    );
    this.log(`kubelet healthy (${this.el()})`);
  }

  /** kube-proxy (iptables mode) and kube-scheduler, next to each other. */
  private async startProxyAndScheduler(kubeconfigs: NodeKubeconfigs): Promise<void> {
    const [proxyHealthz, proxyMetrics, schedPort] = [await freePort(), await freePort(), await freePort()];
    const proxyConfig = path.join(this.dir, 'kube-proxy-config.yaml');
    fs.writeFileSync(
      proxyConfig,
      toYaml({
        apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
        kind: 'KubeProxyConfiguration',
        clientConnection: { kubeconfig: kubeconfigs.proxy },
        mode: 'iptables',
        hostnameOverride: this.name,
        bindAddress: this.ip,
        healthzBindAddress: `127.0.0.1:${proxyHealthz}`,
        metricsBindAddress: `127.0.0.1:${proxyMetrics}`,
        clusterCIDR: NODE_NETWORK.podSubnet,
        nodePortAddresses: [`${this.ip}/32`],
        // Masquerade all Service traffic: replies then come back through the host whether or not bridged
        // traffic passes iptables (br_netfilter), and no route_localnet is needed.
        iptables: { masqueradeAll: true, localhostNodePorts: false, syncPeriod: '30s', minSyncPeriod: '0s' },
        // 0: leave the conntrack sysctls as they are.
        conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
      }),
    );
    this.spawn('kube-proxy', this.bins.kubeProxy, [`--config=${proxyConfig}`, '--v=1']);
    const schedKubeconfig = kubeconfigs.scheduler;
    this.spawn('kube-scheduler', this.bins.kubeScheduler, [
      `--kubeconfig=${schedKubeconfig}`,
      `--authentication-kubeconfig=${schedKubeconfig}`,
      `--authorization-kubeconfig=${schedKubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${schedPort}`,
      `--cert-dir=${path.join(this.dir, 'kube-scheduler-certs')}`,
      '--leader-elect=false',
    ]);
    await Promise.all([
      this.waitFor(
        'kube-proxy',
        `GET http://127.0.0.1:${proxyHealthz}/healthz`,
        async () => (await probe(`http://127.0.0.1:${proxyHealthz}/healthz`)).status === 200,
      ),
      this.waitFor(
        'kube-scheduler',
        `GET https://127.0.0.1:${schedPort}/healthz`,
        async () => (await probe(`https://127.0.0.1:${schedPort}/healthz`, { rejectUnauthorized: false })).status === 200,
      ),
    ]);
    this.log(`kube-proxy and kube-scheduler healthy (${this.el()})`);
  }

  /** Ready, without the not-ready taint (removed by the node-lifecycle controller). */
  private async waitUntilReady(): Promise<void> {
    await this.waitFor('node', `Node "${this.name}" Ready without the node.kubernetes.io/not-ready taint`, async () => {
      const n = await clientOf(this.ctx.kubeConfig).request<NodeObject>('GET', `/api/v1/nodes/${this.name}`);
      const ready = n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      const tainted = n.spec?.taints?.some((t) => t.key.startsWith('node.kubernetes.io/'));
      return Boolean(ready) && !tainted;
    });
    this.log(`Node "${this.name}" Ready at ${this.ip} (${this.el()})`);
  }

  private writeContainerdConfig(cdDir: string, regPort: number): void {
    const certsD = path.join(cdDir, 'certs.d');
    const host = `127.0.0.1:${regPort}`;
    fs.mkdirSync(path.join(certsD, host), { recursive: true });
    fs.writeFileSync(
      path.join(certsD, host, 'hosts.toml'),
      [`server = "http://${host}"`, `[host."http://${host}"]`, '  capabilities = ["pull", "resolve"]', '  skip_verify = true', ''].join('\n'),
    );
    const cniConf = path.join(this.dir, 'cni', 'net.d');
    fs.mkdirSync(cniConf, { recursive: true });
    fs.writeFileSync(
      path.join(cniConf, '10-klutch-kit.conflist'),
      JSON.stringify(
        {
          cniVersion: '1.0.0',
          name: 'klutch-kit',
          plugins: [
            {
              type: 'bridge',
              bridge: NODE_NETWORK.bridge,
              isGateway: true,
              ipMasq: false,
              hairpinMode: true,
              ipam: {
                type: 'host-local',
                ranges: [[{ subnet: NODE_NETWORK.podSubnet, gateway: this.ip }]],
                routes: [{ dst: '0.0.0.0/0' }],
                dataDir: path.join(this.dir, 'cni', 'ipam'),
              },
            },
            { type: 'loopback' },
          ],
        },
        null,
        2,
      ),
    );
    const q = (s: string) => JSON.stringify(s);
    fs.writeFileSync(
      path.join(cdDir, 'config.toml'),
      [
        'version = 2',
        `root = ${q(path.join(cdDir, 'root'))}`,
        `state = ${q(path.join(cdDir, 'state'))}`,
        '[grpc]',
        `  address = ${q(this.containerdSocket)}`,
        '[ttrpc]',
        `  address = ${q(`${this.containerdSocket}.ttrpc`)}`,
        '[debug]',
        `  address = ${q(path.join(cdDir, 'debug.sock'))}`,
        // The "opt" plugin would otherwise create /opt/containerd.
        '[plugins."io.containerd.internal.v1.opt"]',
        `  path = ${q(path.join(cdDir, 'opt'))}`,
        '[plugins."io.containerd.grpc.v1.cri"]',
        `  sandbox_image = ${q(this.pauseImage)}`,
        '  enable_selinux = false',
        // No CAP_SYS_RESOURCE on this host kind: kubelet's -998 for the pause container would fail in runc.
        '  restrict_oom_score_adj = true',
        '  netns_mounts_under_state_dir = true',
        '  [plugins."io.containerd.grpc.v1.cri".containerd]',
        '    snapshotter = "overlayfs"',
        '    default_runtime_name = "runc"',
        '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
        '      runtime_type = "io.containerd.runc.v2"',
        '      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
        '        SystemdCgroup = false',
        '  [plugins."io.containerd.grpc.v1.cri".cni]',
        '    bin_dir = "/usr/lib/cni"',
        `    conf_dir = ${q(cniConf)}`,
        '  [plugins."io.containerd.grpc.v1.cri".registry]',
        `    config_path = ${q(certsD)}`,
        '',
      ].join('\n'),
    );
  }

  /** The `kubernetes` Service's endpoint (the API server runs with --endpoint-reconciler-type=none). */
  private async writeKubernetesEndpoints(apiPort: number): Promise<void> {
    const client = clientOf(this.ctx.kubeConfig);
    const slice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'kubernetes',
        namespace: 'default',
        labels: { 'kubernetes.io/service-name': 'kubernetes', 'endpointslice.kubernetes.io/managed-by': 'realinfra.klutch-kit' },
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: [this.ip], conditions: { ready: true } }],
      ports: [{ name: 'https', port: apiPort, protocol: 'TCP' }],
    };
    await client.request('PATCH', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes', {
      body: slice,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: 'realinfra', force: true },
    });
  }

  async pushImage(ref: string, files: Readonly<Record<string, string>>, entrypoint: readonly string[]): Promise<string> {
    if (!/^[a-z0-9][a-z0-9._/-]*:[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/.test(ref)) {
      throw new Error(`RealNode.pushImage: ref must be "<repository>:<tag>" (e.g. "me/app:1"), got ${JSON.stringify(ref)}`);
    }
    const full = `${this.registry}/${ref}`;
    const work = fs.mkdtempSync(path.join(this.dir, 'image-'));
    try {
      const root = path.join(work, 'rootfs');
      for (const [inImage, host] of Object.entries(files)) {
        const dest = path.join(root, inImage.replace(/^\/+/, ''));
        if (!dest.startsWith(`${root}/`)) throw new Error(`RealNode.pushImage: path ${JSON.stringify(inImage)} leaves the image root`);
        fs.mkdirSync(path.dirname(dest), { recursive: true });
        fs.copyFileSync(host, dest);
        fs.chmodSync(dest, fs.statSync(host).mode & 0o777);
      }
      const layer = path.join(work, 'layer.tar');
      // Reproducible: sorted names, owner root, mtime 0.
      await sh('tar', ['-C', root, '--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '-cf', layer, '.'], 'image layer');
      await sh(this.crane, ['append', '--insecure', '-f', layer, '-t', full], 'crane append');
      // An image from scratch has no platform; containerd only unpacks images whose config names its own.
      const arch = process.arch === 'x64' ? 'amd64' : process.arch;
      await sh(this.crane, ['mutate', '--insecure', `--set-platform=linux/${arch}`, `--entrypoint=${entrypoint.join(',')}`, '-t', full, full], 'crane mutate');
      return full;
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  }

  async waitForService(namespace: string, name: string, opts: { readonly port?: string | number; readonly timeoutMs?: number } = {}): Promise<ServiceAddress> {
    const client = clientOf(this.ctx.kubeConfig);
    const what = `Service ${namespace}/${name}`;
    const svc = await client.request<{ spec?: { clusterIP?: string; ports?: Array<{ name?: string; port: number }> } }>(
      'GET',
      `/api/v1/namespaces/${namespace}/services/${name}`,
    );
    const ports = svc.spec?.ports ?? [];
    const p = opts.port === undefined ? ports[0] : ports.find((x) => x.name === opts.port || x.port === opts.port);
    const host = svc.spec?.clusterIP;
    if (!host || host === 'None') throw new Error(`RealNode.waitForService: ${what} has no ClusterIP (${JSON.stringify(host)})`);
    if (!p) throw new Error(`RealNode.waitForService: ${what} has no port ${JSON.stringify(opts.port ?? '(any)')}; it has ${JSON.stringify(ports)}`);
    const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
    let last: string;
    for (;;) {
      last = await tcpConnect(host, p.port);
      if (last === '') return { host, port: p.port };
      if (Date.now() >= deadline) break;
      await sleep(250);
    }
    throw new Error(
      `RealNode.waitForService: ${what} (${host}:${p.port}) not reachable from the host after ${(opts.timeoutMs ?? 120_000) / 1000} s: ${last}\n` +
        (await this.serviceDiagnosis(namespace, name, host)),
    );
  }

  /** What decides whether a Service is reachable: its EndpointSlices, the NAT rules for it, kube-proxy's log. */
  private async serviceDiagnosis(namespace: string, name: string, clusterIP: string): Promise<string> {
    const out: string[] = [];
    try {
      const slices = await clientOf(this.ctx.kubeConfig).request<{
        items: Array<{ metadata: { name?: string }; endpoints?: Array<{ addresses: string[]; conditions?: Record<string, boolean> }> }>;
      }>('GET', `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`, {
        query: { labelSelector: `kubernetes.io/service-name=${name}` },
      });
      out.push(`--- EndpointSlices (${slices.items.length}) ---`);
      for (const s of slices.items) {
        const eps = (s.endpoints ?? []).map((e) => `${e.addresses.join(',')} ${JSON.stringify(e.conditions ?? {})}`);
        out.push(`${s.metadata.name}: ${eps.length ? eps.join('; ') : '(no endpoints)'}`);
      }
    } catch (e) {
      out.push(`--- EndpointSlices: ${(e as Error).message} ---`);
    }
    try {
      const rules = (await sh('iptables-save', ['-t', 'nat'], 'NAT rules'))
        .split('\n')
        .filter((l) => l.includes(clusterIP) || l.includes(`${namespace}/${name}`));
      out.push(`--- NAT rules naming ${clusterIP} or ${namespace}/${name} (${rules.length}) ---`, ...rules.slice(0, 40));
    } catch (e) {
      out.push(`--- NAT rules: ${(e as Error).message} ---`);
    }
    out.push(`--- last lines of kube-proxy's log ---`, tail(this.logs['kube-proxy'], 30));
    return out.join('\n');
  }

  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    const t0 = Date.now();
    const grace = 5000;
    // No new bindings, then every pod of the node deleted through kubelet (containers, sandboxes, volumes).
    await this.procs['kube-scheduler']?.stop(grace);
    if (this.procs.kubelet?.pid !== undefined) {
      try {
        await this.drain();
      } catch (e) {
        this.log(`draining the node's pods failed (${(e as Error).message}); ending them directly`);
      }
    }
    await Promise.all([this.procs.kubelet?.stop(grace), this.procs['kube-proxy']?.stop(grace)]);
    this.removeContainers();
    await this.procs.containerd?.stop(grace);
    await Promise.all([this.procs.forwarder?.stop(grace), this.procs.registry?.stop(grace)]);
    if (this.record) restoreHost(this.record, this.log);
    removeEntry(this.registryFile);
    this.log(`stopped, host restored (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  }

  /** Deletes the pods bound to the node (grace 1 s) and waits until kubelet has finished them. */
  private async drain(): Promise<void> {
    const client = clientOf(this.ctx.kubeConfig);
    const list = () => client.request<{ items: PodObject[] }>('GET', '/api/v1/pods', { query: { fieldSelector: `spec.nodeName=${this.name}` } });
    const deadline = Date.now() + 45_000;
    for (;;) {
      const pods = (await list()).items;
      if (pods.length === 0) return;
      if (Date.now() > deadline) throw new Error(`${pods.length} pod(s) still there after 45 s`);
      await Promise.all(
        pods
          .filter((p) => !p.metadata.deletionTimestamp)
          .map((p) =>
            client
              .request('DELETE', `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`, { query: { gracePeriodSeconds: 1 } })
              .catch(() => undefined),
          ),
      );
      await sleep(500);
    }
  }

  /** Kills and removes every container left in containerd (sandboxes kubelet stopped but did not remove), so the shims exit. */
  private removeContainers(): void {
    if (this.procs.containerd?.pid === undefined) return;
    const ctr = (args: string[]) => {
      try {
        return execFileSync('ctr', ['-a', this.containerdSocket, '-n', 'k8s.io', ...args], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
          timeout: 20_000,
        });
      } catch {
        return '';
      }
    };
    const ids = ctr(['containers', 'ls', '-q']).split('\n').filter(Boolean);
    for (const id of ids) {
      ctr(['tasks', 'kill', '-s', 'SIGKILL', id]);
      ctr(['tasks', 'rm', '-f', id]);
      ctr(['containers', 'rm', id]);
    }
  }

  /** Synchronous last resort (process exit): SIGKILL every node process, restore the host. */
  killSync(): void {
    for (const p of Object.values(this.procs)) p?.killSync();
    for (const p of Object.values(this.procs)) {
      if (p?.child.pid !== undefined) killRegistered({ component: p.component, pid: p.child.pid, binary: p.binary });
    }
    if (this.record) restoreHost(this.record);
    removeEntry(this.registryFile);
  }
}

interface NodeObject {
  spec?: { taints?: Array<{ key: string; effect: string }> };
  status?: { conditions?: Array<{ type: string; status: string }> };
}

/** The kubeconfig files of the node's components (writeKubeconfigs). */
interface NodeKubeconfigs {
  readonly kubelet: string;
  readonly proxy: string;
  readonly scheduler: string;
}

interface PodObject {
  metadata: { name: string; namespace: string; deletionTimestamp?: string };
}

/** Starts the node of a harness cluster; on failure everything started so far is stopped and the host restored. */
export async function startNode(ctx: NodeClusterContext, opts: NodeOptions = {}): Promise<RealNode & { killSync(): void }> {
  const node = new NodeImpl(ctx, opts);
  try {
    await node.start();
    return node;
  } catch (e) {
    await node.stop();
    throw e;
  }
}
