// provider-anynines on the Crossplane harness: built from the klutchio sources (build.ts), its package image
// (`package/crossplane.yaml` + CRDs of those sources) pushed to the harness registry under the name the
// constructs' Provider uses (the flavour's default package, rewritten by an ImageConfig), installed by
// Crossplane's package manager from the `Provider` our constructs emit, and run — as the package runtime
// would — once its CRDs are established. Either flavour (AnyninesProviderFlavour): the cluster-scoped one of
// Klutch's release (`provider-anynines`), or the namespaced one of Klutch's Crossplane v2 branch
// (`provider-anynines-v2`, for namespaced XRs on Crossplane 2.x).
//
// It runs in a network namespace of its own (its controller-runtime metrics listener takes `:8080` with no
// flag to move it, which provider-kubernetes already holds in the harness's namespace), made through a user
// namespace as the Crossplane harness's are (userns.ts; no root). Two forwarders joined by unix sockets carry the
// API server and the ports given in `forwardPorts` (e.g. broker stand-ins on the host's 127.0.0.1) to the same
// ports on the namespace's 127.0.0.1, and its health port out to a loopback address of the host: every listener
// stays on loopback.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { AnyninesProviderFlavour } from '../../constructs/crossplane/index.js';
import { applyManifests, waitForCrdsEstablished } from './apply.js';
import { ensureComponent } from './build.js';
import { ensureKlutchioSource } from './klutchio.js';
import { CROSSPLANE_NAMESPACE } from './crossplane-harness.js';
import { FORWARDER_JS, killAtExit, logTail, sleep } from './_harness.js';
import { clientOf } from './client.js';
import { UNIX_PATH_MAX, nsenterArgv, pickLoopbackAddress, unshareArgv, userNamespaceProblem } from './userns.js';
import { probe } from './probe.js';
import { killRegistered, removeEntry, writeEntry, RUN_ID_ENV } from './registry.js';
import { HarnessProcess } from './_process.js';
import { isConflict, isNotFound } from '../core/client.js';
import type { RealCluster } from './cluster.js';
import {
  HEALTH_PORT,
  type Obj,
  ProviderAnyninesBase,
  type ProviderAnyninesHarness,
  type ProviderAnyninesOptions,
  READY_CRD,
  providerAnyninesObject,
  providerAnyninesPackageYaml,
} from './anynines-harness.js';
import { PodsProviderHarness } from './anynines-pods.js';

export {
  PROVIDER_ANYNINES_PREFIX,
  type ProviderAnyninesHarness,
  type ProviderAnyninesOptions,
  providerAnyninesBuild,
  providerAnyninesObject,
  providerAnyninesPackageYaml,
} from './anynines-harness.js';

class Harness extends ProviderAnyninesBase implements ProviderAnyninesHarness {
  nsIp = '';
  networkNamespace = '';
  private provider: HarnessProcess<'provider-anynines'> | undefined;
  private forwarder: HarnessProcess<'forwarder'> | undefined;
  private nsForwarder: HarnessProcess<'namespace-forwarder'> | undefined;
  private stopping: Promise<void> | undefined;

  get pid(): number | undefined {
    return this.provider?.pid;
  }

  pids(): number[] {
    return [this.provider?.pid, this.forwarder?.pid, this.nsForwarder?.pid].filter((p): p is number => p !== undefined);
  }

  private log(line: string): void {
    this.opts.log?.(`${this.cluster.name}: provider-anynines: ${line}`);
  }

  private register(): void {
    const processes = ([this.provider, this.forwarder, this.nsForwarder] as Array<HarnessProcess<string> | undefined>)
      .filter((p): p is HarnessProcess<string> => p?.pid !== undefined)
      .map((p) => ({ component: p.component, pid: p.pid!, binary: p.binary }));
    writeEntry(this.registryFile, {
      ownerPid: process.pid,
      runId: process.env[RUN_ID_ENV],
      name: `${this.cluster.name}-provider-anynines`,
      dir: this.dir,
      processes,
    });
  }

