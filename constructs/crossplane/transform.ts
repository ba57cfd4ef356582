/**
 * `Transform`: the transforms of function-patch-and-transform (map, match, math, string, convert) as
 * values built by static factories.
 */
import { checkInteger, checkNonEmpty, copyJson, fail, isPlainObject } from './_util.js';
import { EnumLike, enumMembers } from '../_enum-like.js';

/** `string` transform `Convert` operations (enum-like: static instances). */
export class StringConversion extends EnumLike {
  public static readonly TO_UPPER = new StringConversion('ToUpper');
  public static readonly TO_LOWER = new StringConversion('ToLower');
  public static readonly TO_BASE64 = new StringConversion('ToBase64');
  public static readonly FROM_BASE64 = new StringConversion('FromBase64');
  public static readonly TO_JSON = new StringConversion('ToJson');
  public static readonly TO_SHA1 = new StringConversion('ToSha1');
  public static readonly TO_SHA256 = new StringConversion('ToSha256');
  public static readonly TO_SHA512 = new StringConversion('ToSha512');
  public static readonly TO_ADLER32 = new StringConversion('ToAdler32');

  /** Every instance, in declaration order. */
  public static get all(): readonly StringConversion[] {
    return enumMembers(StringConversion);
  }

  private constructor(
    /** The `string.convert` value in the P&T input, e.g. `ToUpper`. */
    value: string,
  ) {
    super(value);
  }
}

/** Target types of a `convert` transform (enum-like: static instances). */
export class ConvertType extends EnumLike {
  public static readonly STRING = new ConvertType('string');
  public static readonly INT = new ConvertType('int');
  public static readonly INT64 = new ConvertType('int64');
  public static readonly BOOL = new ConvertType('bool');
  public static readonly FLOAT64 = new ConvertType('float64');
  public static readonly OBJECT = new ConvertType('object');
  public static readonly ARRAY = new ConvertType('array');

  /** Every instance, in declaration order. */
  public static get all(): readonly ConvertType[] {
    return enumMembers(ConvertType);
  }

  private constructor(
    /** The `convert.toType` value in the P&T input, e.g. `int64`. */
    value: string,
  ) {
    super(value);
  }
}

/** Input formats of a `convert` transform (enum-like: static instances). */
export class ConvertFormat extends EnumLike {
  public static readonly NONE = new ConvertFormat('none');
  /** A Kubernetes quantity such as `10Gi` (to int, int64 or float64). */
  public static readonly QUANTITY = new ConvertFormat('quantity');
  /** A JSON document (to object or array). */
  public static readonly JSON = new ConvertFormat('json');

  /** Every instance, in declaration order. */
  public static get all(): readonly ConvertFormat[] {
    return enumMembers(ConvertFormat);
  }

  private constructor(
    /** The `convert.format` value in the P&T input, e.g. `quantity`. */
    value: string,
  ) {
    super(value);
  }
}

/** What a `match` transform returns when no pattern matches (enum-like: static instances). */
export class MatchFallbackTo extends EnumLike {
  /** Return `fallbackValue`. */
  public static readonly VALUE = new MatchFallbackTo('Value');
  /** Return the input unchanged. */
  public static readonly INPUT = new MatchFallbackTo('Input');

  /** Every instance, in declaration order. */
  public static get all(): readonly MatchFallbackTo[] {
    return enumMembers(MatchFallbackTo);
  }

  private constructor(
    /** The `match.fallbackTo` value in the P&T input. */
    value: string,
  ) {
    super(value);
  }
}

/** One pattern of a `match` transform. */
export class MatchPattern {
  /** Matches when the input equals `literal`. */
  public static literal(literal: string, result: unknown): MatchPattern {
    if (typeof literal !== 'string') fail('MatchPattern.literal(literal)', literal, 'must be a string');
    return new MatchPattern({ type: 'literal', literal, result: copyJson(result) as unknown });
  }

  /** Matches when the input matches the regular expression (RE2 syntax). */
  public static regexp(regexp: string, result: unknown): MatchPattern {
    checkNonEmpty('MatchPattern.regexp(regexp)', regexp);
    checkRegexp('MatchPattern.regexp(regexp)', regexp);
    return new MatchPattern({ type: 'regexp', regexp, result: copyJson(result) as unknown });
  }

