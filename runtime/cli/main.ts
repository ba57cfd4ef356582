// The `klutch-kit` command. Each subcommand lives in its own module and is registered below with one
// line; bin/klutch-kit.js calls main().
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { clusterCommand } from './cluster.js';
import { validateCommand } from './validate.js';

/** Factories of the subcommands, in `--help` order. Add a command here. */
const COMMANDS: ReadonlyArray<() => Command> = [
  clusterCommand,
  validateCommand,
];

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
    .showHelpAfterError();
  for (const make of COMMANDS) program.addCommand(make());
  return program;
}

/** Runs the CLI; errors are printed without a stack trace and set exit code 1. */
export async function main(argv: readonly string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync([...argv]);
  } catch (e) {
    process.stderr.write(`klutch-kit: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  }
}
