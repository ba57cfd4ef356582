/**
 * The topology as pods on the control plane's real node: what test/integration/pods/topology-pods.test.ts and
 * `npm run sandbox -- --pods` share.
 *
 *  - {@link TcpForwarders}: TCP forwarders of this process to a Service's ClusterIP (known after `pulumi up`): on the
 *    node IP for what pods must reach (Dex's issuer, an app cluster's API server), on loopback for the host.
 *  - {@link prepareDex}: Dex's image from the harness's binary (runtime/image/dex.ts) pushed to the node registry,
 *    its TLS (a CA made here, a certificate for the node IP) and the issuer `https://<node IP>:<port>/dex`: a forwarder
 *    on the node IP to the Dex Service, standing in for the load balancer address a Dex Service gets in a cloud.
 *  - {@link createLocalStack}: a Pulumi project outside the tree whose program is stacks/main.ts, on the Go-built CLI,
 *    a local file backend and passphrase secrets; {@link podsStackConfig}: its config for the pods shape.
 *  - {@link runKonnectorOnNode}: app clusters have no node (one node per host), so the konnector Deployment kubectl
 *    bind installed there goes to 0 replicas and the same Deployment runs on the control plane's node with
 *    `--kubeconfig` for the app cluster (a token of its `konnector` ServiceAccount, through a forwarder on the node IP)
 *    and `POD_NAMESPACE` the app cluster's namespace of it (its lease is there), in a namespace of the control plane
 *    per app cluster if there are several.
 *  - {@link bindThroughDex}: `kubectl bind` (runtime/kubectl-bind, in-process) with its login driven by a fetch
 *    "browser" through the backend's OIDC flow at Dex (mockCallback connector), then Bind on the catalogue page.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { ConfigMap, Stack } from '@pulumi/pulumi/automation/index.js';
import { KubeClient } from '../runtime/core/index.js';
import { buildDexImage, DEX_IMAGE_NAME } from '../runtime/image/dex.js';
import { hostPlatform, platformName } from '../runtime/image/oci.js';
import { pushLayoutImage } from '../runtime/image/registry.js';
import { bind } from '../runtime/kubectl-bind/bind.js';
import { applyManifests } from '../runtime/realinfra/apply.js';
import { DEX_SOURCE } from '../runtime/realinfra/build.js';
import { clientOf } from '../runtime/realinfra/client.js';
import type { RealCluster } from '../runtime/realinfra/cluster.js';
import { pulumiEnv, type PulumiBinaries } from '../runtime/realinfra/pulumi-build.js';
import { FetchBrowser } from '../test/support/oidc-provider.js';
import { fetchTrusting, makeTls } from '../test/support/tls.js';
import { KONNECTOR_NAMESPACE } from '../contract/api/constants.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The namespace the stack deploys the backend and Dex to. */
export const PODS_NAMESPACE = 'klutch-system';

