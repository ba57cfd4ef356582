// provider-anynines in the harness: the package the constructs emit is the release the harness builds from
// the klutchio sources; where the sources are, the error for missing ones and the cache key (tree + go version).
// Fetching and checking them: klutchio-source.test.ts.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { AnyninesProviderFlavour } from '../../constructs/crossplane/index.js';
import { ApiStyle } from '../../constructs/dataservice/index.js';
import { PROVIDER_ANYNINES_NAMESPACED_PACKAGE, PROVIDER_ANYNINES_PACKAGE } from '../../constructs/topology/index.js';
import {
  A9S_COMPONENTS,
  ALL_COMPONENTS,
  KLUTCHIO_SOURCE_FOLDERS,
  LATE_COMPONENTS,
  PROVIDER_ANYNINES_SOURCE,
  PROVIDER_ANYNINES_V2_SOURCE,
  checkKlutchioSource,
  klutchioSourceDir,
  planComponent,
} from '../../runtime/realinfra/build.js';
import { PROVIDER_ANYNINES_PREFIX, providerAnyninesBuild, providerAnyninesObject, providerAnyninesPackageYaml } from '../../runtime/realinfra/anynines.js';

const tag = (ref: string) => ref.slice(ref.lastIndexOf(':') + 1);
const tmp: string[] = [];
const ENVS = ['KLUTCH_KIT_KLUTCHIO_SRC', 'KLUTCH_KIT_KLUTCHIO_V2_SRC'];
const saved = ENVS.map((e) => process.env[e]);

afterEach(() => {
  for (const d of tmp.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  ENVS.forEach((e, i) => {
    if (saved[i] === undefined) delete process.env[e];
    else process.env[e] = saved[i];
  });
});

/** A minimal klutchio-shaped tree (what planComponent reads; nothing is built). */
function fakeKlutchio(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'klutchio-'));
  tmp.push(d);
  for (const f of KLUTCHIO_SOURCE_FOLDERS) {
    fs.mkdirSync(path.join(d, f), { recursive: true });
    fs.writeFileSync(path.join(d, f, 'go.mod'), `module example.com/${f}\n`);
    fs.writeFileSync(path.join(d, f, 'go.sum'), '');
  }
  fs.mkdirSync(path.join(d, 'provider-anynines', 'cmd', 'provider'), { recursive: true });
  fs.writeFileSync(path.join(d, 'provider-anynines', 'cmd', 'provider', 'main.go'), 'package main\n');
  fs.mkdirSync(path.join(d, 'provider-anynines', 'package', 'crds'), { recursive: true });
  fs.writeFileSync(path.join(d, 'provider-anynines', 'package', 'crossplane.yaml'), 'apiVersion: meta.pkg.crossplane.io/v1alpha1\nkind: Provider\n');
  fs.writeFileSync(path.join(d, 'provider-anynines', 'package', 'crds', 'a.yaml'), '---\nkind: CustomResourceDefinition\n');
  return d;
}

