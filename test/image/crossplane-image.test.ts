/**
 * The images of Crossplane as pods (runtime/image/crossplane.ts), and the pods components of the harness build
 * (runtime/realinfra/build.ts): the core image's binary, CRDs and webhook configurations where `crossplane core
 * init` reads them; package images whose `package.yaml` Crossplane finds in the flattened image and whose
 * entrypoint is the runtime binary; non-root; reproducible digests; clear errors naming the bad input.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { CROSSPLANE_BINARY_PATH, crossplaneCoreImage, packageRuntimeImage } from '../../runtime/image/crossplane.js';
import type { ImageIndex } from '../../runtime/image/oci.js';
import { readTar } from '../../runtime/image/tar.js';
import { ALL_COMPONENTS, PODS_COMPONENTS, planComponent } from '../../runtime/realinfra/build.js';

const dir = mkdtempSync(join(tmpdir(), 'crossplane-image-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file that starts like an ELF executable (the image build checks only the magic). */
function fakeBinary(name: string, body: string): string {
  const f = join(dir, name);
  writeFileSync(f, Buffer.concat([Buffer.from('\x7fELF', 'latin1'), Buffer.from(body)]));
  return f;
}

function folder(name: string, files: Record<string, string>): string {
  const d = join(dir, name);
  mkdirSync(d, { recursive: true });
  for (const [f, text] of Object.entries(files)) writeFileSync(join(d, f), text);
  return d;
}

const amd64 = { os: 'linux', architecture: 'amd64' } as const;
const configOf = (idx: ImageIndex) => JSON.parse(idx.images[0]!.config.toString()) as { config: Record<string, any>; architecture: string };
const pathsOf = (idx: ImageIndex, layer: number) => readTar(gunzipSync(idx.images[0]!.layers[layer]!.blob)).map((e) => e.path);
const PACKAGE_YAML = 'apiVersion: meta.pkg.crossplane.io/v1beta1\nkind: Function\nmetadata:\n  name: function-patch-and-transform\n';

describe('the Crossplane core image', () => {
  const crds = folder('crds', { 'pkg.crossplane.io_providers.yaml': 'kind: CustomResourceDefinition\n', 'README.md': 'not a CRD' });
  const hooks = folder('webhookconfigurations', { 'usage.yaml': 'kind: ValidatingWebhookConfiguration\n' });

  it('has the binary at upstream’s path as entrypoint `crossplane`, /crds and /webhookconfigurations, and runs as 65532', () => {
    const idx = crossplaneCoreImage({
      binary: fakeBinary('crossplane', 'a'),
      crdsDir: crds,
      webhookConfigurationsDir: hooks,
      version: 'v2.3.4',
      platform: amd64,
    });
    const cfg = configOf(idx);
    expect(cfg.architecture).toBe('amd64');
    expect(cfg.config).toMatchObject({ User: '65532:65532', Entrypoint: ['crossplane'], Env: ['PATH=/usr/local/bin:/usr/bin:/bin'] });
    expect(cfg.config['Labels']['org.opencontainers.image.version']).toBe('v2.3.4');
    const paths = pathsOf(idx, 0);
    expect(paths).toEqual(
      expect.arrayContaining([
        CROSSPLANE_BINARY_PATH.slice(1),
        'crds/pkg.crossplane.io_providers.yaml',
        'webhookconfigurations/usage.yaml',
        'etc/passwd',
        'etc/group',
        'tmp',
      ]),
    );
    expect(paths).not.toContain('crds/README.md');
  });

  it('gives equal digests for equal inputs and another digest for another binary', () => {
    const build = (body: string) =>
      crossplaneCoreImage({ binary: fakeBinary(`xp-${body}`, body), crdsDir: crds, webhookConfigurationsDir: hooks, version: 'v2.3.4', platform: amd64 });
    expect(build('same').descriptor.digest).toBe(build('same').descriptor.digest);
    expect(build('other').descriptor.digest).not.toBe(build('same').descriptor.digest);
  });

  it('names the missing binary, the non-ELF file and the empty CRD folder', () => {
    const opts = { crdsDir: crds, webhookConfigurationsDir: hooks, version: 'v2.3.4', platform: amd64 };
    expect(() => crossplaneCoreImage({ ...opts, binary: join(dir, 'nope') })).toThrow(
      `crossplane image: binary ${JSON.stringify(join(dir, 'nope'))} does not exist`,
    );
    const script = join(dir, 'script');
    writeFileSync(script, '#!/bin/sh\n');
    expect(() => crossplaneCoreImage({ ...opts, binary: script })).toThrow(`crossplane image: ${JSON.stringify(script)} is not an ELF executable`);
    const empty = folder('empty', {});
    expect(() => crossplaneCoreImage({ ...opts, crdsDir: empty, binary: fakeBinary('xp', 'x') })).toThrow(
      `crossplane image: ${JSON.stringify(empty)} holds no *.yaml CRDs`,
    );
  });
});

describe('package images that are their own runtime image', () => {
  const opts = { title: 'function-patch-and-transform', version: 'v0.10.7', packageYaml: PACKAGE_YAML, binaryPath: '/function', platform: amd64 };

  it('hold package.yaml in one layer and the binary (the entrypoint) in another; run as 65532', () => {
    const idx = packageRuntimeImage({ ...opts, binary: fakeBinary('function', 'f') });
    expect(idx.images[0]!.layers).toHaveLength(2);
    expect(pathsOf(idx, 0)).toEqual(['package.yaml']);
    expect(readTar(gunzipSync(idx.images[0]!.layers[0]!.blob))[0]).toMatchObject({ data: Buffer.from(PACKAGE_YAML) });
    expect(pathsOf(idx, 1)).toEqual(expect.arrayContaining(['function', 'etc/passwd', 'tmp']));
    expect(configOf(idx).config).toMatchObject({ User: '65532:65532', Entrypoint: ['/function'] });
    expect(packageRuntimeImage({ ...opts, binary: fakeBinary('function', 'f') }).descriptor.digest).toBe(idx.descriptor.digest);
  });

  it('refuses a relative binaryPath and a package.yaml without package metadata, naming the value', () => {
    const binary = fakeBinary('provider', 'p');
    expect(() => packageRuntimeImage({ ...opts, binary, binaryPath: 'function' })).toThrow(
      'function-patch-and-transform image: binaryPath "function" must be an absolute file path such as "/function"',
    );
    expect(() => packageRuntimeImage({ ...opts, binary, packageYaml: 'kind: ConfigMap\n' })).toThrow(
      'function-patch-and-transform image: packageYaml has no meta.pkg.crossplane.io object',
    );
  });
});

describe('the pods components of the harness build', () => {
  it('builds helm and CoreDNS from their wrapper modules, statically, as part of npm run realinfra', () => {
    expect(PODS_COMPONENTS).toEqual(['helm', 'coredns']);
    for (const c of PODS_COMPONENTS) expect(ALL_COMPONENTS).toContain(c);
    const helm = planComponent('helm', { cacheRoot: dir });
    expect(helm.pkg).toBe('helm.sh/helm/v3/cmd/helm');
    expect(helm.moduleDir.endsWith(join('tools', 'pulumi', 'kubernetes'))).toBe(true);
    expect(helm.args.join(' ')).toContain('-X helm.sh/helm/v3/internal/version.version=v3.18.6');
    const coredns = planComponent('coredns', { cacheRoot: dir });
    expect(coredns.pkg).toBe('klutch-kit.invalid/tools/coredns');
    expect(coredns.env['CGO_ENABLED']).toBe('0');
  });
});
