import { describe, expect, it } from '@jest/globals';
import { App, Chart } from 'cdk8s';
import { Patch, PatchAndTransformStep } from '../../constructs/crossplane/index.js';
import {
  A8sBackend,
  A9sBackend,
  Backend,
  credentialsSecretClaim,
  DataService,
  DataServiceModel,
  DataServiceProps,
  OperatorProfile,
  OperatorReadiness,
  Plan,
  PlanChange,
  PlanTopology,
  TopologyChange,
} from '../../constructs/dataservice/index.js';
import { claimValidator } from '../catalogue/_equivalence.js';

/** A provider-anynines ProviderConfig made elsewhere. */
const a9sConfig = (name: string) => ({ name, apiVersion: 'dataservices.anynines.com/v1', kind: 'ProviderConfig' });

type Obj = Record<string, any>;

const P = (name: string, topology: PlanTopology, size: string, flags: string[] = []) =>
  new Plan({ name, topology, size: { name: size, cpu: '1', memory: '1Gi', storage: '1Gi' }, flags });

const basePlans = () => [
  P('q-single-small', PlanTopology.SINGLE, 'small'),
  P('q-single-small-ssl', PlanTopology.SINGLE, 'small', ['ssl']),
  P('q-cluster-small', PlanTopology.CLUSTER, 'small'),
  P('q-cluster-big', PlanTopology.CLUSTER, 'big'),
];
const a9s = (extra: Partial<ConstructorParameters<typeof A9sBackend>[0]> = {}) =>
  new A9sBackend({ name: 'vm-queue', providerConfig: a9sConfig('queue-service-broker'), ...extra });
const a8s = (extra: Partial<ConstructorParameters<typeof A8sBackend>[0]> = {}) =>
  new A8sBackend({
    name: 'k8s-queue',
    profile: OperatorProfile.of({
      name: 'queue',
      apiVersion: 'queue.example.com/v1',
      kind: 'Queue',
      readyWhen: [OperatorReadiness.statusEquals('phase', 'Ready')],
    }),
    ...extra,
  });

function build(props: Partial<DataServiceProps> = {}) {
  const chart = new Chart(new App(), 'cp');
  const ds = new DataService(chart, 'queue', {
    group: 'queues.example.com',
    kind: 'XQueueInstance',
    claimKind: 'QueueInstance',
    plans: basePlans(),
    services: [{ name: 'queue3' }, { name: 'queue4' }],
    backends: [a9s()],
    ...props,
  });
  const objects = chart.toJson() as Obj[];
  const xrd = objects.find((o) => o.kind === 'CompositeResourceDefinition')!;
  const spec = xrd.spec.versions[0].schema.openAPIV3Schema.properties.spec;
  const v = claimValidator(xrd as never);
  const claim = (s: Obj) => ({ apiVersion: 'queues.example.com/v1', kind: 'QueueInstance', metadata: { name: 'q', namespace: 'ns' }, spec: s });
  const errors = (s: Obj, old?: Obj) => v.validate(claim(s), old && claim(old)).map((e) => e.message);
  return { ds, objects, xrd, spec, errors, of: (k: string) => objects.filter((o) => o.kind === k) };
}

