import { describe, expect, it } from '@jest/globals';
import { ConvertFormat, ConvertType, MatchFallbackTo, MatchPattern, StringConversion, Transform } from '../../constructs/crossplane/index.js';
import { ptInputErrors } from './_schema.js';

/** Wraps transforms into a minimal P&T input so that they are validated by the real CRD schema. */
function asInput(...transforms: Transform[]) {
  return {
    apiVersion: 'pt.fn.crossplane.io/v1beta1',
    kind: 'Resources',
    resources: [
      {
        name: 'r',
        patches: [{ type: 'FromCompositeFieldPath', fromFieldPath: 'spec.a', toFieldPath: 'spec.b', transforms: transforms.map((t) => t.toJson()) }],
      },
    ],
  };
}

describe('Transform', () => {
  it('renders every transform kind in the shape of the P&T input CRD', () => {
    const all = [
      Transform.map({ nano: '3Gi', small: '10Gi' }),
      Transform.match({ patterns: [MatchPattern.literal('a', 1), MatchPattern.regexp('^b.*', { x: true })], fallbackValue: 'none' }),
      Transform.match({ patterns: [MatchPattern.literal('a', 'A')], fallbackTo: MatchFallbackTo.INPUT }),
      Transform.stringFormat('%s-creds'),
      Transform.stringConvert(StringConversion.TO_UPPER),
      Transform.stringConvert(StringConversion.TO_LOWER),
      Transform.stringConvert(StringConversion.TO_SHA256),
      Transform.trimPrefix('a9s-postgresql'),
      Transform.trimSuffix('-ssl'),
      Transform.stringRegexp('\\b(\\w+)$'),
      Transform.stringRegexp('^(?P<name>[a-z]+)-(\\d+)$', 2),
      Transform.join(','),
      Transform.replace('-', '_'),
      Transform.convert(ConvertType.INT),
      Transform.convert(ConvertType.INT64, ConvertFormat.QUANTITY),
      Transform.convert(ConvertType.OBJECT, ConvertFormat.JSON),
      Transform.multiply(1024),
      Transform.clampMin(1),
      Transform.clampMax(10),
    ];
    expect(ptInputErrors(asInput(...all))).toEqual([]);
    expect(all.map((t) => t.type)).toEqual(['map', 'match', 'match', ...Array(10).fill('string'), 'convert', 'convert', 'convert', 'math', 'math', 'math']);
  });

  it('produces exactly the fields P&T reads', () => {
    expect(Transform.trimPrefix('a9s-postgresql').toJson()).toEqual({ type: 'string', string: { type: 'TrimPrefix', trim: 'a9s-postgresql' } });
    expect(Transform.stringRegexp('\\b(\\w+)$').toJson()).toEqual({ type: 'string', string: { type: 'Regexp', regexp: { match: '\\b(\\w+)$' } } });
    expect(Transform.stringFormat('%s-creds').toJson()).toEqual({ type: 'string', string: { type: 'Format', fmt: '%s-creds' } });
    expect(Transform.convert(ConvertType.INT).toJson()).toEqual({ type: 'convert', convert: { toType: 'int' } });
    expect(Transform.map({ a: 'b' }).toJson()).toEqual({ type: 'map', map: { a: 'b' } });
    expect(Transform.match({ patterns: [MatchPattern.regexp('^x', 'y')], fallbackValue: null }).toJson()).toEqual({
      type: 'match',
      match: { patterns: [{ type: 'regexp', regexp: '^x', result: 'y' }], fallbackValue: null },
    });
    expect(Transform.multiply(3).toJson()).toEqual({ type: 'math', math: { type: 'Multiply', multiply: 3 } });
  });

  it('the schema check itself rejects a malformed transform', () => {
    const bad = asInput(Transform.multiply(2));
    (bad.resources[0].patches[0].transforms[0] as any).math.type = 'Divide';
    expect(ptInputErrors(bad).join()).toMatch(/allowed values/);
  });

  it('throws on bad arguments, naming the argument and value', () => {
    expect(() => Transform.map({})).toThrow('Transform.map(pairs): {} must be a non-empty object');
    expect(() => Transform.match({ patterns: [] })).toThrow('Transform.match(options).patterns: [] must list at least one MatchPattern');
    expect(() => Transform.match({ patterns: [{ type: 'literal' } as unknown as MatchPattern] })).toThrow('Transform.match(options).patterns[0]');
    expect(() => Transform.match({ patterns: [MatchPattern.literal('a', 1)], fallbackTo: MatchFallbackTo.INPUT, fallbackValue: 2 })).toThrow(
      'fallbackValue: 2 is ignored with fallbackTo Input',
    );
    expect(() => MatchPattern.regexp('(', 1)).toThrow('MatchPattern.regexp(regexp): "(" is not a valid regular expression');
    expect(() => MatchPattern.literal('a', undefined)).toThrow('MatchPattern.result: undefined must be set');
    expect(() => Transform.stringFormat('no verb')).toThrow('Transform.stringFormat(fmt): "no verb" has no Go format verb');
    expect(() => Transform.stringConvert('ToCamel' as unknown as StringConversion)).toThrow('Transform.stringConvert(conversion): "ToCamel" must be one of');
    expect(() => Transform.trimPrefix('')).toThrow('Transform.trimPrefix(prefix): "" must be a non-empty string');
    expect(() => Transform.stringRegexp('[a-')).toThrow('Transform.stringRegexp(match): "[a-"');
    expect(() => Transform.stringRegexp('a', -1)).toThrow('Transform.stringRegexp(group): -1 must be an integer >= 0');
    expect(() => Transform.convert('decimal' as unknown as ConvertType)).toThrow('Transform.convert(toType): "decimal" must be one of');
    expect(() => Transform.convert(ConvertType.OBJECT)).toThrow('Transform.convert(format): undefined must be "json" to convert to object');
    expect(() => Transform.convert(ConvertType.STRING, ConvertFormat.JSON)).toThrow(
      'Transform.convert(format): "json" only converts to object or array, not to string',
    );
    expect(() => Transform.convert(ConvertType.BOOL, ConvertFormat.QUANTITY)).toThrow('"quantity" only converts to int, int64 or float64, not to bool');
    expect(() => Transform.multiply(1.5)).toThrow('Transform.multiply(factor): 1.5 must be an integer');
    expect(() => Transform.replace('', 'x')).toThrow('Transform.replace(search): ""');
  });

  it('accepts RE2 inline flags and named groups', () => {
    expect(() => Transform.stringRegexp('(?i)^abc$')).not.toThrow();
    expect(() => MatchPattern.regexp('(?P<x>a)', 1)).not.toThrow();
  });
});
