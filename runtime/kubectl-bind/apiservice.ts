/**
 * `kubectl bind apiservice`: takes an APIServiceExportRequest (file, URL or stdin) and a provider
 * kubeconfig, asks consent for every permission claim, creates the request on the provider and
 * waits for Succeeded/Failed, installs or upgrades the konnector from klutch-kit's Konnector
 * construct (the manifests `synth` uses), and creates the APIServiceBindings.
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import YAML from 'yaml';
import { apiServiceBindingKind, BINDING_RESOURCES, bindingCrds, apiServiceExportRequestKind, ConditionType } from '../../contract/index.js';
import { ApiError, isAlreadyExists, isNotFound, parseKubeconfig, type KubeClient, type KubeObject, type ResourceRef } from '../core/index.js';
import { BIND_API_VERSION, type PermissionClaim } from '../../contract/wire.js';
import { decideResource, parseAllowedResource, resourceName, type AllowedResource } from '../../contract/resource-policy.js';
import { checkAllowedSecretType } from '../../contract/secret-types.js';
import { checkAllowedNamespace } from '../../contract/allowed-namespaces.js';
import { EXPORTED_LABEL, KONNECTOR_NAMESPACE } from '../../contract/api/constants.js';
import {
  ALL_NAMESPACES_FLAG,
  ALLOW_FLAG,
  ALLOW_NAMESPACE_FLAG,
  allowedByNameWarning,
  checkRequest,
  claimDetails,
  contextNamespace,
  describeClaim,
  namespaceScopeLine,
} from './consent.js';
import { CliError, Exit, Progress, clean, checkSecureUrl, clientFor, parseRemoteKubeconfig, render, safeClose, type OutputFormat } from './util.js';
import { PROVIDER_KUBECONFIG_LABEL } from './exit.js';

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
  /**
   * Resources outside the default allow-list the user allows for this request (`--allow-resource`);
   * they are added to the konnector's allow-list (`--allow-resource` flags of its Deployment).
   */
  allowResources?: readonly AllowedResource[];
  /**
   * Namespaces the konnector's Secret and ConfigMap rights are narrowed to (`--allow-namespace`, checked
   * by `parseAllowNamespaces`), merged with the installed konnector's: a re-render never drops one.
   * @default [contextNamespace]
   */
  allowNamespaces?: readonly string[];
  /**
   * `--all-namespaces`: Secret and ConfigMap rights in every namespace (the weaker choice, flagged in the
   * consent text). Needed again on every bind to keep an installed cluster-wide konnector cluster-wide.
   * @default false
   */
  allNamespaces?: boolean;
  /**
   * Consent already given for these APIs (`<plural>.<group>` → the claims with their state), by
   * {@link preflightRequests} when one command binds several: nothing is asked again. @default ask
   */
  decided?: ReadonlyMap<string, ConsentDecisions>;
  /**
   * The namespace of the app cluster's kubeconfig context (checked by `contextNamespace()` of consent.ts):
   * the konnector's namespace when neither `allowNamespaces` nor `allNamespaces` is given.
   * @default "default"
   */
  contextNamespace?: string;
  io: IO;
}

export { describeClaim };

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
  if (d.apiVersion !== BIND_API_VERSION || d.kind !== apiServiceExportRequestKind.kind) {
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
  return { apiVersion: BIND_API_VERSION, kind: apiServiceExportRequestKind.kind, metadata: { ...meta, namespace }, spec: request.spec } as KubeObject;
}

