import { describe, expect, it } from '@jest/globals';
import { Testing } from 'cdk8s';
import { DeploymentRuntimeConfig, Provider, PROVIDER_KUBERNETES_PACKAGE, PROVIDER_KUBERNETES_V1_PACKAGE } from '../../constructs/crossplane/index.js';
import { schemaErrors } from './_schema.js';

describe('Provider', () => {
  it('emits pkg.crossplane.io/v1 Provider with a runtime config, valid on 2.3 and 1.20', () => {
    const chart = Testing.chart();
    const drc = new DeploymentRuntimeConfig(chart, 'drc', { name: 'provider-kubernetes', serviceAccountName: 'provider-kubernetes' });
    const p = new Provider(chart, 'p', { package: PROVIDER_KUBERNETES_PACKAGE, runtimeConfig: drc });
    const v1 = new Provider(chart, 'old', { package: PROVIDER_KUBERNETES_V1_PACKAGE, name: 'provider-kubernetes-v0' });
    expect(p.name).toBe('provider-kubernetes');
    expect(v1.parsedPackage).toEqual({
      registry: 'xpkg.upbound.io',
      repository: 'crossplane-contrib/provider-kubernetes',
      tag: 'v0.18.0',
      digest: undefined,
      basename: 'provider-kubernetes',
    });
    const out = Testing.synth(chart).filter((o) => o.kind === 'Provider');
    expect(out[0]).toEqual({
      apiVersion: 'pkg.crossplane.io/v1',
      kind: 'Provider',
      metadata: { name: 'provider-kubernetes' },
      spec: {
        package: PROVIDER_KUBERNETES_PACKAGE,
        runtimeConfigRef: { apiVersion: 'pkg.crossplane.io/v1beta1', kind: 'DeploymentRuntimeConfig', name: 'provider-kubernetes' },
      },
    });
    for (const o of out) {
      expect(schemaErrors('crossplane/v2/pkg.crossplane.io_providers.yaml', o, 'v1')).toEqual([]);
      expect(schemaErrors('crossplane/v1.20/pkg.crossplane.io_providers.yaml', o, 'v1')).toEqual([]);
    }
  });

  it('rejects a short package ref', () => {
    expect(() => new Provider(Testing.chart(), 'p', { package: 'provider-kubernetes:v1.2.1' })).toThrow(
      'ProviderProps.package: "provider-kubernetes:v1.2.1" is not a fully qualified package reference',
    );
    expect(() => new Provider(Testing.chart(), 'p', { package: 'crossplane-contrib/provider-kubernetes:v1.2.1' })).toThrow(
      'ProviderProps.package: "crossplane-contrib/provider-kubernetes:v1.2.1" is not fully qualified',
    );
  });
});