type Obj = KubernetesObject & { spec?: Record<string, any>; status?: Record<string, any> };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${last ? ` (last error: ${last})` : ''}`);
    await sleep(500);
  }
}

/** TCP forwarders of this process; `stop()` closes them and every connection. */
export class TcpForwarders {
  private readonly servers: net.Server[] = [];
  private readonly sockets = new Set<net.Socket>();

  /** A forwarder on `host` (a free port) to wherever `target()` says at connection time; resolves to the port. */
  async listen(host: string, target: () => Promise<{ host: string; port: number }>): Promise<number> {
    const server = net.createServer((sock) => {
      this.sockets.add(sock);
      sock.on('close', () => this.sockets.delete(sock));
      sock.pause();
      target().then(
        (t) => {
          const up = net.connect(t.port, t.host);
          this.sockets.add(up);
          up.on('close', () => this.sockets.delete(up));
          sock.pipe(up).pipe(sock);
          sock.resume();
          sock.on('error', () => up.destroy());
          up.on('error', () => sock.destroy());
        },
        () => sock.destroy(),
      );
    });
    this.servers.push(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', (e) => reject(new Error(`forwarder: cannot listen on ${host}: ${e.message}`)));
      server.listen(0, host, resolve);
    });
    return (server.address() as net.AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await Promise.all(this.servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    this.servers.length = 0;
  }
}

/** The ClusterIP and port `port` (by name) of a Service. */
export async function serviceAddress(kc: KubeConfig, ns: string, name: string, port: string): Promise<{ host: string; port: number }> {
  const svc = await clientOf(kc).request<Obj>('GET', `/api/v1/namespaces/${ns}/services/${name}`);
  const p = (svc.spec!['ports'] as Array<{ name: string; port: number }>).find((x) => x.name === port);
  if (!p) throw new Error(`Service ${ns}/${name} has no port ${port}`);
  return { host: svc.spec!['clusterIP'] as string, port: p.port };
}

/** Waits until Deployment `ns/name` has `replicas` ready, updated and available replicas and no others. */
export async function deploymentReady(kc: KubeConfig, ns: string, name: string, replicas: number, timeoutMs = 240_000): Promise<Obj> {
  return until(
    `Deployment ${ns}/${name} with ${replicas} ready replicas`,
    async () => {
      const d = await clientOf(kc).request<Obj & { metadata: { generation?: number } }>('GET', `/apis/apps/v1/namespaces/${ns}/deployments/${name}`);
      const s = d.status ?? {};
      const ok =
        s['observedGeneration'] === d.metadata.generation &&
        s['readyReplicas'] === replicas &&
        s['updatedReplicas'] === replicas &&
        s['availableReplicas'] === replicas &&
        s['replicas'] === replicas;
      return ok ? d : undefined;
    },
    timeoutMs,
  );
}

/** Dex prepared for `pulumi up` (its config `klutch-kit:dex` and `images.dex`). */
export interface PreparedDex {
  /** `<node registry>/klutch-kit/dex:<version>@sha256:…` */
  readonly image: string;
  /** The CA of Dex's certificate (the backend trusts it through the ConfigMap `dex-ca`). */
  readonly caPem: string;
  /** `https://<node IP>:<forwarder port>/dex` */
  readonly issuer: string;
  /** The `klutch-kit:dex` config value. */
  readonly config: { issuerUrl: string; tlsSecretName: string; caConfigMap: string };
}

/**
 * Dex's image (from the binary tools/dex builds) pushed to the node registry; its TLS Secret `dex-tls` and CA
 * ConfigMap `dex-ca` applied in {@link PODS_NAMESPACE} (the stack adopts the namespace); the issuer through a
 * forwarder on the node IP to the `dex` Service (only the host and its pods reach it).
 */
export async function prepareDex(cp: RealCluster, dexBinary: string, dir: string, forwarders: TcpForwarders, caName?: string): Promise<PreparedDex> {
  const node = cp.node;
  if (!node) throw new Error(`prepareDex: cluster ${cp.name} has no node (startCluster({ nodes: 1 }))`);
  const layout = path.join(dir, 'dex-layout');
  buildDexImage(layout, { binary: dexBinary, version: DEX_SOURCE.version });
  const image = (await pushLayoutImage(layout, DEX_IMAGE_NAME, `${node.registry}/klutch-kit/dex:${DEX_SOURCE.version}`)).pinned;
  fs.rmSync(layout, { recursive: true, force: true });
  const tls = makeTls(path.join(dir, 'dex-tls'), node.ip, caName);
  await applyManifests(
    cp.kubeConfig,
    [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: PODS_NAMESPACE } },
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'dex-tls', namespace: PODS_NAMESPACE },
        type: 'kubernetes.io/tls',
        stringData: { 'tls.crt': tls.cert, 'tls.key': tls.key },
      } as KubernetesObject,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dex-ca', namespace: PODS_NAMESPACE }, data: { 'ca.crt': tls.caPem } } as KubernetesObject,
    ],
    { continueOnError: false },
  );
  const port = await forwarders.listen(node.ip, () => serviceAddress(cp.kubeConfig, PODS_NAMESPACE, 'dex', 'http'));
  const issuer = `https://${node.ip}:${port}/dex`;
  return { image, caPem: tls.caPem, issuer, config: { issuerUrl: issuer, tlsSecretName: 'dex-tls', caConfigMap: 'dex-ca' } };
}

/**
 * A stack `name` of a Pulumi project in `dir/project` whose program is stacks/main.ts (run with tsx), on the Go-built
 * Pulumi CLI (`bins`), with its home and a local file backend under `dir`.
 */
/**
 * The Pulumi automation API (seconds of module loading on a busy machine): imported on first use, once; the sandbox
 * starts the import beside its clusters' start, so that step 4 finds it loaded.
 */
