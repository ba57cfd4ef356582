// provider-anynines on Crossplane as pods (`startProviderAnynines(cluster, { crossplane })` with a harness started with
// `runtime: 'pods'`): the production shape, where Crossplane's default package runtime runs the provider, not the
// harness.
//
//  - Its package image is its own runtime image (runtime/image/crossplane.ts `packageRuntimeImage`: `package.yaml` of
//    the klutchio sources + the static binary at upstream's `/usr/local/bin/provider`), pushed to the node's registry
//    under the name the constructs' Provider uses (the flavour's default package, rewritten by an ImageConfig).
//  - The `Provider` our constructs emit, with a DeploymentRuntimeConfig `provider-anynines` carrying `--poll` and the
//    extra args; Crossplane creates its Deployment, ServiceAccount, RBAC and TLS Secrets.
//  - `forwardPorts` (e.g. a broker stand-in on the host's 127.0.0.1): a forwarder of the harness on the node IP, same
//    port, so the provider's pod reaches `http://<node IP>:<port>` (`urlFor`); only the host and its pods reach it.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, Chart } from 'cdk8s';
import type { KubernetesObject } from '@kubernetes/client-node';
import { AnyninesProviderFlavour, DeploymentRuntimeConfig, Provider } from '../../constructs/crossplane/index.js';
import { packageRuntimeImage } from '../image/crossplane.js';
import { writeLayout } from '../image/oci.js';
import { pushLayoutImage } from '../image/registry.js';
import { HarnessProcess } from './_process.js';
import { applyManifests } from './apply.js';
import { ensureComponent } from './build.js';
import { clientOf } from './client.js';
import type { RealCluster } from './cluster.js';
import { CROSSPLANE_NAMESPACE, type CrossplaneHarness } from './crossplane-harness.js';
import { FORWARDER_JS } from './_harness.js';
import { ensureKlutchioSource } from './klutchio.js';
import { killRegistered, removeEntry, RUN_ID_ENV, writeEntry } from './registry.js';
import { ProviderAnyninesBase, providerAnyninesPackageYaml, type ProviderAnyninesHarness, type ProviderAnyninesOptions } from './anynines-harness.js';

/** The DeploymentRuntimeConfig of provider-anynines as pods (its flags). */
export const PROVIDER_ANYNINES_RUNTIME = 'provider-anynines';
/** Where the binary is in the package image (upstream's provider images). */
const PROVIDER_BINARY_PATH = '/usr/local/bin/provider';
const POD_SELECTOR = 'pkg.crossplane.io/provider=provider-anynines';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The `Provider` our constructs emit for provider-anynines of a flavour, with a DeploymentRuntimeConfig carrying `args`. */
export function providerAnyninesPodsObjects(
  args: readonly string[],
  flavour: AnyninesProviderFlavour = AnyninesProviderFlavour.CLUSTER_SCOPED,
): KubernetesObject[] {
  const chart = new Chart(new App(), 'harness-a9s-pods');
  new Provider(chart, 'ProviderAnynines', {
    package: flavour.defaultPackage,
    name: 'provider-anynines',
    runtimeConfig: new DeploymentRuntimeConfig(chart, 'Runtime', { name: PROVIDER_ANYNINES_RUNTIME, args: [...args] }),
  });
  return chart.toJson() as KubernetesObject[];
}

/** provider-anynines run by Crossplane's package runtime (startProviderAnynines() with a pods harness makes it). */
export class PodsProviderHarness extends ProviderAnyninesBase implements ProviderAnyninesHarness {
  readonly nsIp = '';
  readonly networkNamespace = '';
  readonly pid = undefined;
  private forwarder: HarnessProcess<'forwarder'> | undefined;
  private stopping: Promise<void> | undefined;

  constructor(
    cluster: RealCluster,
    private readonly xp: CrossplaneHarness,
    opts: ProviderAnyninesOptions,
  ) {
    super(cluster, opts);
  }

  pids(): number[] {
    return [this.forwarder?.pid].filter((p): p is number => p !== undefined);
  }

  private log(line: string): void {
    this.opts.log?.(`${this.cluster.name}: provider-anynines (pod): ${line}`);
  }

