/**
 * The Kubernetes CEL format library (k8s.io/apiserver/pkg/cel/library/format.go, Kubernetes
 * 1.35): `format.named(name)` (an optional format), `format.<name>()` and
 * `<format>.validate(string)` (optional.none() when valid, else an optional list of messages, with
 * the upstream message texts). All 13 upstream formats are provided: dns1123Label,
 * dns1123Subdomain, dns1035Label, qualifiedName, dns1123LabelPrefix, dns1123SubdomainPrefix,
 * dns1035LabelPrefix, labelValue, uri, uuid, byte, date, datetime.
 */
import { celFunc, celMethod, CelScalar, type CelFunc } from '@bufbuild/cel';
import { FORMAT, OPTIONAL_TYPE, optionalNone, optionalOf } from './_cel-opaque.js';
import { parseRequestURI } from './_cel-net.js';

const byteLen = (s: string) => Buffer.byteLength(s, 'utf8');

function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

const LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const LABEL_RE = new RegExp(`^${LABEL_FMT}$`);
const LABEL_MSG = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const SUBDOMAIN_FMT = `${LABEL_FMT}(\\.${LABEL_FMT})*`;
const SUBDOMAIN_RE = new RegExp(`^${SUBDOMAIN_FMT}$`);
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const DNS1035_RE = new RegExp(`^${DNS1035_FMT}$`);
const DNS1035_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const KEY_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const KEY_RE = new RegExp(`^${KEY_FMT}$`);
const KEY_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const VALUE_FMT = `(${KEY_FMT})?`;
const VALUE_RE = new RegExp(`^${VALUE_FMT}$`);
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** k8s.io/apimachinery/pkg/util/validation (max length errors in "characters"). */
function dns1123Label(v: string): string[] {
  const errs: string[] = [];
  if (byteLen(v) > 63) errs.push('must be no more than 63 characters');
  if (!LABEL_RE.test(v)) errs.push(SUBDOMAIN_RE.test(v) ? 'must not contain dots' : regexError(LABEL_MSG, LABEL_FMT, 'my-name', '123-abc'));
  return errs;
}
function dns1123Subdomain(v: string, unit = 'characters'): string[] {
  const errs: string[] = [];
  if (byteLen(v) > 253) errs.push(`must be no more than 253 ${unit}`);
  if (!SUBDOMAIN_RE.test(v)) errs.push(regexError(SUBDOMAIN_MSG, SUBDOMAIN_FMT, 'example.com'));
  return errs;
}
function dns1035Label(v: string): string[] {
  const errs: string[] = [];
  if (byteLen(v) > 63) errs.push('must be no more than 63 characters');
  if (!DNS1035_RE.test(v)) errs.push(regexError(DNS1035_MSG, DNS1035_FMT, 'my-name', 'abc-123'));
  return errs;
}
/** k8s.io/apimachinery/pkg/api/validate/content.IsLabelKey (max length errors in "bytes"). */
function qualifiedName(v: string): string[] {
  const errs: string[] = [];
  const parts = v.split('/');
  let name: string;
  if (parts.length === 1) name = parts[0];
  else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else errs.push(...dns1123Subdomain(prefix, 'bytes').map((m) => `prefix part ${m}`));
  } else {
    return [
      `a valid label key ${regexError(KEY_MSG, KEY_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (byteLen(name) > 63) errs.push('name part must be no more than 63 bytes');
  if (!KEY_RE.test(name)) errs.push(`name part ${regexError(KEY_MSG, KEY_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}
function labelValue(v: string): string[] {
  const errs: string[] = [];
  if (byteLen(v) > 63) errs.push('must be no more than 63 bytes');
  if (!VALUE_RE.test(v)) errs.push(regexError(VALUE_MSG, VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

/** apimachinery's maskTrailingDash (for the *Prefix formats, e.g. generateName). */
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? name.slice(0, -2) + 'a' : name;
}

/** strfmt "date": Go time.Parse("2006-01-02", s). */
export function isDate(s: string): boolean {
  const m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1];
  return d <= days;
}

/** strfmt "datetime" (IsDateTime). */
export function isDateTime(str: string): boolean {
  if (str.length < 4) return false;
  const s = str.toLowerCase().split('t');
  if (s.length < 2 || !isDate(s[0])) return false;
  const m = /^([0-9]{2}):([0-9]{2}):([0-9]{2})([^\n][0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/.exec(s[1]);
  if (!m) return false;
  return m[1] <= '23' && m[2] <= '59' && m[3] <= '59';
}

const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;

interface NamedFormat {
  readonly name: string;
  readonly validate: (s: string) => string[];
}

const FORMATS: Record<string, NamedFormat> = {
  dns1123Label: { name: 'DNS1123Label', validate: dns1123Label },
  dns1123Subdomain: { name: 'DNS1123Subdomain', validate: (s) => dns1123Subdomain(s) },
  dns1035Label: { name: 'DNS1035Label', validate: dns1035Label },
  qualifiedName: { name: 'QualifiedName', validate: qualifiedName },
  dns1123LabelPrefix: { name: 'DNS1123LabelPrefix', validate: (s) => dns1123Label(maskTrailingDash(s)) },
  dns1123SubdomainPrefix: { name: 'DNS1123SubdomainPrefix', validate: (s) => dns1123Subdomain(maskTrailingDash(s)) },
  dns1035LabelPrefix: { name: 'DNS1035LabelPrefix', validate: (s) => dns1035Label(maskTrailingDash(s)) },
  labelValue: { name: 'LabelValue', validate: labelValue },
  uri: {
    name: 'URI',
    validate: (s) => {
      try {
        parseRequestURI(s);
        return [];
      } catch (e) {
        return [(e as Error).message];
      }
    },
  },
  uuid: { name: 'uuid', validate: (s) => (UUID_RE.test(s) ? [] : ['does not match the UUID format']) },
  byte: { name: 'byte', validate: (s) => (BASE64_RE.test(s) ? [] : ['invalid base64']) },
  date: { name: 'date', validate: (s) => (isDate(s) ? [] : ['invalid date']) },
  datetime: { name: 'datetime', validate: (s) => (isDateTime(s) ? [] : ['invalid datetime']) },
};

/** Validates `value` against the named format; undefined for an unknown format name. */
export function validateFormat(name: string, value: string): string[] | undefined {
  return Object.hasOwn(FORMATS, name) ? FORMATS[name].validate(value) : undefined;
}

const wrap = (f: NamedFormat) => FORMAT.make(f.name, f);

export const k8sFormatFuncs: CelFunc[] = [
  celFunc('format.named', [CelScalar.STRING], OPTIONAL_TYPE, (name) => (Object.hasOwn(FORMATS, name) ? optionalOf(wrap(FORMATS[name])) : optionalNone())),
  ...Object.entries(FORMATS).map(([key, f]) => celFunc(`format.${key}`, [], FORMAT.type, () => wrap(f))),
  celMethod('validate', FORMAT.type, [CelScalar.STRING], OPTIONAL_TYPE, function (s) {
    const errs = (FORMAT.get(this) as NamedFormat).validate(s);
    return errs.length === 0 ? optionalNone() : optionalOf(errs);
  }),
];
