// `klutch-kit validate <dir>`: checks every object in the manifest files (YAML, JSON) of a folder
// against its schema (see constructs/validate/directory.ts). Exit code 1 when an object is invalid,
// 2 when there is nothing to validate or a flag is wrong (runtime/cli/errors.ts).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { parseAllDocuments } from 'yaml';
import { formatIssue, listManifestFiles, validateDirectory, type CrossplaneTarget, type ValidationReport } from '../../constructs/validate/index.js';
import { ExitCode, UsageError } from './errors.js';

export { validateDirectory };

export interface ValidateCliOptions {
  /** Crossplane releases: '2', '1.20' or 'both'. */
  readonly crossplane?: string;
  /** Kept for scripts written before objects without a schema became errors by default: no effect. */
  readonly strict?: boolean;
  /** Accept objects of kinds without any schema, unchecked (listed in the summary). */
  readonly allowUnknownKinds?: boolean;
  readonly json?: boolean;
  /** Folders whose CRDs and XRDs are registered (e.g. the control plane for an app cluster's claims). */
  readonly schemas?: readonly string[];
}

/** Output streams (injectable for tests). */
export interface ValidateIo {
  out(line: string): void;
  err(line: string): void;
  /** A progress line that the next one replaces; `''` clears it. Absent: no progress (not a terminal). */
  progress?(line: string): void;
}

const stdio: ValidateIo = {
  out: (l) => process.stdout.write(l + '\n'),
  err: (l) => process.stderr.write(l + '\n'),
  // progress on stderr when it is a terminal, so that pipes and CI logs stay clean
  ...(process.stderr.isTTY ? { progress: (l: string) => process.stderr.write(`\r\x1b[K${l.slice(0, Math.max(20, (process.stderr.columns || 80) - 1))}`) } : {}),
};

function targets(v: string | undefined): CrossplaneTarget[] {
  if (v === undefined || v === 'both') return ['2', '1.20'];
  if (v === '2' || v === '1.20') return [v];
  throw new UsageError(`validate --crossplane: expected 2, 1.20 or both, got ${JSON.stringify(v)}`);
}

/** One-line summary of a report. */
export function summaryLine(r: ValidationReport): string {
  const unknown = r.unknownKinds.length ? `, ${r.unknownKinds.length} kind(s) without schema (${r.unknownKinds.join('; ')})` : '';
  return (
    `${r.objects} object(s) in ${r.files} file(s): ${r.schemaChecked} checked against schemas, ` +
    `${r.shapeOnly} built-in kind(s) checked for shape only${unknown}; ${r.issues.length} error(s)`
  );
}

/** A folder that exists, else a usage error naming the flag. */
function folder(flag: string, dir: string): void {
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory())
    throw new UsageError(`${flag}: ${JSON.stringify(dir)} is not a directory; pass a folder of manifests, e.g. dist/control-plane after \`npm run synth\``);
}

/** `a, b, c` or `a, b, c and 4 more`. */
function some(items: readonly string[], n = 5): string {
  return items.length > n ? `${items.slice(0, n).join(', ')} and ${items.length - n} more` : items.join(', ');
}

/** A folder the synth wrote: a cluster folder (phase folders `00-crds/` …) or a package source folder `<cluster>.packages/`. */
function isSynthFolder(d: string): boolean {
  if (d.endsWith('.packages')) return true;
  try {
    return readdirSync(d, { withFileTypes: true }).some((e) => e.isDirectory() && /^\d{2}-/.test(e.name));
  } catch {
    return false;
  }
}

/**
 * Folders the synth wrote beside `dir` (one per cluster, see {@link isSynthFolder}) that define
 * kinds of `unknownKinds` (`apiVersion kind`) with a CRD or an XRD (its XR or claim kind): the
 * `--schemas` arguments that were forgotten, with the kinds each one defines.
 */
