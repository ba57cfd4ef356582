#!/usr/bin/env node
/**
 * klutch-konnector: the sync agent between an app cluster and the Klutch control plane.
 *
 *   tsx runtime/konnector/main.ts --kubeconfig ~/.kube/config --lease-namespace klutch-bind
 *
 * Every replica serves /healthz, /readyz and /metrics; only the Lease holder runs the controllers.
 * SIGTERM/SIGINT: stop controllers, release the Lease, exit 0.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Command, InvalidArgumentError } from 'commander';
import { CoreResources, KubeClient } from '../core/client.js';
import { loadKubeconfigFile, parseKubeconfig, type ClusterAccess } from '../core/kubeconfig.js';
import { loadDefaultKubeconfig } from '../core/kubeconfig-default.js';
import { LeaderElector } from '../core/leader.js';
import { createLogger } from '../core/logger.js';
import { controllerMetrics, newProcessRegistry } from '../core/metrics.js';
import { HealthServer } from '../core/server.js';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { AppClusterBindingController } from './appclusterbinding.js';
import { DEFAULT_NAMESPACE_LINGER_MS } from './consumer-namespaces.js';
import { Konnector } from './konnector.js';
import { checkAllowedKeyPattern } from '../../contract/metadata-keys.js';
import { DEFAULT_UPSTREAM_DELETION_TIMEOUT_MS } from './deletion-timeouts.js';
import { parseAllowedResource } from '../../contract/resource-policy.js';
import { checkAllowedSecretType } from '../../contract/secret-types.js';
import { checkAllowedNamespace } from '../../contract/allowed-namespaces.js';
import { KONNECTOR_LEASE_NAME, KONNECTOR_NAMESPACE } from '../../contract/api/constants.js';
import { DEFAULT_MAX_CACHED_OBJECTS_PER_BINDING } from './object-cap.js';
import { DEFAULT_WRITE_BUDGET } from './write-budget.js';
import { DEFAULT_MAX_PROVIDER_OBJECTS_PER_NAMESPACE } from './provider.js';
import { KONNECTOR_VERSION } from './version.js';
import { DEFAULT_BURST, DEFAULT_QPS, DEFAULT_WORKERS } from './defaults.js';
import type { Secret } from './types.js';

const int = (name: string, min: number) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be an integer >= ${min}, got "${v}"`);
  return n;
};
const duration = (name: string) => (v: string) => {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(v);
  if (!m) throw new InvalidArgumentError(`${name} must be a duration such as 30s, 5m or 1h, got "${v}"`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
};

/** A repeatable flag of comma-separated label/annotation key patterns, each checked. */
/**
 * A repeatable option whose values `check` validates (throwing an error that names the flag and value); with
 * `commaSeparated`, one occurrence may carry several values.
 */
const repeatable =
  (flag: string, check: (flag: string, value: string) => void, commaSeparated = false) =>
  (v: string, prev: string[]) => {
    const add = commaSeparated ? v.split(',').map((p) => p.trim()) : [v];
    for (const p of add) {
      try {
        check(flag, p);
      } catch (e) {
        throw new InvalidArgumentError((e as Error).message);
      }
    }
    return [...prev, ...add];
  };
const keyPatterns = (flag: string) => repeatable(flag, checkAllowedKeyPattern, true);

