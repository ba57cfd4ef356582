/**
 * Support for the a9s tests on real Crossplane with the real provider-anynines: one broker stand-in
 * (`SandboxA9sServiceBroker`, sandbox/a9s-broker-standin.ts) per a9s data service of the catalogue — the
 * only stand-in, at the broker's level —, a harness cluster with Crossplane, provider-anynines built from the
 * klutchio sources and installed by the package manager, and the control plane our constructs synthesize:
 * the catalogue Configuration, the a9s ProviderConfigs (pointing at the stand-ins) and their credentials.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import amqp from 'amqplib';
import { App } from 'cdk8s';
import { CatalogueInstall, ControlPlaneCluster, renderTopology, synthTopology } from '../../../constructs/topology/index.js';
import type { Catalogue } from '../../../constructs/catalogue/index.js';
import { ApiStyle, type A9sBackend } from '../../../constructs/dataservice/index.js';
import type { AnyninesTls } from '../../../constructs/crossplane/index.js';
import { applyManifests, startCluster, type RealCluster } from '../../../runtime/realinfra/index.js';
import { startProviderAnynines, type ProviderAnyninesHarness } from '../../../runtime/realinfra/anynines.js';
import { runPush } from '../../../runtime/cli/package.js';
import { SandboxA9sServiceBroker, type A9sDataService } from '../../../sandbox/a9s-broker-standin.js';
import { Api, CATALOGUE_PACKAGE_REPOSITORY, NS, waitFor, waitForXrdsServed, type Obj } from '../crossplane/_support.js';

export const BROKER_USER = 'a9s-broker-admin';
/** The Secret (crossplane-system) with the test CA that signed the PostgreSQL stand-in's certificate, key `ca.crt`. */
export const CA_SECRET = { namespace: 'crossplane-system', name: 'a9s-test-ca', key: 'ca.crt' } as const;

/** A CA made for the test (openssl, EC P-256, one day). */
export interface TestCa {
  readonly dir: string;
  readonly certPem: string;
  /** A server certificate and key signed by this CA for `ips` (subjectAltName IP entries). */
  issue(name: string, ips: readonly string[]): { cert: string; key: string };
}

export function makeTestCa(dir: string, cn: string): TestCa {
  const ssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ssl([
    'req',
    '-x509',
    ...ec,
    '-keyout',
    `${cn}.key`,
    '-out',
    `${cn}.crt`,
    '-days',
    '1',
    '-subj',
    `/CN=${cn}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return {
    dir,
    certPem: readFileSync(join(dir, `${cn}.crt`), 'utf8'),
    issue(name, ips) {
      writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${ips.map((ip) => `IP:${ip}`).join(',')}\nextendedKeyUsage=serverAuth\n`);
      ssl(['req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
      ssl([
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        `${cn}.crt`,
        '-CAkey',
        `${cn}.key`,
        '-CAcreateserial',
        '-out',
        `${name}.crt`,
        '-days',
        '1',
        '-extfile',
        `${name}.ext`,
      ]);
      return { cert: readFileSync(join(dir, `${name}.crt`), 'utf8'), key: readFileSync(join(dir, `${name}.key`), 'utf8') };
    },
  };
}
export const BROKER_PASSWORD = 'stand-in-password';

/** Waits until the binding's credentials Secret `name` (namespace NS) has `key`; its type and decoded data. */
export async function bindingSecret(api: Api, name: string, key: string, timeoutMs = 180_000): Promise<{ type?: string; data: Record<string, string> }> {
  const o = await waitFor(
    `Secret ${name} with ${key}`,
    async () => {
      const s = (await api.get('v1', 'Secret', name, NS)) as { type?: string; data?: Record<string, string> } | undefined;
      return s?.data?.[key] ? s : undefined;
    },
    timeoutMs,
  );
  return { type: o.type, data: Object.fromEntries(Object.entries(o.data!).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()])) };
}

/**
 * Connects to `uri` over AMQP, declares the queue `greetings`, publishes `text` and reads it back (failing the test
 * if it differs); the open connection stays, with `closed` resolving when the server closes it.
 */
export async function amqpRoundTrip(uri: string, text: string): Promise<{ conn: amqp.ChannelModel; closed: Promise<void> }> {
  const conn = await amqp.connect(uri);
  const closed = new Promise<void>((r) => conn.once('close', () => r()));
  conn.on('error', () => undefined); // the server closing it (unbind) is what the tests wait for
  const ch = await conn.createChannel();
  await ch.assertQueue('greetings');
  ch.sendToQueue('greetings', Buffer.from(text));
  const got = await waitFor('the message back', async () => (await ch.get('greetings', { noAck: true })) || undefined);
  expect(got.content.toString()).toBe(text);
  return { conn, closed };
}

