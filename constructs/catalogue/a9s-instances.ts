/**
 * The a9s instance data services of the Klutch catalogue besides PostgreSQL (KeyValue, LogMe2, MariaDB,
 * Messaging, MongoDB, Search, Prometheus): each a function returning the `DataServiceProps` of Klutch's
 * XRD and a9s Compositions, with the ProviderConfigs the catalogue is given.
 */
import { A9sBackend, DataServiceProps, ParameterProps, PlanChange, TopologyChange } from './_deps.js';
import { ANYNINES_GROUP, plans } from './_common.js';
import type { Plan } from '../dataservice/index.js';
import { type ICatalogueProviderConfigs, KLUTCH_PROVIDER_CONFIG_NAMES } from './provider-configs.js';

interface A9sInstanceOptions {
  /** Short name: `keyvalue` → XKeyvalueInstance, composition `a9s-keyvalue`, broker `keyvalue-service-broker`. */
  readonly ds: string;
  readonly kindStem: string;
  readonly plans: Plan[];
  readonly services: DataServiceProps['services'];
  readonly parameters: readonly ParameterProps[];
  readonly planChange?: PlanChange;
  readonly topologyChange?: TopologyChange;
}

function a9sInstance(pcs: ICatalogueProviderConfigs, o: A9sInstanceOptions): DataServiceProps {
  return {
    group: ANYNINES_GROUP,
    kind: `X${o.kindStem}Instance`,
    claimKind: `${o.kindStem}Instance`,
    label: o.ds,
    plans: o.plans,
    services: o.services,
    parameters: o.parameters,
    planChange: o.planChange,
    topologyChange: o.topologyChange,
    backends: [new A9sBackend({ name: `a9s-${o.ds}`, providerConfig: pcs.serviceBroker(o.ds) })],
  };
}

const nonNegative = (name: string, description: string, brokerName?: string): ParameterProps => ({
  name,
  type: 'integer',
  minimum: 0,
  description,
  ...(brokerName ? { brokerName } : {}),
});

const KEYVALUE_BOOLEAN = ['yes', 'no'];
const SIZE_SUFFIX = '((k|m|g)b?)?';

