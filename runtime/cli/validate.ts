// `klutch-kit validate <dir>`: checks every object in the YAML files of a folder against its schema
// (see constructs/validate/directory.ts). Exit code 1 when an object is invalid.
import { Command, Option } from 'commander';
import { formatIssue, validateDirectory, type CrossplaneTarget, type ValidationReport } from '../../constructs/validate/index.js';

export { validateDirectory };

export interface ValidateCliOptions {
  /** Crossplane releases: '2', '1.20' or 'both'. */
  readonly crossplane?: string;
  readonly strict?: boolean;
  readonly json?: boolean;
  /** Folders whose CRDs and XRDs are registered (e.g. the control plane for an app cluster's claims). */
  readonly schemas?: readonly string[];
}

/** Output streams (injectable for tests). */
export interface ValidateIo {
  out(line: string): void;
  err(line: string): void;
}

const stdio: ValidateIo = {
  out: (l) => process.stdout.write(l + '\n'),
  err: (l) => process.stderr.write(l + '\n'),
};

function targets(v: string | undefined): CrossplaneTarget[] {
  if (v === undefined || v === 'both') return ['2', '1.20'];
  if (v === '2' || v === '1.20') return [v];
  throw new Error(`validate --crossplane: expected 2, 1.20 or both, got ${JSON.stringify(v)}`);
}

/** One-line summary of a report. */
export function summaryLine(r: ValidationReport): string {
  const unknown = r.unknownKinds.length ? `, ${r.unknownKinds.length} kind(s) without schema (${r.unknownKinds.join('; ')})` : '';
  return (
    `${r.objects} object(s) in ${r.files} file(s): ${r.schemaChecked} checked against schemas, ` +
    `${r.shapeOnly} built-in kind(s) checked for shape only${unknown}; ${r.issues.length} error(s)`
  );
}

/** Runs the validation and prints the result; returns the exit code (0 valid, 1 invalid). */
export function runValidate(dir: string, opts: ValidateCliOptions = {}, io: ValidateIo = stdio): number {
  const report = validateDirectory(dir, { crossplane: targets(opts.crossplane), strict: opts.strict, schemaDirs: opts.schemas });
  if (opts.json) {
    io.out(JSON.stringify(report, null, 2));
  } else {
    for (const i of report.issues) io.err(formatIssue(i));
    (report.ok ? io.out : io.err)(`validate ${dir}: ${summaryLine(report)}`);
  }
  return report.ok ? 0 : 1;
}

/** The `validate` subcommand. */
export function validateCommand(): Command {
  return new Command('validate')
    .description('Check every object in the YAML files of <dir> against its schema (CRDs, CEL rules, derived claim CRDs)')
    .argument('<dir>', 'folder with YAML manifests, e.g. dist/control-plane')
    .addOption(new Option('--crossplane <release>', 'Crossplane release(s) to check Crossplane kinds against').choices(['2', '1.20', 'both']).default('both'))
    .option('--schemas <dir...>', 'also load the CRDs and XRDs of these folders (e.g. dist/control-plane when validating an app cluster)')
    .option('--strict', 'treat objects of kinds without any schema as errors', false)
    .option('--json', 'print the report as JSON', false)
    .action((dir: string, opts: ValidateCliOptions) => {
      process.exitCode = runValidate(dir, opts);
    });
}

/** Registers `validate` on a program. */
export function registerValidateCommand(program: Command): Command {
  return program.addCommand(validateCommand());
}
