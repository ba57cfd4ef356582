/**
 * The package image bytes: layer contents (a tar holding package.yaml), digests of layer, config and
 * manifest, media types and the xpkg annotations; determinism; the .xpkg tarball round trip. The
 * system `tar` reads our archives (an independent reader of the format).
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import {
  buildPackageImage,
  joinPackageYaml,
  OCI_CONFIG_MEDIA_TYPE,
  OCI_LAYER_MEDIA_TYPE,
  OCI_MANIFEST_MEDIA_TYPE,
  packageYamlFromDir,
  readXpkg,
  tarFiles,
  untarFiles,
  writeXpkg,
} from '../../runtime/xpkg/image.js';
import { isLoopbackRegistry, parseImageRef } from '../../runtime/xpkg/push.js';

const dir = mkdtempSync(join(tmpdir(), 'klutch-xpkg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const digestOf = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

const META = 'apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: cat\nspec:\n  crossplane:\n    version: ">=v1.20.0"\n';
const XRD = 'apiVersion: apiextensions.crossplane.io/v1\nkind: CompositeResourceDefinition\nmetadata:\n  name: xthings.example.com\n';
const COMP = 'apiVersion: apiextensions.crossplane.io/v1\nkind: Composition\nmetadata:\n  name: thing\n';

describe('buildPackageImage', () => {
  const yaml = joinPackageYaml(META, [XRD, COMP]);
  const img = buildPackageImage(yaml);

  it('package.yaml is crossplane.yaml, then the objects, ---separated', () => {
    expect(yaml).toBe(`---\n${META}---\n${XRD}---\n${COMP}`);
  });

  it('one gzip layer holding exactly package.yaml; its digests are those of the bytes', () => {
    expect(gunzipSync(img.layer).equals(img.layerTar)).toBe(true);
    expect(untarFiles(img.layerTar)).toEqual([{ name: 'package.yaml', data: Buffer.from(yaml) }]);
    expect(img.layerDescriptor).toEqual({
      mediaType: OCI_LAYER_MEDIA_TYPE,
      digest: digestOf(img.layer),
      size: img.layer.length,
      annotations: { 'io.crossplane.xpkg': 'base' },
    });
    expect(img.diffId).toBe(digestOf(img.layerTar));
    // The system tar reads the layer.
    const f = join(dir, 'layer.tar.gz');
    writeFileSync(f, img.layer);
    expect(execFileSync('tar', ['-tzf', f], { encoding: 'utf8' })).toBe('package.yaml\n');
    expect(execFileSync('tar', ['-xzOf', f, 'package.yaml'], { encoding: 'utf8' })).toBe(yaml);
  });

  it('config: diff_ids and the xpkg base-layer label; manifest: OCI media types and descriptors', () => {
    const config = JSON.parse(img.config.toString());
    expect(config.rootfs).toEqual({ type: 'layers', diff_ids: [img.diffId] });
    expect(config.config.Labels).toEqual({ [`io.crossplane.xpkg:${img.layerDescriptor.digest}`]: 'base' });
    expect(img.configDescriptor).toEqual({ mediaType: OCI_CONFIG_MEDIA_TYPE, digest: digestOf(img.config), size: img.config.length });
    const manifest = JSON.parse(img.manifest.toString());
    expect(manifest).toEqual({ schemaVersion: 2, mediaType: OCI_MANIFEST_MEDIA_TYPE, config: img.configDescriptor, layers: [img.layerDescriptor] });
    expect(img.digest).toBe(digestOf(img.manifest));
  });

  it('is deterministic; another package gives other digests', () => {
    const again = buildPackageImage(yaml);
    expect([again.digest, again.layerDescriptor.digest, again.configDescriptor.digest]).toEqual([
      img.digest,
      img.layerDescriptor.digest,
      img.configDescriptor.digest,
    ]);
    expect(buildPackageImage(joinPackageYaml(META, [XRD])).digest).not.toBe(img.digest);
  });

  it('.xpkg file: a docker-save style tarball (manifest.json, config, layer) that reads back to the same image', () => {
    const file = writeXpkg(img, ['127.0.0.1:5000/k/cat:v1']);
    const entries = untarFiles(file);
    expect(entries.map((e) => e.name)).toEqual([
      'manifest.json',
      img.configDescriptor.digest,
      `${img.layerDescriptor.digest.slice(7)}.tar.gz`,
      'oci-manifest.json',
    ]);
    expect(JSON.parse(entries[0].data.toString())).toEqual([
      { Config: img.configDescriptor.digest, RepoTags: ['127.0.0.1:5000/k/cat:v1'], Layers: [`${img.layerDescriptor.digest.slice(7)}.tar.gz`] },
    ]);
    const f = join(dir, 'cat.xpkg');
    writeFileSync(f, file);
    expect(execFileSync('tar', ['-tf', f], { encoding: 'utf8' }).trim().split('\n')).toEqual(entries.map((e) => e.name));
    const back = readXpkg(file);
    expect(back.digest).toBe(img.digest);
    expect(back.packageYaml).toBe(yaml);
    expect(() => readXpkg(tarFiles([{ name: 'x', data: Buffer.from('y') }]), 'bad.xpkg')).toThrow('bad.xpkg: not a package image tarball (no manifest.json)');
  });
});

describe('packageYamlFromDir', () => {
  it('crossplane.yaml first, then every YAML file in path order', () => {
    const src = join(dir, 'src');
    mkdirSync(join(src, 'sub'), { recursive: true });
    writeFileSync(join(src, 'crossplane.yaml'), META);
    writeFileSync(join(src, 'b-composition.yaml'), COMP);
    writeFileSync(join(src, 'a-xrd.yaml'), XRD);
    writeFileSync(join(src, 'sub', 'c.yml'), `---\n${COMP.replace('thing', 'other')}`);
    writeFileSync(join(src, 'README.md'), 'ignored');
    expect(packageYamlFromDir(src)).toBe(joinPackageYaml(META, [XRD, COMP, COMP.replace('thing', 'other')]));
  });

  it('names the folder or file that is wrong', () => {
    const bad = join(dir, 'bad');
    mkdirSync(bad);
    expect(() => packageYamlFromDir(bad)).toThrow(`package source "${bad}" has no crossplane.yaml`);
    writeFileSync(join(bad, 'crossplane.yaml'), XRD);
    expect(() => packageYamlFromDir(bad)).toThrow(/crossplane\.yaml: must hold exactly one meta\.pkg\.crossplane\.io package/);
    writeFileSync(join(bad, 'crossplane.yaml'), META);
    writeFileSync(join(bad, 'x.yaml'), 'just: data\n');
    expect(() => packageYamlFromDir(bad)).toThrow(/x\.yaml document 1 is not a Kubernetes object/);
    expect(() => packageYamlFromDir(join(dir, 'missing'))).toThrow(/is not a directory/);
  });
});

describe('image references', () => {
  it('parses <registry>/<repository>:<tag>; loopback registries are plain HTTP', () => {
    expect(parseImageRef('127.0.0.1:5000/klutch/catalogue:v0.1.0')).toEqual({ registry: '127.0.0.1:5000', repository: 'klutch/catalogue', tag: 'v0.1.0' });
    expect(() => parseImageRef('catalogue')).toThrow('image reference "catalogue" is not "<registry>/<repository>:<tag>"');
    expect(() => parseImageRef('127.0.0.1:5000/klutch/catalogue')).toThrow(/is not "<registry>\/<repository>:<tag>"/);
    expect(isLoopbackRegistry('127.0.0.1:5000')).toBe(true);
    expect(isLoopbackRegistry('localhost:5000')).toBe(true);
    expect(isLoopbackRegistry('[::1]:5000')).toBe(true);
    expect(isLoopbackRegistry('registry.example.com')).toBe(false);
  });
});
