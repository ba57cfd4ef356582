// Exit codes and the usage error of the `klutch-kit` command (README.md "Exit codes" lists them).

/** Exit codes scripts can rely on. */
export const ExitCode = {
  OK: 0,
  /** The input was read and is wrong: `validate` found invalid objects. */
  INVALID: 1,
  /** Bad flags or arguments, a missing or empty input folder, nothing to work on: fix the command line. */
  USAGE: 2,
  /** The command could not do its work: an unreadable file, a failed build or push, a component that died, a bug. */
  FAILED: 3,
} as const;

/** An error the user fixes on the command line (exit code 2); the message says what to pass. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The exit code of an error thrown by a command. */
export function exitCodeOf(e: unknown): number {
  return e instanceof UsageError ? ExitCode.USAGE : ExitCode.FAILED;
}