  async start(): Promise<void> {
    const xp = this.opts.crossplane ?? this.cluster.crossplane;
    if (!xp) throw new Error('startProviderAnynines: the cluster has no Crossplane; start it with startCluster({ crossplane: … }) or pass opts.crossplane');
    const timeoutMs = this.opts.readyTimeoutMs ?? 180_000;
    const t0 = Date.now();
    const el = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
    const { component, pin, package: pkg, prefix } = this.build;
    if (this.flavour === AnyninesProviderFlavour.NAMESPACED && xp.version === '1.20') {
      throw new Error(
        `startProviderAnynines: ${this.flavour.describe()} needs Crossplane 2.x (namespaced managed resources of namespaced XRs); the cluster runs Crossplane 1.20`,
      );
    }
    const tag = pkg.slice(pkg.lastIndexOf(':') + 1);
    if (tag !== pin.version) {
      throw new Error(`realinfra: ${component}: the constructs' default package ${pkg} is not the version the harness builds (${pin.version})`);
    }
    const src = this.opts.klutchioDir ?? (await ensureKlutchioSource({ log: this.opts.log, pin }));
    const binary = this.opts.binary ?? (await ensureComponent(component, { log: this.opts.log, klutchioDir: src }));

    // The package image under the constructs' name, through an ImageConfig rewrite.
    const rewritten = await xp.rewriteImages(prefix);
    await xp.pushPackage(`${rewritten}/provider-anynines:${tag}`, { packageYaml: providerAnyninesPackageYaml(src) });
    // What the package runtime would need: the TLS server Secret Crossplane 2.x names in the revision.
    const k8sTls = await clientOf(this.cluster.kubeConfig).request<{ data: Record<string, string> }>(
      'GET',
      `/api/v1/namespaces/${CROSSPLANE_NAMESPACE}/secrets/provider-kubernetes-tls-server`,
    );
    await applyManifests(
      this.cluster.kubeConfig,
      [
        {
          apiVersion: 'v1',
          kind: 'Secret',
          type: 'kubernetes.io/tls',
          metadata: { name: 'provider-anynines-tls-server', namespace: CROSSPLANE_NAMESPACE },
          data: k8sTls.data,
        } as KubernetesObject,
        providerAnyninesObject(this.flavour),
      ],
      { fieldManager: 'klutch-kit-harness', continueOnError: false },
    );
    this.log(`package ${pkg} pushed (${rewritten}) and Provider applied (${el()})`);

    // Its namespace, held by the namespace forwarder (the API server and forwardPorts on its 127.0.0.1 → unix sockets
    // → the host forwarder → the host's 127.0.0.1; its health port the other way, to nsIp on the host).
    const apiPort = Number(new URL(this.cluster.server).port);
    const sockDir = path.join(this.dir, 's');
    fs.mkdirSync(sockDir, { recursive: true, mode: 0o700 });
    const sock = (port: number) => {
      const p = path.join(sockDir, String(port));
      if (Buffer.byteLength(p) > UNIX_PATH_MAX)
        throw new Error(`startProviderAnynines: the socket path ${p} is longer than ${UNIX_PATH_MAX} bytes; start the cluster in a shorter folder`);
      return p;
    };
    const inward = [apiPort, ...(this.opts.forwardPorts ?? [])];
    this.nsIp = await pickLoopbackAddress([HEALTH_PORT]);
    this.hostIp = '127.0.0.1';
    const nsRoutes = [...inward.map((p) => ({ lh: '127.0.0.1', lp: p, tpath: sock(p) })), { lpath: sock(HEALTH_PORT), th: '127.0.0.1', tp: HEALTH_PORT }];
    const hostRoutes = [...inward.map((p) => ({ lpath: sock(p), th: '127.0.0.1', tp: p })), { lh: this.nsIp, lp: HEALTH_PORT, tpath: sock(HEALTH_PORT) }];
    const nsFwd = unshareArgv([process.execPath, '-e', FORWARDER_JS, JSON.stringify(nsRoutes)], { loopback: true });
    const nsFwdLog = path.join(this.dir, 'namespace-forwarder.log');
    this.nsForwarder = new HarnessProcess({
      component: 'namespace-forwarder',
      binary: process.execPath,
      command: nsFwd.command,
      args: nsFwd.args,
      logFile: nsFwdLog,
      cwd: this.dir,
    });
    const fwdLog = path.join(this.dir, 'forwarder.log');
    this.forwarder = new HarnessProcess({
      component: 'forwarder',
      binary: process.execPath,
      args: ['-e', FORWARDER_JS, JSON.stringify(hostRoutes)],
      logFile: fwdLog,
      cwd: this.dir,
    });
    this.register();
    await this.until('the namespace forwarder to listen', async () => /^ready$/m.test(fs.readFileSync(nsFwdLog, 'utf8')), 30_000, this.nsForwarder);
    await this.until('the forwarder to listen', async () => /^ready$/m.test(fs.readFileSync(fwdLog, 'utf8')), 30_000, this.forwarder);
    this.networkNamespace = fs.readlinkSync(`/proc/${this.nsForwarder.pid}/ns/net`);

    // Crossplane installs the package once the runtime named the revision's TLS Secret (2.x); its CRDs get established.
    await this.markRevision(xp.version !== '1.20', false);
    await waitForCrdsEstablished(this.cluster.kubeConfig, [READY_CRD, 'providerconfigs.dataservices.anynines.com'], timeoutMs);

    // The provider process, as admin through the harness's namespace kubeconfig (the API server on the namespace's
    // 127.0.0.1, the namespace forwarder), joined to the namespace by the namespace forwarder's PID.
    const kubeconfig = path.join(xp.dir, 'kubeconfig-ns');
    if (!fs.existsSync(kubeconfig)) throw new Error(`startProviderAnynines: the Crossplane harness's namespace kubeconfig ${kubeconfig} is missing`);
    const argv = nsenterArgv(this.nsForwarder.pid!, [
      binary,
      `--poll=${this.opts.pollInterval ?? '5s'}`,
      `--health-probe-bind-address=127.0.0.1:${HEALTH_PORT}`,
      ...(this.opts.args ?? []),
    ]);
    this.provider = new HarnessProcess({
      component: 'provider-anynines',
      binary,
      command: argv.command,
      args: argv.args,
      logFile: this.logFile,
      env: { ...process.env, KUBECONFIG: kubeconfig, POD_NAMESPACE: CROSSPLANE_NAMESPACE },
      cwd: this.dir,
    });
    this.register();
    await this.until(
      `GET http://${this.nsIp}:${HEALTH_PORT}/healthz`,
      async () => (await probe(`http://${this.nsIp}:${HEALTH_PORT}/healthz`, {}, 3000)).status === 200,
      timeoutMs,
      this.provider,
    );
    await this.markRevision(xp.version !== '1.20', true);
    await xp.waitForPackage('Provider', 'provider-anynines', timeoutMs);
    this.log(`${component} ${this.version} (klutchio ${pin.commit}) running in ${this.networkNamespace}, healthz on ${this.nsIp}:${HEALTH_PORT} (${el()})`);
  }

