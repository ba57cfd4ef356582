/**
 * `Parameter`: a user-settable field of a data service's claim spec — its type, limits, validation rules
 * and where each backend puts it.
 */
import { RESERVED_SPEC_FIELDS } from '../crossplane/index.js';
import { checkStringList, copyJson, fail, isPlainObject, show } from './_util.js';
import { EnumLike, enumMembers } from '../_enum-like.js';

/** JSON types a parameter may have. `int-or-string` is Kubernetes' `x-kubernetes-int-or-string`. */
export type ParameterType = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'int-or-string';

const TYPES: readonly ParameterType[] = ['string', 'integer', 'number', 'boolean', 'array', 'object', 'int-or-string'];

/** A CEL validation rule (`x-kubernetes-validations` entry). */
export interface ValidationRule {
  /** CEL expression; `self` is the value. */
  readonly rule: string;
  /** Message shown when the rule fails. */
  readonly message: string;
}

/** The typed schema of a parameter value (also used for array items and object properties). */
export interface ParameterSchema {
  readonly type: ParameterType;
  /** @default - none */
  readonly description?: string;
  /** Allowed values. @default - any */
  readonly enum?: readonly (string | number)[];
  /** Inclusive lower bound (integer/number). @default - none */
  readonly minimum?: number;
  /** Inclusive upper bound (integer/number). @default - none */
  readonly maximum?: number;
  /** Item schema (type `array`). */
  readonly items?: ParameterSchema;
  /** Properties (type `object`). @default - none */
  readonly properties?: Readonly<Record<string, ParameterSchema>>;
  /** Required properties (type `object`). @default - none */
  readonly required?: readonly string[];
  /** Keep unknown fields of an object (`x-kubernetes-preserve-unknown-fields`). @default false */
  readonly preserveUnknownFields?: boolean;
  /** Extra CEL rules on the value. @default - none */
  readonly rules?: readonly ValidationRule[];
}

/** A user-facing parameter of a data service (`spec.parameters.<name>` or a top-level `spec.<name>` field). */
export interface ParameterProps extends ParameterSchema {
  /** camelCase name as the claim carries it, e.g. `maxConnections`. */
  readonly name: string;
  /**
   * Name of the parameter at the service broker (a9s backends), e.g. `max_connections`,
   * `repl-backlog-size` or `pg_log_min_messages`.
   * @default - the name converted by the backend's `parameterCase` (snake_case by default)
   */
  readonly brokerName?: string;
  /** Names of the backends (Compositions) that accept the parameter. @default - all backends */
  readonly backends?: readonly string[];
  /** Only accepted with multi-node plans (replica/cluster). @default false */
  readonly multiNodeOnly?: boolean;
}

/** Spec fields owned by `DataService` itself; parameters cannot use these names at `spec` level. */
export const DATA_SERVICE_SPEC_FIELDS: readonly string[] = ['service', 'plan', 'parameters', 'acceptsIncomplete'];

/** CEL reserved words: Kubernetes escapes them in rules (`__in__`), so parameters may not be named so. */
export const CEL_RESERVED_WORDS: readonly string[] = [
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
];

const NAME = /^[a-z][A-Za-z0-9]*$/;
const BROKER_NAME = /^[A-Za-z][-_.A-Za-z0-9]*$/;

/** Where a parameter lives in the claim (enum-like: static instances). */
export class ParameterLocation extends EnumLike {
  /** `spec.parameters.<name>` */
  public static readonly PARAMETERS = new ParameterLocation('parameters');
  /** `spec.<name>` */
  public static readonly SPEC = new ParameterLocation('spec');

  /** Every instance, in declaration order. */
  public static get all(): readonly ParameterLocation[] {
    return enumMembers(ParameterLocation);
  }

  private constructor(
    /** `parameters` or `spec`. */
    value: string,
  ) {
    super(value);
  }
}

