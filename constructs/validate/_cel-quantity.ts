/**
 * The Kubernetes CEL quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go, Kubernetes
 * 1.35): `quantity`, `isQuantity`, `isInteger`, `asInteger`, `asApproximateFloat`, `sign`, `add`,
 * `sub`, `compareTo`, `isGreaterThan`, `isLessThan`.
 *
 * Parsing follows resource.ParseQuantity, including what it keeps of the representation, because
 * `isInteger()`/`asInteger()` depend on it: a quantity is either a small "int64 amount"
 * (value × 10^scale, e.g. `1500m` = 1500 × 10^-3, `1k` = 1 × 10^3) or an arbitrary-precision
 * decimal (too many digits, fractional binary suffixes such as `1.5Gi`, below nano precision,
 * int64 overflow); only int64 amounts with scale ≥ 0 convert to an integer, so
 * `quantity('1000m').isInteger()` is false, as on the API server. Arbitrary-precision values are
 * rounded up (away from zero) to nano units and binary-suffixed ones capped at 2^63-1, like
 * upstream. Comparisons and equality are exact (bigint arithmetic).
 */
import { celFunc, celMethod, CelScalar, type CelFunc } from '@bufbuild/cel';
import { QUANTITY } from './_cel-opaque.js';

const MAX_I64 = (1n << 63n) - 1n;
const MIN_I64 = -(1n << 63n);
const fitsI64 = (v: bigint) => v >= MIN_I64 && v <= MAX_I64;

/** value × 10^scale, value within int64 (upstream int64Amount). */
interface IntAmount {
  readonly kind: 'int';
  readonly value: bigint;
  readonly scale: number;
}
/** unscaled × 10^-scale (upstream inf.Dec; note the opposite sign of `scale`). */
interface DecAmount {
  readonly kind: 'dec';
  readonly unscaled: bigint;
  readonly scale: number;
}
export type Quantity = IntAmount | DecAmount;

const ERR_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const ERR_NUMERIC = 'unable to parse numeric part of quantity';
const ERR_SUFFIX = "unable to parse quantity's suffix";

/** Exponents beyond this are refused (upstream would allocate numbers of that many digits). */
const MAX_SHIFT = 100_000;
const pow10 = (n: number) => {
  if (n > MAX_SHIFT) throw new Error('quantity exponent out of the supported range');
  return 10n ** BigInt(n);
};
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

interface Scanned {
  positive: boolean;
  value: string;
  num: string;
  denom: string;
  suffix: string;
}

/** The number/suffix scanner of upstream parseQuantityString. */
function scan(str: string): Scanned {
  const r: Scanned = { positive: true, value: '', num: '', denom: '', suffix: '' };
  const end = str.length;
  let pos = 0;
  if (str[0] === '-') {
    r.positive = false;
    pos++;
  } else if (str[0] === '+') pos++;
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) {
    r.num = '0';
    r.value = '0';
    return r;
  }
  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  if (i >= end) {
    r.num = str.slice(pos);
    r.value = str;
    return r;
  }
  r.num = str.slice(pos, i) || '0';
  pos = i;
  if (str[pos] === '.') {
    pos++;
    i = pos;
    while (i < end && isDigit(str[i])) i++;
    r.denom = str.slice(pos, i);
    if (i >= end) {
      r.value = str;
      return r;
    }
    pos = i;
  }
  r.value = str.slice(0, pos);
  const suffixStart = pos;
  while (pos < end && 'eEinumkKMGTP'.includes(str[pos])) pos++;
  if (pos >= end) {
    r.suffix = str.slice(suffixStart);
    return r;
  }
  if (str[pos] === '-' || str[pos] === '+') pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos < end) throw new Error(ERR_FORMAT);
  r.suffix = str.slice(suffixStart);
  return r;
}

const DEC_SUFFIX: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BIN_SUFFIX: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
type Format = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

function interpret(suffix: string): { base: 10 | 2; exponent: number; format: Format } {
  if (Object.hasOwn(DEC_SUFFIX, suffix)) return { base: 10, exponent: DEC_SUFFIX[suffix], format: 'DecimalSI' };
  if (Object.hasOwn(BIN_SUFFIX, suffix)) return { base: 2, exponent: BIN_SUFFIX[suffix], format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    // strconv.ParseInt(s, 10, 64), then truncated to int32
    const m = /^[+-]?[0-9]+$/.exec(suffix.slice(1));
    if (!m) throw new Error(ERR_SUFFIX);
    const v = BigInt(suffix.slice(1));
    if (!fitsI64(v)) throw new Error(ERR_SUFFIX);
    return { base: 10, exponent: Number(BigInt.asIntN(32, v)), format: 'DecimalExponent' };
  }
  throw new Error(ERR_SUFFIX);
}

