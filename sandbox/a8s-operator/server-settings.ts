/**
 * What a single local PostgreSQL server can honour of an a8s `Postgresql` spec: the `postgresql.conf` settings
 * (from `spec.parameters`, names and units as the a8s CRD documents them), whether the server runs, and — as
 * clear messages for the status — what it cannot apply. Pure; unit-tested.
 */
import type { PostgresqlSpec } from './types.js';

interface ParameterMapping {
  /** postgresql.conf name. */
  readonly setting: string;
  /** Needs a server restart (postmaster context), as the a8s CRD says of maxConnections and sharedBuffers. */
  readonly restart: boolean;
  /** A unit appended to integers (the a8s field's unit). */
  readonly unit?: 's' | 'ms' | 'kB';
}

/** a8s `spec.parameters` field → PostgreSQL setting. */
export const PARAMETER_SETTINGS: Readonly<Record<string, ParameterMapping>> = {
  archiveTimeoutSeconds: { setting: 'archive_timeout', restart: false, unit: 's' },
  clientMinMessages: { setting: 'client_min_messages', restart: false },
  logErrorVerbosity: { setting: 'log_error_verbosity', restart: false },
  logMinErrorStatement: { setting: 'log_min_error_statement', restart: false },
  logMinMessages: { setting: 'log_min_messages', restart: false },
  logStatement: { setting: 'log_statement', restart: false },
  maxConnections: { setting: 'max_connections', restart: true },
  maxLocksPerTransaction: { setting: 'max_locks_per_transaction', restart: true },
  maxReplicationSlots: { setting: 'max_replication_slots', restart: true },
  maxWALSenders: { setting: 'max_wal_senders', restart: true },
  sharedBuffers: { setting: 'shared_buffers', restart: true },
  statementTimeoutMillis: { setting: 'statement_timeout', restart: false, unit: 'ms' },
  synchronousCommit: { setting: 'synchronous_commit', restart: false },
  tempFileLimitKiloBytes: { setting: 'temp_file_limit', restart: false, unit: 'kB' },
  trackIOTiming: { setting: 'track_io_timing', restart: false },
  walWriterDelayMillis: { setting: 'wal_writer_delay', restart: false, unit: 'ms' },
};

/** Parameters that are set but have no effect because the local server speaks no TLS. */
const TLS_PARAMETERS = new Set(['sslCiphers', 'sslMinProtocolVersion']);

/** Extensions that Debian's postgresql-contrib ships (the a8s CRD also allows postgis, which it does not). */
export const CONTRIB_EXTENSIONS = new Set(['uuid-ossp', 'ltree', 'pgcrypto', 'pg_stat_statements', 'fuzzystrmatch', 'pg_trgm', 'hstore']);

export interface ServerPlan {
  /** Settings written to the server's `sandbox.conf` (always including listen address, port, no Unix socket). */
  readonly settings: Readonly<Record<string, string>>;
  /** The names of `settings` that need a restart to change. */
  readonly restartSettings: ReadonlySet<string>;
  /** false when `spec.replicas` is 0 (the a8s operator runs no pod then). */
  readonly run: boolean;
  /** The replicas the spec asks for (1 when unset). */
  readonly replicas: number;
  /** Problems that keep the instance from being what the spec asks for: clusterStatus stays NotRunning. */
  readonly blocking: readonly string[];
  /** Parts of the spec the local server runs without (reported in status, the instance still runs). */
  readonly notApplied: readonly string[];
  /** Extensions to create in the application database. */
  readonly extensions: readonly string[];
}

const quote = (v: string) => `'${v.replace(/'/g, "''")}'`;

/**
 * @param address the loopback address the server listens on (and only that)
 * @param serverMajor the major version of the local PostgreSQL binaries (e.g. 15)
 */
