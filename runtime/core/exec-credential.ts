/**
 * Exec credential plugins (`users[].user.exec` in a kubeconfig), as EKS (`aws eks get-token`),
 * GKE (`gke-gcloud-auth-plugin`) and AKS (`kubelogin`) kubeconfigs use them: the command is run
 * with `KUBERNETES_EXEC_INFO` set, prints a `client.authentication.k8s.io` `ExecCredential` (v1 or
 * v1beta1) whose `status` holds a bearer token or a client certificate, which is cached until its
 * `expirationTimestamp` (or, without one, until the API server answers 401) and shared by every
 * client of the same kubeconfig. A plugin that fails, prints something else or does not finish
 * within the timeout is an ExecCredentialError naming the command.
 */
import { spawn } from 'node:child_process';
import { isAbsolute, join, sep } from 'node:path';

export const EXEC_API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'] as const;

/** `users[].user.exec` of a kubeconfig. */
export interface ExecConfig {
  /** `client.authentication.k8s.io/v1` or `…/v1beta1`. */
  readonly apiVersion: string;
  readonly command: string;
  readonly args?: readonly string[];
  readonly env?: ReadonlyArray<{ name: string; value: string }>;
  /** Printed when the command is not found. */
  readonly installHint?: string;
  /** Pass the cluster (server, CA, …) to the plugin in KUBERNETES_EXEC_INFO. */
  readonly provideClusterInfo?: boolean;
  /** `Never`, `IfAvailable` or `Always`; this runtime never has a terminal for the plugin. */
  readonly interactiveMode?: string;
}

/** `status` of an ExecCredential. */
export interface ExecCredentialStatus {
  readonly token?: string;
  readonly clientCertificateData?: string;
  readonly clientKeyData?: string;
  readonly expirationTimestamp?: string;
}

/** The cluster as the plugin may see it (`spec.cluster` of KUBERNETES_EXEC_INFO). */
export interface ExecClusterInfo {
  readonly server: string;
  readonly caData?: Buffer;
  readonly skipTLSVerify?: boolean;
  readonly tlsServerName?: string;
  /** `extensions[client.authentication.k8s.io/exec]` of the cluster. */
  readonly config?: unknown;
}

export interface ExecCredentialPluginOptions {
  /** User name in the kubeconfig (for messages). */
  readonly user?: string;
  /** Directory of the kubeconfig: a relative command with a path separator is resolved against it (as kubectl does). */
  readonly baseDir?: string;
  readonly cluster?: ExecClusterInfo;
  /** How long the plugin may run. @default 30000 (or $KLUTCH_EXEC_PLUGIN_TIMEOUT_MS) */
  readonly timeoutMs?: number;
  /** Clock (tests). @default Date.now */
  readonly now?: () => number;
}

export class ExecCredentialError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExecCredentialError';
  }
}

const DEFAULT_TIMEOUT_MS = 30_000;