/** Reads `-f`: a file, an http(s) URL, or `-` for stdin. */
export async function readRequestSource(file: string, stdin: NodeJS.ReadableStream): Promise<string> {
  if (file === '-') {
    const chunks: Buffer[] = [];
    for await (const c of stdin) chunks.push(Buffer.from(c as Buffer));
    return Buffer.concat(chunks).toString('utf8');
  }
  if (/^https?:\/\//.test(file)) {
    checkSecureUrl('-f', file);
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

/** Permission claims of one API with the user's answer. */
export type ConsentDecisions = Array<PermissionClaim & { state: 'Accepted' | 'Rejected' }>;

/**
 * Before one command binds several requests: every request through the resource policy and the foreign-CRD check,
 * and every claim asked, so that a refusal of the last one binds none (nothing half-applied). Returns the consent per
 * API for {@link ApiServiceOptions.decided}.
 */
export async function preflightRequests(
  requests: readonly ExportRequestDoc[],
  remote: { server: string; namespace: string },
  o: { consumer: KubeClient; yes: boolean; io: IO; allowResources?: readonly AllowedResource[] },
): Promise<Map<string, ConsentDecisions>> {
  const ours = await findKubeconfigSecret(o.consumer, remote);
  // no binding CRD yet: nothing bound yet (the preflight writes nothing)
  const existing = (
    await o.consumer.list(BINDINGS, KONNECTOR_NAMESPACE).catch((e: unknown) => {
      if (e instanceof ApiError && e.code === 404) return { items: [] };
      throw e;
    })
  ).items as Array<KubeObject & { spec?: { kubeconfigSecretRef?: { name?: string } } }>;
  for (const request of requests) {
    checkRequest(request, o.allowResources ?? []);
    await checkNoForeignCrds(o.consumer, request);
    for (const r of request.spec.resources) {
      const have = existing.find((b) => b.metadata.name === `${r.resource}.${r.group ?? ''}`);
      const theirs = have?.spec?.kubeconfigSecretRef?.name;
      if (have && theirs !== ours) {
        throw new CliError(
          `APIServiceBinding ${have.metadata.name} already exists for another provider (Secret ${KONNECTOR_NAMESPACE}/${theirs}); delete it first if you want to rebind. Nothing was bound`,
          Exit.FAILED,
        );
      }
    }
  }
  const decided = new Map<string, ConsentDecisions>();
  for (const request of requests) {
    for (const r of request.spec.resources) {
      const api = `${r.resource}.${r.group ?? ''}`;
      decided.set(api, await askConsent(r.permissionClaims ?? [], o, api));
    }
  }
  return decided;
}

/** Asks consent for each claim; returns them with `state`. Throws CliError(CONSENT) on a rejected required claim. */
export async function askConsent(
  claims: PermissionClaim[],
  o: { yes: boolean; io: IO },
  api: string,
): Promise<Array<PermissionClaim & { state: 'Accepted' | 'Rejected' }>> {
  if (!claims.length) return [];
  const details = (c: PermissionClaim) =>
    claimDetails(c)
      .map((l) => `     ${l}\n`)
      .join('');
  if (o.yes) {
    for (const c of claims) o.io.err.write(`✅ accepted permission claim of ${api}: ${describeClaim(c)} (--yes)\n${details(c)}`);
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
      o.io.err.write(`❓ ${api} wants access to ${describeClaim(c)}:\n${details(c)}   Accept? [y/N] `);
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
  const list = await consumer.list(SECRETS, KONNECTOR_NAMESPACE);
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
    const existing = await consumer.getOrNull(SECRETS, KONNECTOR_NAMESPACE, name);
    if (existing) {
      await consumer.update(SECRETS, { ...existing, metadata: { ...existing.metadata, labels: { ...existing.metadata.labels, ...labels } }, data });
      return { name, created: false };
    }
    await consumer.create(SECRETS, { metadata: { name, namespace: KONNECTOR_NAMESPACE, labels }, type: 'Opaque', data });
    return { name, created: true };
  }
  const created = await consumer.create(SECRETS, { metadata: { generateName: 'kubeconfig-', namespace: KONNECTOR_NAMESPACE, labels }, type: 'Opaque', data });
  return { name: created.metadata.name!, created: true };
}

export async function ensureBindNamespace(consumer: KubeClient): Promise<KubeObject> {
  try {
    return await consumer.create(NAMESPACES, { metadata: { name: KONNECTOR_NAMESPACE } });
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
    return consumer.get(NAMESPACES, undefined, KONNECTOR_NAMESPACE);
  }
}

/** Installs the APIServiceBinding CRD if missing (the konnector keeps it up to date when it runs). */
async function ensureBindingCrd(consumer: KubeClient, deadline: number): Promise<void> {
  const crd = bindingCrds().find((c) => c.spec.names.plural === apiServiceBindingKind.plural)!;
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
        await consumer.list(BINDINGS, KONNECTOR_NAMESPACE, { limit: 1 });
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

/** The allowances of an installed konnector: its `--allow-resource=<name>` arguments. */
export function installedAllowances(args: readonly string[] | undefined, warn: (msg: string) => void): AllowedResource[] {
  const out: AllowedResource[] = [];
  for (const a of args ?? []) {
    if (!a.startsWith(`${ALLOW_FLAG}=`)) continue;
    try {
      out.push(parseAllowedResource(`the konnector's ${ALLOW_FLAG}`, a.slice(ALLOW_FLAG.length + 1)));
    } catch (e) {
      warn(`⚠️  ignoring the installed konnector's ${a}: ${(e as Error).message}\n`);
    }
  }
  return out;
}

/**
 * The values of one repeatable `<flag>=<value>` argument of the installed konnector, each checked by
 * `check` (a value it refuses is dropped with a warning), sorted, without repeats: what a later
 * `kubectl bind`, which re-renders the konnector, keeps of the app cluster admin's choices.
 */
function installedFlagValues(args: readonly string[] | undefined, flag: string, check: (field: string, v: string) => string, warn: (msg: string) => void) {
  const out = new Set<string>();
  for (const a of args ?? []) {
    if (!a.startsWith(`${flag}=`)) continue;
    try {
      out.add(check(`the konnector's ${flag}`, a.slice(flag.length + 1)));
    } catch (e) {
      warn(`⚠️  ignoring the installed konnector's ${a}: ${(e as Error).message}\n`);
    }
  }
  return [...out].sort();
}

/**
 * The Secret types the installed konnector was allowed beyond the defaults (its `--allow-secret-type`
 * flags): kept by a later `kubectl bind`, which re-renders the konnector and its admission policy. A
 * flag the contract refuses is dropped with a warning.
 */
export function installedSecretTypes(args: readonly string[] | undefined, warn: (msg: string) => void): string[] {
  return installedFlagValues(args, '--allow-secret-type', checkAllowedSecretType, warn);
}

/**
 * The installed konnector's namespace allow-list (its `--allow-namespace` flags, as the `Konnector`
 * construct's `allowedNamespaces` renders them): kept by a later `kubectl bind`, so that re-rendering the
 * konnector keeps its Secret rights in those namespaces only instead of widening them to the cluster.
 */
export function installedNamespaces(args: readonly string[] | undefined, warn: (msg: string) => void): string[] {
  return installedFlagValues(args, '--allow-namespace', checkAllowedNamespace, warn);
}

/** What the konnector serves: every bound API (group + plural) and every accepted claim. */
export interface KonnectorScope {
  bound: Array<{ group: string; resource: string }>;
  claimed: Array<{ group: string; resource: string }>;
}

/**
 * The konnector's RBAC: the bound APIs and claimed resources the resource policy allows, given the
 * allowances (the installed konnector's and this run's). Anything else is left out, with a warning
 * naming it: the konnector gets no rights on it (and refuses to serve it).
 */
export function konnectorGrants(scope: KonnectorScope, allowed: readonly AllowedResource[], warn: (msg: string) => void) {
  const byGroup = new Map<string, Set<string>>();
  for (const b of scope.bound) {
    if (!b.group) continue;
    const d = decideResource(b, 'export', allowed);
    if (!d.allowed) {
      warn(
        `⚠️  APIServiceBinding ${d.name}: outside the allow-list (${d.why}); the konnector gets no rights on it — delete the binding, or bind again with ${ALLOW_FLAG} ${d.name}\n`,
      );
      continue;
    }
    if (!byGroup.has(b.group)) byGroup.set(b.group, new Set());
    byGroup.get(b.group)!.add(b.resource);
  }
  const claimed = new Map<string, { group: string; resource: string }>([
    ['secrets', { group: '', resource: 'secrets' }],
    ['configmaps', { group: '', resource: 'configmaps' }],
  ]);
  for (const c of scope.claimed) {
    const d = decideResource(c, 'claim', allowed);
    if (!d.allowed) {
      warn(
        `⚠️  accepted claim on ${d.name}: outside the allow-list (${d.why}); the konnector gets no rights on it — reject the claim, or bind again with ${ALLOW_FLAG} ${d.name}\n`,
      );
      continue;
    }
    claimed.set(d.name, { group: d.group, resource: d.resource });
  }
  return {
    boundApis: [...byGroup].map(([group, rs]) => ({ group, resources: [...rs].sort() })),
    claimedResources: [...claimed.values()],
  };
}

/**
 * Refuses to bind an API whose CRD already exists in the app cluster and was not made by a binding
 * of the same name: the konnector would get read/write on every object of someone else's API.
 */
async function checkNoForeignCrds(consumer: KubeClient, request: ExportRequestDoc): Promise<void> {
  for (const r of request.spec.resources) {
    if (!r.group) continue;
    const name = `${r.resource}.${r.group}`;
    const crd = await consumer.getOrNull(CRDS, undefined, name);
    if (!crd) continue;
    const owner = crd.metadata.ownerReferences?.find((o) => o.controller);
    const byBinding = crd.metadata.labels?.[EXPORTED_LABEL] === 'true' && owner?.kind === apiServiceBindingKind.kind && owner.name === name;
    if (!byBinding) {
      throw new CliError(
        `the export of ${name}: CustomResourceDefinition ${name} already exists in your cluster and no APIServiceBinding made it; a provider may not take over an API of your cluster (the konnector would get read/write on all its objects). Nothing was created; ask the provider to export its own API group`,
        Exit.CONSENT,
      );
    }
  }
}

type KonnectorDeployment = KubeObject & { spec?: { template?: { spec?: { containers?: Array<{ image?: string; args?: string[] }> } } } };
const DEPLOYMENTS: ResourceRef = { group: 'apps', version: 'v1', plural: 'deployments', namespaced: true, kind: 'Deployment' };

/**
 * The namespaces the konnector will have Secret and ConfigMap rights in after this run, sorted, or
 * undefined for every namespace (`--all-namespaces`, asked again on each run). Otherwise this run's
 * `--allow-namespace` values, else the kubeconfig context's namespace (`default` when it names none),
 * plus the installed konnector's `--allow-namespace` flags (never dropped). An installed konnector that
 * is cluster-wide (`--all-namespaces`, or installed before the default was narrow: no namespace flag)
 * is narrowed, with a warning saying so. Each namespace asked for must exist (its RoleBinding is applied
 * there): a missing one is refused before anything is written.
 */
export async function konnectorNamespaces(
  consumer: KubeClient,
  existing: KonnectorDeployment | undefined,
  o: ApiServiceOptions,
): Promise<string[] | undefined> {
  if (o.allNamespaces) return undefined;
  const args = existing?.spec?.template?.spec?.containers?.[0]?.args;
  const installed = installedNamespaces(args, (m) => o.io.err.write(m));
  const fromFlag = (o.allowNamespaces?.length ?? 0) > 0;
  const asked = fromFlag ? [...o.allowNamespaces!] : [contextNamespace(o.contextNamespace)];
  for (const ns of asked) {
    if (!(await consumer.getOrNull(NAMESPACES, undefined, ns))) {
      const what = fromFlag ? `${ALLOW_NAMESPACE_FLAG}: namespace "${ns}"` : `namespace "${ns}" (the kubeconfig context's namespace, the konnector's default)`;
      throw new CliError(
        `${what} does not exist in this cluster; create it first (its RoleBinding goes there), or pass ${ALLOW_NAMESPACE_FLAG} <namespace>`,
        Exit.USAGE,
      );
    }
  }
  const merged = [...new Set([...installed, ...asked])].sort();
  if (existing && (installed.length === 0 || args?.includes(ALL_NAMESPACES_FLAG))) {
    o.io.err.write(
      `⚠️  the installed konnector may read and write Secrets and ConfigMaps in every namespace; this bind narrows it to ${merged.join(', ')}: objects of bindings elsewhere stop syncing (condition NamespaceNotAllowed). To keep it cluster-wide, bind again with ${ALL_NAMESPACES_FLAG}\n`,
    );
  }
  return merged;
}

/**
 * Installs or upgrades the konnector (SSA of the Konnector construct's manifests), covering every bound
 * API, narrowed to `namespaces` (those consented to) plus any the Deployment gained since they were read.
 */
async function installKonnector(consumer: KubeClient, scope: KonnectorScope, o: ApiServiceOptions, namespaces: readonly string[] | undefined): Promise<void> {
  const existing = await consumer.getOrNull<KonnectorDeployment>(DEPLOYMENTS, KONNECTOR_NAMESPACE, 'konnector');
  const installedImage = existing?.spec?.template?.spec?.containers?.[0]?.image;
  // loaded on demand: cdk8s is heavy and only needed here
  const { DEFAULT_IMAGES, konnectorManifests, KonnectorNamespaces } = await import('../../constructs/runtime/index.js');
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
  const warn = (m: string) => o.io.err.write(m);
  // the konnector's allow-list: what the admin allowed before (its flags) and in this run
  const allowed = new Map<string, AllowedResource>();
  for (const a of [...installedAllowances(existing?.spec?.template?.spec?.containers?.[0]?.args, warn), ...(o.allowResources ?? [])]) {
    allowed.set(resourceName(a), a);
  }
  const { boundApis, claimedResources } = konnectorGrants(scope, [...allowed.values()], warn);
  const installedArgs = existing?.spec?.template?.spec?.containers?.[0]?.args;
  const allowedSecretTypes = installedSecretTypes(installedArgs, warn);
  // every namespace only as consented this run; else those consented plus any the Deployment gained since
  const reach = namespaces ? KonnectorNamespaces.only(...namespaces, ...installedNamespaces(installedArgs, warn)) : KonnectorNamespaces.all();
  const manifests = konnectorManifests({
    image,
    boundApis,
    claimedResources,
    allowedResources: [...allowed.keys()].sort(),
    allowedSecretTypes,
    namespaces: reach,
  }) as KubeObject[];
  for (const m of manifests) {
    const [g, v] = (m.apiVersion as string).includes('/') ? (m.apiVersion as string).split('/') : ['', m.apiVersion as string];
    const ref: ResourceRef = {
      group: g,
      version: v,
      plural: pluralOf(m.kind as string),
      namespaced: ![
        'Namespace',
        'ClusterRole',
        'ClusterRoleBinding',
        'CustomResourceDefinition',
        'ValidatingAdmissionPolicy',
        'ValidatingAdmissionPolicyBinding',
      ].includes(m.kind as string),
      kind: m.kind as string,
    };
    await consumer.apply(ref, m, FIELD_MANAGER, { force: true });
  }
  o.io.err.write(
    `${existing ? (installedImage === image ? '🔁 Updated' : '⬆️  Upgraded') : '🚀 Installed'} konnector ${image} in namespace ${KONNECTOR_NAMESPACE}\n`,
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
    () => last.conditions?.find((c) => c.type === ConditionType.ExportsReady)?.message ?? last.phase ?? 'Pending',
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

/** Creates this request's APIServiceBindings, or updates the claims of those that exist for the same provider Secret. */
async function applyBindings(o: ApiServiceOptions, bindings: KubeObject[], existingBindings: KubeObject[], secretName: string): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const b of bindings) {
    const spec = (b as KubeObject & { spec: { kubeconfigSecretRef: { name: string } } }).spec;
    spec.kubeconfigSecretRef.name = secretName;
    const name = b.metadata.name!;
    const have = existingBindings.find((x) => x.metadata.name === name) as (KubeObject & { spec?: { kubeconfigSecretRef?: { name?: string } } }) | undefined;
    if (have) {
      if (have.spec?.kubeconfigSecretRef?.name !== secretName) {
        throw new CliError(
          `APIServiceBinding ${name} already exists for another provider (Secret ${KONNECTOR_NAMESPACE}/${have.spec?.kubeconfigSecretRef?.name}); delete it first if you want to rebind`,
          Exit.FAILED,
        );
      }
      await o.consumer.mergePatch(BINDINGS, KONNECTOR_NAMESPACE, name, {
        spec: { permissionClaims: (b as KubeObject & { spec: { permissionClaims?: unknown } }).spec.permissionClaims ?? null },
      });
      o.io.err.write(`🔗 APIServiceBinding ${name} already existed; claims updated\n`);
      out.push(await o.consumer.get(BINDINGS, KONNECTOR_NAMESPACE, name));
    } else {
      out.push(await o.consumer.create(BINDINGS, b));
      o.io.err.write(`🔗 Created APIServiceBinding ${name}\n`);
    }
  }
  return out;
}

/** The whole `apiservice` flow. Returns the APIServiceBindings it created or found. */
export async function bindApiService(request: ExportRequestDoc, o: ApiServiceOptions): Promise<KubeObject[]> {
  const remoteInfo = parseRemoteKubeconfig(o.remoteKubeconfig);
  const remoteNs = o.remoteNamespace ?? remoteInfo.namespace;
  const reqName = request.metadata.name || `${request.spec.resources[0].resource}.${request.spec.resources[0].group ?? ''}`;

  // the resource policy, then consent: nothing is created when a resource or claim is refused
  const policy = checkRequest(request, o.allowResources ?? []);
  for (const d of policy.filter((x) => x.allowedByName)) o.io.err.write(`${allowedByNameWarning(d)}\n`);
  // where the konnector may touch Secrets: said before the claims are asked
  if (o.allNamespaces && o.allowNamespaces?.length) {
    throw new CliError(`${ALL_NAMESPACES_FLAG} and ${ALLOW_NAMESPACE_FLAG} contradict each other: pass one of them`, Exit.USAGE);
  }
  if (o.skipKonnector && (o.allowNamespaces?.length || o.allNamespaces)) {
    const flag = o.allNamespaces ? ALL_NAMESPACES_FLAG : ALLOW_NAMESPACE_FLAG;
    throw new CliError(`${flag} sets the namespaces of the konnector this command installs; drop --skip-konnector or the flag`, Exit.USAGE);
  }
  const konnector = o.skipKonnector ? undefined : await o.consumer.getOrNull<KonnectorDeployment>(DEPLOYMENTS, KONNECTOR_NAMESPACE, 'konnector');
  const namespaces = o.skipKonnector ? [] : await konnectorNamespaces(o.consumer, konnector, o);
  if (!o.skipKonnector) {
    const kept = installedNamespaces(konnector?.spec?.template?.spec?.containers?.[0]?.args, () => undefined).length > 0;
    const from = `${o.allowNamespaces?.length ? ALLOW_NAMESPACE_FLAG : "the kubeconfig context's namespace"}${kept ? " + the installed konnector's" : ''}`;
    o.io.err.write(`${namespaceScopeLine(namespaces, from)}\n`);
  }
  const decisions = new Map<number, ConsentDecisions>();
  for (const [i, r] of request.spec.resources.entries()) {
    const api = `${r.resource}.${r.group ?? ''}`;
    decisions.set(i, o.decided?.get(api) ?? (await askConsent(r.permissionClaims ?? [], o, api)));
  }
  const bindings = request.spec.resources.map(
    (r, i) =>
      apiServiceBindingKind.make(
        `${r.resource}.${r.group ?? ''}`,
        {
          kubeconfigSecretRef: { namespace: KONNECTOR_NAMESPACE, name: o.secretName ?? '<created>', key: 'kubeconfig' },
          ...(decisions.get(i)!.length ? { permissionClaims: decisions.get(i)! } : {}),
        } as never,
        { namespace: KONNECTOR_NAMESPACE },
      ) as unknown as KubeObject,
  );
  if (o.dryRun) {
    const req = { apiVersion: BIND_API_VERSION, kind: apiServiceExportRequestKind.kind, metadata: { name: reqName, namespace: remoteNs }, spec: request.spec };
    o.io.out.write(render([req, ...bindings], o.output ?? 'yaml'));
    o.io.err.write('🔎 dry run: nothing was created\n');
    return bindings;
  }

  await checkNoForeignCrds(o.consumer, request);
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
    const existingBindings = (await o.consumer.list(BINDINGS, KONNECTOR_NAMESPACE)).items;
    // the konnector's scope: the other bindings as they are, this request's resources and accepted claims
    const rebound = new Set(bindings.map((b) => b.metadata.name));
    const others = existingBindings.filter((b) => !rebound.has(b.metadata.name)) as Array<
      KubeObject & { spec?: { permissionClaims?: Array<PermissionClaim & { state?: string }> } }
    >;
    const scope: KonnectorScope = {
      bound: [
        ...existingBindings.map((b) => ({ group: b.metadata.name!.split('.').slice(1).join('.'), resource: b.metadata.name!.split('.')[0] })),
        ...request.spec.resources.map((r) => ({ group: r.group ?? '', resource: r.resource })),
      ],
      claimed: [
        ...others.flatMap((b) => (b.spec?.permissionClaims ?? []).filter((c) => c.state === 'Accepted')),
        ...[...decisions.values()].flat().filter((c) => c.state === 'Accepted'),
      ].map((c) => ({ group: c.group ?? '', resource: c.resource })),
    };
    if (!o.skipKonnector) await installKonnector(o.consumer, scope, o, namespaces);

    return await applyBindings(o, bindings, existingBindings, secret.name);
  } catch (e) {
    if (e instanceof ApiError && e.code === 403) {
      throw new CliError(`${e.message}\nThe provider kubeconfig is not allowed to do this; bind again with "kubectl bind <url>" to refresh it`, Exit.FAILED);
    }
    if (e instanceof ApiError && isNotFound(e) && e.path.includes(apiServiceExportRequestKind.plural)) {
      throw new CliError(`${e.message}\nThe provider has no APIServiceExportRequest API; is the URL a klutch bind backend?`, Exit.FAILED);
    }
    throw e;
  } finally {
    safeClose(remote);
  }
}

export { clean };
