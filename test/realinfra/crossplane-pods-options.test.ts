// startCrossplane({ runtime }) refuses what cannot work before it builds or starts anything: an unknown runtime,
// `pods` on a cluster without a node, `pods` on a node whose kubelet does not point pods at the cluster DNS, and
// `beforeCore` with `pods` or as something other than a function.
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { CLUSTER_DNS, clusterDnsKubeletConfig, nodeHasClusterDns } from '../../runtime/realinfra/cluster-dns.js';
import { podsRegistry } from '../../runtime/realinfra/crossplane-pods.js';
import { type RealCluster, startCrossplane } from '../../runtime/realinfra/index.js';

const dir = mkdtempSync(join(tmpdir(), 'xp-pods-opts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const clusterWithNode = (nodeDir: string | undefined) =>
  ({ name: 'opts', dir, node: nodeDir === undefined ? undefined : { dir: nodeDir } }) as unknown as RealCluster;

describe('startCrossplane runtime option', () => {
  it('names an unknown runtime', async () => {
    await expect(startCrossplane(clusterWithNode(undefined), { version: '2.3', runtime: 'containers' as never })).rejects.toThrow(
      'startCrossplane: runtime "containers" must be "processes" or "pods"',
    );
  });

  it('refuses beforeCore with pods (the registry is known before the start there) and one that is no function', async () => {
    await expect(startCrossplane(clusterWithNode(undefined), { version: '2.3', runtime: 'pods', beforeCore: async () => undefined })).rejects.toThrow(
      'startCrossplane: beforeCore is only for runtime "processes"; with "pods" the registry is podsRegistry(cluster) before the start',
    );
    await expect(startCrossplane(clusterWithNode(undefined), { version: '2.3', beforeCore: 'push' as never })).rejects.toThrow(
      'startCrossplane: beforeCore must be a function, got string',
    );
  });

  it('asks for a node, then for the cluster DNS kubelet fields, naming what to pass', async () => {
    await expect(startCrossplane(clusterWithNode(undefined), { version: '2.3', runtime: 'pods' })).rejects.toThrow(
      'startCrossplane: runtime "pods" needs a cluster with a node: startCluster({ nodes: 1, node: { kubeletConfig: clusterDnsKubeletConfig() } })',
    );
    const nodeDir = mkdtempSync(join(dir, 'node-'));
    writeFileSync(join(nodeDir, 'kubelet-config.yaml'), toYaml({ kind: 'KubeletConfiguration', address: '10.250.0.1' }));
    await expect(startCrossplane(clusterWithNode(nodeDir), { version: '2.3', runtime: 'pods' })).rejects.toThrow(
      `startCrossplane: runtime "pods" needs the node's kubelet to point pods at the cluster DNS (${CLUSTER_DNS.ip})`,
    );
  });

  it('reads the cluster DNS from the kubelet configuration the node writes', () => {
    const nodeDir = mkdtempSync(join(dir, 'node-'));
    writeFileSync(join(nodeDir, 'kubelet-config.yaml'), toYaml({ kind: 'KubeletConfiguration', address: '10.250.0.1', ...clusterDnsKubeletConfig() }));
    expect(nodeHasClusterDns(nodeDir)).toBe(true);
    writeFileSync(join(nodeDir, 'kubelet-config.yaml'), toYaml({ kind: 'KubeletConfiguration', clusterDNS: ['10.0.0.53'] }));
    expect(nodeHasClusterDns(nodeDir)).toBe(false);
    expect(nodeHasClusterDns(join(dir, 'missing'))).toBe(false);
  });
});

describe('podsRegistry', () => {
  it('is the node registry’s port on the node IP, known before the harness starts; a cluster without a node is named', () => {
    const withNode = { name: 'opts', node: { ip: '10.250.0.1', registry: '127.0.0.1:43893' } } as unknown as RealCluster;
    expect(podsRegistry(withNode)).toBe('10.250.0.1:43893');
    expect(() => podsRegistry(clusterWithNode(undefined))).toThrow('podsRegistry: cluster "opts" has no node');
  });
});
