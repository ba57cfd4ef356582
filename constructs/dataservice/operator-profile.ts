/**
 * `OperatorProfile`: how an operator's custom resource is laid out (kind, spec fields, status fields,
 * readiness), which `A8sBackend` composes from.
 */
import { ConvertType, ReadinessCheck, StringConversion, Transform } from '../crossplane/index.js';
import { checkString, copyJson, fail, isPlainObject } from './_util.js';

/** Where a provider-kubernetes `Object` shows the observed manifest's status (the operator's status). */
export const OBJECT_OBSERVED_STATUS = 'status.atProvider.manifest.status';
/** `status.clusterStatus` value with which an a8s operator reports every replica ready. */
export const A8S_CLUSTER_RUNNING = 'Running';

const FIELD = /^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*$/;

function checkField(prop: string, v: unknown): string {
  if (typeof v !== 'string' || !FIELD.test(v)) fail(prop, v, 'must be a dotted field path such as "phase" or "nodes.ready"');
  return v;
}

function checkPath(prop: string, v: unknown): string {
  if (typeof v !== 'string' || !FIELD.test(v) || !(v === 'spec' || v.startsWith('spec.') || v.startsWith('metadata.')))
    fail(prop, v, 'must be a dotted path below the operator object, starting with "spec." (or "metadata.")');
  return v;
}

/**
 * One rule of when the operator's object is ready. The paths are below the operator object's
 * `status` (what the operator writes there); the backend reads them where provider-kubernetes copies
 * them, `status.atProvider.manifest.status` of the composed `Object`.
 */
export class OperatorReadiness {
  /** Ready when `status.<field>` equals the string, e.g. `statusEquals('phase', 'Ready')`. */
  public static statusEquals(field: string, value: string): OperatorReadiness {
    checkField('OperatorReadiness.statusEquals(field)', field);
    if (typeof value !== 'string') fail('OperatorReadiness.statusEquals(value)', value, 'must be a string (use statusEqualsInteger for numbers)');
    return new OperatorReadiness(`status.${field} == ${JSON.stringify(value)}`, ReadinessCheck.matchString(`${OBJECT_OBSERVED_STATUS}.${field}`, value));
  }

  /** Ready when `status.<field>` equals the integer. */
  public static statusEqualsInteger(field: string, value: number): OperatorReadiness {
    checkField('OperatorReadiness.statusEqualsInteger(field)', field);
    return new OperatorReadiness(`status.${field} == ${value}`, ReadinessCheck.matchInteger(`${OBJECT_OBSERVED_STATUS}.${field}`, value));
  }

  /** Ready when `status.<field>` is `true`. */
  public static statusTrue(field: string): OperatorReadiness {
    checkField('OperatorReadiness.statusTrue(field)', field);
    return new OperatorReadiness(`status.${field} == true`, ReadinessCheck.matchTrue(`${OBJECT_OBSERVED_STATUS}.${field}`));
  }

  /** Ready when `status.<field>` exists and is not empty. */
  public static statusNonEmpty(field: string): OperatorReadiness {
    checkField('OperatorReadiness.statusNonEmpty(field)', field);
    return new OperatorReadiness(`status.${field} is set`, ReadinessCheck.nonEmpty(`${OBJECT_OBSERVED_STATUS}.${field}`));
  }

  /**
   * A check on the composed provider-kubernetes `Object` itself (paths on the `Object`), for what the
   * `status*` rules do not cover. `ReadinessCheck.none()` is refused: it would make the claim Ready
   * as soon as the Object exists.
   */
  public static objectCheck(check: ReadinessCheck): OperatorReadiness {
    if (!(check instanceof ReadinessCheck)) fail('OperatorReadiness.objectCheck(check)', check, 'must be made with a ReadinessCheck factory');
    if (check.type === 'None') fail('OperatorReadiness.objectCheck(check)', check.toJson(), 'never waits for the operator: give a rule on its status');
    return new OperatorReadiness(`Object ${JSON.stringify(check.toJson())}`, check);
  }

  private constructor(
    /** How the rule reads, for messages and docs. */
    public readonly description: string,
    /** The P&T readiness check on the composed `Object`. */
    public readonly check: ReadinessCheck,
  ) {}

  public toString(): string {
    return this.description;
  }

  /** The rule as its description (error messages render it through this). */
  public toJson(): string {
    return this.description;
  }
}

/** Where the plan's resources go in the operator object (dotted paths below the object). */
export interface PlanResourcePaths {
  /** Targets of `Plan.size.storage`. @default - not written */
  readonly storage?: readonly string[];
  /** Targets of `Plan.size.cpu`. @default - not written */
  readonly cpu?: readonly string[];
  /** Targets of `Plan.size.memory`. @default - not written */
  readonly memory?: readonly string[];
  /** Targets of `Plan.replicas`. @default - not written */
  readonly replicas?: readonly string[];
}