export interface A9sService {
  readonly ds: A9sDataService;
  readonly claimKind: string;
  readonly backend: A9sBackend;
  /** `compositionRef` when a9s is not the data service's default backend. */
  readonly compositionRef?: { name: string };
  readonly services: Array<{ name: string; plans: string[] }>;
}

export interface A9sCluster {
  readonly cluster: RealCluster;
  readonly api: Api;
  readonly a9s: ProviderAnyninesHarness;
  readonly brokers: ReadonlyMap<A9sDataService, SandboxA9sServiceBroker>;
  readonly services: readonly A9sService[];
  readonly catalogue: Catalogue;
  /** The a9s ProviderConfigs the constructs emitted (as applied). */
  readonly providerConfigs: Obj[];
  /** The CA the test made: the PostgreSQL stand-in serves HTTPS with a certificate it signed (CA_SECRET holds it). */
  readonly ca: TestCa;
  stop(): Promise<void>;
}

/** The catalogue's a9s data services, with their services and plans (from a synth without endpoints). */
export function a9sServicesOf(catalogue: Catalogue): A9sService[] {
  const out: A9sService[] = [];
  for (const [svc, ds] of catalogue.services.entries()) {
    const b = ds.backends.find((x) => x.automation === 'a9s') as A9sBackend | undefined;
    if (!b) continue;
    const names = b.serviceNames(ds.model);
    const plans = b.planNames(ds.model);
    out.push({
      ds: svc as A9sDataService,
      claimKind: ds.model.claimKind,
      backend: b,
      ...(b.name === ds.defaultBackend ? {} : { compositionRef: { name: b.name } }),
      services: ds.model.services.filter((s) => names.includes(s.name)).map((s) => ({ name: s.name, plans: s.plans.filter((p) => plans.includes(p)) })),
    });
  }
  return out;
}

function controlPlane(packageRef: string, apiStyle: ApiStyle, urls?: Record<string, string>, tls?: AnyninesTls): { app: App; cp: ControlPlaneCluster } {
  const app = new App({ outdir: '/nonexistent' });
  const cp = new ControlPlaneCluster(app, 'CP', {
    host: 'bind.example.com',
    catalogue: { apiStyle },
    dex: { connectors: [{ type: 'mockCallback', id: 'mock', name: 'Mock', config: {} }] } as never,
    anynines: { baseDomain: 'a9s.example.com', ...(urls ? { urls } : {}), ...(tls ? { tls } : {}) },
    catalogueInstall: CatalogueInstall.configurationPackage({ package: packageRef, skipDependencyResolution: true }),
  });
  return { app, cp };
}

/**
 * Starts the broker stand-ins, a cluster with Crossplane `version`, provider-anynines, and installs the
 * catalogue and the a9s ProviderConfigs. `failPlans` per data service: plans whose provisioning fails (a failed
 * last operation); `instanceLimits` per data service: plans whose provisioning the broker refuses beyond a count.
 */
