/**
 * Evaluates `x-kubernetes-validations` CEL rules with @bufbuild/cel, the way the API server does:
 *
 * - `self` is the value at the rule's schema node; `oldSelf` the correlated old value on updates;
 * - rules that use `oldSelf` (transition rules) run only when an old value correlates: through
 *   object properties, map values by key and `x-kubernetes-list-type: map` items by their keys
 *   (never through atomic or set lists), unless `optionalOldSelf` is set;
 * - values are typed by the schema: `integer` (and int-or-string numbers) are CEL `int`, `number`
 *   is `double`; unknown (preserved) JSON numbers that are whole are `int`;
 * - the strings extension (`lowerAscii`, `upperAscii`, `indexOf`, `split`, `replace`, `trim`, ...) and
 *   the Kubernetes lists, regex, quantity, url, ip, cidr and format libraries (`isSorted`, `sum`,
 *   `find`, `quantity(...)`, `isURL`, `cidr(...).containsIP`, `format.dns1123Label().validate`, ...;
 *   see cel-k8s.ts) are available alongside the standard `has`, `size`, `matches`, `contains`,
 *   `startsWith`, `all`, `exists`, `exists_one`, `map`, `filter`, `type`;
 * - a rule that evaluates to an error (e.g. a missing key) fails, reporting the error.
 */
import { celEnv, isCelError, parse, plan, type CelEnv } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import type { CelRule, JSONSchemaProps } from '../../contract/api/_schema.js';
import { k8sLibraryFuncs } from './cel-k8s.js';

/** One failed rule. */
export interface CelFailure {
  /** Field path of the node the rule is on (plus the rule's `fieldPath`). */
  readonly path: string;
  readonly message: string;
  readonly rule: string;
}

type Program = (ctx: Record<string, unknown>) => unknown;

let env: CelEnv | undefined;
const programs = new Map<string, Program | Error>();

function compile(rule: string): Program | Error {
  let p = programs.get(rule);
  if (!p) {
    try {
      env ??= celEnv({ funcs: [...strings, ...k8sLibraryFuncs] });
      p = plan(env, parse(rule)) as unknown as Program;
    } catch (e) {
      p = e instanceof Error ? e : new Error(String(e));
    }
    programs.set(rule, p);
  }
  return p;
}

const transitionCache = new Map<string, boolean>();

/** True when the rule refers to `oldSelf` (a transition rule). */
export function isTransitionRule(rule: string): boolean {
  let t = transitionCache.get(rule);
  if (t === undefined) {
    t = isTransitionRuleUncached(rule);
    transitionCache.set(rule, t);
  }
  return t;
}

function isTransitionRuleUncached(rule: string): boolean {
  return /(^|[^A-Za-z0-9_.])oldSelf\b/.test(rule.replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/g, '""'));
}

/** Evaluates one rule; returns undefined when it holds, else the failure message. */
export function evalRule(rule: CelRule, self: unknown, oldSelf: unknown, hasOld: boolean, schema: JSONSchemaProps): string | undefined {
  const ctx: Record<string, unknown> = { self: toCel(self, schema) };
  if (hasOld) ctx.oldSelf = toCel(oldSelf, schema);
  return evalRuleIn(rule, ctx);
}

/** Evaluates one rule with already converted `self` (and `oldSelf`). */
function evalRuleIn(rule: CelRule, ctx: Record<string, unknown>): string | undefined {
  const prog = compile(rule.rule);
  if (prog instanceof Error) return `invalid CEL rule ${JSON.stringify(rule.rule)}: ${prog.message}`;
  let res: unknown;
  try {
    res = prog(ctx);
  } catch (e) {
    return `rule ${JSON.stringify(rule.rule)} could not be evaluated: ${(e as Error).message}`;
  }
  if (isCelError(res)) return `rule ${JSON.stringify(rule.rule)} could not be evaluated: ${(res as Error).message}`;
  if (res === true) return undefined;
  if (res !== false) return `rule ${JSON.stringify(rule.rule)} did not return a bool (got ${String(res)})`;
  if (rule.messageExpression) {
    const mp = compile(rule.messageExpression);
    if (!(mp instanceof Error)) {
      try {
        const m = mp(ctx);
        if (typeof m === 'string' && m.length > 0) return m;
      } catch {
        // fall back to message
      }
    }
  }
  return rule.message ?? `failed rule: ${rule.rule}`;
}

