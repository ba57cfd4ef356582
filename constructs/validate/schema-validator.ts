/**
 * Validates objects against one CRD version schema: defaulting, structural validation with ajv
 * (see openapi.ts), then CEL rules and list-type checks (see cel.ts).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { show } from '../_errors.js';
import type { JSONSchemaProps } from '../../contract/api/_schema.js';
import { joinPath, walkRules, type CelFailure } from './cel.js';
import { toAjvSchema } from './openapi.js';

/** One problem found in an object. */
export interface FieldError {
  /** Field path, e.g. `spec.versions[0].name` (empty for the object itself). */
  readonly path: string;
  readonly message: string;
  /** The CEL rule, for rule failures. */
  readonly rule?: string;
}

type AddFormats = (ajv: Ajv, opts?: unknown) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as unknown as AddFormats;

let sharedAjv: Ajv | undefined;
/** Compiled validators by schema (identity first, then content), shared by all SchemaValidators. */
const byIdentity = new WeakMap<object, ValidateFunction>();
const byContent = new Map<string, ValidateFunction>();

/**
 * `pattern`s are Go RE2 expressions. JavaScript lacks RE2's inline flag groups, so a leading
 * `(?i)`/`(?s)`/`(?m)` (at the start or right after `^`, as in prometheus-operator's CRDs) becomes a
 * RegExp flag; everything else compiles as is.
 */
export const re2RegExp = Object.assign(
  (pattern: string, flags: string): RegExp => {
    const m = /^(\^?)\(\?([ism]+)\)/.exec(pattern);
    if (!m) return new RegExp(pattern, flags);
    return new RegExp(m[1] + pattern.slice(m[0].length), [...new Set(flags + m[2])].join(''));
  },
  { code: 're2RegExp' },
);