const duration = (ms: number) => (ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`);
const MAX_OUTPUT = 1 << 20;

function defaultTimeout(): number {
  const v = Number(process.env.KLUTCH_EXEC_PLUGIN_TIMEOUT_MS);
  return Number.isFinite(v) && v > 0 ? v : DEFAULT_TIMEOUT_MS;
}

/** Checks a kubeconfig `exec` block; throws naming the field and value. */
export function parseExecConfig(raw: unknown, where: string): ExecConfig {
  const o = raw as Record<string, unknown> | null;
  if (!o || typeof o !== 'object') throw new ExecCredentialError(`${where}: exec must be a mapping`);
  if (typeof o.command !== 'string' || !o.command) throw new ExecCredentialError(`${where}: exec.command is missing`);
  if (!EXEC_API_VERSIONS.includes(o.apiVersion as (typeof EXEC_API_VERSIONS)[number])) {
    throw new ExecCredentialError(`${where}: exec.apiVersion ${JSON.stringify(o.apiVersion)} is not supported; use ${EXEC_API_VERSIONS.join(' or ')}`);
  }
  if (o.args !== undefined && (!Array.isArray(o.args) || o.args.some((a) => typeof a !== 'string'))) {
    throw new ExecCredentialError(`${where}: exec.args must be a list of strings`);
  }
  const env = o.env ?? [];
  if (
    !Array.isArray(env) ||
    env.some((e) => !e || typeof (e as { name?: unknown }).name !== 'string' || typeof (e as { value?: unknown }).value !== 'string')
  ) {
    throw new ExecCredentialError(`${where}: exec.env must be a list of {name, value} strings`);
  }
  const mode = o.interactiveMode;
  if (mode !== undefined && mode !== 'Never' && mode !== 'IfAvailable' && mode !== 'Always') {
    throw new ExecCredentialError(`${where}: exec.interactiveMode ${JSON.stringify(mode)} is not Never, IfAvailable or Always`);
  }
  if (mode === 'Always') {
    throw new ExecCredentialError(
      `${where}: exec.interactiveMode is Always, but klutch-kit runs plugins without a terminal; use a plugin mode that needs no input (Never or IfAvailable)`,
    );
  }
  return {
    apiVersion: o.apiVersion as string,
    command: o.command,
    args: (o.args as string[] | undefined) ?? [],
    env: env as Array<{ name: string; value: string }>,
    installHint: typeof o.installHint === 'string' ? o.installHint : undefined,
    provideClusterInfo: o.provideClusterInfo === true,
    interactiveMode: mode as string | undefined,
  };
}

/** Runs one exec plugin and caches its credential; one instance per kubeconfig user, shared by its clients. */
export class ExecCredentialPlugin {
  private cached: { status: ExecCredentialStatus; expiresAt: number } | undefined;
  private inflight: Promise<ExecCredentialStatus> | undefined;
  /** How often the plugin ran (metrics, tests). */
  runs = 0;
  readonly timeoutMs: number;
  private readonly now: () => number;

  constructor(
    readonly config: ExecConfig,
    private readonly opts: ExecCredentialPluginOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? defaultTimeout();
    this.now = opts.now ?? Date.now;
  }

  /** The command line as shown in messages. */
  get commandLine(): string {
    return [this.config.command, ...(this.config.args ?? [])].map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a)).join(' ');
  }

  private get what(): string {
    return `exec credential plugin "${this.commandLine}"${this.opts.user ? ` (kubeconfig user "${this.opts.user}")` : ''}`;
  }

  /** The current credential: cached until its expirationTimestamp, else a fresh run (concurrent callers share it). */
  credential(): Promise<ExecCredentialStatus> {
    if (this.cached && this.now() < this.cached.expiresAt) return Promise.resolve(this.cached.status);
    if (!this.inflight) {
      this.inflight = this.run().finally(() => {
        this.inflight = undefined;
      });
    }
    return this.inflight;
  }

  /** The credential of the last run, expired or not (undefined before the first run or after invalidate). */
  get last(): ExecCredentialStatus | undefined {
    return this.cached?.status;
  }

  /** Drops the cached credential (after a 401) if it is still `used`, so the next call runs the plugin again. */
  invalidate(used?: ExecCredentialStatus): void {
    if (!used || this.cached?.status === used) this.cached = undefined;
  }

  private resolvedCommand(): string {
    const c = this.config.command;
    if (!isAbsolute(c) && (c.includes(sep) || c.includes('/')) && this.opts.baseDir) return join(this.opts.baseDir, c);
    return c;
  }

  private execInfo(): string {
    const spec: Record<string, unknown> = { interactive: false };
    const c = this.opts.cluster;
    if (this.config.provideClusterInfo && c) {
      spec.cluster = {
        server: c.server,
        ...(c.tlsServerName ? { 'tls-server-name': c.tlsServerName } : {}),
        ...(c.skipTLSVerify ? { 'insecure-skip-tls-verify': true } : {}),
        ...(c.caData ? { 'certificate-authority-data': c.caData.toString('base64') } : {}),
        ...(c.config !== undefined ? { config: c.config } : {}),
      };
    }
    return JSON.stringify({ apiVersion: this.config.apiVersion, kind: 'ExecCredential', spec });
  }

  private run(): Promise<ExecCredentialStatus> {
    this.runs++;
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const e of this.config.env ?? []) env[e.name] = e.value;
    env.KUBERNETES_EXEC_INFO = this.execInfo();
    return new Promise<ExecCredentialStatus>((resolve, reject) => {
      let settled = false;
      const fail = (msg: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(new ExecCredentialError(msg));
      };
      const child = spawn(this.resolvedCommand(), [...(this.config.args ?? [])], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        if (out.length < MAX_OUTPUT) out += d;
      });
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        err = (err + d).slice(-2000);
      });
      let timedOut = false;
      const timeoutMessage = () =>
        `${this.what} did not finish within ${duration(this.timeoutMs)} and was stopped; check that it runs without a terminal (try it in a shell)${err.trim() ? `; its stderr: ${err.trim().slice(-500)}` : ''}`;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
        // reported once the process is gone ('close'), or after 2 s if its pipes stay open (a child of the plugin)
        setTimeout(() => fail(timeoutMessage()), 2000).unref?.();
      }, this.timeoutMs);
      timer.unref?.();
      child.on('error', (e: NodeJS.ErrnoException) => {
        const hint = this.config.installHint ? `\n${this.config.installHint.trim()}` : '';
        fail(
          e.code === 'ENOENT'
            ? `${this.what}: command "${this.resolvedCommand()}" not found; install it or fix users[].user.exec.command in the kubeconfig${hint}`
            : `${this.what} could not be started: ${e.message}`,
        );
      });
      child.on('close', (code, signal) => {
        if (settled) return;
        if (timedOut) {
          fail(timeoutMessage());
          return;
        }
        if (code !== 0) {
          fail(`${this.what} failed (${signal ? `signal ${signal}` : `exit code ${code}`})${err.trim() ? `: ${err.trim().slice(-500)}` : ''}`);
          return;
        }
        let status: ExecCredentialStatus;
        try {
          status = this.parseOutput(out);
        } catch (e) {
          fail((e as Error).message);
          return;
        }
        settled = true;
        clearTimeout(timer);
        const expiresAt = status.expirationTimestamp ? Date.parse(status.expirationTimestamp) : Infinity;
        this.cached = { status, expiresAt };
        resolve(status);
      });
    });
  }

  private parseOutput(out: string): ExecCredentialStatus {
    let doc: { apiVersion?: unknown; kind?: unknown; status?: Record<string, unknown> };
    try {
      doc = JSON.parse(out) as typeof doc;
    } catch {
      throw new ExecCredentialError(`${this.what} printed no ExecCredential JSON (stdout starts ${JSON.stringify(out.trim().slice(0, 80))})`);
    }
    if (!doc || typeof doc !== 'object' || doc.kind !== 'ExecCredential') {
      throw new ExecCredentialError(`${this.what} printed kind ${JSON.stringify(doc?.kind)}, expected ExecCredential`);
    }
    if (doc.apiVersion !== this.config.apiVersion) {
      throw new ExecCredentialError(
        `${this.what} answered apiVersion ${JSON.stringify(doc.apiVersion)}, but the kubeconfig asks for ${this.config.apiVersion}`,
      );
    }
    const st = doc.status ?? {};
    const str = (k: string) => (typeof st[k] === 'string' && st[k] ? (st[k] as string) : undefined);
    const status: ExecCredentialStatus = {
      token: str('token'),
      clientCertificateData: str('clientCertificateData'),
      clientKeyData: str('clientKeyData'),
      expirationTimestamp: str('expirationTimestamp'),
    };
    if (Boolean(status.clientCertificateData) !== Boolean(status.clientKeyData)) {
      throw new ExecCredentialError(
        `${this.what}: status has ${status.clientKeyData ? 'clientKeyData without clientCertificateData' : 'clientCertificateData without clientKeyData'}`,
      );
    }
    if (!status.token && !(status.clientCertificateData && status.clientKeyData)) {
      throw new ExecCredentialError(`${this.what}: status has neither a token nor clientCertificateData with clientKeyData`);
    }
    if (status.expirationTimestamp && Number.isNaN(Date.parse(status.expirationTimestamp))) {
      throw new ExecCredentialError(`${this.what}: status.expirationTimestamp ${JSON.stringify(status.expirationTimestamp)} is not an RFC 3339 time`);
    }
    return status;
  }
}
