import { describe, expect, test } from '@jest/globals';
import { fileNameOf, phaseOf, PHASES } from '../../constructs/topology/index.js';

describe('layout', () => {
  test('phases: CRDs, namespaces, RBAC, config, packages, APIs, workloads, bindings, claims', () => {
    expect(phaseOf('apiextensions.k8s.io/v1', 'CustomResourceDefinition')).toBe(PHASES.crds);
    expect(phaseOf('v1', 'Namespace')).toBe(PHASES.namespaces);
    expect(phaseOf('v1', 'ServiceAccount')).toBe(PHASES.rbac);
    expect(phaseOf('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding')).toBe(PHASES.rbac);
    expect(phaseOf('v1', 'Secret')).toBe(PHASES.config);
    expect(phaseOf('helm.toolkit.fluxcd.io/v2', 'HelmRelease')).toBe(PHASES.platform);
    expect(phaseOf('argoproj.io/v1alpha1', 'Application')).toBe(PHASES.platform);
    expect(phaseOf('pkg.crossplane.io/v1', 'Provider')).toBe(PHASES.packages);
    expect(phaseOf('pkg.crossplane.io/v1beta1', 'DeploymentRuntimeConfig')).toBe(PHASES.packages);
    expect(phaseOf('apiextensions.crossplane.io/v1', 'CompositeResourceDefinition')).toBe(PHASES.apis);
    expect(phaseOf('kubernetes.crossplane.io/v1alpha1', 'ProviderConfig')).toBe(PHASES.apis);
    expect(phaseOf('apps/v1', 'Deployment')).toBe(PHASES.workloads);
    expect(phaseOf('gateway.networking.k8s.io/v1', 'HTTPRoute')).toBe(PHASES.workloads);
    expect(phaseOf('klutch.anynines.com/v1alpha1', 'APIServiceBinding')).toBe(PHASES.bindings);
    expect(phaseOf('anynines.com/v1', 'PostgresqlInstance')).toBe(PHASES.resources);
    // a custom kind that happens to be called Secret is not a core Secret
    expect(phaseOf('example.com/v1', 'Secret')).toBe(PHASES.resources);
    const orders = Object.values(PHASES).map((p) => p.order);
    expect([...orders].sort((a, b) => a - b)).toEqual(orders);
    for (const p of Object.values(PHASES)) expect(p.folder.startsWith(String(p.order).padStart(2, '0'))).toBe(true);
  });

  test('file names differ for every identity: namespace, kind, group and name all count', () => {
    const names = [
      fileNameOf('v1', 'ConfigMap', 'team-a', 'settings'),
      fileNameOf('v1', 'ConfigMap', 'team-b', 'settings'),
      fileNameOf('v1', 'Secret', 'team-a', 'settings'),
      fileNameOf('kubernetes.crossplane.io/v1alpha1', 'ProviderConfig', undefined, 'default'),
      fileNameOf('dataservices.anynines.com/v1', 'ProviderConfig', undefined, 'default'),
      fileNameOf('v1', 'Namespace', undefined, 'team-a'),
      fileNameOf('v1', 'ConfigMap', 'team', 'a-settings'),
      fileNameOf('v1', 'ConfigMap', 'team-a-settings', 'x'),
    ];
    expect(new Set(names).size).toBe(names.length);
    expect(fileNameOf('v1', 'ConfigMap', 'team-a', 'settings')).toBe('configmap_team-a_settings.yaml');
    expect(fileNameOf('rbac.authorization.k8s.io/v1', 'ClusterRole', undefined, 'klutch-binder')).toBe(
      'clusterrole.rbac.authorization.k8s.io__cluster_klutch-binder.yaml',
    );
  });

  test('names that need cleaning keep a hash of the original, so they stay distinct', () => {
    const a = fileNameOf('rbac.authorization.k8s.io/v1', 'ClusterRole', undefined, 'system:controller:x');
    const b = fileNameOf('rbac.authorization.k8s.io/v1', 'ClusterRole', undefined, 'system-controller-x');
    const c = fileNameOf('rbac.authorization.k8s.io/v1', 'ClusterRole', undefined, 'System:Controller:X');
    expect(a).toMatch(/^clusterrole\.rbac\.authorization\.k8s\.io__cluster_system-controller-x-[0-9a-f]{8}\.yaml$/);
    expect(new Set([a, b, c]).size).toBe(3);
    expect(a).not.toMatch(/[:A-Z]/);
  });
});
