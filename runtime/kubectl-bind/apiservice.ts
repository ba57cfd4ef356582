/**
 * `kubectl bind apiservice`: takes an APIServiceExportRequest (file, URL or stdin) and a provider
 * kubeconfig, asks consent for every permission claim, creates the request on the provider and
 * waits for Succeeded/Failed, installs or upgrades the konnector from klutch-kit's Konnector
 * construct (the manifests `synth` uses), and creates the APIServiceBindings.
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import YAML from 'yaml';
import { apiServiceBindingKind, BINDING_RESOURCES, bindingCrds } from '../../contract/index.js';
import { ApiError, isAlreadyExists, isNotFound, parseKubeconfig, type KubeClient, type KubeObject, type ResourceRef } from '../core/index.js';
import { BIND_API_VERSION, type PermissionClaim } from '../../contract/wire.js';
import {
  BIND_NAMESPACE,
  CliError,
  Exit,
  Progress,
  clean,
  clientFor,
  parseRemoteKubeconfig,
  PROVIDER_KUBECONFIG_LABEL,
  render,
  safeClose,
  type OutputFormat,
} from './util.js';

/** The binding API resources kubectl-bind writes, from the contract's one table. */
export const REQUESTS: ResourceRef = BINDING_RESOURCES.apiServiceExportRequests;
export const BINDINGS: ResourceRef = BINDING_RESOURCES.apiServiceBindings;
const SECRETS: ResourceRef = { group: '', version: 'v1', plural: 'secrets', namespaced: true, kind: 'Secret' };
const NAMESPACES: ResourceRef = { group: '', version: 'v1', plural: 'namespaces', namespaced: false, kind: 'Namespace' };
const CRDS: ResourceRef = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  namespaced: false,
  kind: 'CustomResourceDefinition',
};
const FIELD_MANAGER = 'kubectl-bind';

export interface ExportRequestDoc {
  apiVersion: string;
  kind: string;
  metadata: { name?: string };
  spec: { parameters?: unknown; resources: Array<{ group?: string; resource: string; versions?: string[]; permissionClaims?: PermissionClaim[] }> };
}

export interface IO {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream & { isTTY?: boolean };
  in: NodeJS.ReadableStream & { isTTY?: boolean };
}

export interface ApiServiceOptions {
  consumer: KubeClient;
  /** provider kubeconfig text */
  remoteKubeconfig: string;
  /** Secret in klutch-bind holding the provider kubeconfig (created when absent). */
  secretName?: string;
  remoteNamespace?: string;
  dryRun: boolean;
  yes: boolean;
  skipKonnector: boolean;
  konnectorImage?: string;
  output: OutputFormat;
  timeoutMs: number;
  io: IO;
}

/** Parses and validates an APIServiceExportRequest document (YAML or JSON). */
export function parseExportRequest(text: string, source: string): ExportRequestDoc {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (e) {
    throw new CliError(`${source}: not YAML or JSON: ${(e as Error).message}`, Exit.USAGE);
  }
  const d = doc as Partial<ExportRequestDoc> | null;
  if (!d || typeof d !== 'object') throw new CliError(`${source}: empty document; expected an APIServiceExportRequest`, Exit.USAGE);
  if (d.apiVersion !== BIND_API_VERSION || d.kind !== 'APIServiceExportRequest') {
    throw new CliError(`${source}: is ${String(d.apiVersion)}/${String(d.kind)}, expected ${BIND_API_VERSION}/APIServiceExportRequest`, Exit.USAGE);
  }
  if (!Array.isArray(d.spec?.resources) || d.spec.resources.length === 0) {
    throw new CliError(`${source}: spec.resources must list at least one resource`, Exit.USAGE);
  }
  d.spec.resources.forEach((r, i) => {
    if (!r || typeof r.resource !== 'string' || !/^[a-z][-a-z0-9]*[a-z0-9]$/.test(r.resource)) {
      throw new CliError(`${source}: spec.resources[${i}].resource: "${String(r?.resource)}" is not a plural resource name`, Exit.USAGE);
    }
  });
  return { apiVersion: d.apiVersion, kind: d.kind, metadata: { name: d.metadata?.name }, spec: d.spec };
}

/**
 * The APIServiceExportRequest created on the provider (as Klutch's kubectl-bind does: the request's
 * name, or `<name>-` as generateName when that name is taken; the spec as the backend sent it).
 */