/** Converts JSON to CEL input values, typed by the schema. */
export function toCel(v: unknown, s: JSONSchemaProps | undefined): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') {
    if (s?.type === 'number') return v;
    if ((s?.type === 'integer' || s?.['x-kubernetes-int-or-string'] || s === undefined || !s.type) && Number.isInteger(v)) return BigInt(v);
    return v;
  }
  if (Array.isArray(v)) return v.map((x) => toCel(x, s?.items));
  if (typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      const sub = s?.properties?.[k] ?? (typeof s?.additionalProperties === 'object' ? s.additionalProperties : undefined);
      out[k] = toCel(x, sub);
    }
    return out;
  }
  return v;
}

/**
 * Walks `value` along `schema`, evaluating every `x-kubernetes-validations` rule and checking
 * list-type uniqueness. `old` is the previous object on updates (undefined on create).
 */
export function walkRules(schema: JSONSchemaProps, value: unknown, old: unknown, hasOld: boolean, path: string, out: CelFailure[]): void {
  if (value === undefined || value === null) return;
  const rules = schema['x-kubernetes-validations'];
  if (rules?.length) {
    // Convert once per node, not once per rule.
    const ctx: Record<string, unknown> = { self: toCel(value, schema) };
    if (hasOld) ctx.oldSelf = toCel(old, schema);
    for (const rule of rules) {
      const transition = isTransitionRule(rule.rule) || isTransitionRule(rule.messageExpression ?? '');
      if (transition && !hasOld && !rule.optionalOldSelf) continue;
      const msg = evalRuleIn(rule, ctx);
      if (msg !== undefined) out.push({ path: joinPath(path, rule.fieldPath ?? ''), message: msg, rule: rule.rule });
    }
  }
  if (Array.isArray(value)) {
    const items = schema.items;
    const listType = schema['x-kubernetes-list-type'];
    const keys = schema['x-kubernetes-list-map-keys'] ?? [];
    if (listType === 'set') {
      const seen = new Set<string>();
      value.forEach((x, i) => {
        const k = stableJson(x);
        if (seen.has(k)) out.push({ path: `${path}[${i}]`, message: `Duplicate value: ${JSON.stringify(x)}`, rule: 'x-kubernetes-list-type: set' });
        seen.add(k);
      });
    }
    let oldByKey: Map<string, unknown> | undefined;
    if (listType === 'map') {
      const seen = new Set<string>();
      value.forEach((x, i) => {
        const k = mapKey(x, keys, items);
        if (seen.has(k)) out.push({ path: `${path}[${i}]`, message: `Duplicate value: ${k}`, rule: `x-kubernetes-list-map-keys: ${keys.join(',')}` });
        seen.add(k);
      });
      if (hasOld && Array.isArray(old)) oldByKey = new Map(old.map((x) => [mapKey(x, keys, items), x]));
    }
    if (!items) return;
    value.forEach((x, i) => {
      const k = oldByKey ? mapKey(x, keys, items) : undefined;
      const o = k !== undefined ? oldByKey!.get(k) : undefined;
      walkRules(items, x, o, k !== undefined && oldByKey!.has(k), `${path}[${i}]`, out);
    });
    return;
  }
  if (typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const oldObj = hasOld && old && typeof old === 'object' && !Array.isArray(old) ? (old as Record<string, unknown>) : undefined;
    if (schema.properties) {
      for (const [k, sub] of Object.entries(schema.properties)) {
        if (!(k in obj)) continue;
        walkRules(sub, obj[k], oldObj?.[k], !!oldObj && k in oldObj, joinPath(path, k), out);
      }
    }
    if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
      const sub = schema.additionalProperties;
      for (const [k, v] of Object.entries(obj)) {
        if (schema.properties && k in schema.properties) continue;
        walkRules(sub, v, oldObj?.[k], !!oldObj && k in oldObj, joinPath(path, k), out);
      }
    }
  }
}

function mapKey(x: unknown, keys: readonly string[], items: JSONSchemaProps | undefined): string {
  if (!x || typeof x !== 'object') return stableJson(x);
  // Missing keys take their schema default (the API server defaults before comparing).
  return JSON.stringify(keys.map((k) => (x as Record<string, unknown>)[k] ?? items?.properties?.[k]?.default ?? null));
}

function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** Joins a field path the way Kubernetes prints it (`spec.items[0].name`). */
export function joinPath(base: string, key: string): string {
  if (!key) return base;
  if (key.startsWith('.') || key.startsWith('[')) return base + key;
  const seg = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? key : `[${JSON.stringify(key)}]`;
  if (!base) return seg.startsWith('[') ? seg : seg;
  return seg.startsWith('[') ? base + seg : `${base}.${seg}`;
}