/** How one claim parameter maps onto the operator object. */
export interface ParameterMapping {
  /** Path below the object. @default `<parametersPath>.<name>` */
  readonly path?: string;
  /** Transforms applied to the value. @default - none */
  readonly transforms?: Transform[];
}

/** The operator object's version, derived from the claim's `spec.service`. */
export interface VersionFromService {
  /** Trimmed from the service name: `a9s-postgresql` turns `a9s-postgresql15` into `15`. */
  readonly prefix: string;
  /** Where the version goes. @default 'spec.version' */
  readonly path?: string;
  /** What the rest of the service name is converted to. @default ConvertType.INT */
  readonly convert?: ConvertType;
}

export interface OperatorProfileProps {
  /** A name for messages and docs, e.g. `a8s-postgresql`. */
  readonly name: string;
  /** The operator resource's apiVersion, `<group>/<version>`, e.g. `postgresql.anynines.com/v1beta3`. */
  readonly apiVersion: string;
  /** The operator resource's kind (PascalCase), e.g. `Postgresql`. */
  readonly kind: string;
  /** Fixed `spec` written on every object (values the patches below may overwrite). @default - none */
  readonly spec?: Record<string, unknown>;
  /** Version derived from the service name. @default - no version written */
  readonly version?: VersionFromService;
  /** Where the plan's size and replicas go. @default - nothing of the plan is written */
  readonly planResourcePaths?: PlanResourcePaths;
  /** Where claim parameters without a mapping go: `<parametersPath>.<name>`. @default 'spec.parameters' */
  readonly parametersPath?: string;
  /** Per-parameter mappings (claim parameter name → path and transforms). @default - none */
  readonly parameterMappings?: Readonly<Record<string, ParameterMapping>>;
  /** Top-level claim `spec.<field>` fields written to the object: field → path below the object. Fields without an entry are not written. @default - none */
  readonly fieldPaths?: Readonly<Record<string, string>>;
  /** Operator status fields copied to the claim's `status.managed`: key → path below the object's `status`. @default - none */
  readonly statusFields?: Readonly<Record<string, string>>;
  /**
   * When the object is ready: every rule must hold (and the composed `Object` must be Ready, which the
   * backend always checks). Required: without it a claim would be Ready as soon as the Object exists.
   */
  readonly readyWhen: readonly OperatorReadiness[];
}

const checkPaths = (prop: string, v: unknown): readonly string[] => {
  if (!Array.isArray(v)) fail(prop, v, 'must be a list of paths below the operator object, e.g. ["spec.replicas"] ([] for none)');
  return (v as unknown[]).map((x, i) => checkPath(`${prop}[${i}]`, x));
};

/**
 * What a backend writes into an operator's object and which of its status means ready: the kind,
 * where the plan's size, replicas, version, parameters and fields go, which status fields come back
 * to the claim, and the readiness rules. `OperatorProfile.A8S_POSTGRESQL` is the a8s PostgreSQL
 * operator's; `OperatorProfile.of({...})` writes one for another operator (docs/dataservice.md).
 */
export class OperatorProfile {
  /**
   * The a8s PostgreSQL operator (`postgresql.anynines.com/v1beta3` `Postgresql`): `spec.version` from
   * the service name after `a9s-postgresql`, `spec.volumeSize`, `spec.resources.{requests,limits}.{cpu,memory}`,
   * `spec.replicas`, `spec.expose` (default `LoadBalancer`), parameters under `spec.parameters` with the
   * operator's names (`tempFileLimit` → `tempFileLimitKiloBytes`, …, log levels lower-cased), status
   * `clusterStatus` and `readyReplicas` copied back; ready when `status.clusterStatus` is `Running`.
   */
  public static readonly A8S_POSTGRESQL: OperatorProfile = new OperatorProfile(
    {
      name: 'a8s-postgresql',
      apiVersion: 'postgresql.anynines.com/v1beta3',
      kind: 'Postgresql',
      spec: { expose: 'LoadBalancer' },
      version: { prefix: 'a9s-postgresql' },
      planResourcePaths: {
        storage: ['spec.volumeSize'],
        cpu: ['spec.resources.requests.cpu', 'spec.resources.limits.cpu'],
        memory: ['spec.resources.requests.memory', 'spec.resources.limits.memory'],
        replicas: ['spec.replicas'],
      },
      fieldPaths: { expose: 'spec.expose' },
      parameterMappings: {
        tempFileLimit: { path: 'spec.parameters.tempFileLimitKiloBytes' },
        trackIoTiming: { path: 'spec.parameters.trackIOTiming' },
        archiveTimeout: { path: 'spec.parameters.archiveTimeoutSeconds' },
        statementTimeout: { path: 'spec.parameters.statementTimeoutMillis' },
        walWriterDelay: { path: 'spec.parameters.walWriterDelayMillis' },
        maxWalSenders: { path: 'spec.parameters.maxWALSenders' },
        clientMinMessages: { transforms: [Transform.stringConvert(StringConversion.TO_LOWER)] },
        logMinMessages: { transforms: [Transform.stringConvert(StringConversion.TO_LOWER)] },
        logMinErrorStatement: { transforms: [Transform.stringConvert(StringConversion.TO_LOWER)] },
      },
      statusFields: { clusterStatus: 'clusterStatus', readyReplicas: 'readyReplicas' },
      readyWhen: [OperatorReadiness.statusEquals('clusterStatus', A8S_CLUSTER_RUNNING)],
    },
    true,
  );

