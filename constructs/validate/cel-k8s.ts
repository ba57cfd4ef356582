/**
 * The Kubernetes CEL libraries the API server adds for `x-kubernetes-validations`
 * (k8s.io/apiserver/pkg/cel/library, Kubernetes 1.35): the lists library (`isSorted`, `sum`,
 * `min`, `max`, `indexOf`, `lastIndexOf`), the regex library (`find`, `findAll`), and — in
 * `_cel-quantity.ts`, `_cel-net.ts`, `_cel-format.ts` — the quantity, url, ip, cidr and format
 * libraries (plus the optional-value methods `hasValue`, `value`, `orValue`, `optional.of`,
 * `optional.none` that the format library's results need). Not provided: the authz, semver and
 * sets libraries, the two-variable comprehensions and the CEL cost budget.
 */
import { celMethod, CelScalar, isCelList, listType, type CelFunc, type CelList, type CelValue } from '@bufbuild/cel';
import { k8sFormatFuncs } from './_cel-format.js';
import { k8sCIDRFuncs, k8sIPFuncs, k8sURLFuncs } from './_cel-net.js';
import { optionalFuncs } from './_cel-opaque.js';
import { k8sQuantityFuncs } from './_cel-quantity.js';

export { k8sCIDRFuncs, k8sFormatFuncs, k8sIPFuncs, k8sQuantityFuncs, k8sURLFuncs };

const DYN = CelScalar.DYN;
const LIST = listType(DYN);

type Scalar = bigint | number | string | boolean;

function items(l: CelList): Scalar[] {
  const out: Scalar[] = [];
  for (const v of l) {
    if (typeof v === 'bigint' || typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') out.push(v);
    else throw new Error(`list element of unsupported type ${typeof v} (lists library works on numbers, strings and bools)`);
  }
  return out;
}

function cmp(a: Scalar, b: Scalar): number {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  throw new Error(`cannot compare ${typeof a} with ${typeof b}`);
}

function eq(a: CelValue, b: CelValue): boolean {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) return a == b; // eslint-disable-line eqeqeq -- a bigint equals a number of the same value
  return a === b;
}

function asList(v: CelValue): CelList {
  if (!isCelList(v)) throw new Error('not a list');
  return v;
}

export const k8sListFuncs: CelFunc[] = [
  celMethod('isSorted', LIST, [], CelScalar.BOOL, function () {
    const xs = items(asList(this));
    for (let i = 1; i < xs.length; i++) if (cmp(xs[i - 1], xs[i]) > 0) return false;
    return true;
  }),
  celMethod('sum', LIST, [], DYN, function () {
    const xs = items(asList(this));
    if (xs.length === 0) return 0n;
    if (xs.every((x) => typeof x === 'bigint')) return (xs as bigint[]).reduce((a, b) => a + b, 0n);
    if (xs.every((x) => typeof x === 'number')) return (xs as number[]).reduce((a, b) => a + b, 0);
    throw new Error('sum() needs a list of ints or of doubles');
  }),
  celMethod('min', LIST, [], DYN, function () {
    const xs = items(asList(this));
    if (xs.length === 0) throw new Error('min called on empty list');
    return xs.reduce((a, b) => (cmp(b, a) < 0 ? b : a));
  }),
  celMethod('max', LIST, [], DYN, function () {
    const xs = items(asList(this));
    if (xs.length === 0) throw new Error('max called on empty list');
    return xs.reduce((a, b) => (cmp(b, a) > 0 ? b : a));
  }),
  celMethod('indexOf', LIST, [DYN], CelScalar.INT, function (x) {
    let i = 0;
    for (const v of asList(this)) {
      if (eq(v, x)) return BigInt(i);
      i++;
    }
    return -1n;
  }),
  celMethod('lastIndexOf', LIST, [DYN], CelScalar.INT, function (x) {
    let found = -1;
    let i = 0;
    for (const v of asList(this)) {
      if (eq(v, x)) found = i;
      i++;
    }
    return BigInt(found);
  }),
];

export const k8sRegexFuncs: CelFunc[] = [
  celMethod('find', CelScalar.STRING, [CelScalar.STRING], CelScalar.STRING, function (re) {
    return new RegExp(re).exec(this)?.[0] ?? '';
  }),
  celMethod('findAll', CelScalar.STRING, [CelScalar.STRING], listType(CelScalar.STRING), function (re) {
    return [...this.matchAll(new RegExp(re, 'g'))].map((m) => m[0]);
  }),
  celMethod('findAll', CelScalar.STRING, [CelScalar.STRING, CelScalar.INT], listType(CelScalar.STRING), function (re, n) {
    const all = [...this.matchAll(new RegExp(re, 'g'))].map((m) => m[0]);
    return n < 0n ? all : all.slice(0, Number(n));
  }),
];

/** Every Kubernetes library function provided here (lists, regex, quantity, url, ip, cidr, format). */
export const k8sLibraryFuncs: CelFunc[] = [
  ...k8sListFuncs,
  ...k8sRegexFuncs,
  ...k8sQuantityFuncs,
  ...k8sURLFuncs,
  ...k8sIPFuncs,
  ...k8sCIDRFuncs,
  ...k8sFormatFuncs,
  ...optionalFuncs,
];
