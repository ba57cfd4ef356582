/** Version reported in ClusterBinding status.konnectorVersion: `v<package.json version>`. */
import { readFileSync } from 'node:fs';

function readVersion(): string {
  try {
    const url = new URL('../../package.json', import.meta.url);
    const v = (JSON.parse(readFileSync(url, 'utf8')) as { version?: string }).version;
    return v ? `v${v}` : 'v0.0.0-unknown';
  } catch {
    return 'v0.0.0-unknown';
  }
}

export const KONNECTOR_VERSION = process.env.KLUTCH_KONNECTOR_VERSION || readVersion();
