/** Where a running sandbox records itself (`npm run sandbox -- --down` reads it). No heavy imports here. */
import * as os from 'node:os';
import * as path from 'node:path';

/** `$KLUTCH_SANDBOX_DIR`, else `~/.cache/klutch-kit/sandbox`. */
export const SANDBOX_DIR = process.env['KLUTCH_SANDBOX_DIR'] || path.join(os.homedir(), '.cache', 'klutch-kit', 'sandbox');
export const STATE_FILE = path.join(SANDBOX_DIR, 'state.json');

export interface SandboxState {
  /** The `npm run sandbox` process that holds everything (the OIDC provider and the stand-in run in it). */
  supervisorPid: number;
  dir: string;
  /** The local a8s operator's PostgreSQL data (one folder per instance, each with data/postmaster.pid). */
  a8sDataDir?: string;
  /** With `--a9s`: the broker stand-in's PostgreSQL data (same layout). */
  a9sDataDir?: string;
  backendUrl: string;
  issuer: string;
  clusters: Array<{ name: string; server: string; kubeconfigPath: string; dir: string; pids: number[] }>;
  processes: Array<{ name: string; pid: number; log: string }>;
}
