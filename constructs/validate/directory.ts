/**
 * `klutch-kit validate <dir>`: checks every object in the YAML files of a folder against its
 * schema.
 *
 * Schemas come from the bundle (Crossplane 2.x and 1.20, provider-kubernetes, P&T input,
 * provider-anynines), klutch-kit's binding API, every CRD found in the folder, and the XR and
 * claim CRDs derived from every XRD found in the folder. Also checked as documents of their own:
 * each Composition pipeline step's `input`, and each provider-kubernetes Object's
 * `spec.forProvider.manifest` whose kind is known.
 *
 * Kubernetes built-in kinds (Deployment, Service, ...) have no bundled schema: for them only the
 * basic shape (apiVersion, kind, metadata.name) is checked, and the report counts them as
 * `shapeOnly`, as are kustomize's `kustomization.yaml`, Crossplane package metadata and Flux Kustomizations. Kinds with no schema at all are listed as
 * `unknownKinds` (errors with `strict`, which `klutch-kit validate` and `directoryValidator` use by default).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { defaultRegistry } from './bundle.js';
import type { CrdLike, SchemaRegistry } from './registry.js';
import type { FieldError } from './schema-validator.js';
import type { CompositeResourceDefinitionLike, CrossplaneTarget } from './xcrd.js';

/** One problem, located by file, object and field path. */
export interface ValidationIssue {
  readonly file: string;
  /** `kind/namespace/name` or `kind/name` (or `document N` when the object has no identity). */
  readonly object: string;
  readonly path: string;
  readonly message: string;
}

export interface ValidationReport {
  readonly files: number;
  readonly objects: number;
  /** Files under the folder that are not manifests (not `.yaml`, `.yml` or `.json`), not read. */
  readonly skipped?: readonly string[];
  /** Objects checked against a full schema. */
  readonly schemaChecked: number;
  /** Built-in kinds checked for basic shape only. */
  readonly shapeOnly: number;
  /** `apiVersion kind` of objects without any schema (listed once each). */
  readonly unknownKinds: readonly string[];
  readonly issues: readonly ValidationIssue[];
  /** True when there is no issue. */
  readonly ok: boolean;
}

export interface ValidateOptions {
  /** Crossplane releases to check against. @default ['2', '1.20'] */
  readonly crossplane?: readonly CrossplaneTarget[];
  /** Treat objects of kinds without any schema as errors (`klutch-kit validate` does unless `--allow-unknown-kinds`). @default false */
  readonly strict?: boolean;
  /** A registry to start from (default: bundle + binding API). CRDs and XRDs found are added to it. */
  readonly registry?: SchemaRegistry;
  /**
   * Folders whose CRDs and XRDs are registered too, without validating their objects: e.g. the
   * control-plane folder when validating an app cluster's claims (their CRDs reach the app cluster
   * only at run time, through the konnector).
   */
  readonly schemaDirs?: readonly string[];
  /** Parsed documents whose CRDs and XRDs are registered (what `schemaDirs` reads). */
  readonly schemaDocuments?: readonly SourceDocument[];
  /** Called before each object is checked (progress of a long run). */
  readonly onObject?: (index: number, total: number, file: string) => void;
}

/** A parsed document with the file it came from. */
export interface SourceDocument {
  readonly file: string;
  readonly index: number;
  readonly doc: unknown;
}

/** `file: kind/namespace/name: field.path: message`. */
export function formatIssue(i: ValidationIssue): string {
  return `${i.file}: ${i.object}: ${i.path || '(object)'}: ${i.message}`;
}

const BUILTIN_GROUPS = new Set([
  '',
  'apps',
  'batch',
  'autoscaling',
  'policy',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'events.k8s.io',
  'networking.k8s.io',
  'rbac.authorization.k8s.io',
  'scheduling.k8s.io',
  'storage.k8s.io',
  'node.k8s.io',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'certificates.k8s.io',
  'flowcontrol.apiserver.k8s.io',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'resource.k8s.io',
]);

