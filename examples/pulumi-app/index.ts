// A Pulumi program (CommonJS TypeScript, run by ts-node as Pulumi's TypeScript template is): the
// README's data service in a control plane chart, deployed by klutch-kit's ControlPlane component.
import * as pulumi from '@pulumi/pulumi';
import { App } from 'cdk8s';
import { ControlPlaneCluster, crossplane } from 'klutch-kit';
import { ControlPlane, STACK_SECRETS, type KubeObject } from 'klutch-kit/stacks';
import { PHASES, phaseOf } from 'klutch-kit/topology';
import { addClickHouse } from './clickhouse';

const config = new pulumi.Config();
const app = new App({ outdir: 'dist' });
const chart = new ControlPlaneCluster(app, 'ControlPlane', {
  host: 'bind.example.com',
  anynines: { baseDomain: 'a9s.example.com' },
  oidcClientSecret: { name: STACK_SECRETS.oidc.name, key: STACK_SECRETS.oidc.clientSecretKey },
  cookieSecretName: STACK_SECRETS.cookies.name,
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
addClickHouse(chart, chart.addProviderConfig('clickhouse-service-broker', crossplane.AnyninesServiceType.SERVICE_BROKER));

// Crossplane itself (phase "platform": an Argo CD Application) is left to you or to the Topology component.
const objects = (chart.toJson() as KubeObject[]).filter((o) => phaseOf(o.apiVersion, o.kind) !== PHASES.platform);

const controlPlane = new ControlPlane('control-plane', {
  cluster: 'control-plane',
  kubeconfig: config.requireSecret('kubeconfig'),
  objects,
  secrets: { oidcClientSecret: config.requireSecret('oidcClientSecret'), cookieSigningKey: config.requireSecret('cookieSigningKey') },
  backendUrl: 'https://bind.example.com',
  skipAwait: true,
});

export const backendUrl = controlPlane.backendUrl;
