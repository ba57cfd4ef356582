/**
 * OperatorProfile: what A8sBackend writes into an operator's object and which status means ready —
 * the built-in a8s PostgreSQL profile (as the catalogue's a8s-postgresql backend renders it), every
 * prop's checks, `with()`, and the OperatorReadiness rules.
 */
import { describe, expect, it } from '@jest/globals';
import { App, Chart } from 'cdk8s';
import { Catalogue } from '../../constructs/catalogue/index.js';
import { ConvertType, ReadinessCheck, Transform } from '../../constructs/crossplane/index.js';
import { A8sBackend, OperatorProfile, OperatorReadiness, type OperatorProfileProps } from '../../constructs/dataservice/index.js';
import { render, statusPatches, xrFor } from './_render.js';

type Obj = Record<string, any>;

const base = (extra: Partial<OperatorProfileProps> = {}): OperatorProfileProps => ({
  name: 'redis',
  apiVersion: 'cache.example.com/v1',
  kind: 'RedisCluster',
  readyWhen: [OperatorReadiness.statusEquals('phase', 'Ready')],
  ...extra,
});

describe('OperatorProfile.A8S_POSTGRESQL', () => {
  it("is the layout the catalogue's a8s-postgresql Composition writes: version, plan resources, expose, parameter names, status, readiness", () => {
    const chart = new Chart(new App(), 'c');
    const catalogue = new Catalogue(chart, 'catalogue', { services: ['postgresql'], operations: [] });
    const ds = catalogue.service('postgresql');
    expect((ds.backends.find((b) => b.name === 'a8s-postgresql') as A8sBackend).profile).toBe(OperatorProfile.A8S_POSTGRESQL);
    const comp = (chart.toJson() as Obj[]).find((o) => o.kind === 'Composition' && o.metadata.name === 'a8s-postgresql')!;
    const plan = ds.model.plans.get('postgresql-replica-small')!;
    const [obj] = render(
      comp,
      xrFor('orders', 'team-a', {
        service: 'a9s-postgresql14',
        plan: plan.name,
        parameters: { maxConnections: 150, logMinMessages: 'WARNING', tempFileLimit: 2048 },
      }),
    );
    expect(obj.spec.forProvider.manifest).toEqual({
      apiVersion: 'postgresql.anynines.com/v1beta3',
      kind: 'Postgresql',
      metadata: { name: 'orders', namespace: 'team-a' },
      spec: {
        expose: 'LoadBalancer',
        version: 14,
        volumeSize: plan.size.storage,
        resources: { requests: { cpu: plan.size.cpu, memory: plan.size.memory }, limits: { cpu: plan.size.cpu, memory: plan.size.memory } },
        replicas: plan.replicas,
        parameters: { maxConnections: 150, logMinMessages: 'warning', tempFileLimitKiloBytes: 2048 },
      },
    });
    expect(statusPatches(comp)).toEqual([
      'status.atProvider.manifest.status.clusterStatus -> status.managed.clusterStatus',
      'status.atProvider.manifest.status.readyReplicas -> status.managed.readyReplicas',
    ]);
    expect(comp.spec.pipeline[0].input.resources[0].readinessChecks).toEqual([
      { type: 'MatchCondition', matchCondition: { type: 'Ready', status: 'True' } },
      { type: 'MatchString', fieldPath: 'status.atProvider.manifest.status.clusterStatus', matchString: 'Running' },
    ]);
    expect(OperatorProfile.all).toEqual([OperatorProfile.A8S_POSTGRESQL]);
    expect(String(OperatorProfile.A8S_POSTGRESQL)).toBe('OperatorProfile(a8s-postgresql: postgresql.anynines.com/v1beta3 Postgresql)');
  });
});

