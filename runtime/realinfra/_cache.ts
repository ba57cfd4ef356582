/**
 * The build cache of the harness's Go-built binaries and fetched sources (build.ts, klutchio.ts,
 * pulumi-build.ts): its root folder, and the lock that keeps two processes from building the same
 * thing at once. A leaf of those three.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pidAlive, sleep } from './_harness.js';

/** The cache root: `KLUTCH_KIT_CACHE`, else `$XDG_CACHE_HOME/klutch-kit`, else `~/.cache/klutch-kit`. */
export function defaultCacheRoot(): string {
  const env = process.env['KLUTCH_KIT_CACHE'];
  if (env && env.trim() !== '') return path.resolve(env);
  const xdg = process.env['XDG_CACHE_HOME'];
  return path.join(xdg && xdg.trim() !== '' ? xdg : path.join(os.homedir(), '.cache'), 'klutch-kit');
}

/**
 * Takes an exclusive lock (a directory) so that two processes (two test runs, a test run and the CLI)
 * never build the same component at once. A lock whose owner died is taken over. Shared with
 * pulumi-build.ts.
 */
export async function withLock<T>(lockDir: string, log: (l: string) => void, what: string, fn: () => Promise<T>): Promise<T> {
  fs.mkdirSync(path.dirname(lockDir), { recursive: true });
  let announced = false;
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      fs.writeFileSync(path.join(lockDir, 'owner'), String(process.pid));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let owner = NaN;
      try {
        owner = Number(fs.readFileSync(path.join(lockDir, 'owner'), 'utf8'));
      } catch {
        // owner file not written yet: treat as alive for a moment
      }
      const stat = fs.statSync(lockDir, { throwIfNoEntry: false });
      const young = stat !== undefined && Date.now() - stat.mtimeMs < 5000;
      if (Number.isFinite(owner) && !pidAlive(owner)) {
        fs.rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      if (!Number.isFinite(owner) && !young) {
        fs.rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      if (!announced) {
        log(`${what}: another process (pid ${Number.isFinite(owner) ? owner : '?'}) is building it; waiting`);
        announced = true;
      }
      await sleep(1000);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lockDir, { recursive: true, force: true });
  }
}
