/**
 * Support for the synthesized-topology suite: synth of the example topology into a temporary
 * folder, the CRDs the topology needs but does not carry (Crossplane's and the providers', vendored
 * under imports/crds/), and the claim/XR CRDs Crossplane would derive from each generated XRD —
 * derived with the one shared helper of `klutch-kit validate` (constructs/validate/xcrd.ts).
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import { App } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { EXAMPLE_ARGOCD, EXAMPLE_FLUX, exampleTopology, type ExampleTopology } from '../../../constructs/app/example.js';
import { synthTopology, type SynthResult } from '../../../constructs/topology/index.js';
import {
  deriveClaimCrd,
  deriveXrCrd,
  formatIssue,
  validateDirectory,
  type CompositeResourceDefinitionLike,
  type CrossplaneTarget,
  type DerivedCrd,
} from '../../../constructs/validate/index.js';

export const REPO_ROOT = process.cwd();
export const VENDORED_CRDS = join(REPO_ROOT, 'imports', 'crds');

export interface SynthesizedExample {
  readonly topology: ExampleTopology;
  readonly result: SynthResult;
  /** Crossplane release the control plane installs: which derivation Crossplane applies. */
  readonly target: CrossplaneTarget;
}

/**
 * `npm run synth` into `outdir` (a temporary folder, never the repo's dist/): the example app of
 * cdk8s.yaml through the same synthTopology() call as constructs/app/main.ts, validated with
 * `klutch-kit validate` before it is written. Pass `app` and `topology` to synthesize an example
 * built earlier (e.g. to derive sample claims from the very catalogue that is synthesized).
 */
export async function synthExample(outdir: string, app = new App(), topology: ExampleTopology = exampleTopology(app)): Promise<SynthesizedExample> {
  const result = await synthTopology(app, {
    outdir,
    flux: EXAMPLE_FLUX,
    argocd: EXAMPLE_ARGOCD,
    validate: (dir) => {
      const r = validateDirectory(dir);
      return { ok: r.ok, problems: r.issues.map(formatIssue) };
    },
  });
  const target: CrossplaneTarget = topology.controlPlane.crossplane.version.isV1 ? '1.20' : '2';
  return { topology, result, target };
}

/**
 * Runs the real `npm run synth` program (constructs/app/main.ts under tsx) with
 * `CDK8S_OUTDIR=outdir`; resolves to its stdout, rejects with its stderr.
 */
export async function runSynthCommand(outdir: string): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(REPO_ROOT, 'constructs', 'app', 'main.ts')],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, CDK8S_OUTDIR: outdir },
      timeout: 120_000,
    },
  );
  return stdout;
}

/** Every file below `dir` (relative paths, sorted) with its content. */
export function folderContents(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return new Map([...out.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** Every document of a YAML file. */
export function yamlDocuments(file: string): KubernetesObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as KubernetesObject)
    .filter((o) => o !== null);
}

/**
 * The CRDs a control plane gets from Crossplane's Helm chart and from its provider packages — here
 * taken from the vendored upstream files (imports/crds/SOURCES.md) since neither Crossplane nor the
 * package manager runs: Crossplane core of the installed release, provider-kubernetes v1.2.1,
 * provider-anynines 1.5.0. (function-patch-and-transform ships an input schema, not a CRD.)
 */
export function platformCrds(target: CrossplaneTarget, crossplaneNamespace = 'crossplane-system'): Array<{ file: string; object: KubernetesObject }> {
  const dirs: Array<[dir: string, pkg?: string]> = [
    [`crossplane/${target === '2' ? 'v2' : 'v1.20'}`],
    ['provider-kubernetes', 'provider-kubernetes'],
    ['provider-anynines', 'provider-anynines'],
  ];
  const out: Array<{ file: string; object: KubernetesObject }> = [];
  for (const [d, pkg] of dirs) {
    for (const f of readdirSync(join(VENDORED_CRDS, d))
      .filter((x) => x.endsWith('.yaml'))
      .sort()) {
      for (const object of yamlDocuments(join(VENDORED_CRDS, d, f)))
        out.push({ file: `imports/crds/${d}/${f}`, object: pkg ? asInstalledByPackageManager(object, pkg, crossplaneNamespace) : object });
    }
  }
  return out;
}

/**
 * A provider's CRD as Crossplane's package manager installs it: a CRD with a conversion webhook
 * ships with an empty webhook Service reference (upstream files carry only `path: /convert`), and
 * the package manager points it at the provider's webhook Service in Crossplane's namespace (and
 * injects the CA bundle, not needed here: no object of another version is ever converted). The API
 * server refuses the CRD without a Service name and namespace.
 */
function asInstalledByPackageManager(crd: KubernetesObject, providerName: string, namespace: string): KubernetesObject {
  const spec = (crd as { spec?: { conversion?: { strategy?: string; webhook?: { clientConfig?: { service?: Record<string, unknown> } } } } }).spec;
  if (spec?.conversion?.strategy !== 'Webhook') return crd;
  const copy = structuredClone(crd) as typeof crd & { spec: typeof spec };
  const cc = ((copy.spec!.conversion!.webhook ??= {}).clientConfig ??= {});
  cc.service = { ...(cc.service ?? {}), name: providerName, namespace };
  return copy;
}

/**
 * Argo CD is outside the topology: the example installs Crossplane with an Argo CD Application
 * whose destination is the in-cluster server, so Argo CD runs in the control plane and owns the
 * namespace of the Application (`argocd`). Its Application CRD is not vendored in this repository, so this is a
 * STAND-IN written for this suite (not Argo CD's file): `argoproj.io/v1alpha1` Application with
 * Argo CD's required fields (spec.destination, spec.project), its top-level spec fields and
 * source/destination fields declared (unknown ones are rejected by strict field validation), and
 * the deeper helm/syncPolicy blocks preserved as-is.
 */
export function argoCdPrerequisites(objects: readonly KubernetesObject[]): KubernetesObject[] {
  // The namespaces Argo CD watches: those of the Argo CD objects the synth left to it.
  const namespaces = [...new Set(objects.filter((o) => (o.apiVersion ?? '').startsWith('argoproj.io/')).map((o) => o.metadata?.namespace ?? 'argocd'))].sort();
  const str = { type: 'string' };
  const open = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const source = {
    type: 'object',
    required: ['repoURL'],
    properties: {
      repoURL: str,
      path: str,
      targetRevision: str,
      chart: str,
      ref: str,
      name: str,
      helm: open,
      kustomize: open,
      directory: open,
      plugin: open,
    },
  };
  return [
    ...namespaces.map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })),
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'applications.argoproj.io', labels: { 'klutch-kit.test/stand-in': 'argo-cd' } },
      spec: {
        group: 'argoproj.io',
        names: { kind: 'Application', listKind: 'ApplicationList', plural: 'applications', singular: 'application', shortNames: ['app', 'apps'] },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1alpha1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                required: ['metadata', 'spec'],
                properties: {
                  apiVersion: str,
                  kind: str,
                  metadata: { type: 'object' },
                  spec: {
                    type: 'object',
                    required: ['destination', 'project'],
                    properties: {
                      destination: { type: 'object', properties: { name: str, namespace: str, server: str } },
                      project: str,
                      source,
                      sources: { type: 'array', items: source },
                      sourceHydrator: open,
                      syncPolicy: open,
                      ignoreDifferences: { type: 'array', items: open },
                      info: { type: 'array', items: open },
                      revisionHistoryLimit: { type: 'integer', format: 'int64' },
                    },
                  },
                  status: open,
                  operation: open,
                },
              },
            },
          },
        ],
      },
    } as KubernetesObject,
  ];
}

