#!/usr/bin/env node
/**
 * First use of a fresh clone: `npm run sandbox` and `npm run test:all` call this before anything else
 * (package.json), so that neither needs a set-up step of its own. Plain Node.js with no npm dependency on purpose:
 * it runs before `npm ci`, when node_modules (tsx, jest) may not be there.
 *
 *   node scripts/bootstrap.mjs sandbox     # the Debian packages the default sandbox needs, then node_modules
 *   node scripts/bootstrap.mjs test-all    # the Debian packages CI installs (.ci/apt-packages.txt), then node_modules
 *   node scripts/bootstrap.mjs sandbox --dry-run   # only say what it would do
 *
 * In that order, each step printing what it does:
 *   1. Node.js: the release package.json's "engines" asks for.
 *   2. Debian packages: the missing ones are installed where this user may (root, or sudo without a password prompt,
 *      through scripts/apt-install.sh, which starts no system service); else the exact command is printed and the
 *      bootstrap stops (exit 1) before anything else happens.
 *   3. node_modules: `npm ci` when it is missing or stale, i.e. when npm's record of what it installed
 *      (node_modules/.package-lock.json) disagrees with package-lock.json; else nothing (so after `npm ci` — as
 *      .ci/run does — this is a no-op).
 * The Go-built binaries come after, from the command itself (with progress and an estimate); `npm run setup` builds
 * them ahead, as an optional warm-up.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The Debian packages of the default sandbox (claims style, a8s; `npm run sandbox`): openssl (the clusters'
 * certificates), PostgreSQL's server (the local a8s operator's databases) and iproute2 (`ip`: the loopback of the
 * Crossplane harness's network namespaces). The a9s engines (`--a9s`) and the real node (`--pods`) need more:
 * .ci/apt-packages.txt lists everything.
 */
export const SANDBOX_PACKAGES = ['openssl', 'postgresql', 'iproute2'];

/** The packages of a list file: one per line, `#` comments and blank lines skipped. */
export function parsePackageList(text) {
  return text
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter(Boolean);
}

/**
 * Whether node_modules matches package-lock.json, and why not. `lock` is package-lock.json's text, `installed` that of
 * node_modules/.package-lock.json (npm writes it on every install; undefined when it is not there). Fresh when every
 * package the lock names is installed at the locked version, optional ones (platform-specific builds) only when
 * installed, and nothing else is installed.
 * @returns {{ fresh: boolean, reason: string }}
 */
export function nodeModulesState(lock, installed) {
  if (installed === undefined) return { fresh: false, reason: 'node_modules is missing (no node_modules/.package-lock.json)' };
  let want;
  let have;
  try {
    want = JSON.parse(lock).packages;
  } catch (e) {
    throw new Error(`bootstrap: package-lock.json is not JSON (${e.message}); restore it (git checkout package-lock.json)`, { cause: e });
  }
  if (!want || typeof want !== 'object') throw new Error('bootstrap: package-lock.json has no "packages" (lockfileVersion >= 2 is needed); restore it');
  try {
    have = JSON.parse(installed).packages ?? {};
  } catch {
    return { fresh: false, reason: 'node_modules/.package-lock.json is not readable JSON' };
  }
  for (const [name, entry] of Object.entries(want)) {
    if (name === '' || !name.includes('node_modules/')) continue; // the project itself and its workspaces
    const got = have[name];
    if (!got) {
      if (entry.optional) continue;
      return { fresh: false, reason: `${name.replace(/^.*node_modules\//, '')} ${entry.version ?? ''} is not installed`.trim() };
    }
    if (entry.version !== got.version)
      return { fresh: false, reason: `${name.replace(/^.*node_modules\//, '')} is ${got.version} in node_modules, ${entry.version} in package-lock.json` };
  }
  for (const name of Object.keys(have)) {
    if (!(name in want)) return { fresh: false, reason: `${name.replace(/^.*node_modules\//, '')} is installed but not in package-lock.json` };
  }
  return { fresh: true, reason: 'node_modules matches package-lock.json' };
}

/** Whether Node.js `version` (e.g. `v20.19.0`) satisfies package.json's engines, `^20.19.0 || >=22.12.0`. */
export function nodeVersionOk(version) {
  const m = /^v?(\d+)\.(\d+)\./.exec(version);
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return (major === 20 && minor >= 19) || (major === 22 && minor >= 12) || major > 22;
}

/**
 * What to do about the Debian packages `wanted`, given the installed ones, this user's id and whether sudo works
 * without a password: `{ action: 'none' }`, `{ action: 'install', sudo, missing }` or `{ action: 'tell', missing, lines }`
 * (the commands to run as root; the bootstrap stops).
 */
