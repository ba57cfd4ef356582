// Server-side apply of a set of manifests in dependency order: Namespaces and CustomResourceDefinitions
// first (waiting until every CRD is Established), then the remaining kinds in Helm's install order,
// custom resources last.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApiException, KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { ApiError, type KubeClient } from '../core/client.js';
import { type ObjectIdentity, ResourcePaths } from '../core/discovery.js';
import { clientOf } from './client.js';

export interface ApplyOptions {
  /** Server-side dry run (`dryRun=All`): the API server validates and admits, nothing is stored. @default false */
  readonly dryRun?: boolean;
  /** @default "klutch-kit" */
  readonly fieldManager?: string;
  /** Take ownership of conflicting fields. @default true */
  readonly force?: boolean;
  /** How long to wait for each applied CRD to become Established (not done in dry-run). @default 60000 */
  readonly establishTimeoutMs?: number;
  /** Keep applying after a failure and report all failures at the end. @default true */
  readonly continueOnError?: boolean;
}

export interface ApplyFailure {
  readonly object: KubernetesObject;
  /** `Kind/namespace/name` */
  readonly ref: string;
  /** HTTP status of the API server's answer (0 when none). */
  readonly status: number;
  /** The API server's message. */
  readonly message: string;
}

/** One or more objects were rejected; `failures` names each with the API server's message. */
export class ApplyError extends Error {
  constructor(
    readonly failures: readonly ApplyFailure[],
    readonly applied: readonly KubernetesObject[],
  ) {
    super(
      `server-side apply rejected ${failures.length} object(s):\n` + failures.map((f) => `  ${f.ref}: ${f.status || ''} ${f.message}`.trimEnd()).join('\n'),
    );
    this.name = 'ApplyError';
  }
}

/** Helm's install order (pkg/release/util/kind_sorter.go); kinds not listed (custom resources) come last. */
export const APPLY_ORDER: readonly string[] = [
  'PriorityClass',
  'Namespace',
  'NetworkPolicy',
  'ResourceQuota',
  'LimitRange',
  'PodDisruptionBudget',
  'ServiceAccount',
  'Secret',
  'ConfigMap',
  'StorageClass',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'Service',
  'DaemonSet',
  'Pod',
  'ReplicationController',
  'ReplicaSet',
  'Deployment',
  'HorizontalPodAutoscaler',
  'StatefulSet',
  'Job',
  'CronJob',
  'IngressClass',
  'Ingress',
  'APIService',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
];

/** `Kind/namespace/name` (or `Kind/name`) of an object, for messages. */
export function objectRef(o: KubernetesObject): string {
  const ns = o.metadata?.namespace;
  return `${o.kind ?? '?'}/${ns ? `${ns}/` : ''}${o.metadata?.name ?? '?'}`;
}

/** Sorts objects in apply order (stable within a kind). */
export function sortForApply<T extends KubernetesObject>(objects: readonly T[]): T[] {
  const rank = (o: KubernetesObject) => {
    const i = APPLY_ORDER.indexOf(o.kind ?? '');
    return i === -1 ? APPLY_ORDER.length : i;
  };
  return objects
    .map((o, i) => ({ o, i }))
    .sort((a, b) => rank(a.o) - rank(b.o) || a.i - b.i)
    .map((x) => x.o);
}

/** The API server's status code and message from a client-node error. */
export function apiErrorDetails(e: unknown): { status: number; message: string; reason?: string } {
  if (e instanceof ApiError) return { status: e.code, message: e.apiMessage, reason: e.reason };
  if (e instanceof ApiException) {
    const body: unknown = e.body;
    let parsed: { message?: string; reason?: string } | undefined;
    if (typeof body === 'string') {
      try {
        parsed = JSON.parse(body) as { message?: string; reason?: string };
      } catch {
        parsed = { message: body };
      }
    } else if (body && typeof body === 'object') {
      parsed = body as { message?: string; reason?: string };
    }
    return { status: e.code, message: parsed?.message ?? e.message, reason: parsed?.reason };
  }
  return { status: 0, message: e instanceof Error ? e.message : String(e) };
}

function validate(o: unknown, index: number): asserts o is KubernetesObject {
  const obj = o as KubernetesObject | undefined;
  if (!obj || typeof obj !== 'object' || typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string' || typeof obj.metadata?.name !== 'string') {
    throw new Error(`applyManifests: objects[${index}] needs apiVersion, kind and metadata.name, got ${JSON.stringify(o)?.slice(0, 200)}`);
  }
}

/**
 * Waits until each named CRD has condition Established=True and the API server serves it (a list of its storage
 * version answers 200: a just-Established CRD can answer 404 or 429 for a moment, before its handler has it);
 * fails early on NamesAccepted=False. `kc`: the cluster's kubeconfig, or a client of it.
 */