/** a9s KeyValue (Valkey). */
export function keyvalue(pcs: ICatalogueProviderConfigs = KLUTCH_PROVIDER_CONFIG_NAMES): DataServiceProps {
  const k = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
  const p = (x: ParameterProps): ParameterProps => ({ brokerName: k(x.name), ...x });
  return a9sInstance(pcs, {
    ds: 'keyvalue',
    kindStem: 'Keyvalue',
    plans: [
      ...plans('keyvalue', ['replica-small', 'replica-medium', 'replica-big'], [['ssl']]),
      ...plans('keyvalue', ['single-nano', 'single-small', 'single-medium', 'single-big'], [['ssl']]),
    ],
    services: [{ name: 'a9s-keyvalue8' }],
    topologyChange: TopologyChange.NONE,
    parameters: [
      p({
        name: 'snapshot',
        type: 'string',
        description: "Snapshot rules, e.g. ['save 900 1']; [] disables snapshots (cache only).",
        rules: [
          {
            rule: "self.matches(\"^\\\\[('save [1-9][0-9]* [1-9][0-9]*'(,'save [1-9][0-9]* [1-9][0-9]*')*)?\\\\]$\")",
            message: "Must either be `[]`, `['save <number> <number>']` or `['save <number> <number>','save <number> <number>'...]`",
          },
        ],
      }),
      p({
        name: 'replBacklogSize',
        type: 'string',
        multiNodeOnly: true,
        description: 'Replication backlog size (must be enabled on the broker).',
        rules: [{ rule: `self.matches("^[1-9][0-9]*${SIZE_SUFFIX}$")`, message: 'Must be a number, can be followed by k(b), m(b) or g(b)' }],
      }),
      p({
        ...nonNegative('minReplicasToWrite', 'Connected replicas required to accept writes; 0 disables (must be enabled on the broker).'),
        multiNodeOnly: true,
      }),
      p({
        name: 'minReplicasMaxLag',
        type: 'integer',
        minimum: 1,
        multiNodeOnly: true,
        description: 'Maximum replica lag in seconds before a replica counts as disconnected.',
      }),
      p({ name: 'lazyfreeLazyEviction', type: 'string', enum: KEYVALUE_BOOLEAN, description: 'Free evicted objects lazily.' }),
      p({ name: 'lazyfreeLazyExpire', type: 'string', enum: KEYVALUE_BOOLEAN, description: 'Free expired objects lazily.' }),
      p({
        name: 'maxmemory',
        type: 'string',
        description: 'Memory limit per node: dynamic, 0 (no limit) or a size (must be enabled on the broker).',
        rules: [
          {
            rule: `self.matches("^dynamic$|^0$|^[1-9][0-9]*${SIZE_SUFFIX}$")`,
            message: 'Must be `dynamic`, `0` or number greater than 0. If it is a number greater than 0 it can be followed by k(b), m(b) or g(b)',
          },
        ],
      }),
      p({
        name: 'maxmemoryPolicy',
        type: 'string',
        enum: ['volatile-lru', 'volatile-lfu', 'volatile-random', 'volatile-ttl', 'allkeys-lru', 'allkeys-lfu', 'allkeys-random', 'noeviction'],
        description: 'Eviction policy when maxmemory is reached.',
      }),
      p(nonNegative('maxmemorySamples', 'Samples checked before an eviction.')),
      p(nonNegative('maxclients', 'Maximum simultaneous clients.')),
      p({ ...nonNegative('downAfterMilliseconds', 'Milliseconds a node must be unreachable to count as down.'), multiNodeOnly: true }),
      p({ ...nonNegative('failoverTimeout', 'Failover timeout in milliseconds.'), multiNodeOnly: true }),
      p({
        name: 'hostnameResolution',
        type: 'string',
        enum: ['disabled', 'resolve-only', 'enabled'],
        multiNodeOnly: true,
        description: 'Hostname support for Valkey and Sentinel.',
      }),
      p({ name: 'tlsProtocols', type: 'string', enum: ['TLSv1.2', 'TLSv1.3', 'TLSv1.2 TLSv1.3', 'TLSv1.3 TLSv1.2'], description: 'Supported TLS versions.' }),
      p({ name: 'tlsCiphers', type: 'string', description: 'Allowed ciphers (ciphers(1ssl) syntax); not validated.' }),
      p({ name: 'tlsCiphersuites', type: 'string', description: 'Allowed TLSv1.3 ciphersuites; not validated.' }),
      p(nonNegative('luaTimeLimit', 'Maximum script run time in ms.')),
      p({
        name: 'notifyKeyspaceEvents',
        type: 'string',
        description: 'Keyspace notification classes.',
        rules: [
          { rule: 'self.matches("^$|^[KEg\\\\$lshzxeA]*[KE][KEg\\\\$lshzxeA]*$")', message: 'Must only contain legal characters and at least one K or E' },
        ],
      }),
    ],
  });
}

const TLS_JAVA = ['TLSv1.2', 'TLSv1.3'];
const FLUENTD_TLS = ['TLSv1_1', 'TLS1_2', 'TLS1_3'];
const port = (name: string, description: string): ParameterProps => ({
  name,
  type: 'integer',
  minimum: 1,
  maximum: 65535,
  description,
  brokerName: name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase(),
});
const javaParameters: ParameterProps[] = [
  { name: 'javaHeapspace', type: 'integer', minimum: 256, description: 'JVM heap for OpenSearch in MB (at most 50% of VM memory).' },
  { name: 'javaMaxmetaspace', type: 'integer', minimum: 256, maximum: 1024, description: 'JVM metaspace for OpenSearch in MB.' },
  {
    name: 'javaGarbageCollector',
    type: 'string',
    enum: ['UseSerialGC', 'UseParallelGC', 'UseParallelOldGC', 'UseG1GC'],
    description: 'JVM garbage collector.',
  },
];