export function exportRequestBody(request: ExportRequestDoc, namespace: string, meta: { name: string } | { generateName: string }): KubeObject {
  return { apiVersion: BIND_API_VERSION, kind: 'APIServiceExportRequest', metadata: { ...meta, namespace }, spec: request.spec } as KubeObject;
}

/** Reads `-f`: a file, an http(s) URL, or `-` for stdin. */
export async function readRequestSource(file: string, stdin: NodeJS.ReadableStream): Promise<string> {
  if (file === '-') {
    const chunks: Buffer[] = [];
    for await (const c of stdin) chunks.push(Buffer.from(c as Buffer));
    return Buffer.concat(chunks).toString('utf8');
  }
  if (/^https?:\/\//.test(file)) {
    let res: Response;
    try {
      res = await fetch(file);
    } catch (e) {
      throw new CliError(`-f ${file}: cannot fetch: ${(e as Error).message}`, Exit.FAILED);
    }
    if (!res.ok) throw new CliError(`-f ${file}: HTTP ${res.status}`, Exit.FAILED);
    return res.text();
  }
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`-f: cannot read "${file}": ${(e as Error).message}`, Exit.USAGE);
  }
}

export function describeClaim(c: PermissionClaim): string {
  const what = `${c.resource}${c.group ? '.' + c.group : ''}`;
  const sel = c.selector ?? {};
  const names = sel.names?.length && !(sel.names.length === 1 && sel.names[0] === '*') ? ` named ${sel.names.join(', ')}` : '';
  const owner =
    sel.owner === 'Provider'
      ? ' created by the provider (synced into your cluster)'
      : sel.owner === 'Consumer'
        ? ' created in your cluster (synced to the provider)'
        : '';
  return `${what}${names}${owner}${c.required ? ' [required]' : ''}`;
}