  /** What the package runtime reports on 2.x: the revision's TLS Secret name, then (the process running) RuntimeHealthy. */
  private async markRevision(v2: boolean, runtimeHealthy: boolean): Promise<void> {
    if (!v2) return;
    const c = clientOf(this.cluster.kubeConfig);
    await this.until(
      `the active ProviderRevision of provider-anynines to get its TLS Secret name${runtimeHealthy ? ' and RuntimeHealthy' : ''}`,
      async () => {
        const revs = await c.request<{ items: Obj[] }>(
          'GET',
          `/apis/pkg.crossplane.io/v1/providerrevisions?labelSelector=${encodeURIComponent('pkg.crossplane.io/package=provider-anynines')}`,
        );
        const rev = revs.items.find((r) => r.spec?.['desiredState'] === 'Active');
        if (!rev) return false;
        const healthy = rev.status?.conditions?.find((x) => x['type'] === 'RuntimeHealthy')?.['status'] === 'True';
        if ((healthy || !runtimeHealthy) && rev.status?.['tlsServerSecretName'] === 'provider-anynines-tls-server') return true;
        const conditions = !runtimeHealthy
          ? undefined
          : [
              ...(rev.status?.conditions ?? []).filter((x) => x['type'] !== 'RuntimeHealthy'),
              {
                type: 'RuntimeHealthy',
                status: 'True',
                reason: 'HealthyPackageRevision',
                message: 'served by the klutch-kit harness',
                lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
              },
            ];
        try {
          await c.request('PATCH', `/apis/pkg.crossplane.io/v1/providerrevisions/${encodeURIComponent(rev.metadata!.name!)}/status`, {
            contentType: 'application/merge-patch+json',
            body: {
              metadata: { resourceVersion: rev.metadata!.resourceVersion },
              status: { tlsServerSecretName: 'provider-anynines-tls-server', ...(conditions ? { conditions } : {}) },
            },
          });
        } catch (e) {
          if (!isConflict(e) && !isNotFound(e)) throw e;
        }
        return false;
      },
      this.opts.readyTimeoutMs ?? 180_000,
    );
  }