/** resource.ParseQuantity. Throws the upstream error messages. */
export function parseQuantity(str: string): Quantity {
  if (str.length === 0) throw new Error(ERR_FORMAT);
  if (str === '0') return { kind: 'int', value: 0n, scale: 0 };
  const { positive, value, num, denom, suffix } = scan(str);
  const { base, exponent, format } = interpret(suffix);

  let precision: number;
  let scale = 0;
  let mantissa = 1n;
  if (format === 'BinarySI') {
    if (exponent >= 0 && denom.length === 0) {
      mantissa = 1n << BigInt(exponent);
      precision = 15 - num.length - Math.trunc((exponent * 3) / 10) - 1;
    } else precision = -1;
  } else {
    scale = exponent;
    precision = 18 - (num.length + denom.length);
  }
  if (precision >= 0) {
    scale -= denom.length;
    if (scale >= -9) {
      const shifted = BigInt(num + denom);
      if (!fitsI64(shifted)) throw new Error(ERR_NUMERIC);
      const result = shifted * mantissa;
      if (fitsI64(result)) return { kind: 'int', value: positive ? result : -result, scale };
    }
  }

  // Arbitrary precision (inf.Dec).
  const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?$/.exec(value);
  if (!m || (m[2] + (m[3] ?? '')).length === 0) throw new Error(ERR_NUMERIC);
  let unscaled = BigInt((m[2] || '0') + (m[3] ?? ''));
  let dscale = (m[3] ?? '').length;
  if (m[1] === '-') unscaled = -unscaled;
  if (base === 10) dscale -= exponent;
  else unscaled *= 1n << BigInt(exponent);
  const negative = unscaled < 0n;
  if (negative) unscaled = -unscaled;
  if (unscaled !== 0n) {
    // round up to nano units (scale 9)
    if (dscale <= 9) unscaled *= pow10(9 - dscale);
    else if (dscale - 9 > unscaled.toString().length) unscaled = 1n;
    else {
      const d = pow10(dscale - 9);
      unscaled = (unscaled + d - 1n) / d;
    }
    dscale = 9;
  }
  if (format === 'BinarySI' && cmpRat(unscaled, dscale, MAX_I64, 0) > 0) {
    unscaled = MAX_I64;
    dscale = 0;
  }
  return { kind: 'dec', unscaled: negative ? -unscaled : unscaled, scale: dscale };
}

/** Compares a×10^-as with b×10^-bs. */
function cmpRat(a: bigint, as: number, b: bigint, bs: number): number {
  const sa = a < 0n ? -1 : a > 0n ? 1 : 0;
  const sb = b < 0n ? -1 : b > 0n ? 1 : 0;
  if (sa !== sb || sa === 0) return sa < sb ? -1 : sa > sb ? 1 : 0;
  // same sign, both non-zero: compare magnitudes (number of integer digits) first
  const ma = (a < 0n ? -a : a).toString().length - as;
  const mb = (b < 0n ? -b : b).toString().length - bs;
  if (ma !== mb) return ma < mb ? -sa : sa;
  const s = Math.max(as, bs);
  const x = a * pow10(s - as);
  const y = b * pow10(s - bs);
  return x < y ? -1 : x > y ? 1 : 0;
}

function asDec(q: Quantity): { unscaled: bigint; scale: number } {
  return q.kind === 'dec' ? q : { unscaled: q.value, scale: -q.scale };
}

export function compareQuantities(a: Quantity, b: Quantity): number {
  const x = asDec(a);
  const y = asDec(b);
  return cmpRat(x.unscaled, x.scale, y.unscaled, y.scale);
}

/** The exact value as a normalised string (`<digits>e<exp>`): the CEL equality key. */
export function quantityKey(q: Quantity): string {
  let { unscaled: u, scale: s } = asDec(q);
  if (u === 0n) return '0';
  while (u % 10n === 0n) {
    u /= 10n;
    s--;
  }
  return `${u}e${-s}`;
}

/** Quantity.AsInt64. */
export function quantityAsInt64(q: Quantity): bigint | undefined {
  if (q.kind === 'dec') return undefined;
  if (q.scale === 0) return q.value;
  if (q.scale < 0) return undefined;
  if (q.value === 0n) return 0n;
  if (q.scale > 18) return undefined;
  const v = q.value * pow10(q.scale);
  return fitsI64(v) ? v : undefined;
}

function goPow10(n: number): number {
  // math.Pow10: exact table values for |n| < 32 (positive: multiplied, negative: divided).
  return n >= 0 ? Number(`1e${n}`) : 1 / Number(`1e${-n}`);
}

