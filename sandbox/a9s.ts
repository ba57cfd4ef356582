/**
 * a9s in the sandbox (`npm run sandbox -- --a9s`, docs/sandbox.md): an a9s PostgreSQL claimed from app-1 and reconciled
 * by the real provider-anynines (built from the klutchio sources and installed by Crossplane's package manager,
 * runtime/realinfra/anynines.ts) against the broker stand-in (sandbox/a9s-broker-standin.ts: the only stand-in, at the
 * broker's level; a real Debian PostgreSQL server per instance and a real role per binding). The ProviderConfigs are
 * the ones klutch-kit's ControlPlaneCluster emits for the `postgresql` a9s endpoints, with the URLs pointing at the
 * stand-in; the credentials Secret the a9s ServiceBinding writes (`<binding>-creds`) comes down to app-1 through the
 * konnector.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import pg from 'pg';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ApiStyle, type A9sBackend } from '../constructs/dataservice/index.js';
import { A9S_BINDING_SECRET_SUFFIX } from '../constructs/catalogue/operations.js';
import { CoreResources, KubeClient, type KubeObject, type ResourceRef } from '../runtime/core/client.js';
import { getCondition, type Condition } from '../runtime/core/conditions.js';
import { applyManifests, type CrossplaneHarness, type RealCluster } from '../runtime/realinfra/index.js';
import { startProviderAnynines, type ProviderAnyninesHarness } from '../runtime/realinfra/anynines.js';
import { SandboxA9sServiceBroker, type StandInInstance } from './a9s-broker-standin.js';
import { synthSandboxControlPlane } from './catalogue.js';

/** The a9s demo: a PostgresqlInstance on the a9s backend and its ServiceBinding, in app-1 beside the a8s demo. */
export const A9S_DEMO = {
  namespace: 'shop',
  instance: 'orders-db-a9s',
  binding: 'orders-db-a9s-binding',
  service: 'a9s-postgresql15',
  plan: 'postgresql-single-nano',
  compositions: { instance: 'a9s-postgresql', binding: 'a9s-servicebinding' },
} as const;
/** The a9s ProviderConfigs the sandbox applies (the `postgresql` ones of the ControlPlaneCluster). */
export const A9S_PROVIDER_CONFIGS = ['postgresql-service-broker', 'postgresql-backup-manager'] as const;
export const A9S_BROKER_USER = 'a9s-broker-admin';

/** provider-anynines' resources as built from klutchio main (the claims style): cluster-scoped managed resources. */
export const A9S_RESOURCES = {
  providerConfigs: { group: 'dataservices.anynines.com', version: 'v1', plural: 'providerconfigs', kind: 'ProviderConfig', namespaced: false },
  serviceInstances: { group: 'dataservices.anynines.com', version: 'v1', plural: 'serviceinstances', kind: 'ServiceInstance', namespaced: false },
  serviceBindings: { group: 'dataservices.anynines.com', version: 'v1', plural: 'servicebindings', kind: 'ServiceBinding', namespaced: false },
} as const satisfies Record<string, ResourceRef>;

/**
 * provider-anynines of Klutch's v2 branch (ApiStyle.NAMESPACED_XR): the same group and kinds, its managed resources
 * namespaced (in the XR's namespace); its ProviderConfig stays cluster-scoped.
 */
export const A9S_RESOURCES_NAMESPACED = {
  providerConfigs: A9S_RESOURCES.providerConfigs,
  serviceInstances: { ...A9S_RESOURCES.serviceInstances, namespaced: true },
  serviceBindings: { ...A9S_RESOURCES.serviceBindings, namespaced: true },
} as const satisfies Record<string, ResourceRef>;

/** The demo's kinds in app-1 and on the control plane: the claims, or with ApiStyle.NAMESPACED_XR the namespaced XRs (same group, kinds and plurals). */
const BOUND = {
  postgresqlInstances: { group: 'anynines.com', version: 'v1', plural: 'postgresqlinstances', kind: 'PostgresqlInstance', namespaced: true },
  serviceBindings: { group: 'anynines.com', version: 'v1', plural: 'servicebindings', kind: 'ServiceBinding', namespaced: true },
} as const satisfies Record<string, ResourceRef>;

