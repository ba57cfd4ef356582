import { describe, expect, it } from '@jest/globals';
import { Testing } from 'cdk8s';
import { DeploymentRuntimeConfig } from '../../constructs/crossplane/index.js';
import { schemaErrors } from './_schema.js';

const V2 = 'crossplane/v2/pkg.crossplane.io_deploymentruntimeconfigs.yaml';
const V120 = 'crossplane/v1.20/pkg.crossplane.io_deploymentruntimeconfigs.yaml';

describe('DeploymentRuntimeConfig', () => {
  it('emits pkg.crossplane.io/v1beta1 with the package-runtime container, valid on 2.3 and 1.20', () => {
    const chart = Testing.chart();
    const drc = new DeploymentRuntimeConfig(chart, 'drc', {
      name: 'provider-kubernetes',
      serviceAccountName: 'provider-kubernetes',
      replicas: 2,
      args: ['--debug'],
      env: { LOG_LEVEL: 'debug' },
      resources: { requests: { cpu: '100m' }, limits: { memory: '512Mi' } },
      podLabels: { app: 'provider-kubernetes' },
    });
    expect(drc.runtimeConfigName).toBe('provider-kubernetes');
    const [o] = Testing.synth(chart);
    expect(o.apiVersion).toBe('pkg.crossplane.io/v1beta1');
    expect(o.spec.serviceAccountTemplate).toEqual({ metadata: { name: 'provider-kubernetes' } });
    expect(o.spec.deploymentTemplate.spec.replicas).toBe(2);
    expect(o.spec.deploymentTemplate.spec.template.spec.containers).toEqual([
      {
        name: 'package-runtime',
        args: ['--debug'],
        env: [{ name: 'LOG_LEVEL', value: 'debug' }],
        resources: { requests: { cpu: '100m' }, limits: { memory: '512Mi' } },
      },
    ]);
    expect(schemaErrors(V2, o)).toEqual([]);
    expect(schemaErrors(V120, o)).toEqual([]);
  });

  it('emits only a ServiceAccount template when that is all that is asked (Klutch provider-kubernetes)', () => {
    const chart = Testing.chart();
    new DeploymentRuntimeConfig(chart, 'drc', { name: 'provider-kubernetes', serviceAccountName: 'provider-kubernetes' });
    const [o] = Testing.synth(chart);
    expect(o.spec).toEqual({ serviceAccountTemplate: { metadata: { name: 'provider-kubernetes' } } });
    expect(schemaErrors(V2, o)).toEqual([]);
  });

  it('throws on bad props', () => {
    const chart = Testing.chart();
    expect(() => new DeploymentRuntimeConfig(chart, 'a', { serviceAccountName: 'Bad SA' })).toThrow(
      'DeploymentRuntimeConfigProps.serviceAccountName: "Bad SA"',
    );
    expect(() => new DeploymentRuntimeConfig(chart, 'b', { replicas: -1 })).toThrow('DeploymentRuntimeConfigProps.replicas: -1 must be an integer >= 0');
    expect(() => new DeploymentRuntimeConfig(chart, 'c', { env: { 'A=B': 'x' } })).toThrow(
      'DeploymentRuntimeConfigProps.env: "A=B" is not a valid environment variable name',
    );
    expect(() => DeploymentRuntimeConfig.fromName('X')).toThrow('DeploymentRuntimeConfig.fromName(name): "X"');
  });
});
