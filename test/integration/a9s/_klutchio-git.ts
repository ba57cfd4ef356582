/**
 * A local git repository standing in for klutchio's public one, so a suite can build provider-anynines from sources
 * fetched the way a user's machine fetches them (runtime/realinfra/klutchio.ts: `git fetch --depth 1 <url> <commit>`,
 * checkout, the commit and tree checks) without network access and without the mirror folder CI points
 * KLUTCH_KIT_KLUTCHIO_SRC at. The stand-in holds the three folders the build reads at the pinned trees (copied from
 * wherever ensureKlutchioSource() finds them today) in a commit of its own; the pin handed back differs from
 * PROVIDER_ANYNINES_SOURCE only in that repository and commit, so every tree check still runs against the real ids.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KLUTCHIO_SOURCE_FOLDERS } from '../../../runtime/realinfra/build.js';
import { type KlutchioPin, PROVIDER_ANYNINES_SOURCE, ensureKlutchioSource } from '../../../runtime/realinfra/klutchio.js';

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'klutch-kit test',
  GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'klutch-kit test',
  GIT_COMMITTER_EMAIL: 'test@example.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
};
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'init.defaultBranch=main', ...args], { cwd, env: GIT_ENV, encoding: 'utf8' }).trim();

export interface KlutchioFromGit {
  /** The checkout ensureKlutchioSource() made from the stand-in (what the build reads). */
  readonly dir: string;
  /** The pin the checkout was fetched and checked against. */
  readonly pin: KlutchioPin;
  /** Removes the stand-in, the checkout and its cache folder. */
  readonly cleanup: () => void;
}

export async function klutchioFromGitStandIn(log?: (l: string) => void): Promise<KlutchioFromGit> {
  const from = await ensureKlutchioSource(log ? { log } : {});
  const repo = mkdtempSync(join(tmpdir(), 'klutch-klutchio-standin-'));
  const cacheRoot = mkdtempSync(join(tmpdir(), 'klutch-klutchio-cache-'));
  const cleanup = () => {
    rmSync(repo, { recursive: true, force: true });
    rmSync(cacheRoot, { recursive: true, force: true });
  };
  try {
    git(repo, 'init', '-q');
    for (const f of KLUTCHIO_SOURCE_FOLDERS) cpSync(join(from, f), join(repo, f), { recursive: true });
    for (const sub of Object.keys(PROVIDER_ANYNINES_SOURCE.submodules)) rmSync(join(repo, sub), { recursive: true, force: true });
    git(repo, 'add', '-A');
    for (const [sub, commit] of Object.entries(PROVIDER_ANYNINES_SOURCE.submodules))
      git(repo, 'update-index', '--add', '--cacheinfo', `160000,${commit},${sub}`);
    git(repo, 'commit', '-q', '-m', 'klutchio stand-in');
    const pin: KlutchioPin = { ...PROVIDER_ANYNINES_SOURCE, repository: `file://${repo}`, commit: git(repo, 'rev-parse', 'HEAD') };
    const dir = await ensureKlutchioSource({ source: pin.repository, pin, cacheRoot, ...(log ? { log } : {}) });
    return { dir, pin, cleanup };
  } catch (e) {
    cleanup();
    throw e;
  }
}