  private constructor(private readonly json: Record<string, unknown>) {
    if (json.result === undefined) fail('MatchPattern.result', json.result, 'must be set (any JSON value, null included)');
  }

  /** @internal */
  public _toJson(): Record<string, unknown> {
    return copyJson(this.json);
  }
}

/** Options of a `match` transform. */
export interface MatchOptions {
  /** The patterns, tried in order. */
  readonly patterns: MatchPattern[];
  /** Returned when nothing matches (with fallbackTo Value). @default - none (null) */
  readonly fallbackValue?: unknown;
  /** @default MatchFallbackTo.VALUE */
  readonly fallbackTo?: MatchFallbackTo;
}

/**
 * A function-patch-and-transform transform (`map`, `match`, `math`, `string`, `convert`).
 */
export class Transform {
  /** Maps input values to output values (`map` transform). */
  public static map(pairs: Record<string, unknown>): Transform {
    if (!isPlainObject(pairs) || Object.keys(pairs).length === 0) fail('Transform.map(pairs)', pairs, 'must be a non-empty object of input → output');
    return new Transform('map', { type: 'map', map: copyJson(pairs) });
  }

  /** Matches the input against literal or regexp patterns (`match` transform). */
  public static match(options: MatchOptions): Transform {
    if (!isPlainObject(options) || !Array.isArray(options.patterns) || options.patterns.length === 0) {
      fail('Transform.match(options).patterns', isPlainObject(options) ? options.patterns : options, 'must list at least one MatchPattern');
    }
    options.patterns.forEach((p, i) => {
      if (!(p instanceof MatchPattern)) fail(`Transform.match(options).patterns[${i}]`, p, 'must be made with MatchPattern.literal() or MatchPattern.regexp()');
    });
    if (options.fallbackTo !== undefined && !(options.fallbackTo instanceof MatchFallbackTo)) {
      fail('Transform.match(options).fallbackTo', options.fallbackTo, 'must be Value or Input');
    }
    if (options.fallbackTo === MatchFallbackTo.INPUT && options.fallbackValue !== undefined) {
      fail('Transform.match(options).fallbackValue', options.fallbackValue, 'is ignored with fallbackTo Input; drop one of them');
    }
    const match: Record<string, unknown> = { patterns: options.patterns.map((p) => p._toJson()) };
    if (options.fallbackValue !== undefined) match.fallbackValue = copyJson(options.fallbackValue);
    if (options.fallbackTo !== undefined) match.fallbackTo = options.fallbackTo.value;
    return new Transform('match', { type: 'match', match });
  }

