/** Shared pieces of the kubectl-bind commands: exit codes, errors, kubeconfig loading, output. */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import YAML from 'yaml';
import { KubeClient, type KubeObject } from '../core/index.js';
import { KubeconfigLoadError, loadKubeconfigFile, parseKubeconfig, type ClusterAccess } from '../core/kubeconfig.js';
import { loadDefaultKubeconfig } from '../core/kubeconfig-default.js';
import { kubeconfigContextNames, kubeconfigPaths, loadKubeconfigFiles } from '../core/kubeconfig-merge.js';
import { CliError, Exit } from './exit.js';

export { CliError, Exit } from './exit.js';

export interface KubeFlags {
  kubeconfig?: string;
  context?: string;
}

/**
 * The app cluster's kubeconfig, with the loader the backend and konnector use (runtime/core: tokens,
 * certificates, exec credential plugins): --kubeconfig, else the files of $KUBECONFIG (merged as kubectl merges them), else
 * ~/.kube/config, else the pod's service account.
 */
export function loadKubeConfig(flags: KubeFlags, what = 'app cluster'): ClusterAccess {
  const envFiles = flags.kubeconfig ? [] : kubeconfigPaths(process.env.KUBECONFIG);
  const files = flags.kubeconfig ? [flags.kubeconfig] : envFiles.length ? envFiles : [join(homedir(), '.kube', 'config')];
  const file = files.join(delimiter);
  try {
    if (!flags.kubeconfig && !envFiles.length && !existsSync(file)) return loadDefaultKubeconfig(flags.context);
    const contexts = flags.context ? (files.length > 1 ? kubeconfigContextNames(files) : contextNames(file)) : undefined;
    if (flags.context && contexts && !contexts.includes(flags.context)) {
      throw new CliError(`--context: "${flags.context}" is not a context of the kubeconfig ${file} (have: ${contexts.join(', ') || 'none'})`, Exit.USAGE);
    }
    // several $KUBECONFIG files are merged as kubectl merges them
    return files.length > 1 ? loadKubeconfigFiles(files, flags.context) : loadKubeconfigFile(file, flags.context);
  } catch (e) {
    if (e instanceof CliError) throw e;
    if (e instanceof KubeconfigLoadError || (e as NodeJS.ErrnoException).code) {
      throw new CliError(`--kubeconfig: cannot load "${flags.kubeconfig ?? file}" for the ${what}: ${(e as Error).message}`, Exit.USAGE);
    }
    throw e;
  }
}

function contextNames(file: string): string[] | undefined {
  try {
    const raw = YAML.parse(readFileSync(file, 'utf8')) as { contexts?: Array<{ name?: string }> } | null;
    return (raw?.contexts ?? []).map((c) => String(c?.name));
  } catch {
    return undefined; // the loader reports unreadable files
  }
}

export const clientFor = (access: ClusterAccess): KubeClient => new KubeClient(access, { userAgent: 'kubectl-bind', qps: 50, burst: 100 });

/** Closes a client whose connection setup may have failed (its error was already reported). */
export function safeClose(c: KubeClient): void {
  const prepared = (c as unknown as { prepared?: Promise<unknown> }).prepared;
  if (prepared)
    prepared.then(
      () => c.close(),
      () => undefined,
    );
}

const BASE62 = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
function base62(buf: Buffer): string {
  let n = BigInt('0x' + buf.toString('hex'));
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out || '0';
}

/** Klutch's cluster id: first 6 base62 characters of sha224(UID of namespace klutch-bind). */
export const clusterIdFor = (namespaceUid: string): string => base62(createHash('sha224').update(namespaceUid).digest()).slice(0, 6);
/** A session id: 16 base62 characters. */
export const newSessionId = (): string => base62(randomBytes(16)).padStart(16, '0').slice(0, 16);

