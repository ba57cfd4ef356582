// The klutchio sources of provider-anynines (runtime/realinfra/klutchio.ts): fetched with git at the pinned commit
// into the cache and checked, from a local git repository standing in for klutchio's public one (no network), or a
// plain folder checked against the pinned trees; the errors for an unreachable URL, a commit or tree mismatch, a
// missing file and a missing git.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { KLUTCHIO_SOURCE_FOLDERS, PROVIDER_ANYNINES_SOURCE } from '../../runtime/realinfra/build.js';
import {
  KLUTCHIO_SOURCE_ENV,
  type KlutchioPin,
  checkKlutchioTrees,
  ensureKlutchioSource,
  gitTreeId,
  klutchioCheckoutDir,
  klutchioSourceKind,
} from '../../runtime/realinfra/klutchio.js';

const tmp: string[] = [];
const saved = process.env[KLUTCHIO_SOURCE_ENV];
afterEach(() => {
  for (const d of tmp.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  if (saved === undefined) delete process.env[KLUTCHIO_SOURCE_ENV];
  else process.env[KLUTCHIO_SOURCE_ENV] = saved;
});

const mkTmp = (prefix: string) => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tmp.push(d);
  return d;
};
const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.invalid',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.invalid',
};
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' }).trim();
const SUBMODULE = 'provider-anynines/build';
const SUBMODULE_COMMIT = '3cf6663fafcf22f5cb3e7b90cf21d981faa52230';

/** Writes a small klutchio-shaped tree (the files the build checks, an executable script) into `dir`. */
function writeSources(dir: string): void {
  for (const f of KLUTCHIO_SOURCE_FOLDERS) {
    fs.mkdirSync(path.join(dir, f), { recursive: true });
    fs.writeFileSync(path.join(dir, f, 'go.mod'), `module example.com/${f}\n`);
    fs.writeFileSync(path.join(dir, f, 'go.sum'), '');
  }
  fs.mkdirSync(path.join(dir, 'provider-anynines', 'cmd', 'provider'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'provider-anynines', 'cmd', 'provider', 'main.go'), 'package main\n');
  fs.mkdirSync(path.join(dir, 'provider-anynines', 'package'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'provider-anynines', 'package', 'crossplane.yaml'), 'kind: Provider\n');
  fs.mkdirSync(path.join(dir, 'provider-anynines', 'hack'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'provider-anynines', 'hack', 'prepare.sh'), '#!/bin/sh\n', { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'README.md'), 'not read by the build\n');
}

/** A git repository standing in for klutchio's public one: one commit of writeSources() plus a submodule entry; its pin. */
function standIn(): { repo: string; pin: KlutchioPin } {
  const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'klutchio-upstream-'));
  writeSources(repo);
  git(repo, 'init', '-q');
  git(repo, 'add', '-A');
  git(repo, 'update-index', '--add', '--cacheinfo', `160000,${SUBMODULE_COMMIT},${SUBMODULE}`);
  git(repo, 'commit', '-q', '-m', 'sources');
  const commit = git(repo, 'rev-parse', 'HEAD');
  const trees = Object.fromEntries(KLUTCHIO_SOURCE_FOLDERS.map((f) => [f, git(repo, 'rev-parse', `HEAD:${f}`)]));
  return {
    repo,
    pin: {
      ...PROVIDER_ANYNINES_SOURCE,
      repository: `file://${path.join(repo, 'no-such-repository.git')}`,
      commit,
      trees,
      submodules: { [SUBMODULE]: SUBMODULE_COMMIT },
    },
  };
}

// One stand-in for every test, only read (each test fetches into a cache folder of its own).
let up: { repo: string; pin: KlutchioPin };
beforeAll(() => {
  up = standIn();
});
afterAll(() => fs.rmSync(up.repo, { recursive: true, force: true }));