/**
 * Checked for shape only, like built-in kinds: kustomize's own files (`kustomization.yaml`) and
 * Crossplane package metadata (`crossplane.yaml` of a package source, `meta.pkg.crossplane.io`):
 * build inputs, not cluster objects, with no CRD; Flux's Kustomizations (`synthTopology`'s `flux`
 * output; Flux's CRDs are not in the bundle).
 */
const SHAPE_ONLY_GROUPS = new Set(['kustomize.config.k8s.io', 'meta.pkg.crossplane.io', 'kustomize.toolkit.fluxcd.io']);

function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '';
}

/** Manifest files, as `kubectl apply -f <dir>` reads them: `.yaml`, `.yml` and `.json`. */
export const MANIFEST_FILE = /\.(ya?ml|json)$/i;

/**
 * The files of a folder, recursively, sorted (skips dot folders and node_modules): the manifests
 * ({@link MANIFEST_FILE}) and the other files, which are skipped.
 */
export function listManifestFiles(dir: string): { manifests: string[]; skipped: string[] } {
  const manifests: string[] = [];
  const skipped: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.name.startsWith('.') || e.name === 'node_modules') continue;
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else (MANIFEST_FILE.test(e.name) ? manifests : skipped).push(p);
    }
  };
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new Error(`validate: ${JSON.stringify(dir)} is not a directory`);
  walk(dir);
  return { manifests, skipped };
}

/** Lists the manifest files (YAML and JSON) of a folder, recursively, sorted (skips dot folders and node_modules). */
export function listYamlFiles(dir: string): string[] {
  return listManifestFiles(dir).manifests;
}

/** Validates every object in the manifest files (YAML and JSON) under `dir`. */
export function validateDirectory(dir: string, opts: ValidateOptions = {}): ValidationReport {
  const { files, skipped, docs, issues } = readDirectory(dir);
  const schemaDocuments = [...(opts.schemaDocuments ?? [])];
  for (const sd of opts.schemaDirs ?? []) schemaDocuments.push(...readDirectory(sd, true).docs);
  const r = validateDocuments(docs, { ...opts, schemaDocuments });
  const rel = (f: string) => relative(dir, f).split('\\').join('/') || f;
  return { ...r, files: files.length, skipped: skipped.map(rel), issues: [...issues, ...r.issues], ok: issues.length === 0 && r.ok };
}

/**
 * Reads every YAML document under `dir`. With `definitionsOnly`, only files that contain a CRD or
 * XRD (or a List) are parsed, which skips most of a big folder cheaply.
 */
function readDirectory(dir: string, definitionsOnly = false): { files: string[]; skipped: string[]; docs: SourceDocument[]; issues: ValidationIssue[] } {
  const { manifests: files, skipped } = listManifestFiles(dir);
  const docs: SourceDocument[] = [];
  const issues: ValidationIssue[] = [];
  for (const f of files) {
    const rel = relative(dir, f).split('\\').join('/') || f;
    const text = readFileSync(f, 'utf8');
    if (definitionsOnly && !/^\s*"?kind"?: *"?(CustomResourceDefinition|CompositeResourceDefinition|List)"? *,? *$/m.test(text)) continue;
    parseAllDocuments(text).forEach((d, index) => {
      if (d.errors.length) {
        issues.push({ file: rel, object: `document ${index + 1}`, path: '', message: `YAML error: ${d.errors[0].message}` });
        return;
      }
      const doc = d.toJS();
      if (doc === null || doc === undefined) return;
      if (doc && typeof doc === 'object' && (doc as { kind?: unknown }).kind === 'List' && Array.isArray((doc as { items?: unknown }).items)) {
        for (const item of (doc as { items: unknown[] }).items) docs.push({ file: rel, index, doc: item });
      } else docs.push({ file: rel, index, doc });
    });
  }
  return { files, skipped, docs, issues };
}