export function buildCommand(): Command {
  return new Command('klutch-konnector')
    .description('Syncs bound data-service APIs between an app cluster and the Klutch control plane')
    .version(KONNECTOR_VERSION)
    .option('--kubeconfig <path>', 'kubeconfig of the cluster the konnector runs against (default: in-cluster, then $KUBECONFIG)')
    .option('--context <name>', 'kubeconfig context to use')
    .option('--lease-name <name>', 'name of the leader-election Lease', KONNECTOR_LEASE_NAME)
    .option('--lease-namespace <ns>', 'namespace of the Lease (default: $POD_NAMESPACE, else kube-system)')
    .option('--no-leader-elect', 'run the controllers without leader election (single replica only)')
    .option('--leader-elect-lease-duration <duration>', 'Lease duration', duration('--leader-elect-lease-duration'), 15_000)
    .option('--leader-elect-renew-deadline <duration>', 'renew deadline of the leader', duration('--leader-elect-renew-deadline'), 10_000)
    .option('--leader-elect-retry-period <duration>', 'retry period of acquire/renew', duration('--leader-elect-retry-period'), 2_000)
    .option('--health-address <host:port>', 'address of /healthz, /readyz and /metrics', '127.0.0.1:8080')
    .option('--qps <n>', 'client queries per second per cluster connection', int('--qps', 0), DEFAULT_QPS)
    .option('--burst <n>', 'client burst per cluster connection', int('--burst', 1), DEFAULT_BURST)
    .option('--workers <n>', 'workers per sync controller', int('--workers', 1), DEFAULT_WORKERS)
    .option('--resync <duration>', 'informer resync period', duration('--resync'), 600_000)
    .option('--heartbeat-interval <duration>', 'ClusterBinding heartbeat interval', duration('--heartbeat-interval'), 300_000)
    .option(
      '--namespace-linger <duration>',
      'how long an app-cluster namespace stays bound after its last bound object went',
      duration('--namespace-linger'),
      DEFAULT_NAMESPACE_LINGER_MS,
    )
    .option(
      '--max-provider-objects-per-namespace <n>',
      'most objects a provider may make the konnector create in one namespace, per claim and per export',
      int('--max-provider-objects-per-namespace', 1),
      DEFAULT_MAX_PROVIDER_OBJECTS_PER_NAMESPACE,
    )
    .option(
      '--upstream-deletion-timeout <duration>',
      'how long a provider may keep an upstream copy terminating before the deleted app-cluster object is released (condition ProviderDeletionTimedOut)',
      duration('--upstream-deletion-timeout'),
      DEFAULT_UPSTREAM_DELETION_TIMEOUT_MS,
    )
    .option(
      '--allow-label-key <pattern>',
      'a label key pattern that crosses between the clusters besides the defaults ("*" for any characters; repeatable or comma-separated; see docs/konnector.md)',
      keyPatterns('--allow-label-key'),
      [],
    )
    .option(
      '--allow-annotation-key <pattern>',
      'an annotation key pattern that crosses between the clusters (none by default; repeatable or comma-separated)',
      keyPatterns('--allow-annotation-key'),
      [],
    )
    .option(
      '--allow-resource <plural.group>',
      'a resource providers may export or claim besides the default allow-list (their own APIs, claimed Secrets and ConfigMaps), e.g. daemonsets.apps; repeatable; see docs/bind.md',
      repeatable('--allow-resource', parseAllowedResource),
      [] as string[],
    )
    .option(
      '--allow-secret-type <type>',
      'a Secret type claimed Secrets may have besides the defaults (Opaque, connection.crossplane.io/v1alpha1, servicebinding.io/*, kubernetes.io/basic-auth, ssh-auth, tls), e.g. kubernetes.io/dockerconfigjson; repeatable; never kubernetes.io/service-account-token',
      repeatable('--allow-secret-type', checkAllowedSecretType),
      [] as string[],
    )
    .option(
      '--allow-namespace <ns>',
      'an app-cluster namespace bindings may use (repeatable or comma-separated); nothing is synced in any other namespace (condition NamespaceNotAllowed) and the Konnector construct grants Secret rights only in these; this or --all-namespaces is required',
      repeatable('--allow-namespace', checkAllowedNamespace, true),
      [] as string[],
    )
    .option(
      '--all-namespaces',
      'sync in every namespace (the weaker choice: the Konnector construct then grants Secret and ConfigMap rights cluster-wide); this or --allow-namespace is required',
      false,
    )
    .option(
      '--max-cached-objects-per-binding <n>',
      'most provider objects cached for one binding; past it its informers freeze (condition CacheLimitReached)',
      int('--max-cached-objects-per-binding', 1),
      DEFAULT_MAX_CACHED_OBJECTS_PER_BINDING,
    )
    .option(
      '--write-budget <n>',
      'writes of one object per --write-budget-window before the konnector backs off (condition WriteBudgetExhausted)',
      int('--write-budget', 1),
      DEFAULT_WRITE_BUDGET.writes,
    )
    .option('--write-budget-window <duration>', 'the window of --write-budget', duration('--write-budget-window'), DEFAULT_WRITE_BUDGET.windowMs)
    .option('--binding-namespace <ns>', 'watch APIServiceBindings only in this namespace')
    .option(
      '--binding-admin-namespace <ns>',
      `act only on APIServiceBindings in this namespace (writable by cluster admins only); bindings elsewhere are refused with a condition (default: --binding-namespace, else $POD_NAMESPACE, else ${KONNECTOR_NAMESPACE})`,
    )
    .option('--control-plane-mode', 'run on the control plane for one app cluster (see --app-cluster-kubeconfig-secret-*)', false)
    .option('--app-cluster-kubeconfig-secret-name <name>', 'control-plane mode: Secret with the app cluster kubeconfig')
    .option('--app-cluster-kubeconfig-secret-namespace <ns>', 'control-plane mode: namespace of that Secret')
    .option('--app-cluster-kubeconfig-secret-key <key>', 'control-plane mode: key in that Secret', 'kubeconfig')
    .option('--binding-root-namespace <ns>', 'control-plane mode: namespace of the APIServiceBindings')
    .option('--app-cluster-binding-controller', 'run the AppClusterBinding controller (on the control plane) instead of the konnector', false)
    .option('--konnector-image <image>', 'image of the konnector Deployments created for AppClusterBindings')
    .option('--log-level <level>', 'pino log level (trace, debug, info, warn, error)', process.env.LOG_LEVEL ?? 'info');
}

