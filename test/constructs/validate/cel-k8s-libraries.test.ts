// The Kubernetes CEL quantity, url, ip, cidr and format libraries (constructs/validate/cel-k8s.ts and
// its _cel-* helpers), evaluated with @bufbuild/cel the way cel.ts evaluates x-kubernetes-validations.
import { describe, expect, it } from '@jest/globals';
import { celEnv, isCelError, parse, plan, type CelEnv } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import type { JSONSchemaProps } from '../../../contract/api/index.js';
import { evalRule, k8sLibraryFuncs, SchemaValidator } from '../../../constructs/validate/index.js';

let env: CelEnv | undefined;
/** Evaluates `expr` (with `self` bound to `self`); throws CEL evaluation errors. */
function ev(expr: string, self?: unknown): unknown {
  env ??= celEnv({ funcs: [...strings, ...k8sLibraryFuncs] });
  const r = (plan(env, parse(expr)) as unknown as (ctx: Record<string, unknown>) => unknown)(self === undefined ? {} : { self });
  if (isCelError(r)) throw r;
  return r;
}
/** The evaluation error's message. */
function err(expr: string): string {
  try {
    ev(expr);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`${expr} did not fail`);
}
const list = (v: unknown) => [...(v as Iterable<unknown>)];

describe('quantity library', () => {
  it('parses decimal SI, binary SI, exponents, milli, signs and fractions exactly', () => {
    const eq: [string, string][] = [
      ['1Gi', '1024Mi'],
      ['1Ki', '1024'],
      ['1k', '1000'],
      ['1M', '1e6'],
      ['1E3', '1k'],
      ['1.5G', '1500M'],
      ['0.5', '500m'],
      ['1500m', '1.5'],
      ['+1', '1'],
      ['-1k', '-1000'],
      ['1n', '0.000000001'],
      ['2u', '2000n'],
      ['1.5Gi', '1536Mi'],
      ['1T', '1000G'],
      ['1P', '1000T'],
      ['1E', '1000P'],
      ['1Ei', '1024Pi'],
      ['0.1n', '1n'], // rounded up to nano units, as upstream
      ['-0.1n', '-1n'],
      ['.5', '500m'],
      ['1.', '1'],
      ['Mi', '0'], // the scanner makes a bare suffix zero (resource.ParseQuantity)
      ['000', '0'],
    ];
    for (const [a, b] of eq) expect([a, b, ev(`quantity('${a}') == quantity('${b}')`)]).toEqual([a, b, true]);
    expect(ev("quantity('1G') == quantity('1Gi')")).toBe(false);
    expect(ev("quantity('12345678901234567890123') == quantity('12345678901234567890122')")).toBe(false);
    expect(ev("type(quantity('1')) == type(quantity('2'))")).toBe(true);
  });

  it('isQuantity and quantity() errors', () => {
    for (const s of ['1.3G', '1.3Gi', '10000k', '200k', '1e3', '1E-3', '-1.5Mi', '0', '5m']) expect([s, ev(`isQuantity('${s}')`)]).toEqual([s, true]);
    for (const s of ['1,3G', '200K', 'Three', '', ' 1', '1 ', '1.1.M', '1+1.0M', '0.1mi', '0.1am', '.5i', '1i', '-3.01e-', '1Mi3']) {
      expect([s, ev(`isQuantity('${s}')`)]).toEqual([s, false]);
    }
    expect(err("quantity('200K')")).toBe("unable to parse quantity's suffix");
    expect(err("quantity('Three')")).toBe("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  });

  it('compareTo, isGreaterThan, isLessThan, sign', () => {
    expect(ev("quantity('200M').compareTo(quantity('0.2G'))")).toBe(0n);
    expect(ev("quantity('50M').compareTo(quantity('50Mi'))")).toBe(-1n);
    expect(ev("quantity('50Mi').compareTo(quantity('50M'))")).toBe(1n);
    expect(ev("quantity('150Mi').isGreaterThan(quantity('100Mi'))")).toBe(true);
    expect(ev("quantity('50Mi').isGreaterThan(quantity('100Mi'))")).toBe(false);
    expect(ev("quantity('50M').isLessThan(quantity('100M'))")).toBe(true);
    expect(ev("quantity('100M').isLessThan(quantity('50M'))")).toBe(false);
    // beyond float precision
    expect(ev("quantity('9007199254740993').compareTo(quantity('9007199254740992'))")).toBe(1n);
    expect(ev("quantity('1000000000000000000001').isGreaterThan(quantity('1Z'.replace('Z', 'E')))")).toBe(true);
    expect(ev("quantity('-1m').sign()")).toBe(-1n);
    expect(ev("quantity('0Gi').sign()")).toBe(0n);
    expect(ev("quantity('3').sign()")).toBe(1n);
  });

  it('isInteger / asInteger follow the int64 representation (1000m is not an integer upstream)', () => {
    expect(ev("quantity('50000000G').isInteger()")).toBe(true);
    expect(ev("quantity('50k').asInteger()")).toBe(50000n);
    expect(ev("quantity('1Gi').asInteger()")).toBe(1073741824n);
    expect(ev("quantity('-2Ki').asInteger()")).toBe(-2048n);
    expect(ev("quantity('1000m').isInteger()")).toBe(false);
    expect(ev("quantity('1.5').isInteger()")).toBe(false);
    expect(ev("quantity('1.5Gi').isInteger()")).toBe(false); // arbitrary-precision representation
    expect(ev("quantity('9999999999999999999999999999999999999G').isInteger()")).toBe(false);
    expect(err("quantity('9999999999999999999999999999999999999G').asInteger()")).toBe('cannot convert value to integer');
    expect(err("quantity('1500m').asInteger()")).toBe('cannot convert value to integer');
    expect(ev("quantity('922337203685477580').asInteger()")).toBe(922337203685477580n);
    expect(ev("quantity('9223372036854775807').isInteger()")).toBe(false); // 19 digits: arbitrary precision upstream too
    expect(ev("quantity('9223372036854775807Ki').asApproximateFloat()")).toBe(2 ** 63); // binary values capped at 2^63-1 (a double rounds it to 2^63)
    expect(ev("quantity('10E').isInteger()")).toBe(false); // 10^19 overflows int64
  });

  it('asApproximateFloat', () => {
    expect(ev("quantity('1.5').asApproximateFloat()")).toBe(1.5);
    expect(ev("quantity('50k').sub(20000).asApproximateFloat() == 30000.0")).toBe(true);
    expect(ev("quantity('1Gi').asApproximateFloat()")).toBe(1073741824);
    expect(ev("quantity('250m').asApproximateFloat()")).toBe(0.25);
    expect(ev("quantity('1.5Gi').asApproximateFloat()")).toBe(1610612736);
  });

  it('add and sub with quantities and ints', () => {
    expect(ev("quantity('50k').add(quantity('20k')) == quantity('70k')")).toBe(true);
    expect(ev("quantity('50k').add(20) == quantity('50020')")).toBe(true);
    expect(ev("quantity('50k').sub(quantity('20k')) == quantity('30k')")).toBe(true);
    expect(ev("quantity('50k').sub(20000) == quantity('30k')")).toBe(true);
    expect(ev("quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')")).toBe(true);
    expect(ev("quantity('1500m').add(quantity('500m')).isInteger()")).toBe(false); // stays in milli units
    expect(ev("quantity('1').add(quantity('1k')).asInteger()")).toBe(1001n);
    expect(ev("quantity('9223372036854775807').add(1).isInteger()")).toBe(false); // overflow → arbitrary precision
    expect(ev("quantity('9223372036854775807').add(1).compareTo(quantity('9223372036854775808'))")).toBe(0n);
  });

  it('realistic CRD rules', () => {
    const rule = "quantity(self.storage).compareTo(quantity('1Gi')) >= 0";
    expect(ev(rule, { storage: '2Gi' })).toBe(true);
    expect(ev(rule, { storage: '1024Mi' })).toBe(true);
    expect(ev(rule, { storage: '1G' })).toBe(false);
    expect(ev("isQuantity(self.cpu) && quantity(self.cpu).isLessThan(quantity('4'))", { cpu: '500m' })).toBe(true);
    expect(ev("isQuantity(self.cpu) && quantity(self.cpu).isLessThan(quantity('4'))", { cpu: 'lots' })).toBe(false);
    expect(ev('quantity(self.limit).compareTo(quantity(self.request)) >= 0', { limit: '1Gi', request: '1000Mi' })).toBe(true);
  });
});

describe('url library', () => {
  it('url() and isURL() accept absolute URIs and absolute paths only (url.ParseRequestURI)', () => {
    for (const s of [
      'https://user:pass@example.com:80/path?query=val#fragment',
      '/absolute-path',
      'http://example.com',
      'mailto:someone@example.com',
      'https://[::1]:8443/x',
      'http://',
      '*',
    ]) {
      expect([s, ev(`isURL('${s}')`)]).toEqual([s, true]);
    }
    for (const s of [
      'https://a:b:c/',
      '../relative-path',
      'example.com',
      '',
      'https://exa mple.com/',
      'http://[::1',
      'http://[1.2.3.4]/',
      'https://x/%zz',
      ':foo',
      'http://a b@x/',
    ]) {
      expect([s, ev(`isURL('${s}')`)]).toEqual([s, false]);
    }
    expect(err("url('../relative-path')")).toBe('URL parse error during conversion from string: parse "../relative-path": invalid URI for request');
    expect(err("url('https://a:b:c/')")).toBe('URL parse error during conversion from string: parse "https://a:b:c/": invalid port ":c" after host');
  });

  it('components', () => {
    expect(ev("url('/path').getScheme()")).toBe('');
    expect(ev("url('HTTPS://example.com/').getScheme()")).toBe('https');
    expect(ev("url('https://example.com:80/').getHost()")).toBe('example.com:80');
    expect(ev("url('https://example.com/').getHost()")).toBe('example.com');
    expect(ev("url('https://[::1]:80/').getHost()")).toBe('[::1]:80');
    expect(ev("url('https://[::1]/').getHost()")).toBe('[::1]');
    expect(ev("url('/path').getHost()")).toBe('');
    expect(ev("url('https://example.com:80/').getHostname()")).toBe('example.com');
    expect(ev("url('https://127.0.0.1:80/').getHostname()")).toBe('127.0.0.1');
    expect(ev("url('https://[::1]:80/').getHostname()")).toBe('::1');
    expect(ev("url('https://example.com:80/').getPort()")).toBe('80');
    expect(ev("url('https://example.com/').getPort()")).toBe('');
    expect(ev("url('https://example.com/path').getEscapedPath()")).toBe('/path');
    expect(ev("url('https://example.com/path with spaces/').getEscapedPath()")).toBe('/path%20with%20spaces/');
    expect(ev("url('https://example.com/a%2Fb').getEscapedPath()")).toBe('/a%2Fb');
    expect(ev("url('https://example.com').getEscapedPath()")).toBe('');
    expect(ev("url('https://example.com/p?k1=a&k2=b&k2=c#f').getQuery() == {'k1': ['a'], 'k2': ['b', 'c']}")).toBe(true);
    expect(ev("url('https://example.com/path?key with spaces=value with spaces').getQuery()['key with spaces'][0]")).toBe('value with spaces');
    expect(ev("url('https://example.com/p?a=1+2&b=%41').getQuery() == {'a': ['1 2'], 'b': ['A']}")).toBe(true);
    expect(ev("size(url('https://example.com/path?').getQuery())")).toBe(0n);
    expect(ev("size(url('https://example.com/path').getQuery())")).toBe(0n);
    expect(ev("url('https://example.com/#frag').getEscapedPath()")).toBe('/');
    expect(ev("url('https://example.com/x') == url('https://example.com/x')")).toBe(true);
    expect(ev("url('HTTPS://example.com/x') == url('https://example.com/x')")).toBe(true);
    expect(ev("url('https://example.com/x') == url('https://example.com/y')")).toBe(false);
  });

  it('realistic CRD rules', () => {
    const rule = "self.endpoint == '' || isURL(self.endpoint)";
    expect(ev(rule, { endpoint: '' })).toBe(true);
    expect(ev(rule, { endpoint: 'https://db.example.com:5432/app' })).toBe(true);
    expect(ev(rule, { endpoint: 'db.example.com' })).toBe(false);
    expect(ev(rule, { endpoint: 'db.example.com:5432' })).toBe(true); // scheme "db.example.com", opaque "5432", as in Go
    const https = "isURL(self.endpoint) && url(self.endpoint).getScheme() == 'https'";
    expect(ev(https, { endpoint: 'https://x' })).toBe(true);
    expect(ev(https, { endpoint: 'http://x' })).toBe(false);
  });
});

describe('ip library', () => {
  it('ip() / isIP(): IPv4 without leading zeros, IPv6, no zones, no IPv4-mapped IPv6', () => {
    for (const s of [
      '127.0.0.1',
      '::1',
      '::',
      '2001:db8::abcd',
      'fe80::1',
      '2001:DB8::ABCD',
      '::1.2.3.4',
      '1:2:3:4:5:6:7:8',
      '1:2:3:4:5:6:1.2.3.4',
      '0.0.0.0',
    ]) {
      expect([s, ev(`isIP('${s}')`)]).toEqual([s, true]);
    }
    for (const s of [
      '127.0.0.256',
      ':::1',
      '01.2.3.4',
      '1.2.3',
      '1.2.3.4.5',
      '::ffff:1.2.3.4',
      'fe80::1%eth0',
      '1::2::3',
      '12345::',
      '1:2:3:4:5:6:7:8:9',
      '1:2:3:4:5:6:7',
      'abc',
      '',
      '1.2.3.4/32',
      '1:2:3:4:5:6:7::8',
    ]) {
      expect([s, ev(`isIP('${s}')`)]).toEqual([s, false]);
    }
    expect(err("ip('::ffff:1.2.3.4')")).toBe('IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed');
    expect(err("ip('fe80::1%eth0')")).toBe('IP address "fe80::1%eth0" with zone value is not allowed');
    expect(err("ip('127.0.0.256')")).toMatch(/^IP Address "127.0.0.256" parse error during conversion from string: /);
  });

  it('ip.isCanonical and string()', () => {
    expect(ev("ip.isCanonical('127.0.0.1')")).toBe(true);
    expect(ev("ip.isCanonical('2001:db8::abcd')")).toBe(true);
    expect(ev("ip.isCanonical('2001:DB8::ABCD')")).toBe(false);
    expect(ev("ip.isCanonical('2001:db8::0:0:0:abcd')")).toBe(false);
    expect(ev("ip.isCanonical('2001:0:0:1:0:0:0:1')")).toBe(false); // longest zero run is compressed
    expect(ev("string(ip('2001:0:0:1:0:0:0:1'))")).toBe('2001:0:0:1::1');
    expect(ev("string(ip('1:0:0:2:0:0:3:4'))")).toBe('1::2:0:0:3:4'); // first of equal runs
    expect(ev("string(ip('1:2:3:4:5:6:0:8'))")).toBe('1:2:3:4:5:6:0:8'); // single zero group stays
    expect(ev("string(ip('::1.2.3.4'))")).toBe('::102:304');
    expect(err("ip.isCanonical('nope')")).toMatch(/parse error during conversion from string/);
  });

  it('family and classification', () => {
    expect(ev("ip('127.0.0.1').family()")).toBe(4n);
    expect(ev("ip('::1').family() == 6")).toBe(true);
    const cases: [string, string, boolean][] = [
      ['0.0.0.0', 'isUnspecified', true],
      ['127.0.0.1', 'isUnspecified', false],
      ['::', 'isUnspecified', true],
      ['::1', 'isUnspecified', false],
      ['127.0.0.1', 'isLoopback', true],
      ['127.255.0.3', 'isLoopback', true],
      ['192.168.0.1', 'isLoopback', false],
      ['::1', 'isLoopback', true],
      ['2001:db8::abcd', 'isLoopback', false],
      ['224.0.0.1', 'isLinkLocalMulticast', true],
      ['224.0.1.1', 'isLinkLocalMulticast', false],
      ['ff02::1', 'isLinkLocalMulticast', true],
      ['fd00::1', 'isLinkLocalMulticast', false],
      ['169.254.169.254', 'isLinkLocalUnicast', true],
      ['192.168.0.1', 'isLinkLocalUnicast', false],
      ['fe80::1', 'isLinkLocalUnicast', true],
      ['fd80::1', 'isLinkLocalUnicast', false],
      ['192.168.0.1', 'isGlobalUnicast', true],
      ['255.255.255.255', 'isGlobalUnicast', false],
      ['0.0.0.0', 'isGlobalUnicast', false],
      ['224.0.0.1', 'isGlobalUnicast', false],
      ['2001:db8::abcd', 'isGlobalUnicast', true],
      ['ff00::1', 'isGlobalUnicast', false],
      ['fe80::1', 'isGlobalUnicast', false],
    ];
    for (const [a, m, want] of cases) expect([a, m, ev(`ip('${a}').${m}()`)]).toEqual([a, m, want]);
  });

  it('equality', () => {
    expect(ev("ip('2001:db8::1') == ip('2001:DB8:0::1')")).toBe(true);
    expect(ev("ip('10.0.0.1') == ip('10.0.0.2')")).toBe(false);
    expect(ev("ip('0.0.0.0') == ip('::')")).toBe(false);
  });
});

describe('cidr library', () => {
  it('cidr() / isCIDR()', () => {
    for (const s of ['192.168.0.0/16', '::1/128', '0.0.0.0/0', '192.168.0.1/24', '2001:db8::/32']) expect([s, ev(`isCIDR('${s}')`)]).toEqual([s, true]);
    for (const s of [
      '192.168.0.0/33',
      '::1/129',
      '192.168.0.0',
      '192.168.0.0/',
      '192.168.0.0/016',
      '192.168.0.0/+8',
      '::ffff:1.2.3.4/120',
      'fe80::1%eth0/64',
      '1.2.3/8',
      'x/8',
    ]) {
      expect([s, ev(`isCIDR('${s}')`)]).toEqual([s, false]);
    }
    expect(err("cidr('192.168.0.0/33')")).toMatch(/^network address parse error during conversion from string: .*prefix length out of range/);
  });

  it('containsIP, containsCIDR, ip, masked, prefixLength', () => {
    expect(ev("cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))")).toBe(true);
    expect(ev("cidr('192.168.0.0/24').containsIP(ip('192.168.1.1'))")).toBe(false);
    expect(ev("cidr('192.168.0.0/24').containsIP('192.168.0.1')")).toBe(true);
    expect(ev("cidr('192.168.0.0/24').containsIP('192.168.1.1')")).toBe(false);
    expect(ev("cidr('0.0.0.0/0').containsIP('::1')")).toBe(false); // other family
    expect(ev("cidr('::/0').containsIP('2001:db8::1')")).toBe(true);
    expect(ev("cidr('192.168.0.0/16').containsCIDR(cidr('192.168.10.0/24'))")).toBe(true);
    expect(ev("cidr('192.168.1.0/24').containsCIDR(cidr('192.168.2.0/24'))")).toBe(false);
    expect(ev("cidr('192.168.0.0/16').containsCIDR('192.168.10.0/24')")).toBe(true);
    expect(ev("cidr('192.168.0.0/24').containsCIDR('192.168.0.0/23')")).toBe(false);
    expect(ev("cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.1/32'))")).toBe(true);
    expect(ev("cidr('2001:db8::/32').containsCIDR('2001:db8::/33')")).toBe(true);
    expect(ev("cidr('2001:db8::/32').containsCIDR('2001:db8::/31')")).toBe(false);
    expect(ev("cidr('192.168.0.1/24').ip() == ip('192.168.0.1')")).toBe(true);
    expect(ev("cidr('::1/128').ip().family()")).toBe(6n);
    expect(ev("cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')")).toBe(true);
    expect(ev("cidr('192.168.0.0/24') == cidr('192.168.0.0/24').masked()")).toBe(true);
    expect(ev("cidr('192.168.0.1/24') == cidr('192.168.0.1/24').masked()")).toBe(false);
    expect(ev("string(cidr('2001:db8:0:0:1::1/64').masked())")).toBe('2001:db8::/64');
    expect(ev("cidr('192.168.0.0/16').prefixLength()")).toBe(16n);
    expect(ev("cidr('::1/128').prefixLength()")).toBe(128n);
    expect(() => ev("cidr('10.0.0.0/8').containsIP('10.0.0.256')")).toThrow();
  });

  it('realistic CRD rules', () => {
    const rule = 'cidr(self.range).containsIP(self.gateway)';
    expect(ev(rule, { range: '10.0.0.0/24', gateway: '10.0.0.1' })).toBe(true);
    expect(ev(rule, { range: '10.0.0.0/24', gateway: '10.0.1.1' })).toBe(false);
    expect(ev('isCIDR(self.range) && cidr(self.range) == cidr(self.range).masked()', { range: '10.0.0.0/8' })).toBe(true);
    expect(ev('isCIDR(self.range) && cidr(self.range) == cidr(self.range).masked()', { range: '10.0.0.1/8' })).toBe(false);
  });
});

describe('format library', () => {
  const valid = (fmt: string, s: string) => ev(`!format.${fmt}().validate(self).hasValue()`, s);

  it('named formats and their messages', () => {
    expect(valid('dns1123Label', 'my-name')).toBe(true);
    expect(valid('dns1123Label', 'My-name')).toBe(false);
    expect(valid('dns1123Label', 'a'.repeat(64))).toBe(false);
    expect(list(ev("format.dns1123Label().validate('a.b').value()"))).toEqual(['must not contain dots']);
    expect(list(ev("format.dns1123Label().validate('-x').value()"))).toEqual([
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ]);
    expect(valid('dns1123Subdomain', 'apiextensions.k8s.io')).toBe(true);
    expect(valid('dns1123Subdomain', 'a..b')).toBe(false);
    expect(valid('dns1035Label', 'my-name')).toBe(true);
    expect(valid('dns1035Label', '1abc')).toBe(false);
    expect(valid('qualifiedName', 'apiextensions.k8s.io/v1beta1')).toBe(true);
    expect(valid('qualifiedName', 'MyName')).toBe(true);
    expect(valid('qualifiedName', '/x')).toBe(false);
    expect(valid('qualifiedName', 'a/b/c')).toBe(false);
    expect(list(ev("format.qualifiedName().validate('/x').value()"))).toEqual(['prefix part must be non-empty']);
    expect(valid('dns1123LabelPrefix', 'my-label-prefix-')).toBe(true);
    expect(valid('dns1123Label', 'my-label-prefix-')).toBe(false);
    expect(valid('dns1123SubdomainPrefix', 'mysubdomain.prefix-')).toBe(true);
    expect(valid('dns1035LabelPrefix', 'my-label-prefix-')).toBe(true);
    expect(valid('labelValue', '')).toBe(true);
    expect(valid('labelValue', 'my_value.1')).toBe(true);
    expect(valid('labelValue', '-x')).toBe(false);
    expect(list(ev("format.labelValue().validate('" + 'x'.repeat(64) + "').value()"))).toEqual(['must be no more than 63 bytes']);
    expect(valid('uri', 'http://example.com')).toBe(true);
    expect(list(ev("format.uri().validate('example.com').value()"))).toEqual(['parse "example.com": invalid URI for request']);
    expect(valid('uuid', '123e4567-e89b-12d3-a456-426614174000')).toBe(true);
    expect(valid('uuid', '123E4567E89B12D3A456426614174000')).toBe(true);
    expect(valid('uuid', '123e4567-e89b-12d3-a456')).toBe(false);
    expect(valid('byte', 'aGVsbG8=')).toBe(true);
    expect(valid('byte', 'ZWxpemFiZXRocG9zZXk')).toBe(false);
    expect(list(ev("format.byte().validate('!').value()"))).toEqual(['invalid base64']);
    expect(valid('date', '2021-01-01')).toBe(true);
    expect(valid('date', '2024-02-29')).toBe(true);
    expect(valid('date', '2023-02-29')).toBe(false);
    expect(valid('date', '2021-13-01')).toBe(false);
    expect(valid('date', '2021-1-01')).toBe(false);
    expect(valid('datetime', '2021-01-01T00:00:00Z')).toBe(true);
    expect(valid('datetime', '2021-01-01t10:20:30.123+02:00')).toBe(true);
    expect(valid('datetime', '2021-01-01T24:00:00Z')).toBe(false);
    expect(valid('datetime', '2021-01-01 00:00:00Z')).toBe(false);
    expect(list(ev("format.datetime().validate('x').value()"))).toEqual(['invalid datetime']);
  });

  it('format.named returns an optional format', () => {
    expect(ev("format.named('dns1123Label').hasValue()")).toBe(true);
    expect(ev("format.named('nope').hasValue()")).toBe(false);
    expect(ev("format.named('dns1123Label').value().validate('ok').hasValue()")).toBe(false);
    expect(ev("format.named('dns1123Label').value() == format.dns1123Label()")).toBe(true);
    expect(ev("format.named('uuid').value() == format.dns1123Label()")).toBe(false);
    expect(ev("format.named('labelValue').value().validate('-').orValue(['fine'])[0]")).toMatch(/^a valid label must be/);
    expect(ev("format.labelValue().validate('ok').orValue(['fine'])[0]")).toBe('fine');
    expect(err("format.named('nope').value()")).toBe('optional.none() dereference');
  });
});

describe('through the validator (x-kubernetes-validations)', () => {
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: {
        type: 'object',
        properties: {
          storage: {
            type: 'string',
            'x-kubernetes-validations': [{ rule: "quantity(self).compareTo(quantity('1Gi')) >= 0", message: 'storage must be at least 1Gi' }],
          },
          endpoint: { type: 'string', 'x-kubernetes-validations': [{ rule: "self == '' || isURL(self)", message: 'endpoint must be a URL' }] },
          network: {
            type: 'object',
            properties: { range: { type: 'string' }, gateway: { type: 'string' } },
            'x-kubernetes-validations': [{ rule: 'cidr(self.range).containsIP(self.gateway)', message: 'gateway must be in range', fieldPath: '.gateway' }],
          },
          name: {
            type: 'string',
            'x-kubernetes-validations': [
              { rule: '!format.dns1123Label().validate(self).hasValue()', messageExpression: "format.dns1123Label().validate(self).value().join('; ')" },
            ],
          },
        },
      },
    },
  };
  const v = new SchemaValidator(schema);
  const obj = (spec: unknown) => ({ apiVersion: 'e.com/v1', kind: 'Db', metadata: { name: 'x' }, spec });
  const msgs = (o: unknown) => v.validate(o).map((e) => `${e.path}: ${e.message}`);

  it('accepts an object that satisfies every rule', () => {
    expect(
      msgs(obj({ storage: '2Gi', endpoint: 'https://db.example.com:5432/app', network: { range: '10.0.0.0/24', gateway: '10.0.0.1' }, name: 'db-1' })),
    ).toEqual([]);
    expect(msgs(obj({ storage: '1024Mi', endpoint: '', network: { range: '::/0', gateway: '::1' } }))).toEqual([]);
  });

  it('reports failed rules with the field path and message', () => {
    expect(msgs(obj({ storage: '1G', endpoint: 'db.example.com', network: { range: '10.0.0.0/24', gateway: '10.0.1.1' }, name: 'Db' }))).toEqual([
      'spec.storage: storage must be at least 1Gi',
      'spec.endpoint: endpoint must be a URL',
      'spec.network.gateway: gateway must be in range',
      "spec.name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ]);
  });

  it('reports evaluation errors (an invalid quantity or CIDR) with the rule and path', () => {
    expect(msgs(obj({ storage: 'lots', network: { range: '10.0.0.0/33', gateway: '10.0.0.1' } }))).toEqual([
      `spec.storage: rule "quantity(self).compareTo(quantity('1Gi')) >= 0" could not be evaluated: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
      expect.stringMatching(
        /^spec\.network\.gateway: rule "cidr\(self\.range\)\.containsIP\(self\.gateway\)" could not be evaluated: network address parse error during conversion from string: .*prefix length out of range$/,
      ),
    ]);
  });

  it('evalRule evaluates the libraries', () => {
    expect(evalRule({ rule: "url(self).getHostname() == 'example.com'" }, 'https://example.com:8443/x', undefined, false, { type: 'string' })).toBeUndefined();
    expect(evalRule({ rule: 'ip(self).family() == 6', message: 'IPv6 only' }, '10.0.0.1', undefined, false, { type: 'string' })).toBe('IPv6 only');
  });
});