/** Whether a URL's host is a loopback address (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(u: URL): boolean {
  const h = u.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * Refuses a URL kubectl-bind would send a login, a token or a request over, unless it is https or
 * plain http to a loopback address: over http a man in the middle reads `--token` and the provider
 * kubeconfig and changes the answer (e.g. the resources the export request names).
 */
export function checkSecureUrl(what: string, url: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new CliError(`${what} ${JSON.stringify(url)} is not a URL`, Exit.USAGE);
  }
  if (u.protocol === 'https:') return u;
  if (u.protocol === 'http:' && isLoopbackHost(u)) return u;
  if (u.protocol === 'http:') {
    throw new CliError(
      `${what} ${url} is plain http: anyone on the network path could read the login, --token and the provider kubeconfig, and change the answer; use the backend's https:// URL (http is accepted for loopback addresses only: 127.0.0.1, ::1, localhost)`,
      Exit.USAGE,
    );
  }
  throw new CliError(`${what} ${url}: only https URLs are supported (http for loopback addresses only)`, Exit.USAGE);
}

/** Server URL and context namespace of a kubeconfig text. */
export function parseRemoteKubeconfig(text: string): { server: string; namespace: string } {
  let access: ClusterAccess;
  try {
    access = parseKubeconfig(text, { source: 'provider kubeconfig' });
  } catch (e) {
    throw new CliError(`provider kubeconfig is not valid: ${(e as Error).message}`, Exit.USAGE);
  }
  if (!access.namespace)
    throw new CliError('provider kubeconfig has no namespace in its current context; the backend puts the cluster namespace there', Exit.USAGE);
  checkSecureUrl("the provider kubeconfig's server", access.server);
  return { server: access.server, namespace: access.namespace };
}

export type OutputFormat = 'yaml' | 'json' | undefined;

export function parseOutput(v: string | undefined): OutputFormat {
  if (v === undefined || v === '') return undefined;
  if (v === 'yaml' || v === 'json') return v;
  throw new CliError(`-o/--output: "${v}" is not supported; use yaml or json`, Exit.USAGE);
}

export function render(objs: unknown[], format: 'yaml' | 'json'): string {
  if (format === 'json') return JSON.stringify(objs.length === 1 ? objs[0] : { apiVersion: 'v1', kind: 'List', items: objs }, null, 2) + '\n';
  return objs.map((o) => YAML.stringify(o)).join('---\n');
}

/** Strips server-managed metadata for printing. */
export function clean(o: KubeObject): KubeObject {
  const { managedFields: _m, ...meta } = o.metadata;
  return { ...o, metadata: meta };
}

/** A progress line: rewritten in place on a terminal, printed every 15 s otherwise. */
export class Progress {
  private timer: NodeJS.Timeout | undefined;
  private last = 0;
  constructor(
    private readonly err: NodeJS.WritableStream & { isTTY?: boolean },
    private readonly what: string,
    private readonly deadline: number,
    private readonly detail: () => string = () => '',
  ) {}
  start(): this {
    const tick = () => {
      const left = Math.max(0, Math.round((this.deadline - Date.now()) / 1000));
      const line = `⏳ ${this.what}${this.detail() ? ` (${this.detail()})` : ''}, ${Math.floor(left / 60)}m${String(left % 60).padStart(2, '0')}s left`;
      if (this.err.isTTY) this.err.write(`\r\x1b[K${line}`);
      else if (Date.now() - this.last >= 15_000) {
        this.err.write(line + '\n');
        this.last = Date.now();
      }
    };
    tick();
    this.timer = setInterval(tick, 1000);
    this.timer.unref?.();
    return this;
  }
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.err.isTTY) this.err.write('\r\x1b[K');
  }
}

export function parseTimeout(flag: string, v: string): number {
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(v);
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  if (!m || v === '') throw new CliError(`${flag}: "${v}" is not a duration like 90s, 5m or 1h`, Exit.USAGE);
  return (Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0)) * 1000;
}
