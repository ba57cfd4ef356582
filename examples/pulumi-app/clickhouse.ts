import type { Construct } from 'constructs';
import type { IProviderConfig } from 'klutch-kit/crossplane';
import { A8sBackend, A9sBackend, DataService, OperatorProfile, OperatorReadiness, Plan, PlanTopology, credentialsSecretClaim } from 'klutch-kit/dataservice';

const small = { name: 'small', cpu: '2', memory: '8Gi', storage: '50Gi' };
const big = { name: 'big', cpu: '8', memory: '32Gi', storage: '500Gi' };

export function addClickHouse(scope: Construct, broker: IProviderConfig): DataService {
  return new DataService(scope, 'clickhouse', {
    group: 'analytics.example.com',
    kind: 'XClickhouseInstance',
    claimKind: 'ClickhouseInstance',
    plans: [
      new Plan({ name: 'clickhouse-single-small', topology: PlanTopology.SINGLE, size: small }),
      new Plan({ name: 'clickhouse-single-big', topology: PlanTopology.SINGLE, size: big }),
      new Plan({ name: 'clickhouse-cluster-small-ssl', topology: PlanTopology.CLUSTER, size: small, flags: ['ssl'] }),
      new Plan({ name: 'clickhouse-cluster-big-ssl', topology: PlanTopology.CLUSTER, size: big, flags: ['ssl'] }),
    ],
    services: [{ name: 'clickhouse24' }, { name: 'clickhouse25', plans: ['clickhouse-cluster-small-ssl', 'clickhouse-cluster-big-ssl'] }],
    parameters: [
      { name: 'maxConcurrentQueries', type: 'integer', minimum: 1, maximum: 1000, description: 'Queries run at once.' },
      { name: 'logLevel', type: 'string', enum: ['error', 'warning', 'information'], backends: ['vm-clickhouse'], brokerName: 'logger_level' },
      { name: 'keeperNodes', type: 'integer', minimum: 3, multiNodeOnly: true, description: 'ClickHouse Keeper nodes.' },
    ],
    backends: [
      new A8sBackend({
        name: 'k8s-clickhouse',
        profile: OperatorProfile.of({
          name: 'clickhouse',
          apiVersion: 'clickhouse.example.com/v1',
          kind: 'ClickHouse',
          version: { prefix: 'clickhouse' },
          planResourcePaths: {
            storage: ['spec.volumeSize'],
            cpu: ['spec.resources.requests.cpu'],
            memory: ['spec.resources.requests.memory'],
            replicas: ['spec.replicas'],
          },
          statusFields: { phase: 'phase' },
          readyWhen: [OperatorReadiness.statusEquals('phase', 'Running')],
        }),
      }),
      new A9sBackend({ name: 'vm-clickhouse', services: ['clickhouse24'], providerConfig: broker }),
    ],
    permissionClaims: [credentialsSecretClaim()],
  });
}