export function loadPulumiAutomation(): Promise<typeof import('@pulumi/pulumi/automation/index.js')> {
  automation ??= import('@pulumi/pulumi/automation/index.js');
  return automation;
}
let automation: Promise<typeof import('@pulumi/pulumi/automation/index.js')> | undefined;

export interface LocalStackOptions {
  /**
   * `PULUMI_SKIP_CHECKPOINTS`: the engine writes the state file once, at the end, instead of after every step (for the
   * sandbox's 79 resources, most of the CLI's 5.8 CPU-seconds). Only for a stack whose state dies with its clusters (the
   * sandbox): an update that stops half-way then records nothing of what it did. @default false
   */
  readonly skipCheckpoints?: boolean;
}

export async function createLocalStack(dir: string, bins: PulumiBinaries, name: string, passphrase: string, opts: LocalStackOptions = {}): Promise<Stack> {
  const projectDir = path.join(dir, 'project');
  const home = path.join(dir, 'home');
  const state = path.join(dir, 'state');
  for (const d of [projectDir, home, state]) fs.mkdirSync(d, { recursive: true });
  const tsx = path.join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs');
  fs.writeFileSync(
    path.join(projectDir, 'Pulumi.yaml'),
    fs
      .readFileSync(path.join(REPO_ROOT, 'Pulumi.yaml'), 'utf8')
      .replace(/^main: .*$/m, `main: ${path.relative(projectDir, path.join(REPO_ROOT, 'stacks', 'main.ts'))}`)
      .replace(/^(\s*nodeargs:) .*$/m, `$1 --import ${tsx} --no-warnings`),
  );
  const env = pulumiEnv(bins, { home, backendDir: state, passphrase });
  if (opts.skipCheckpoints) env['PULUMI_SKIP_CHECKPOINTS'] = 'true';
  // loaded here, not with this module: the sandbox loads it while its clusters start ({@link loadPulumiAutomation})
  const { LocalWorkspace, PulumiCommand, Stack } = await loadPulumiAutomation();
  const ws = await LocalWorkspace.create({
    workDir: projectDir,
    pulumiHome: env['PULUMI_HOME']!,
    envVars: env,
    secretsProvider: 'passphrase',
    pulumiCommand: await PulumiCommand.get({ root: bins.pulumiRoot }),
  });
  return Stack.create(name, ws);
}

export interface PodsStackOptions {
  /** The control plane (with the node) and its name in the stack. */
  readonly controlPlane: { readonly name: string; readonly cluster: RealCluster };
  readonly appClusters: ReadonlyArray<{ readonly name: string; readonly cluster: RealCluster }>;
  /** `klutch-kit:backend` (url, prettyName, replicas). */
  readonly backend: { readonly url: string; readonly prettyName: string; readonly replicas?: number };
  readonly dex: PreparedDex;
  /** `klutch-kit:catalogue` */
  readonly catalogue: { readonly package: string; readonly apiStyle?: 'claims' | 'namespaced' };
  /** oidcClientSecret, cookieSigningKey, cookieEncryptionKey (stacks/secrets.ts). */
  readonly secrets: Record<string, string>;
}

/**
 * The stack config of the pods shape: `manifests: runtime` with the catalogue package; `images.registry` the node's
 * registry (the stack builds and pushes the backend and konnector images, `images.base: local`, for the host's
 * platform only: the node's) and `images.dex`;
 * Dex as the OIDC provider (mockCallback connector) serving TLS with the prepared certificate; `skipAwait` (the app
 * clusters have no node: their konnector cannot become Ready there).
 */
