/**
 * The kubeconfig loader of the backend, the konnector and kubectl-bind: tokens, token files, client
 * certificates, basic auth, CA data/files, exec credential plugins (`users[].user.exec`, see
 * exec-credential.ts) and the in-cluster service account. It exists so that the runtime programs do
 * not load @kubernetes/client-node at all: importing it costs ~80 MB of RSS (its generated API
 * models), more than the konnector's whole cache at 5,000 objects.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { parse } from 'yaml';
import { ExecCredentialError, ExecCredentialPlugin, parseExecConfig } from './exec-credential.js';

/** Everything needed to reach one API server as one user. */
export interface ClusterAccess {
  server: string;
  caData?: Buffer;
  certData?: Buffer;
  keyData?: Buffer;
  token?: string;
  /** Re-read on every request (projected service-account tokens rotate). */
  tokenFile?: string;
  username?: string;
  password?: string;
  skipTLSVerify?: boolean;
  tlsServerName?: string;
  /** Namespace of the current context. */
  namespace?: string;
  /** Name of the context used (for messages). */
  context?: string;
  /** Exec credential plugin of the user (shared by every client of this access). */
  exec?: ExecCredentialPlugin;
}

interface RawKubeconfig {
  'current-context'?: string;
  clusters?: Array<{ name: string; cluster: Record<string, unknown> }>;
  users?: Array<{ name: string; user: Record<string, unknown> }>;
  contexts?: Array<{ name: string; context: { cluster?: string; user?: string; namespace?: string } }>;
}

export class KubeconfigLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KubeconfigLoadError';
  }
}

const b64 = (v: unknown) => (typeof v === 'string' && v ? Buffer.from(v, 'base64') : undefined);

/** Parses kubeconfig YAML/JSON text. `baseDir` resolves relative file paths. */
export function parseKubeconfig(
  text: string,
  opts: {
    context?: string;
    baseDir?: string;
    source?: string;
    /** exec plugin timeout */
    execTimeoutMs?: number;
    /**
     * Run `users[].user.exec` plugins. Only for kubeconfigs the user gave (files): a kubeconfig
     * received from a provider or read from a Secret must not make this process run commands.
     * @default false
     */
    allowExec?: boolean;
    /**
     * Honour file references (`tokenFile`, `client-certificate`, `client-key`, `certificate-authority`).
     * Only for kubeconfig files the user gave: a kubeconfig received from a provider or read from a Secret
     * that names `tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token` would otherwise make this
     * process send its own ServiceAccount token (or any file it can read) to the server the sender chose.
     * Without it, such a kubeconfig is refused with an error naming the field and its value.
     * @default false
     */
    allowFiles?: boolean;
  } = {},
): ClusterAccess {
  const src = opts.source ?? 'kubeconfig';
  let raw: RawKubeconfig;
  try {
    raw = parse(text) as RawKubeconfig;
  } catch (e) {
    throw new KubeconfigLoadError(`${src}: not valid YAML (${(e as Error).message})`);
  }
  if (!raw || typeof raw !== 'object') throw new KubeconfigLoadError(`${src}: empty or not a mapping`);
  const ctxName = opts.context ?? raw['current-context'];
  if (!ctxName) throw new KubeconfigLoadError(`${src}: no current-context set; set current-context or pass a context`);
  const ctx = raw.contexts?.find((c) => c.name === ctxName)?.context;
  if (!ctx) throw new KubeconfigLoadError(`${src}: context "${ctxName}" not found (contexts: ${(raw.contexts ?? []).map((c) => c.name).join(', ') || 'none'})`);
  const cluster = raw.clusters?.find((c) => c.name === ctx.cluster)?.cluster;
  if (!cluster || typeof cluster.server !== 'string' || !cluster.server) {
    throw new KubeconfigLoadError(`${src}: context "${ctxName}" names cluster "${ctx.cluster ?? ''}", which is missing or has no server`);
  }
  const user = (ctx.user ? raw.users?.find((u) => u.name === ctx.user)?.user : undefined) ?? {};
  if (user['auth-provider']) {
    const name = (user['auth-provider'] as { name?: string }).name;
    throw new KubeconfigLoadError(
      `${src}: user "${ctx.user}" uses the auth-provider "${name ?? ''}", which Kubernetes removed; use its exec plugin instead (e.g. gke-gcloud-auth-plugin, kubelogin), a token or a client certificate`,
    );
  }
  if (!opts.allowFiles) refuseFileReferences(src, ctx.cluster ?? '', cluster, ctx.user ?? '', user);
  const file = (v: unknown) => {
    if (typeof v !== 'string' || !v) return undefined;
    const p = isAbsolute(v) || !opts.baseDir ? v : join(opts.baseDir, v);
    try {
      return readFileSync(p);
    } catch (e) {
      throw new KubeconfigLoadError(`${src}: cannot read ${p} (${(e as Error).message})`);
    }
  };
  const caData = b64(cluster['certificate-authority-data']) ?? file(cluster['certificate-authority']);
  let exec: ExecCredentialPlugin | undefined;
  if (user.exec && !opts.allowExec) {
    const cmd = (user.exec as { command?: unknown }).command;
    throw new KubeconfigLoadError(
      `${src}: user "${ctx.user}" runs the exec credential plugin ${JSON.stringify(cmd)}; klutch-kit runs plugins only from kubeconfig files it is given (--kubeconfig, $KUBECONFIG), never from a kubeconfig received from a provider or read from a Secret; use a token or a client certificate there`,
    );
  }
  if (user.exec) {
    try {
      const config = parseExecConfig(user.exec, `${src}: user "${ctx.user}"`);
      const ext = (cluster.extensions as Array<{ name?: string; extension?: unknown }> | undefined)?.find(
        (e) => e?.name === 'client.authentication.k8s.io/exec',
      )?.extension;
      exec = new ExecCredentialPlugin(config, {
        user: ctx.user,
        baseDir: opts.baseDir,
        timeoutMs: opts.execTimeoutMs,
        cluster: {
          server: cluster.server,
          caData,
          skipTLSVerify: cluster['insecure-skip-tls-verify'] === true,
          tlsServerName: typeof cluster['tls-server-name'] === 'string' ? cluster['tls-server-name'] : undefined,
          config: ext,
        },
      });
    } catch (e) {
      if (e instanceof ExecCredentialError) throw new KubeconfigLoadError(e.message);
      throw e;
    }
  }
  const tokenFile =
    typeof user.tokenFile === 'string' && user.tokenFile
      ? isAbsolute(user.tokenFile) || !opts.baseDir
        ? user.tokenFile
        : join(opts.baseDir, user.tokenFile)
      : undefined;
  return {
    server: cluster.server,
    caData,
    certData: b64(user['client-certificate-data']) ?? file(user['client-certificate']),
    keyData: b64(user['client-key-data']) ?? file(user['client-key']),
    token: typeof user.token === 'string' && user.token ? user.token : undefined,
    tokenFile,
    username: typeof user.username === 'string' ? user.username : undefined,
    password: typeof user.password === 'string' ? user.password : undefined,
    skipTLSVerify: cluster['insecure-skip-tls-verify'] === true,
    tlsServerName: typeof cluster['tls-server-name'] === 'string' ? cluster['tls-server-name'] : undefined,
    namespace: ctx.namespace || undefined,
    context: ctxName,
    exec,
  };
}