/** Asks consent for each claim; returns them with `state`. Throws CliError(CONSENT) on a rejected required claim. */
export async function askConsent(
  claims: PermissionClaim[],
  o: { yes: boolean; io: IO },
  api: string,
): Promise<Array<PermissionClaim & { state: 'Accepted' | 'Rejected' }>> {
  if (!claims.length) return [];
  if (o.yes) {
    for (const c of claims) o.io.err.write(`✅ accepted permission claim of ${api}: ${describeClaim(c)} (--yes)\n`);
    return claims.map((c) => ({ ...c, state: 'Accepted' as const }));
  }
  if (!o.io.in.isTTY) {
    throw new CliError(
      `${api} asks for access to ${claims.map(describeClaim).join('; ')}; nobody can answer on a non-interactive stdin — review the claims and pass --yes to accept them`,
      Exit.CONSENT,
    );
  }
  const rl = createInterface({ input: o.io.in, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  try {
    const out: Array<PermissionClaim & { state: 'Accepted' | 'Rejected' }> = [];
    for (const c of claims) {
      o.io.err.write(`❓ ${api} wants access to ${describeClaim(c)}. Accept? [y/N] `);
      const next = await lines.next();
      const a = next.done ? '' : String(next.value).trim().toLowerCase();
      const state = a === 'y' || a === 'yes' ? ('Accepted' as const) : ('Rejected' as const);
      if (state === 'Rejected' && c.required) {
        throw new CliError(`permission claim on ${describeClaim(c)} is required by ${api}; binding aborted, nothing was created`, Exit.CONSENT);
      }
      out.push({ ...c, state });
    }
    return out;
  } finally {
    rl.close();
  }
}

/** Finds the Secret in klutch-bind holding a kubeconfig for the same server and namespace. */
export async function findKubeconfigSecret(consumer: KubeClient, remote: { server: string; namespace: string }): Promise<string | undefined> {
  const list = await consumer.list(SECRETS, BIND_NAMESPACE);
  for (const s of list.items) {
    const data = (s as KubeObject & { data?: Record<string, string> }).data?.kubeconfig;
    if (!data) continue;
    try {
      const r = parseRemoteKubeconfig(Buffer.from(data, 'base64').toString('utf8'));
      if (new URL(r.server).host === new URL(remote.server).host && r.namespace === remote.namespace) return s.metadata.name;
    } catch {
      /* not a kubeconfig of ours */
    }
  }
  return undefined;
}

/** Creates or updates the provider kubeconfig Secret in klutch-bind; returns its name and whether it was created. */
export async function storeKubeconfigSecret(consumer: KubeClient, kubeconfig: string, name: string | undefined): Promise<{ name: string; created: boolean }> {
  const data = { kubeconfig: Buffer.from(kubeconfig).toString('base64') };
  const labels = { [PROVIDER_KUBECONFIG_LABEL]: 'true' };
  if (name) {
    const existing = await consumer.getOrNull(SECRETS, BIND_NAMESPACE, name);
    if (existing) {
      await consumer.update(SECRETS, { ...existing, metadata: { ...existing.metadata, labels: { ...existing.metadata.labels, ...labels } }, data });
      return { name, created: false };
    }
    await consumer.create(SECRETS, { metadata: { name, namespace: BIND_NAMESPACE, labels }, type: 'Opaque', data });
    return { name, created: true };
  }
  const created = await consumer.create(SECRETS, { metadata: { generateName: 'kubeconfig-', namespace: BIND_NAMESPACE, labels }, type: 'Opaque', data });
  return { name: created.metadata.name!, created: true };
}

export async function ensureBindNamespace(consumer: KubeClient): Promise<KubeObject> {
  try {
    return await consumer.create(NAMESPACES, { metadata: { name: BIND_NAMESPACE } });
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
    return consumer.get(NAMESPACES, undefined, BIND_NAMESPACE);
  }
}

/** Installs the APIServiceBinding CRD if missing (the konnector keeps it up to date when it runs). */
async function ensureBindingCrd(consumer: KubeClient, deadline: number): Promise<void> {
  const crd = bindingCrds().find((c) => c.spec.names.plural === 'apiservicebindings')!;
  try {
    await consumer.create(CRDS, crd as unknown as KubeObject);
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
  }
  for (;;) {
    const got = await consumer.get(CRDS, undefined, crd.metadata.name);
    const est = (got as KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } }).status?.conditions?.find(
      (c) => c.type === 'Established',
    );
    if (est?.status === 'True') {
      // a just-established CRD can answer 404/429 ("storage is (re)initializing") for a moment
      try {
        await consumer.list(BINDINGS, BIND_NAMESPACE, { limit: 1 });
        return;
      } catch (e) {
        if (!(e instanceof ApiError && [404, 429, 503].includes(e.code)) || Date.now() > deadline) throw e;
      }
    }
    if (Date.now() > deadline) throw new CliError(`CRD ${crd.metadata.name} did not become Established; check the app cluster's API server`, Exit.FAILED);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const imageTag = (image: string | undefined): string | undefined => image?.split(':').pop();
const semver = (t: string | undefined): number[] | undefined => {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(t ?? '');
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
};

/** Installs or upgrades the konnector (SSA of the Konnector construct's manifests), covering every bound API. */
async function installKonnector(consumer: KubeClient, bound: Array<{ group: string; resource: string }>, o: ApiServiceOptions): Promise<void> {
  const deployments: ResourceRef = { group: 'apps', version: 'v1', plural: 'deployments', namespaced: true, kind: 'Deployment' };
  const existing = await consumer.getOrNull<KubeObject & { spec?: { template?: { spec?: { containers?: Array<{ image?: string }> } } } }>(
    deployments,
    BIND_NAMESPACE,
    'konnector',
  );
  const installedImage = existing?.spec?.template?.spec?.containers?.[0]?.image;
  // loaded on demand: cdk8s is heavy and only needed here
  const { DEFAULT_IMAGES, konnectorManifests } = await import('../../constructs/runtime/index.js');
  let image = o.konnectorImage ?? DEFAULT_IMAGES.konnector;
  if (!o.konnectorImage && installedImage) {
    const have = semver(imageTag(installedImage));
    const want = semver(imageTag(image));
    if (have && want && (have[0] - want[0] || have[1] - want[1] || have[2] - want[2]) > 0) {
      o.io.err.write(
        `⚠️  the installed konnector ${installedImage} is newer than this kubectl-bind's ${image}; keeping it (pass --konnector-image to force)\n`,
      );
      image = installedImage;
    }
  }
  const byGroup = new Map<string, Set<string>>();
  for (const b of bound) {
    if (!b.group) continue;
    if (!byGroup.has(b.group)) byGroup.set(b.group, new Set());
    byGroup.get(b.group)!.add(b.resource);
  }
  const manifests = konnectorManifests({ image, boundApis: [...byGroup].map(([group, rs]) => ({ group, resources: [...rs] })) }) as KubeObject[];
  for (const m of manifests) {
    const [g, v] = (m.apiVersion as string).includes('/') ? (m.apiVersion as string).split('/') : ['', m.apiVersion as string];
    const ref: ResourceRef = {
      group: g,
      version: v,
      plural: pluralOf(m.kind as string),
      namespaced: !['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition'].includes(m.kind as string),
      kind: m.kind as string,
    };
    await consumer.apply(ref, m, FIELD_MANAGER, { force: true });
  }
  o.io.err.write(
    `${existing ? (installedImage === image ? '🔁 Updated' : '⬆️  Upgraded') : '🚀 Installed'} konnector ${image} in namespace ${BIND_NAMESPACE}\n`,
  );
}

function pluralOf(kind: string): string {
  const k = kind.toLowerCase();
  if (k.endsWith('y')) return k.slice(0, -1) + 'ies';
  if (k.endsWith('s')) return k + 'es';
  return k + 's';
}

interface RequestStatus {
  phase?: string;
  terminalMessage?: string;
  conditions?: Array<{ type: string; status: string; message?: string }>;
}

async function waitForRequest(remote: KubeClient, ns: string, name: string, o: ApiServiceOptions): Promise<RequestStatus> {
  const deadline = Date.now() + o.timeoutMs;
  let last: RequestStatus = {};
  const progress = new Progress(
    o.io.err,
    `Waiting for the provider to accept export request ${name}`,
    deadline,
    () => last.conditions?.find((c) => c.type === 'ExportsReady')?.message ?? last.phase ?? 'Pending',
  ).start();
  try {
    for (;;) {
      const r = await remote.getOrNull<KubeObject & { status?: RequestStatus }>(REQUESTS, ns, name);
      if (!r) throw new CliError(`export request ${ns}/${name} was deleted on the provider while waiting; run the command again`, Exit.FAILED);
      last = r.status ?? {};
      if (last.phase === 'Succeeded' || last.phase === 'Failed') return last;
      if (Date.now() > deadline) {
        throw new CliError(
          `export request ${ns}/${name} is still ${last.phase ?? 'Pending'} after ${Math.round(o.timeoutMs / 1000)}s; is the provider's backend running? (raise --timeout to wait longer)`,
          Exit.FAILED,
        );
      }
      await new Promise((res) => setTimeout(res, 250));
    }
  } finally {
    progress.stop();
  }
}

/** How long a 403 from the provider is retried: a backend may grant access a few seconds after /bind. */
export const FORBIDDEN_RETRY_MS = 30_000;

/**
 * Runs `f`, retrying a 403 with backoff (250 ms doubling to 4 s) until `deadline`: Klutch's
 * example-backend creates the consumer's RoleBinding from a controller about 2 s after /bind, so the
 * first request of a fresh kubeconfig can be refused. Any other error, or a 403 past the deadline, is
 * thrown as it came.
 */
export async function whileForbidden<T>(
  f: () => Promise<T>,
  o: { what: string; deadline: number; onRetry?: (e: ApiError) => void; sleep?: (ms: number) => Promise<void>; now?: () => number },
): Promise<T> {
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = o.now ?? Date.now;
  for (let delay = 250; ; delay = Math.min(delay * 2, 4000)) {
    try {
      return await f();
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 403) || now() + delay > o.deadline) throw e;
      o.onRetry?.(e);
      await sleep(delay);
    }
  }
}

