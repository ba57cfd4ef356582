/**
 * `ConnectionDetail`: what function-patch-and-transform copies from a composed resource into the
 * composite resource's connection Secret.
 */
import { checkFieldPath, fail } from './_util.js';

const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;

function checkKey(prop: string, v: unknown): string {
  if (typeof v !== 'string' || !SECRET_KEY.test(v)) fail(prop, v, 'is not a valid Secret key ([-._a-zA-Z0-9]+)');
  return v;
}

/** A connection detail that P&T copies from a composed resource into the XR's connection secret. */
export class ConnectionDetail {
  /** Copies key `fromKey` (default: `name`) of the composed resource's connection secret. */
  public static fromConnectionSecretKey(name: string, fromKey?: string): ConnectionDetail {
    checkKey('ConnectionDetail.fromConnectionSecretKey(name)', name);
    const key = fromKey === undefined ? name : checkKey('ConnectionDetail.fromConnectionSecretKey(fromKey)', fromKey);
    return new ConnectionDetail(name, { name, type: 'FromConnectionSecretKey', fromConnectionSecretKey: key });
  }

  /** Reads a field of the composed resource (e.g. `status.atProvider.endpoint`). */
  public static fromFieldPath(name: string, fieldPath: string): ConnectionDetail {
    checkKey('ConnectionDetail.fromFieldPath(name)', name);
    checkFieldPath('ConnectionDetail.fromFieldPath(fieldPath)', fieldPath);
    return new ConnectionDetail(name, { name, type: 'FromFieldPath', fromFieldPath: fieldPath });
  }

  /** A fixed value. */
  public static fromValue(name: string, value: string): ConnectionDetail {
    checkKey('ConnectionDetail.fromValue(name)', name);
    if (typeof value !== 'string') fail('ConnectionDetail.fromValue(value)', value, 'must be a string');
    return new ConnectionDetail(name, { name, type: 'FromValue', value });
  }

  private constructor(
    /** The key in the XR's connection secret. */
    public readonly name: string,
    private readonly json: Record<string, unknown>,
  ) {}

  /** The entry as it appears in the P&T input. */
  public toJson(): Record<string, unknown> {
    return { ...this.json };
  }
}
