/**
 * `npm run setup` (scripts/setup.sh) as a user without root meets it: the script runs in a copy of its folder
 * layout with stand-ins for dpkg, id, sudo, npm and npx on PATH (nothing is installed or built), so the test sees
 * what the script prints and how it exits when Debian packages are missing, when the Go step fails, and both.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'klutch-kit-setup-test-'));
  mkdirSync(join(dir, 'repo', 'scripts'), { recursive: true });
  mkdirSync(join(dir, 'repo', '.ci'));
  copyFileSync(join(process.cwd(), 'scripts', 'setup.sh'), join(dir, 'repo', 'scripts', 'setup.sh'));
  writeFileSync(join(dir, 'repo', '.ci', 'apt-packages.txt'), '# two packages\nopenssl\npostgresql\n');
  mkdirSync(join(dir, 'bin'));
  const stub = (name: string, body: string) => {
    writeFileSync(join(dir, 'bin', name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(dir, 'bin', name), 0o755);
  };
  // dpkg -s <p>: installed when <p> is in $INSTALLED; an ordinary user without password-less sudo.
  stub('dpkg', 'case " $INSTALLED " in *" $2 "*) exit 0 ;; *) exit 1 ;; esac');
  stub('id', 'echo 1000');
  stub('sudo', 'exit 1');
  stub('npm', 'echo "npm $*"');
  // npx tsx scripts/setup.ts: the Go step, as it ends when Go is missing (or succeeds).
  stub('npx', 'if [ "$GO_STEP" = fail ]; then echo "setup: the go command \\"go\\" does not run." >&2; exit 1; fi; echo "all built"');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function setup(env: { INSTALLED: string; GO_STEP: 'fail' | 'ok' }, ...args: string[]) {
  const r = spawnSync('bash', [join(dir, 'repo', 'scripts', 'setup.sh'), ...args], {
    encoding: 'utf8',
    env: { PATH: `${join(dir, 'bin')}:/usr/bin:/bin`, HOME: dir, ...env },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('npm run setup (scripts/setup.sh)', () => {
  it('Debian packages missing and no Go: names both, the packages with the apt-get line, and exits 1', () => {
    const r = setup({ INSTALLED: '', GO_STEP: 'fail' });
    expect(r.stdout).toContain('missing: openssl postgresql — this user may not install them');
    expect(r.stdout).toContain("sudo sh -c 'bash scripts/apt-install.sh openssl postgresql'");
    expect(r.stderr).toContain('the go command "go" does not run');
    expect(r.stdout).toMatch(
      /::: setup: not done after \d+ s: the Go-built binaries \(message above\) and the Debian packages: openssl postgresql \(command above\)\n$/,
    );
    expect(r.status).toBe(1);
  });

  it('Debian packages missing, the builds done: exits 1 naming the packages', () => {
    const r = setup({ INSTALLED: 'openssl', GO_STEP: 'ok' });
    expect(r.stdout).toContain('all built');
    expect(r.stdout).toMatch(/::: setup: done in \d+ s, except the Debian packages: postgresql \(command above\)\n$/);
    expect(r.status).toBe(1);
  });

  it('every package there, no Go: exits with the Go step’s code and says the builds are not done', () => {
    const r = setup({ INSTALLED: 'openssl postgresql', GO_STEP: 'fail' });
    expect(r.stdout).toContain('all installed: openssl postgresql');
    expect(r.stdout).toMatch(/::: setup: not done after \d+ s: the Go-built binaries \(message above\)\n$/);
    expect(r.status).toBe(1);
  });

  it('everything there: done, exit 0; --no-builds skips the Go step', () => {
    const ok = setup({ INSTALLED: 'openssl postgresql', GO_STEP: 'ok' });
    expect(ok.stdout).toContain('npm ci --no-audit --no-fund');
    expect(ok.stdout).toMatch(/::: setup: done in \d+ s\. Next: npm run sandbox/);
    expect(ok.status).toBe(0);
    const noBuilds = setup({ INSTALLED: 'openssl postgresql', GO_STEP: 'fail' }, '--no-builds');
    expect(noBuilds.stdout).not.toContain('Go-built binaries');
    expect(noBuilds.status).toBe(0);
  });
});