/** a9s LogMe2 (OpenSearch + Fluentd). */
export function logme2(pcs: ICatalogueProviderConfigs = KLUTCH_PROVIDER_CONFIG_NAMES): DataServiceProps {
  return a9sInstance(pcs, {
    ds: 'logme2',
    kindStem: 'Logme2',
    plans: plans('logme', ['cluster-small', 'single-small'], [['ssl']]),
    services: [{ name: 'a9s-logme2' }],
    topologyChange: TopologyChange.NONE,
    parameters: [
      ...javaParameters,
      { name: 'ismJobInterval', type: 'integer', minimum: 1, description: 'Minutes between Index State Management runs.' },
      { name: 'ismDeletionAfter', type: 'string', description: 'Age (e.g. 30d) after which indices are deleted.' },
      { name: 'ismJitter', type: 'number', minimum: 0, description: 'Jitter of the ISM job interval.' },
      {
        name: 'opensearchTlsProtocols',
        type: 'array',
        items: { type: 'string', enum: TLS_JAVA },
        brokerName: 'opensearch-tls-protocols',
        description: 'Allowed TLS protocols (Java names).',
      },
      {
        name: 'opensearchTlsCiphers',
        type: 'array',
        items: { type: 'string' },
        brokerName: 'opensearch-tls-ciphers',
        description: 'Allowed TLS ciphers (Java names); not validated.',
      },
      port('fluentdUdp', 'Port of the Fluentd UDP endpoint.'),
      port('fluentdTcp', 'Port of the unencrypted Fluentd TCP endpoint.'),
      port('fluentdTls', 'Port of the encrypted Fluentd TCP endpoint.'),
      { name: 'fluentdTlsCiphers', type: 'string', brokerName: 'fluentd-tls-ciphers', description: 'Allowed Fluentd TLS ciphers; only type-checked.' },
      { name: 'fluentdTlsVersion', type: 'string', enum: FLUENTD_TLS, brokerName: 'fluentd-tls-version', description: 'Fluentd TLS version.' },
      {
        name: 'fluentdTlsMinVersion',
        type: 'string',
        enum: FLUENTD_TLS,
        brokerName: 'fluentd-tls-min-version',
        description: 'Minimum Fluentd TLS version (set the maximum too).',
      },
      {
        name: 'fluentdTlsMaxVersion',
        type: 'string',
        enum: FLUENTD_TLS,
        brokerName: 'fluentd-tls-max-version',
        description: 'Maximum Fluentd TLS version (set the minimum too).',
      },
      {
        name: 'groks',
        type: 'array',
        items: { type: 'object', properties: { pattern: { type: 'string' } }, required: ['pattern'] },
        description: 'Additional grok patterns matched against syslog messages; [] removes them.',
      },
    ],
  });
}

/** a9s MariaDB. */
export function mariadb(pcs: ICatalogueProviderConfigs = KLUTCH_PROVIDER_CONFIG_NAMES): DataServiceProps {
  const all = [
    ...plans('mariadb', ['single-nano', 'single-small', 'single-big'], [[], ['ssl']]),
    ...plans('mariadb', ['cluster-small', 'cluster-big'], [[], ['ssl']]),
  ];
  return a9sInstance(pcs, {
    ds: 'mariadb',
    kindStem: 'Mariadb',
    plans: all,
    services: [{ name: 'a9s-mariadb106' }, { name: 'a9s-mariadb1011', plans: all.filter((p) => p.hasFlag('ssl')).map((p) => p.name) }],
    parameters: [
      { name: 'binlogExpireDays', type: 'integer', minimum: 1, description: 'Days binary logs are kept before purging.' },
      { name: 'databases', type: 'array', items: { type: 'string' }, description: 'Databases that should exist besides the default one.' },
      { name: 'grantPerformanceSchemaPermissions', type: 'boolean', description: 'Grant Performance Schema permissions to the binding credentials.' },
    ],
  });
}