/** A validated parameter definition. */
export class Parameter {
  public readonly name: string;
  public readonly location: ParameterLocation;
  public readonly schema: ParameterSchema;
  public readonly brokerName?: string;
  public readonly backends?: readonly string[];
  public readonly multiNodeOnly: boolean;

  /**
   * @param prop     prop path for error messages
   * @param location where the parameter lives in the claim
   * @param owned    spec fields owned by the construct (not usable as SPEC field names)
   */
  constructor(prop: string, props: ParameterProps, location: ParameterLocation, owned: readonly string[] = DATA_SERVICE_SPEC_FIELDS) {
    if (!isPlainObject(props)) fail(prop, props, 'must be a parameter definition { name, type, ... }');
    const name = props.name;
    if (typeof name !== 'string' || !NAME.test(name)) fail(`${prop}.name`, name, 'must be a camelCase identifier (e.g. "maxConnections")');
    if (CEL_RESERVED_WORDS.includes(name)) fail(`${prop}.name`, name, 'is a CEL reserved word; choose another parameter name');
    if (location === ParameterLocation.SPEC) {
      if (RESERVED_SPEC_FIELDS.includes(name))
        fail(`${prop}.name`, name, 'collides with a reserved field Crossplane injects into the claim spec; choose another name');
      if (owned.includes(name)) fail(`${prop}.name`, name, `collides with a field the construct owns (${owned.join(', ')}); choose another name`);
    }
    this.name = name;
    this.location = location;
    const p = `${prop}(${show(name)})`;
    const { name: _n, brokerName, backends, multiNodeOnly, ...schema } = props;
    checkSchema(p, schema);
    this.schema = copyJson(schema);
    if (brokerName !== undefined && (typeof brokerName !== 'string' || !BROKER_NAME.test(brokerName))) {
      fail(`${p}.brokerName`, brokerName, 'must be a broker parameter key (letters, digits, "-", "_", ".")');
    }
    this.brokerName = brokerName;
    if (backends !== undefined) {
      this.backends = checkStringList(`${p}.backends`, backends);
      if (this.backends.length === 0) fail(`${p}.backends`, backends, 'must name at least one backend (omit it for all backends)');
    }
    if (multiNodeOnly !== undefined && typeof multiNodeOnly !== 'boolean') fail(`${p}.multiNodeOnly`, multiNodeOnly, 'must be a boolean');
    this.multiNodeOnly = multiNodeOnly ?? false;
  }

  /** Path of the parameter in the composite resource, e.g. `spec.parameters.maxConnections`. */
  public get fieldPath(): string {
    return this.location === ParameterLocation.SPEC ? `spec.${this.name}` : `spec.parameters.${this.name}`;
  }

  /** CEL test that the parameter is set, on `self` = the spec. */
  public get celHas(): string {
    return this.location === ParameterLocation.SPEC ? `has(self.${this.name})` : `(has(self.parameters) && has(self.parameters.${this.name}))`;
  }

  /** Whether a backend accepts this parameter. */
  public allowedOn(backend: string): boolean {
    return this.backends === undefined || this.backends.includes(backend);
  }

  /**
   * Leaf paths below the parameter for patches: `[[]]` for scalars and arrays, the nested property
   * paths for objects with declared properties (e.g. `[['changeStreamOptions', 'x']]`).
   */
  public leaves(): string[][] {
    const walk = (s: ParameterSchema, at: string[]): string[][] => {
      if (s.type === 'object' && s.properties && Object.keys(s.properties).length > 0 && !s.preserveUnknownFields) {
        return Object.entries(s.properties).flatMap(([k, v]) => walk(v, [...at, k]));
      }
      return [at];
    };
    return walk(this.schema, []);
  }

  /** The OpenAPI schema of the parameter. */
  public toOpenApi(): Record<string, unknown> {
    return renderSchema(this.schema);
  }
}

