/**
 * A small typed OpenAPI v3 schema builder: every binding-API field is written once with these
 * helpers; the TypeScript type is derived from the builder value (`TypeOf<typeof x>`), and the
 * CRD schema is rendered from the same value (`toJsonSchemaProps`).
 *
 * Rendering follows controller-gen's layout (keys and `required` sorted alphabetically) so the
 * generated CRD YAML reads like a Kubernetes-generated one.
 */

/** The subset of `apiextensions.k8s.io/v1` JSONSchemaProps that schemas in this package use. */
export interface JSONSchemaProps {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  format?: string;
  default?: unknown;
  enum?: readonly unknown[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  nullable?: boolean;
  properties?: Record<string, JSONSchemaProps>;
  required?: string[];
  items?: JSONSchemaProps;
  additionalProperties?: JSONSchemaProps | boolean;
  anyOf?: JSONSchemaProps[];
  allOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-validations'?: CelRule[];
  [extra: string]: unknown;
}

/** One `x-kubernetes-validations` entry. */
export interface CelRule {
  readonly rule: string;
  readonly message?: string;
  readonly messageExpression?: string;
  readonly reason?: string;
  readonly fieldPath?: string;
  readonly optionalOldSelf?: boolean;
}

declare const typeTag: unique symbol;

/** A schema node carrying (at type level only) the TypeScript type of the values it accepts. */
export interface Schema<T> {
  readonly [typeTag]?: T;
  /** Renders the node (deep copy, sorted keys). */
  toJSON(): JSONSchemaProps;
  /** Returns the same schema with a narrower TypeScript type (the wire schema is unchanged). */
  as<U extends T>(): Schema<U>;
}

/** The TypeScript type of values accepted by a schema node. */
export type TypeOf<S> = S extends Schema<infer T> ? T : never;

/** Options every node accepts. */
export interface CommonOpts<T> {
  readonly description?: string;
  readonly default?: NoInfer<T>;
  readonly validations?: readonly CelRule[];
  /** Extra raw keys (e.g. `x-kubernetes-map-type`). */
  readonly extra?: Readonly<Record<string, unknown>>;
}

class Node<T> implements Schema<T> {
  declare readonly [typeTag]?: T;
  constructor(private readonly raw: JSONSchemaProps) {}
  toJSON(): JSONSchemaProps {
    return sortKeys(this.raw) as JSONSchemaProps;
  }
  as<U extends T>(): Schema<U> {
    return this as unknown as Schema<U>;
  }
}

function base<T>(o: CommonOpts<T> | undefined, raw: JSONSchemaProps): JSONSchemaProps {
  const out: JSONSchemaProps = { ...raw };
  if (o?.description !== undefined) out.description = o.description;
  if (o?.default !== undefined) out.default = structuredClone(o.default);
  if (o?.validations?.length) out['x-kubernetes-validations'] = o.validations.map((r) => ({ ...r }));
  if (o?.extra) Object.assign(out, structuredClone(o.extra));
  return out;
}

export interface StrOpts<E extends string> extends CommonOpts<E> {
  readonly enum?: readonly E[];
  readonly pattern?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly format?: string;
}

/** `type: string`; with `enum`, the TypeScript type is the union of the enum values. */
export function str<const E extends string = string>(o: StrOpts<E> = {}): Schema<E> {
  const raw: JSONSchemaProps = { type: 'string' };
  if (o.enum) raw.enum = [...o.enum];
  if (o.pattern !== undefined) raw.pattern = o.pattern;
  if (o.minLength !== undefined) raw.minLength = o.minLength;
  if (o.maxLength !== undefined) raw.maxLength = o.maxLength;
  if (o.format !== undefined) raw.format = o.format;
  return new Node<E>(base(o, raw));
}

export interface NumOpts extends CommonOpts<number> {
  readonly format?: 'int32' | 'int64' | 'float' | 'double';
  readonly minimum?: number;
  readonly maximum?: number;
}

/** `type: integer` (format int32 / int64). */
export function int(o: NumOpts = {}): Schema<number> {
  const raw: JSONSchemaProps = { type: 'integer' };
  if (o.format) raw.format = o.format;
  if (o.minimum !== undefined) raw.minimum = o.minimum;
  if (o.maximum !== undefined) raw.maximum = o.maximum;
  return new Node<number>(base(o, raw));
}

/** `type: number`. */
export function num(o: NumOpts = {}): Schema<number> {
  const raw: JSONSchemaProps = { type: 'number' };
  if (o.format) raw.format = o.format;
  if (o.minimum !== undefined) raw.minimum = o.minimum;
  if (o.maximum !== undefined) raw.maximum = o.maximum;
  return new Node<number>(base(o, raw));
}

/** `type: boolean`. */
export function bool(o: CommonOpts<boolean> = {}): Schema<boolean> {
  return new Node<boolean>(base(o, { type: 'boolean' }));
}

/** `x-kubernetes-int-or-string` (Kubernetes `IntOrString`, resource quantities with `pattern`). */
export function intOrString(o: CommonOpts<number | string> & { readonly pattern?: string } = {}): Schema<number | string> {
  const raw: JSONSchemaProps = { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true };
  if (o.pattern !== undefined) raw.pattern = o.pattern;
  return new Node<number | string>(base(o, raw));
}

/** The Kubernetes resource-quantity pattern (e.g. `100m`, `1Gi`, `2`). */
export const QUANTITY_PATTERN = '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

/** A resource quantity (int-or-string with the quantity pattern). */
export function quantity(o: CommonOpts<number | string> = {}): Schema<number | string> {
  return intOrString({ ...o, pattern: QUANTITY_PATTERN });
}

export interface ArrOpts<T> extends CommonOpts<T[]> {
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly listType?: 'atomic' | 'set' | 'map';
  readonly listMapKeys?: readonly string[];
}

/** `type: array` of `items`. */
export function arr<T>(items: Schema<T>, o: ArrOpts<T> = {}): Schema<T[]> {
  const raw: JSONSchemaProps = { type: 'array', items: items.toJSON() };
  if (o.minItems !== undefined) raw.minItems = o.minItems;
  if (o.maxItems !== undefined) raw.maxItems = o.maxItems;
  if (o.listType) raw['x-kubernetes-list-type'] = o.listType;
  if (o.listMapKeys) raw['x-kubernetes-list-map-keys'] = [...o.listMapKeys];
  return new Node<T[]>(base(o, raw));
}

/** `type: object` with `additionalProperties` (a string-keyed map). */
export function map<T>(values: Schema<T>, o: CommonOpts<Record<string, T>> = {}): Schema<Record<string, T>> {
  return new Node<Record<string, T>>(base(o, { type: 'object', additionalProperties: values.toJSON() }));
}

/** `type: object` with `x-kubernetes-preserve-unknown-fields: true` (free-form JSON object). */
export function preserve(o: CommonOpts<Record<string, unknown>> = {}): Schema<Record<string, unknown>> {
  return new Node<Record<string, unknown>>(base(o, { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }));
}

/** `type: object` with no properties: Kubernetes prunes every field of it. */
export function emptyObj(o: CommonOpts<Record<string, never>> = {}): Schema<Record<string, never>> {
  return new Node<Record<string, never>>(base(o, { type: 'object' }));
}

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The object type built from `props` where the keys in `R` are required. */
export type ObjType<P, R extends PropertyKey> = Simplify<
  { -readonly [K in keyof P as K extends R ? K : never]: TypeOf<P[K]> } & {
    -readonly [K in keyof P as K extends R ? never : K]?: TypeOf<P[K]>;
  }
>;

export interface ObjOpts<R extends string, T> extends CommonOpts<T> {
  readonly required?: readonly R[];
  readonly mapType?: 'atomic' | 'granular';
  readonly preserveUnknownFields?: boolean;
}

/** `type: object` with named `properties`; `required` lists the keys that must be present. */
export function obj<const P extends Record<string, Schema<any>>, const R extends keyof P & string = never>(
  props: P,
  o: ObjOpts<R, ObjType<P, R>> = {},
): Schema<ObjType<P, R>> {
  const properties: Record<string, JSONSchemaProps> = {};
  for (const [k, v] of Object.entries(props)) properties[k] = v.toJSON();
  const raw: JSONSchemaProps = { type: 'object', properties };
  for (const r of o.required ?? []) {
    if (!(r in props)) throw new Error(`obj(): required key "${r}" is not one of the properties [${Object.keys(props).join(', ')}]`);
  }
  if (o.required?.length) raw.required = [...o.required].sort();
  if (o.mapType) raw['x-kubernetes-map-type'] = o.mapType;
  if (o.preserveUnknownFields) raw['x-kubernetes-preserve-unknown-fields'] = true;
  return new Node<ObjType<P, R>>(base(o, raw));
}

/** Wraps a hand-written JSONSchemaProps object with a declared TypeScript type. */
export function rawSchema<T>(props: JSONSchemaProps): Schema<T> {
  return new Node<T>(structuredClone(props));
}

/** Deep copy with object keys sorted alphabetically (arrays keep their order). */
export function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v as object).sort()) out[k] = sortKeys((v as Record<string, unknown>)[k]);
    return out;
  }
  return v;
}
