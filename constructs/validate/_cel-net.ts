/**
 * The Kubernetes CEL ip, cidr and url libraries (k8s.io/apiserver/pkg/cel/library: ip.go, cidr.go,
 * urls.go, Kubernetes 1.35).
 *
 * - IP addresses are parsed like Go's netip.ParseAddr (no leading zeros in IPv4 octets, at most
 *   4 hex digits per IPv6 group, one `::`, embedded IPv4 only in the last 32 bits); zones and
 *   IPv4-mapped IPv6 addresses are rejected, as upstream. `string(ip)` and `ip.isCanonical` use
 *   netip's canonical form (lowercase hex, longest run of ≥2 zero groups as `::`).
 * - CIDRs are parsed like netip.ParsePrefix (host bits may be set: `cidr('10.0.0.1/8')` is valid).
 * - URLs are checked like Go's url.ParseRequestURI (absolute URI or absolute path) and split like
 *   url.Parse, on the UTF-8 bytes of the string as Go does.
 */
import { celFunc, celMethod, CelScalar, listType, mapType, type CelFunc } from '@bufbuild/cel';
import { CIDR_T, IP_T, URL_T } from './_cel-opaque.js';

// ---------------------------------------------------------------- IP addresses

export interface IPAddr {
  /** 32 for IPv4, 128 for IPv6. */
  readonly bits: 32 | 128;
  readonly value: bigint;
}

class ParseAddrError extends Error {
  constructor(input: string, msg: string) {
    super(`ParseAddr(${JSON.stringify(input)}): ${msg}`);
  }
}

function parseIPv4Fields(input: string, s: string): bigint {
  const fields = s.split('.');
  if (fields.length !== 4) throw new ParseAddrError(input, fields.length < 4 ? 'IPv4 address too short' : 'IPv4 address too long');
  let v = 0n;
  for (const f of fields) {
    if (f.length === 0) throw new ParseAddrError(input, 'IPv4 field must have at least one digit');
    if (!/^[0-9]+$/.test(f)) throw new ParseAddrError(input, 'unexpected character');
    if (f.length > 1 && f[0] === '0') throw new ParseAddrError(input, 'IPv4 field has octet with leading zero');
    const n = Number(f);
    if (n > 255) throw new ParseAddrError(input, 'IPv4 field has value >255');
    v = (v << 8n) | BigInt(n);
  }
  return v;
}

function parseIPv6(input: string): { addr: IPAddr; zone: string } {
  let s = input;
  let zone = '';
  const pct = s.indexOf('%');
  if (pct !== -1) {
    zone = s.slice(pct + 1);
    s = s.slice(0, pct);
    if (zone === '') throw new ParseAddrError(input, 'zone must be a non-empty string');
  }
  const groups: number[] = []; // 16-bit groups
  let ellipsis = -1; // index in groups
  if (s.startsWith('::')) {
    ellipsis = 0;
    s = s.slice(2);
    if (s.length === 0) return { addr: { bits: 128, value: 0n }, zone };
  }
  while (groups.length < 8) {
    const m = /^[0-9a-fA-F]*/.exec(s)![0];
    if (m.length > 4) throw new ParseAddrError(input, 'each group must have 4 or less digits');
    if (m.length === 0) throw new ParseAddrError(input, 'each colon-separated field must have at least one digit');
    if (s[m.length] === '.') {
      if (ellipsis < 0 && groups.length !== 6) throw new ParseAddrError(input, 'embedded IPv4 address must replace the final 2 fields of the address');
      if (groups.length + 2 > 8) throw new ParseAddrError(input, 'too many hex fields to fit an embedded IPv4 at the end of the address');
      const v4 = parseIPv4Fields(input, s);
      groups.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      s = '';
      break;
    }
    groups.push(parseInt(m, 16));
    s = s.slice(m.length);
    if (s.length === 0) break;
    if (s[0] !== ':') throw new ParseAddrError(input, 'unexpected character, want colon');
    if (s.length === 1) throw new ParseAddrError(input, 'colon must be followed by more characters');
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) throw new ParseAddrError(input, 'multiple :: in address');
      ellipsis = groups.length;
      s = s.slice(1);
      if (s.length === 0) break;
    }
  }
  if (s.length !== 0) throw new ParseAddrError(input, 'trailing garbage after address');
  if (groups.length < 8) {
    if (ellipsis < 0) throw new ParseAddrError(input, 'address string too short');
    groups.splice(ellipsis, 0, ...new Array<number>(8 - groups.length).fill(0));
  } else if (ellipsis >= 0) throw new ParseAddrError(input, 'the :: must expand to at least one field of zeros');
  return { addr: { bits: 128, value: groups.reduce((a, g) => (a << 16n) | BigInt(g), 0n) }, zone };
}