export function planServer(spec: PostgresqlSpec, address: string, port: number, serverMajor: number): ServerPlan {
  const settings: Record<string, string> = {
    listen_addresses: quote(address),
    port: String(port),
    unix_socket_directories: quote(''),
    // the sandbox's servers are small: one machine runs several of them next to three API servers
    shared_buffers: '1024',
    max_connections: '100',
    dynamic_shared_memory_type: 'posix',
    logging_collector: 'off',
  };
  const restartSettings = new Set([
    'listen_addresses',
    'port',
    'unix_socket_directories',
    'dynamic_shared_memory_type',
    'logging_collector',
    'superuser_reserved_connections',
  ]);
  const blocking: string[] = [];
  const notApplied: string[] = [];
  const tls: string[] = [];
  for (const [name, raw] of Object.entries(spec.parameters ?? {})) {
    if (raw === undefined || raw === null) continue;
    const m = PARAMETER_SETTINGS[name];
    if (TLS_PARAMETERS.has(name)) {
      tls.push(`${name} ${JSON.stringify(raw)}`);
      continue;
    }
    if (!m) {
      blocking.push(`spec.parameters.${name} ${JSON.stringify(raw)} is not an a8s PostgreSQL parameter`);
      continue;
    }
    if (typeof raw === 'number') {
      if (!Number.isInteger(raw)) {
        blocking.push(`spec.parameters.${name} ${raw} must be an integer`);
        continue;
      }
      settings[m.setting] = `${raw}${m.unit ?? ''}`;
    } else if (/^[A-Za-z0-9_.:+!-]*$/.test(raw)) {
      settings[m.setting] = quote(raw); // PostgreSQL's enum settings are case-insensitive (a8s writes DEFAULT, VERBOSE)
    } else {
      blocking.push(`spec.parameters.${name} ${JSON.stringify(raw)} contains characters a PostgreSQL setting cannot take`);
      continue;
    }
    if (m.restart) restartSettings.add(m.setting);
  }
  if (tls.length) notApplied.push(`spec.parameters ${tls.join(', ')} (the local server accepts no TLS connections)`);
  // PostgreSQL refuses to start unless superuser_reserved_connections < max_connections
  const maxConnections = Number(settings['max_connections']);
  settings['superuser_reserved_connections'] = String(Math.min(3, Math.max(0, maxConnections - 1)));

  const replicas = spec.replicas ?? 1;
  if (replicas > 1) {
    blocking.push(
      `spec.replicas ${replicas} cannot be honoured: the sandbox runs one local PostgreSQL server per instance, no streaming-replication cluster (readyReplicas 1)`,
    );
  }
  if (spec.version !== undefined && spec.version !== serverMajor) {
    notApplied.push(`spec.version ${spec.version} (the local server is PostgreSQL ${serverMajor}, Debian's postgresql package)`);
  }
  if (spec.volumeSize !== undefined) notApplied.push(`spec.volumeSize ${JSON.stringify(spec.volumeSize)} (data lives in the sandbox's run folder, no volume)`);
  const res = spec.resources;
  const resParts = [
    ...Object.entries(res?.requests ?? {}).map(([k, v]) => `requests.${k}=${v}`),
    ...Object.entries(res?.limits ?? {}).map(([k, v]) => `limits.${k}=${v}`),
  ];
  if (resParts.length) notApplied.push(`spec.resources ${resParts.join(', ')} (a local process, no pod)`);
  if (spec.expose !== undefined && spec.expose !== 'Internal') notApplied.push(`spec.expose ${spec.expose} (the server listens on a loopback address only)`);
  if (spec.enableReadOnlyService) notApplied.push('spec.enableReadOnlyService true (one server, no read-only service)');
  if (spec.schedulingConstraints && Object.keys(spec.schedulingConstraints).length) notApplied.push('spec.schedulingConstraints (a local process, no pod)');
  const extensions: string[] = [];
  for (const e of spec.extensions ?? []) {
    if (CONTRIB_EXTENSIONS.has(e)) extensions.push(e);
    else notApplied.push(`spec.extensions ${e} (not shipped by Debian's postgresql-contrib)`);
  }
  return { settings, restartSettings, run: replicas > 0, replicas, blocking, notApplied, extensions };
}

/** The `sandbox.conf` text for a plan. */
export function renderSettings(plan: ServerPlan): string {
  return [
    '# Written by the sandbox a8s operator (sandbox/a8s-operator); regenerated on every change of the Postgresql object.',
    ...Object.entries(plan.settings)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k} = ${v}`),
    '',
  ].join('\n');
}

/** Which settings differ between two renders, and whether one of them needs a restart. */
export function settingsChange(before: Readonly<Record<string, string>>, after: ServerPlan): { changed: string[]; restart: boolean } {
  const keys = new Set([...Object.keys(before), ...Object.keys(after.settings)]);
  const changed = [...keys].filter((k) => before[k] !== after.settings[k]).sort();
  return { changed, restart: changed.some((k) => after.restartSettings.has(k)) };
}
