/**
 * `kubectl bind <url>`: discovery (`GET <url>` → BindingProvider), a callback server on 127.0.0.1,
 * the authorize URL printed (and opened with --open), a wait with timeout and progress line, the
 * session id of the answer checked; then each returned request is bound (`apiservice` flow) with
 * the kubeconfig stored in a Secret in `klutch-bind` (reused for the same server + namespace).
 *
 * Non-interactive (CI): with `--token` (or $KLUTCH_BIND_TOKEN), a JWT from the backend's issuer, the
 * backend is asked directly (`POST /bind`, Bearer) for each `--resource <plural>.<group>` (repeatable: one
 * request per API, as Klutch's backend answers them; the kubeconfig is stored once); no browser.
 */
import { spawn } from 'node:child_process';
import type { KubeClient } from '../core/index.js';
import {
  responseKubeconfig,
  responseRequests,
  validateBindingProvider,
  validateBindingResponse,
  type BindingProvider,
  type BindingResponse,
} from '../../contract/wire.js';
import { CallbackServer } from './callback.js';
import { bindApiService, ensureBindNamespace, preflightRequests, type IO, type ExportRequestDoc } from './apiservice.js';
import type { AllowedResource } from '../../contract/resource-policy.js';
import { CliError, Exit, Progress, checkSecureUrl, clusterIdFor, newSessionId, parseRemoteKubeconfig, render, type OutputFormat } from './util.js';
import { OAUTH2_CODE_GRANT } from '../../contract/api/constants.js';

export interface BindOptions {
  url: string;
  consumer: KubeClient;
  dryRun: boolean;
  open: boolean;
  yes: boolean;
  skipKonnector: boolean;
  konnectorImage?: string;
  output: OutputFormat;
  timeoutMs: number;
  token?: string;
  /** `--resource`, with `token`: the APIs to bind (`<plural>.<group>`), in order. @default none */
  resources?: readonly string[];
  /** `--allow-resource`: resources outside the default allow-list the user allows. */
  allowResources?: readonly AllowedResource[];
  /** `--allow-namespace`: namespaces the konnector's Secret and ConfigMap rights are narrowed to. @default [contextNamespace] */
  allowNamespaces?: readonly string[];
  /** `--all-namespaces`: Secret and ConfigMap rights in every namespace (the weaker choice). @default false */
  allNamespaces?: boolean;
  /** The namespace of the app cluster's kubeconfig context: the konnector's namespace without the two flags. @default "default" */
  contextNamespace?: string;
  io: IO;
}

export async function fetchProvider(url: string): Promise<BindingProvider> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new CliError(`"${url}" is not a URL; pass the backend's export URL, e.g. https://bind.example.com/export`, Exit.USAGE);
  }
  checkSecureUrl('the export URL', url);
  let res: Response;
  try {
    res = await fetch(u, { headers: { Accept: 'application/json' } });
  } catch (e) {
    throw new CliError(
      `cannot reach ${url}: ${(e as Error & { cause?: Error }).cause?.message ?? (e as Error).message}; check the URL and your network`,
      Exit.FAILED,
    );
  }
  if (!res.ok) throw new CliError(`${url} answered HTTP ${res.status}; is it the backend's /export URL?`, Exit.FAILED);
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    throw new CliError(`${url} did not answer JSON; is it the backend's /export URL?`, Exit.FAILED);
  }
  try {
    return validateBindingProvider(body, url);
  } catch (e) {
    throw new CliError((e as Error).message, Exit.FAILED);
  }
}

/**
 * The login URL: the provider's authenticatedURL plus `c` (cluster id), `p` (callback port) and `s`
 * (session id) as Klutch's kubectl-bind sends them (sorted, as Go's url.Values.Encode writes them),
 * and `u`, the full callback URL, which Klutch's backend prefers over `p` when present: our callback
 * listens on 127.0.0.1, where `http://localhost:<p>` may resolve to ::1 first.
 */
export function authorizeUrl(authenticatedURL: string, o: { callbackUrl: string; port: number; sessionId: string; clusterId: string }): URL {
  let auth: URL;
  try {
    auth = new URL(authenticatedURL);
  } catch {
    throw new CliError(`the provider's authenticatedURL ${JSON.stringify(authenticatedURL)} is not a URL`, Exit.FAILED);
  }
  checkSecureUrl("the provider's authenticatedURL", auth.href);
  auth.searchParams.set('c', o.clusterId);
  auth.searchParams.set('p', String(o.port));
  auth.searchParams.set('s', o.sessionId);
  auth.searchParams.set('u', o.callbackUrl);
  return auth;
}

/**
 * How the login URL is opened, without a shell: the URL is one argument of a program that only
 * opens it (on Windows `rundll32 url.dll,FileProtocolHandler`, not `cmd /c start`, whose command
 * line a URL with `&` or `|` would extend). Only http(s) URLs are opened.
 */