type Obj = KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> & { conditions?: Condition[] } };
type Secret = KubeObject & { type?: string; data?: Record<string, string> };

/** The sandbox's a9s part: the broker stand-in and provider-anynines on the control plane. */
export interface SandboxA9s {
  /** The catalogue's API style, which picked provider-anynines' flavour (`ApiStyle.anyninesProvider`). */
  readonly apiStyle: ApiStyle;
  readonly broker: SandboxA9sServiceBroker;
  readonly provider: ProviderAnyninesHarness;
  /** The a9s ProviderConfigs as applied (the constructs' output). */
  readonly providerConfigs: readonly Obj[];
  /** The stand-in's PostgreSQL data (one folder per instance, each with data/postmaster.pid). */
  readonly dataDir: string;
  /** provider-anynines' host processes (the provider and its forwarders; with Crossplane as pods its forwarder only). */
  pids(): number[];
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined | false | null>, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false && v !== null) return v;
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() > end) throw new Error(`sandbox a9s: timed out after ${timeoutMs / 1000}s waiting for ${what}${last ? ` (last error: ${last})` : ''}`);
    await sleep(250);
  }
}

/** The a9s PostgreSQL services and plans of the catalogue the sandbox synthesizes (what the stand-in serves). */
export function a9sPostgresqlServices(): Array<{ name: string; plans: string[] }> {
  const { catalogue } = synthSandboxControlPlane('sandbox.invalid/klutch/catalogue:v0.1.0');
  const ds = catalogue.services.get('postgresql');
  const b = ds?.backends.find((x) => x.automation === 'a9s') as A9sBackend | undefined;
  if (!ds || !b) throw new Error('sandbox a9s: the catalogue has no a9s backend for postgresql');
  const names = b.serviceNames(ds.model);
  const plans = b.planNames(ds.model);
  return ds.model.services.filter((s) => names.includes(s.name)).map((s) => ({ name: s.name, plans: s.plans.filter((p) => plans.includes(p)) }));
}

/**
 * Starts the broker stand-in (PostgreSQL), provider-anynines on the control plane's Crossplane in the flavour of
 * `opts.apiStyle` (`ApiStyle.anyninesProvider`; @default ApiStyle.CLAIMS), and applies the ControlPlaneCluster's
 * `postgresql` a9s ProviderConfigs (URLs at the stand-in) with their credentials Secrets; resolves once both
 * ProviderConfigs report a healthy endpoint.
 */
