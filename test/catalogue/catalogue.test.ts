import { describe, expect, it } from '@jest/globals';
import { App, Chart } from 'cdk8s';
import { Catalogue, CATALOGUE_SERVICES } from '../../constructs/catalogue/index.js';
import { MANAGED_MESSAGE_COLUMN } from '../../constructs/dataservice/index.js';
import { validateDocuments } from '../../constructs/validate/index.js';
import { render, statusPatches, xrFor } from '../dataservice/_render.js';
import { claim, claimValidator } from './_equivalence.js';
import { selects } from '../../runtime/konnector/selector.js';

type Obj = Record<string, any>;

function synth(props: ConstructorParameters<typeof Catalogue>[2] = {}) {
  const app = new App();
  const chart = new Chart(app, 'control-plane');
  const catalogue = new Catalogue(chart, 'catalogue', props);
  const objects = chart.toJson() as Obj[];
  const of = (kind: string) => objects.filter((o) => o.kind === kind);
  const byName = (kind: string, name: string) => {
    const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
    if (!o) throw new Error(`no ${kind} ${name}`);
    return o;
  };
  return { catalogue, objects, of, byName };
}

const full = synth();

describe('Catalogue: what it emits', () => {
  it('emits one XRD and one export template per API, one Composition per backend', () => {
    expect(
      full
        .of('CompositeResourceDefinition')
        .map((x) => x.metadata.name)
        .sort(),
    ).toEqual([
      'xbackups.anynines.com',
      'xkeyvalueinstances.anynines.com',
      'xlogme2instances.anynines.com',
      'xmariadbinstances.anynines.com',
      'xmessaginginstances.anynines.com',
      'xmongodbinstances.anynines.com',
      'xpostgresqlinstances.anynines.com',
      'xprometheusinstances.anynines.com',
      'xrestores.anynines.com',
      'xsearchinstances.anynines.com',
      'xservicebindings.anynines.com',
    ]);
    expect(
      full
        .of('Composition')
        .map((x) => x.metadata.name)
        .sort(),
    ).toEqual([
      'a8s-backup',
      'a8s-postgresql',
      'a8s-restore',
      'a8s-servicebinding',
      'a9s-backup',
      'a9s-keyvalue',
      'a9s-logme2',
      'a9s-mariadb',
      'a9s-messaging',
      'a9s-mongodb',
      'a9s-postgresql',
      'a9s-prometheus',
      'a9s-restore',
      'a9s-search',
      'a9s-servicebinding',
    ]);
    const templates = full.of('APIServiceExportTemplate');
    expect(templates).toHaveLength(11);
    for (const t of templates) {
      expect(t.apiVersion).toBe('example-backend.klutch.anynines.com/v1alpha1');
      expect(t.metadata.namespace).toBe('crossplane-system');
      expect(t.spec.APIServiceSelector.group).toBe('anynines.com');
      expect(t.spec.apiServiceSelector).toBeUndefined();
    }
    expect(templates.map((t) => t.spec.APIServiceSelector.resource).sort()).toEqual([
      'backups',
      'keyvalueinstances',
      'logme2instances',
      'mariadbinstances',
      'messaginginstances',
      'mongodbinstances',
      'postgresqlinstances',
      'prometheusinstances',
      'restores',
      'searchinstances',
      'servicebindings',
    ]);
  });

  it('every emitted object is valid against the reference CRDs (Crossplane 2.x and 1.20, P&T input, binding API)', () => {
    const r = validateDocuments(full.objects.map((doc, index) => ({ file: 'catalogue.yaml', index, doc })));
    expect(r.issues).toEqual([]);
    expect(r.unknownKinds).toEqual([]);
    expect(r.schemaChecked).toBe(full.objects.length);
  });

  it('XRDs: claims, default compositions, delete policy and the ManagedResource column as in Klutch, plus the Message column', () => {
    const pg = full.byName('CompositeResourceDefinition', 'xpostgresqlinstances.anynines.com');
    expect(pg.spec.claimNames).toMatchObject({ kind: 'PostgresqlInstance', plural: 'postgresqlinstances' });
    expect(pg.spec.defaultCompositionRef).toEqual({ name: 'a8s-postgresql' });
    expect(pg.spec.defaultCompositeDeletePolicy).toBe('Foreground');
    // Klutch's PostgreSQL XRD has no column; klutch-kit adds the composed resource's reconcile error to every data service
    expect(pg.spec.versions[0].additionalPrinterColumns).toEqual([{ ...MANAGED_MESSAGE_COLUMN, type: 'string' }]);
    const kv = full.byName('CompositeResourceDefinition', 'xkeyvalueinstances.anynines.com');
    expect(kv.spec.defaultCompositionRef).toEqual({ name: 'a9s-keyvalue' });
    expect(kv.spec.versions[0].additionalPrinterColumns).toEqual([
      { name: 'ManagedResource', type: 'string', jsonPath: '.status.managed.state' },
      { ...MANAGED_MESSAGE_COLUMN, type: 'string' },
    ]);
    const sb = full.byName('CompositeResourceDefinition', 'xservicebindings.anynines.com');
    expect(sb.spec.defaultCompositionRef).toEqual({ name: 'a8s-servicebinding' });
    expect(sb.spec.defaultCompositeDeletePolicy).toBeUndefined();
    expect(sb.spec.versions[0].schema.openAPIV3Schema.properties.spec.required).toEqual(['instanceRef', 'serviceInstanceType']);
  });
});

