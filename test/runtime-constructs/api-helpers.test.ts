import { describe, expect, test } from '@jest/globals';
import { ApiServiceBinding, ApiServiceExportTemplate } from '../../constructs/runtime/index.js';
import { chart, find, synth } from './_helpers.js';

describe('ApiServiceExportTemplate', () => {
  test('capitalised APIServiceSelector and explicit claim defaults', () => {
    const c = chart();
    new ApiServiceExportTemplate(c, 'T', {
      group: 'anynines.com',
      resource: 'servicebindings',
      permissionClaims: [
        { resource: 'secrets', version: 'v1', selector: { owner: 'Provider' } },
        { resource: 'configmaps', version: 'v1', selector: { owner: 'Provider' } },
      ],
    });
    const t = find(synth(c), 'APIServiceExportTemplate');
    expect(t.apiVersion).toBe('example-backend.klutch.anynines.com/v1alpha1');
    expect(t.metadata).toEqual({ name: 'servicebindings', namespace: 'crossplane-system' });
    expect(t.spec.APIServiceSelector).toEqual({ group: 'anynines.com', resource: 'servicebindings' });
    expect(t.spec.apiServiceSelector).toBeUndefined();
    expect(t.spec.permissionClaims[0]).toEqual({
      group: '',
      resource: 'secrets',
      version: 'v1',
      selector: { names: ['*'], namespaces: ['*'], owner: 'Provider' },
    });
  });

  test.each([
    [{ group: 'anynines.com', resource: 'PostgreSQL' }, /ApiServiceExportTemplateProps\.resource: "PostgreSQL"/],
    [{ group: 'Any_Nines', resource: 'x1' }, /ApiServiceExportTemplateProps\.group: "Any_Nines"/],
    [{ group: 'example.com', resource: 'xs', permissionClaims: [{ resource: 'secrets', version: '' }] }, /permissionClaims\[0\]\.version: ""/],
    [
      { group: 'example.com', resource: 'xs', permissionClaims: [{ resource: 'secrets', version: 'v1', selector: { owner: 'Nobody' } }] },
      /permissionClaims\[0\]\.selector\.owner: "Nobody"/,
    ],
  ])('bad props throw (%#)', (props, msg) => {
    expect(() => new ApiServiceExportTemplate(chart(), 'T', props as any)).toThrow(msg);
  });
});

describe('ApiServiceBinding', () => {
  test('named <resource>.<group>, kubeconfig secret ref with key kubeconfig, accepted claims', () => {
    const c = chart();
    const b = new ApiServiceBinding(c, 'B', {
      group: 'anynines.com',
      resource: 'postgresqlinstances',
      kubeconfigSecretRef: { name: 'kubeconfig-cp' },
      permissionClaims: [{ resource: 'secrets', version: 'v1', state: 'Accepted' }],
    });
    const o = find(synth(c), 'APIServiceBinding');
    expect(b.bindingName).toBe('postgresqlinstances.anynines.com');
    expect(o.apiVersion).toBe('klutch.anynines.com/v1alpha1');
    expect(o.metadata).toEqual({ name: 'postgresqlinstances.anynines.com', namespace: 'klutch-bind' });
    expect(o.spec.kubeconfigSecretRef).toEqual({ name: 'kubeconfig-cp', namespace: 'klutch-bind', key: 'kubeconfig' });
    expect(o.spec.permissionClaims[0]).toMatchObject({ resource: 'secrets', state: 'Accepted' });
  });

  test.each([
    [{ group: '', resource: 'secrets', kubeconfigSecretRef: { name: 'k' } }, /ApiServiceBindingProps\.group: ""/],
    [{ group: 'anynines.com', resource: 'xs', kubeconfigSecretRef: undefined }, /ApiServiceBindingProps\.kubeconfigSecretRef: undefined/],
    [
      { group: 'anynines.com', resource: 'xs', kubeconfigSecretRef: { name: 'k' }, permissionClaims: [{ resource: 'secrets', version: 'v1', state: 'Maybe' }] },
      /permissionClaims\[0\]\.state: "Maybe"/,
    ],
    [{ group: 'anynines.com', resource: 'xs', kubeconfigSecretRef: { name: 'k', namespace: 'NS' } }, /kubeconfigSecretRef\.namespace: "NS"/],
    [
      { group: 'anynines.com', resource: 'xs', kubeconfigSecretRef: { name: 'k', namespace: 'other' } },
      'ApiServiceBindingProps.kubeconfigSecretRef.namespace: "other" must be the binding\'s namespace "klutch-bind" (ApiServiceBindingProps.namespace): the konnector reads a kubeconfig Secret only beside its binding',
    ],
  ])('bad props throw (%#)', (props, msg) => {
    expect(() => new ApiServiceBinding(chart(), 'B', props as any)).toThrow(msg);
  });
});