/** Fields of a kubeconfig cluster / user that name a file (or another place) to read or go through. */
const CLUSTER_FILE_FIELDS = ['certificate-authority', 'proxy-url'] as const;
const USER_FILE_FIELDS = ['tokenFile', 'client-certificate', 'client-key'] as const;

/**
 * Throws when a kubeconfig that did not come from a file of the user names a file to read or a proxy to
 * go through. Inline data (`token`, `*-data`) is all a provider or a Secret may hand over.
 */
function refuseFileReferences(src: string, clusterName: string, cluster: Record<string, unknown>, userName: string, user: Record<string, unknown>): void {
  const found: string[] = [];
  for (const f of CLUSTER_FILE_FIELDS)
    if (cluster[f] !== undefined && cluster[f] !== '') found.push(`cluster "${clusterName}" ${f}: ${JSON.stringify(cluster[f])}`);
  for (const f of USER_FILE_FIELDS) if (user[f] !== undefined && user[f] !== '') found.push(`user "${userName}" ${f}: ${JSON.stringify(user[f])}`);
  if (!found.length) return;
  throw new KubeconfigLoadError(
    `${src}: ${found.join(', ')}; a kubeconfig received from a provider or read from a Secret may carry inline data only ` +
      '(token, client-certificate-data, client-key-data, certificate-authority-data) and no proxy: klutch-kit never reads local files ' +
      'or sends its own credentials on behalf of such a kubeconfig; have the provider issue it with inline data',
  );
}

export function loadKubeconfigFile(path: string, context?: string, opts: { execTimeoutMs?: number } = {}): ClusterAccess {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new KubeconfigLoadError(`kubeconfig ${path}: cannot read it (${(e as Error).message})`);
  }
  return parseKubeconfig(text, {
    context,
    baseDir: dirname(path),
    source: `kubeconfig ${path}`,
    execTimeoutMs: opts.execTimeoutMs,
    allowExec: true,
    allowFiles: true,
  });
}

/** Renders a ClusterAccess as kubeconfig YAML-compatible JSON (for Secrets). */
export function renderKubeconfig(a: ClusterAccess, name = 'default'): string {
  const user: Record<string, unknown> = {};
  if (a.token) user.token = a.token;
  if (a.certData) user['client-certificate-data'] = a.certData.toString('base64');
  if (a.keyData) user['client-key-data'] = a.keyData.toString('base64');
  if (a.exec) user.exec = { ...a.exec.config };
  const cluster: Record<string, unknown> = { server: a.server };
  if (a.caData) cluster['certificate-authority-data'] = a.caData.toString('base64');
  if (a.skipTLSVerify) cluster['insecure-skip-tls-verify'] = true;
  if (a.tlsServerName) cluster['tls-server-name'] = a.tlsServerName;
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name, user }],
    contexts: [{ name, context: { cluster: name, user: name, ...(a.namespace ? { namespace: a.namespace } : {}) } }],
    'current-context': name,
  });
}
