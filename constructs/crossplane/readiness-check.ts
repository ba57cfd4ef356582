/**
 * `ReadinessCheck`: when function-patch-and-transform counts a composed resource as ready.
 */
import { checkFieldPath, checkInteger, checkNonEmpty, fail } from './_util.js';

/** A P&T readiness check: when the composed resource counts as ready. */
export class ReadinessCheck {
  /** Ready when the field equals the string. */
  public static matchString(fieldPath: string, matchString: string): ReadinessCheck {
    checkFieldPath('ReadinessCheck.matchString(fieldPath)', fieldPath);
    if (typeof matchString !== 'string') fail('ReadinessCheck.matchString(matchString)', matchString, 'must be a string');
    return new ReadinessCheck({ type: 'MatchString', fieldPath, matchString });
  }

  /** Ready when the field equals the integer. */
  public static matchInteger(fieldPath: string, matchInteger: number): ReadinessCheck {
    checkFieldPath('ReadinessCheck.matchInteger(fieldPath)', fieldPath);
    return new ReadinessCheck({ type: 'MatchInteger', fieldPath, matchInteger: checkInteger('ReadinessCheck.matchInteger(matchInteger)', matchInteger) });
  }

  /** Ready when the field exists and is not empty. */
  public static nonEmpty(fieldPath: string): ReadinessCheck {
    checkFieldPath('ReadinessCheck.nonEmpty(fieldPath)', fieldPath);
    return new ReadinessCheck({ type: 'NonEmpty', fieldPath });
  }

  /** Ready when the field is `true`. */
  public static matchTrue(fieldPath: string): ReadinessCheck {
    checkFieldPath('ReadinessCheck.matchTrue(fieldPath)', fieldPath);
    return new ReadinessCheck({ type: 'MatchTrue', fieldPath });
  }

  /** Ready when the field is `false`. */
  public static matchFalse(fieldPath: string): ReadinessCheck {
    checkFieldPath('ReadinessCheck.matchFalse(fieldPath)', fieldPath);
    return new ReadinessCheck({ type: 'MatchFalse', fieldPath });
  }

  /** Ready when the status condition `type` has `status` (default `Ready`/`True`). */
  public static matchCondition(type = 'Ready', status = 'True'): ReadinessCheck {
    checkNonEmpty('ReadinessCheck.matchCondition(type)', type);
    if (!['True', 'False', 'Unknown'].includes(status)) fail('ReadinessCheck.matchCondition(status)', status, 'must be True, False or Unknown');
    return new ReadinessCheck({ type: 'MatchCondition', matchCondition: { type, status } });
  }

  /** Always ready. */
  public static none(): ReadinessCheck {
    return new ReadinessCheck({ type: 'None' });
  }

  private constructor(private readonly json: Record<string, unknown>) {}

  /** The check type. */
  public get type(): string {
    return this.json.type as string;
  }

  /** The entry as it appears in the P&T input. */
  public toJson(): Record<string, unknown> {
    return JSON.parse(JSON.stringify(this.json)) as Record<string, unknown>;
  }
}
