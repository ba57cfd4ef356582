/**
 * Opaque CEL values for the Kubernetes libraries (Quantity, URL, IP, CIDR, NamedFormat, optional).
 *
 * @bufbuild/cel only knows scalars, lists, maps and protobuf messages, so each opaque type is a
 * synthetic protobuf message with a single string field holding the value's *equality key*:
 * CEL's `==` compares messages field by field, so two values are equal exactly when their keys
 * are (e.g. a quantity's key is its exact numeric value, so `quantity('1Gi') == quantity('1024Mi')`).
 * The full JavaScript value travels beside the message (a WeakMap keyed by the message object).
 * `type(x)` shows the upstream type names (`kubernetes.Quantity`, `net.IP`, ...).
 */
import { create, createFileRegistry, type DescMessage, type Message } from '@bufbuild/protobuf';
import { reflect, type ReflectMessage } from '@bufbuild/protobuf/reflect';
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type, FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { celFunc, celMethod, CelScalar, objectType, type CelFunc, type CelObjectType, type CelValue } from '@bufbuild/cel';

const FILES: Record<string, string[]> = {
  kubernetes: ['Quantity', 'URL', 'NamedFormat'],
  net: ['IP', 'CIDR'],
  klutch_kit_cel: ['optional_type'],
};

const registry = createFileRegistry(
  create(FileDescriptorSetSchema, {
    file: Object.entries(FILES).map(([pkg, names]) => ({
      name: `${pkg}.proto`,
      package: pkg,
      syntax: 'proto3',
      messageType: names.map((name) => ({
        name,
        field: [{ name: 'key', jsonName: 'key', number: 1, type: FieldDescriptorProto_Type.STRING, label: FieldDescriptorProto_Label.OPTIONAL }],
      })),
    })),
  }),
);

/** One opaque type: its CEL type, a constructor and an accessor for the JavaScript value. */
export interface Opaque<T> {
  readonly type: CelObjectType;
  readonly name: string;
  /** Wraps `value`; values with the same `key` are `==` in CEL. */
  make(key: string, value: T): ReflectMessage;
  /** The JavaScript value of a CEL value of this type (throws on another type). */
  get(v: unknown): T;
  is(v: unknown): boolean;
}

function opaque<T>(typeName: string): Opaque<T> {
  const desc = registry.getMessage(typeName) as DescMessage;
  const values = new WeakMap<Message, T>();
  const type = objectType(desc);
  const is = (v: unknown): v is ReflectMessage => typeof v === 'object' && v !== null && 'desc' in v && (v as ReflectMessage).desc?.typeName === desc.typeName;
  return {
    type,
    name: typeName,
    make(key, value) {
      const m = create(desc, { key } as never) as Message;
      values.set(m, value);
      return reflect(desc, m);
    },
    get(v) {
      const val = is(v) ? values.get(v.message) : undefined;
      if (val === undefined) throw new Error(`no such overload: expected ${typeName}`);
      return val;
    },
    is,
  };
}

export const QUANTITY = opaque<unknown>('kubernetes.Quantity');
export const URL_T = opaque<unknown>('kubernetes.URL');
export const FORMAT = opaque<unknown>('kubernetes.NamedFormat');
export const IP_T = opaque<unknown>('net.IP');
export const CIDR_T = opaque<unknown>('net.CIDR');

/** CEL optional values (`optional_type`), as returned by `format.named()` and `<format>.validate()`. */
interface Optional {
  readonly has: boolean;
  readonly value?: CelValue;
}
const OPT = opaque<Optional>('klutch_kit_cel.optional_type');
let optSeq = 0;
export const OPTIONAL_TYPE = OPT.type;

export function optionalOf(value: unknown): ReflectMessage {
  // Two present optionals are never equal here (their values are not compared); none == none.
  return OPT.make(`some:${++optSeq}`, { has: true, value: value as CelValue });
}
export function optionalNone(): ReflectMessage {
  return OPT.make('none', { has: false });
}

export const optionalFuncs: CelFunc[] = [
  celFunc('optional.of', [CelScalar.DYN], OPT.type, (v) => optionalOf(v)),
  celFunc('optional.none', [], OPT.type, () => optionalNone()),
  celMethod('hasValue', OPT.type, [], CelScalar.BOOL, function () {
    return OPT.get(this).has;
  }),
  celMethod('value', OPT.type, [], CelScalar.DYN, function () {
    const o = OPT.get(this);
    if (!o.has) throw new Error('optional.none() dereference');
    return o.value as never;
  }),
  celMethod('orValue', OPT.type, [CelScalar.DYN], CelScalar.DYN, function (d) {
    const o = OPT.get(this);
    return (o.has ? o.value : d) as never;
  }),
];
