/**
 * `directoryValidator()`: what `klutch-kit validate` checks, as a function of a folder — the
 * validator `synthTopology` runs on its output by default, and the one to pass to it (or call) with
 * other options.
 */
import { fail } from '../_errors.js';
import { defaultRegistry } from './bundle.js';
import { formatIssue, validateDirectory } from './directory.js';
import type { SchemaRegistry } from './registry.js';
import type { CrossplaneTarget } from './xcrd.js';

export interface DirectoryValidatorOptions {
  /** Crossplane releases whose schemas the Crossplane kinds are checked against. @default ['2', '1.20'] */
  readonly crossplane?: readonly CrossplaneTarget[];
  /**
   * Accept objects of kinds without any schema, unchecked (e.g. a third-party CRD installed outside
   * the topology). @default false - each such object is a problem naming its kind
   */
  readonly allowUnknownKinds?: boolean;
  /** Folders whose CRDs and XRDs are registered too, without validating their objects. @default - none */
  readonly schemaDirs?: readonly string[];
}

/** The result of validating a folder: `ok`, and one line per problem (`file: kind/namespace/name: field: message`). */
export interface DirectoryValidation {
  readonly ok: boolean;
  readonly problems: readonly string[];
}

/**
 * The bundled schemas per Crossplane target set, compiled at most once per process: each run
 * validates on a copy, to which the folder's own CRDs and XRDs are added.
 */
const bundled = new Map<string, SchemaRegistry>();

/**
 * A validator of a folder of manifests, as `klutch-kit validate <dir>` checks it: the schemas and CEL
 * rules of the bundle (Crossplane, provider-kubernetes, function-patch-and-transform input,
 * provider-anynines, Argo CD, Flux), the binding API, every CRD in the folder and the XR and claim
 * CRDs derived from every XRD in it. Objects of kinds without any schema are problems unless
 * `allowUnknownKinds`. `synthTopology` uses `directoryValidator()` unless told otherwise.
 */
export function directoryValidator(options: DirectoryValidatorOptions = {}): (dir: string) => DirectoryValidation {
  const P = 'DirectoryValidatorOptions';
  if (typeof options !== 'object' || options === null) fail(P, options, 'must be an object');
  const targets = options.crossplane ?? ['2', '1.20'];
  if (!Array.isArray(targets) || targets.length === 0 || targets.some((t) => t !== '2' && t !== '1.20'))
    fail(`${P}.crossplane`, targets, 'must list "2", "1.20" or both');
  if (options.allowUnknownKinds !== undefined && typeof options.allowUnknownKinds !== 'boolean')
    fail(`${P}.allowUnknownKinds`, options.allowUnknownKinds, 'must be a boolean');
  if (options.schemaDirs !== undefined && (!Array.isArray(options.schemaDirs) || options.schemaDirs.some((d) => typeof d !== 'string' || d === '')))
    fail(`${P}.schemaDirs`, options.schemaDirs, 'must be a list of folder paths');
  const key = [...targets].sort().join(',');
  return (dir: string) => {
    let reg = bundled.get(key);
    if (!reg) bundled.set(key, (reg = defaultRegistry({ crossplane: targets })));
    const report = validateDirectory(dir, {
      crossplane: targets,
      strict: !options.allowUnknownKinds,
      registry: reg.copy(),
      ...(options.schemaDirs ? { schemaDirs: options.schemaDirs } : {}),
    });
    return { ok: report.ok, problems: report.issues.map(formatIssue) };
  };
}
