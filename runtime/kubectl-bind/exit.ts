/**
 * Exit codes, the CLI error and the names kubectl-bind's argument parsing needs: no import beyond
 * node, so that `kubectl bind --help` and `--version` run without the optional runtime peers
 * (main.ts loads the rest after parsing).
 */

/** Exit codes scripts can rely on. */
export const Exit = {
  OK: 0,
  /** API or network failure; see the message. */
  FAILED: 1,
  /** Bad flags, arguments or input files. */
  USAGE: 2,
  /** Login not completed: refused, timed out, or an answer for another session. */
  AUTH: 3,
  /** The provider answered the export request with phase Failed. */
  EXPORT_FAILED: 4,
  /** A permission claim was not accepted. */
  CONSENT: 5,
} as const;

/** Label `"true"` on the app-cluster Secrets kubectl-bind writes the provider kubeconfig into. */
export const PROVIDER_KUBECONFIG_LABEL = 'klutch.anynines.com/provider-kubeconfig';

export class CliError extends Error {
  constructor(
    message: string,
    readonly code: number = Exit.FAILED,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