export async function startSandboxA9s(
  cp: RealCluster,
  xp: CrossplaneHarness,
  opts: { dataDir: string; logDir?: string; log?: (line: string) => void; apiStyle?: ApiStyle },
): Promise<SandboxA9s> {
  const apiStyle = opts.apiStyle ?? ApiStyle.CLAIMS;
  fs.mkdirSync(opts.dataDir, { recursive: true });
  const password = randomBytes(18).toString('base64url');
  const broker = new SandboxA9sServiceBroker({
    dataService: 'postgresql',
    services: a9sPostgresqlServices(),
    username: A9S_BROKER_USER,
    password,
    dataDir: opts.dataDir,
    operationMs: 1000,
  });
  let provider: ProviderAnyninesHarness | undefined;
  const stop = async () => {
    await provider?.stop();
    await broker.stop();
    fs.rmSync(opts.dataDir, { recursive: true, force: true });
  };
  try {
    await broker.start();
    provider = await startProviderAnynines(cp, {
      crossplane: xp,
      flavour: apiStyle.anyninesProvider,
      forwardPorts: [broker.port],
      ...(opts.log ? { log: opts.log } : {}),
    });
    const url = provider.urlFor(broker.port);
    const { cluster } = synthSandboxControlPlane(
      'sandbox.invalid/klutch/catalogue:v0.1.0',
      {
        'postgresql-service-broker': url,
        'postgresql-backup-manager': `${url}/backup-manager`,
      },
      apiStyle,
    );
    const providerConfigs = cluster.files
      .map((f) => f.object as Obj)
      .filter(
        (o) =>
          o.kind === 'ProviderConfig' &&
          o.apiVersion === 'dataservices.anynines.com/v1' &&
          (A9S_PROVIDER_CONFIGS as readonly string[]).includes(o.metadata.name!),
      );
    if (providerConfigs.length !== A9S_PROVIDER_CONFIGS.length) {
      throw new Error(`sandbox a9s: expected ProviderConfigs ${A9S_PROVIDER_CONFIGS.join(', ')} from the control plane, got ${providerConfigs.length}`);
    }
    const secrets = providerConfigs.map((pc) => {
      const ref = (pc.spec!['providerCredentials'] as { username: { secretRef: { name: string; namespace: string } } }).username.secretRef;
      return {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: ref.name, namespace: ref.namespace },
        stringData: { username: A9S_BROKER_USER, password },
      };
    });
    await applyManifests(cp.kubeConfig, [...secrets, ...providerConfigs] as KubernetesObject[], { continueOnError: false });
    const kube = new KubeClient(cp.kubeConfig);
    try {
      for (const pc of providerConfigs) {
        await until(
          `ProviderConfig ${pc.metadata.name} healthy (provider-anynines' health check of ${String(pc.spec!['url'])})`,
          async () => {
            const h = (await kube.get<Obj>(A9S_RESOURCES.providerConfigs, undefined, pc.metadata.name!)).status?.['health'] as
              { lastStatus?: boolean; lastMessage?: string } | undefined;
            if (h && !h.lastStatus) throw new Error(`status.health: ${h.lastMessage ?? 'unhealthy'}`);
            return h?.lastStatus;
          },
          120_000,
        );
      }
    } finally {
      kube.close();
    }
    const p = provider;
    return { apiStyle, broker, provider: p, providerConfigs, dataDir: opts.dataDir, pids: () => p.pids(), stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** The a9s demo followed through the control plane and back down to app-1. */
export interface A9sDemoResult {
  /** The provider namespace on the control plane the claims (or namespaced XRs) were synced to. */
  upstreamNamespace: string;
  /** The provider-anynines ServiceInstance composed for the claim or XR (namespaced, in upstreamNamespace, with the v2 provider). */
  serviceInstance: Obj;
  /** The instance as the broker stand-in keeps it. */
  brokerInstance: StandInInstance;
  instanceDown: Obj;
  bindingDown: Obj;
  /** `<binding>-creds` on the control plane (written by provider-anynines) and in app-1 (brought down by the konnector). */
  secretUp: Secret;
  secretDown: Secret;
  /** Decoded credentials of the Secret in app-1. */
  credentials: { host: string; port: number; name: string; username: string; password: string };
  /** The ready-to-run psql command. */
  psql: string;
  /** Seconds since the claims were created, per hop. */
  hops: Record<string, number>;
  seconds: number;
}

const ready = (c: Obj | undefined) => getCondition(c?.status?.conditions, 'Ready')?.status === 'True';
const shellQuote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;

/** Creates the demo in `app`: claims with `spec.compositionRef`, or namespaced XRs with `spec.crossplane.compositionRef`. */
/** Field manager of the a9s demo's claims. */
const A9S_DEMO_FIELD_MANAGER = 'klutch-kit-sandbox-demo';

async function createA9sDemo(app: KubeClient, style: ApiStyle): Promise<void> {
  const { namespace: ns, instance, binding } = A9S_DEMO;
  const composition = (name: string) => (style.namespaced ? { crossplane: { compositionRef: { name } } } : { compositionRef: { name } });
  if (!(await app.getOrNull(CoreResources.namespaces, undefined, ns))) {
    await app.create(CoreResources.namespaces, { metadata: { name: ns } }).catch((e: unknown) => {
      if (!/already exists/i.test((e as Error).message)) throw e;
    });
  }
  // server-side, like the a8s demo's claims (sandbox.ts provisionDemo: a create is held while its CRD is young)
  await app.apply(
    BOUND.postgresqlInstances,
    { metadata: { name: instance, namespace: ns }, spec: { service: A9S_DEMO.service, plan: A9S_DEMO.plan, ...composition(A9S_DEMO.compositions.instance) } },
    A9S_DEMO_FIELD_MANAGER,
  );
  await app.apply(
    BOUND.serviceBindings,
    {
      metadata: { name: binding, namespace: ns },
      spec: { instanceRef: instance, serviceInstanceType: 'postgresql', ...composition(A9S_DEMO.compositions.binding) },
    },
    A9S_DEMO_FIELD_MANAGER,
  );
}

/**
 * Follows the demo up to the control plane and to its provider-anynines ServiceInstance with a broker instance id:
 * a claim's (cluster-scoped, labelled with the claim) or a namespaced XR's (in the XR's namespace, labelled
 * `crossplane.io/composite`).
 */
async function followA9sDemoUp(cp: KubeClient, style: ApiStyle, mark: (hop: string) => void): Promise<{ up: string; si: Obj; id: string }> {
  const { instance, binding } = A9S_DEMO;
  const what = style.namespaced ? 'namespaced XRs' : 'claims';
  const up = await until(
    `the a9s ${what} on the control plane`,
    async () => {
      const i = (await cp.list<Obj>(BOUND.postgresqlInstances)).items.find((o) => o.metadata.name === instance);
      const b = (await cp.list<Obj>(BOUND.serviceBindings)).items.find((o) => o.metadata.name === binding);
      return i && b ? i.metadata.namespace! : undefined;
    },
    60_000,
  );
  mark(`${what} synced to the control plane (namespace ${up})`);
  const resources = style.namespaced ? A9S_RESOURCES_NAMESPACED : A9S_RESOURCES;
  const siNs = style.namespaced ? up : undefined;
  const composedFrom = style.namespaced
    ? { labelSelector: `crossplane.io/composite=${instance}` }
    : { labelSelector: `crossplane.io/claim-name=${instance},crossplane.io/claim-namespace=${up}` };
  const si = await until(
    'the provider-anynines ServiceInstance with a broker instance id',
    async () => (await cp.list<Obj>(resources.serviceInstances, siNs, composedFrom)).items.find((o) => o.status?.['atProvider']),
    120_000,
  );
  const id = await until(
    'the broker instance id in the ServiceInstance status',
    async () => {
      const live = await cp.get<Obj>(resources.serviceInstances, siNs, si.metadata.name!);
      return (live.status?.['atProvider'] as { instanceId?: string } | undefined)?.instanceId;
    },
    120_000,
  );
  return { up, si, id };
}

/**
 * Creates an a9s PostgreSQL and a ServiceBinding in `app` (claims, or namespaced XRs in the namespaced API style) and
 * follows every hop: up on the control plane, the provider-anynines ServiceInstance, the broker's provision (a real
 * PostgreSQL server), Ready down in `app`, the credentials Secret `<binding>-creds` down through the konnector, and a
 * first connection with it.
 */
export async function provisionA9sDemo(
  a9s: SandboxA9s,
  clusters: { controlPlane: RealCluster; app: RealCluster },
  say: (l: string) => void = (l) => process.stdout.write(`${l}\n`),
): Promise<A9sDemoResult> {
  const t = Date.now();
  const app = new KubeClient(clusters.app.kubeConfig);
  const cp = new KubeClient(clusters.controlPlane.kubeConfig);
  const { namespace: ns, instance, binding } = A9S_DEMO;
  const hops: Record<string, number> = {};
  const mark = (hop: string) => {
    hops[hop] = (Date.now() - t) / 1000;
    say(`      ${hops[hop]!.toFixed(1).padStart(5)} s  a9s: ${hop}`);
  };
  try {
    await createA9sDemo(app, a9s.apiStyle);
    say(
      `      created in ${clusters.app.name}: PostgresqlInstance ${ns}/${instance} (${A9S_DEMO.service}, plan ${A9S_DEMO.plan}, compositionRef ${A9S_DEMO.compositions.instance}), ServiceBinding ${ns}/${binding}${a9s.apiStyle.namespaced ? ' (namespaced XRs)' : ''}`,
    );
    const { up, si, id } = await followA9sDemoUp(cp, a9s.apiStyle, mark);
    mark(`provider-anynines ServiceInstance ${si.metadata.name} → broker instance ${id}`);
    const brokerInstance = await until(
      'the broker provision to succeed',
      async () => {
        const b = a9s.broker.instance(id);
        if (b?.state === 'failed') throw new Error(`the broker's provision failed: ${[...b.operations.values()].map((o) => o.description).join('; ')}`);
        return b?.state === 'provisioned' ? b : undefined;
      },
      120_000,
    );
    mark(`broker provisioned a real PostgreSQL on ${brokerInstance.engine}`);
    const instanceDown = await until(
      'the a9s PostgresqlInstance Ready in app-1',
      async () => {
        const c = await app.get<Obj>(BOUND.postgresqlInstances, ns, instance);
        return ready(c) ? c : undefined;
      },
      240_000,
    );
    mark(`PostgresqlInstance Ready in ${clusters.app.name}`);
    const secretName = `${binding}${A9S_BINDING_SECRET_SUFFIX}`;
    const secretUp = await until(
      `Secret ${up}/${secretName} on the control plane`,
      async () => {
        const s = await cp.getOrNull<Secret>(CoreResources.secrets, up, secretName);
        return s?.data?.['password'] ? s : undefined;
      },
      180_000,
    );
    mark(`provider-anynines wrote Secret ${secretName} (${secretUp.type})`);
    const bindingDown = await until(
      'the a9s ServiceBinding Ready in app-1',
      async () => {
        const c = await app.get<Obj>(BOUND.serviceBindings, ns, binding);
        return ready(c) ? c : undefined;
      },
      180_000,
    );
    mark(`ServiceBinding Ready in ${clusters.app.name}`);
    const secretDown = await until(
      `Secret ${ns}/${secretName} in app-1`,
      async () => {
        const s = await app.getOrNull<Secret>(CoreResources.secrets, ns, secretName);
        return s?.data?.['password'] ? s : undefined;
      },
      120_000,
    );
    mark(`Secret ${ns}/${secretName} in ${clusters.app.name}`);
    const d = (k: string) => Buffer.from(secretDown.data?.[k] ?? '', 'base64').toString('utf8');
    const credentials = { host: d('host'), port: Number(d('port')), name: d('name'), username: d('username'), password: d('password') };
    await until(
      'a PostgreSQL connection with the a9s credentials from app-1',
      async () => {
        const c = new pg.Client({
          host: credentials.host,
          port: credentials.port,
          user: credentials.username,
          password: credentials.password,
          database: credentials.name,
          connectionTimeoutMillis: 5_000,
        });
        c.on('error', () => undefined);
        await c.connect();
        try {
          await c.query('SELECT 1');
        } finally {
          await c.end();
        }
        return true;
      },
      60_000,
    );
    mark('first connection with those credentials');
    const psql = `PGPASSWORD=${shellQuote(credentials.password)} psql -h ${credentials.host} -p ${credentials.port} -U ${credentials.username} ${credentials.name}`;
    const seconds = (Date.now() - t) / 1000;
    return { upstreamNamespace: up, serviceInstance: si, brokerInstance, instanceDown, bindingDown, secretUp, secretDown, credentials, psql, hops, seconds };
  } finally {
    app.close();
    cp.close();
  }
}
