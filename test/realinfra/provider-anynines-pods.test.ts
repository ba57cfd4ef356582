// provider-anynines on Crossplane as pods (runtime/realinfra/anynines-pods.ts): the objects it applies and the
// checks before anything starts. The pod itself runs in test/integration/sandbox/sandbox-pods.test.ts.
import { describe, expect, it } from '@jest/globals';
import { PROVIDER_ANYNINES_PACKAGE } from '../../constructs/topology/index.js';
import { startProviderAnynines } from '../../runtime/realinfra/anynines.js';
import { PROVIDER_ANYNINES_RUNTIME, providerAnyninesPodsObjects } from '../../runtime/realinfra/anynines-pods.js';
import type { CrossplaneHarness, RealCluster } from '../../runtime/realinfra/index.js';

describe('provider-anynines as a pod', () => {
  it('applies the constructs’ Provider with a DeploymentRuntimeConfig carrying its flags', () => {
    const objs = providerAnyninesPodsObjects(['--poll=5s', '--debug']);
    expect(objs.map((o) => o.kind).sort()).toEqual(['DeploymentRuntimeConfig', 'Provider']);
    expect(objs.find((o) => o.kind === 'Provider')).toMatchObject({
      metadata: { name: 'provider-anynines' },
      spec: { package: PROVIDER_ANYNINES_PACKAGE, runtimeConfigRef: { name: PROVIDER_ANYNINES_RUNTIME } },
    });
    expect(objs.find((o) => o.kind === 'DeploymentRuntimeConfig')).toMatchObject({
      metadata: { name: PROVIDER_ANYNINES_RUNTIME },
      spec: { deploymentTemplate: { spec: { template: { spec: { containers: [{ name: 'package-runtime', args: ['--poll=5s', '--debug'] }] } } } } },
    });
  });

  it('is what startProviderAnynines starts for Crossplane as pods, and says what it needs before starting anything', async () => {
    const pods = { runtime: 'pods' } as CrossplaneHarness;
    const noNode = { name: 'cp', dir: '/nonexistent' } as RealCluster;
    await expect(startProviderAnynines(noNode, { crossplane: pods })).rejects.toThrow(
      'startProviderAnynines: provider-anynines as a pod needs Crossplane with runtime "pods" on a cluster with a node (cluster cp)',
    );
    const withNode = { name: 'cp', dir: '/nonexistent', node: { ip: '10.250.0.1' } } as unknown as RealCluster;
    await expect(startProviderAnynines(withNode, { crossplane: pods, forwardPorts: [70000] })).rejects.toThrow(
      'ProviderAnyninesOptions.forwardPorts: 70000 is not a port',
    );
  });
});
