/**
 * klutch-kit's package version, read from the nearest package.json named `klutch-kit` above this
 * file, so it is found from the sources (`runtime/core/`) and from the build (`lib/runtime/core/`).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** Set by bundlers (the krew plugin archive, scripts/krew.ts) where no package.json ships. */
declare const __KLUTCH_KIT_VERSION__: string | undefined;

/** `x.y.z` of package.json, or `0.0.0-unknown` when it cannot be found. */
export function packageVersion(): string {
  if (cached) return cached;
  if (typeof __KLUTCH_KIT_VERSION__ === 'string') return (cached = __KLUTCH_KIT_VERSION__);
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'klutch-kit' && pkg.version) return (cached = pkg.version);
    } catch {
      // no package.json here
    }
    dir = dirname(dir);
  }
  return (cached = '0.0.0-unknown');
}