  /** Every built-in profile. */
  public static get all(): readonly OperatorProfile[] {
    return [OperatorProfile.A8S_POSTGRESQL];
  }

  /** A profile for another operator; a profile without `readyWhen` is an error naming the prop. */
  public static of(props: OperatorProfileProps): OperatorProfile {
    return new OperatorProfile(props, false);
  }

  public readonly name: string;
  public readonly apiVersion: string;
  public readonly kind: string;
  public readonly spec?: Record<string, unknown>;
  public readonly version?: Required<VersionFromService>;
  public readonly planResourcePaths: Required<PlanResourcePaths>;
  public readonly parametersPath: string;
  public readonly parameterMappings: Readonly<Record<string, ParameterMapping>>;
  public readonly fieldPaths: Readonly<Record<string, string>>;
  public readonly statusFields: Readonly<Record<string, string>>;
  public readonly readyWhen: readonly OperatorReadiness[];
  /**
   * Mappings and field paths that name no parameter of a data service are skipped for these keys (a
   * built-in profile describes the whole operator, a data service may offer less); any other key must
   * name a parameter or field of the backend (a typo is an error).
   */
  private readonly optionalKeys: ReadonlySet<string>;
  private readonly props: OperatorProfileProps;

  private constructor(props: OperatorProfileProps, builtIn: boolean, optionalKeys?: ReadonlySet<string>) {
    const P = 'OperatorProfile';
    if (!isPlainObject(props)) fail(P, props, 'must be { name, apiVersion, kind, readyWhen, ... }');
    this.name = checkString(`${P}.name`, props.name);
    const Q = `${P}(${JSON.stringify(this.name)})`;
    if (typeof props.apiVersion !== 'string' || !/^[a-z0-9.-]+\/v[0-9a-z]+$/.test(props.apiVersion))
      fail(`${Q}.apiVersion`, props.apiVersion, 'must be "<group>/<version>", e.g. "cache.example.com/v1"');
    if (typeof props.kind !== 'string' || !/^[A-Z][A-Za-z0-9]*$/.test(props.kind)) fail(`${Q}.kind`, props.kind, 'must be a PascalCase kind');
    this.apiVersion = props.apiVersion;
    this.kind = props.kind;
    if (props.spec !== undefined && !isPlainObject(props.spec)) fail(`${Q}.spec`, props.spec, 'must be an object (the fixed spec of every object)');
    if (props.spec !== undefined) this.spec = copyJson(props.spec);
    if (props.version !== undefined) {
      const v = props.version;
      if (!isPlainObject(v)) fail(`${Q}.version`, v, 'must be { prefix, path?, convert? }');
      const convert = v.convert ?? ConvertType.INT;
      if (!(convert instanceof ConvertType) || ![ConvertType.INT, ConvertType.INT64, ConvertType.STRING].includes(convert))
        fail(`${Q}.version.convert`, convert, 'must be ConvertType.INT, ConvertType.INT64 or ConvertType.STRING');
      this.version = { prefix: checkString(`${Q}.version.prefix`, v.prefix), path: checkPath(`${Q}.version.path`, v.path ?? 'spec.version'), convert };
    }
    const plan = props.planResourcePaths ?? {};
    if (!isPlainObject(plan)) fail(`${Q}.planResourcePaths`, plan, 'must be { storage?, cpu?, memory?, replicas? }');
    for (const k of Object.keys(plan))
      if (!['storage', 'cpu', 'memory', 'replicas'].includes(k)) fail(`${Q}.planResourcePaths`, k, 'is not one of storage, cpu, memory, replicas');
    this.planResourcePaths = {
      storage: checkPaths(`${Q}.planResourcePaths.storage`, plan.storage ?? []),
      cpu: checkPaths(`${Q}.planResourcePaths.cpu`, plan.cpu ?? []),
      memory: checkPaths(`${Q}.planResourcePaths.memory`, plan.memory ?? []),
      replicas: checkPaths(`${Q}.planResourcePaths.replicas`, plan.replicas ?? []),
    };
    this.parametersPath = checkPath(`${Q}.parametersPath`, props.parametersPath ?? 'spec.parameters');
    const mappings = props.parameterMappings ?? {};
    if (!isPlainObject(mappings)) fail(`${Q}.parameterMappings`, mappings, 'must map parameter names to { path?, transforms? }');
    for (const [k, m] of Object.entries(mappings)) {
      if (!isPlainObject(m)) fail(`${Q}.parameterMappings.${k}`, m, 'must be { path?, transforms? }');
      if (m.path !== undefined) checkPath(`${Q}.parameterMappings.${k}.path`, m.path);
      if (m.transforms !== undefined && (!Array.isArray(m.transforms) || m.transforms.some((t) => !(t instanceof Transform))))
        fail(`${Q}.parameterMappings.${k}.transforms`, m.transforms, 'must be a list made with the Transform factories');
    }
    this.parameterMappings = { ...mappings };
    const fields = props.fieldPaths ?? {};
    if (!isPlainObject(fields)) fail(`${Q}.fieldPaths`, fields, 'must map top-level claim fields to paths below the operator object');
    for (const [k, v] of Object.entries(fields)) checkPath(`${Q}.fieldPaths.${k}`, v);
    this.fieldPaths = { ...(fields as Record<string, string>) };
    const status = props.statusFields ?? {};
    if (!isPlainObject(status)) fail(`${Q}.statusFields`, status, 'must map status.managed keys to fields of the operator status');
    for (const [k, v] of Object.entries(status)) checkField(`${Q}.statusFields.${k}`, v);
    this.statusFields = { ...(status as Record<string, string>) };
    const ready = props.readyWhen;
    if (!Array.isArray(ready) || ready.length === 0)
      fail(
        `${Q}.readyWhen`,
        ready,
        'must list at least one OperatorReadiness rule (e.g. OperatorReadiness.statusEquals("phase", "Ready")): without one a claim is Ready as soon as the Object exists, before the operator has made anything',
      );
    ready.forEach((r, i) => {
      if (!(r instanceof OperatorReadiness)) fail(`${Q}.readyWhen[${i}]`, r, 'must be made with an OperatorReadiness factory');
    });
    this.readyWhen = [...ready];
    this.optionalKeys = optionalKeys ?? new Set(builtIn ? [...Object.keys(this.parameterMappings), ...Object.keys(this.fieldPaths)] : []);
    this.props = props;
  }

