/**
 * The PostgreSQL data service of the Klutch catalogue: its plans, parameters and the a8s and a9s
 * backends (Composition names `a8s-postgresql`, `a9s-postgresql`), as `DataServiceProps`.
 */
import { A8sBackend, A9sBackend, DataServiceProps, OperatorProfile, ParameterProps } from './_deps.js';
import { A8S_SIZES, ANYNINES_GROUP, names, plans } from './_common.js';
import { type ICatalogueProviderConfigs, KLUTCH_PROVIDER_CONFIG_NAMES } from './provider-configs.js';

/** Composition (backend) names of the PostgreSQL data service. */
export const A8S_POSTGRESQL = 'a8s-postgresql';
export const A9S_POSTGRESQL = 'a9s-postgresql';

const a8sSize = (n: string) => A8S_SIZES[n];
const a9sPlans = plans(
  'postgresql',
  ['single-nano', 'single-small', 'single-big', 'replica-small', 'replica-big'],
  [[], ['ssl'], ['bionic'], ['ssl', 'bionic']],
  a8sSize,
);
const a8sOnly = plans('postgresql', ['replica-nano', 'single-medium', 'replica-medium'], [[]], a8sSize);
const a8sPlanNames = ['single', 'replica'].flatMap((t) => ['nano', 'small', 'medium', 'big'].map((s) => `postgresql-${t}-${s}`));
const nonBionic = names(a9sPlans).filter((n) => !n.includes('bionic'));

const LOG_LEVELS = ['DEBUG5', 'DEBUG4', 'DEBUG3', 'DEBUG2', 'DEBUG1', 'INFO', 'NOTICE', 'WARNING', 'ERROR', 'LOG', 'FATAL', 'PANIC'];
const ON_OFF = ['on', 'off'];