export function debianPlan(wanted, isInstalled, uid, sudoWorks) {
  const missing = wanted.filter((p) => !isInstalled(p));
  if (missing.length === 0) return { action: 'none', missing };
  if (uid === 0) return { action: 'install', sudo: false, missing };
  if (sudoWorks) return { action: 'install', sudo: true, missing };
  return {
    action: 'tell',
    missing,
    lines: [
      `sudo bash scripts/apt-install.sh ${missing.join(' ')}`,
      `(the same as: sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing.join(' ')}, except that it starts no system service they bring)`,
    ],
  };
}

/** The packages dpkg reports installed, of `packages` (one dpkg-query for all); undefined when there is no dpkg. */
function installedPackages(packages) {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Package} ${db:Status-Status}\\n', ...packages], { encoding: 'utf8' });
  if (r.error) return undefined;
  return new Set(
    r.stdout
      .split('\n')
      .map((l) => l.split(' '))
      .filter(([, status]) => status === 'installed')
      .map(([name]) => name.replace(/:.*/, '')),
  );
}

function main(argv) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const [purpose, ...flags] = argv;
  if (purpose !== 'sandbox' && purpose !== 'test-all') {
    process.stderr.write(`bootstrap: unknown purpose ${JSON.stringify(purpose)}; expected "sandbox" or "test-all"\n`);
    return 2;
  }
  const unknown = flags.filter((f) => f !== '--dry-run');
  if (unknown.length > 0) {
    process.stderr.write(`bootstrap: unknown option ${JSON.stringify(unknown[0])}; expected --dry-run\n`);
    return 2;
  }
  const dryRun = flags.includes('--dry-run');
  const say = (line) => process.stdout.write(`[bootstrap] ${line}\n`);

  // 1. Node.js
  if (!nodeVersionOk(process.version)) {
    process.stderr.write(
      `bootstrap: Node.js ${process.version} is too old: ^20.19.0 or >= 22.12.0 is needed (package.json "engines"); see https://nodejs.org\n`,
    );
    return 1;
  }

  // 2. Debian packages
  const wanted = purpose === 'sandbox' ? SANDBOX_PACKAGES : parsePackageList(readFileSync(join(root, '.ci', 'apt-packages.txt'), 'utf8'));
  const installed = installedPackages(wanted);
  if (!installed) {
    say(`not a Debian/Ubuntu system (no dpkg-query): make sure the equivalents of these are installed: ${wanted.join(' ')}`);
  } else {
    const uid = typeof process.getuid === 'function' ? process.getuid() : -1;
    const sudoWorks = uid !== 0 && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0;
    const plan = debianPlan(wanted, (p) => installed.has(p), uid, sudoWorks);
    if (plan.action === 'tell') {
      process.stderr.write(
        `bootstrap: Debian packages missing: ${plan.missing.join(' ')}. This user may not install them (not root, no password-less sudo); nothing else was done.\n` +
          `  Run, as a user who may:\n    ${plan.lines[0]}\n  ${plan.lines[1]}\n  then this command again.\n`,
      );
      return 1;
    }
    if (plan.action === 'install' && dryRun) say(`would install the missing Debian packages${plan.sudo ? ' with sudo' : ''}: ${plan.missing.join(' ')}`);
    else if (plan.action === 'install') {
      say(`installing the missing Debian packages${plan.sudo ? ' with sudo' : ''}: ${plan.missing.join(' ')}`);
      const cmd = plan.sudo ? ['sudo', 'bash', 'scripts/apt-install.sh', ...plan.missing] : ['bash', 'scripts/apt-install.sh', ...plan.missing];
      const r = spawnSync(cmd[0], cmd.slice(1), { cwd: root, stdio: 'inherit' });
      if (r.status !== 0) {
        process.stderr.write(`bootstrap: installing ${plan.missing.join(' ')} failed (exit ${r.status}); the output is above\n`);
        return 1;
      }
    }
  }

  // 3. node_modules
  const lockFile = join(root, 'package-lock.json');
  const hidden = join(root, 'node_modules', '.package-lock.json');
  const state = nodeModulesState(readFileSync(lockFile, 'utf8'), existsSync(hidden) ? readFileSync(hidden, 'utf8') : undefined);
  if (!state.fresh && dryRun) say(`${state.reason}: would run npm ci`);
  else if (state.fresh && dryRun) say(`${state.reason}: nothing to install`);
  else if (!state.fresh) {
    say(`${state.reason}: npm ci (installs package-lock.json's exact versions; about a minute)`);
    const t0 = Date.now();
    try {
      execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
    } catch (e) {
      process.stderr.write(`bootstrap: npm ci failed (${e.message}); its output is above\n`);
      return 1;
    }
    say(`npm ci took ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exit(main(process.argv.slice(2)));