/** Quantity.AsApproximateFloat64. */
export function quantityAsFloat(q: Quantity): number {
  const [base, exponent] = q.kind === 'dec' ? [Number(q.unscaled), -q.scale] : [Number(q.value), q.scale];
  return exponent === 0 ? base : base * goPow10(exponent);
}

export function quantitySign(q: Quantity): number {
  const v = q.kind === 'dec' ? q.unscaled : q.value;
  return v < 0n ? -1 : v > 0n ? 1 : 0;
}

/** int64Amount.Add; undefined on overflow. */
function addInt(a: IntAmount, b: IntAmount): IntAmount | undefined {
  if (b.value === 0n) return a;
  if (a.value === 0n) return b;
  let value: bigint;
  let scale: number;
  if (a.scale === b.scale) {
    value = a.value + b.value;
    scale = a.scale;
  } else if (Math.abs(a.scale - b.scale) > 18) {
    return undefined; // 10^19 × a non-zero value overflows int64
  } else if (a.scale > b.scale) {
    const c = a.value * pow10(a.scale - b.scale);
    if (!fitsI64(c)) return undefined;
    value = c + b.value;
    scale = b.scale;
  } else {
    const c = b.value * pow10(b.scale - a.scale);
    if (!fitsI64(c)) return undefined;
    value = a.value + c;
    scale = a.scale;
  }
  return fitsI64(value) ? { kind: 'int', value, scale } : undefined;
}

/** Quantity.Add (int64 arithmetic while it fits, else arbitrary precision). */
export function addQuantities(a: Quantity, b: Quantity): Quantity {
  if (a.kind === 'int' && b.kind === 'int') {
    const r = addInt(a, b);
    if (r) return r;
  }
  const x = asDec(a);
  const y = asDec(b);
  const s = Math.max(x.scale, y.scale);
  return { kind: 'dec', unscaled: x.unscaled * pow10(s - x.scale) + y.unscaled * pow10(s - y.scale), scale: s };
}

export function negateQuantity(q: Quantity): Quantity {
  // int64Amount.Sub negates in int64 (MinInt64 stays MinInt64).
  return q.kind === 'int' ? { kind: 'int', value: BigInt.asIntN(64, -q.value), scale: q.scale } : { kind: 'dec', unscaled: -q.unscaled, scale: q.scale };
}

function fromInt(n: bigint): Quantity {
  return { kind: 'int', value: n, scale: 0 };
}

const wrap = (q: Quantity) => QUANTITY.make(quantityKey(q), q);
const Q = (v: unknown) => QUANTITY.get(v) as Quantity;
const QT = QUANTITY.type;
const { STRING, BOOL, INT, DOUBLE } = CelScalar;

export const k8sQuantityFuncs: CelFunc[] = [
  celFunc('quantity', [STRING], QT, (s) => wrap(parseQuantity(s))),
  celFunc('isQuantity', [STRING], BOOL, (s) => {
    try {
      parseQuantity(s);
      return true;
    } catch {
      return false;
    }
  }),
  celMethod('isInteger', QT, [], BOOL, function () {
    return quantityAsInt64(Q(this)) !== undefined;
  }),
  celMethod('asInteger', QT, [], INT, function () {
    const v = quantityAsInt64(Q(this));
    if (v === undefined) throw new Error('cannot convert value to integer');
    return v;
  }),
  celMethod('asApproximateFloat', QT, [], DOUBLE, function () {
    return quantityAsFloat(Q(this));
  }),
  celMethod('sign', QT, [], INT, function () {
    return BigInt(quantitySign(Q(this)));
  }),
  celMethod('compareTo', QT, [QT], INT, function (o) {
    return BigInt(compareQuantities(Q(this), Q(o)));
  }),
  celMethod('isGreaterThan', QT, [QT], BOOL, function (o) {
    return compareQuantities(Q(this), Q(o)) === 1;
  }),
  celMethod('isLessThan', QT, [QT], BOOL, function (o) {
    return compareQuantities(Q(this), Q(o)) === -1;
  }),
  celMethod('add', QT, [QT], QT, function (o) {
    return wrap(addQuantities(Q(this), Q(o)));
  }),
  celMethod('add', QT, [INT], QT, function (n) {
    return wrap(addQuantities(Q(this), fromInt(n)));
  }),
  celMethod('sub', QT, [QT], QT, function (o) {
    return wrap(addQuantities(Q(this), negateQuantity(Q(o))));
  }),
  celMethod('sub', QT, [INT], QT, function (n) {
    return wrap(addQuantities(Q(this), negateQuantity(fromInt(n))));
  }),
];