describe('Catalogue: compositions turn claims into the right managed resources', () => {
  const A8S_TABLE: Array<[plan: string, storage: string, cpu: string, memory: string, replicas: number]> = [
    ['postgresql-single-nano', '3Gi', '2', '1Gi', 1],
    ['postgresql-single-small', '10Gi', '2', '2Gi', 1],
    ['postgresql-single-medium', '50Gi', '2', '4Gi', 1],
    ['postgresql-single-big', '100Gi', '4', '16Gi', 1],
    ['postgresql-replica-nano', '3Gi', '2', '1Gi', 3],
    ['postgresql-replica-small', '10Gi', '2', '2Gi', 3],
    ['postgresql-replica-medium', '50Gi', '2', '4Gi', 3],
    ['postgresql-replica-big', '100Gi', '4', '16Gi', 3],
  ];
  it.each(A8S_TABLE)('a8s-postgresql %s → volume %s, cpu %s, memory %s, %d replicas', (plan, storage, cpu, memory, replicas) => {
    const [obj] = render(full.byName('Composition', 'a8s-postgresql'), xrFor('orders-db', 'team-a', { service: 'a9s-postgresql14', plan }));
    expect(obj.apiVersion).toBe('kubernetes.crossplane.io/v1alpha1');
    expect(obj.kind).toBe('Object');
    expect(obj.spec.providerConfigRef).toEqual({ name: 'kubernetes-provider' });
    const m = obj.spec.forProvider.manifest;
    expect(m).toMatchObject({ apiVersion: 'postgresql.anynines.com/v1beta3', kind: 'Postgresql', metadata: { name: 'orders-db', namespace: 'team-a' } });
    expect(m.spec).toMatchObject({
      version: 14,
      volumeSize: storage,
      replicas,
      expose: 'LoadBalancer',
      resources: { requests: { cpu, memory }, limits: { cpu, memory } },
    });
  });

  it('a8s-postgresql: expose and parameters with a8s names and lower-case log levels; status copied back', () => {
    const comp = full.byName('Composition', 'a8s-postgresql');
    const [obj] = render(
      comp,
      xrFor('db', 'ns', {
        service: 'a9s-postgresql13',
        plan: 'postgresql-single-small',
        expose: 'Internal',
        parameters: { tempFileLimit: 1024, trackIoTiming: 'on', maxWalSenders: 4, logMinMessages: 'WARNING', maxLocksPerTransaction: 64 },
      }),
    );
    expect(obj.spec.forProvider.manifest.spec.expose).toBe('Internal');
    expect(obj.spec.forProvider.manifest.spec.parameters).toEqual({
      tempFileLimitKiloBytes: 1024,
      trackIOTiming: 'on',
      maxWALSenders: 4,
      logMinMessages: 'warning',
      maxLocksPerTransaction: 64,
    });
    expect(statusPatches(comp)).toEqual([
      'status.atProvider.manifest.status.clusterStatus -> status.managed.clusterStatus',
      'status.atProvider.manifest.status.readyReplicas -> status.managed.readyReplicas',
    ]);
  });

  it('a9s-postgresql: ServiceInstance with claim labels, service/plan names and broker parameter names', () => {
    const [si] = render(
      full.byName('Composition', 'a9s-postgresql'),
      xrFor('db', 'team-b', {
        service: 'a9s-postgresql15',
        plan: 'postgresql-replica-small-ssl',
        acceptsIncomplete: false,
        parameters: { maxConnections: 200, logMinMessages: 'WARNING', walLevelLogical: true, rolePrivileges: ['CREATEDB'] },
      }),
    );
    expect(si).toMatchObject({
      apiVersion: 'dataservices.anynines.com/v1',
      kind: 'ServiceInstance',
      metadata: { labels: { 'crossplane.io/claim-name': 'db', 'crossplane.io/claim-namespace': 'team-b' } },
      spec: {
        providerConfigRef: { name: 'postgresql-service-broker' },
        forProvider: {
          serviceName: 'a9s-postgresql15',
          planName: 'postgresql-replica-small-ssl',
          acceptsIncomplete: false,
          organizationGuid: 'a1d46b5c-b639-4f43-85c7-e9a0e5f01f75',
          spaceGuid: '1bf71cf3-9017-4846-bffc-b9b31872bfaf',
          parameters: { max_connections: 200, pg_log_min_messages: 'WARNING', wal_level_logical: true, role_privileges: ['CREATEDB'] },
        },
      },
    });
  });

  it.each([
    [
      'a9s-keyvalue',
      { replBacklogSize: '10mb', maxmemoryPolicy: 'allkeys-lru', notifyKeyspaceEvents: 'KEA' },
      { 'repl-backlog-size': '10mb', 'maxmemory-policy': 'allkeys-lru', 'notify-keyspace-events': 'KEA' },
    ],
    [
      'a9s-logme2',
      { javaHeapspace: 512, fluentdUdp: 514, opensearchTlsProtocols: ['TLSv1.3'] },
      { java_heapspace: 512, 'fluentd-udp': 514, 'opensearch-tls-protocols': ['TLSv1.3'] },
    ],
    ['a9s-mariadb', { binlogExpireDays: 3, grantPerformanceSchemaPermissions: true }, { binlog_expire_days: 3, grant_performance_schema_permissions: true }],
    ['a9s-messaging', { consumerTimeout: 1800000, tlsProtocols: ['tlsv1.3'] }, { consumer_timeout: 1800000, 'tls-protocols': ['tlsv1.3'] }],
    [
      'a9s-mongodb',
      { setClusterParameter: { changeStreamOptions: { preAndPostImages: { expireAfterSeconds: 'off' } } } },
      { set_cluster_parameter: { changeStreamOptions: { preAndPostImages: { expireAfterSeconds: 'off' } } } },
    ],
    ['a9s-prometheus', { mappingStrictMatch: false }, { mapping_strict_match: false }],
    ['a9s-search', { javaGarbageCollector: 'UseG1GC', tlsCiphers: ['x'] }, { java_garbage_collector: 'UseG1GC', 'tls-ciphers': ['x'] }],
  ])('%s: broker parameter names and its own service broker', (name, params, broker) => {
    const [si] = render(full.byName('Composition', name), xrFor('i', 'ns', { service: 's', plan: 'p', parameters: params }));
    expect(si.kind).toBe('ServiceInstance');
    expect(si.spec.providerConfigRef.name).toBe(`${name.slice(4)}-service-broker`);
    expect(si.spec.forProvider.parameters).toEqual(broker);
    expect(si.metadata.labels).toEqual({ 'crossplane.io/claim-name': 'i', 'crossplane.io/claim-namespace': 'ns' });
  });

  it('a9s-servicebinding writes the credentials to Secret <claim>-creds in the claim namespace', () => {
    const [b] = render(
      full.byName('Composition', 'a9s-servicebinding'),
      xrFor('app-creds-for-db', 'team-a', { instanceRef: 'db', serviceInstanceType: 'keyvalue' }),
    );
    expect(b).toMatchObject({
      apiVersion: 'dataservices.anynines.com/v1',
      kind: 'ServiceBinding',
      metadata: {
        labels: { 'klutch.io/instance-type': 'keyvalue', 'crossplane.io/claim-name': 'app-creds-for-db', 'crossplane.io/claim-namespace': 'team-a' },
      },
      spec: {
        forProvider: { instanceName: 'db', acceptsIncomplete: true },
        providerConfigRef: { name: 'keyvalue-service-broker' },
        writeConnectionSecretToRef: { name: 'app-creds-for-db-creds', namespace: 'team-a' },
      },
    });
  });

  it('the servicebindings export template claims exactly the Secret each backend writes', () => {
    const t = full.byName('APIServiceExportTemplate', 'servicebindings');
    expect(t.spec.permissionClaims).toEqual([
      // a8s: the service-binding controller writes <binding>-service-binding, type Opaque.
      {
        group: '',
        resource: 'secrets',
        version: 'v1',
        required: true,
        selector: { names: ['*-service-binding'], namespaces: ['*'], owner: 'Provider', fieldSelectors: ['type=Opaque'] },
      },
      // a9s: the connection Secret <claim>-creds of the ServiceBinding MR.
      {
        group: '',
        resource: 'secrets',
        version: 'v1',
        required: true,
        selector: { names: ['*-creds'], namespaces: ['*'], owner: 'Provider', fieldSelectors: ['type=connection.crossplane.io/v1alpha1'] },
      },
    ]);
    const secret = (name: string, type: string) => ({ apiVersion: 'v1', kind: 'Secret', type, metadata: { name, namespace: 'p' } });
    const claimed = (o: Obj) => t.spec.permissionClaims.some((c: Obj) => selects(c.selector, o as never, 'ns'));
    expect(claimed(secret('orders-db-creds-service-binding', 'Opaque'))).toBe(true);
    expect(claimed(secret('warehouse-creds', 'connection.crossplane.io/v1alpha1'))).toBe(true);
    // Nothing more: other Opaque Secrets, connection Secrets of other names, a8s names of another type.
    expect(claimed(secret('postgres-admin', 'Opaque'))).toBe(false);
    expect(claimed(secret('warehouse-creds', 'Opaque'))).toBe(false);
    expect(claimed(secret('some-mr-connection', 'connection.crossplane.io/v1alpha1'))).toBe(false);
    expect(claimed(secret('x-service-binding', 'kubernetes.io/tls'))).toBe(false);
    expect(full.byName('APIServiceExportTemplate', 'postgresqlinstances').spec.permissionClaims).toBeUndefined();
  });

  it('readiness follows the backend: a8s operator status, the a9s managed resource Ready condition', () => {
    const checks = (composition: string) => full.byName('Composition', composition).spec.pipeline[0].input.resources[0];
    const ready = { type: 'MatchCondition', matchCondition: { type: 'Ready', status: 'True' } };
    expect(checks('a8s-postgresql').readinessChecks).toEqual([
      ready,
      { type: 'MatchString', fieldPath: 'status.atProvider.manifest.status.clusterStatus', matchString: 'Running' },
    ]);
    expect(checks('a8s-servicebinding').readinessChecks).toEqual([ready, { type: 'MatchTrue', fieldPath: 'status.atProvider.manifest.status.implemented' }]);
    for (const c of ['a8s-backup', 'a8s-restore']) {
      expect(checks(c).readinessChecks).toEqual([ready]);
      // The Object is Ready only when the a8s Backup/Restore's own Ready condition is True.
      expect(checks(c).base.spec.readiness).toEqual({ policy: 'DeriveFromObject' });
    }
    expect(checks('a8s-postgresql').base.spec.readiness).toBeUndefined();
    for (const c of full.of('Composition').filter((x) => x.metadata.name.startsWith('a9s-'))) {
      expect(c.spec.pipeline[0].input.resources[0].readinessChecks).toEqual([ready]);
    }
  });

  it('a8s-servicebinding / backup / restore point at the a8s PostgreSQL instance', () => {
    const [sb] = render(full.byName('Composition', 'a8s-servicebinding'), xrFor('b', 'ns', { instanceRef: 'db', serviceInstanceType: 'postgresql' }));
    expect(sb.spec.forProvider.manifest).toMatchObject({
      apiVersion: 'servicebindings.anynines.com/v1beta3',
      kind: 'ServiceBinding',
      metadata: { name: 'b', namespace: 'ns' },
      spec: { instance: { apiVersion: 'postgresql.anynines.com/v1beta3', kind: 'Postgresql', name: 'db', namespace: 'ns' } },
    });
    const [bk] = render(full.byName('Composition', 'a8s-backup'), xrFor('bk', 'ns', { instanceRef: 'db', serviceInstanceType: 'postgresql' }));
    expect(bk.spec.forProvider.manifest).toMatchObject({
      apiVersion: 'backups.anynines.com/v1beta3',
      kind: 'Backup',
      spec: { serviceInstance: { apiGroup: 'postgresql.anynines.com', kind: 'PostgreSQL', name: 'db' } },
    });
    const [rs] = render(
      full.byName('Composition', 'a8s-restore'),
      xrFor('rs', 'ns', { instanceRef: 'db', backupRef: 'bk', serviceInstanceType: 'postgresql' }),
    );
    expect(rs.spec.forProvider.manifest).toMatchObject({ kind: 'Restore', spec: { backupName: 'bk', serviceInstance: { name: 'db' } } });
  });

  it('a9s backup and restore use the <type>-backup-manager ProviderConfig and the claim labels', () => {
    const [bk] = render(full.byName('Composition', 'a9s-backup'), xrFor('bk', 'ns', { instanceRef: 'db', serviceInstanceType: 'mongodb' }));
    expect(bk).toMatchObject({
      kind: 'Backup',
      spec: { forProvider: { instanceName: 'db' }, providerConfigRef: { name: 'mongodb-backup-manager' } },
      metadata: { labels: { 'crossplane.io/claim-name': 'bk' } },
    });
    const [rs] = render(full.byName('Composition', 'a9s-restore'), xrFor('rs', 'ns', { backupRef: 'bk', serviceInstanceType: 'search' }));
    expect(rs).toMatchObject({ kind: 'Restore', spec: { forProvider: { backupName: 'bk' }, providerConfigRef: { name: 'search-backup-manager' } } });
  });

  it('lists the ProviderConfig names the compositions reference', () => {
    expect(full.catalogue.providerConfigs.kubernetes).toEqual(['kubernetes-provider']);
    expect(full.catalogue.providerConfigs.serviceBrokers).toEqual(CATALOGUE_SERVICES.map((s) => `${s}-service-broker`));
    expect(full.catalogue.providerConfigs.backupManagers).toEqual(CATALOGUE_SERVICES.map((s) => `${s}-backup-manager`));
  });
});

