import { describe, expect, it } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { Testing, ApiObject } from 'cdk8s';

describe('toolchain', () => {
  it('loads ESM-only and CJS dependencies side by side', () => {
    const kc = new KubeConfig();
    kc.loadFromString(
      'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {token: t}}]\ncurrent-context: c\n',
    );
    expect(kc.getCurrentCluster()?.server).toBe('https://127.0.0.1:1');
    const chart = Testing.chart();
    new ApiObject(chart, 'o', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
    expect(Testing.synth(chart)[0].kind).toBe('ConfigMap');
  });
});