describe('DataService: emitted objects', () => {
  it('emits an XRD with claims, one Composition per backend named after it, and an export template', () => {
    const { ds, objects, xrd, spec } = build({ backends: [a9s(), a8s()], defaultBackend: 'k8s-queue' });
    expect(objects.map((o) => o.kind)).toEqual(['CompositeResourceDefinition', 'Composition', 'Composition', 'APIServiceExportTemplate']);
    expect(xrd.metadata.name).toBe('xqueueinstances.queues.example.com');
    expect(xrd.spec).toMatchObject({
      group: 'queues.example.com',
      names: { kind: 'XQueueInstance', plural: 'xqueueinstances' },
      claimNames: { kind: 'QueueInstance', plural: 'queueinstances' },
      defaultCompositionRef: { name: 'k8s-queue' },
      defaultCompositeDeletePolicy: 'Foreground',
    });
    expect(xrd.spec.versions[0]).toMatchObject({ name: 'v1', served: true, referenceable: true });
    expect(spec.required).toEqual(['service', 'plan']);
    expect(spec.properties.service.enum).toEqual(['queue3', 'queue4']);
    expect(spec.properties.plan.enum).toEqual(['q-single-small', 'q-single-small-ssl', 'q-cluster-small', 'q-cluster-big']);
    expect(spec.properties.acceptsIncomplete).toEqual({ type: 'boolean' });
    expect(xrd.spec.versions[0].schema.openAPIV3Schema.properties.status.properties.managed['x-kubernetes-preserve-unknown-fields']).toBe(true);
    expect([...ds.compositions.keys()]).toEqual(['vm-queue', 'k8s-queue']);
    expect(ds.composition('k8s-queue').name).toBe('k8s-queue');
    expect(() => ds.composition('nope')).toThrow('DataService.composition(backend): "nope" is an unknown backend');
    const t = objects.find((o) => o.kind === 'APIServiceExportTemplate')!;
    expect(t).toMatchObject({
      apiVersion: 'example-backend.klutch.anynines.com/v1alpha1',
      metadata: { name: 'queueinstances', namespace: 'crossplane-system' },
      spec: { APIServiceSelector: { group: 'queues.example.com', resource: 'queueinstances', version: 'v1' } },
    });
  });

  it('merges permission claims (deduplicated) and honours the template namespace', () => {
    class CredsBackend extends A9sBackend {
      public permissionClaims(_m: DataServiceModel) {
        return [credentialsSecretClaim()];
      }
    }
    const { objects } = build({
      backends: [new CredsBackend({ name: 'vm-queue', providerConfig: a9sConfig('b') })],
      permissionClaims: [credentialsSecretClaim(), { group: '', resource: 'configmaps', version: 'v1' } as never],
      exportTemplateNamespace: 'klutch-catalogue',
    });
    const t = objects.find((o) => o.kind === 'APIServiceExportTemplate')!;
    expect(t.metadata.namespace).toBe('klutch-catalogue');
    expect(t.spec.permissionClaims.map((c: Obj) => c.resource)).toEqual(['secrets', 'configmaps']);
    expect(credentialsSecretClaim({ fieldSelectors: [], labelSelectors: [{ app: 'x' }], required: false })).toEqual({
      group: '',
      resource: 'secrets',
      version: 'v1',
      required: false,
      selector: { owner: 'Provider', labelSelectors: [{ app: 'x' }] },
    });
  });

  it('omits acceptsIncomplete and the ManagedResource and Message columns when asked', () => {
    const { spec, xrd } = build({ acceptsIncomplete: false, managedStateColumn: false, managedMessageColumn: false });
    expect(spec.properties.acceptsIncomplete).toBeUndefined();
    expect(xrd.spec.versions[0].additionalPrinterColumns).toBeUndefined();
    expect(build({ managedStateColumn: false }).xrd.spec.versions[0].additionalPrinterColumns).toEqual([
      { name: 'Message', type: 'string', jsonPath: ".status.managed.conditions[?(@.reason=='ReconcileError')].message" },
    ]);
  });

  it('accepts a custom Backend subclass', () => {
    class HelmBackend extends Backend {
      public readonly automation = 'helm';
      constructor() {
        super('HelmBackendProps', { name: 'helm-queue' });
      }
      public compose(step: PatchAndTransformStep, _m: DataServiceModel): void {
        step.addResource('release', {
          base: { apiVersion: 'helm.crossplane.io/v1beta1', kind: 'Release' },
          patches: [Patch.fromCompositeFieldPath('spec.plan', 'spec.forProvider.values.plan')],
        });
      }
    }
    const { of } = build({ backends: [new HelmBackend()] });
    expect(of('Composition')[0].spec.pipeline[0].input.resources[0].base.kind).toBe('Release');
  });
});

