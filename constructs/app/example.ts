/**
 * The example topology named in cdk8s.yaml: one control plane carrying the whole Klutch catalogue,
 * and two app clusters bound to it with sample claims.
 */
import { App } from 'cdk8s';
import { AppCluster, ControlPlaneCluster } from '../topology/index.js';

/** Flux output of the example: `dist/<cluster>/_flux/kustomizations.yaml` chains the phase folders. */
export const EXAMPLE_FLUX = { sourceRef: { name: 'klutch-gitops' }, path: './dist' } as const;

/** Argo CD output of the example: `dist/<cluster>/_argocd/root.yaml`, one Application per phase folder. */
export const EXAMPLE_ARGOCD = { repoURL: 'https://git.example.com/klutch-gitops.git', path: 'dist' } as const;

export interface ExampleTopology {
  readonly controlPlane: ControlPlaneCluster;
  readonly appClusters: readonly AppCluster[];
}

/** Builds the example topology into `app`. */
export function exampleTopology(app: App): ExampleTopology {
  const controlPlane = new ControlPlaneCluster(app, 'ControlPlane', {
    clusterName: 'control-plane',
    host: 'bind.klutch.example.com',
    externalAddress: 'https://api.control-plane.klutch.example.com:6443',
    ingressClassName: 'nginx',
    tlsSecretName: 'bind-klutch-tls',
    anynines: { baseDomain: 'a9s.klutch.example.com' },
    dex: {
      connectors: [
        {
          type: 'github',
          id: 'github',
          name: 'GitHub',
          config: {
            clientID: '$GITHUB_CLIENT_ID',
            clientSecret: '$GITHUB_CLIENT_SECRET',
            redirectURI: 'https://bind.klutch.example.com/dex/callback',
            orgs: [{ name: 'klutch-example' }],
          },
          secretEnv: {
            GITHUB_CLIENT_ID: { name: 'dex-github', key: 'client-id' },
            GITHUB_CLIENT_SECRET: { name: 'dex-github', key: 'client-secret' },
          },
        },
      ],
    },
  });

  // Team "shop": PostgreSQL on a8s (the default backend), its credentials, and a Valkey cache.
  const shop = new AppCluster(app, 'AppShop', { clusterName: 'app-shop', controlPlane });
  shop.addClaim({
    kind: 'PostgresqlInstance',
    name: 'orders-db',
    namespace: 'shop',
    spec: { service: 'a9s-postgresql14', plan: 'postgresql-single-nano', expose: 'Internal', compositionRef: { name: 'a8s-postgresql' } },
  });
  shop.addClaim({
    kind: 'ServiceBinding',
    name: 'orders-db-creds',
    namespace: 'shop',
    spec: { instanceRef: 'orders-db', serviceInstanceType: 'postgresql', compositionRef: { name: 'a8s-servicebinding' } },
  });
  shop.addClaim({
    kind: 'KeyvalueInstance',
    name: 'session-cache',
    namespace: 'shop',
    spec: { service: 'a9s-keyvalue8', plan: 'keyvalue-single-nano-ssl', compositionRef: { name: 'a9s-keyvalue' } },
  });

  // Team "analytics": PostgreSQL on a9s (VMs) with a backup; binds only what it uses.
  const analytics = new AppCluster(app, 'AppAnalytics', {
    clusterName: 'app-analytics',
    controlPlane,
    bind: ['postgresqlinstances.anynines.com', 'servicebindings.anynines.com', 'backups.anynines.com'],
  });
  analytics.addClaim({
    kind: 'PostgresqlInstance',
    name: 'warehouse',
    namespace: 'analytics',
    spec: { service: 'a9s-postgresql15', plan: 'postgresql-replica-small', compositionRef: { name: 'a9s-postgresql' } },
  });
  analytics.addClaim({
    kind: 'ServiceBinding',
    name: 'warehouse-creds',
    namespace: 'analytics',
    spec: { instanceRef: 'warehouse', serviceInstanceType: 'postgresql', compositionRef: { name: 'a9s-servicebinding' } },
  });
  analytics.addClaim({
    kind: 'Backup',
    name: 'warehouse-nightly',
    namespace: 'analytics',
    spec: { instanceRef: 'warehouse', serviceInstanceType: 'postgresql', compositionRef: { name: 'a9s-backup' } },
  });
  return { controlPlane, appClusters: [shop, analytics] };
}