/** netip.ParseAddr: the address and its zone. */
function netipParseAddr(s: string): { addr: IPAddr; zone: string } {
  for (const c of s) {
    if (c === '.') return { addr: { bits: 32, value: parseIPv4Fields(s, s) }, zone: '' };
    if (c === ':') return parseIPv6(s);
    if (c === '%') throw new ParseAddrError(s, 'missing IPv6 address');
  }
  throw new ParseAddrError(s, 'unable to parse IP');
}

const is4In6 = (a: IPAddr) => a.bits === 128 && a.value >> 32n === 0xffffn;

/** The ip library's parseIPAddr: netip.ParseAddr without zones and IPv4-mapped IPv6 addresses. */
export function parseIP(raw: string): IPAddr {
  let r: { addr: IPAddr; zone: string };
  try {
    r = netipParseAddr(raw);
  } catch (e) {
    throw new Error(`IP Address ${JSON.stringify(raw)} parse error during conversion from string: ${(e as Error).message}`, { cause: e });
  }
  if (r.zone !== '') throw new Error(`IP address ${JSON.stringify(raw)} with zone value is not allowed`);
  if (is4In6(r.addr)) throw new Error(`IPv4-mapped IPv6 address ${JSON.stringify(raw)} is not allowed`);
  return r.addr;
}

/** netip.Addr.String(). */
export function ipString(a: IPAddr): string {
  if (a.bits === 32) return [24n, 16n, 8n, 0n].map((sh) => String((a.value >> sh) & 0xffn)).join('.');
  const g = Array.from({ length: 8 }, (_, i) => Number((a.value >> BigInt(112 - 16 * i)) & 0xffffn));
  let zs = -1;
  let ze = -1;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i >= 2 && j - i > ze - zs) {
      zs = i;
      ze = j;
    }
  }
  let out = '';
  for (let i = 0; i < 8; i++) {
    if (i === zs) {
      out += '::';
      i = ze;
      if (i >= 8) break;
    } else if (i > 0) out += ':';
    out += g[i].toString(16);
  }
  return out;
}

const top16 = (a: IPAddr) => Number(a.value >> 112n);
const top8v4 = (a: IPAddr) => Number(a.value >> 24n);

const isLoopback = (a: IPAddr) => (a.bits === 32 ? top8v4(a) === 127 : a.value === 1n);
const isMulticast = (a: IPAddr) => (a.bits === 32 ? (top8v4(a) & 0xf0) === 0xe0 : top16(a) >> 8 === 0xff);
const isLinkLocalUnicast = (a: IPAddr) => (a.bits === 32 ? a.value >> 16n === 0xa9fen : (top16(a) & 0xffc0) === 0xfe80);
const isLinkLocalMulticast = (a: IPAddr) => (a.bits === 32 ? a.value >> 8n === 0xe00000n : (top16(a) & 0xff0f) === 0xff02);
const isGlobalUnicast = (a: IPAddr) => {
  if (a.bits === 32 && (a.value === 0n || a.value === 0xffffffffn)) return false;
  return !(a.bits === 128 && a.value === 0n) && !isLoopback(a) && !isMulticast(a) && !isLinkLocalUnicast(a);
};

// ---------------------------------------------------------------- CIDRs

export interface CIDR {
  readonly addr: IPAddr;
  readonly prefix: number;
}

/** netip.ParsePrefix, then the cidr library's checks. */
export function parseCIDR(raw: string): CIDR {
  const P = 'network address parse error during conversion from string: ';
  const fail = (msg: string, prefixes = 2): never => {
    throw new Error(P.repeat(prefixes) + msg);
  };
  const i = raw.lastIndexOf('/');
  if (i < 0) fail(`netip.ParsePrefix(${JSON.stringify(raw)}): no '/'`);
  let r: { addr: IPAddr; zone: string } | undefined;
  try {
    r = netipParseAddr(raw.slice(0, i));
  } catch (e) {
    fail(`netip.ParsePrefix(${JSON.stringify(raw)}): ${(e as Error).message}`);
  }
  if (r!.zone !== '') fail(`netip.ParsePrefix(${JSON.stringify(raw)}): IPv6 zones cannot be present in a prefix`);
  const bitsStr = raw.slice(i + 1);
  if (!/^(0|[1-9][0-9]*)$/.test(bitsStr)) fail(`netip.ParsePrefix(${JSON.stringify(raw)}): bad bits after slash: ${JSON.stringify(bitsStr)}`);
  const bits = Number(bitsStr);
  if (bits > r!.addr.bits) fail(`netip.ParsePrefix(${JSON.stringify(raw)}): prefix length out of range`);
  if (is4In6(r!.addr)) fail(`IPv4-mapped IPv6 address ${JSON.stringify(raw)} is not allowed`, 1);
  return { addr: r!.addr, prefix: bits };
}

