// provider-anynines in the harness: the package the constructs emit is the release the harness builds from
// the klutchio sources; where the sources are, the error for missing ones and the cache key (tree + go version).
// Fetching and checking them: klutchio-source.test.ts.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { PROVIDER_ANYNINES_PACKAGE } from '../../constructs/topology/index.js';
import {
  A9S_COMPONENTS,
  ALL_COMPONENTS,
  KLUTCHIO_SOURCE_FOLDERS,
  PROVIDER_ANYNINES_SOURCE,
  checkKlutchioSource,
  klutchioSourceDir,
  planComponent,
} from '../../runtime/realinfra/build.js';
import { PROVIDER_ANYNINES_PREFIX, providerAnyninesObject, providerAnyninesPackageYaml } from '../../runtime/realinfra/anynines.js';

const tag = (ref: string) => ref.slice(ref.lastIndexOf(':') + 1);
const tmp: string[] = [];
const saved = process.env['KLUTCH_KIT_KLUTCHIO_SRC'];

afterEach(() => {
  for (const d of tmp.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  if (saved === undefined) delete process.env['KLUTCH_KIT_KLUTCHIO_SRC'];
  else process.env['KLUTCH_KIT_KLUTCHIO_SRC'] = saved;
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

  it('is built by `npm run realinfra` (the last component)', () => {
    expect(A9S_COMPONENTS).toEqual(['provider-anynines']);
    expect(ALL_COMPONENTS[ALL_COMPONENTS.length - 1]).toBe('provider-anynines');
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
