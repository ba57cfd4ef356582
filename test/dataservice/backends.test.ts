import { describe, expect, it } from '@jest/globals';
import { App, Chart } from 'cdk8s';
import { ReadinessCheck } from '../../constructs/crossplane/index.js';
import { A8sBackend, A9sBackend, DataService, DataServiceProps, ParameterCase, Plan, Topology } from '../../constructs/dataservice/index.js';
import { render, statusPatches, xrFor } from './_render.js';

type Obj = Record<string, any>;

const plans = () => [
  new Plan({ name: 'kv-single-small', topology: Topology.SINGLE, size: { name: 'small', cpu: '1', memory: '1Gi', storage: '5Gi' } }),
  new Plan({ name: 'kv-replica-big', topology: Topology.REPLICA, size: { name: 'big', cpu: '4', memory: '8Gi', storage: '20Gi' }, replicas: 5 }),
];

function compositions(props: Partial<DataServiceProps> & Pick<DataServiceProps, 'backends'>): Map<string, Obj> {
  const chart = new Chart(new App(), 'c');
  new DataService(chart, 'kv', {
    group: 'kv.example.com',
    kind: 'XKv',
    claimKind: 'Kv',
    plans: plans(),
    services: [{ name: 'kv7' }, { name: 'kv8' }],
    ...props,
  });
  return new Map((chart.toJson() as Obj[]).filter((o) => o.kind === 'Composition').map((o) => [o.metadata.name, o]));
}

describe('A9sBackend', () => {
  it('renders a ServiceInstance with claim labels, service/plan, acceptsIncomplete and broker parameter names', () => {
    const comps = compositions({
      backends: [new A9sBackend({ name: 'a9s-kv', providerConfigName: 'kv-service-broker', parameterCase: ParameterCase.KEBAB })],
      parameters: [
        { name: 'maxMemoryPolicy', type: 'string' },
        { name: 'tlsCiphers', type: 'string', brokerName: 'tls_ciphers' },
      ],
    });
    const comp = comps.get('a9s-kv')!;
    expect(comp.spec.compositeTypeRef).toEqual({ apiVersion: 'kv.example.com/v1', kind: 'XKv' });
    expect(comp.spec.mode).toBe('Pipeline');
    expect(comp.spec.pipeline[0].functionRef).toEqual({ name: 'function-patch-and-transform' });
    const [si] = render(
      comp,
      xrFor('cache', 'team-a', {
        service: 'kv8',
        plan: 'kv-replica-big',
        acceptsIncomplete: true,
        parameters: { maxMemoryPolicy: 'noeviction', tlsCiphers: 'HIGH' },
      }),
    );
    expect(si).toEqual({
      apiVersion: 'dataservices.anynines.com/v1',
      kind: 'ServiceInstance',
      metadata: { labels: { 'crossplane.io/claim-name': 'cache', 'crossplane.io/claim-namespace': 'team-a' } },
      spec: {
        forProvider: {
          acceptsIncomplete: true,
          organizationGuid: 'a1d46b5c-b639-4f43-85c7-e9a0e5f01f75',
          spaceGuid: '1bf71cf3-9017-4846-bffc-b9b31872bfaf',
          serviceName: 'kv8',
          planName: 'kv-replica-big',
          parameters: { 'max-memory-policy': 'noeviction', tls_ciphers: 'HIGH' },
        },
        providerConfigRef: { name: 'kv-service-broker' },
      },
    });
    expect(statusPatches(comp)).toEqual([
      'status.atProvider.createdAt -> status.managed.createdAt',
      'status.atProvider.provisionedAt -> status.managed.provisionedAt',
      'status.atProvider.state -> status.managed.state',
      'status.atProvider.updatedAt -> status.managed.updatedAt',
      'status.conditions -> status.managed.conditions',
    ]);
  });

  it('converts names to snake_case by default and passes only its own parameters', () => {
    const comps = compositions({
      backends: [
        new A9sBackend({ name: 'a9s-kv', providerConfigName: 'kv-service-broker' }),
        new A8sBackend({ name: 'a8s-kv', manifest: { apiVersion: 'kv.anynines.com/v1', kind: 'Kv' } }),
      ],
      parameters: [
        { name: 'maxMemoryPolicy', type: 'string' },
        { name: 'operatorOnly', type: 'string', backends: ['a8s-kv'] },
      ],
    });
    const [si] = render(
      comps.get('a9s-kv')!,
      xrFor('c', 'n', { service: 'kv7', plan: 'kv-single-small', parameters: { maxMemoryPolicy: 'x', operatorOnly: 'y' } }),
    );
    expect(si.spec.forProvider.parameters).toEqual({ max_memory_policy: 'x' });
  });

  it('rejects bad props', () => {
    expect(() => new A9sBackend({ name: 'A9S', providerConfigName: 'x' })).toThrow('A9sBackendProps.name: "A9S"');
    expect(() => new A9sBackend({ name: 'a9s', providerConfigName: 'x_y' })).toThrow('A9sBackendProps.providerConfigName: "x_y"');
    expect(() => new A9sBackend({ name: 'a9s', providerConfigName: 'x', organizationGuid: 'nope' })).toThrow('A9sBackendProps.organizationGuid: "nope"');
    expect(() => new A9sBackend({ name: 'a9s', providerConfigName: 'x', parameterCase: 'pascal' as never })).toThrow('A9sBackendProps.parameterCase: "pascal"');
  });
});

