import { describe, expect, it } from '@jest/globals';
import { Testing } from 'cdk8s';
import { KubernetesCredentials, KubernetesProviderConfig } from '../../constructs/crossplane/index.js';
import { schemaErrors } from './_schema.js';

const CRD = 'provider-kubernetes/kubernetes.crossplane.io_providerconfigs.yaml';

describe('KubernetesProviderConfig', () => {
  it('defaults to InjectedIdentity, named default', () => {
    const chart = Testing.chart();
    new KubernetesProviderConfig(chart, 'pc');
    const [o] = Testing.synth(chart);
    expect(o).toEqual({
      apiVersion: 'kubernetes.crossplane.io/v1alpha1',
      kind: 'ProviderConfig',
      metadata: { name: 'default' },
      spec: { credentials: { source: 'InjectedIdentity' } },
    });
    expect(schemaErrors(CRD, o, 'v1alpha1')).toEqual([]);
  });

  it('reads a kubeconfig from a Secret', () => {
    const chart = Testing.chart();
    const pc = new KubernetesProviderConfig(chart, 'pc', {
      name: 'app-cluster-1',
      credentials: KubernetesCredentials.fromKubeconfigSecret('crossplane-system', 'cluster-config'),
    });
    const [o] = Testing.synth(chart);
    expect(pc.credentials.source).toBe('Secret');
    expect(o.spec.credentials).toEqual({ source: 'Secret', secretRef: { namespace: 'crossplane-system', name: 'cluster-config', key: 'kubeconfig' } });
    expect(schemaErrors(CRD, o, 'v1alpha1')).toEqual([]);
    expect(schemaErrors(CRD, { ...o, spec: { credentials: { source: 'Vault' } } }, 'v1alpha1').join()).toMatch(/allowed values/);
  });

  it('throws on bad props', () => {
    const chart = Testing.chart();
    expect(() => KubernetesCredentials.fromKubeconfigSecret('Crossplane', 'x')).toThrow('KubernetesCredentials.fromKubeconfigSecret.namespace: "Crossplane"');
    expect(() => KubernetesCredentials.fromKubeconfigSecret('ns', 'x', 'a/b')).toThrow('KubernetesCredentials.fromKubeconfigSecret.key: "a/b"');
    expect(() => new KubernetesProviderConfig(chart, 'a', { name: 'Default' })).toThrow('KubernetesProviderConfigProps.name: "Default"');
    expect(() => new KubernetesProviderConfig(chart, 'b', { credentials: { source: 'Secret' } as never })).toThrow(
      'KubernetesProviderConfigProps.credentials: {"source":"Secret"} must be made with',
    );
  });
});
