// A project on a current cdk8s-plus (cdk8s-plus-33, Kubernetes 1.33) that also uses klutch-kit, whose
// constructs are built on cdk8s-plus-28 (the peer it declares, installed beside): one cdk8s and one
// constructs for both, cdk8s-plus-33 constructs in klutch-kit's cluster charts, next to and wired to
// klutch-kit's objects, written and validated by synthTopology.
import { App } from 'cdk8s';
import * as kplus from 'cdk8s-plus-33';
import { AppCluster, ControlPlaneCluster, crossplane, synthTopology } from 'klutch-kit';
import { addClickHouse } from './clickhouse.js';

const app = new App();
const controlPlane = new ControlPlaneCluster(app, 'ControlPlane', {
  host: 'bind.example.com',
  catalogue: false,
  anynines: { baseDomain: 'a9s.example.com' },
  dex: { connectors: [{ type: 'mockCallback', id: 'mock', name: 'Mock', config: {} }] },
});
addClickHouse(controlPlane, controlPlane.addProviderConfig('clickhouse-service-broker', crossplane.AnyninesServiceType.SERVICE_BROKER));

// The control plane's bind backend, reached by a cdk8s-plus-33 NetworkPolicy selecting its pods.
const backendPods = kplus.Pods.select(controlPlane, 'BackendPods', { labels: { 'app.kubernetes.io/name': controlPlane.backend.name } });
new kplus.NetworkPolicy(controlPlane, 'BackendIngress', {
  metadata: { name: 'klutch-backend-ingress', namespace: controlPlane.backend.namespace },
  selector: backendPods,
}).addIngressRule(kplus.Pods.all(controlPlane, 'AllPods'), [kplus.NetworkPolicyPort.tcp(8080)]);

const shop = new AppCluster(app, 'AppShop', { clusterName: 'app-shop', controlPlane });
const claim = shop.addClaim({
  kind: 'ClickhouseInstance',
  name: 'events',
  namespace: 'shop',
  spec: { service: 'clickhouse24', plan: 'clickhouse-single-small', compositionRef: { name: 'k8s-clickhouse' } },
});

// The application using the bound ClickHouse, written with cdk8s-plus-33: it may read the claims of the
// bound API (klutch-kit's binding tells the group and resource) and gets the password from the Secret
// the binding syncs.
const [clickhouse] = shop.boundApis;
const serviceAccount = new kplus.ServiceAccount(shop, 'EventsSa', { metadata: { name: 'events-app', namespace: 'shop' } });
const readClaims = new kplus.Role(shop, 'ReadClaims', { metadata: { name: 'read-clickhouse', namespace: 'shop' } });
readClaims.allowRead(kplus.ApiResource.custom({ apiGroup: clickhouse.group, resourceType: clickhouse.resource }));
new kplus.RoleBinding(shop, 'ReadClaimsBinding', { metadata: { name: 'read-clickhouse', namespace: 'shop' }, role: readClaims }).addSubjects(serviceAccount);
const app1 = new kplus.Deployment(shop, 'EventsApp', {
  metadata: { name: 'events-app', namespace: 'shop' },
  serviceAccount,
  containers: [
    {
      image: 'ghcr.io/example/events-app:1.0.0',
      portNumber: 8080,
      envVariables: {
        CLICKHOUSE_PASSWORD: kplus.EnvValue.fromSecretValue({ secret: kplus.Secret.fromSecretName(shop, 'Creds', 'events-creds'), key: 'password' }),
      },
    },
  ],
});
app1.node.addDependency(claim); // a klutch-kit object as a dependency of a cdk8s-plus-33 one

// no top-level await: the same file runs under any module setting
synthTopology(app, { outdir: 'dist' }).then(
  (r) => console.log(`synthesized and validated ${r.objects} objects in ${r.clusters.map((c) => c.name).join(', ')}`),
  (e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  },
);