export async function startA9sCluster(
  name: string,
  version: '2.3' | '1.20',
  opts: {
    failPlans?: Partial<Record<A9sDataService, string[]>>;
    instanceLimits?: Partial<Record<A9sDataService, Record<string, number>>>;
    /** The catalogue's API style; it picks the provider-anynines the cluster runs (ApiStyle.anyninesProvider). @default ApiStyle.CLAIMS */
    apiStyle?: ApiStyle;
    /** The klutchio sources provider-anynines is built from. @default ensureKlutchioSource() of the flavour's pin */
    klutchioDir?: string;
    log?: (l: string) => void;
  } = {},
): Promise<A9sCluster> {
  const apiStyle = opts.apiStyle ?? ApiStyle.CLAIMS;
  const probe = controlPlane('xpkg.example.com/klutch/catalogue:v0.1.0', apiStyle);
  const services = a9sServicesOf(probe.cp.catalogue!);
  const dataDir = mkdtempSync(join(tmpdir(), 'klutch-a9s-standin-'));
  chmodSync(dataDir, 0o711); // the PostgreSQL servers run as user postgres
  const caDir = mkdtempSync(join(tmpdir(), 'klutch-a9s-ca-'));
  const ca = makeTestCa(caDir, 'a9s-test-ca');
  const brokers = new Map<A9sDataService, SandboxA9sServiceBroker>();
  let cluster: RealCluster | undefined;
  let a9s: ProviderAnyninesHarness | undefined;
  const stop = async () => {
    await a9s?.stop();
    await cluster?.stop();
    await Promise.all([...brokers.values()].map((b) => b.stop()));
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(caDir, { recursive: true, force: true });
  };
  try {
    for (const s of services) {
      const b = new SandboxA9sServiceBroker({
        dataService: s.ds,
        services: s.services,
        username: BROKER_USER,
        password: BROKER_PASSWORD,
        dataDir: join(dataDir, s.ds),
        operationMs: 2000,
        failPlans: opts.failPlans?.[s.ds] ?? [],
        instanceLimits: opts.instanceLimits?.[s.ds] ?? {},
        // PostgreSQL's broker and backup manager over HTTPS (a certificate for the provider's address follows below)
        ...(s.ds === 'postgresql' ? { tls: ca.issue('standin-loopback', ['127.0.0.1']) } : {}),
      });
      await b.start();
      brokers.set(s.ds, b);
    }
    cluster = await startCluster({ name, crossplane: { version, providerPollInterval: '3s' }, ...(opts.log ? { log: opts.log } : {}) });
    a9s = await startProviderAnynines(cluster, {
      flavour: probe.cp.anyninesProvider,
      forwardPorts: [...brokers.values()].map((b) => b.port),
      ...(opts.klutchioDir ? { klutchioDir: opts.klutchioDir } : {}),
      ...(opts.log ? { log: opts.log } : {}),
    });
    const xp = cluster.crossplane!;
    const api = new Api(cluster.kubeConfig);
    // The control plane with the a9s endpoints at the stand-ins (as the provider reaches them).
    const urls: Record<string, string> = {};
    const pg = brokers.get('postgresql')!;
    pg.setTls(ca.issue('standin', [a9s.hostIp, '127.0.0.1']));
    for (const s of services) {
      const plain = a9s.urlFor(brokers.get(s.ds)!.port);
      const url = s.ds === 'postgresql' ? plain.replace(/^http:/, 'https:') : plain;
      urls[`${s.ds}-service-broker`] = url;
      urls[`${s.ds}-backup-manager`] = `${url}/backup-manager`;
    }
    const packageRef = `${xp.registry}/${CATALOGUE_PACKAGE_REPOSITORY}:v0.1.0`;
    const { app, cp } = controlPlane(packageRef, apiStyle, urls, { caBundleSecretRef: CA_SECRET });
    const [rendered] = renderTopology(app);
    const outdir = mkdtempSync(join(tmpdir(), 'klutch-a9s-synth-'));
    try {
      await synthTopology(app, { outdir });
      await runPush(packageRef, { from: join(outdir, 'control-plane.packages', 'klutch-catalogue') }, { out: () => undefined, err: () => undefined });
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
    const objs = rendered!.files.map((f) => f.object as Obj);
    const providerConfigs = objs.filter((o) => o.kind === 'ProviderConfig' && o.apiVersion === 'dataservices.anynines.com/v1');
    const credentials: Array<{ apiVersion: string; kind: string; metadata: { name: string; namespace: string }; stringData: Record<string, string> }> =
      providerConfigs.map((pc) => ({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: `${pc.metadata!.name}-credentials`, namespace: 'crossplane-system' },
        stringData: { username: BROKER_USER, password: BROKER_PASSWORD },
      }));
    credentials.push({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: CA_SECRET.name, namespace: CA_SECRET.namespace },
      stringData: { [CA_SECRET.key]: ca.certPem },
    });
    const wanted = (o: Obj) =>
      (['Configuration', 'ClusterRole', 'ClusterRoleBinding'].includes(o.kind!) &&
        /configuration|provider-kubernetes/.test(`${o.kind}/${o.metadata!.name}`.toLowerCase())) ||
      (o.kind === 'ProviderConfig' && o.apiVersion!.startsWith('kubernetes.crossplane.io/'));
    await applyManifests(
      cluster.kubeConfig,
      [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }, ...credentials, ...providerConfigs, ...objs.filter(wanted)],
      { continueOnError: false },
    );
    await xp.waitForPackage('Configuration', 'klutch-catalogue', 240_000);
    // the package's XRDs by name: right after the package is Healthy, Crossplane 1.20 may not have created them
    // yet; waited for until Established (and Offered) and their kinds served
    const xrds = (rendered!.packages ?? []).flatMap((p) => p.files.map((f) => f.object as Obj)).filter((o) => o.kind === 'CompositeResourceDefinition');
    if (xrds.length === 0) throw new Error('startA9sCluster: the control plane rendered no catalogue package with XRDs');
    await waitForXrdsServed(api, xrds, 240_000);
    const c = cluster;
    const h = a9s;
    return { cluster: c, api, a9s: h, brokers, services, catalogue: cp.catalogue!, providerConfigs, ca, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