/**
 * The konnector's admin namespace (KonnectorOptions.bindingAdminNamespace): the flag, else the watched
 * `--binding-namespace`, else the konnector's own namespace ($POD_NAMESPACE: the Konnector construct
 * and kubectl-bind put bindings beside it), else undefined (the Konnector default, `klutch-bind`).
 */
export function adminNamespace(flag: string | undefined, bindingNamespace: string | undefined, podNamespace: string | undefined): string | undefined {
  return flag ?? (bindingNamespace ? undefined : podNamespace || undefined);
}

function loadKubeConfig(path: string | undefined, context: string | undefined): ClusterAccess {
  return path ? loadKubeconfigFile(path, context) : loadDefaultKubeconfig(context);
}

function appClusterBindingRunner(client: KubeClient, image: string | undefined, registry: Registry, log: Logger) {
  const ctl = new AppClusterBindingController({ client, konnectorImage: image, registry, logger: log });
  let started = false;
  return {
    start: async () => {
      await ctl.start();
      started = true;
    },
    stop: () => ctl.stop(),
    ready: (): true | string => (started ? true : 'AppClusterBinding informer not synced'),
  };
}

/** Flags that choose the konnector's namespace reach: one of them is required. */
export const NAMESPACE_CHOICE_FLAGS = ['--allow-namespace', '--all-namespaces'] as const;

/**
 * The namespaces the konnector may bind (KonnectorOptions.allowedNamespaces): `--allow-namespace`'s
 * values, or undefined for `--all-namespaces`. Neither or both is an error naming both flags: the
 * deployers (Konnector construct, kubectl bind, AppClusterBinding) always pass one, so a konnector
 * started without a choice is a mistake, never silently cluster-wide. The AppClusterBinding controller
 * (`--app-cluster-binding-controller`) syncs nothing and needs neither.
 */
