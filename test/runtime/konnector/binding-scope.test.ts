import { describe, expect, it } from '@jest/globals';
import { Konnector, bindingScopeRefusal } from '../../../runtime/konnector/konnector.js';
import { KONNECTOR_NAMESPACE } from '../../../contract/api/constants.js';
import type { APIServiceBinding } from '../../../runtime/konnector/types.js';
import { adminNamespace } from '../../../runtime/konnector/main.js';

const binding = (namespace: string, secretNamespace: string): APIServiceBinding =>
  ({
    metadata: { name: 'widgets.example.com', namespace },
    spec: { kubeconfigSecretRef: { namespace: secretNamespace, name: 'kubeconfig-abc', key: 'kubeconfig' } },
  }) as APIServiceBinding;

describe('binding scope (the namespaced binding as a confused deputy)', () => {
  it('serves a binding in the admin namespace whose Secret is beside it', () => {
    expect(KONNECTOR_NAMESPACE).toBe('klutch-bind');
    expect(bindingScopeRefusal(binding('klutch-bind', 'klutch-bind'), 'klutch-bind')).toBeUndefined();
  });

  it('refuses a binding outside the admin namespace, naming both namespaces and the flag', () => {
    expect(bindingScopeRefusal(binding('team-a', 'team-a'), 'klutch-bind')).toEqual({
      type: 'SecretValid',
      status: 'False',
      severity: 'Error',
      reason: 'BindingNamespaceNotAllowed',
      message: expect.stringMatching(
        /^APIServiceBindings are served only in namespace klutch-bind \(the konnector's --binding-admin-namespace\), not in team-a: .*cluster-scoped CRDs/,
      ),
    });
  });

  it("refuses a kubeconfig Secret outside the binding's own namespace, without reading it", () => {
    expect(bindingScopeRefusal(binding('klutch-bind', 'kube-system'), 'klutch-bind')).toMatchObject({
      reason: 'KubeconfigSecretOutsideNamespace',
      message:
        'spec.kubeconfigSecretRef.namespace is "kube-system"; the kubeconfig Secret must be in the binding\'s own namespace klutch-bind; the konnector did not read Secret kube-system/kubeconfig-abc',
    });
  });

  it('checks the option: a namespace name, and not one that contradicts bindingNamespace', () => {
    const app = { server: 'https://127.0.0.1:1' };
    expect(() => new Konnector({ appKubeConfig: app, bindingAdminNamespace: 'Not_A_Namespace' })).toThrow(
      'KonnectorOptions.bindingAdminNamespace: "Not_A_Namespace" is not a namespace name (a DNS label)',
    );
    expect(() => new Konnector({ appKubeConfig: app, bindingNamespace: 'a', bindingAdminNamespace: 'b' })).toThrow(
      /KonnectorOptions.bindingAdminNamespace: "b" differs from bindingNamespace "a"/,
    );
  });

  it("klutch-konnector's admin namespace: the flag, else --binding-namespace, else its own namespace, else klutch-bind", () => {
    expect(adminNamespace('admins', undefined, 'klutch-bind')).toBe('admins');
    expect(adminNamespace(undefined, 'watched', 'klutch-bind')).toBeUndefined(); // KonnectorOptions takes bindingNamespace
    expect(adminNamespace(undefined, undefined, 'klutch-system')).toBe('klutch-system');
    expect(adminNamespace(undefined, undefined, undefined)).toBeUndefined(); // KonnectorOptions' default: klutch-bind
    expect(adminNamespace(undefined, undefined, '')).toBeUndefined();
  });
});
