// The `klutch-kit` command. Each subcommand lives in its own module and is registered below with one
// line; bin/klutch-kit.js calls main().
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { clusterCommand } from './cluster.js';
import { ExitCode, exitCodeOf } from './errors.js';
import { packageCommand } from './package.js';
import { graphCommand } from './graph.js';
import { imageCommand } from './image.js';
import { initCommand } from './init.js';
import { migrateCommand } from './migrate.js';
import { validateCommand } from './validate.js';

/** Factories of the subcommands, in `--help` order. Add a command here. */
const COMMANDS: ReadonlyArray<() => Command> = [initCommand, clusterCommand, graphCommand, validateCommand, packageCommand, imageCommand, migrateCommand];

function packageVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const f = path.join(dir, 'package.json');
    if (fs.existsSync(f)) {
      const pkg = JSON.parse(fs.readFileSync(f, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'klutch-kit') return pkg.version ?? '0.0.0';
    }
    const parent = path.dirname(dir);
    if (parent === dir) return '0.0.0';
    dir = parent;
  }
}

/** The commander program with every subcommand. */
export function buildProgram(): Command {
  const program = new Command('klutch-kit')
    .description('Klutch as a TypeScript toolkit: constructs, stacks, runtime and real-cluster tooling')
    .version(packageVersion())
    .option('--verbose', 'print the stack trace of an error (default: one line)')
    .showHelpAfterError();
  for (const make of COMMANDS) program.addCommand(make());
  return program;
}

/** Commander's own exits (help, version, parse errors) become errors `main` maps to exit codes. */
function overrideExits(cmd: Command, err: { write(s: string): unknown }): void {
  cmd.exitOverride().configureOutput({ writeErr: (s) => err.write(s) });
  for (const c of cmd.commands) overrideExits(c, err);
}

/**
 * Runs the CLI and sets the exit code (runtime/cli/errors.ts): 0 done, 1 invalid input (`validate`),
 * 2 usage (bad flags or arguments, a missing or empty input), 3 the command failed. An error is
 * printed as one line (with its stack trace under --verbose).
 */
export async function main(argv: readonly string[] = process.argv, err: { write(s: string): unknown } = process.stderr): Promise<void> {
  const program = buildProgram();
  overrideExits(program, err);
  try {
    await program.parseAsync([...argv]);
  } catch (e) {
    if (e instanceof CommanderError) {
      // commander printed the problem (and the help); --help and --version end with 0
      process.exitCode = e.exitCode === 0 ? ExitCode.OK : ExitCode.USAGE;
      return;
    }
    err.write(`${formatError(e, argv.includes('--verbose'))}\n`);
    process.exitCode = exitCodeOf(e);
  }
}

/** `klutch-kit: <message>`, or the stack trace when `verbose`. */
export function formatError(e: unknown, verbose: boolean): string {
  if (verbose && e instanceof Error && e.stack) return `klutch-kit: ${e.stack}`;
  return `klutch-kit: ${e instanceof Error ? e.message : String(e)}`;
}