describe('A8sBackend', () => {
  it('renders a provider-kubernetes Object named like the claim, with plan → resources and replicas from the Plan objects', () => {
    const comps = compositions({
      backends: [
        new A8sBackend({
          name: 'a8s-kv',
          manifest: { apiVersion: 'kv.anynines.com/v1beta1', kind: 'KeyValue', spec: { tier: 'gold' } },
          versionFromServicePrefix: 'kv',
          statusFields: { ready: 'readyReplicas' },
        }),
      ],
      fields: [{ name: 'expose', type: 'string', enum: ['Internal', 'LoadBalancer'] }],
    });
    const comp = comps.get('a8s-kv')!;
    const big = render(comp, xrFor('cache', 'team-a', { service: 'kv8', plan: 'kv-replica-big' }))[0];
    expect(big).toEqual({
      apiVersion: 'kubernetes.crossplane.io/v1alpha1',
      kind: 'Object',
      spec: {
        providerConfigRef: { name: 'kubernetes-provider' },
        forProvider: {
          manifest: {
            apiVersion: 'kv.anynines.com/v1beta1',
            kind: 'KeyValue',
            metadata: { name: 'cache', namespace: 'team-a' },
            spec: {
              tier: 'gold',
              version: 8,
              volumeSize: '20Gi',
              replicas: 5,
              resources: { requests: { cpu: '4', memory: '8Gi' }, limits: { cpu: '4', memory: '8Gi' } },
            },
          },
        },
      },
    });
    const small = render(comp, xrFor('c', 'n', { service: 'kv7', plan: 'kv-single-small', expose: 'Internal' }))[0];
    expect(small.spec.forProvider.manifest.spec).toMatchObject({ version: 7, volumeSize: '5Gi', replicas: 1 });
    // expose has no fieldPaths mapping on this backend, so it is not passed.
    expect(small.spec.forProvider.manifest.spec.expose).toBeUndefined();
    expect(statusPatches(comp)).toEqual(['status.atProvider.manifest.status.readyReplicas -> status.managed.ready']);
  });

  it('maps parameters and fields to custom paths', () => {
    const comps = compositions({
      backends: [
        new A8sBackend({
          name: 'a8s-kv',
          manifest: { apiVersion: 'kv.anynines.com/v1', kind: 'Kv' },
          providerConfigName: 'in-cluster',
          planResourcePaths: { storage: ['spec.storage.size'], cpu: [], memory: ['spec.memory'], replicas: ['spec.nodes'] },
          parameterMappings: { timeout: { path: 'spec.config.timeoutSeconds' } },
          fieldPaths: { expose: 'spec.service.type' },
        }),
      ],
      fields: [{ name: 'expose', type: 'string' }],
      parameters: [
        { name: 'timeout', type: 'integer' },
        { name: 'other', type: 'string' },
      ],
    });
    const [o] = render(
      comps.get('a8s-kv')!,
      xrFor('c', 'n', { service: 'kv7', plan: 'kv-single-small', expose: 'LoadBalancer', parameters: { timeout: 3, other: 'x' } }),
    );
    expect(o.spec.providerConfigRef.name).toBe('in-cluster');
    expect(o.spec.forProvider.manifest.spec).toEqual({
      storage: { size: '5Gi' },
      memory: '1Gi',
      nodes: 1,
      service: { type: 'LoadBalancer' },
      config: { timeoutSeconds: 3 },
      parameters: { other: 'x' },
    });
  });

  it('throws when plans do not carry the resources it maps, or mappings name unknown parameters', () => {
    const mixed = [
      new Plan({ name: 'a', topology: Topology.SINGLE, size: { name: 'small', storage: '1Gi' } }),
      new Plan({ name: 'b', topology: Topology.SINGLE, size: { name: 'big' } }),
    ];
    expect(() => compositions({ plans: mixed, backends: [new A8sBackend({ name: 'a8s', manifest: { apiVersion: 'x.io/v1', kind: 'X' } })] })).toThrow(
      'A8sBackend("a8s"): Plan("b").size.storage: undefined must be set',
    );
    expect(() =>
      compositions({ backends: [new A8sBackend({ name: 'a8s', manifest: { apiVersion: 'x.io/v1', kind: 'X' }, parameterMappings: { nope: {} } })] }),
    ).toThrow('A8sBackend("a8s").parameterMappings: "nope" is not a parameter accepted by backend "a8s"');
    expect(() =>
      compositions({ backends: [new A8sBackend({ name: 'a8s', manifest: { apiVersion: 'x.io/v1', kind: 'X' }, versionFromServicePrefix: 'pg' })] }),
    ).toThrow('A8sBackend("a8s").versionFromServicePrefix: "pg" does not turn service "kv7" into an integer version');
    expect(() => new A8sBackend({ name: 'a8s', manifest: { apiVersion: 'nogroup', kind: 'X' } })).toThrow('A8sBackendProps.manifest.apiVersion: "nogroup"');
    expect(() => new A8sBackend({ name: 'a8s', manifest: { apiVersion: 'x.io/v1', kind: 'lower' } })).toThrow('A8sBackendProps.manifest.kind: "lower"');
    expect(() => new A8sBackend({ name: 'a8s', manifest: { apiVersion: 'x.io/v1', kind: 'X' }, readinessChecks: [] })).toThrow(
      'A8sBackendProps.readinessChecks: [] must list at least one ReadinessCheck',
    );
    expect(() => new A8sBackend({ name: 'a8s', manifest: { apiVersion: 'x.io/v1', kind: 'X' }, readinessChecks: [{ type: 'None' } as never] })).toThrow(
      'A8sBackendProps.readinessChecks[0]: {"type":"None"} must be made with a ReadinessCheck factory',
    );
  });

  it('is Ready when the operator reports clusterStatus Running (not when the Object exists); checks can be replaced', () => {
    const comp = compositions({ backends: [new A8sBackend({ name: 'a8s-kv', manifest: { apiVersion: 'kv.anynines.com/v1', kind: 'Kv' } })] }).get('a8s-kv')!;
    expect(comp.spec.pipeline[0].input.resources[0].readinessChecks).toEqual([
      { type: 'MatchCondition', matchCondition: { type: 'Ready', status: 'True' } },
      { type: 'MatchString', fieldPath: 'status.atProvider.manifest.status.clusterStatus', matchString: 'Running' },
    ]);
    const custom = compositions({
      backends: [
        new A8sBackend({
          name: 'a8s-kv',
          manifest: { apiVersion: 'kv.anynines.com/v1', kind: 'Kv' },
          readinessChecks: [ReadinessCheck.matchTrue('status.atProvider.manifest.status.ready')],
        }),
      ],
    }).get('a8s-kv')!;
    expect(custom.spec.pipeline[0].input.resources[0].readinessChecks).toEqual([{ type: 'MatchTrue', fieldPath: 'status.atProvider.manifest.status.ready' }]);
  });
});