export function namespaceChoice(o: { allowNamespace: string[]; allNamespaces: boolean; appClusterBindingController?: boolean }): string[] | undefined {
  if (o.appClusterBindingController) return undefined;
  const [allow, all] = NAMESPACE_CHOICE_FLAGS;
  if (o.allNamespaces && o.allowNamespace.length > 0) {
    throw new Error(
      `${all} and ${allow}=${o.allowNamespace.join(',')} contradict each other: pass ${allow} (only those namespaces) or ${all} (every namespace), not both`,
    );
  }
  if (o.allNamespaces) return undefined;
  if (o.allowNamespace.length === 0) {
    throw new Error(
      `no namespace choice: pass ${allow} <ns> (repeatable; the namespaces whose Secrets and ConfigMaps the konnector may sync) or ${all} (every namespace, the weaker choice); the Konnector construct and kubectl bind pass one`,
    );
  }
  return o.allowNamespace;
}

export async function main(argv = process.argv): Promise<void> {
  const cmd = buildCommand();
  cmd.parse(argv);
  const o = cmd.opts();
  const allowedNamespaces = namespaceChoice({
    allowNamespace: o.allowNamespace,
    allNamespaces: o.allNamespaces,
    appClusterBindingController: o.appClusterBindingController,
  });
  const log = createLogger('klutch-konnector', o.logLevel);
  const local = loadKubeConfig(o.kubeconfig, o.context);
  const leaseNamespace: string = o.leaseNamespace ?? process.env.POD_NAMESPACE ?? 'kube-system';
  const identity = process.env.POD_NAME || `${hostname()}-${randomBytes(4).toString('hex')}`;

  let appKubeConfig = local;
  let bindingNamespace: string | undefined = o.bindingNamespace;
  if (o.controlPlaneMode) {
    const missing = ['appClusterKubeconfigSecretName', 'appClusterKubeconfigSecretNamespace', 'bindingRootNamespace'].filter((k) => !o[k]);
    if (missing.length) {
      const flag = (k: string) => '--' + k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
      throw new Error(`--control-plane-mode needs ${missing.map(flag).join(', ')}`);
    }
    const c = new KubeClient(local);
    const s = await c.getOrNull<Secret>(CoreResources.secrets, o.appClusterKubeconfigSecretNamespace, o.appClusterKubeconfigSecretName);
    const data = s?.data?.[o.appClusterKubeconfigSecretKey];
    if (!data) {
      throw new Error(
        `app cluster kubeconfig: Secret ${o.appClusterKubeconfigSecretNamespace}/${o.appClusterKubeconfigSecretName} ${s ? `has no key "${o.appClusterKubeconfigSecretKey}"` : 'not found'} on the control plane`,
      );
    }
    appKubeConfig = parseKubeconfig(Buffer.from(data, 'base64').toString('utf8'), {
      source: `Secret ${o.appClusterKubeconfigSecretNamespace}/${o.appClusterKubeconfigSecretName}`,
    });
    bindingNamespace = o.bindingRootNamespace;
    c.close();
  }

  const registry = newProcessRegistry();
  const konnector: { start(): Promise<void>; stop(): Promise<void>; ready(): true | string } = o.appClusterBindingController
    ? appClusterBindingRunner(new KubeClient(local, { qps: o.qps, burst: o.burst }), o.konnectorImage, registry, log)
    : new Konnector({
        appKubeConfig,
        bindingKubeConfig: o.controlPlaneMode ? local : undefined,
        bindingNamespace,
        bindingAdminNamespace: o.controlPlaneMode ? undefined : adminNamespace(o.bindingAdminNamespace, o.bindingNamespace, process.env.POD_NAMESPACE),
        controlPlaneMode: o.controlPlaneMode,
        qps: o.qps,
        burst: o.burst,
        workers: o.workers,
        resyncMs: o.resync,
        heartbeatIntervalMs: o.heartbeatInterval,
        namespaceLingerMs: o.namespaceLinger,
        maxProviderObjectsPerNamespace: o.maxProviderObjectsPerNamespace,
        allowedMetadataKeys: { labels: o.allowLabelKey, annotations: o.allowAnnotationKey },
        upstreamDeletionTimeoutMs: o.upstreamDeletionTimeout,
        allowedResources: o.allowResource,
        allowedSecretTypes: o.allowSecretType,
        allowedNamespaces,
        maxCachedObjectsPerBinding: o.maxCachedObjectsPerBinding,
        writeBudget: o.writeBudget,
        writeBudgetWindowMs: o.writeBudgetWindow,
        registry,
        logger: log,
      });

  let running: Promise<void> | undefined;
  let shuttingDown = false;
  const elector = o.leaderElect
    ? new LeaderElector({
        client: new KubeClient(local, { qps: 5, burst: 10 }),
        namespace: leaseNamespace,
        name: o.leaseName,
        identity,
        logger: log,
        leaseDurationMs: o.leaderElectLeaseDuration,
        renewDeadlineMs: o.leaderElectRenewDeadline,
        retryPeriodMs: o.leaderElectRetryPeriod,
        onStartedLeading: () => {
          running = konnector.start();
          running.catch((e) => {
            log.fatal({ err: (e as Error).message }, 'konnector failed to start');
            process.exit(1);
          });
        },
        onStoppedLeading: async () => {
          if (running && !shuttingDown) {
            log.error('lost leadership; exiting so a fresh process can campaign again');
            await konnector.stop().catch(() => undefined);
            process.exit(1);
          }
        },
      })
    : undefined;

  // A rejection nobody handles is a bug: logged with context, counted and shown on /readyz instead of
  // ending the process; an uncaught exception leaves the process in an unknown state: logged, exit 1.
  const unexpected = new Counter({
    name: 'klutch_konnector_unexpected_errors_total',
    help: 'Unexpected errors (bugs) by kind; each is logged with its context',
    labelNames: ['kind'],
    registers: [registry],
  });
  let lastUnexpected: { at: Date; message: string } | undefined;
  let unexpectedCount = 0;
  process.on('unhandledRejection', (e) => {
    unexpectedCount++;
    lastUnexpected = { at: new Date(), message: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
    unexpected.inc({ kind: 'unhandledRejection' });
    log.error({ kind: 'unhandledRejection', err: e instanceof Error ? (e.stack ?? e.message) : String(e) }, 'unexpected error');
  });
  process.on('uncaughtException', (e) => {
    log.fatal({ kind: 'uncaughtException', err: e.stack ?? e.message }, 'unexpected error; exiting');
    process.exit(1);
  });

  const [host, portStr] = String(o.healthAddress).split(/:(?=\d+$)/);
  const health = new HealthServer({
    host: host || '127.0.0.1',
    port: Number(portStr ?? 8080),
    registry,
    healthz: { 'leader-election': () => (elector ? elector.healthy() || 'lease not renewed in time' : true) },
    readyz: { konnector: () => (!elector || elector.isLeader ? konnector.ready() : true) },
    info: {
      // Unhandled rejections of the process, and reconciles that failed with a bug (counted by the controllers).
      'unexpected-errors': () => {
        const bugs = controllerMetrics(registry).unexpected;
        const last = [lastUnexpected, bugs.last && { at: bugs.last.at, message: `in ${bugs.last.controller} key ${bugs.last.key}: ${bugs.last.message}` }]
          .filter((x): x is { at: Date; message: string } => x !== undefined)
          .sort((x, y) => y.at.getTime() - x.at.getTime())[0];
        return last
          ? `${unexpectedCount + bugs.total}, last ${Math.round((Date.now() - last.at.getTime()) / 1000)}s ago: ${last.message.slice(0, 300)}`
          : 'none';
      },
    },
  });
  const port = await health.start();
  log.info({ port, identity, lease: `${leaseNamespace}/${o.leaseName}`, version: KONNECTOR_VERSION }, 'klutch-konnector up');

  if (elector) elector.start();
  else running = konnector.start();

  const shutdown = async (sig: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    log.info({ signal: sig }, 'shutting down');
    try {
      if (running) await konnector.stop();
      if (elector) await elector.stop();
      await health.stop();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

const isEntry = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/').split('/').slice(-3).join('/'));
if (isEntry) {
  main().catch((e) => {
    process.stderr.write(`klutch-konnector: ${(e as Error).message}\n`);
    process.exit(1);
  });
}