function maskAddr(a: IPAddr, prefix: number): IPAddr {
  const host = BigInt(a.bits - prefix);
  return { bits: a.bits, value: (a.value >> host) << host };
}

const cidrString = (c: CIDR) => `${ipString(c.addr)}/${c.prefix}`;

function cidrContainsIP(c: CIDR, a: IPAddr): boolean {
  return c.addr.bits === a.bits && maskAddr(c.addr, c.prefix).value === maskAddr(a, c.prefix).value;
}

function cidrContainsCIDR(c: CIDR, o: CIDR): boolean {
  // netip.Prefix.Overlaps && c.bits <= o.bits
  return c.addr.bits === o.addr.bits && c.prefix <= o.prefix && maskAddr(c.addr, c.prefix).value === maskAddr(o.addr, c.prefix).value;
}

// ---------------------------------------------------------------- URLs (Go net/url)

/** Byte strings: each char is one byte of the UTF-8 encoding (Go strings are bytes). */
const toBytes = (s: string) => Buffer.from(s, 'utf8').toString('latin1');
const fromBytes = (s: string) => Buffer.from(s, 'latin1').toString('utf8');

type Mode = 'path' | 'host' | 'zone' | 'userPassword' | 'queryComponent' | 'fragment';

function shouldEscape(c: string, mode: Mode): boolean {
  if (/[A-Za-z0-9]/.test(c)) return false;
  if ((mode === 'host' || mode === 'zone') && `!$&'()*+,;=:[]<>"`.includes(c)) return false;
  if ('-_.~'.includes(c)) return false;
  if ('$&+,/:;=?@'.includes(c)) {
    switch (mode) {
      case 'path':
        return c === '?';
      case 'userPassword':
        return c === '@' || c === '/' || c === '?' || c === ':';
      case 'queryComponent':
        return true;
      case 'fragment':
        return false;
    }
  }
  if (mode === 'fragment' && '!()*'.includes(c)) return false;
  return true;
}

const isHex = (c: string | undefined) => c !== undefined && /^[0-9a-fA-F]$/.test(c);

function unescape(s: string, mode: Mode): string {
  let out = '';
  for (let i = 0; i < s.length;) {
    const c = s[i];
    if (c === '%') {
      if (i + 2 >= s.length || !isHex(s[i + 1]) || !isHex(s[i + 2])) throw new Error(`invalid URL escape ${JSON.stringify(s.slice(i, i + 3))}`);
      const v = parseInt(s.slice(i + 1, i + 3), 16);
      if (mode === 'host' && v < 0x80 && s.slice(i, i + 3) !== '%25') throw new Error(`invalid URL escape ${JSON.stringify(s.slice(i, i + 3))}`);
      if (mode === 'zone' && s.slice(i, i + 3) !== '%25' && v !== 0x20 && shouldEscape(String.fromCharCode(v), 'host')) {
        throw new Error(`invalid URL escape ${JSON.stringify(s.slice(i, i + 3))}`);
      }
      out += String.fromCharCode(v);
      i += 3;
    } else {
      if ((mode === 'host' || mode === 'zone') && c.charCodeAt(0) < 0x80 && shouldEscape(c, mode))
        throw new Error(`invalid character ${JSON.stringify(c)} in host name`);
      out += c === '+' && mode === 'queryComponent' ? ' ' : c;
      i++;
    }
  }
  return out;
}