function identity(doc: unknown, index: number): string {
  const o = doc as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown; generateName?: unknown } };
  const kind = typeof o?.kind === 'string' ? o.kind : '?';
  const name =
    typeof o?.metadata?.name === 'string' ? o.metadata.name : typeof o?.metadata?.generateName === 'string' ? `${o.metadata.generateName}*` : undefined;
  if (name === undefined) return `document ${index + 1} (${kind})`;
  return typeof o.metadata?.namespace === 'string' ? `${kind}/${o.metadata.namespace}/${name}` : `${kind}/${name}`;
}

/** Validates parsed documents (the core of validateDirectory; also used by the synth). */
export function validateDocuments(docs: readonly SourceDocument[], opts: ValidateOptions = {}): ValidationReport {
  const targets = opts.crossplane ?? ['2', '1.20'];
  const reg = opts.registry ?? defaultRegistry({ crossplane: targets });
  const issues: ValidationIssue[] = [];
  const unknown = new Set<string>();
  let schemaChecked = 0;
  let shapeOnly = 0;

  // 1. Register CRDs and XRDs found next to the objects (and in the schema documents).
  for (const { file, index, doc } of [...(opts.schemaDocuments ?? []), ...docs]) {
    const o = doc as { apiVersion?: string; kind?: string };
    try {
      if (o?.apiVersion === 'apiextensions.k8s.io/v1' && o.kind === 'CustomResourceDefinition') {
        reg.addCrd(doc as CrdLike, file, { replace: true });
      } else if (/^apiextensions\.crossplane\.io\/v[12]$/.test(o?.apiVersion ?? '') && o.kind === 'CompositeResourceDefinition') {
        reg.addXrd(doc as CompositeResourceDefinitionLike, file, targets);
      }
    } catch (e) {
      issues.push({ file, object: identity(doc, index), path: '', message: (e as Error).message });
    }
  }

  const push = (file: string, object: string, prefix: string, errs: readonly FieldError[]) => {
    for (const e of errs) issues.push({ file, object, path: prefix && e.path ? `${prefix}.${e.path}` : prefix || e.path, message: e.message });
  };

  // 2. Validate every object.
  for (const [n, { file, index, doc }] of docs.entries()) {
    opts.onObject?.(n, docs.length, file);
    const object = identity(doc, index);
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) {
      issues.push({ file, object, path: '', message: `Invalid value: a Kubernetes object must be a mapping, got ${JSON.stringify(doc)?.slice(0, 60)}` });
      continue;
    }
    const o = doc as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown; generateName?: unknown }; spec?: Record<string, unknown> };
    const shape: FieldError[] = [];
    if (typeof o.apiVersion !== 'string' || !o.apiVersion)
      shape.push({ path: 'apiVersion', message: `Required value: must be a non-empty string, got ${JSON.stringify(o.apiVersion)}` });
    if (typeof o.kind !== 'string' || !o.kind)
      shape.push({ path: 'kind', message: `Required value: must be a non-empty string, got ${JSON.stringify(o.kind)}` });
    if (!o.metadata || typeof o.metadata !== 'object') shape.push({ path: 'metadata', message: 'Required value: every object needs metadata' });
    else if (typeof o.metadata.name !== 'string' && typeof o.metadata.generateName !== 'string') {
      shape.push({ path: 'metadata.name', message: `Required value: name or generateName is required, got ${JSON.stringify(o.metadata.name)}` });
    }
    if (shape.length) {
      push(file, object, '', shape);
      continue;
    }
    const apiVersion = o.apiVersion as string;
    const kind = o.kind as string;
    const { schemas, errors } = reg.validate(doc);
    if (schemas.length) {
      schemaChecked++;
      push(file, object, '', errors);
      if (/^apiextensions\.crossplane\.io\/v[12]$/.test(apiVersion) && kind === 'CompositeResourceDefinition')
        push(file, object, '', checkXrdRules(doc as CompositeResourceDefinitionLike));
    } else if (BUILTIN_GROUPS.has(groupOf(apiVersion)) || SHAPE_ONLY_GROUPS.has(groupOf(apiVersion))) {
      shapeOnly++;
      if (apiVersion === 'apiextensions.k8s.io/v1' && kind === 'CustomResourceDefinition') push(file, object, '', checkCrdShape(doc as CrdLike));
    } else {
      unknown.add(`${apiVersion} ${kind}`);
      if (opts.strict)
        push(file, object, '', [
          {
            path: '',
            message: `no schema for ${apiVersion} ${kind}, so it is not checked: give the folder with its CRD or XRD (klutch-kit validate --schemas <folder>), or allow unknown kinds (--allow-unknown-kinds)`,
          },
        ]);
    }

    // 3. Embedded documents.
    if (/^apiextensions\.crossplane\.io\//.test(apiVersion) && kind === 'Composition' && Array.isArray(o.spec?.pipeline)) {
      (o.spec!.pipeline as Array<{ input?: unknown; step?: unknown }>).forEach((step, i) => {
        if (step?.input === undefined) return;
        const input = step.input as { apiVersion?: unknown; kind?: unknown };
        const prefix = `spec.pipeline[${i}].input`;
        if (typeof input?.apiVersion !== 'string' || typeof input?.kind !== 'string') {
          push(file, object, prefix, [{ path: '', message: 'Required value: a function input needs apiVersion and kind' }]);
          return;
        }
        const r = reg.validate(inputAsObject(input, step.step));
        if (r.schemas.length)
          push(
            file,
            object,
            prefix,
            r.errors.filter((e) => !e.path.startsWith('metadata')),
          );
        else unknown.add(`${input.apiVersion} ${input.kind}`);
        // Composed-resource templates (P&T `resources[].base`) are checked as partial objects.
        const resources = (input as { resources?: unknown }).resources;
        if (Array.isArray(resources)) {
          resources.forEach((res: { base?: unknown }, j) => {
            const basePrefix = `${prefix}.resources[${j}].base`;
            for (const [p, b] of templates(res?.base))
              push(file, object, p ? `${basePrefix}.${p}` : basePrefix, reg.validate(b, undefined, { partial: true }).errors);
          });
        }
      });
    }
    if (/^kubernetes(\.m)?\.crossplane\.io\//.test(apiVersion) && kind === 'Object') {
      const manifest = (o.spec?.forProvider as { manifest?: { apiVersion?: unknown; kind?: unknown } } | undefined)?.manifest;
      if (manifest && typeof manifest.apiVersion === 'string' && typeof manifest.kind === 'string') {
        const r = reg.validate(manifest);
        if (r.schemas.length) push(file, object, 'spec.forProvider.manifest', r.errors);
      }
    }
  }
  return {
    files: new Set(docs.map((d) => d.file)).size,
    objects: docs.length,
    schemaChecked,
    shapeOnly,
    unknownKinds: [...unknown].sort(),
    issues,
    ok: issues.length === 0,
  };
}

