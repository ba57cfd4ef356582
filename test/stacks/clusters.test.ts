/**
 * Clusters and images the stack creates: kind CLI argv and prerequisites, the @pulumi/eks option mapping and the
 * "not installed" path of @pulumi/eks (really absent from this installation), the runtime image references.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { StackConfigError } from '../../stacks/config.js';
import { connectCluster } from '../../stacks/cluster.js';
import { createEksCluster, eksClusterOptions } from '../../stacks/eks.js';
import { runtimeImageRefs } from '../../stacks/images.js';
import { checkKindPrerequisites, KIND_KUBECONFIG_PLACEHOLDER, kindCommands } from '../../stacks/kind.js';
import { loadOptional } from '../../stacks/optional.js';

const none = { getSecret: () => undefined };

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(StackConfigError);
    return (e as Error).message;
  }
  throw new Error('expected a StackConfigError');
}

/** The message of the plain Error that `fn` throws (kindCommands() does not know the stack config). */
function kindError(fn: () => unknown): string {
  expect(fn).toThrow(Error);
  try {
    fn();
  } catch (e) {
    expect(e).not.toBeInstanceOf(StackConfigError);
    return (e as Error).message;
  }
  return '';
}

describe('kindCommands', () => {
  it('builds create / get kubeconfig / delete argv', () => {
    expect(kindCommands({ name: 'app-1' })).toEqual({
      create: ['create', 'cluster', '--name', 'app-1', '--kubeconfig', KIND_KUBECONFIG_PLACEHOLDER],
      getKubeconfig: ['get', 'kubeconfig', '--name', 'app-1'],
      delete: ['delete', 'cluster', '--name', 'app-1'],
    });
  });
  it('adds --image and --config (resolved to an absolute path)', () => {
    expect(kindCommands({ name: 'a', nodeImage: 'kindest/node:v1.33.1' }).create).toEqual([
      'create',
      'cluster',
      '--name',
      'a',
      '--kubeconfig',
      KIND_KUBECONFIG_PLACEHOLDER,
      '--image',
      'kindest/node:v1.33.1',
    ]);
    expect(kindCommands({ name: 'a', configPath: '/etc/kind.yaml' }).create.slice(-2)).toEqual(['--config', '/etc/kind.yaml']);
    expect(kindCommands({ name: 'a', configPath: 'kind.yaml' }).create.slice(-2)).toEqual(['--config', path.resolve('kind.yaml')]);
    expect(kindCommands({ name: 'a', nodeImage: 'i:1', configPath: '/c.yaml' }).create.slice(6)).toEqual(['--image', 'i:1', '--config', '/c.yaml']);
  });
  it('rejects bad names, images and config paths with the field and the value', () => {
    expect(kindError(() => kindCommands({ name: 'App_1' }))).toBe(
      'KindClusterOptions.name: "App_1" is not a kind cluster name (a DNS label of at most 40 characters)',
    );
    expect(kindError(() => kindCommands({ name: '--help' }))).toContain('name: "--help" is not');
    expect(kindError(() => kindCommands({ name: 'a'.repeat(41) }))).toContain(`name: "${'a'.repeat(41)}" is not`);
    expect(kindError(() => kindCommands({ name: 'a', nodeImage: '--retain' }))).toBe(
      'KindClusterOptions.nodeImage: "--retain" is not an image reference such as "kindest/node:v1.33.1"',
    );
    expect(kindError(() => kindCommands({ name: 'a', configPath: '-x' }))).toBe('KindClusterOptions.configPath: "-x" is not the path of a kind config file');
  });
});

