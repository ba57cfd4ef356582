// The resource policy of the contract: what a provider may make the konnector touch in an app cluster.
import { describe, expect, it } from '@jest/globals';
import {
  decideResource,
  parseAllowedResource,
  policyFor,
  refusalMessage,
  resourceName,
  RESOURCE_POLICY,
  ResourceVerdict,
} from '../../contract/resource-policy.js';

const hint = (n: string) => `--allow-resource ${n}`;

describe('resource policy', () => {
  it('every entry says why, and names a group pattern and resources', () => {
    for (const e of RESOURCE_POLICY) {
      expect(e.why.length).toBeGreaterThan(20);
      expect(ResourceVerdict.all).toContain(e.verdict);
      expect(e.group === '' || /^(\*\.)?[a-z0-9.-]+$/.test(e.group)).toBe(true);
      expect(e.resources === '*' || e.resources.length > 0).toBe(true);
    }
  });

  it("allows by default: the provider's own API as an export, Secrets and ConfigMaps as claims", () => {
    expect(decideResource({ group: 'anynines.com', resource: 'postgresqlinstances' }, 'export')).toMatchObject({ allowed: true, allowedByName: false });
    for (const resource of ['secrets', 'configmaps']) {
      expect(decideResource({ group: '', resource }, 'claim')).toMatchObject({ allowed: true, verdict: ResourceVerdict.ALLOWED });
      // …but a core resource is never an export (no provider CRD lives in the core group)
      expect(decideResource({ resource }, 'export')).toMatchObject({ allowed: false, verdict: ResourceVerdict.REFUSED });
    }
  });

  it.each([
    ['daemonsets', 'apps'],
    ['deployments', 'apps'],
    ['statefulsets', 'apps'],
    ['replicasets', 'apps'],
    ['jobs', 'batch'],
    ['cronjobs', 'batch'],
    ['pods', ''],
    ['services', ''],
    ['networkpolicies', 'networking.k8s.io'],
    ['gateways', 'gateway.networking.k8s.io'],
    ['machines', 'cluster.x-k8s.io'],
    ['providers', 'pkg.crossplane.io'],
    ['horizontalpodautoscalers', 'autoscaling'],
  ])('refuses %s.%s by default in both uses, and allows it by name', (resource, group) => {
    for (const use of ['export', 'claim'] as const) {
      const d = decideResource({ group, resource }, use);
      expect(d).toMatchObject({ allowed: false, verdict: ResourceVerdict.REFUSED });
      expect(decideResource({ group, resource }, use, [{ group, resource }])).toMatchObject({ allowed: true, allowedByName: true });
      // an allowance of another resource of the group does not count
      expect(decideResource({ group, resource }, use, [{ group, resource: 'other' }]).allowed).toBe(false);
    }
  });

  it('refuses a claim on a resource other than Secrets/ConfigMaps, even of the provider’s own group, unless allowed by name', () => {
    const r = { group: 'anynines.com', resource: 'postgresqlinstances' };
    expect(decideResource(r, 'claim')).toMatchObject({ allowed: false, verdict: ResourceVerdict.REFUSED });
    expect(decideResource(r, 'claim', [r]).allowed).toBe(true);
  });

  it.each([
    ['clusterroles', 'rbac.authorization.k8s.io'],
    ['rolebindings', 'rbac.authorization.k8s.io'],
    ['validatingwebhookconfigurations', 'admissionregistration.k8s.io'],
    ['customresourcedefinitions', 'apiextensions.k8s.io'],
    ['apiservices', 'apiregistration.k8s.io'],
    ['certificatesigningrequests', 'certificates.k8s.io'],
    ['serviceaccounts', ''],
    ['nodes', ''],
    ['namespaces', ''],
    ['apiservicebindings', 'klutch.anynines.com'],
    ['apiserviceexporttemplates', 'example-backend.klutch.anynines.com'],
  ])('never allows %s.%s, not even by name', (resource, group) => {
    for (const use of ['export', 'claim'] as const) {
      expect(decideResource({ group, resource }, use, [{ group, resource }])).toMatchObject({ allowed: false, verdict: ResourceVerdict.NEVER });
    }
    expect(() => parseAllowedResource('--allow-resource', resourceName({ group, resource }))).toThrow(/can never be allowed: /);
  });

  it('refusals name the resource, the reason and the switch that allows it (or that nothing does)', () => {
    const d = decideResource({ group: 'apps', resource: 'daemonsets' }, 'export');
    expect(refusalMessage(d, hint)).toBe(
      `the export of daemonsets.apps is outside the allow-list: ${policyFor(d, 'export').why}; if you trust the provider with it, allow it with --allow-resource daemonsets.apps`,
    );
    const c = decideResource({ group: 'apps', resource: 'daemonsets' }, 'claim');
    expect(refusalMessage(c, hint)).toMatch(/^the permission claim on daemonsets\.apps is outside the allow-list: workloads run code/);
    const n = decideResource({ group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }, 'claim');
    expect(refusalMessage(n, hint)).toMatch(
      /^the permission claim on clusterroles\.rbac\.authorization\.k8s\.io is never allowed: RBAC: .*; ask the provider to drop it$/,
    );
  });

  it('parses allowances: <plural>.<group> or <plural>, naming the field and value when wrong', () => {
    expect(parseAllowedResource('f', 'daemonsets.apps')).toEqual({ group: 'apps', resource: 'daemonsets' });
    expect(parseAllowedResource('f', 'services')).toEqual({ group: '', resource: 'services' });
    expect(parseAllowedResource('f', 'gateways.gateway.networking.k8s.io')).toEqual({ group: 'gateway.networking.k8s.io', resource: 'gateways' });
    for (const bad of ['', 'Daemonsets.apps', 'daemonsets.', 'daemonsets..apps', '*', 'a/b.apps', 3]) {
      expect(() => parseAllowedResource('--allow-resource', bad)).toThrow(/^--allow-resource: .* is not <plural>\.<group> \(e\.g\. daemonsets\.apps\)/);
    }
  });
});
