/**
 * scripts/bootstrap.mjs from the outside, as on a fresh clone: the repository's committed files (`git archive HEAD`,
 * so no node_modules) in a temporary folder, the script run there with node. It decides to install, runs `npm ci`
 * (a stand-in on PATH that records its arguments and writes npm's record of the install, so nothing is downloaded),
 * then is a no-op; a moved package-lock.json makes it install again; a missing Debian package is installed through
 * the clone's scripts/apt-install.sh (a recorder here) as root, or named with the command to run as an ordinary user.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let dir: string;
let bin: string;
let tarball: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'klutch-kit-bootstrap-clone-'));
  bin = join(dir, 'bin');
  mkdirSync(bin);
  // the committed files of HEAD: what a clone has
  tarball = join(dir, 'head.tar');
  execFileSync('git', ['archive', '-o', tarball, 'HEAD'], { cwd: process.cwd() });
  const stub = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  // npm ci: records its arguments and leaves npm's record of an install of exactly the lock (as the real one does)
  stub('npm', `echo "$*" >> "$CALLS/npm"; mkdir -p node_modules && cp '${join(process.cwd(), 'node_modules', '.package-lock.json')}' node_modules/`);
  // dpkg-query -W -f=…: every package named is installed except those in $MISSING
  stub('dpkg-query', 'shift 2; for p in "$@"; do case " $MISSING " in *" $p "*) ;; *) echo "$p installed" ;; esac; done');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A fresh clone of its own (HEAD's files, this working tree's bootstrap under test), whose apt-install.sh records. */
function clone(): {
  repo: string;
  run: (args: string[], env?: Record<string, string>) => { status: number | null; stdout: string; stderr: string };
  calls: (what: 'npm' | 'apt') => string[];
} {
  const repo = mkdtempSync(join(dir, 'repo-'));
  // what the bootstrap reads of it (the whole tree would only cost time)
  execFileSync('tar', ['-x', '-f', tarball, '-C', repo, 'package.json', 'package-lock.json', '.ci', 'scripts']);
  copyFileSync(join(process.cwd(), 'scripts', 'bootstrap.mjs'), join(repo, 'scripts', 'bootstrap.mjs'));
  const callsDir = join(repo, '.calls');
  mkdirSync(callsDir);
  writeFileSync(join(repo, 'scripts', 'apt-install.sh'), `echo "$*" >> '${callsDir}/apt'\n`);
  const run = (args: string[], env: Record<string, string> = {}) => {
    const r = spawnSync(process.execPath, [join(repo, 'scripts', 'bootstrap.mjs'), ...args], {
      cwd: repo,
      encoding: 'utf8',
      env: { PATH: `${bin}:/usr/bin:/bin`, HOME: dir, MISSING: '', CALLS: callsDir, ...env },
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const calls = (what: 'npm' | 'apt') => (existsSync(join(callsDir, what)) ? readFileSync(join(callsDir, what), 'utf8').trim().split('\n') : []);
  return { repo, run, calls };
}

describe('the bootstrap on a fresh clone', () => {
  it('has no node_modules: decides to install (--dry-run says so and does nothing)', () => {
    const c = clone();
    expect(existsSync(join(c.repo, 'node_modules'))).toBe(false);
    const r = c.run(['sandbox', '--dry-run']);
    expect(r.stdout).toBe('[bootstrap] node_modules is missing (no node_modules/.package-lock.json): would run npm ci\n');
    expect(r.status).toBe(0);
    expect(c.calls('npm')).toEqual([]);
  });

  it('runs npm ci once, then is a no-op (what .ci/run sees after its own npm ci)', () => {
    const c = clone();
    const first = c.run(['test-all']);
    expect(first.stdout).toContain('[bootstrap] node_modules is missing (no node_modules/.package-lock.json): npm ci');
    expect(first.status).toBe(0);
    expect(c.calls('npm')).toEqual(['ci --no-audit --no-fund']);
    expect(c.run(['test-all'])).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(c.calls('npm')).toHaveLength(1);
  });

  it('installs again when package-lock.json moved on (a pull changed a version)', () => {
    const c = clone();
    expect(c.run(['sandbox']).status).toBe(0);
    const lockFile = join(c.repo, 'package-lock.json');
    const lock = JSON.parse(readFileSync(lockFile, 'utf8')) as { packages: Record<string, { version: string }> };
    lock.packages['node_modules/tsx']!.version = '999.0.0';
    writeFileSync(lockFile, JSON.stringify(lock));
    expect(c.run(['sandbox', '--dry-run']).stdout).toMatch(/^\[bootstrap\] tsx is \S+ in node_modules, 999\.0\.0 in package-lock\.json: would run npm ci\n$/);
  });

  it('a missing Debian package: root installs it through scripts/apt-install.sh, an ordinary user gets the command and a stop before npm', () => {
    const c = clone();
    const r = c.run(['sandbox'], { MISSING: 'postgresql' });
    if (process.getuid?.() === 0) {
      expect(r.stdout).toContain('[bootstrap] installing the missing Debian packages: postgresql');
      expect(c.calls('apt')).toEqual(['postgresql']);
      expect(c.calls('npm')).toEqual(['ci --no-audit --no-fund']);
    } else {
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('bootstrap: Debian packages missing: postgresql. This user may not install them');
      expect(r.stderr).toContain('sudo bash scripts/apt-install.sh postgresql');
      expect(c.calls('npm')).toEqual([]);
    }
  });
});
