/**
 * scripts/bootstrap.mjs, the first step of `npm run sandbox` and `npm run test:all`: when it runs `npm ci` (node_modules
 * missing or not what package-lock.json names), what it does about missing Debian packages (install as root or with
 * password-less sudo, else print the command and stop), and which Node.js releases it accepts.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { SANDBOX_PACKAGES, debianPlan, nodeModulesState, nodeVersionOk, parsePackageList } from '../../scripts/bootstrap.mjs';

const lock = (packages: Record<string, { version: string; optional?: boolean }>) =>
  JSON.stringify({ name: 'klutch-kit', lockfileVersion: 3, packages: { '': { name: 'klutch-kit', version: '0.1.0' }, ...packages } });
const hidden = (packages: Record<string, { version: string }>) => JSON.stringify({ name: 'klutch-kit', lockfileVersion: 3, packages });

describe('nodeModulesState: whether npm ci is needed', () => {
  const want = lock({
    'node_modules/tsx': { version: '4.23.15' },
    'node_modules/jest/node_modules/chalk': { version: '4.1.2' },
    'node_modules/@esbuild/darwin-arm64': { version: '0.28.2', optional: true },
    'node_modules/@esbuild/linux-x64': { version: '0.28.2', optional: true },
  });

  it('node_modules missing (no npm record of an install): install', () => {
    expect(nodeModulesState(want, undefined)).toEqual({ fresh: false, reason: 'node_modules is missing (no node_modules/.package-lock.json)' });
  });

  it('everything at the locked versions, optional builds of other platforms absent: nothing to do', () => {
    const have = hidden({
      'node_modules/tsx': { version: '4.23.15' },
      'node_modules/jest/node_modules/chalk': { version: '4.1.2' },
      'node_modules/@esbuild/linux-x64': { version: '0.28.2' },
    });
    expect(nodeModulesState(want, have)).toEqual({ fresh: true, reason: 'node_modules matches package-lock.json' });
  });

  it('a package at another version (the lock moved on after a pull): install, naming both versions', () => {
    const have = hidden({ 'node_modules/tsx': { version: '4.20.0' }, 'node_modules/jest/node_modules/chalk': { version: '4.1.2' } });
    expect(nodeModulesState(want, have)).toEqual({ fresh: false, reason: 'tsx is 4.20.0 in node_modules, 4.23.15 in package-lock.json' });
  });

  it('a locked package not installed, or an installed package the lock does not name: install', () => {
    expect(nodeModulesState(want, hidden({ 'node_modules/tsx': { version: '4.23.15' } }))).toEqual({
      fresh: false,
      reason: 'chalk 4.1.2 is not installed',
    });
    const extra = hidden({
      'node_modules/tsx': { version: '4.23.15' },
      'node_modules/jest/node_modules/chalk': { version: '4.1.2' },
      'node_modules/left-pad': { version: '1.3.0' },
    });
    expect(nodeModulesState(want, extra)).toEqual({ fresh: false, reason: 'left-pad is installed but not in package-lock.json' });
  });

  it('an unreadable npm record: install; an unreadable package-lock.json: an error saying how to restore it', () => {
    expect(nodeModulesState(want, '{ not json')).toEqual({ fresh: false, reason: 'node_modules/.package-lock.json is not readable JSON' });
    expect(() => nodeModulesState('{ not json', hidden({}))).toThrow(
      /^bootstrap: package-lock\.json is not JSON \(.*\); restore it \(git checkout package-lock\.json\)$/,
    );
    expect(() => nodeModulesState('{"lockfileVersion": 1}', hidden({}))).toThrow(
      'bootstrap: package-lock.json has no "packages" (lockfileVersion >= 2 is needed); restore it',
    );
  });

  it('this clone after npm ci (what .ci/run does before scripts/test-all.sh): nothing to do', () => {
    const state = nodeModulesState(readFileSync('package-lock.json', 'utf8'), readFileSync('node_modules/.package-lock.json', 'utf8'));
    expect(state).toEqual({ fresh: true, reason: 'node_modules matches package-lock.json' });
  });
});

describe('debianPlan: the Debian packages', () => {
  const installed =
    (...names: string[]) =>
    (p: string) =>
      names.includes(p);

  it('all installed: nothing to do, whoever runs it', () => {
    expect(debianPlan(['openssl', 'postgresql'], installed('openssl', 'postgresql'), 1000, false)).toEqual({ action: 'none', missing: [] });
  });

  it('root installs the missing ones; a user with password-less sudo installs them with sudo', () => {
    expect(debianPlan(['openssl', 'postgresql'], installed('openssl'), 0, false)).toEqual({ action: 'install', sudo: false, missing: ['postgresql'] });
    expect(debianPlan(['openssl', 'postgresql'], installed(), 1000, true)).toEqual({ action: 'install', sudo: true, missing: ['openssl', 'postgresql'] });
  });

  it('an ordinary user without sudo: the exact command to run as root (and the apt-get line it stands for)', () => {
    const plan = debianPlan(SANDBOX_PACKAGES, installed('openssl'), 1000, false);
    expect(plan).toEqual({
      action: 'tell',
      missing: ['postgresql', 'iproute2'],
      lines: [
        'sudo bash scripts/apt-install.sh postgresql iproute2',
        '(the same as: sudo apt-get update && sudo apt-get install -y --no-install-recommends postgresql iproute2, except that it starts no system service they bring)',
      ],
    });
  });

  it('reads .ci/apt-packages.txt as CI does: one package a line, comments and blank lines skipped', () => {
    expect(parsePackageList('# Debian packages\nchromium\n\nopenssl  # the certificates\n  # indented comment\npostgresql\n')).toEqual([
      'chromium',
      'openssl',
      'postgresql',
    ]);
    expect(parsePackageList(readFileSync('.ci/apt-packages.txt', 'utf8'))).toContain('postgresql');
  });
});

describe('nodeVersionOk: package.json engines (^20.19.0 || >=22.12.0)', () => {
  it.each([
    ['v20.19.0', true],
    ['v20.20.2', true],
    ['v22.12.0', true],
    ['v24.1.0', true],
    ['v20.18.3', false],
    ['v22.11.0', false],
    ['v21.7.3', false],
    ['v18.20.0', false],
    ['nonsense', false],
  ])('%s → %s', (v, ok) => expect(nodeVersionOk(v)).toBe(ok));

  it('agrees with package.json', () => {
    expect(JSON.parse(readFileSync('package.json', 'utf8')).engines.node).toBe('^20.19.0 || >=22.12.0');
  });
});