/** The ajv instance (draft-07, all errors, defaults applied, Kubernetes formats). */
export function kubeAjv(): Ajv {
  if (sharedAjv) return sharedAjv;
  // Unoptimised code without ajv's messages compiles 3-7x faster (big CRDs such as
  // DeploymentRuntimeConfig: ~2 s → ~0.3 s); messages are written by formatAjvErrors instead.
  const ajv = new Ajv({
    strict: false,
    allErrors: true,
    useDefaults: true,
    validateFormats: true,
    messages: false,
    code: { optimize: false, regExp: re2RegExp },
  });
  addFormats(ajv, ['date-time', 'date', 'time', 'uri', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid', 'byte', 'duration']);
  // Formats the API server does not check (or checks only for documentation).
  for (const f of ['int32', 'int64', 'float', 'double', 'password', 'binary', 'quantity', 'string', 'cidr', 'mac', 'uri-reference']) {
    ajv.addFormat(f, true);
  }
  sharedAjv = ajv;
  return ajv;
}

export interface SchemaValidatorOptions {
  /** Report fields not declared in the schema (strict field validation). @default true */
  readonly rejectUnknownFields?: boolean;
}

/** Validator of objects of one kind/version. */
export class SchemaValidator {
  private compiled?: ValidateFunction;

  constructor(
    /** The version's `openAPIV3Schema`. */
    readonly schema: JSONSchemaProps,
    private readonly opts: SchemaValidatorOptions = {},
  ) {}

  private fn(): ValidateFunction {
    if (!this.compiled) {
      const strict = this.opts.rejectUnknownFields !== false;
      let fn = strict ? byIdentity.get(this.schema) : undefined;
      if (!fn) {
        const s = toAjvSchema(this.schema);
        if (!strict) relaxUnknown(s);
        const key = JSON.stringify(s);
        fn = byContent.get(key);
        if (!fn) {
          fn = kubeAjv().compile(s);
          byContent.set(key, fn);
        }
        if (strict) byIdentity.set(this.schema, fn);
      }
      this.compiled = fn;
    }
    return this.compiled;
  }

  /** Returns a defaulted deep copy of `obj` (schema defaults applied, like the API server). */
  defaulted<T>(obj: T): T {
    const copy = structuredClone(obj);
    this.fn()(copy);
    return copy;
  }

  /**
   * Validates `obj` (after defaulting a copy). With `old`, the call is an update: transition
   * rules (`oldSelf`) run against the defaulted old object. With `partial`, the object is a
   * template completed later (a Composition base): missing required fields and CEL rules are not
   * reported, wrong types, enums, patterns and unknown fields are.
   */
  validate(obj: unknown, old?: unknown, opts: { partial?: boolean } = {}): FieldError[] {
    const fn = this.fn();
    const data = structuredClone(obj);
    const errors: FieldError[] = [];
    let ajvErrors = fn(data) ? [] : [...(fn.errors ?? [])];
    // Partial objects (Composition bases, filled in later by patches): no required fields, no CEL.
    if (opts.partial) {
      ajvErrors = ajvErrors.filter(
        (e) => e.keyword !== 'required' && e.keyword !== 'anyOf' && e.keyword !== 'oneOf' && e.keyword !== 'minItems' && e.keyword !== 'minLength',
      );
      return dedupe(formatAjvErrors(ajvErrors, data));
    }
    errors.push(...formatAjvErrors(ajvErrors, data));
    // Like the API server, CEL rules do not run when a value has the wrong type.
    if (ajvErrors.some((e) => e.keyword === 'type')) return dedupe(errors);
    const oldData = old === undefined ? undefined : this.defaulted(old);
    const cel: CelFailure[] = [];
    walkRules(this.schema, data, oldData, old !== undefined, '', cel);
    for (const f of cel) errors.push({ path: f.path, message: f.message, rule: f.rule });
    return dedupe(errors);
  }
}

function relaxUnknown(s: unknown): void {
  if (Array.isArray(s)) s.forEach(relaxUnknown);
  else if (s && typeof s === 'object') {
    const o = s as Record<string, unknown>;
    if (o.additionalProperties === false) delete o.additionalProperties;
    Object.values(o).forEach(relaxUnknown);
  }
}

/** `/spec/a/0/b` → `spec.a[0].b`. */
export function pointerToPath(ptr: string): string {
  if (!ptr) return '';
  let out = '';
  for (const raw of ptr.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out = /^\d+$/.test(seg) ? `${out}[${seg}]` : joinPath(out, seg);
  }
  return out;
}

function valueAt(root: unknown, ptr: string): unknown {
  let v = root;
  for (const raw of ptr.split('/').slice(1)) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return v;
}

/** Values in field errors are cut at this many characters. */
const SHOWN = 80;

function formatAjvErrors(errs: ErrorObject[], data: unknown): FieldError[] {
  const out: FieldError[] = [];
  // anyOf/oneOf produce one error per branch plus a summary: keep the summary only.
  const junctorPaths = new Set(errs.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => e.schemaPath.replace(/\/(anyOf|oneOf)$/, '')));
  for (const e of errs) {
    if (
      e.keyword !== 'anyOf' &&
      e.keyword !== 'oneOf' &&
      [...junctorPaths].some((p) => e.schemaPath.startsWith(p + '/anyOf/') || e.schemaPath.startsWith(p + '/oneOf/'))
    )
      continue;
    const path = pointerToPath(e.instancePath);
    const value = valueAt(data, e.instancePath);
    const p = e.params as Record<string, unknown>;
    switch (e.keyword) {
      case 'required':
        out.push({ path: joinPath(path, String(p.missingProperty)), message: 'Required value' });
        break;
      case 'additionalProperties':
        out.push({
          path: joinPath(path, String(p.additionalProperty)),
          message: `unknown field ${JSON.stringify(String(p.additionalProperty))} (not declared in the schema)`,
        });
        break;
      case 'enum':
        out.push({
          path,
          message: `Unsupported value: ${show(value, SHOWN)}: supported values: ${(p.allowedValues as unknown[]).map((x) => JSON.stringify(x)).join(', ')}`,
        });
        break;
      case 'type':
        out.push({ path, message: `Invalid value: ${show(value, SHOWN)}: must be of type ${[p.type].flat().join(' or ')}` });
        break;
      case 'pattern':
        out.push({ path, message: `Invalid value: ${show(value, SHOWN)}: must match '${String(p.pattern)}'` });
        break;
      case 'format':
        out.push({ path, message: `Invalid value: ${show(value, SHOWN)}: must be a valid ${String(p.format)}` });
        break;
      case 'minLength':
      case 'maxLength':
      case 'minItems':
      case 'maxItems':
      case 'minProperties':
      case 'maxProperties': {
        const what = e.keyword.endsWith('Length') ? 'characters' : e.keyword.endsWith('Items') ? 'items' : 'properties';
        out.push({
          path,
          message: `Invalid value: ${show(value, SHOWN)}: must NOT have ${e.keyword.startsWith('min') ? 'fewer' : 'more'} than ${String(p.limit)} ${what}`,
        });
        break;
      }
      case 'minimum':
      case 'maximum':
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        out.push({ path, message: `Invalid value: ${show(value, SHOWN)}: must be ${String(p.comparison)} ${String(p.limit)}` });
        break;
      case 'multipleOf':
        out.push({ path, message: `Invalid value: ${show(value, SHOWN)}: must be a multiple of ${String(p.multipleOf)}` });
        break;
      case 'uniqueItems':
        out.push({ path, message: `Invalid value: duplicate items ${String(p.j)} and ${String(p.i)}` });
        break;
      case 'not':
        out.push({ path, message: `Invalid value: ${show(value, SHOWN)}: not allowed here` });
        break;
      case 'anyOf':
      case 'oneOf':
        out.push({
          path,
          message: `Invalid value: ${show(value, SHOWN)}: must match ${e.keyword === 'oneOf' ? 'exactly one' : 'at least one'} of the allowed schemas`,
        });
        break;
      default:
        out.push({ path, message: `Invalid value: ${show(value, SHOWN)}: fails ${e.keyword} ${JSON.stringify(p)}` });
    }
  }
  return out;
}

function dedupe(errors: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const k = `${e.path}\u0000${e.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