export async function waitForCrdsEstablished(kc: KubeConfig | KubeClient, names: readonly string[], timeoutMs = 60_000): Promise<void> {
  const client = kc instanceof KubeConfig ? clientOf(kc) : kc;
  const deadline = Date.now() + timeoutMs;
  for (const name of names) {
    let last: string;
    for (;;) {
      let crd: EstablishingCrd | undefined;
      try {
        crd = await client.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(name)}`);
      } catch (e) {
        const d = apiErrorDetails(e);
        if (d.status !== 404) throw new Error(`CustomResourceDefinition/${name}: reading it failed: ${d.status} ${d.message}`, { cause: e });
      }
      const conds = crd?.status?.conditions ?? [];
      const names = conds.find((c) => c.type === 'NamesAccepted' && c.status === 'False');
      if (names) throw new Error(`CustomResourceDefinition/${name}: names not accepted: ${names.message ?? names.reason}`);
      if (crd && conds.some((c) => c.type === 'Established' && c.status === 'True')) {
        const served = await crdServed(client, crd);
        if (served === true) break;
        last = `Established, but ${served}`;
      } else {
        last = `conditions: ${JSON.stringify(conds)}`;
      }
      if (Date.now() > deadline) throw new Error(`CustomResourceDefinition/${name} not Established and served within ${timeoutMs / 1000} s; ${last}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

interface EstablishingCrd {
  spec?: { group?: string; names?: { plural?: string }; versions?: { name: string; served?: boolean; storage?: boolean }[] };
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

/** `true` when a list of the CRD's storage version answers; else what it answered (404/429/503 while its handler starts). */
async function crdServed(client: KubeClient, crd: EstablishingCrd): Promise<true | string> {
  const v = crd.spec?.versions?.find((x) => x.storage) ?? crd.spec?.versions?.find((x) => x.served);
  if (!v || !crd.spec?.group || !crd.spec.names?.plural) return true;
  const list = `/apis/${crd.spec.group}/${v.name}/${crd.spec.names.plural}`;
  try {
    await client.request('GET', `${list}?limit=1`);
    return true;
  } catch (e) {
    const d = apiErrorDetails(e);
    if ([404, 429, 503].includes(d.status)) return `GET ${list} answered ${d.status} ${d.message}`;
    throw new Error(`CustomResourceDefinition/${crd.spec.names.plural}.${crd.spec.group}: listing it failed: ${d.status} ${d.message}`, { cause: e });
  }
}

/**
 * Server-side applies `objects` in dependency order: Namespaces and CRDs first (then waits until the
 * CRDs are Established, unless dry-run), then everything else in Helm's kind order, custom resources
 * last. Returns the objects as the API server answered. Throws an ApplyError listing every rejected
 * object with the API server's message.
 */
export async function applyManifests(kc: KubeConfig, objects: readonly KubernetesObject[], opts: ApplyOptions = {}): Promise<KubernetesObject[]> {
  objects.forEach((o, i) => validate(o, i));
  const paths = new ResourcePaths(clientOf(kc));
  const defaultNamespace = kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  const fieldManager = opts.fieldManager ?? 'klutch-kit';
  const force = opts.force ?? true;
  const continueOnError = opts.continueOnError ?? true;
  const isFirst = (o: KubernetesObject) =>
    o.kind === 'Namespace' || (o.kind === 'CustomResourceDefinition' && (o.apiVersion ?? '').startsWith('apiextensions.k8s.io/'));
  const first = sortForApply(objects.filter(isFirst));
  const rest = sortForApply(objects.filter((o) => !isFirst(o)));
  const applied: KubernetesObject[] = [];
  const failures: ApplyFailure[] = [];

  const applyOne = async (o: KubernetesObject) => {
    try {
      const q = new URLSearchParams({ fieldManager, force: String(force) });
      if (opts.dryRun) q.set('dryRun', 'All');
      const objectPath = await paths.objectPath(o as ObjectIdentity, defaultNamespace);
      // Sent as-is (JSON is YAML): no client-side model may drop fields such as x-kubernetes-validations.
      const res = await clientOf(kc).request<KubernetesObject>('PATCH', `${objectPath}?${q.toString()}`, {
        body: o,
        contentType: 'application/apply-patch+yaml',
      });
      applied.push(res);
    } catch (e) {
      const d = apiErrorDetails(e);
      failures.push({ object: o, ref: objectRef(o), status: d.status, message: d.message });
      if (!continueOnError) throw new ApplyError(failures, applied);
    }
  };

  for (const o of first) await applyOne(o);
  if (!opts.dryRun) {
    const crds = first.filter((o) => o.kind === 'CustomResourceDefinition' && !failures.some((f) => f.object === o)).map((o) => o.metadata!.name!);
    await waitForCrdsEstablished(kc, crds, opts.establishTimeoutMs);
  }
  for (const o of rest) await applyOne(o);
  if (failures.length > 0) throw new ApplyError(failures, applied);
  return applied;
}

/**
 * Reads every `*.yaml` / `*.yml` / `*.json` file under `dir` (recursively, in path order) and returns
 * the Kubernetes objects of all their documents; empty documents are skipped and `List` kinds are
 * flattened. Errors name the file and document.
 */
export function readManifests(dir: string): KubernetesObject[] {
  if (!fs.existsSync(dir)) throw new Error(`readManifests: ${dir} does not exist`);
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ya?ml|json)$/i.test(e.name)) files.push(p);
    }
  };
  if (fs.statSync(dir).isDirectory()) walk(dir);
  else files.push(dir);
  const out: KubernetesObject[] = [];
  for (const f of files) {
    const docs = parseAllDocuments(fs.readFileSync(f, 'utf8'));
    docs.forEach((doc, i) => {
      if (doc.errors.length > 0) throw new Error(`readManifests: ${f} document ${i + 1}: ${doc.errors[0]!.message}`);
      const v = doc.toJS() as unknown;
      if (v === null || v === undefined) return;
      const o = v as KubernetesObject & { items?: KubernetesObject[] };
      if (typeof o !== 'object' || typeof o.kind !== 'string' || typeof o.apiVersion !== 'string') {
        throw new Error(`readManifests: ${f} document ${i + 1} is not a Kubernetes object (needs apiVersion and kind)`);
      }
      if (o.kind.endsWith('List') && Array.isArray(o.items)) out.push(...o.items);
      else out.push(o);
    });
  }
  return out;
}