describe('provider-anynines in the harness', () => {
  it('the constructs emit the release the harness builds (klutchio 1.5.0, commit 0b4539e)', () => {
    expect(tag(PROVIDER_ANYNINES_PACKAGE)).toBe(PROVIDER_ANYNINES_SOURCE.version);
    expect(PROVIDER_ANYNINES_SOURCE).toMatchObject({ version: 'v1.5.0', commit: '0b4539e812e01710b8fd0ef20db347d230b1dbbb' });
    expect(PROVIDER_ANYNINES_PREFIX).toBe('public.ecr.aws/w5n9a2g2/klutch');
    expect(providerAnyninesObject()).toMatchObject({
      apiVersion: 'pkg.crossplane.io/v1',
      kind: 'Provider',
      metadata: { name: 'provider-anynines' },
      spec: { package: PROVIDER_ANYNINES_PACKAGE },
    });
  });

  it('is built by `npm run realinfra` (the last components, both flavours, in the late stage)', () => {
    expect(A9S_COMPONENTS).toEqual(['provider-anynines', 'provider-anynines-v2']);
    expect(ALL_COMPONENTS.slice(-2)).toEqual(['provider-anynines', 'provider-anynines-v2']);
    expect(LATE_COMPONENTS).toEqual(expect.arrayContaining(['provider-anynines', 'provider-anynines-v2']));
  });

  it('the API style picks the provider flavour, and the flavour the build and package: namespaced XRs → Klutch’s v2 branch (commit 51671bc)', () => {
    expect(ApiStyle.CLAIMS.anyninesProvider).toBe(AnyninesProviderFlavour.CLUSTER_SCOPED);
    expect(ApiStyle.NAMESPACED_XR.anyninesProvider).toBe(AnyninesProviderFlavour.NAMESPACED);
    expect(providerAnyninesBuild(ApiStyle.CLAIMS.anyninesProvider)).toEqual({
      component: 'provider-anynines',
      pin: PROVIDER_ANYNINES_SOURCE,
      package: PROVIDER_ANYNINES_PACKAGE,
      prefix: PROVIDER_ANYNINES_PREFIX,
    });
    const v2 = providerAnyninesBuild(ApiStyle.NAMESPACED_XR.anyninesProvider);
    expect(v2).toEqual({
      component: 'provider-anynines-v2',
      pin: PROVIDER_ANYNINES_V2_SOURCE,
      package: PROVIDER_ANYNINES_NAMESPACED_PACKAGE,
      prefix: 'public.ecr.aws/h6x7g6i7/klutch',
    });
    expect(tag(PROVIDER_ANYNINES_NAMESPACED_PACKAGE)).toBe(PROVIDER_ANYNINES_V2_SOURCE.version);
    expect(PROVIDER_ANYNINES_V2_SOURCE).toMatchObject({
      commit: '51671bc5753c8ad246a22969d67419dda9646a02',
      env: 'KLUTCH_KIT_KLUTCHIO_V2_SRC',
      trees: { 'provider-anynines': '24499cc2f0cf0935d7b3fa7247ba61f96f2f23ff' },
    });
    // the clients are the same trees as the release's: only provider-anynines differs
    for (const f of KLUTCHIO_SOURCE_FOLDERS.filter((x) => x !== 'provider-anynines'))
      expect(PROVIDER_ANYNINES_V2_SOURCE.trees[f]).toBe(PROVIDER_ANYNINES_SOURCE.trees[f]);
    expect(providerAnyninesObject(AnyninesProviderFlavour.NAMESPACED)).toMatchObject({ spec: { package: PROVIDER_ANYNINES_NAMESPACED_PACKAGE } });
  });

  it('provider-anynines-v2: its sources in the plain folder KLUTCH_KIT_KLUTCHIO_V2_SRC names (not the release’s variable), its own cache folder and key', () => {
    const cacheRoot = path.join('/c', 'cache');
    delete process.env['KLUTCH_KIT_KLUTCHIO_V2_SRC'];
    const release = fakeKlutchio();
    process.env['KLUTCH_KIT_KLUTCHIO_SRC'] = release;
    expect(klutchioSourceDir({ cacheRoot, pin: PROVIDER_ANYNINES_V2_SOURCE })).toBe(path.join(cacheRoot, 'klutchio', PROVIDER_ANYNINES_V2_SOURCE.commit));
    const v2 = fakeKlutchio();
    process.env['KLUTCH_KIT_KLUTCHIO_V2_SRC'] = v2;
    expect(klutchioSourceDir({ cacheRoot, pin: PROVIDER_ANYNINES_V2_SOURCE })).toBe(v2);
    expect(klutchioSourceDir({ cacheRoot })).toBe(release);
    const a = planComponent('provider-anynines', { klutchioDir: release, cacheRoot, goBinary: '/nonexistent/go' });
    const b = planComponent('provider-anynines-v2', { klutchioDir: v2, cacheRoot, goBinary: '/nonexistent/go' });
    expect(path.basename(b.binary)).toBe('provider-anynines-v2');
    expect(path.basename(b.dir)).toMatch(/^provider-anynines-v2-[0-9a-f]{64}$/);
    expect(b.key).not.toBe(a.key);
    // missing sources: the error names the v2 component, its commit and its variable
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'klutchio-empty-'));
    tmp.push(empty);
    expect(() => planComponent('provider-anynines-v2', { klutchioDir: empty })).toThrow(
      new RegExp(
        `^realinfra: provider-anynines-v2: the klutchio sources are incomplete or absent in ${empty}; missing: .*go\\.mod.*` +
          `klutchio branch migration-crossplane-v2 \\(commit ${PROVIDER_ANYNINES_V2_SOURCE.commit}\\).*set KLUTCH_KIT_KLUTCHIO_V2_SRC to a mirror`,
      ),
    );
  });

  it('finds the sources in the plain folder KLUTCH_KIT_KLUTCHIO_SRC names, else in the cache at the pinned commit', () => {
    const cacheRoot = path.join('/c', 'cache');
    const checkout = path.join(cacheRoot, 'klutchio', PROVIDER_ANYNINES_SOURCE.commit);
    delete process.env['KLUTCH_KIT_KLUTCHIO_SRC'];
    expect(klutchioSourceDir({ cacheRoot })).toBe(checkout);
    const d = fakeKlutchio();
    process.env['KLUTCH_KIT_KLUTCHIO_SRC'] = d;
    expect(klutchioSourceDir({ cacheRoot })).toBe(d);
    // a git mirror is fetched into the cache
    fs.mkdirSync(path.join(d, '.git'));
    expect(klutchioSourceDir({ cacheRoot })).toBe(checkout);
    process.env['KLUTCH_KIT_KLUTCHIO_SRC'] = 'https://mirror.example.invalid/klutchio.git';
    expect(klutchioSourceDir({ cacheRoot })).toBe(checkout);
  });

  it('names every missing part when the sources are absent', () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'klutchio-empty-'));
    tmp.push(d);
    expect(() => checkKlutchioSource(d)).toThrow(
      new RegExp(
        `missing: ${path.join(d, 'provider-anynines', 'go.mod')}.*${path.join(d, 'clients', 'a9s-backup-manager', 'go.sum')}.*KLUTCH_KIT_KLUTCHIO_SRC`.replace(
          /\//g,
          '\\/',
        ),
      ),
    );
    expect(() => planComponent('provider-anynines', { klutchioDir: d })).toThrow(/klutchio sources are incomplete or absent/);
  });

  it('caches by the source tree and the go version: a changed file of a client module is a new key', () => {
    const d = fakeKlutchio();
    const cacheRoot = path.join(d, 'cache');
    const a = planComponent('provider-anynines', { klutchioDir: d, cacheRoot, goBinary: '/nonexistent/go' });
    expect(a.dir).toBe(path.join(cacheRoot, 'realinfra', `provider-anynines-${a.key}`));
    expect(a.moduleDir).toBe(path.join(d, 'provider-anynines'));
    expect(a.args).toEqual([
      'build',
      '-buildvcs=false',
      '-trimpath',
      '-gcflags=all=-dwarf=false',
      '-ldflags',
      '-s -w',
      '-o',
      'provider-anynines',
      './cmd/provider',
    ]);
    expect(planComponent('provider-anynines', { klutchioDir: d, cacheRoot, goBinary: '/nonexistent/go' }).key).toBe(a.key);
    fs.writeFileSync(path.join(d, 'clients', 'a9s-open-service-broker', 'client.go'), 'package osb\n');
    expect(planComponent('provider-anynines', { klutchioDir: d, cacheRoot, goBinary: '/nonexistent/go' }).key).not.toBe(a.key);
  });

  it('its package image holds crossplane.yaml first, then the CRDs', () => {
    const d = fakeKlutchio();
    expect(providerAnyninesPackageYaml(d)).toBe('apiVersion: meta.pkg.crossplane.io/v1alpha1\nkind: Provider\n---\nkind: CustomResourceDefinition\n');
  });
});
