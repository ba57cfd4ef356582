import { App } from 'cdk8s';
import { AppCluster, ControlPlaneCluster, crossplane } from 'klutch-kit';
import { addClickHouse } from './clickhouse';

const app = new App();
const controlPlane = new ControlPlaneCluster(app, 'control-plane', {
  host: 'bind.example.com',
  anynines: { baseDomain: 'a9s.example.com' },
  dex: {
    connectors: [
      {
        type: 'github',
        id: 'github',
        name: 'GitHub',
        config: { clientID: '$GITHUB_CLIENT_ID', clientSecret: '$GITHUB_CLIENT_SECRET' },
        secretEnv: { GITHUB_CLIENT_ID: { name: 'dex-github', key: 'client-id' }, GITHUB_CLIENT_SECRET: { name: 'dex-github', key: 'client-secret' } },
      },
    ],
  },
});
addClickHouse(controlPlane, controlPlane.addProviderConfig('clickhouse-service-broker', crossplane.AnyninesServiceType.SERVICE_BROKER));
const shop = new AppCluster(app, 'app-shop', { clusterName: 'app-shop', controlPlane });
shop.addClaim({
  kind: 'ClickhouseInstance',
  name: 'events',
  namespace: 'shop',
  spec: { service: 'clickhouse24', plan: 'clickhouse-single-small', compositionRef: { name: 'k8s-clickhouse' } },
});
app.synth();
