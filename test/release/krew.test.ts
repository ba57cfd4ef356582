// The krew release artifacts (scripts/krew.ts): the archive is built, the manifest names it with
// its real sha256, and the plugin from the archive runs as krew installs it (a symlink in krew's
// bin folder to the extracted file).
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { KREW_PLATFORMS, buildKrewRelease, krewManifest } from '../../scripts/krew.js';
import { packageVersion } from '../../runtime/core/version.js';

jest.setTimeout(60_000);

const dir = mkdtempSync(join(tmpdir(), 'krew-test-'));
let result: Awaited<ReturnType<typeof buildKrewRelease>>;
beforeAll(async () => {
  result = await buildKrewRelease({ version: '1.2.3', baseUrl: 'https://example.com/releases/v1.2.3/', outDir: join(dir, 'out') });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('krew release', () => {
  it('writes a Plugin manifest naming the archive by URL and real sha256, for every platform', () => {
    const m = parse(readFileSync(result.manifest, 'utf8'));
    expect(result.manifest.endsWith('/bind.yaml')).toBe(true);
    expect(m).toMatchObject({
      apiVersion: 'krew.googlecontainertools.github.com/v1alpha2',
      kind: 'Plugin',
      metadata: { name: 'bind' },
      spec: { version: 'v1.2.3' },
    });
    expect(m.spec.shortDescription.length).toBeLessThanOrEqual(50);
    const sha = createHash('sha256').update(readFileSync(result.archive)).digest('hex');
    expect(m.spec.platforms.map((p: { selector: { matchLabels: { os: string; arch: string } } }) => p.selector.matchLabels)).toEqual(KREW_PLATFORMS);
    for (const p of m.spec.platforms) {
      expect(p).toMatchObject({ uri: 'https://example.com/releases/v1.2.3/kubectl-bind-v1.2.3.tar.gz', sha256: sha, bin: 'kubectl-bind' });
    }
  });

  it('the archive holds the files the manifest names; the plugin runs from a krew-style symlink and prints its version', () => {
    const x = join(dir, 'extract');
    mkdirSync(x);
    execFileSync('tar', ['-xzf', result.archive, '-C', x]);
    const m = parse(readFileSync(result.manifest, 'utf8'));
    for (const f of m.spec.platforms[0].files) expect(readFileSync(join(x, f.from)).length).toBeGreaterThan(0);
    const bin = join(dir, 'krew-bin');
    mkdirSync(bin);
    symlinkSync(join(x, 'kubectl-bind'), join(bin, 'kubectl-bind'));
    const out = execFileSync(join(bin, 'kubectl-bind'), ['--version'], { encoding: 'utf8' });
    expect(out.trim()).toBe('kubectl-bind v1.2.3 (klutch-kit; Klutch binding API klutch.anynines.com/v1alpha1)');
    const help = execFileSync(join(bin, 'kubectl-bind'), ['--help'], { encoding: 'utf8' });
    expect(help.split('\n')[0]).toBe('Usage: kubectl bind [options] [command] [url]');
    // the source tree reports the package version the same way
    expect(packageVersion()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('refuses bad options naming them', () => {
    const ok = { version: '1.0.0', uri: 'https://e.com/a.tar.gz', sha256: 'a'.repeat(64) };
    expect(() => krewManifest({ ...ok, version: 'latest' })).toThrow('krew: --version "latest" is not a semantic version such as 0.1.0');
    expect(() => krewManifest({ ...ok, uri: 'http://e.com/a.tar.gz' })).toThrow('krew: uri "http://e.com/a.tar.gz" must be an https URL of a .tar.gz archive');
    expect(() => krewManifest({ ...ok, sha256: 'xyz' })).toThrow('krew: sha256 "xyz" is not 64 lowercase hex digits');
    expect(() => krewManifest({ ...ok, name: 'Bind' })).toThrow('krew: --name "Bind" is not a krew plugin name (lowercase words joined by -)');
    return expect(buildKrewRelease({ version: '1.0.0', baseUrl: 'ftp://x', outDir: join(dir, 'bad') })).rejects.toThrow(
      'krew: --base-url "ftp://x" must be an https URL',
    );
  });
});