  async start(): Promise<void> {
    const node = this.cluster.node!;
    const t0 = Date.now();
    const el = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
    const { component, pin, package: pkg, prefix } = this.build;
    const tag = pkg.slice(pkg.lastIndexOf(':') + 1);
    const src = this.opts.klutchioDir ?? (await ensureKlutchioSource({ log: this.opts.log, pin }));
    const binary = this.opts.binary ?? (await ensureComponent(component, { log: this.opts.log, klutchioDir: src }));
    // The package image under the constructs' name (an ImageConfig rewrites it to the registry the pods pull from).
    const rewritten = await this.xp.rewriteImages(prefix);
    const repoTag = `${rewritten.slice(rewritten.indexOf('/') + 1)}/provider-anynines:${tag}`;
    const image = packageRuntimeImage({
      title: 'provider-anynines',
      version: tag,
      packageYaml: providerAnyninesPackageYaml(src),
      binary,
      binaryPath: PROVIDER_BINARY_PATH,
    });
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-a9s-image-'));
    try {
      writeLayout(path.join(tmp, 'layout'), { 'provider-anynines': image });
      await pushLayoutImage(path.join(tmp, 'layout'), 'provider-anynines', `${node.registry}/${repoTag}`);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
    // The stand-ins the provider calls: the same port on the node IP, forwarded to the host's 127.0.0.1.
    this.hostIp = node.ip;
    const routes = (this.opts.forwardPorts ?? []).map((p) => ({ lh: node.ip, lp: p, th: '127.0.0.1', tp: p }));
    if (routes.length > 0) {
      const fwdLog = path.join(this.dir, 'forwarder.log');
      this.forwarder = new HarnessProcess({
        component: 'forwarder',
        binary: process.execPath,
        args: ['-e', FORWARDER_JS, JSON.stringify(routes)],
        logFile: fwdLog,
        cwd: this.dir,
      });
      writeEntry(this.registryFile, {
        ownerPid: process.pid,
        runId: process.env[RUN_ID_ENV],
        name: `${this.cluster.name}-provider-anynines`,
        dir: this.dir,
        processes: [{ component: 'forwarder', pid: this.forwarder.pid!, binary: process.execPath }],
      });
      const deadline = Date.now() + 30_000;
      while (!/^ready$/m.test(fs.readFileSync(fwdLog, 'utf8'))) {
        if (this.forwarder.exit || Date.now() > deadline)
          throw new Error(`realinfra: provider-anynines: the forwarder on ${node.ip} did not listen: ${fs.readFileSync(fwdLog, 'utf8').trim() || 'no output'}`);
        await sleep(200);
      }
    }
    const args = [`--poll=${this.opts.pollInterval ?? '5s'}`, ...(this.opts.args ?? [])];
    await applyManifests(this.cluster.kubeConfig, providerAnyninesPodsObjects(args, this.flavour), {
      fieldManager: 'klutch-kit-harness',
      continueOnError: false,
    });
    this.log(`package image ${rewritten}/provider-anynines:${tag} pushed, Provider applied with ${args.join(' ')} (${el()})`);
    try {
      await this.xp.waitForPackage('Provider', 'provider-anynines', this.opts.readyTimeoutMs ?? 180_000);
    } catch (e) {
      throw new Error(`${(e as Error).message}\n--- provider-anynines pod ---\n${await this.podLog(40)}`, { cause: e });
    }
    this.log(`${component} ${this.version} (klutchio ${pin.commit}) Healthy as a pod (${el()})`);
  }

  /** The last lines of the provider pod's log (also written to `logFile`). */
  private async podLog(lines: number): Promise<string> {
    try {
      const c = clientOf(this.cluster.kubeConfig);
      const pods = await c.request<{ items: Array<{ metadata: { name: string } }> }>('GET', `/api/v1/namespaces/${CROSSPLANE_NAMESPACE}/pods`, {
        query: { labelSelector: POD_SELECTOR },
      });
      const pod = pods.items[0];
      if (!pod) return '(no pod)';
      const text = await c.request<unknown>('GET', `/api/v1/namespaces/${CROSSPLANE_NAMESPACE}/pods/${pod.metadata.name}/log`, {
        query: { container: 'package-runtime', tailLines: String(lines) },
      });
      const body = typeof text === 'string' ? text : JSON.stringify(text);
      fs.writeFileSync(this.logFile, body);
      return body.trimEnd();
    } catch (e) {
      return `(no log: ${(e as Error).message})`;
    }
  }

  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  /** Keeps the pod's log, removes the Provider (Crossplane removes its Deployment) and ends the forwarder. */
  private async doStop(): Promise<void> {
    await this.podLog(500);
    const c = clientOf(this.cluster.kubeConfig);
    await c.request('DELETE', '/apis/pkg.crossplane.io/v1/providers/provider-anynines').catch(() => undefined);
    await c.request('DELETE', `/apis/pkg.crossplane.io/v1beta1/deploymentruntimeconfigs/${PROVIDER_ANYNINES_RUNTIME}`).catch(() => undefined);
    await this.forwarder?.stop(5000);
    removeEntry(this.registryFile);
    this.forget();
  }

  killSync(): void {
    this.forwarder?.killSync();
    if (this.forwarder?.child.pid !== undefined) killRegistered({ component: 'forwarder', pid: this.forwarder.child.pid, binary: process.execPath });
    removeEntry(this.registryFile);
    this.forget();
  }
}