export function podsStackConfig(o: PodsStackOptions): ConfigMap {
  const node = o.controlPlane.cluster.node;
  if (!node) throw new Error(`podsStackConfig: controlPlane ${o.controlPlane.name} has no node`);
  const kc = (c: RealCluster) => fs.readFileSync(c.kubeconfigPath, 'utf8');
  const secret = (k: string) => {
    const v = o.secrets[k];
    if (!v) throw new Error(`podsStackConfig: secrets.${k} is missing`);
    return { value: v, secret: true };
  };
  return {
    'klutch-kit:controlPlane': { value: JSON.stringify({ name: o.controlPlane.name, access: { kind: 'kubeconfig' } }) },
    'klutch-kit:appClusters': { value: JSON.stringify(o.appClusters.map((a) => ({ name: a.name, access: { kind: 'kubeconfig' } }))) },
    'klutch-kit:backend': { value: JSON.stringify(o.backend) },
    'klutch-kit:dex': { value: JSON.stringify(o.dex.config) },
    'klutch-kit:dexConnectors': { value: JSON.stringify([{ type: 'mockCallback', id: 'mock', name: 'Mock' }]) },
    'klutch-kit:images': {
      value: JSON.stringify({ registry: `${node.registry}/klutch-kit`, base: 'local', platforms: [platformName(hostPlatform())], dex: o.dex.image }),
    },
    'klutch-kit:skipAwait': { value: 'true' },
    'klutch-kit:manifests': { value: 'runtime' },
    'klutch-kit:catalogue': {
      value: JSON.stringify({
        install: 'ConfigurationPackage',
        package: o.catalogue.package,
        ...(o.catalogue.apiStyle ? { apiStyle: o.catalogue.apiStyle } : {}),
      }),
    },
    [`klutch-kit:kubeconfig-${o.controlPlane.name}`]: { value: kc(o.controlPlane.cluster), secret: true },
    ...Object.fromEntries(o.appClusters.map((a) => [`klutch-kit:kubeconfig-${a.name}`, { value: kc(a.cluster), secret: true }])),
    'klutch-kit:oidcClientSecret': secret('oidcClientSecret'),
    'klutch-kit:cookieSigningKey': secret('cookieSigningKey'),
    'klutch-kit:cookieEncryptionKey': secret('cookieEncryptionKey'),
  };
}

/**
 * Runs the konnector of app cluster `app` on the control plane's node: its Deployment in the app cluster (what the
 * stack and kubectl bind installed) goes to 0 replicas; the same template, with `--kubeconfig` for the app cluster
 * (a token of its `konnector` ServiceAccount; the API server through a forwarder on the node IP), runs in namespace
 * `namespace` of the control plane. Resolves when it is Ready; returns the Deployment's image.
 */
export async function runKonnectorOnNode(
  cp: RealCluster,
  app: RealCluster,
  forwarders: TcpForwarders,
  opts: { namespace: string; timeoutMs?: number },
): Promise<{ image: string }> {
  const node = cp.node;
  if (!node) throw new Error(`runKonnectorOnNode: cluster ${cp.name} has no node`);
  const appApi = clientOf(app.kubeConfig);
  const dep = `/apis/apps/v1/namespaces/${KONNECTOR_NAMESPACE}/deployments/konnector`;
  await appApi.request('PATCH', dep, { body: { spec: { replicas: 0 } }, contentType: 'application/merge-patch+json' });
  const installed = await appApi.request<Obj & { metadata: { namespace?: string; labels?: Record<string, string> } }>('GET', dep);
  const appPort = Number(new URL(app.server).port);
  const fwd = await forwarders.listen(node.ip, async () => ({ host: '127.0.0.1', port: appPort }));
  const token = await appApi.request<Obj>('POST', `/api/v1/namespaces/${KONNECTOR_NAMESPACE}/serviceaccounts/konnector/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 7200 } },
  });
  const kubeconfig = [
    'apiVersion: v1',
    'kind: Config',
    `clusters:\n- name: app\n  cluster:\n    server: https://${node.ip}:${fwd}\n    tls-server-name: kubernetes\n    certificate-authority-data: ${Buffer.from(app.caPem).toString('base64')}`,
    `users:\n- name: konnector\n  user:\n    token: ${token.status!['token'] as string}`,
    'contexts:\n- name: app\n  context:\n    cluster: app\n    user: konnector',
    'current-context: app',
    '',
  ].join('\n');
  const tpl = installed.spec!['template'] as { spec: { containers: Array<Record<string, any>>; volumes?: unknown[] } };
  const container = tpl.spec.containers[0]!;
  container['args'] = [...(container['args'] as string[]), '--kubeconfig=/etc/klutch/app/kubeconfig'];
  // its lease is in the app cluster, in the namespace the Deployment was installed to there (not the one it runs in here)
  container['env'] = ((container['env'] as Array<{ name: string }>) ?? []).map((e) =>
    e.name === 'POD_NAMESPACE' ? { name: 'POD_NAMESPACE', value: installed.metadata.namespace ?? KONNECTOR_NAMESPACE } : e,
  );
  container['volumeMounts'] = [...((container['volumeMounts'] as unknown[]) ?? []), { name: 'app-kubeconfig', mountPath: '/etc/klutch/app', readOnly: true }];
  tpl.spec.volumes = [...(tpl.spec.volumes ?? []), { name: 'app-kubeconfig', secret: { secretName: 'app-kubeconfig' } }];
  const ns = opts.namespace;
  await applyManifests(
    cp.kubeConfig,
    [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'konnector', namespace: ns } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'app-kubeconfig', namespace: ns }, stringData: { kubeconfig } } as KubernetesObject,
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'konnector', namespace: ns, labels: installed.metadata.labels ?? {} },
        spec: { replicas: 1, selector: installed.spec!['selector'], template: tpl },
      } as KubernetesObject,
    ],
    { continueOnError: false },
  );
  await deploymentReady(cp.kubeConfig, ns, 'konnector', 1, opts.timeoutMs);
  return { image: container['image'] as string };
}