describe('Catalogue: update rules (named update pairs)', () => {
  const xrd = (name: string) => full.byName('CompositeResourceDefinition', name);
  const pg = claimValidator(xrd('xpostgresqlinstances.anynines.com') as never);
  const kv = claimValidator(xrd('xkeyvalueinstances.anynines.com') as never);
  const prom = claimValidator(xrd('xprometheusinstances.anynines.com') as never);
  const pgClaim = (service: string, plan: string, ref = 'a9s-postgresql') => claim('PostgresqlInstance', { service, plan, compositionRef: { name: ref } });
  const ok = (v: typeof pg, n: Obj, o?: Obj) => v.validate(n, o);

  it.each([
    ['plan upgrade nano → small', 'postgresql-single-nano', 'postgresql-single-small', []],
    ['plan upgrade single → replica', 'postgresql-single-small', 'postgresql-replica-big', []],
    ['plan downgrade big → small', 'postgresql-single-big', 'postgresql-single-small', ['Transition from bigger to smaller plan size is not supported.']],
    ['replica → single', 'postgresql-replica-small', 'postgresql-single-small', ['Migration from clustered to single Data Service Instance is not supported.']],
    ['ssl flip', 'postgresql-single-small', 'postgresql-single-small-ssl', ['Plan migrations not possible from Non-SSL to SSL and SSL to Non-SSL']],
    [
      'bionic flip',
      'postgresql-single-small-bionic',
      'postgresql-single-small',
      ['Plan migrations not possible from Non-BIONIC to BIONIC and BIONIC to Non-BIONIC'],
    ],
  ])('PostgreSQL %s', (_name, from, to, messages) => {
    expect(ok(pg, pgClaim('a9s-postgresql13', to), pgClaim('a9s-postgresql13', from)).map((e) => e.message)).toEqual(messages);
  });

  it('PostgreSQL: the service is immutable; backend allow-lists and parameter allow-lists hold', () => {
    expect(
      ok(pg, pgClaim('a9s-postgresql15', 'postgresql-single-small'), pgClaim('a9s-postgresql13', 'postgresql-single-small')).map((e) => e.message),
    ).toEqual(['Service is an immutable field']);
    expect(ok(pg, pgClaim('a9s-postgresql14', 'postgresql-single-small', 'a8s-postgresql'))).toEqual([]);
    expect(ok(pg, pgClaim('a9s-postgresql14', 'postgresql-single-small', 'a9s-postgresql')).map((e) => e.message)).toEqual([
      'Unsupported service used for postgresql',
    ]);
    expect(ok(pg, pgClaim('a9s-postgresql13', 'postgresql-single-medium', 'a9s-postgresql')).map((e) => e.message)).toEqual([
      'Unsupported plan used for postgresql',
    ]);
    expect(ok(pg, pgClaim('a9s-postgresql17', 'postgresql-single-nano-bionic')).map((e) => e.message)[0]).toMatch(
      /^Service a9s-postgresql17 only supports the plans/,
    );
    const withParam = (ref: string, p: Obj) =>
      claim('PostgresqlInstance', { service: 'a9s-postgresql13', plan: 'postgresql-single-small', compositionRef: { name: ref }, parameters: p });
    expect(ok(pg, withParam('a8s-postgresql', { maxLocksPerTransaction: 64 }))).toEqual([]);
    expect(ok(pg, withParam('a9s-postgresql', { maxLocksPerTransaction: 64 })).map((e) => e.message)).toEqual([
      'parameters.maxLocksPerTransaction is not supported for a9s-postgresql',
    ]);
    expect(ok(pg, withParam('a8s-postgresql', { workMem: '4MB' })).map((e) => e.message)).toEqual(['parameters.workMem is not supported for a8s-postgresql']);
  });

  it('KeyValue: no single ↔ replica in either direction; replica-only parameters', () => {
    const k = (plan: string, parameters?: Obj) => claim('KeyvalueInstance', { service: 'a9s-keyvalue8', plan, ...(parameters ? { parameters } : {}) });
    expect(ok(kv, k('keyvalue-replica-small-ssl'), k('keyvalue-single-small-ssl')).map((e) => e.message)).toEqual([
      'Migration from single to clustered Data Service Instance is not supported.',
    ]);
    expect(ok(kv, k('keyvalue-single-big-ssl'), k('keyvalue-replica-small-ssl')).map((e) => e.message)).toEqual([
      'Migration from clustered to single Data Service Instance is not supported.',
    ]);
    expect(ok(kv, k('keyvalue-single-big-ssl'), k('keyvalue-single-nano-ssl'))).toEqual([]);
    expect(ok(kv, k('keyvalue-single-small-ssl', { failoverTimeout: 10 })).map((e) => e.message)).toEqual([
      'parameters.failoverTimeout is only supported for clustered plans',
    ]);
    expect(ok(kv, k('keyvalue-replica-small-ssl', { failoverTimeout: 10 }))).toEqual([]);
  });

  it('Prometheus: the plan cannot change at all', () => {
    const p = (plan: string) => claim('PrometheusInstance', { service: 'a9s-prometheus', plan });
    expect(ok(prom, p('prometheus-single-big'), p('prometheus-single-small')).map((e) => e.message)).toEqual(['Plan changes are not supported for prometheus']);
    expect(ok(prom, p('prometheus-single-small'), p('prometheus-single-small'))).toEqual([]);
  });
});