describe('DataService: rules rendered from plans, services, backends and parameters', () => {
  it('service immutable; no downgrade; no cluster → single; ssl immutable (defaults)', () => {
    const { errors } = build();
    const s = (plan: string, service = 'queue3') => ({ service, plan });
    expect(errors(s('q-cluster-big'), s('q-single-small'))).toEqual([]);
    expect(errors(s('q-cluster-small'), s('q-cluster-big'))).toEqual(['Transition from bigger to smaller plan size is not supported.']);
    expect(errors(s('q-single-small'), s('q-cluster-small'))).toEqual(['Migration from clustered to single Data Service Instance is not supported.']);
    expect(errors(s('q-single-small-ssl'), s('q-single-small'))).toEqual(['Plan migrations not possible from Non-SSL to SSL and SSL to Non-SSL']);
    expect(errors(s('q-single-small', 'queue4'), s('q-single-small'))).toEqual(['Service is an immutable field']);
    expect(errors(s('q-unknown'))).toHaveLength(1);
    expect(errors({ service: 'queue3' })).toHaveLength(1);
  });

  it('topologyChange None forbids both directions, Any neither; planChange None freezes the plan, Any allows downgrades', () => {
    const none = build({ topologyChange: TopologyChange.NONE });
    expect(none.errors({ service: 'queue3', plan: 'q-cluster-small' }, { service: 'queue3', plan: 'q-single-small' })).toEqual([
      'Migration from single to clustered Data Service Instance is not supported.',
    ]);
    const any = build({ topologyChange: TopologyChange.ANY });
    expect(any.errors({ service: 'queue3', plan: 'q-single-small' }, { service: 'queue3', plan: 'q-cluster-small' })).toEqual([]);
    const frozen = build({ planChange: PlanChange.NONE });
    expect(frozen.spec.properties.plan['x-kubernetes-validations']).toEqual([
      { rule: 'self == oldSelf', message: 'Plan changes are not supported for queueinstance' },
    ]);
    const free = build({ planChange: PlanChange.ANY, immutableFlags: [] });
    expect(free.errors({ service: 'queue3', plan: 'q-single-small-ssl' }, { service: 'queue3', plan: 'q-cluster-big' })).toEqual([
      'Migration from clustered to single Data Service Instance is not supported.',
    ]);
  });

  it('with one backend no rule depends on compositionRef; with differing backends allow-lists key on it', () => {
    expect(JSON.stringify(build().spec)).not.toContain('compositionRef');
    const { errors } = build({
      backends: [a9s({ services: ['queue3'] }), a8s({ plans: ['q-single-small', 'q-cluster-small', 'q-cluster-big'] })],
      parameters: [{ name: 'vmOnly', type: 'string', backends: ['vm-queue'] }],
    });
    const c = (service: string, plan: string, ref: string, parameters?: Obj) => ({
      service,
      plan,
      compositionRef: { name: ref },
      ...(parameters ? { parameters } : {}),
    });
    expect(errors(c('queue4', 'q-single-small', 'k8s-queue'))).toEqual([]);
    expect(errors(c('queue4', 'q-single-small', 'vm-queue'))).toEqual(['Unsupported service used for queueinstance']);
    expect(errors(c('queue3', 'q-single-small-ssl', 'k8s-queue'))).toEqual(['Unsupported plan used for queueinstance']);
    expect(errors(c('queue3', 'q-single-small', 'vm-queue', { vmOnly: 'x' }))).toEqual([]);
    expect(errors(c('queue3', 'q-single-small', 'k8s-queue', { vmOnly: 'x' }))).toEqual(['parameters.vmOnly is not supported for k8s-queue']);
    // Without compositionRef a claim is accepted and judged as one naming the default backend (vm-queue, the first).
    expect(errors({ service: 'queue3', plan: 'q-single-small', parameters: { vmOnly: 'x' } })).toEqual([]);
    expect(errors({ service: 'queue4', plan: 'q-single-small' })).toEqual(['Unsupported service used for queueinstance']);
  });

  it('service plan restrictions and multi-node-only parameters', () => {
    const { errors } = build({
      services: [{ name: 'queue3' }, { name: 'queue4', plans: ['q-cluster-small', 'q-cluster-big'] }],
      parameters: [{ name: 'quorum', type: 'integer', minimum: 2, multiNodeOnly: true }],
    });
    expect(errors({ service: 'queue4', plan: 'q-single-small' })).toEqual(['Service queue4 only supports the plans q-cluster-small, q-cluster-big']);
    expect(errors({ service: 'queue4', plan: 'q-cluster-big', parameters: { quorum: 3 } })).toEqual([]);
    expect(errors({ service: 'queue3', plan: 'q-single-small', parameters: { quorum: 3 } })).toEqual([
      'parameters.quorum is only supported for clustered plans',
    ]);
    expect(errors({ service: 'queue3', plan: 'q-cluster-big', parameters: { quorum: 1 } })).toHaveLength(1);
  });
});