function checkSchema(prop: string, s: ParameterSchema): void {
  if (!isPlainObject(s)) fail(prop, s, 'must be a schema object { type, ... }');
  if (!TYPES.includes(s.type)) fail(`${prop}.type`, s.type, `must be one of ${TYPES.join(', ')}`);
  const numeric = s.type === 'integer' || s.type === 'number';
  for (const k of ['minimum', 'maximum'] as const) {
    const v = s[k];
    if (v === undefined) continue;
    if (!numeric) fail(`${prop}.${k}`, v, `only applies to integer and number parameters, not "${s.type}"`);
    if (typeof v !== 'number' || !Number.isFinite(v) || (s.type === 'integer' && !Number.isInteger(v))) fail(`${prop}.${k}`, v, `must be a finite ${s.type}`);
  }
  if (s.minimum !== undefined && s.maximum !== undefined && s.minimum > s.maximum) fail(`${prop}.minimum`, s.minimum, `is greater than maximum ${s.maximum}`);
  if (s.enum !== undefined) {
    if (!Array.isArray(s.enum) || s.enum.length === 0) fail(`${prop}.enum`, s.enum, 'must be a non-empty list');
    for (const v of s.enum) {
      const ok = s.type === 'string' ? typeof v === 'string' : s.type === 'integer' ? Number.isInteger(v) : s.type === 'number' ? typeof v === 'number' : false;
      if (!ok) fail(`${prop}.enum`, v, `is not a valid ${s.type} enum value`);
    }
    if (new Set(s.enum).size !== s.enum.length) fail(`${prop}.enum`, s.enum, 'lists a value twice');
  }
  if (s.type === 'array') {
    if (s.items === undefined) fail(`${prop}.items`, s.items, 'must be set for an array parameter');
    checkSchema(`${prop}.items`, s.items);
  } else if (s.items !== undefined) fail(`${prop}.items`, s.items, `only applies to arrays, not "${s.type}"`);
  if (s.properties !== undefined || s.required !== undefined) {
    if (s.type !== 'object') fail(`${prop}.properties`, s.properties ?? s.required, `only applies to objects, not "${s.type}"`);
    for (const [k, v] of Object.entries(s.properties ?? {})) {
      if (!NAME.test(k)) fail(`${prop}.properties`, k, 'must be a camelCase identifier');
      checkSchema(`${prop}.properties.${k}`, v);
    }
    for (const r of s.required ?? []) if (!(s.properties ?? {})[r]) fail(`${prop}.required`, r, 'is not a declared property');
  }
  if (s.preserveUnknownFields !== undefined && s.type !== 'object')
    fail(`${prop}.preserveUnknownFields`, s.preserveUnknownFields, `only applies to objects, not "${s.type}"`);
  for (const [i, r] of (s.rules ?? []).entries()) {
    if (!isPlainObject(r) || typeof r.rule !== 'string' || r.rule.trim() === '')
      fail(`${prop}.rules[${i}].rule`, isPlainObject(r) ? r.rule : r, 'must be a non-empty CEL expression');
    if (typeof r.message !== 'string' || r.message === '') fail(`${prop}.rules[${i}].message`, r.message, 'must be a non-empty message');
  }
}

function renderSchema(s: ParameterSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (s.type === 'int-or-string') {
    out.anyOf = [{ type: 'integer' }, { type: 'string' }];
    out['x-kubernetes-int-or-string'] = true;
  } else {
    out.type = s.type;
  }
  if (s.description !== undefined) out.description = s.description;
  if (s.enum !== undefined) out.enum = [...s.enum];
  if (s.minimum !== undefined) out.minimum = s.minimum;
  if (s.maximum !== undefined) out.maximum = s.maximum;
  if (s.items !== undefined) out.items = renderSchema(s.items);
  if (s.properties !== undefined) out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, renderSchema(v)]));
  if (s.required !== undefined && s.required.length > 0) out.required = [...s.required];
  if (s.preserveUnknownFields) out['x-kubernetes-preserve-unknown-fields'] = true;
  if (s.rules !== undefined && s.rules.length > 0) out['x-kubernetes-validations'] = s.rules.map((r) => ({ rule: r.rule, message: r.message }));
  return out;
}
