/**
 * `klutch-backend` flags. Names follow Klutch's example-backend where they overlap
 * (`--oidc-issuer-url`, `--oidc-issuer-client-id`, `--oidc-issuer-client-secret`,
 * `--oidc-callback-url`, `--oidc-authorize-url`, `--namespace-prefix`, `--pretty-name`,
 * `--consumer-scope`, `--external-address`, `--external-ca-file`, `--external-server-name`,
 * `--listen-address`, `--tls-cert-file`, `--tls-key-file`, `--cookie-signing-key`,
 * `--cookie-encryption-key`, `--kubeconfig`).
 */
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';

export interface BackendOptions {
  kubeconfig?: string;
  context?: string;
  listenAddress: string;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  namespacePrefix: string;
  prettyName: string;
  consumerScope: 'Namespaced' | 'Cluster';
  externalAddress?: string;
  externalCaFile?: string;
  externalServerName?: string;
  oidcIssuerUrl: string;
  oidcIssuerClientId: string;
  oidcIssuerClientSecret?: string;
  oidcCallbackUrl?: string;
  oidcAuthorizeUrl?: string;
  oidcScopes: string[];
  oidcBearerAudience: string[];
  cookieSigningKey?: string;
  cookieEncryptionKey?: string;
  /** seconds */
  tokenTtl: number;
  /** seconds: maximum life of one consumer credential (one bind), however often its token is rotated. @default 2592000 (30 days) */
  credentialMaxLife?: number;
  /** Let consumer credentials read their cluster namespace's Secrets, as Klutch's Go konnector needs. @default false */
  klutchKonnectorCompat?: boolean;
  sessionTtl: number;
  stateTtl: number;
  exportRequestGrace: number;
  exportRequestRetention: number;
  heartbeatTimeout: number;
  /** App clusters per identity (iss + sub); 0: unlimited. */
  maxClustersPerIdentity: number;
  /** Binds per minute per identity, shared by all replicas; 0: unlimited. */
  bindRate: number;
  bindBurst: number;
  /** seconds: a cluster namespace whose bind never completed is deleted this long after its creation. */
  orphanGrace: number;
  /** seconds: a cluster namespace whose konnector has not heartbeated this long is deleted; 0: never. */
  staleClusterTimeout: number;
  /** seconds between the Abandoned condition/event and the deletion. */
  sweepNotice: number;
  sweepDryRun: boolean;
  controllers: boolean;
  leaderElect: boolean;
  leaseNamespace: string;
  logLevel: string;
  /** seconds the leader waits for its informers to sync before it gives the lease up. @default 60 */
  controllerSyncTimeout?: number;
  /** QPS and burst of the API client shared by requests and controllers. @default 100, 200 */
  apiQps?: number;
  apiBurst?: number;
  /** Requests that may wait for that client's rate limit; more are answered 503. @default 200 */
  apiQueueLimit?: number;
  /** APIServiceNamespaces (provider namespaces) per app cluster; 0: unlimited. @default 100 */
  maxServiceNamespacesPerCluster?: number;
  /** APIServiceExportRequests per app cluster acted on; 0: unlimited. @default 100 */
  maxExportRequestsPerCluster?: number;
  /** seconds /readyz answers 503 while requests are still served, after SIGTERM. @default 5 */
  shutdownDelay?: number;
  /** seconds after SIGTERM requests in flight may take to finish. @default 25 */
  shutdownGrace?: number;
}

/** Parses `90s`, `10m`, `1h`, `1h30m`, or plain seconds. */
export function parseDuration(flag: string, v: string): number {
  if (/^\d+$/.test(v)) return Number(v);
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(v);
  if (!m || v === '') throw new InvalidArgumentError(`${flag}: "${v}" is not a duration like 90s, 10m or 24h`);
  return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
}

const count = (flag: string) => (v: string) => {
  if (!/^\d+$/.test(v)) throw new InvalidArgumentError(`${flag}: "${v}" is not a whole number >= 0`);
  return Number(v);
};

const dur = (flag: string, min: number) => (v: string) => {
  const s = parseDuration(flag, v);
  if (s < min) throw new InvalidArgumentError(`${flag}: "${v}" is shorter than the minimum of ${min}s`);
  return s;
};