export function browserCommand(url: string, platform: NodeJS.Platform = process.platform): { cmd: string; args: string[] } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new CliError(`--open: ${JSON.stringify(url)} is not a URL; open it yourself if you trust it`, Exit.FAILED);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new CliError(`--open: ${url} is not an http(s) URL; not opened`, Exit.FAILED);
  if (platform === 'win32') return { cmd: 'rundll32', args: ['url.dll,FileProtocolHandler', u.href] };
  return { cmd: platform === 'darwin' ? 'open' : 'xdg-open', args: [u.href] };
}

function openBrowser(url: string, io: IO): void {
  const { cmd, args } = browserCommand(url);
  try {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true, shell: false, windowsHide: true });
    child.on('error', () => io.err.write(`⚠️  could not start ${cmd}; open the URL above yourself\n`));
    child.unref();
  } catch {
    io.err.write(`⚠️  could not start ${cmd}; open the URL above yourself\n`);
  }
}

async function browserLogin(provider: BindingProvider, sessionId: string, clusterId: string, o: BindOptions): Promise<BindingResponse> {
  const method = provider.authenticationMethods.find((m) => m.method === OAUTH2_CODE_GRANT)?.oauth2CodeGrant?.authenticatedURL;
  if (!method) throw new CliError(`${o.url} offers no OAuth2CodeGrant login; this kubectl-bind cannot log in there`, Exit.FAILED);
  const cb = new CallbackServer(sessionId);
  await cb.start();
  try {
    const auth = authorizeUrl(method, { callbackUrl: cb.url, port: cb.port, sessionId, clusterId });
    o.io.err.write(`\nTo authenticate, visit in your browser:\n\n\t${auth.href}\n\n`);
    if (o.open) openBrowser(auth.href, o.io);
    const deadline = Date.now() + o.timeoutMs;
    const progress = new Progress(o.io.err, `Waiting for the login in the browser (callback on ${cb.url})`, deadline).start();
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        cb.response,
        new Promise<never>((_r, reject) => {
          timer = setTimeout(() => {
            const why = cb.refused.length ? `; refused answers: ${cb.refused.join('; ')}` : '';
            reject(
              new CliError(
                `no login answer within ${Math.round(o.timeoutMs / 1000)}s${why}; run the command again (raise --timeout if you need more time)`,
                Exit.AUTH,
              ),
            );
          }, o.timeoutMs);
        }),
      ]);
    } finally {
      if (timer) clearTimeout(timer);
      progress.stop();
    }
  } finally {
    await cb.stop();
  }
}

/** `--resource` values as (plural, group), checked before anything is asked of the backend. */
export function parseBindResources(values: readonly string[] | undefined): Array<{ resource: string; group: string }> {
  if (!values || values.length === 0)
    throw new CliError('--resource: required with --token, e.g. --resource postgresqlinstances.anynines.com (repeatable)', Exit.USAGE);
  const seen = new Set<string>();
  return values.map((v) => {
    const m = /^([a-z][-a-z0-9]*[a-z0-9])\.(.*)$/.exec(v);
    if (!m) throw new CliError(`--resource: "${v}" is not <plural>.<group> (e.g. postgresqlinstances.anynines.com)`, Exit.USAGE);
    if (seen.has(v)) throw new CliError(`--resource: "${v}" is given twice`, Exit.USAGE);
    seen.add(v);
    return { resource: m[1]!, group: m[2]! };
  });
}

async function bearerBind(
  provider: BindingProvider,
  sessionId: string,
  clusterId: string,
  o: BindOptions,
  api: { resource: string; group: string },
): Promise<BindingResponse> {
  const authorize = provider.authenticationMethods.find((x) => x.method === OAUTH2_CODE_GRANT)?.oauth2CodeGrant?.authenticatedURL;
  const bindUrl = checkSecureUrl('the bind URL (the token is sent there)', new URL('/bind', authorize ?? o.url).href);
  let res: Response;
  try {
    res = await fetch(bindUrl, {
      method: 'POST',
      headers: { Authorization: `Bearer ${o.token}`, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ resource: api.resource, group: api.group, clusterID: clusterId, sessionID: sessionId }),
    });
  } catch (e) {
    throw new CliError(`cannot reach ${bindUrl}: ${(e as Error).message}`, Exit.FAILED);
  }
  const body = (await res.json().catch(() => ({}))) as { error?: string };
  if (res.status === 401 || res.status === 403)
    throw new CliError(`the backend refused the token: ${body.error ?? res.status}; get a fresh token from the issuer`, Exit.AUTH);
  if (!res.ok) throw new CliError(`the backend refused the binding of ${api.resource}.${api.group}: ${body.error ?? `HTTP ${res.status}`}`, Exit.FAILED);
  try {
    return validateBindingResponse(body);
  } catch (e) {
    throw new CliError((e as Error).message, Exit.FAILED);
  }
}