/** The claim and XR CRDs Crossplane derives from one XRD. */
export interface ClaimApi {
  readonly xrd: CompositeResourceDefinitionLike;
  readonly claim: DerivedCrd;
  readonly xr: DerivedCrd;
  readonly group: string;
  /** The referenceable version. */
  readonly version: string;
  readonly claimKind: string;
  readonly claimPlural: string;
  readonly xrKind: string;
}

/** Derives the claim and XR CRDs of every XRD (with claimNames) with the shared helper. */
export function claimApis(objects: readonly KubernetesObject[], target: CrossplaneTarget): ClaimApi[] {
  return objects
    .filter((o) => o.kind === 'CompositeResourceDefinition' && (o.apiVersion ?? '').startsWith('apiextensions.crossplane.io/'))
    .map((o) => o as unknown as CompositeResourceDefinitionLike)
    .filter((x) => x.spec.claimNames !== undefined)
    .map((xrd) => {
      const v = xrd.spec.versions.find((x) => x.referenceable) ?? xrd.spec.versions[0];
      return {
        xrd,
        claim: deriveClaimCrd(xrd, { crossplane: target }),
        xr: deriveXrCrd(xrd, { crossplane: target }),
        group: xrd.spec.group,
        version: v.name,
        claimKind: xrd.spec.claimNames!.kind,
        claimPlural: xrd.spec.claimNames!.plural,
        xrKind: xrd.spec.names.kind,
      };
    });
}

/** `Kind/ns/name: status message` lines of rejected verdicts, for readable failures. */
export function rejectedLines(verdicts: ReadonlyArray<{ ok: boolean; ref: string; path?: string; status: number; message: string }>): string[] {
  return verdicts.filter((v) => !v.ok).map((v) => `${v.path ?? v.ref}: ${v.status} ${v.message}`);
}

/**
 * The first path where `sent` is not contained in `got` (objects: every key of `sent` present and
 * contained; arrays: same length, items contained; scalars: equal), or undefined. The API server
 * may add defaults, but must not drop or change what was sent.
 */
export function notContained(sent: unknown, got: unknown, path = ''): string | undefined {
  if (Array.isArray(sent)) {
    if (!Array.isArray(got) || got.length !== sent.length) return `${path || '.'}: sent ${sent.length} items, got ${JSON.stringify(got)?.slice(0, 120)}`;
    for (let i = 0; i < sent.length; i++) {
      const d = notContained(sent[i], got[i], `${path}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  if (sent && typeof sent === 'object') {
    if (!got || typeof got !== 'object' || Array.isArray(got)) return `${path || '.'}: sent an object, got ${JSON.stringify(got)?.slice(0, 120)}`;
    for (const [k, v] of Object.entries(sent)) {
      if (v === undefined) continue;
      const d = notContained(v, (got as Record<string, unknown>)[k], `${path}.${k}`);
      if (d) return d;
    }
    return undefined;
  }
  return sent === got ? undefined : `${path || '.'}: sent ${JSON.stringify(sent)}, got ${JSON.stringify(got)}`;
}