export function parseListenAddress(v: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(v);
  if (!m || Number(m[2]) > 65535) {
    throw new Error(`--listen-address: "${v}" is not host:port (e.g. 127.0.0.1:8080)`);
  }
  return { host: m[1].replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}

export function backendCommand(): Command {
  return new Command('klutch-backend')
    .description('klutch-kit bind backend: OIDC login, binding of data-service APIs, export-request controllers')
    .option('--kubeconfig <file>', 'kubeconfig of the provider (control-plane) cluster; default: $KUBECONFIG, ~/.kube/config or in-cluster')
    .option('--context <name>', 'kubeconfig context')
    .option('--listen-address <host:port>', 'address to serve on', '127.0.0.1:8080')
    .option('--tls-cert-file <file>', 'serve TLS with this certificate (PEM)')
    .option('--tls-key-file <file>', 'private key of --tls-cert-file (PEM)')
    .option('--namespace-prefix <prefix>', 'prefix of the cluster namespaces created per consumer', 'cluster')
    .option('--pretty-name <name>', 'provider name shown to consumers', 'Example Backend')
    .addOption(
      new Option('--consumer-scope <scope>', 'informer scope of exports: Namespaced or Cluster').default('Namespaced').argParser((v) => {
        const n = v.toLowerCase();
        if (n === 'namespaced') return 'Namespaced';
        if (n === 'cluster') return 'Cluster';
        throw new InvalidArgumentError(`--consumer-scope: "${v}" is neither Namespaced nor Cluster`);
      }),
    )
    .option('--external-address <url>', 'https:// API server address written into handed-out kubeconfigs; default: the provider kubeconfig server')
    .option('--external-ca-file <file>', 'CA bundle (PEM) written into handed-out kubeconfigs; default: the provider kubeconfig CA')
    .option('--external-server-name <name>', 'TLS server name written into handed-out kubeconfigs')
    .option('--oidc-issuer-url <url>', 'OIDC issuer URL (https, or http on loopback for tests)')
    .option('--oidc-issuer-client-id <id>', 'OIDC client id')
    .option('--oidc-issuer-client-secret <secret>', 'OIDC client secret (or env OIDC_CLIENT_SECRET, or --oidc-issuer-client-secret-file)')
    .option('--oidc-issuer-client-secret-file <file>', 'file holding the OIDC client secret (kept out of the process arguments)')
    .option('--oidc-callback-url <url>', 'redirect URI registered at the issuer; default http(s)://<listen address>/callback')
    .option('--oidc-authorize-url <url>', 'authorize URL announced by /export; default http(s)://<Host header>/authorize')
    .option('--oidc-scopes <scopes>', 'space-separated scopes', 'openid profile email')
    .option('--oidc-bearer-audience <aud...>', 'audiences accepted on bearer tokens for non-interactive binding (default: the client id)')
    .option('--cookie-signing-key <base64>', 'HMAC key for state and session cookies, 32 or 64 bytes (or env COOKIE_SIGNING_KEY); random if unset')
    .option('--cookie-signing-key-file <file>', 'file holding --cookie-signing-key (kept out of the process arguments)')
    .option('--cookie-encryption-key <base64>', 'AES key for state and session cookies, 16, 24 or 32 bytes (or env COOKIE_ENCRYPTION_KEY); derived if unset')
    .option('--cookie-encryption-key-file <file>', 'file holding --cookie-encryption-key')
    .option('--token-ttl <duration>', 'lifetime of ServiceAccount tokens handed to consumers (rotated at 2/3)', dur('--token-ttl', 600), 86400)
    .option(
      '--credential-max-life <duration>',
      'maximum life of a consumer credential (one bind): rotation never extends it; then every token of it is revoked and the consumer binds again',
      dur('--credential-max-life', 600),
      30 * 24 * 3600,
    )
    .option(
      '--klutch-konnector-compat',
      "let consumer credentials read their cluster namespace's Secrets, which Klutch's Go konnector needs; a leaked token can then follow its rotations",
      false,
    )
    .option('--session-ttl <duration>', 'lifetime of the browser session after login', dur('--session-ttl', 60), 3600)
    .option('--state-ttl <duration>', 'lifetime of an OIDC login attempt', dur('--state-ttl', 30), 600)
    .option('--export-request-grace <duration>', 'how long an export request may wait for its CRD before it fails', dur('--export-request-grace', 0), 60)
    .option(
      '--export-request-retention <duration>',
      'finished (Succeeded/Failed) export requests are deleted this long after creation',
      dur('--export-request-retention', 1),
      600,
    )
    .option(
      '--heartbeat-timeout <duration>',
      'ClusterBinding is unhealthy after this long without heartbeat; default 2 x heartbeatInterval',
      dur('--heartbeat-timeout', 0),
      0,
    )
    .option(
      '--max-clusters-per-identity <n>',
      'app clusters (cluster namespaces) one identity may bind; 0: unlimited',
      count('--max-clusters-per-identity'),
      50,
    )
    .option('--bind-rate <n>', 'binds per minute per identity after the burst, shared by all replicas; 0: unlimited', count('--bind-rate'), 30)
    .option('--bind-burst <n>', 'binds one identity may make at once before --bind-rate applies', count('--bind-burst'), 10)
    .option(
      '--orphan-grace <duration>',
      'a cluster namespace whose bind never completed is deleted this long after its creation',
      dur('--orphan-grace', 1),
      600,
    )
    .option(
      '--stale-cluster-timeout <duration>',
      'delete a cluster namespace whose konnector has not heartbeated this long (condition and event first); 0: never',
      dur('--stale-cluster-timeout', 0),
      0,
    )
    .option('--sweep-notice <duration>', 'time between the Abandoned condition/event and the deletion of a silent app cluster', dur('--sweep-notice', 0), 86400)
    .option('--sweep-dry-run', 'report (conditions, events, metrics) what the clean-up would delete, delete nothing', false)
    .option('--no-controllers', 'serve HTTP only, run no controllers')
    .option('--no-leader-elect', 'run the controllers without a Lease (only one replica!)')
    .option('--lease-namespace <ns>', 'namespace of the leader-election Lease (default $POD_NAMESPACE, else kube-system)')
    .option('--log-level <level>', 'pino log level', 'info')
    .option(
      '--controller-sync-timeout <duration>',
      'the leader gives its lease up (and campaigns again after a backoff) when its informers have not synced this long after it became leader',
      dur('--controller-sync-timeout', 1),
      60,
    )
    .option(
      '--api-qps <n>',
      'requests per second of the API client shared by HTTP requests and controllers (leader election has its own)',
      count('--api-qps'),
      100,
    )
    .option('--api-burst <n>', 'burst of that client', count('--api-burst'), 200)
    .option('--api-queue-limit <n>', 'requests that may wait for that client; more are answered 503 with Retry-After', count('--api-queue-limit'), 200)
    .option(
      '--max-service-namespaces-per-cluster <n>',
      'APIServiceNamespaces (provider namespaces) one app cluster may have; more are refused (condition on its ClusterBinding, event); 0: unlimited',
      count('--max-service-namespaces-per-cluster'),
      100,
    )
    .option(
      '--max-export-requests-per-cluster <n>',
      'APIServiceExportRequests of one app cluster that are acted on; more fail with reason QuotaExceeded; 0: unlimited',
      count('--max-export-requests-per-cluster'),
      100,
    )
    .option('--shutdown-delay <duration>', 'after SIGTERM, /readyz answers 503 this long while requests are still served', dur('--shutdown-delay', 0), 5)
    .option('--shutdown-grace <duration>', 'after SIGTERM, requests in flight may take this long (from the signal) to finish', dur('--shutdown-grace', 0), 25)
    .allowExcessArguments(false);
}

/** Parses argv (without node and script) into validated options; throws with the flag name on errors. */
/** A secret from its file (trailing newline dropped), naming the flag when the file cannot be read. */
function secretFile(flag: string, file: string, read: (f: string) => string): string {
  let v: string;
  try {
    v = read(file);
  } catch (e) {
    throw new Error(`${flag}: cannot read "${file}": ${(e as Error).message}`, { cause: e });
  }
  v = v.replace(/\r?\n$/, '');
  if (!v) throw new Error(`${flag}: "${file}" is empty`);
  return v;
}

export function parseBackendOptions(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  readFile: (f: string) => string = (f) => readFileSync(f, 'utf8'),
): BackendOptions {
  const cmd = backendCommand()
    .exitOverride()
    .configureOutput({ writeErr: () => {}, writeOut: () => {} });
  cmd.parse(argv, { from: 'user' });
  const o = cmd.opts<Record<string, unknown>>();
  const need = (flag: string, v: unknown): string => {
    if (typeof v !== 'string' || !v) throw new Error(`${flag}: required`);
    return v;
  };
  parseListenAddress(o.listenAddress as string);
  if ((o.bindRate as number) > 0 && (o.bindBurst as number) < 1)
    throw new Error(`--bind-burst: ${String(o.bindBurst)} must be at least 1 when --bind-rate is set`);
  const fromFile = (flag: string, value: unknown, file: unknown): string | undefined => {
    if (file === undefined) return value as string | undefined;
    if (value !== undefined) throw new Error(`${flag} and ${flag}-file: set one of them`);
    return secretFile(`${flag}-file`, file as string, readFile);
  };
  const clientSecret = fromFile('--oidc-issuer-client-secret', o.oidcIssuerClientSecret, o.oidcIssuerClientSecretFile);
  const signingKey = fromFile('--cookie-signing-key', o.cookieSigningKey, o.cookieSigningKeyFile);
  const encryptionKey = fromFile('--cookie-encryption-key', o.cookieEncryptionKey, o.cookieEncryptionKeyFile);
  if ((o.credentialMaxLife as number) < (o.tokenTtl as number)) {
    throw new Error(
      `--credential-max-life: ${String(o.credentialMaxLife)}s is shorter than --token-ttl (${String(o.tokenTtl)}s); raise --credential-max-life or lower --token-ttl`,
    );
  }
  if ((o.apiQps as number) > 0 && (o.apiBurst as number) < 1) throw new Error(`--api-burst: ${String(o.apiBurst)} must be at least 1 when --api-qps is set`);
  if (Boolean(o.tlsCertFile) !== Boolean(o.tlsKeyFile)) {
    throw new Error('--tls-cert-file and --tls-key-file: set both or neither');
  }
  for (const f of ['oidcCallbackUrl', 'oidcAuthorizeUrl'] as const) {
    if (o[f]) {
      try {
        new URL(o[f] as string);
      } catch {
        throw new Error(`--${f.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())}: "${String(o[f])}" is not a URL`);
      }
    }
  }
  return {
    kubeconfig: o.kubeconfig as string | undefined,
    context: o.context as string | undefined,
    listenAddress: o.listenAddress as string,
    tlsCertFile: o.tlsCertFile as string | undefined,
    tlsKeyFile: o.tlsKeyFile as string | undefined,
    namespacePrefix: o.namespacePrefix as string,
    prettyName: o.prettyName as string,
    consumerScope: o.consumerScope as 'Namespaced' | 'Cluster',
    externalAddress: o.externalAddress as string | undefined,
    externalCaFile: o.externalCaFile as string | undefined,
    externalServerName: o.externalServerName as string | undefined,
    oidcIssuerUrl: need('--oidc-issuer-url', o.oidcIssuerUrl),
    oidcIssuerClientId: need('--oidc-issuer-client-id', o.oidcIssuerClientId),
    oidcIssuerClientSecret: clientSecret ?? env.OIDC_CLIENT_SECRET,
    oidcCallbackUrl: o.oidcCallbackUrl as string | undefined,
    oidcAuthorizeUrl: o.oidcAuthorizeUrl as string | undefined,
    oidcScopes: (o.oidcScopes as string).split(/\s+/).filter(Boolean),
    oidcBearerAudience: (o.oidcBearerAudience as string[] | undefined) ?? [],
    cookieSigningKey: signingKey ?? env.COOKIE_SIGNING_KEY,
    cookieEncryptionKey: encryptionKey ?? env.COOKIE_ENCRYPTION_KEY,
    tokenTtl: o.tokenTtl as number,
    credentialMaxLife: o.credentialMaxLife as number,
    klutchKonnectorCompat: o.klutchKonnectorCompat as boolean,
    sessionTtl: o.sessionTtl as number,
    stateTtl: o.stateTtl as number,
    exportRequestGrace: o.exportRequestGrace as number,
    exportRequestRetention: o.exportRequestRetention as number,
    heartbeatTimeout: o.heartbeatTimeout as number,
    maxClustersPerIdentity: o.maxClustersPerIdentity as number,
    bindRate: o.bindRate as number,
    bindBurst: o.bindBurst as number,
    orphanGrace: o.orphanGrace as number,
    staleClusterTimeout: o.staleClusterTimeout as number,
    sweepNotice: o.sweepNotice as number,
    sweepDryRun: o.sweepDryRun as boolean,
    controllers: o.controllers as boolean,
    leaderElect: o.leaderElect as boolean,
    leaseNamespace: (o.leaseNamespace as string | undefined) ?? env.POD_NAMESPACE ?? 'kube-system',
    logLevel: o.logLevel as string,
    controllerSyncTimeout: o.controllerSyncTimeout as number,
    apiQps: o.apiQps as number,
    apiBurst: o.apiBurst as number,
    apiQueueLimit: o.apiQueueLimit as number,
    maxServiceNamespacesPerCluster: o.maxServiceNamespacesPerCluster as number,
    maxExportRequestsPerCluster: o.maxExportRequestsPerCluster as number,
    shutdownDelay: o.shutdownDelay as number,
    shutdownGrace: o.shutdownGrace as number,
  };
}