describe('kind prerequisites', () => {
  const savedPath = process.env['PATH'];
  afterEach(() => {
    process.env['PATH'] = savedPath;
  });
  it('names docker and kind when they are not on PATH, and the existing-cluster alternative', () => {
    process.env['PATH'] = '/nonexistent';
    const m = message(() => checkKindPrerequisites('appClusters[0]'));
    expect(m).toMatch(
      /^klutch-kit:appClusters\[0\]\.access\.kind: "kind" needs Docker and the kind CLI, but docker \(not on PATH\) and kind \(not on PATH\) are missing\./,
    );
    expect(m).toContain('access {kind: kubeconfig} or {kind: context, context: <name>}');
  });
  it('names the Docker daemon when `docker info` fails', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kind-prereq-'));
    try {
      fs.writeFileSync(path.join(dir, 'docker'), '#!/bin/sh\necho "Cannot connect to the Docker daemon" >&2\nexit 1\n', { mode: 0o755 });
      fs.writeFileSync(path.join(dir, 'kind'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      process.env['PATH'] = dir;
      expect(message(() => checkKindPrerequisites('controlPlane'))).toContain(
        'but a Docker daemon (`docker info` failed: Cannot connect to the Docker daemon) is missing. Use an existing cluster',
      );
      fs.writeFileSync(path.join(dir, 'docker'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      expect(() => checkKindPrerequisites('controlPlane')).not.toThrow();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
  it('checks the kind settings before the environment', async () => {
    process.env['PATH'] = '/nonexistent';
    await expect(connectCluster({ name: 'a', access: { kind: 'kind', name: 'Bad Name' } }, 'appClusters[0]', none)).rejects.toThrow(
      'klutch-kit:appClusters[0].access.name: expected a kind cluster name (a DNS label of at most 40 characters), got "Bad Name"',
    );
    await expect(connectCluster({ name: 'a', access: { kind: 'kind' } }, 'appClusters[0]', none)).rejects.toThrow(
      /docker \(not on PATH\) and kind \(not on PATH\) are missing/,
    );
  });
});

describe('EKS', () => {
  it('fails with the install instruction when @pulumi/eks is not installed (it is not)', async () => {
    await expect(connectCluster({ name: 'a', access: { kind: 'eks', region: 'eu-central-1' } }, 'appClusters[0]', none)).rejects.toThrow(
      'klutch-kit:appClusters[0].access.kind: "eks" needs the @pulumi/eks package, which is not installed; run `npm install @pulumi/eks @pulumi/aws`',
    );
    await expect(createEksCluster('a', { kind: 'eks', region: 'eu-central-1' }, 'controlPlane')).rejects.toBeInstanceOf(StackConfigError);
  });
  it('maps the access settings to aws.Provider and eks.Cluster options', () => {
    expect(eksClusterOptions('app-1', { kind: 'eks', region: 'eu-central-1' })).toEqual({
      provider: { region: 'eu-central-1' },
      cluster: { name: 'app-1', instanceType: 't3.medium', desiredCapacity: 2, minSize: 2, maxSize: 2 },
    });
    expect(eksClusterOptions('cp', { kind: 'eks', region: 'us-east-1', instanceType: 'm6i.large', desiredCapacity: 3 })).toEqual({
      provider: { region: 'us-east-1' },
      cluster: { name: 'cp', instanceType: 'm6i.large', desiredCapacity: 3, minSize: 3, maxSize: 3 },
    });
  });
});

describe('runtime images', () => {
  it('tags both images under the registry with the klutch-kit version', () => {
    expect(runtimeImageRefs('registry.example.com/klutch/', '0.1.0')).toEqual({
      backend: 'registry.example.com/klutch/backend:0.1.0',
      konnector: 'registry.example.com/klutch/konnector:0.1.0',
    });
    expect(runtimeImageRefs('localhost:5000').backend).toMatch(/^localhost:5000\/backend:\d+\.\d+\.\d+/);
  });
  it('rejects registries with a scheme, tag or whitespace, and unpinned tags', () => {
    expect(message(() => runtimeImageRefs('https://ghcr.io/x'))).toBe(
      'klutch-kit:images.registry: expected a registry and repository prefix such as "ghcr.io/my-org" (no scheme, tag or digest), got "https://ghcr.io/x"',
    );
    expect(message(() => runtimeImageRefs('ghcr.io/x:v1'))).toContain('got "ghcr.io/x:v1"');
    expect(message(() => runtimeImageRefs('ghcr.io/my org'))).toContain('got "ghcr.io/my org"');
    expect(message(() => runtimeImageRefs('ghcr.io/x', 'latest'))).toBe('klutch-kit:images.registry: image tag "latest" is not a pinned tag');
  });
  it('passes other load errors through unchanged', async () => {
    const boom = new Error('syntax error in the package');
    await expect(loadOptional('x', 'not installed', () => Promise.reject(boom))).rejects.toBe(boom);
    await expect(loadOptional('x', 'not installed', () => Promise.reject(Object.assign(new Error('nope'), { code: 'ERR_MODULE_NOT_FOUND' })))).rejects.toThrow(
      'not installed',
    );
  });
});
