/**
 * Two data services of one cluster that define the same kind, resource, backend (Composition) or
 * export template: an error naming both data services, at the second one's construction.
 */
import { describe, expect, it } from '@jest/globals';
import { App, Chart } from 'cdk8s';
import { A9sBackend, DataService, Plan, PlanTopology, type DataServiceProps } from '../../constructs/dataservice/index.js';
import { ControlPlaneCluster, type ControlPlaneClusterProps } from '../../constructs/topology/index.js';

/** A provider-anynines ProviderConfig made elsewhere. */
const a9sConfig = (name: string) => ({ name, apiVersion: 'dataservices.anynines.com/v1', kind: 'ProviderConfig' });

const plan = new Plan({ name: 'q-small', topology: PlanTopology.SINGLE, size: { name: 'small', cpu: '1', memory: '1Gi', storage: '1Gi' } });
const props = (backend: string, extra: Partial<DataServiceProps> = {}): DataServiceProps => ({
  group: 'queues.example.com',
  kind: 'XQueueInstance',
  claimKind: 'QueueInstance',
  plans: [plan],
  services: [{ name: 'queue4' }],
  backends: [new A9sBackend({ name: backend, providerConfig: a9sConfig('queue-service-broker') })],
  ...extra,
});
const pair = (a: DataServiceProps, b: DataServiceProps) => () => {
  const chart = new Chart(new App(), 'cp');
  new DataService(chart, 'first', a);
  new DataService(chart, 'second', b);
};

describe('data services that clash', () => {
  it('the same kind in the same group', () => {
    expect(pair(props('vm-a'), props('vm-b'))).toThrow(
      'DataService "cp/first" and DataService "cp/second" both define kind "XQueueInstance" in group "queues.example.com"; give one of them another kind (DataServiceProps.kind, claimKind) or group',
    );
  });

  it('the same claim kind in the same group, or one kind as the other claim kind', () => {
    expect(pair(props('vm-a'), props('vm-b', { kind: 'XOtherQueue' }))).toThrow(
      'DataService "cp/first" and DataService "cp/second" both define kind "QueueInstance" in group "queues.example.com"',
    );
    expect(pair(props('vm-a'), props('vm-b', { kind: 'QueueInstance', claimKind: 'Queue2' }))).toThrow('both define kind "QueueInstance"');
  });

  it('the same resource (plural) in the same group', () => {
    expect(pair(props('vm-a'), props('vm-b', { kind: 'XQ2', claimKind: 'Q2', claimPlural: 'queueinstances' }))).toThrow(
      'DataService "cp/first" and DataService "cp/second" both define the resource "queueinstances.queues.example.com"',
    );
  });

  it('a backend of the same name (its Composition is cluster-scoped)', () => {
    expect(pair(props('vm-queue'), props('vm-queue', { group: 'other.example.com' }))).toThrow(
      'DataService "cp/first" and DataService "cp/second" both have a backend "vm-queue" (its Composition "vm-queue" is cluster-scoped)',
    );
  });

  it('the same export template (claim plural in one namespace, different groups)', () => {
    expect(pair(props('vm-a'), props('vm-b', { group: 'other.example.com' }))).toThrow(
      'DataService "cp/first" and DataService "cp/second" both export through the APIServiceExportTemplate crossplane-system/queueinstances (groups "queues.example.com" and "other.example.com")',
    );
    expect(pair(props('vm-a'), props('vm-b', { group: 'other.example.com', exportTemplateNamespace: 'other' }))).not.toThrow();
  });

  it('nothing in common, or the same data service in two clusters (charts): no error', () => {
    expect(pair(props('vm-a'), props('vm-b', { group: 'other.example.com', claimPlural: 'otherqueues' }))).not.toThrow();
    const app = new App();
    expect(() => {
      new DataService(new Chart(app, 'one'), 'queue', props('vm-a'));
      new DataService(new Chart(app, 'two'), 'queue', props('vm-a'));
    }).not.toThrow();
  });

  it('in a ControlPlaneCluster: a data service of a catalogue kind names the catalogue entry', () => {
    const dex: ControlPlaneClusterProps['dex'] = { connectors: [{ type: 'mockCallback', id: 'mock', name: 'Mock', config: {} }] };
    const cp = new ControlPlaneCluster(new App({ outdir: '/nonexistent' }), 'CP', {
      host: 'bind.example.com',
      dex,
      anynines: { baseDomain: 'a9s.example.com' },
    });
    expect(() => cp.addDataService('pg', props('vm-pg', { group: 'anynines.com', kind: 'XPostgresqlInstance', claimKind: 'PostgresqlInstance' }))).toThrow(
      /^DataService "CP\/Catalogue\/\w+" and DataService "CP\/pg" both define kind "XPostgresqlInstance" in group "anynines.com"/,
    );
    expect(() => cp.addDataService('q', props('a8s-postgresql'))).toThrow(
      /^DataService "CP\/Catalogue\/\w+" and DataService "CP\/q" both have a backend "a8s-postgresql"/,
    );
  });
});