  private async until(what: string, check: () => Promise<boolean>, timeoutMs: number, proc?: HarnessProcess<string>): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      if (proc?.exit) throw new Error(`realinfra: provider-anynines: ${proc.component} ${proc.describeExit()} before ${what}\n${tail(proc.logFile)}`);
      try {
        if (await check()) return;
      } catch (e) {
        last = e instanceof Error ? e.message : String(e);
      }
      if (Date.now() > deadline) {
        throw new Error(
          `realinfra: provider-anynines: timed out after ${timeoutMs / 1000} s waiting for ${what}${last ? ` (last error: ${last})` : ''}\n${tail(this.logFile)}`,
        );
      }
      await sleep(500);
    }
  }

  stop(): Promise<void> {
    if (!this.stopping) this.stopping = this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    await this.provider?.stop(5000);
    await Promise.all([this.forwarder?.stop(5000), this.nsForwarder?.stop(5000)]);
    removeEntry(this.registryFile);
    this.forget();
  }

  killSync(): void {
    for (const p of [this.provider, this.forwarder, this.nsForwarder] as Array<HarnessProcess<string> | undefined>) {
      p?.killSync();
      if (p?.child.pid !== undefined) killRegistered({ component: p.component, pid: p.child.pid, binary: p.binary });
    }
    removeEntry(this.registryFile);
    this.forget();
  }
}

const tail = (file: string) => logTail(file, 30);

/**
 * Installs provider-anynines on a harness cluster with Crossplane (see the file comment; with Crossplane as pods,
 * anynines-pods.ts: Crossplane's package runtime runs it as a pod) and resolves once
 * the Provider is Installed (and, on 2.x, Healthy) and the process answers its health check. Stop it before
 * the cluster (`await a9s.stop(); await cluster.stop()`); on failure everything started is stopped.
 */
export async function startProviderAnynines(cluster: RealCluster, opts: ProviderAnyninesOptions = {}): Promise<ProviderAnyninesHarness> {
  // Crossplane as pods: its package runtime runs the provider as a pod (anynines-pods.ts)
  const xp = opts.crossplane ?? cluster.crossplane;
  const pods = xp?.runtime === 'pods';
  if (pods && !cluster.node)
    throw new Error(
      `startProviderAnynines: provider-anynines as a pod needs Crossplane with runtime "pods" on a cluster with a node (cluster ${cluster.name})`,
    );
  // No root needed: its namespace is an ordinary user's (userns.ts), where the kernel lets users make them.
  const problem = pods ? undefined : userNamespaceProblem();
  if (problem) throw new Error(`startProviderAnynines: provider-anynines runs in a network namespace of its own: ${problem}`);
  for (const p of opts.forwardPorts ?? []) {
    if (!Number.isInteger(p) || p < 1 || p > 65535) throw new Error(`ProviderAnyninesOptions.forwardPorts: ${JSON.stringify(p)} is not a port`);
  }
  const h = pods ? new PodsProviderHarness(cluster, xp!, opts) : new Harness(cluster, opts);
  killAtExit(h);
  try {
    await h.start();
    return h;
  } catch (e) {
    await h.stop();
    throw e;
  }
}