describe('OperatorProfile.of', () => {
  it('defaults to writing nothing it is not told: no version, no plan fields, parameters under spec.parameters', () => {
    const p = OperatorProfile.of(base());
    expect(p.version).toBeUndefined();
    expect(p.planResourcePaths).toEqual({ storage: [], cpu: [], memory: [], replicas: [] });
    expect(p.parametersPath).toBe('spec.parameters');
    expect([p.parameterMappings, p.fieldPaths, p.statusFields]).toEqual([{}, {}, {}]);
    expect(p.version).toBeUndefined();
    expect(OperatorProfile.of(base({ version: { prefix: 'redis' } })).version).toEqual({ prefix: 'redis', path: 'spec.version', convert: ConvertType.INT });
  });

  it('is an error without a readiness rule, naming the prop', () => {
    const { readyWhen: _, ...noReady } = base();
    expect(() => OperatorProfile.of(noReady as OperatorProfileProps)).toThrow(
      'OperatorProfile("redis").readyWhen: undefined must list at least one OperatorReadiness rule (e.g. OperatorReadiness.statusEquals("phase", "Ready")): without one a claim is Ready as soon as the Object exists',
    );
    expect(() => OperatorProfile.of(base({ readyWhen: [] }))).toThrow('OperatorProfile("redis").readyWhen: [] must list at least one OperatorReadiness rule');
    expect(() => OperatorProfile.of(base({ readyWhen: [ReadinessCheck.matchTrue('status.ready') as never] }))).toThrow(
      'OperatorProfile("redis").readyWhen[0]: {"type":"MatchTrue","fieldPath":"status.ready"} must be made with an OperatorReadiness factory',
    );
  });

  it('rejects bad props naming the prop and the value', () => {
    const cases: Array<[Partial<OperatorProfileProps>, string]> = [
      [{ name: '' }, 'OperatorProfile.name: "" must be a non-empty string'],
      [{ apiVersion: 'nogroup' }, 'OperatorProfile("redis").apiVersion: "nogroup" must be "<group>/<version>"'],
      [{ kind: 'lower' }, 'OperatorProfile("redis").kind: "lower" must be a PascalCase kind'],
      [{ spec: [] as never }, 'OperatorProfile("redis").spec: [] must be an object'],
      [{ version: { prefix: '' } }, 'OperatorProfile("redis").version.prefix: "" must be a non-empty string'],
      [
        { version: { prefix: 'r', path: 'status.version' } },
        'OperatorProfile("redis").version.path: "status.version" must be a dotted path below the operator object, starting with "spec."',
      ],
      [
        { version: { prefix: 'r', convert: ConvertType.BOOL } },
        'OperatorProfile("redis").version.convert: "bool" must be ConvertType.INT, ConvertType.INT64 or ConvertType.STRING',
      ],
      [
        { planResourcePaths: { disk: ['spec.disk'] } as never },
        'OperatorProfile("redis").planResourcePaths: "disk" is not one of storage, cpu, memory, replicas',
      ],
      [{ planResourcePaths: { storage: 'spec.size' as never } }, 'OperatorProfile("redis").planResourcePaths.storage: "spec.size" must be a list of paths'],
      [{ planResourcePaths: { storage: ['spec..size'] } }, 'OperatorProfile("redis").planResourcePaths.storage[0]: "spec..size" must be a dotted path'],
      [{ parametersPath: 'config' }, 'OperatorProfile("redis").parametersPath: "config" must be a dotted path below the operator object'],
      [{ parameterMappings: { x: { path: 'x' } } }, 'OperatorProfile("redis").parameterMappings.x.path: "x" must be a dotted path'],
      [
        { parameterMappings: { x: { transforms: ['lower'] as never } } },
        'OperatorProfile("redis").parameterMappings.x.transforms: ["lower"] must be a list made with the Transform factories',
      ],
      [{ fieldPaths: { expose: 'expose' } }, 'OperatorProfile("redis").fieldPaths.expose: "expose" must be a dotted path'],
      [{ statusFields: { phase: 'status phase' } }, 'OperatorProfile("redis").statusFields.phase: "status phase" must be a dotted field path'],
    ];
    for (const [extra, message] of cases) expect(() => OperatorProfile.of(base(extra))).toThrow(message);
  });

  it('with() replaces props and keeps the rest; the result is a new profile', () => {
    const p = OperatorProfile.of(base({ statusFields: { phase: 'phase' } }));
    const q = p.with({
      name: 'redis-7',
      parametersPath: 'spec.config',
      parameterMappings: { evictionPolicy: { transforms: [Transform.map({ lru: 'allkeys-lru' })] } },
    });
    expect([q.name, q.kind, q.parametersPath, q.statusFields, q.readyWhen]).toEqual([
      'redis-7',
      'RedisCluster',
      'spec.config',
      { phase: 'phase' },
      p.readyWhen,
    ]);
    expect(p.parametersPath).toBe('spec.parameters');
    expect(() => p.with({ readyWhen: [] })).toThrow('OperatorProfile("redis").readyWhen: [] must list');
    // The built-in profile's own keys stay optional while unchanged; new ones are checked.
    const pg = OperatorProfile.A8S_POSTGRESQL;
    expect(pg.isOptionalKey('tempFileLimit')).toBe(true);
    const extended = pg.with({ parameterMappings: { ...pg.parameterMappings, workMem: { path: 'spec.parameters.workMemKiloBytes' } } });
    expect([extended.isOptionalKey('tempFileLimit'), extended.isOptionalKey('workMem')]).toEqual([true, false]);
    expect(pg.with({ parameterMappings: { tempFileLimit: { path: 'spec.parameters.other' } } }).isOptionalKey('tempFileLimit')).toBe(false);
    expect(OperatorProfile.of(base({ parameterMappings: { x: {} } })).isOptionalKey('x')).toBe(false);
  });
});