/** a9s Messaging (RabbitMQ). */
export function messaging(pcs: ICatalogueProviderConfigs = KLUTCH_PROVIDER_CONFIG_NAMES): DataServiceProps {
  return a9sInstance(pcs, {
    ds: 'messaging',
    kindStem: 'Messaging',
    plans: plans('messaging', ['single-nano', 'single-small', 'single-big', 'cluster-small', 'cluster-big'], [[], ['ssl']]),
    services: ['a9s-messaging310', 'a9s-messaging312', 'a9s-messaging313', 'a9s-messaging4'].map((name) => ({ name })),
    parameters: [
      { name: 'consumerTimeout', type: 'integer', minimum: 1800000, description: "RabbitMQ's consumer_timeout in milliseconds." },
      {
        name: 'tlsProtocols',
        type: 'array',
        items: { type: 'string', enum: ['tlsv1.2', 'tlsv1.3'] },
        brokerName: 'tls-protocols',
        description: 'TLS versions (ssl_options.versions).',
      },
      {
        name: 'tlsCiphers',
        type: 'array',
        items: { type: 'string' },
        brokerName: 'tls-ciphers',
        description: 'TLS ciphers (ssl_options.ciphers); not validated.',
      },
    ],
  });
}

/** a9s MongoDB. */
export function mongodb(pcs: ICatalogueProviderConfigs = KLUTCH_PROVIDER_CONFIG_NAMES): DataServiceProps {
  return a9sInstance(pcs, {
    ds: 'mongodb',
    kindStem: 'Mongodb',
    plans: plans('mongodbsspl', ['single-nano', 'single-small', 'single-big', 'replica-small', 'replica-big'], [[], ['ssl']]),
    services: [{ name: 'a9s-mongodb50' }, { name: 'a9s-mongodb70' }],
    parameters: [
      {
        name: 'setClusterParameter',
        type: 'object',
        brokerName: 'set_cluster_parameter',
        description: "MongoDB's setClusterParameter options.",
        properties: {
          changeStreamOptions: {
            type: 'object',
            properties: {
              preAndPostImages: {
                type: 'object',
                properties: {
                  expireAfterSeconds: {
                    type: 'int-or-string',
                    description: "Retention of change stream pre- and post-images in seconds, or 'off' for the oplog default.",
                    rules: [{ rule: "type(self) == string ? self == 'off' : self >= 0", message: "must be 'off' or an integer >= 0" }],
                  },
                },
              },
            },
          },
        },
      },
    ],
  });
}

/** a9s Prometheus (with Grafana): plans cannot change. */
export function prometheus(pcs: ICatalogueProviderConfigs = KLUTCH_PROVIDER_CONFIG_NAMES): DataServiceProps {
  return a9sInstance(pcs, {
    ds: 'prometheus',
    kindStem: 'Prometheus',
    plans: [
      ...plans('prometheus', ['single-small', 'single-big'], [[]]),
      ...plans('promgraf2', ['single-small', 'single-big'], [[]]),
      ...plans('prometheus2-grafana10', ['single-small', 'single-big'], [[]]),
    ],
    services: [{ name: 'a9s-prometheus' }],
    planChange: PlanChange.NONE,
    parameters: [
      { name: 'mappingStrictMatch', type: 'boolean', description: 'Graphite exporter mapping-strict-match (default true).' },
      {
        name: 'scrapeConfigs',
        type: 'array',
        items: { type: 'object', preserveUnknownFields: true },
        description: 'Additional scrape targets (disabled by default on the broker).',
      },
    ],
  });
}

/** a9s Search (OpenSearch). */
export function search(pcs: ICatalogueProviderConfigs = KLUTCH_PROVIDER_CONFIG_NAMES): DataServiceProps {
  return a9sInstance(pcs, {
    ds: 'search',
    kindStem: 'Search',
    plans: plans('search', ['cluster-small', 'cluster-medium', 'cluster-big', 'single-nano', 'single-small', 'single-medium', 'single-big'], [['ssl']]),
    services: [{ name: 'a9s-search2' }],
    parameters: [
      ...javaParameters,
      {
        name: 'tlsProtocols',
        type: 'array',
        items: { type: 'string', enum: TLS_JAVA },
        brokerName: 'tls-protocols',
        description: 'Allowed TLS protocols (Java names).',
      },
      {
        name: 'tlsCiphers',
        type: 'array',
        items: { type: 'string' },
        brokerName: 'tls-ciphers',
        description: 'Allowed TLS ciphers (Java names); not validated.',
      },
    ],
  });
}