  /** Formats the input with a Go format string such as `%s-db` (`string` Format). */
  public static stringFormat(fmt: string): Transform {
    checkNonEmpty('Transform.stringFormat(fmt)', fmt);
    if (!/%[-+# 0-9.]*[vTtbcdoOqxXUeEfFgGsp]/.test(fmt)) fail('Transform.stringFormat(fmt)', fmt, 'has no Go format verb (e.g. %s, %d, %v)');
    return new Transform('string', { type: 'string', string: { type: 'Format', fmt } });
  }

  /** Converts the string (`string` Convert), e.g. StringConversion.TO_UPPER. */
  public static stringConvert(conversion: StringConversion): Transform {
    if (!(conversion instanceof StringConversion)) {
      fail('Transform.stringConvert(conversion)', conversion, `must be one of ${StringConversion.all.join(', ')}`);
    }
    return new Transform('string', { type: 'string', string: { type: 'Convert', convert: conversion.value } });
  }

  /** Removes a leading prefix (`string` TrimPrefix). */
  public static trimPrefix(prefix: string): Transform {
    checkNonEmpty('Transform.trimPrefix(prefix)', prefix);
    return new Transform('string', { type: 'string', string: { type: 'TrimPrefix', trim: prefix } });
  }

  /** Removes a trailing suffix (`string` TrimSuffix). */
  public static trimSuffix(suffix: string): Transform {
    checkNonEmpty('Transform.trimSuffix(suffix)', suffix);
    return new Transform('string', { type: 'string', string: { type: 'TrimSuffix', trim: suffix } });
  }

  /** Extracts a regexp match or capture group (`string` Regexp). */
  public static stringRegexp(match: string, group?: number): Transform {
    checkNonEmpty('Transform.stringRegexp(match)', match);
    checkRegexp('Transform.stringRegexp(match)', match);
    const regexp: Record<string, unknown> = { match };
    if (group !== undefined) regexp.group = checkInteger('Transform.stringRegexp(group)', group, 0);
    return new Transform('string', { type: 'string', string: { type: 'Regexp', regexp } });
  }

  /** Joins an array input with a separator (`string` Join). */
  public static join(separator: string): Transform {
    if (typeof separator !== 'string') fail('Transform.join(separator)', separator, 'must be a string');
    return new Transform('string', { type: 'string', string: { type: 'Join', join: { separator } } });
  }

  /** Replaces every occurrence of `search` (`string` Replace). */
  public static replace(search: string, replace: string): Transform {
    checkNonEmpty('Transform.replace(search)', search);
    if (typeof replace !== 'string') fail('Transform.replace(replace)', replace, 'must be a string');
    return new Transform('string', { type: 'string', string: { type: 'Replace', replace: { search, replace } } });
  }

  /** Converts the value to another type (`convert` transform). */
  public static convert(toType: ConvertType, format?: ConvertFormat): Transform {
    if (!(toType instanceof ConvertType)) fail('Transform.convert(toType)', toType, `must be one of ${ConvertType.all.join(', ')}`);
    if (format !== undefined && !(format instanceof ConvertFormat)) fail('Transform.convert(format)', format, `must be one of ${ConvertFormat.all.join(', ')}`);
    const structured = toType === ConvertType.OBJECT || toType === ConvertType.ARRAY;
    if (structured && format !== ConvertFormat.JSON) fail('Transform.convert(format)', format, `must be "json" to convert to ${toType}`);
    if (format === ConvertFormat.JSON && !structured) fail('Transform.convert(format)', format, `only converts to object or array, not to ${toType}`);
    if (format === ConvertFormat.QUANTITY && ![ConvertType.INT, ConvertType.INT64, ConvertType.FLOAT64].includes(toType)) {
      fail('Transform.convert(format)', format, `only converts to int, int64 or float64, not to ${toType}`);
    }
    const convert: Record<string, unknown> = { toType: toType.value };
    if (format !== undefined) convert.format = format.value;
    return new Transform('convert', { type: 'convert', convert });
  }

  /** Multiplies a number (`math` Multiply). */
  public static multiply(factor: number): Transform {
    return new Transform('math', { type: 'math', math: { type: 'Multiply', multiply: checkInteger('Transform.multiply(factor)', factor) } });
  }

  /** Raises a number to at least `min` (`math` ClampMin). */
  public static clampMin(min: number): Transform {
    return new Transform('math', { type: 'math', math: { type: 'ClampMin', clampMin: checkInteger('Transform.clampMin(min)', min) } });
  }

  /** Lowers a number to at most `max` (`math` ClampMax). */
  public static clampMax(max: number): Transform {
    return new Transform('math', { type: 'math', math: { type: 'ClampMax', clampMax: checkInteger('Transform.clampMax(max)', max) } });
  }

  private constructor(
    /** The transform type: map, match, math, string or convert. */
    public readonly type: string,
    private readonly json: Record<string, unknown>,
  ) {}

  /** The transform as it appears in the P&T input. */
  public toJson(): Record<string, unknown> {
    return copyJson(this.json);
  }
}

function checkRegexp(prop: string, re: string): void {
  // RE2 and JavaScript agree on the common subset; named groups differ in syntax.
  const js = re.replace(/\(\?P</g, '(?<').replace(/^\(\?[imsU]+\)/, '');
  try {
    new RegExp(js);
  } catch (e) {
    fail(prop, re, `is not a valid regular expression (${(e as Error).message})`);
  }
}