describe('OperatorReadiness', () => {
  it('reads the operator status where provider-kubernetes copies it; objectCheck is a check on the Object', () => {
    const checks = OperatorProfile.of(
      base({
        readyWhen: [
          OperatorReadiness.statusEquals('phase', 'Ready'),
          OperatorReadiness.statusEqualsInteger('nodes.missing', 0),
          OperatorReadiness.statusTrue('healthy'),
          OperatorReadiness.statusNonEmpty('endpoint'),
          OperatorReadiness.objectCheck(ReadinessCheck.matchCondition('Synced')),
        ],
      }),
    ).readinessChecks();
    expect(checks.map((c) => c.toJson())).toEqual([
      { type: 'MatchCondition', matchCondition: { type: 'Ready', status: 'True' } },
      { type: 'MatchString', fieldPath: 'status.atProvider.manifest.status.phase', matchString: 'Ready' },
      { type: 'MatchInteger', fieldPath: 'status.atProvider.manifest.status.nodes.missing', matchInteger: 0 },
      { type: 'MatchTrue', fieldPath: 'status.atProvider.manifest.status.healthy' },
      { type: 'NonEmpty', fieldPath: 'status.atProvider.manifest.status.endpoint' },
      { type: 'MatchCondition', matchCondition: { type: 'Synced', status: 'True' } },
    ]);
    expect(String(OperatorReadiness.statusEquals('phase', 'Ready'))).toBe('status.phase == "Ready"');
  });

  it('rejects bad rules naming the argument', () => {
    expect(() => OperatorReadiness.statusEquals('status.phase ', 'Ready')).toThrow(
      'OperatorReadiness.statusEquals(field): "status.phase " must be a dotted field path',
    );
    expect(() => OperatorReadiness.statusEquals('phase', 1 as never)).toThrow('OperatorReadiness.statusEquals(value): 1 must be a string');
    expect(() => OperatorReadiness.objectCheck(ReadinessCheck.none())).toThrow(
      'OperatorReadiness.objectCheck(check): {"type":"None"} never waits for the operator',
    );
    expect(() => OperatorReadiness.objectCheck({ type: 'MatchTrue' } as never)).toThrow('must be made with a ReadinessCheck factory');
  });
});