function escape(s: string, mode: Mode): string {
  let out = '';
  for (const c of s) {
    if (!shouldEscape(c, mode)) out += c;
    else if (c === ' ' && mode === 'queryComponent') out += '+';
    else out += '%' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

function validEncoded(s: string, mode: Mode): boolean {
  for (const c of s) {
    if (`!$&'()*+,;=:@[]%`.includes(c)) continue;
    if (shouldEscape(c, mode)) return false;
  }
  return true;
}

const validOptionalPort = (p: string) => p === '' || /^:[0-9]*$/.test(p);

/** A parsed URL (byte strings, like Go's url.URL). */
export interface GoURL {
  scheme: string;
  opaque: string;
  user?: { username: string; password?: string };
  host: string;
  path: string;
  rawPath: string;
  omitHost: boolean;
  forceQuery: boolean;
  rawQuery: string;
  fragment: string;
  rawFragment: string;
}

function parseHost(host: string): string {
  const open = host.lastIndexOf('[');
  if (open > 0) throw new Error('invalid IP-literal');
  if (open === 0) {
    const close = host.lastIndexOf(']');
    if (close < 0) throw new Error("missing ']' in host");
    const colonPort = host.slice(close + 1);
    if (!validOptionalPort(colonPort)) throw new Error(`invalid port ${JSON.stringify(colonPort)} after host`);
    const port = unescape(colonPort, 'host');
    const hostname = host.slice(1, close);
    const z = hostname.indexOf('%25');
    const unescaped = z >= 0 ? unescape(hostname.slice(0, z), 'host') + unescape(hostname.slice(z), 'zone') : unescape(hostname, 'host');
    let a: { addr: IPAddr };
    try {
      a = netipParseAddr(unescaped);
    } catch (e) {
      throw new Error(`invalid host: ${(e as Error).message}`, { cause: e });
    }
    if (a.addr.bits === 32) throw new Error('invalid IP-literal');
    return `[${unescaped}]${port}`;
  }
  const i = host.lastIndexOf(':'); // GODEBUG urlstrictcolons=0 (the API server's go1.25 default)
  if (i !== -1) {
    const colonPort = host.slice(i);
    if (!validOptionalPort(colonPort)) throw new Error(`invalid port ${JSON.stringify(colonPort)} after host`);
  }
  return unescape(host, 'host');
}

function validUserinfo(s: string): boolean {
  return /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(s);
}

function setPath(u: GoURL, p: string): void {
  u.path = unescape(p, 'path');
  u.rawPath = escape(u.path, 'path') === p ? '' : p;
}

/** Go's url.parse on a byte string. */
function goParse(raw: string, viaRequest: boolean): GoURL {
  // eslint-disable-next-line no-control-regex -- Go's net/url rejects exactly these bytes
  if (/[\x00-\x1f\x7f]/.test(raw)) throw new Error('net/url: invalid control character in URL');
  if (raw === '' && viaRequest) throw new Error('empty url');
  const u: GoURL = { scheme: '', opaque: '', host: '', path: '', rawPath: '', omitHost: false, forceQuery: false, rawQuery: '', fragment: '', rawFragment: '' };
  if (raw === '*') {
    u.path = '*';
    return u;
  }
  let rest = raw;
  const sm = /^[A-Za-z][A-Za-z0-9+\-.]*:/.exec(raw);
  if (raw[0] === ':') throw new Error('missing protocol scheme');
  if (sm) {
    u.scheme = sm[0].slice(0, -1).toLowerCase();
    rest = raw.slice(sm[0].length);
  }
  if (rest.endsWith('?') && rest.indexOf('?') === rest.length - 1) {
    u.forceQuery = true;
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf('?');
    if (q >= 0) {
      u.rawQuery = rest.slice(q + 1);
      rest = rest.slice(0, q);
    }
  }
  if (!rest.startsWith('/')) {
    if (u.scheme !== '') {
      u.opaque = rest;
      return u;
    }
    if (viaRequest) throw new Error('invalid URI for request');
    const seg = rest.split('/')[0];
    if (seg.includes(':')) throw new Error('first path segment in URL cannot contain colon');
  }
  if ((u.scheme !== '' || (!viaRequest && !rest.startsWith('///'))) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const slash = authority.indexOf('/');
    if (slash >= 0) {
      rest = authority.slice(slash);
      authority = authority.slice(0, slash);
    }
    const at = authority.lastIndexOf('@');
    u.host = parseHost(at < 0 ? authority : authority.slice(at + 1));
    if (at >= 0) {
      const userinfo = authority.slice(0, at);
      if (!validUserinfo(userinfo)) throw new Error('net/url: invalid userinfo');
      const colon = userinfo.indexOf(':');
      u.user =
        colon < 0
          ? { username: unescape(userinfo, 'userPassword') }
          : { username: unescape(userinfo.slice(0, colon), 'userPassword'), password: unescape(userinfo.slice(colon + 1), 'userPassword') };
    }
  } else if (u.scheme !== '' && rest.startsWith('/')) u.omitHost = true;
  setPath(u, rest);
  return u;
}

function urlError(raw: string, e: unknown): Error {
  return new Error(`parse ${JSON.stringify(fromBytes(raw))}: ${(e as Error).message}`);
}

/** url.ParseRequestURI; throws Go's error text. */
export function parseRequestURI(s: string): GoURL {
  const raw = toBytes(s);
  try {
    return goParse(raw, true);
  } catch (e) {
    throw urlError(raw, e);
  }
}

/** url.Parse. */
export function parseURL(s: string): GoURL {
  const raw = toBytes(s);
  const h = raw.indexOf('#');
  const base = h < 0 ? raw : raw.slice(0, h);
  let u: GoURL;
  try {
    u = goParse(base, false);
  } catch (e) {
    throw urlError(base, e);
  }
  if (h >= 0) {
    const f = raw.slice(h + 1);
    try {
      u.fragment = unescape(f, 'fragment');
    } catch (e) {
      throw urlError(raw, e);
    }
    u.rawFragment = escape(u.fragment, 'fragment') === f ? '' : f;
  }
  return u;
}

function escapedPath(u: GoURL): string {
  if (u.rawPath !== '' && validEncoded(u.rawPath, 'path')) {
    try {
      if (unescape(u.rawPath, 'path') === u.path) return u.rawPath;
    } catch {
      // fall through
    }
  }
  if (u.path === '*') return '*';
  return escape(u.path, 'path');
}

function escapedFragment(u: GoURL): string {
  if (u.rawFragment !== '' && validEncoded(u.rawFragment, 'fragment')) {
    try {
      if (unescape(u.rawFragment, 'fragment') === u.fragment) return u.rawFragment;
    } catch {
      // fall through
    }
  }
  return escape(u.fragment, 'fragment');
}

/** url.URL.String() (byte string). */
function urlString(u: GoURL): string {
  let out = '';
  if (u.scheme) out += u.scheme + ':';
  if (u.opaque) out += u.opaque;
  else {
    if (u.scheme || u.host || u.user) {
      if (!(u.omitHost && !u.host && !u.user)) {
        if (u.host || u.path || u.user) out += '//';
        if (u.user) {
          out += escape(u.user.username, 'userPassword');
          if (u.user.password !== undefined) out += ':' + escape(u.user.password, 'userPassword');
          out += '@';
        }
        if (u.host) out += escape(u.host, 'host');
      }
    }
    const p = escapedPath(u);
    if (p !== '' && p[0] !== '/' && u.host) out += '/';
    if (out === '' && p.split('/')[0].includes(':')) out += './';
    out += p;
  }
  if (u.forceQuery || u.rawQuery) out += '?' + u.rawQuery;
  if (u.fragment) out += '#' + escapedFragment(u);
  return out;
}

function splitHostPort(hostPort: string): [string, string] {
  let host = hostPort;
  let port = '';
  const colon = host.lastIndexOf(':');
  if (colon !== -1 && validOptionalPort(host.slice(colon))) {
    port = host.slice(colon + 1);
    host = host.slice(0, colon);
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return [host, port];
}

/** url.URL.Query(): keys and values unescaped; malformed pairs skipped. */
export function urlQuery(u: GoURL): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const part of u.rawQuery.split('&')) {
    if (part === '' || part.includes(';')) continue;
    const eq = part.indexOf('=');
    let k: string;
    let v: string;
    try {
      k = unescape(eq < 0 ? part : part.slice(0, eq), 'queryComponent');
      v = unescape(eq < 0 ? '' : part.slice(eq + 1), 'queryComponent');
    } catch {
      continue;
    }
    k = fromBytes(k);
    const list = m.get(k) ?? [];
    list.push(fromBytes(v));
    m.set(k, list);
  }
  return m;
}

// ---------------------------------------------------------------- CEL functions

const { STRING, BOOL, INT } = CelScalar;
const IPT = IP_T.type;
const CT = CIDR_T.type;
const UT = URL_T.type;
const ipOf = (v: unknown) => IP_T.get(v) as IPAddr;
const cidrOf = (v: unknown) => CIDR_T.get(v) as CIDR;
const urlOf = (v: unknown) => URL_T.get(v) as GoURL;
const wrapIP = (a: IPAddr) => IP_T.make(`${a.bits}/${a.value}`, a);
const wrapCIDR = (c: CIDR) => CIDR_T.make(`${c.addr.bits}/${c.addr.value}/${c.prefix}`, c);
const succeeds = (f: () => unknown) => {
  try {
    f();
    return true;
  } catch {
    return false;
  }
};

export const k8sIPFuncs: CelFunc[] = [
  celFunc('ip', [STRING], IPT, (s) => wrapIP(parseIP(s))),
  celFunc('isIP', [STRING], BOOL, (s) => succeeds(() => parseIP(s))),
  celFunc('ip.isCanonical', [STRING], BOOL, (s) => ipString(parseIP(s)) === s),
  celFunc('string', [IPT], STRING, (v) => ipString(ipOf(v))),
  celMethod('family', IPT, [], INT, function () {
    return ipOf(this).bits === 32 ? 4n : 6n;
  }),
  celMethod('isUnspecified', IPT, [], BOOL, function () {
    return ipOf(this).value === 0n;
  }),
  celMethod('isLoopback', IPT, [], BOOL, function () {
    return isLoopback(ipOf(this));
  }),
  celMethod('isLinkLocalMulticast', IPT, [], BOOL, function () {
    return isLinkLocalMulticast(ipOf(this));
  }),
  celMethod('isLinkLocalUnicast', IPT, [], BOOL, function () {
    return isLinkLocalUnicast(ipOf(this));
  }),
  celMethod('isGlobalUnicast', IPT, [], BOOL, function () {
    return isGlobalUnicast(ipOf(this));
  }),
];

export const k8sCIDRFuncs: CelFunc[] = [
  celFunc('cidr', [STRING], CT, (s) => wrapCIDR(parseCIDR(s))),
  celFunc('isCIDR', [STRING], BOOL, (s) => succeeds(() => parseCIDR(s))),
  celFunc('string', [CT], STRING, (v) => cidrString(cidrOf(v))),
  celMethod('containsIP', CT, [STRING], BOOL, function (s) {
    return cidrContainsIP(cidrOf(this), parseIP(s));
  }),
  celMethod('containsIP', CT, [IPT], BOOL, function (a) {
    return cidrContainsIP(cidrOf(this), ipOf(a));
  }),
  celMethod('containsCIDR', CT, [STRING], BOOL, function (s) {
    return cidrContainsCIDR(cidrOf(this), parseCIDR(s));
  }),
  celMethod('containsCIDR', CT, [CT], BOOL, function (c) {
    return cidrContainsCIDR(cidrOf(this), cidrOf(c));
  }),
  celMethod('ip', CT, [], IPT, function () {
    return wrapIP(cidrOf(this).addr);
  }),
  celMethod('masked', CT, [], CT, function () {
    const c = cidrOf(this);
    return wrapCIDR({ addr: maskAddr(c.addr, c.prefix), prefix: c.prefix });
  }),
  celMethod('prefixLength', CT, [], INT, function () {
    return BigInt(cidrOf(this).prefix);
  }),
];

/** The url library's url(): ParseRequestURI to check, then Parse. */
export function k8sURL(s: string): GoURL {
  try {
    parseRequestURI(s);
    return parseURL(s);
  } catch (e) {
    throw new Error(`URL parse error during conversion from string: ${(e as Error).message}`, { cause: e });
  }
}

export const k8sURLFuncs: CelFunc[] = [
  celFunc('url', [STRING], UT, (s) => {
    const u = k8sURL(s);
    return URL_T.make(fromBytes(urlString(u)), u);
  }),
  celFunc('isURL', [STRING], BOOL, (s) => succeeds(() => parseRequestURI(s))),
  celMethod('getScheme', UT, [], STRING, function () {
    return fromBytes(urlOf(this).scheme);
  }),
  celMethod('getHost', UT, [], STRING, function () {
    return fromBytes(urlOf(this).host);
  }),
  celMethod('getHostname', UT, [], STRING, function () {
    return fromBytes(splitHostPort(urlOf(this).host)[0]);
  }),
  celMethod('getPort', UT, [], STRING, function () {
    return fromBytes(splitHostPort(urlOf(this).host)[1]);
  }),
  celMethod('getEscapedPath', UT, [], STRING, function () {
    return fromBytes(escapedPath(urlOf(this)));
  }),
  celMethod('getQuery', UT, [], mapType(STRING, listType(STRING)), function () {
    return urlQuery(urlOf(this));
  }),
];