describe('DataService: bad props throw when built, naming the prop and the value', () => {
  it.each<[string, Partial<DataServiceProps>, string]>([
    ['unknown backend object', { backends: [{ name: 'x' } as never] }, 'DataServiceProps.backends[0]: {"name":"x"} is an unknown backend'],
    [
      'unknown backend in a parameter',
      { parameters: [{ name: 'p', type: 'string', backends: ['a7s-queue'] }] },
      'DataServiceProps.parameters("p").backends: "a7s-queue" is an unknown backend',
    ],
    ['unknown default backend', { defaultBackend: 'nope' }, 'DataServiceProps.defaultBackend: "nope" is an unknown backend'],
    ['duplicate backends', { backends: [a9s(), a9s()] }, 'DataServiceProps.backends[1].name: "vm-queue" is a duplicate backend'],
    ['no backends', { backends: [] }, 'DataServiceProps.backends: [] must list at least one backend'],
    [
      'backend service not defined',
      { backends: [a9s({ services: ['queue9'] })] },
      'DataServiceProps.backends[0]("vm-queue").services: "queue9" is not a service',
    ],
    [
      'backend plan not defined',
      { backends: [a9s({ plans: ['q-huge'] })] },
      'DataServiceProps.backends[0]("vm-queue").plans: "q-huge" is referenced but not defined',
    ],
    [
      'service plan not defined',
      { services: [{ name: 'queue3', plans: ['q-tiny'] }] },
      'DataServiceProps.services[0]("queue3").plans: "q-tiny" is referenced but not defined',
    ],
    ['duplicate service', { services: [{ name: 'queue3' }, { name: 'queue3' }] }, 'DataServiceProps.services[1].name: "queue3" is a duplicate service'],
    [
      'duplicate plan',
      { plans: [...basePlans(), P('q-single-small', PlanTopology.SINGLE, 'small')] },
      'DataServiceProps.plans[4].name: "q-single-small" is a duplicate plan',
    ],
    [
      'reserved field',
      { fields: [{ name: 'compositionRef', type: 'object' }] },
      'DataServiceProps.fields[0].name: "compositionRef" collides with a reserved field',
    ],
    ['owned field', { fields: [{ name: 'service', type: 'string' }] }, 'DataServiceProps.fields[0].name: "service" collides with a field the construct owns'],
    [
      'duplicate parameter',
      {
        parameters: [
          { name: 'a', type: 'string' },
          { name: 'a', type: 'integer' },
        ],
      },
      'DataServiceProps.parameters[1].name: "a" is a duplicate parameter',
    ],
    ['unknown immutable flag', { immutableFlags: ['bionic'] }, 'DataServiceProps.immutableFlags: "bionic" is not a flag of any plan'],
    [
      'backend without usable plans',
      { services: [{ name: 'queue3', plans: ['q-cluster-big'] }], backends: [a9s({ plans: ['q-single-small'] })] },
      'offers service "queue3" but none of its plans',
    ],
    ['bad kind', { kind: 'xQueue' }, 'DataServiceProps.kind: "xQueue" must be a PascalCase kind'],
    ['bad version', { version: '1' }, 'DataServiceProps.version: "1" is not a Kubernetes version name'],
    ['bad plan change', { planChange: 'Sometimes' as never }, 'DataServiceProps.planChange: "Sometimes" must be one of'],
    [
      'multi-node-only parameter without multi-node plans',
      { plans: [P('q-single-small', PlanTopology.SINGLE, 'small')], parameters: [{ name: 'quorum', type: 'integer', multiNodeOnly: true }] },
      'DataServiceProps.parameters("quorum").multiNodeOnly: true needs at least one multi-node',
    ],
    ['bad group', { group: 'localhost' }, 'DataServiceProps.group: "localhost" must be a DNS subdomain with at least one dot'],
  ])('%s', (_name, props, message) => {
    expect(() => build(props)).toThrow(message);
  });

  it('a cycle in plan upgrades', () => {
    const plans = [
      new Plan({ name: 'a', topology: PlanTopology.SINGLE, size: { name: 'small' }, upgradesTo: ['b'] }),
      new Plan({ name: 'b', topology: PlanTopology.SINGLE, size: { name: 'big' }, upgradesTo: ['a'] }),
    ];
    expect(() => build({ plans })).toThrow('DataServiceProps.plans: Plan("a").upgradesTo: "a -> b -> a" is a cycle in plan upgrades');
  });
});
