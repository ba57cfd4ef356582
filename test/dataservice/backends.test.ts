import { describe, expect, it } from '@jest/globals';
import { App, Chart } from 'cdk8s';
import { ConvertType, ReadinessCheck } from '../../constructs/crossplane/index.js';
import {
  A8sBackend,
  A9sBackend,
  DataService,
  DataServiceProps,
  OperatorProfile,
  OperatorReadiness,
  type OperatorProfileProps,
  ParameterCase,
  Plan,
  PlanTopology,
} from '../../constructs/dataservice/index.js';
import { render, statusPatches, xrFor } from './_render.js';

/** A provider-anynines ProviderConfig made elsewhere. */
const a9sConfig = (name: string) => ({ name, apiVersion: 'dataservices.anynines.com/v1', kind: 'ProviderConfig' });

type Obj = Record<string, any>;

const plans = () => [
  new Plan({ name: 'kv-single-small', topology: PlanTopology.SINGLE, size: { name: 'small', cpu: '1', memory: '1Gi', storage: '5Gi' } }),
  new Plan({ name: 'kv-replica-big', topology: PlanTopology.REPLICA, size: { name: 'big', cpu: '4', memory: '8Gi', storage: '20Gi' }, replicas: 5 }),
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

/** A profile for a made-up key-value operator; `extra` replaces props. */
const kv = (extra: Partial<OperatorProfileProps> = {}) =>
  OperatorProfile.of({ name: 'kv', apiVersion: 'kv.anynines.com/v1', kind: 'Kv', readyWhen: [OperatorReadiness.statusEquals('phase', 'Ready')], ...extra });

describe('A9sBackend', () => {
  it('renders a ServiceInstance with claim labels, service/plan, acceptsIncomplete and broker parameter names', () => {
    const comps = compositions({
      backends: [new A9sBackend({ name: 'a9s-kv', providerConfig: a9sConfig('kv-service-broker'), parameterCase: ParameterCase.KEBAB })],
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
      backends: [new A9sBackend({ name: 'a9s-kv', providerConfig: a9sConfig('kv-service-broker') }), new A8sBackend({ name: 'a8s-kv', profile: kv() })],
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
    expect(() => new A9sBackend({ name: 'A9S', providerConfig: a9sConfig('x') })).toThrow('A9sBackendProps.name: "A9S"');
    expect(() => new A9sBackend({ name: 'a9s', providerConfig: 'x' as never })).toThrow('A9sBackendProps.providerConfig: "x" must be an IProviderConfig');
    expect(() => new A9sBackend({ name: 'a9s', providerConfig: a9sConfig('x'), organizationGuid: 'nope' })).toThrow('A9sBackendProps.organizationGuid: "nope"');
    expect(() => new A9sBackend({ name: 'a9s', providerConfig: a9sConfig('x'), parameterCase: 'pascal' as never })).toThrow(
      'A9sBackendProps.parameterCase: "pascal"',
    );
  });
});

describe('A8sBackend', () => {
  it('renders a provider-kubernetes Object named like the claim, laid out as its profile says, plan → resources and replicas from the Plan objects', () => {
    const comps = compositions({
      backends: [
        new A8sBackend({
          name: 'a8s-kv',
          profile: OperatorProfile.A8S_POSTGRESQL.with({
            name: 'kv-a8s-layout',
            apiVersion: 'kv.anynines.com/v1beta1',
            kind: 'KeyValue',
            spec: { tier: 'gold' },
            version: { prefix: 'kv' },
            fieldPaths: {},
            statusFields: { ready: 'readyReplicas' },
          }),
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
    // expose has no fieldPaths entry in this profile, so it is not passed.
    expect(small.spec.forProvider.manifest.spec.expose).toBeUndefined();
    expect(statusPatches(comp)).toEqual(['status.atProvider.manifest.status.readyReplicas -> status.managed.ready']);
  });

  it('writes nothing the profile does not name: no version, no plan fields, parameters under spec.parameters', () => {
    const comps = compositions({ backends: [new A8sBackend({ name: 'a8s-kv', profile: kv() })], parameters: [{ name: 'timeout', type: 'integer' }] });
    const [o] = render(comps.get('a8s-kv')!, xrFor('c', 'n', { service: 'kv7', plan: 'kv-replica-big', parameters: { timeout: 3 } }));
    expect(o.spec.forProvider.manifest).toEqual({
      apiVersion: 'kv.anynines.com/v1',
      kind: 'Kv',
      metadata: { name: 'c', namespace: 'n' },
      spec: { parameters: { timeout: 3 } },
    });
  });

  it('maps version, parameters and fields to custom paths', () => {
    const comps = compositions({
      backends: [
        new A8sBackend({
          name: 'a8s-kv',
          profile: kv({
            version: { prefix: 'kv', path: 'spec.engine.version', convert: ConvertType.STRING },
            planResourcePaths: { storage: ['spec.storage.size'], memory: ['spec.memory'], replicas: ['spec.nodes'] },
            parametersPath: 'spec.settings',
            parameterMappings: { timeout: { path: 'spec.config.timeoutSeconds' } },
            fieldPaths: { expose: 'spec.service.type' },
          }),
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
    expect(o.spec.forProvider.manifest.spec).toEqual({
      engine: { version: '7' },
      storage: { size: '5Gi' },
      memory: '1Gi',
      nodes: 1,
      service: { type: 'LoadBalancer' },
      config: { timeoutSeconds: 3 },
      settings: { other: 'x' },
    });
  });

  it('throws when plans do not carry the resources its profile maps, or the profile names unknown parameters, fields or versions', () => {
    const mixed = [
      new Plan({ name: 'a', topology: PlanTopology.SINGLE, size: { name: 'small', storage: '1Gi' } }),
      new Plan({ name: 'b', topology: PlanTopology.SINGLE, size: { name: 'big' } }),
    ];
    const storage = kv({ planResourcePaths: { storage: ['spec.volumeSize'] } });
    expect(() => compositions({ plans: mixed, backends: [new A8sBackend({ name: 'a8s', profile: storage })] })).toThrow(
      'A8sBackend("a8s"): Plan("b").size.storage: undefined must be set: other plans of backend "a8s" set it and its profile maps it to spec.volumeSize',
    );
    expect(() => compositions({ backends: [new A8sBackend({ name: 'a8s', profile: kv({ parameterMappings: { nope: {} } }) })] })).toThrow(
      'A8sBackend("a8s").profile("kv").parameterMappings: "nope" is not a parameter accepted by backend "a8s"',
    );
    expect(() => compositions({ backends: [new A8sBackend({ name: 'a8s', profile: kv({ fieldPaths: { expose: 'spec.expose' } }) })] })).toThrow(
      'A8sBackend("a8s").profile("kv").fieldPaths: "expose" is not a top-level field of the data service',
    );
    expect(() => compositions({ backends: [new A8sBackend({ name: 'a8s', profile: kv({ version: { prefix: 'pg' } }) })] })).toThrow(
      'A8sBackend("a8s").profile("kv").version.prefix: "pg" does not turn service "kv7" into an integer version',
    );
    // A built-in profile's own mappings may name parameters a data service does not offer; the ones given in with() may not.
    expect(() =>
      compositions({ backends: [new A8sBackend({ name: 'a8s', profile: OperatorProfile.A8S_POSTGRESQL.with({ version: undefined }) })] }),
    ).not.toThrow();
    expect(() =>
      compositions({
        backends: [
          new A8sBackend({
            name: 'a8s',
            profile: OperatorProfile.A8S_POSTGRESQL.with({
              version: undefined,
              parameterMappings: { ...OperatorProfile.A8S_POSTGRESQL.parameterMappings, tmeout: {} },
            }),
          }),
        ],
      }),
    ).toThrow('A8sBackend("a8s").profile("a8s-postgresql").parameterMappings: "tmeout" is not a parameter accepted by backend "a8s"');
  });

  it('requires a profile and names the new home of the props that moved into it', () => {
    expect(() => new A8sBackend({ name: 'a8s' } as never)).toThrow(
      'A8sBackendProps.profile: undefined is required: OperatorProfile.A8S_POSTGRESQL, or OperatorProfile.of',
    );
    expect(() => new A8sBackend({ name: 'a8s', profile: { name: 'x' } as never })).toThrow(
      'A8sBackendProps.profile: {"name":"x"} must be made with OperatorProfile.of()',
    );
    expect(() => new A8sBackend({ name: 'a8s', profile: kv(), versionFromServicePrefix: 'kv' } as never)).toThrow(
      'A8sBackendProps.versionFromServicePrefix: "kv" moved into the backend\'s OperatorProfile',
    );
    expect(() => new A8sBackend({ name: 'a8s', manifest: { apiVersion: 'x.io/v1', kind: 'X' } } as never)).toThrow('A8sBackendProps.manifest: ');
  });

  it('is Ready when the Object is Ready and every readyWhen rule of the profile holds (a8s PostgreSQL: clusterStatus Running)', () => {
    const pg = compositions({ backends: [new A8sBackend({ name: 'a8s-kv', profile: OperatorProfile.A8S_POSTGRESQL.with({ version: undefined }) })] }).get(
      'a8s-kv',
    )!;
    expect(pg.spec.pipeline[0].input.resources[0].readinessChecks).toEqual([
      { type: 'MatchCondition', matchCondition: { type: 'Ready', status: 'True' } },
      { type: 'MatchString', fieldPath: 'status.atProvider.manifest.status.clusterStatus', matchString: 'Running' },
    ]);
    const custom = compositions({
      backends: [
        new A8sBackend({
          name: 'a8s-kv',
          profile: kv({ readyWhen: [OperatorReadiness.statusTrue('ready'), OperatorReadiness.objectCheck(ReadinessCheck.matchCondition('Synced'))] }),
        }),
      ],
    }).get('a8s-kv')!;
    expect(custom.spec.pipeline[0].input.resources[0].readinessChecks).toEqual([
      { type: 'MatchCondition', matchCondition: { type: 'Ready', status: 'True' } },
      { type: 'MatchTrue', fieldPath: 'status.atProvider.manifest.status.ready' },
      { type: 'MatchCondition', matchCondition: { type: 'Synced', status: 'True' } },
    ]);
  });
});