/**
 * A composed-resource template and, for a provider-kubernetes Object, its manifest: pairs of
 * (path relative to the template, object) for known shapes (apiVersion and kind strings).
 */
function templates(base: unknown): Array<[string, object]> {
  const b = base as { apiVersion?: unknown; kind?: unknown; spec?: { forProvider?: { manifest?: { apiVersion?: unknown; kind?: unknown } } } } | undefined;
  if (!b || typeof b.apiVersion !== 'string' || typeof b.kind !== 'string') return [];
  const out: Array<[string, object]> = [['', b]];
  const m = b.spec?.forProvider?.manifest;
  if (/^kubernetes(\.m)?\.crossplane\.io\//.test(b.apiVersion) && b.kind === 'Object' && m && typeof m.apiVersion === 'string' && typeof m.kind === 'string') {
    out.push(['spec.forProvider.manifest', m]);
  }
  return out;
}

/** Function inputs have no metadata; give them one so the root schema accepts them. */
function inputAsObject(input: object, step: unknown): object {
  const i = input as { metadata?: unknown };
  return i.metadata ? input : { ...input, metadata: { name: typeof step === 'string' && step ? step : 'input' } };
}

/** Fields Crossplane owns and overwrites, per XRD style (legacy v1 / LegacyCluster vs modern v2). */
const RESERVED_FIELDS = {
  legacy: ['spec.resourceRef', 'spec.resourceRefs', 'spec.claimRef', 'spec.writeConnectionSecretToRef', 'status.conditions', 'status.connectionDetails'],
  modern: ['spec.crossplane', 'status.crossplane', 'status.conditions'],
} as const;

