import { Testing } from 'cdk8s';
import { ControlPlaneCluster, crossplane } from 'klutch-kit';
import { addClickHouse } from './clickhouse';

describe('ClickHouse on the control plane', () => {
  test('is exported: binder ClusterRole and ProviderConfig', () => {
    const app = Testing.app();
    const cp = new ControlPlaneCluster(app, 'control-plane', {
      host: 'bind.example.com',
      catalogue: false,
      anynines: { baseDomain: 'a9s.example.com' },
      dex: false,
      backend: { oidc: { issuerUrl: 'https://issuer.example.com', clientId: 'klutch', clientSecret: { name: 'oidc', key: 'secret' } } },
    });
    addClickHouse(cp, cp.addProviderConfig('clickhouse-service-broker', crossplane.AnyninesServiceType.SERVICE_BROKER));
    const objects = Testing.synth(cp);
    const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(names).toContain('ClusterRole/klutch-binder-exports-clickhouseinstances.analytics.example.com');
    expect(names).toContain('ProviderConfig/clickhouse-service-broker');
  });
});