/** The whole `apiservice` flow. Returns the APIServiceBindings it created or found. */
export async function bindApiService(request: ExportRequestDoc, o: ApiServiceOptions): Promise<KubeObject[]> {
  const remoteInfo = parseRemoteKubeconfig(o.remoteKubeconfig);
  const remoteNs = o.remoteNamespace ?? remoteInfo.namespace;
  const reqName = request.metadata.name || `${request.spec.resources[0].resource}.${request.spec.resources[0].group ?? ''}`;

  // consent first: nothing is created when a claim is refused
  const decisions = new Map<number, Array<PermissionClaim & { state: 'Accepted' | 'Rejected' }>>();
  for (const [i, r] of request.spec.resources.entries()) {
    decisions.set(i, await askConsent(r.permissionClaims ?? [], o, `${r.resource}.${r.group ?? ''}`));
  }
  const bindings = request.spec.resources.map(
    (r, i) =>
      apiServiceBindingKind.make(
        `${r.resource}.${r.group ?? ''}`,
        {
          kubeconfigSecretRef: { namespace: BIND_NAMESPACE, name: o.secretName ?? '<created>', key: 'kubeconfig' },
          ...(decisions.get(i)!.length ? { permissionClaims: decisions.get(i)! } : {}),
        } as never,
        { namespace: BIND_NAMESPACE },
      ) as unknown as KubeObject,
  );
  if (o.dryRun) {
    const req = { apiVersion: BIND_API_VERSION, kind: 'APIServiceExportRequest', metadata: { name: reqName, namespace: remoteNs }, spec: request.spec };
    o.io.out.write(render([req, ...bindings], o.output ?? 'yaml'));
    o.io.err.write('🔎 dry run: nothing was created\n');
    return bindings;
  }

  const remote = clientFor(parseKubeconfig(o.remoteKubeconfig, { source: 'provider kubeconfig' }));
  try {
    // the request on the provider
    let created: KubeObject;
    const create = (meta: { name: string } | { generateName: string }) =>
      whileForbidden(() => remote.create(REQUESTS, exportRequestBody(request, remoteNs, meta)), {
        what: `creating export request in ${remoteNs}`,
        deadline: Date.now() + Math.min(o.timeoutMs, FORBIDDEN_RETRY_MS),
        onRetry: (e) => o.io.err.write(`⏳ the provider refused (${e.message}); its backend may still be granting access, retrying\n`),
      });
    try {
      created = await create({ name: reqName });
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      created = await create({ generateName: `${reqName}-` });
    }
    const name = created.metadata.name!;
    o.io.err.write(`📨 Created export request ${remoteNs}/${name} on the provider\n`);
    const st = await waitForRequest(remote, remoteNs, name, o);
    if (st.phase === 'Failed') {
      throw new CliError(`the provider refused export request ${name}: ${st.terminalMessage ?? 'no reason given'}`, Exit.EXPORT_FAILED);
    }
    o.io.err.write(`✅ Export request ${name} succeeded\n`);

    // kubeconfig Secret, konnector, bindings
    await ensureBindNamespace(o.consumer);
    const secretName = o.secretName ?? (await findKubeconfigSecret(o.consumer, { server: remoteInfo.server, namespace: remoteNs }));
    const secret = await storeKubeconfigSecret(o.consumer, o.remoteKubeconfig, secretName);
    const deadline = Date.now() + o.timeoutMs;
    await ensureBindingCrd(o.consumer, deadline);
    const existingBindings = (await o.consumer.list(BINDINGS, BIND_NAMESPACE)).items;
    const bound = [
      ...existingBindings.map((b) => ({ group: b.metadata.name!.split('.').slice(1).join('.'), resource: b.metadata.name!.split('.')[0] })),
      ...request.spec.resources.map((r) => ({ group: r.group ?? '', resource: r.resource })),
    ];
    if (!o.skipKonnector) await installKonnector(o.consumer, bound, o);

    const out: KubeObject[] = [];
    for (const b of bindings) {
      const spec = (b as KubeObject & { spec: { kubeconfigSecretRef: { name: string } } }).spec;
      spec.kubeconfigSecretRef.name = secret.name;
      const name = b.metadata.name!;
      const have = existingBindings.find((x) => x.metadata.name === name) as (KubeObject & { spec?: { kubeconfigSecretRef?: { name?: string } } }) | undefined;
      if (have) {
        if (have.spec?.kubeconfigSecretRef?.name !== secret.name) {
          throw new CliError(
            `APIServiceBinding ${name} already exists for another provider (Secret ${BIND_NAMESPACE}/${have.spec?.kubeconfigSecretRef?.name}); delete it first if you want to rebind`,
            Exit.FAILED,
          );
        }
        await o.consumer.mergePatch(BINDINGS, BIND_NAMESPACE, name, {
          spec: { permissionClaims: (b as KubeObject & { spec: { permissionClaims?: unknown } }).spec.permissionClaims ?? null },
        });
        o.io.err.write(`🔗 APIServiceBinding ${name} already existed; claims updated\n`);
        out.push(await o.consumer.get(BINDINGS, BIND_NAMESPACE, name));
      } else {
        out.push(await o.consumer.create(BINDINGS, b));
        o.io.err.write(`🔗 Created APIServiceBinding ${name}\n`);
      }
    }
    return out;
  } catch (e) {
    if (e instanceof ApiError && e.code === 403) {
      throw new CliError(`${e.message}\nThe provider kubeconfig is not allowed to do this; bind again with "kubectl bind <url>" to refresh it`, Exit.FAILED);
    }
    if (e instanceof ApiError && isNotFound(e) && e.path.includes('apiserviceexportrequests')) {
      throw new CliError(`${e.message}\nThe provider has no APIServiceExportRequest API; is the URL a klutch bind backend?`, Exit.FAILED);
    }
    throw e;
  } finally {
    safeClose(remote);
  }
}

export { clean };