  /**
   * This profile with some props replaced (shallow: a given `parameterMappings` replaces the whole
   * map; spread `profile.parameterMappings` to extend it). Keys inherited from a built-in profile stay
   * optional; keys given here must name a parameter or field of the backend.
   */
  public with(overrides: Partial<OperatorProfileProps>): OperatorProfile {
    if (!isPlainObject(overrides)) fail(`OperatorProfile(${JSON.stringify(this.name)}).with()`, overrides, 'must be an object of OperatorProfileProps');
    const m = overrides.parameterMappings;
    const f = overrides.fieldPaths;
    // A key stays optional while it carries the inherited value (e.g. spread from this profile).
    const optional = new Set(
      [...this.optionalKeys].filter(
        (k) => (m === undefined || m[k] === this.parameterMappings[k]) && (f === undefined || f[k] === undefined || f[k] === this.fieldPaths[k]),
      ),
    );
    return new OperatorProfile({ ...this.props, ...overrides }, false, optional);
  }

  /** Whether a mapping or field path key may name nothing of a data service (inherited from a built-in profile). */
  public isOptionalKey(key: string): boolean {
    return this.optionalKeys.has(key);
  }

  /** The readiness checks of the composed `Object`: Object Ready (applied and observed), then every `readyWhen` rule. */
  public readinessChecks(): ReadinessCheck[] {
    return [ReadinessCheck.matchCondition('Ready', 'True'), ...this.readyWhen.map((r) => r.check)];
  }

  public toString(): string {
    return `OperatorProfile(${this.name}: ${this.apiVersion} ${this.kind})`;
  }

  /** The profile's name (error messages render it through this). */
  public toJson(): string {
    return this.toString();
  }
}