describe('the klutchio sources of provider-anynines', () => {
  it('pins one commit of klutchio’s public repository and the trees of the three folders', () => {
    expect(PROVIDER_ANYNINES_SOURCE.repository).toBe('https://github.com/anynines/klutchio.git');
    expect(PROVIDER_ANYNINES_SOURCE.commit).toMatch(/^0b4539e[0-9a-f]{33}$/);
    expect(Object.keys(PROVIDER_ANYNINES_SOURCE.trees)).toEqual(KLUTCHIO_SOURCE_FOLDERS);
  });

  it('fetches the pinned commit from the mirror of KLUTCH_KIT_KLUTCHIO_SRC into the cache, checks it, and finds it there next time', async () => {
    const { repo, pin } = up;
    const cacheRoot = mkTmp('klutchio-cache-');
    process.env[KLUTCHIO_SOURCE_ENV] = repo;
    const lines: string[] = [];
    const dir = await ensureKlutchioSource({ cacheRoot, pin, log: (l) => lines.push(l) });
    expect(dir).toBe(klutchioCheckoutDir({ cacheRoot, pin }));
    expect(dir).toBe(path.join(cacheRoot, 'klutchio', pin.commit));
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(pin.commit);
    expect(fs.readFileSync(path.join(dir, 'provider-anynines', 'cmd', 'provider', 'main.go'), 'utf8')).toBe('package main\n');
    expect(lines[0]).toBe(`klutchio: fetching commit ${pin.commit} from ${repo} into ${dir} …`);
    expect(lines[lines.length - 1]).toMatch(new RegExp(`^klutchio: commit ${pin.commit} checked out in [\\d.]+ s → `));
    expect(fs.readdirSync(path.join(cacheRoot, 'klutchio'))).toEqual([pin.commit]); // no temporary folder or lock left
    // warm: no git run (a git that does not exist would fail)
    expect(await ensureKlutchioSource({ cacheRoot, pin, git: '/nonexistent/git' })).toBe(dir);
  });

  it('fetches from the pinned repository when no mirror is set; an unreachable URL is an error naming it and the override', async () => {
    const { repo, pin } = up;
    const cacheRoot = mkTmp('klutchio-cache-');
    delete process.env[KLUTCHIO_SOURCE_ENV];
    await expect(ensureKlutchioSource({ cacheRoot, pin })).rejects.toThrow(
      `realinfra: provider-anynines: cannot fetch klutchio commit ${pin.commit} from ${pin.repository}: git fetch -q --depth 1 ${pin.repository} ${pin.commit} exited with 128`,
    );
    await expect(ensureKlutchioSource({ cacheRoot, pin })).rejects.toThrow(/Without network access, set KLUTCH_KIT_KLUTCHIO_SRC to a mirror/);
    expect(fs.readdirSync(path.join(cacheRoot, 'klutchio'))).toEqual([]); // nothing half-fetched
    // the same repository at the pinned URL is fetched
    const dir = await ensureKlutchioSource({ cacheRoot, pin: { ...pin, repository: `file://${repo}` } });
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(pin.commit);
  });

  it('a mirror without the pinned commit is an error naming the mirror', async () => {
    const { repo, pin } = up;
    const other = { ...pin, commit: 'f'.repeat(40) };
    await expect(ensureKlutchioSource({ source: repo, cacheRoot: mkTmp('klutchio-cache-'), pin: other })).rejects.toThrow(
      new RegExp(`cannot fetch klutchio commit f{40} from ${repo}: .*Check KLUTCH_KIT_KLUTCHIO_SRC=${repo}: it must be a git repository that holds the commit`),
    );
  });

  it('a checkout whose HEAD is not the pinned commit is an error naming both ids, and nothing is cached', async () => {
    const { repo, pin } = up;
    const cacheRoot = mkTmp('klutchio-cache-');
    // a git that reports another HEAD (as a mirror that answered with another commit would leave it)
    const fake = path.join(mkTmp('klutchio-git-'), 'git');
    fs.writeFileSync(fake, `#!/bin/sh\nif [ "$1" = rev-parse ]; then echo ${'a'.repeat(40)}; exit 0; fi\nexec git "$@"\n`, { mode: 0o755 });
    await expect(ensureKlutchioSource({ source: repo, cacheRoot, pin, git: fake })).rejects.toThrow(
      `realinfra: provider-anynines: ${repo} gave commit ${'a'.repeat(40)} where ${pin.commit} was asked for; the sources are not used.`,
    );
    expect(fs.readdirSync(path.join(cacheRoot, 'klutchio'))).toEqual([]);
  });

  it('checks the fetched trees too: a pin whose tree differs from its commit is an error naming the folder and both trees', async () => {
    const { repo, pin } = up;
    const wrong = { ...pin, trees: { ...pin.trees, 'clients/a9s-backup-manager': 'b'.repeat(40) } };
    await expect(ensureKlutchioSource({ source: repo, cacheRoot: mkTmp('klutchio-cache-'), pin: wrong })).rejects.toThrow(
      `clients/a9s-backup-manager/ has tree ${pin.trees['clients/a9s-backup-manager']}, expected ${'b'.repeat(40)}`,
    );
  });

  it('a missing git command is an error saying what needs it and how to do without', async () => {
    const { repo, pin } = up;
    await expect(ensureKlutchioSource({ source: repo, cacheRoot: mkTmp('klutchio-cache-'), pin, git: '/nonexistent/git' })).rejects.toThrow(
      'realinfra: provider-anynines: the git command "/nonexistent/git" was not found; it fetches the klutchio sources once. Install git (Debian: apt-get install git), or set KLUTCH_KIT_KLUTCHIO_SRC to a folder',
    );
  });

  it('uses a plain folder of the sources in place once its trees are the pinned ones (no git, no copy)', async () => {
    const { pin } = up;
    const plain = mkTmp('klutchio-plain-');
    writeSources(plain); // a copy without .git and without the submodule's folder
    const cacheRoot = mkTmp('klutchio-cache-');
    expect(await ensureKlutchioSource({ source: plain, cacheRoot, pin, git: '/nonexistent/git' })).toBe(plain);
    expect(fs.existsSync(path.join(cacheRoot, 'klutchio'))).toBe(false);
  });

  it('a plain folder with a changed file is an error naming the folder, its tree and the pinned one', async () => {
    const { pin } = up;
    const plain = mkTmp('klutchio-plain-');
    writeSources(plain);
    fs.writeFileSync(path.join(plain, 'clients', 'a9s-open-service-broker', 'go.sum'), 'changed\n');
    process.env[KLUTCHIO_SOURCE_ENV] = plain;
    const got = gitTreeId(plain, 'clients/a9s-open-service-broker', pin.submodules);
    await expect(ensureKlutchioSource({ cacheRoot: mkTmp('klutchio-cache-'), pin })).rejects.toThrow(
      `realinfra: provider-anynines: the klutchio sources in ${plain} (KLUTCH_KIT_KLUTCHIO_SRC) are not commit ${pin.commit}: ` +
        `clients/a9s-open-service-broker/ has tree ${got}, expected ${pin.trees['clients/a9s-open-service-broker']}.`,
    );
  });

  it('a plain folder with a missing file is an error naming every missing file', async () => {
    const { pin } = up;
    const plain = mkTmp('klutchio-plain-');
    writeSources(plain);
    fs.rmSync(path.join(plain, 'provider-anynines', 'go.mod'));
    fs.rmSync(path.join(plain, 'clients', 'a9s-backup-manager', 'go.sum'));
    await expect(ensureKlutchioSource({ source: plain, cacheRoot: mkTmp('klutchio-cache-'), pin })).rejects.toThrow(
      `missing: ${path.join(plain, 'provider-anynines', 'go.mod')}, ${path.join(plain, 'clients', 'a9s-backup-manager', 'go.sum')}.`,
    );
  });

  it('a mirror that is neither a URL nor a folder is an error naming the variable and its value', () => {
    expect(() => klutchioSourceKind('/nonexistent/klutchio')).toThrow(
      'realinfra: provider-anynines: KLUTCH_KIT_KLUTCHIO_SRC=/nonexistent/klutchio: /nonexistent/klutchio is not a folder.',
    );
  });

  it('tells git sources (URLs, work trees, bare repositories) from plain folders', () => {
    const { repo } = up;
    const bare = mkTmp('klutchio-bare-');
    git(bare, 'init', '-q', '--bare');
    const plain = mkTmp('klutchio-plain-');
    expect(klutchioSourceKind('https://github.com/anynines/klutchio.git')).toEqual({ kind: 'git', url: 'https://github.com/anynines/klutchio.git' });
    expect(klutchioSourceKind('git@github.com:anynines/klutchio.git')).toEqual({ kind: 'git', url: 'git@github.com:anynines/klutchio.git' });
    expect(klutchioSourceKind(repo)).toEqual({ kind: 'git', url: repo });
    expect(klutchioSourceKind(bare)).toEqual({ kind: 'git', url: bare });
    expect(klutchioSourceKind(plain)).toEqual({ kind: 'folder', dir: plain });
  });

  it('computes the tree ids git records (modes, links, git’s order, no empty folders, submodule entries)', () => {
    const d = mkTmp('klutchio-tree-');
    const t = path.join(d, 'top');
    for (const n of ['a', 'a.b', 'a-b', 'b']) fs.mkdirSync(path.join(t, n), { recursive: true });
    for (const n of ['a', 'a.b', 'a-b']) fs.writeFileSync(path.join(t, n, 'f'), `${n}\n`);
    fs.writeFileSync(path.join(t, 'a0'), 'file between a/ and a.b\n');
    fs.writeFileSync(path.join(t, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    fs.symlinkSync('a/f', path.join(t, 'link'));
    fs.mkdirSync(path.join(t, 'empty'));
    git(d, 'init', '-q');
    git(d, 'add', '-A');
    expect(gitTreeId(d, 'top')).toBe(git(d, 'write-tree', '--prefix=top/'));
    // a submodule entry, with or without its folder
    git(d, 'update-index', '--add', '--cacheinfo', `160000,${SUBMODULE_COMMIT},top/sub`);
    const withSub = git(d, 'write-tree', '--prefix=top/');
    expect(gitTreeId(d, 'top', { 'top/sub': SUBMODULE_COMMIT })).toBe(withSub);
    fs.mkdirSync(path.join(t, 'sub'));
    fs.writeFileSync(path.join(t, 'sub', 'checked-out'), 'x\n');
    expect(gitTreeId(d, 'top', { 'top/sub': SUBMODULE_COMMIT })).toBe(withSub);
    expect(gitTreeId(d, 'top/empty')).toBeUndefined();
  });

  it('checkKlutchioTrees accepts a folder whose trees are pinned, with the submodule entry taken from the pin', () => {
    const { repo, pin } = up;
    expect(() => checkKlutchioTrees(repo, pin, 'test')).not.toThrow();
    expect(() => checkKlutchioTrees(repo, { ...pin, submodules: {} }, 'test')).toThrow(/provider-anynines\/ has tree [0-9a-f]{40}, expected/);
  });
});