/** Checks that an answer belongs to the session it was asked in. */
function checkSession(response: BindingResponse, sessionId: string): void {
  if (response.authentication?.oauth2CodeGrant?.sid !== sessionId) {
    throw new CliError('the answer belongs to another session; run the command again', Exit.AUTH);
  }
}

/**
 * The backend's answers for this bind: one login in the browser, or one `POST /bind` per `--resource` (each in a
 * session of its own, all for the same provider cluster and namespace).
 */
async function bindingResponses(
  provider: BindingProvider,
  clusterId: string,
  o: BindOptions,
  apis: ReadonlyArray<{ resource: string; group: string }> | undefined,
): Promise<BindingResponse[]> {
  if (!apis) {
    const sessionId = newSessionId();
    const response = await browserLogin(provider, sessionId, clusterId, o);
    checkSession(response, sessionId);
    return [response];
  }
  const out: BindingResponse[] = [];
  for (const api of apis) {
    const sessionId = newSessionId();
    const response = await bearerBind(provider, sessionId, clusterId, o, api);
    checkSession(response, sessionId);
    out.push(response);
  }
  return out;
}

export async function bind(o: BindOptions): Promise<void> {
  // with a token: the APIs, a usage error before any request (main.ts checks them before the kubeconfig too)
  const apis = o.token ? parseBindResources(o.resources) : undefined;
  const provider = await fetchProvider(o.url);
  o.io.err.write(`🔎 ${provider.providerPrettyName} (${provider.version}) at ${o.url}\n`);
  const ns = await ensureBindNamespace(o.consumer);
  const clusterId = clusterIdFor(ns.metadata.uid!);
  const responses = await bindingResponses(provider, clusterId, o, apis);
  o.io.err.write(`🔑 Authenticated as ${responses[0]!.authentication!.oauth2CodeGrant!.id}\n`);
  // The last answer's kubeconfig serves every request: the same consumer's credential, stored once (a Secret
  // rewritten per API would restart the konnector's provider connection each time).
  const kubeconfig = responseKubeconfig(responses[responses.length - 1]!);
  const remote = parseRemoteKubeconfig(kubeconfig);
  for (const r of responses) {
    const other = parseRemoteKubeconfig(responseKubeconfig(r));
    if (other.server !== remote.server || other.namespace !== remote.namespace) {
      throw new CliError(
        `the backend answered with two provider clusters (${other.server} namespace ${other.namespace}, and ${remote.server} namespace ${remote.namespace}); bind one API per command`,
        Exit.FAILED,
      );
    }
  }
  const requests = responses.flatMap((r) => responseRequests(r) as unknown as ExportRequestDoc[]);
  if (o.dryRun) {
    o.io.out.write(render(requests, o.output ?? 'yaml'));
    o.io.err.write('🔎 dry run: nothing was bound; pass these requests to "kubectl bind apiservice -f -" to bind them\n');
    return;
  }
  // several requests (--resource repeated): all checked and consented before the first is bound
  const decided = requests.length > 1 ? await preflightRequests(requests, remote, o) : undefined;
  const all = [];
  for (const req of requests) {
    const bindings = await bindApiService(req, {
      consumer: o.consumer,
      remoteKubeconfig: kubeconfig,
      dryRun: false,
      yes: o.yes,
      skipKonnector: o.skipKonnector,
      konnectorImage: o.konnectorImage,
      output: o.output,
      timeoutMs: o.timeoutMs,
      allowResources: o.allowResources,
      allowNamespaces: o.allowNamespaces,
      allNamespaces: o.allNamespaces,
      contextNamespace: o.contextNamespace,
      ...(decided ? { decided } : {}),
      io: o.io,
    });
    all.push(...bindings);
  }
  printBindings(all, o.output, o.io);
}

export function printBindings(bindings: Array<{ metadata: { name?: string }; spec?: unknown }>, output: OutputFormat, io: IO): void {
  if (output) {
    io.out.write(render(bindings, output));
    return;
  }
  io.out.write('NAME\tSECRET\tCLAIMS\n');
  for (const b of bindings) {
    const spec = b.spec as { kubeconfigSecretRef?: { name?: string }; permissionClaims?: Array<{ resource: string; state: string }> };
    io.out.write(
      `${b.metadata.name}\t${spec?.kubeconfigSecretRef?.name ?? ''}\t${(spec?.permissionClaims ?? []).map((c) => `${c.resource}:${c.state}`).join(',') || '-'}\n`,
    );
  }
}
