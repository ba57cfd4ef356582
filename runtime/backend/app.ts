/** Assembles the backend (HTTP server + controllers) from options; used by main.ts and tests. */
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { KubeClient, LeaderElector, createLogger, loadDefaultKubeconfig, loadKubeconfigFile, type ClusterAccess } from '../core/index.js';
import { Binder, binderClusterRole, externalCluster, FIELD_MANAGER } from './binder.js';
import { Catalog } from './catalog.js';
import { BackendControllers } from './controllers.js';
import { BackendMetrics } from './metrics.js';
import { parseListenAddress, type BackendOptions } from './options.js';
import { R } from './refs.js';
import { Sealer, parseCookieKeys } from './seal.js';
import { controllerReadiness } from './readiness.js';
import { BackendServer } from './server.js';
import { UnexpectedErrors } from './unexpected.js';
import { ApiServerReplayStore } from './login-state.js';
import { LeaseBindRateLimiter, LeaseIdentityLock } from './limits.js';

export interface Backend {
  url: string;
  server: BackendServer;
  /** The controllers of the current (or last) leadership term; a new set is made for each term. */
  readonly controllers?: BackendControllers;
  kube: KubeClient;
  /** The leader elector's own client (its own QPS budget), when leader election runs. */
  leaderKube?: KubeClient;
  metrics: BackendMetrics;
  unexpected: UnexpectedErrors;
  /** Whether this replica runs the controllers (always true without leader election). */
  isLeader(): boolean;
  /**
   * Stops the backend. Without options at once; with `drain`, as on SIGTERM: /readyz 503 for
   * `--shutdown-delay` while requests are still served, then the listener closes and requests in
   * flight finish within `--shutdown-grace`.
   */
  stop(opts?: { drain?: boolean }): Promise<void>;
}

/** The provider cluster connection: --kubeconfig/--context, else in-cluster, $KUBECONFIG or ~/.kube/config. */
export function loadKubeConfig(opts: { kubeconfig?: string; context?: string }): ClusterAccess {
  try {
    return opts.kubeconfig ? loadKubeconfigFile(opts.kubeconfig, opts.context) : loadDefaultKubeconfig(opts.context);
  } catch (e) {
    throw new Error(`--kubeconfig/--context: ${(e as Error).message}`, { cause: e });
  }
}