export function schemaFoldersFor(dir: string, unknownKinds: readonly string[], given: readonly string[] = []): Map<string, string[]> {
  const wanted = new Map(unknownKinds.map((k) => [groupKind(k), k]));
  const found = new Map<string, string[]>();
  if (wanted.size === 0) return found;
  const parent = dirname(dir);
  const skip = new Set([resolve(dir), ...given.map((g) => resolve(g))]);
  for (const e of readdirSync(parent, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const sibling = join(parent, e.name);
    if (!e.isDirectory() || e.name.startsWith('.') || e.name === 'node_modules' || skip.has(resolve(sibling)) || !isSynthFolder(sibling)) continue;
    for (const f of listManifestFiles(sibling).manifests) {
      const text = readFileSync(f, 'utf8');
      if (!/CustomResourceDefinition|CompositeResourceDefinition/.test(text)) continue;
      for (const d of parseAllDocuments(text)) {
        if (d.errors.length) continue;
        const o = d.toJS() as { kind?: unknown; spec?: { group?: unknown; names?: { kind?: unknown }; claimNames?: { kind?: unknown } } } | null;
        if (!o || (o.kind !== 'CustomResourceDefinition' && o.kind !== 'CompositeResourceDefinition') || typeof o.spec?.group !== 'string') continue;
        for (const kind of [o.spec.names?.kind, o.spec.claimNames?.kind]) {
          const k = typeof kind === 'string' ? wanted.get(`${o.spec.group} ${kind}`) : undefined;
          if (!k) continue;
          const list = found.get(sibling) ?? [];
          if (!list.includes(k)) list.push(k);
          found.set(sibling, list);
        }
      }
    }
  }
  return found;
}

/** `anynines.com/v1 PostgresqlInstance` → `anynines.com PostgresqlInstance`. */
function groupKind(apiVersionKind: string): string {
  const [apiVersion, kind] = apiVersionKind.split(' ');
  return `${apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : ''} ${kind}`;
}

/**
 * Runs the validation and prints the result; returns the exit code: 0 valid, 1 invalid — an object of
 * a kind without any schema included, unless `allowUnknownKinds` (a claim without its XRD would
 * otherwise pass unchecked); when the schemas are in a folder beside `dir`, the message names the
 * `--schemas` to add.
 * A missing folder, or one without manifests or objects, is a {@link UsageError}.
 */
export function runValidate(dir: string, opts: ValidateCliOptions = {}, io: ValidateIo = stdio): number {
  folder('validate <dir>', dir);
  for (const s of opts.schemas ?? []) folder('validate --schemas', s);
  const { manifests, skipped } = listManifestFiles(dir);
  const skippedNote = skipped.length ? `; skipped ${skipped.length} file(s) that are not .yaml, .yml or .json: ${some(skipped.map((f) => basename(f)))}` : '';
  if (manifests.length === 0)
    throw new UsageError(`validate: no manifests (.yaml, .yml, .json) under ${JSON.stringify(dir)}${skippedNote}; nothing to validate`);
  const crossplane = targets(opts.crossplane);
  io.progress?.(`validate ${dir}: loading the schemas (Crossplane ${crossplane.join(' and ')}) …`);
  let report: ValidationReport;
  try {
    report = validateDirectory(dir, {
      crossplane,
      // An object nobody checked is not valid: without --allow-unknown-kinds each is an error.
      strict: !opts.allowUnknownKinds,
      schemaDirs: opts.schemas,
      onObject: io.progress && ((i, total, file) => io.progress!(`validate ${dir}: object ${i + 1}/${total} (${file})`)),
    });
  } finally {
    io.progress?.('');
  }
  if (report.objects === 0 && report.issues.length === 0)
    throw new UsageError(`validate: the ${manifests.length} manifest file(s) under ${JSON.stringify(dir)} hold no Kubernetes objects; nothing to validate`);
  // Claims whose XRD is in the control plane's folder: without --schemas they were not checked at all.
  const forgotten = schemaFoldersFor(dir, report.unknownKinds, opts.schemas);
  const code = !report.ok || forgotten.size > 0 ? ExitCode.INVALID : ExitCode.OK;
  if (opts.json) {
    io.out(JSON.stringify(forgotten.size ? { ...report, ok: false, schemasNeeded: Object.fromEntries(forgotten) } : report, null, 2));
  } else {
    // A kind whose definitions are beside gets one line naming the --schemas to add, not one error per object.
    const beside = [...forgotten.values()].flat();
    for (const i of report.issues) if (!beside.some((k) => i.message.startsWith(`no schema for ${k},`))) io.err(formatIssue(i));
    for (const [f, kinds] of forgotten) io.err(`validate ${dir}: ${kinds.join('; ')}: not checked, their definitions are in ${f}; add --schemas ${f}`);
    (code === ExitCode.OK ? io.out : io.err)(`validate ${dir}: ${summaryLine(report)}${skippedNote}`);
  }
  return code;
}

/** The `validate` subcommand. */
export function validateCommand(): Command {
  return new Command('validate')
    .description('Check every object in the manifest files (.yaml, .yml, .json) of <dir> against its schema (CRDs, CEL rules, derived claim CRDs)')
    .argument('<dir>', 'folder with manifests, e.g. dist/control-plane')
    .addOption(new Option('--crossplane <release>', 'Crossplane release(s) to check Crossplane kinds against').choices(['2', '1.20', 'both']).default('both'))
    .option('--schemas <dir...>', 'also load the CRDs and XRDs of these folders (e.g. dist/control-plane when validating an app cluster)')
    .option('--allow-unknown-kinds', 'accept objects of kinds without any schema, unchecked (by default each is an error)', false)
    .option('--strict', 'no effect: objects of kinds without any schema are errors by default (see --allow-unknown-kinds)', false)
    .option('--json', 'print the report as JSON', false)
    .action((dir: string, opts: ValidateCliOptions) => {
      process.exitCode = runValidate(dir, opts);
    });
}

/** Registers `validate` on a program. */
export function registerValidateCommand(program: Command): Command {
  return program.addCommand(validateCommand());
}