/** What the browser saw of a {@link bindThroughDex} login. */
export interface DexBindResult {
  /** The catalogue page's URL and HTML after the login. */
  readonly catalogueUrl: string;
  readonly catalogueHtml: string;
  /** Every request the browser made (`METHOD url`). */
  readonly visited: readonly string[];
  /** What kubectl bind wrote to stderr. */
  readonly said: string;
}

/**
 * `kubectl bind <backendUrl>/export` (in-process) for `plural.group` into app cluster `app`: a fetch "browser"
 * trusting `caPem` follows the login URL it prints (backend /authorize → Dex's mockCallback connector → backend
 * /callback → the catalogue page), submits the API's Bind form, and kubectl bind stores the kubeconfig, installs the
 * konnector objects with `konnectorImage` and creates the APIServiceBinding.
 */
export async function bindThroughDex(o: {
  app: RealCluster;
  backendUrl: string;
  caPem: string;
  group: string;
  plural: string;
  konnectorImage: string;
  timeoutMs?: number;
  /** The namespaces the konnector may bind (`--allow-namespace`; they must exist). @default ["default"] */
  allowNamespaces?: readonly string[];
}): Promise<DexBindResult> {
  const consumer = new KubeClient(o.app.kubeConfig);
  const err = new PassThrough();
  let said = '';
  const loginUrl = new Promise<string>((resolve) => {
    err.on('data', (d) => {
      said += String(d);
      const m = /visit in your browser:\s+(\S+)/.exec(said);
      if (m) resolve(m[1]!);
    });
  });
  const bound = bind({
    url: `${o.backendUrl}/export`,
    consumer,
    dryRun: false,
    open: false,
    yes: true,
    skipKonnector: false,
    konnectorImage: o.konnectorImage,
    ...(o.allowNamespaces ? { allowNamespaces: o.allowNamespaces } : {}),
    output: 'yaml',
    timeoutMs: o.timeoutMs ?? 120_000,
    io: { out: new PassThrough(), err, in: new PassThrough() },
  });
  bound.catch(() => undefined);
  try {
    const browser = new FetchBrowser(fetchTrusting(o.caPem));
    const page = await browser.follow(
      await Promise.race([loginUrl, bound.then(() => Promise.reject(new Error('kubectl bind ended before printing a login URL')))]),
    );
    const html = await page.res!.text();
    const form = new RegExp(
      `data-resource="${o.plural}\\.${o.group.replace(/\./g, '\\.')}"[^>]*>[\\s\\S]*?<form method="post" action="/bind">([\\s\\S]*?)</form>`,
    ).exec(html);
    if (!form) throw new Error(`no Bind form for ${o.plural}.${o.group} on the catalogue page ${page.url}:\n${html.slice(0, 2000)}`);
    const fields: Record<string, string> = {};
    for (const m of form[1]!.matchAll(/name="([^"]+)" value="([^"]*)"/g)) fields[m[1]!] = m[2]!.replace(/&amp;/g, '&');
    // the 303 goes to kubectl bind's loopback callback server; following it hands the response over
    await browser.follow(`${o.backendUrl}/bind`, { method: 'POST', form: fields });
    await bound;
    return { catalogueUrl: page.url, catalogueHtml: html, visited: [...browser.visited], said };
  } catch (e) {
    throw new Error(`kubectl bind of ${o.plural}.${o.group} into ${o.app.name}: ${(e as Error).message}\n--- kubectl bind said ---\n${said}`, { cause: e });
  } finally {
    consumer.close();
  }
}