/**
 * Crossplane's rules for XRDs that its CRD schema does not carry: the name is `<plural>.<group>`
 * (the generated CRD takes the XRD's name), exactly one version is referenceable (it becomes the
 * storage version) and it is served, and no version schema declares a field Crossplane reserves
 * (it would be overwritten).
 */
export function checkXrdRules(xrd: CompositeResourceDefinitionLike): FieldError[] {
  const errs: FieldError[] = [];
  const want = `${xrd.spec?.names?.plural}.${xrd.spec?.group}`;
  if (xrd.metadata?.name !== want) {
    errs.push({
      path: 'metadata.name',
      message: `Invalid value: ${JSON.stringify(xrd.metadata?.name)}: must be spec.names.plural+"."+spec.group (${JSON.stringify(want)})`,
    });
  }
  const versions = Array.isArray(xrd.spec?.versions) ? xrd.spec.versions : [];
  const refs = versions.filter((v) => v?.referenceable === true);
  if (refs.length !== 1) {
    errs.push({
      path: 'spec.versions',
      message: `Invalid value: exactly one version must be referenceable, found ${refs.length} (${refs.map((v) => v.name).join(', ') || 'none'})`,
    });
  } else if (refs[0].served !== true) {
    errs.push({
      path: `spec.versions[${versions.indexOf(refs[0])}].served`,
      message: `Invalid value: ${JSON.stringify(refs[0].served)}: the referenceable version ${JSON.stringify(refs[0].name)} must be served`,
    });
  }
  const scope = xrd.spec?.scope ?? (xrd.apiVersion === 'apiextensions.crossplane.io/v2' ? 'Namespaced' : 'LegacyCluster');
  const reserved = scope === 'LegacyCluster' ? RESERVED_FIELDS.legacy : RESERVED_FIELDS.modern;
  versions.forEach((v, i) => {
    const props = v?.schema?.openAPIV3Schema?.properties;
    for (const field of reserved) {
      const [top, name] = field.split('.');
      if (props?.[top]?.properties?.[name] !== undefined) {
        errs.push({
          path: `spec.versions[${i}].schema.openAPIV3Schema.properties.${top}.properties.${name}`,
          message: `Forbidden: ${field} is reserved by Crossplane (${scope} XRDs) and would be overwritten; rename the field`,
        });
      }
    }
  });
  return errs;
}

function checkCrdShape(crd: CrdLike): FieldError[] {
  const errs: FieldError[] = [];
  const name = crd.metadata?.name;
  const want = `${crd.spec?.names?.plural}.${crd.spec?.group}`;
  if (name !== want)
    errs.push({ path: 'metadata.name', message: `Invalid value: ${JSON.stringify(name)}: must be spec.names.plural+"."+spec.group (${JSON.stringify(want)})` });
  const versions = crd.spec?.versions ?? [];
  const storage = versions.filter((v) => (v as { storage?: boolean }).storage).length;
  if (storage !== 1) errs.push({ path: 'spec.versions', message: `Invalid value: exactly one version must be the storage version, found ${storage}` });
  return errs;
}
