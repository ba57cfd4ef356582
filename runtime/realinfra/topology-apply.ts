// Applies a synthesized cluster folder (`dist/<cluster>/`, see constructs/topology synth) to a real API
// server the way a GitOps tool would: server-side apply, object by object, in the folder's own order
// (the `resources:` list of its kustomization.yaml = phase folders 00-crds, 10-namespaces, …), with
// strict field validation so that a misspelled or unknown field is an error instead of a warning
// the API server silently prunes. Each object gets its own verdict; nothing throws on a rejection.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';
import { apiErrorDetails, objectRef, waitForCrdsEstablished } from './apply.js';
import { isKindNotServed, type ObjectIdentity, ResourcePaths } from '../core/discovery.js';
import { clientOf } from './client.js';
import { sleep } from './_harness.js';

/** One object of a synthesized cluster folder. */
export interface FolderObject {
  /** File path relative to the cluster folder, e.g. `00-crds/customresourcedefinition…yaml`. */
  readonly path: string;
  readonly object: KubernetesObject;
}

/**
 * Reads a synthesized cluster folder in apply order: the `resources:` of its `kustomization.yaml`,
 * one object per file (a file with several documents yields each). Throws naming the file when a
 * listed file is missing or is not a Kubernetes object.
 */
export function readClusterFolder(dir: string): FolderObject[] {
  const kustomization = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as { resources?: unknown };
  if (!Array.isArray(kustomization?.resources)) throw new Error(`${dir}/kustomization.yaml: no resources list; is this a klutch-kit synth folder?`);
  const out: FolderObject[] = [];
  for (const path of kustomization.resources as string[]) {
    const text = readFileSync(join(dir, path), 'utf8');
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length > 0) throw new Error(`${dir}/${path}: not valid YAML: ${doc.errors[0].message}`);
      const object = doc.toJS() as KubernetesObject | null;
      if (object === null) continue;
      if (typeof object !== 'object' || typeof object.apiVersion !== 'string' || typeof object.kind !== 'string' || typeof object.metadata?.name !== 'string') {
        throw new Error(`${dir}/${path}: not a Kubernetes object (apiVersion, kind and metadata.name needed)`);
      }
      out.push({ path, object });
    }
  }
  return out;
}

/** The API server's verdict on one object. */
export interface ObjectVerdict {
  /** `Kind/namespace/name` */
  readonly ref: string;
  /** File of the object when it came from a folder. */
  readonly path?: string;
  readonly ok: boolean;
  /** HTTP status (200/201 when accepted, 0 when no answer). */
  readonly status: number;
  /** The API server's message when rejected, else ''. */
  readonly message: string;
  /** The object as the API server answered (accepted objects only). */
  readonly answer?: KubernetesObject;
}

export interface OrderedApplyOptions {
  /** Server-side dry run (`dryRun=All`). @default false */
  readonly dryRun?: boolean;
  /** @default "klutch-kit" */
  readonly fieldManager?: string;
  /** `fieldValidation` of each request. @default "Strict" (unknown and duplicate fields are errors) */
  readonly fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  /** How long to wait for applied CRDs to become Established before the first later object. @default 60000 */
  readonly establishTimeoutMs?: number;
  /** How long to retry when a kind is not (yet) in discovery right after its CRD was established. @default 10000 */
  readonly discoveryGraceMs?: number;
}

/**
 * Server-side applies `objects` one by one in the given order (no re-sorting: the order is what is
 * being tested). CRDs applied earlier are waited for (Established) before the next non-CRD object.
 * Returns one verdict per object, in order.
 */
export async function applyInOrder(
  kc: KubeConfig,
  objects: ReadonlyArray<KubernetesObject | FolderObject>,
  opts: OrderedApplyOptions = {},
): Promise<ObjectVerdict[]> {
  const paths = new ResourcePaths(clientOf(kc));
  const q = new URLSearchParams({ fieldManager: opts.fieldManager ?? 'klutch-kit', force: 'true', fieldValidation: opts.fieldValidation ?? 'Strict' });
  if (opts.dryRun) q.set('dryRun', 'All');
  const graceMs = opts.discoveryGraceMs ?? 10_000;
  const pendingCrds: string[] = [];
  const verdicts: ObjectVerdict[] = [];
  for (const item of objects) {
    const { object, path } = 'object' in item && 'path' in item ? item : { object: item as KubernetesObject, path: undefined };
    const ref = objectRef(object);
    const isCrd = object.kind === 'CustomResourceDefinition' && (object.apiVersion ?? '').startsWith('apiextensions.k8s.io/');
    if (!isCrd && pendingCrds.length > 0 && !opts.dryRun) {
      await waitForCrdsEstablished(kc, pendingCrds.splice(0), opts.establishTimeoutMs);
    }
    const started = Date.now();
    for (;;) {
      try {
        const objectPath = await paths.objectPath(object as ObjectIdentity, 'default');
        const answer = await clientOf(kc).request<KubernetesObject>('PATCH', `${objectPath}?${q.toString()}`, {
          body: object,
          contentType: 'application/apply-patch+yaml',
        });
        verdicts.push({ ref, path, ok: true, status: 200, message: '', answer });
        if (isCrd) pendingCrds.push(object.metadata!.name!);
        break;
      } catch (e) {
        // Right after a CRD is Established its kind can take a moment to appear in discovery.
        const notServed = isKindNotServed(e);
        if (notServed && Date.now() - started < graceMs) {
          await sleep(200);
          continue;
        }
        const d = apiErrorDetails(e);
        verdicts.push({ ref, path, ok: false, status: d.status, message: d.message });
        break;
      }
    }
  }
  if (pendingCrds.length > 0 && !opts.dryRun) await waitForCrdsEstablished(kc, pendingCrds, opts.establishTimeoutMs);
  return verdicts;
}