/** PostgreSQL parameters: which backends accept them and how they are named there. */
export const POSTGRESQL_PARAMETERS: readonly ParameterProps[] = [
  {
    name: 'dataChecksums',
    type: 'string',
    enum: ['enabled', 'disabled'],
    backends: [A9S_POSTGRESQL],
    description: 'Checksums on data pages to detect silent I/O corruption.',
  },
  { name: 'maxConnections', type: 'number', description: 'Maximum number of concurrent connections.' },
  { name: 'effectiveCacheSize', type: 'string', backends: [A9S_POSTGRESQL], description: "The planner's assumption of the disk cache available to one query." },
  { name: 'workMem', type: 'string', backends: [A9S_POSTGRESQL], description: 'Memory for sorts and hash tables before spilling to disk.' },
  { name: 'maintenanceWorkMem', type: 'string', backends: [A9S_POSTGRESQL], description: 'Memory for maintenance operations (VACUUM, CREATE INDEX, ...).' },
  {
    name: 'tempFileLimit',
    type: 'integer',
    description: 'Disk space (kB) a process may use for temporary files; -1 for no limit.',
    rules: [{ rule: 'self == -1 || self > 0', message: 'Must be either -1 (no limit) or a limit specified in kilobytes' }],
  },
  { name: 'trackIoTiming', type: 'string', enum: ON_OFF, description: 'Time database I/O calls.' },
  { name: 'archiveTimeout', type: 'integer', description: 'Force a WAL segment switch after this many seconds.' },
  { name: 'statementTimeout', type: 'integer', description: 'Abort statements running longer than this (ms); 0 disables.' },
  {
    name: 'idleInTransactionSessionTimeout',
    type: 'integer',
    minimum: 0,
    backends: [A9S_POSTGRESQL],
    description: 'End sessions idle in a transaction for longer than this (ms).',
  },
  {
    name: 'rolePrivileges',
    type: 'array',
    items: { type: 'string', enum: ['CREATEDB', 'CREATEROLE', 'REPLICATION'] },
    backends: [A9S_POSTGRESQL],
    description: 'Default privileges of the credentials (must be enabled on the broker).',
  },
  { name: 'walLevelLogical', type: 'boolean', backends: [A9S_POSTGRESQL], description: 'true sets wal_level to logical.' },
  { name: 'walWriterDelay', type: 'integer', minimum: 1, description: 'How often the WAL writer flushes (ms).' },
  { name: 'maxLocksPerTransaction', type: 'integer', minimum: 10, backends: [A8S_POSTGRESQL], description: 'Maximum locks per transaction.' },
  { name: 'maxReplicationSlots', type: 'integer', minimum: 0, description: 'Maximum replication slots.' },
  { name: 'maxWalSenders', type: 'integer', minimum: 0, description: 'Maximum WAL senders per node.' },
  {
    name: 'synchronousCommit',
    type: 'string',
    enum: ['on', 'off', 'local', 'remote_write', 'remote_apply'],
    description: 'WAL processing required before a commit reports success.',
  },
  { name: 'sslCiphers', type: 'string', backends: [A8S_POSTGRESQL], description: 'Allowed SSL ciphers.' },
  {
    name: 'sslMinProtocolVersion',
    type: 'string',
    enum: ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'],
    backends: [A8S_POSTGRESQL],
    description: 'Minimum SSL/TLS protocol version.',
  },
  {
    name: 'clientMinMessages',
    type: 'string',
    enum: ['DEBUG5', 'DEBUG4', 'DEBUG3', 'DEBUG2', 'DEBUG1', 'LOG', 'NOTICE', 'WARNING', 'ERROR'],
    description: 'Message levels sent to the client.',
  },
  { name: 'logMinMessages', type: 'string', enum: LOG_LEVELS, brokerName: 'pg_log_min_messages', description: 'Message levels written to the server log.' },
  {
    name: 'logMinErrorStatement',
    type: 'string',
    enum: LOG_LEVELS,
    brokerName: 'pg_log_min_error_statement',
    description: 'Error levels whose statements are logged.',
  },
  { name: 'logStatement', type: 'string', enum: ['none', 'ddl', 'mod', 'all'], description: 'Which SQL statements are logged.' },
  { name: 'logErrorVerbosity', type: 'string', enum: ['DEFAULT', 'VERBOSE', 'TERSE'], description: 'Detail written to the server log per message.' },
];

/** The PostgreSQL data service: a8s (default) and a9s backends. */
export function postgresql(pcs: ICatalogueProviderConfigs = KLUTCH_PROVIDER_CONFIG_NAMES): DataServiceProps {
  return {
    group: ANYNINES_GROUP,
    kind: 'XPostgresqlInstance',
    claimKind: 'PostgresqlInstance',
    label: 'postgresql',
    plans: [...a9sPlans, ...a8sOnly],
    services: [
      { name: 'a9s-postgresql13' },
      { name: 'a9s-postgresql14' },
      { name: 'a9s-postgresql15', plans: nonBionic },
      { name: 'a9s-postgresql17', plans: nonBionic },
    ],
    fields: [
      {
        name: 'expose',
        type: 'string',
        enum: ['Internal', 'LoadBalancer'],
        description: 'Where the instance is reachable from: Internal (in-cluster) or LoadBalancer.',
      },
    ],
    parameters: POSTGRESQL_PARAMETERS,
    managedStateColumn: false,
    backends: [
      new A8sBackend({
        name: A8S_POSTGRESQL,
        services: ['a9s-postgresql13', 'a9s-postgresql14'],
        plans: a8sPlanNames,
        profile: OperatorProfile.A8S_POSTGRESQL,
      }),
      new A9sBackend({
        name: A9S_POSTGRESQL,
        services: ['a9s-postgresql13', 'a9s-postgresql15', 'a9s-postgresql17'],
        plans: names(a9sPlans),
        providerConfig: pcs.serviceBroker('postgresql'),
      }),
    ],
  };
}
