import { describe, expect, it } from '@jest/globals';
import { Testing } from 'cdk8s';
import { Configuration, DeploymentRuntimeConfig, RevisionActivationPolicy } from '../../constructs/crossplane/index.js';
import { schemaErrors } from './_schema.js';

describe('Configuration', () => {
  it('emits pkg.crossplane.io/v1 Configuration, valid on 2.3 and 1.20', () => {
    const chart = Testing.chart();
    new Configuration(chart, 'c', {
      package: 'xpkg.crossplane.io/acme/platform-ref:v1.4.0',
      revisionActivationPolicy: RevisionActivationPolicy.MANUAL,
      skipDependencyResolution: true,
    });
    const [o] = Testing.synth(chart);
    expect(o).toEqual({
      apiVersion: 'pkg.crossplane.io/v1',
      kind: 'Configuration',
      metadata: { name: 'platform-ref' },
      spec: { package: 'xpkg.crossplane.io/acme/platform-ref:v1.4.0', revisionActivationPolicy: 'Manual', skipDependencyResolution: true },
    });
    expect(schemaErrors('crossplane/v2/pkg.crossplane.io_configurations.yaml', o, 'v1')).toEqual([]);
    expect(schemaErrors('crossplane/v1.20/pkg.crossplane.io_configurations.yaml', o, 'v1')).toEqual([]);
  });

  it('has no runtime, so a runtimeConfig is an error', () => {
    const chart = Testing.chart();
    expect(
      () =>
        new Configuration(chart, 'c', {
          package: 'xpkg.crossplane.io/acme/platform-ref:v1.4.0',
          runtimeConfig: DeploymentRuntimeConfig.fromName('x'),
        } as never),
    ).toThrow('ConfigurationProps.runtimeConfig: "x" does not apply to a Configuration');
    expect(() => new Configuration(chart, 'd', { package: 'acme/platform-ref:v1' })).toThrow(
      'ConfigurationProps.package: "acme/platform-ref:v1" is not fully qualified',
    );
  });
});