describe('Catalogue: subsets and bad props', () => {
  it('picks services, operations and automations', () => {
    const s = synth({ services: ['postgresql', 'mariadb'], operations: ['servicebinding'], automations: ['a9s'] });
    expect(
      s
        .of('CompositeResourceDefinition')
        .map((x) => x.spec.claimNames.kind)
        .sort(),
    ).toEqual(['MariadbInstance', 'PostgresqlInstance', 'ServiceBinding']);
    expect(
      s
        .of('Composition')
        .map((x) => x.metadata.name)
        .sort(),
    ).toEqual(['a9s-mariadb', 'a9s-postgresql', 'a9s-servicebinding']);
    const pg = s.byName('CompositeResourceDefinition', 'xpostgresqlinstances.anynines.com');
    expect(pg.spec.defaultCompositionRef).toEqual({ name: 'a9s-postgresql' });
    // With one backend left, no rule keys on compositionRef any more.
    expect(JSON.stringify(pg.spec.versions[0].schema)).not.toContain('compositionRef');
    const sb = s.byName('CompositeResourceDefinition', 'xservicebindings.anynines.com');
    expect(sb.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.serviceInstanceType.enum).toEqual(['postgresql', 'mariadb']);
    expect(s.catalogue.providerConfigs).toEqual({
      kubernetes: [],
      serviceBrokers: ['postgresql-service-broker', 'mariadb-service-broker'],
      backupManagers: [],
    });
  });

  it('throws on unknown services, operations or automations, naming the prop and value', () => {
    expect(() => synth({ services: ['postgresql', 'redis' as never] })).toThrow('CatalogueProps.services: "redis" is unknown');
    expect(() => synth({ operations: ['snapshot' as never] })).toThrow('CatalogueProps.operations: "snapshot" is unknown');
    expect(() => synth({ automations: ['a7s' as never] })).toThrow('CatalogueProps.automations: "a7s" is unknown');
    expect(() => synth({ services: ['keyvalue'], automations: ['a8s'] })).toThrow(/leaves service "keyvalue" without a backend/);
  });
});
