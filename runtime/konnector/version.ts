/**
 * The konnector's version: `v<package.json version>` (or $KLUTCH_KONNECTOR_VERSION), and the form it
 * takes in ClusterBinding `status.konnectorVersion`.
 */
import { packageVersion } from '../core/version.js';

/** Full version (image tags, `--version`). */
export const KONNECTOR_VERSION = process.env.KLUTCH_KONNECTOR_VERSION || `v${packageVersion()}`;

/**
 * `status.konnectorVersion` in Klutch's format: Klutch's konnector writes `vMAJOR.MINOR.PATCH` (its
 * `version.BinaryVersion` keeps what precedes the first `-` and drops build metadata), `v0.0.0` for a
 * development build, and `unknown` when the version cannot be parsed (anynines/klutchio
 * `bind/pkg/version/version.go`, `bind/pkg/konnector/controllers/cluster/clusterbinding/clusterbinding_reconcile.go`).
 */
export function klutchKonnectorVersion(version: string): string {
  const core = version.replace(/^v/, '').split('+', 1)[0].split('-', 1)[0];
  if (!/^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/.test(core)) return 'unknown';
  return `v${core}`;
}