export async function startBackend(
  opts: BackendOptions,
  extra: { kubeConfig?: KubeConfig | ClusterAccess; logger?: Logger; defaultMetrics?: boolean; onLostLeadership?: () => void } = {},
): Promise<Backend> {
  const logger = extra.logger ?? createLogger('klutch-backend', opts.logLevel);
  const kubeConfig = extra.kubeConfig ?? loadKubeConfig(opts);
  // HTTP requests and controllers share one client whose wait queue is bounded: beyond
  // --api-queue-limit waiting requests, a request is answered 503 instead of queueing forever
  const kube = new KubeClient(kubeConfig, { userAgent: 'klutch-backend', qps: opts.apiQps ?? 100, burst: opts.apiBurst ?? 200 });
  kube.limiter.maxWaiting = opts.apiQueueLimit ?? 200;
  const metrics = new BackendMetrics(extra.defaultMetrics ?? false);
  const unexpected = new UnexpectedErrors(logger, metrics);
  const identity = process.env.POD_NAME ?? `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  // used login states live in the API server, so a replay is refused by every replica and after restarts
  const replay = new ApiServerReplayStore({ kube, namespace: opts.leaseNamespace, identity, logger });
  const bindRate = new LeaseBindRateLimiter({ kube, namespace: opts.leaseNamespace, ratePerMinute: opts.bindRate, burst: opts.bindBurst });
  metrics.limits.set({ limit: 'clusters' }, opts.maxClustersPerIdentity);
  metrics.limits.set({ limit: 'bind_rate_per_minute' }, opts.bindRate);
  metrics.limits.set({ limit: 'bind_burst' }, opts.bindBurst);
  metrics.limits.set({ limit: 'service_namespaces_per_cluster' }, opts.maxServiceNamespacesPerCluster ?? 100);
  metrics.limits.set({ limit: 'export_requests_per_cluster' }, opts.maxExportRequestsPerCluster ?? 100);
  metrics.limits.set({ limit: 'api_queue' }, opts.apiQueueLimit ?? 200);
  if (!opts.cookieSigningKey) logger.warn('no --cookie-signing-key: using a random key; logins in progress end when the backend restarts');
  const sealer = new Sealer(parseCookieKeys(opts.cookieSigningKey, opts.cookieEncryptionKey));
  const binder = new Binder(kube, {
    namespacePrefix: opts.namespacePrefix,
    prettyName: opts.prettyName,
    external: externalCluster(kube, opts),
    tokenTtlSeconds: opts.tokenTtl,
    credentialMaxLifeSeconds: opts.credentialMaxLife,
    maxClustersPerIdentity: opts.maxClustersPerIdentity,
    identityLock: new LeaseIdentityLock({ kube, namespace: opts.leaseNamespace, holder: identity }),
  });
  const catalog = new Catalog(kube, opts.consumerScope);
  const { host, port } = parseListenAddress(opts.listenAddress);

  await kube.apply(R.clusterRoles, binderClusterRole({ klutchKonnectorCompat: opts.klutchKonnectorCompat }), FIELD_MANAGER, { force: true });
  if (opts.klutchKonnectorCompat) {
    logger.warn(
      '--klutch-konnector-compat: consumer credentials may read the Secrets of their cluster namespace (Klutch konnector rotation); a leaked token can follow its rotations until --credential-max-life or a revocation',
    );
  }

  let controllers: BackendControllers | undefined;
  let elector: LeaderElector | undefined;
  let leaderKube: KubeClient | undefined;
  let controllersRunning: Promise<void> | undefined;
  let stopping = false;
  const syncTimeoutMs = (opts.controllerSyncTimeout ?? 60) * 1000;
  if (opts.controllers) {
    // informers and work queues do not start twice: each leadership term gets a new set
    const newControllers = () =>
      new BackendControllers({
        kube,
        binder,
        logger: logger.child({ part: 'controllers' }),
        metrics,
        registry: metrics.registry,
        consumerScope: opts.consumerScope,
        exportRequestGraceMs: opts.exportRequestGrace * 1000,
        requestRetentionMs: opts.exportRequestRetention * 1000,
        heartbeatTimeoutMs: opts.heartbeatTimeout * 1000,
        maxServiceNamespacesPerCluster: opts.maxServiceNamespacesPerCluster ?? 100,
        maxExportRequestsPerCluster: opts.maxExportRequestsPerCluster ?? 100,
        unexpected,
        sweep: {
          orphanGraceMs: opts.orphanGrace * 1000,
          staleAfterMs: opts.staleClusterTimeout * 1000,
          noticeMs: opts.sweepNotice * 1000,
          dryRun: opts.sweepDryRun,
        },
      });
    controllers = newControllers();
    let fresh = true;
    // read through `controllers` each time: each leadership term gets a new set
    catalog.cache = {
      synced: () => controllers!.hasSynced(),
      get templates() {
        return controllers!.templates;
      },
      get crds() {
        return controllers!.crds;
      },
    };
    if (opts.leaderElect) {
      // the elector has a client of its own: a flood of HTTP requests cannot spend its QPS budget or
      // hold its requests in the shared wait queue past the renew deadline
      leaderKube = new KubeClient(kubeConfig, { userAgent: 'klutch-backend-leader-election', qps: 5, burst: 10, timeoutMs: 5_000 });
      elector = new LeaderElector({
        client: leaderKube,
        namespace: opts.leaseNamespace,
        name: 'klutch-backend',
        identity,
        logger,
        onStartedLeading: async (signal) => {
          if (!fresh) controllers = newControllers();
          fresh = false;
          const c = controllers!;
          controllersRunning = c.start(syncTimeoutMs);
          try {
            await controllersRunning;
          } catch (e) {
            // a leader that cannot start its controllers gives the lease up (the elector releases it
            // and campaigns again after a backoff), instead of holding it with its controllers never running
            await c.stop();
            if (!signal.aborted) logger.error({ err: (e as Error).message }, 'controllers did not start; giving up the leader lease');
            throw e;
          }
          if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
          await c.stop();
          if (!stopping) {
            logger.error('lost the leader lease; controllers stopped');
            extra.onLostLeadership?.();
          }
        },
      }).start();
    } else {
      controllersRunning = controllers.start(syncTimeoutMs);
      await controllersRunning;
    }
  }

  const server = new BackendServer(
    {
      listenHost: host,
      listenPort: port,
      tls: opts.tlsCertFile && opts.tlsKeyFile ? { certFile: opts.tlsCertFile, keyFile: opts.tlsKeyFile } : undefined,
      prettyName: opts.prettyName,
      oidc: {
        issuerUrl: opts.oidcIssuerUrl,
        clientId: opts.oidcIssuerClientId,
        clientSecret: opts.oidcIssuerClientSecret,
        callbackUrl: opts.oidcCallbackUrl,
        scopes: opts.oidcScopes,
        bearerAudiences: opts.oidcBearerAudience,
      },
      authorizeUrl: opts.oidcAuthorizeUrl,
      sessionTtl: opts.sessionTtl,
      stateTtl: opts.stateTtl,
    },
    {
      kube,
      sealer,
      binder,
      catalog,
      logger,
      metrics,
      controllers: () => controllerReadiness(controllers, elector),
      unexpected,
      replay,
      bindRate,
      status: () => [
        `role: ${!controllers ? 'HTTP only (--no-controllers)' : !elector ? 'running (no leader election)' : elector.isLeader ? 'leader' : `standby (leader: ${elector.currentLeader || 'unknown'})`}${elector?.consecutiveFailures ? ` (controllers failed to start ${elector.consecutiveFailures} time(s) in a row; lease given up and retried with backoff)` : ''}`,
        `limits: ${opts.maxClustersPerIdentity || 'unlimited'} app clusters per identity, ${opts.bindRate ? `${opts.bindRate} binds/min (burst ${opts.bindBurst})` : 'unlimited binds'} per identity (shared by all replicas)`,
        `sweep: incomplete binds after ${opts.orphanGrace}s, ${opts.staleClusterTimeout ? `silent konnectors after ${opts.staleClusterTimeout}s + ${opts.sweepNotice}s notice` : 'silent konnectors never'}${opts.sweepDryRun ? ' (dry run)' : ''}`,
      ],
    },
  );
  const url = await server.start();
  logger.info({ url, issuer: opts.oidcIssuerUrl, controllers: opts.controllers }, 'klutch-backend serving');

  return {
    url,
    server,
    get controllers() {
      return controllers;
    },
    kube,
    leaderKube,
    metrics,
    unexpected,
    isLeader: () => Boolean(controllers) && (!elector || elector.isLeader),
    async stop(o: { drain?: boolean } = {}) {
      stopping = true;
      // HTTP first: a bind in flight still has the API client (and the leader its controllers)
      await server.stop(o.drain ? { delayMs: (opts.shutdownDelay ?? 5) * 1000, graceMs: (opts.shutdownGrace ?? 25) * 1000 } : {});
      if (elector) await elector.stop();
      if (controllers) await controllers.stop();
      await replay.idle();
      kube.close();
      leaderKube?.close();
    },
  };
}
