/** `klutch-kit:catalogue`: the catalogue as a Configuration package, validated; what `runtime` mode adds to the control plane. */
import { describe, expect, it } from '@jest/globals';
import { cataloguePackageObjects } from '../../stacks/catalogue.js';
import { parseStackConfig, type RawStackConfig, StackConfigError } from '../../stacks/config.js';
import { defaultManifestSource, type KubeObject } from '../../stacks/manifests.js';

const PKG = '127.0.0.1:5000/klutch/catalogue:v0.1.0';
const base: RawStackConfig = {
  controlPlane: { name: 'cp' },
  appClusters: [{ name: 'app-1' }],
  backend: { url: 'http://127.0.0.1:8080' },
  oidc: { issuerUrl: 'http://127.0.0.1:5556' },
  manifests: 'runtime',
};

function err(catalogue: unknown): string {
  try {
    parseStackConfig({ ...base, catalogue });
  } catch (e) {
    expect(e).toBeInstanceOf(StackConfigError);
    return (e as Error).message;
  }
  throw new Error('expected a StackConfigError');
}

const ids = (objs: readonly KubeObject[]) => objs.map((o) => `${o.kind}/${o.metadata.name}`).sort();

describe('klutch-kit:catalogue', () => {
  it('is unset by default, and runtime mode carries no Crossplane object then', () => {
    const c = parseStackConfig(base);
    expect(c.catalogue).toBeUndefined();
    expect(cataloguePackageObjects(c)).toEqual([]);
    expect(
      defaultManifestSource
        .controlPlane({ config: c, images: { backend: 'b:1' }, hasCookieEncryptionKey: false })
        .filter((o) => o.apiVersion.includes('crossplane.io')),
    ).toEqual([]);
  });

  it('names the key and the value for bad settings', () => {
    expect(err('x')).toBe('klutch-kit:catalogue: expected an object { install: "ConfigurationPackage", package }, got "x"');
    expect(err({ install: 'Objects', package: PKG })).toBe('klutch-kit:catalogue.install: expected "ConfigurationPackage", got "Objects"');
    expect(err({ install: 'ConfigurationPackage', package: 'klutch/catalogue:v1' })).toMatch(
      /^klutch-kit:catalogue\.package: "klutch\/catalogue:v1" is not fully qualified/,
    );
    expect(err({ install: 'ConfigurationPackage', package: 'r.example.com/klutch/catalogue' })).toMatch(
      /^klutch-kit:catalogue\.package: .*neither a tag nor a digest/,
    );
    expect(err({ install: 'ConfigurationPackage', package: PKG, pull: 'always' })).toBe(
      'klutch-kit:catalogue.pull: unknown setting (value "always"); allowed: install, package, apiStyle',
    );
    expect(err({ install: 'ConfigurationPackage', package: PKG, apiStyle: 'NamespacedXR' })).toBe(
      'klutch-kit:catalogue.apiStyle: expected "claims" or "namespaced", got "NamespacedXR"',
    );
  });

  it('runtime mode: the control plane gets the Configuration, the Function, provider-kubernetes, its ProviderConfig and RBAC', () => {
    const c = parseStackConfig({ ...base, catalogue: { install: 'ConfigurationPackage', package: PKG } });
    expect(c.catalogue).toEqual({ install: 'ConfigurationPackage', package: PKG });
    const added = cataloguePackageObjects(c);
    expect(ids(added)).toEqual([
      'ClusterRole/klutch-provider-kubernetes-a8s',
      'ClusterRoleBinding/klutch-provider-kubernetes-a8s',
      'Configuration/klutch-catalogue',
      'DeploymentRuntimeConfig/provider-kubernetes',
      'Function/function-patch-and-transform',
      'Provider/provider-kubernetes',
      'ProviderConfig/kubernetes-provider',
    ]);
    const conf = added.find((o) => o.kind === 'Configuration')!;
    expect(conf['spec']).toMatchObject({ package: PKG, skipDependencyResolution: true });
    const objs = defaultManifestSource.controlPlane({ config: c, images: { backend: 'b:1' }, hasCookieEncryptionKey: false });
    expect(ids(objs.filter((o) => added.includes(o) || ids(added).includes(`${o.kind}/${o.metadata.name}`)))).toEqual(ids(added));
    // no XRD or Composition as objects: they come from the package
    expect(objs.filter((o) => ['CompositeResourceDefinition', 'Composition'].includes(o.kind))).toEqual([]);
  });

  it('apiStyle namespaced: provider-kubernetes also gets its ClusterProviderConfig and the credentials Secrets RBAC', () => {
    const claims = cataloguePackageObjects(parseStackConfig({ ...base, catalogue: { install: 'ConfigurationPackage', package: PKG, apiStyle: 'claims' } }));
    const c = parseStackConfig({ ...base, catalogue: { install: 'ConfigurationPackage', package: PKG, apiStyle: 'namespaced' } });
    expect(c.catalogue).toEqual({ install: 'ConfigurationPackage', package: PKG, apiStyle: 'namespaced' });
    const added = cataloguePackageObjects(c);
    expect(ids(added).filter((i) => !ids(claims).includes(i))).toEqual([
      'ClusterProviderConfig/kubernetes-provider',
      'ClusterRole/klutch-provider-kubernetes-secrets',
      'ClusterRoleBinding/klutch-provider-kubernetes-secrets',
    ]);
    expect(ids(claims).filter((i) => !ids(added).includes(i))).toEqual([]);
    expect(added.find((o) => o.kind === 'ClusterProviderConfig')).toMatchObject({
      apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
      spec: { credentials: { source: 'InjectedIdentity' } },
    });
  });

  it('is for the runtime mode only', () => {
    expect(() => parseStackConfig({ ...base, manifests: 'topology', catalogue: { install: 'ConfigurationPackage', package: PKG } })).toThrow(
      /^klutch-kit:catalogue: expected nothing with manifests "topology": the catalogue package install is for manifests "runtime"/,
    );
  });
});
