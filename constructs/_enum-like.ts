/**
 * The base of klutch-kit's enum-like classes (aws-cdk-lib style: static instances, a private
 * constructor, `instanceof` checks). One copy of what every such class renders: its string value.
 */
export abstract class EnumLike {
  protected constructor(
    /** The value written into manifests. */
    public readonly value: string,
  ) {}

  public toString(): string {
    return this.value;
  }

  /** The value (error messages render it through this). */
  public toJson(): string {
    return this.value;
  }
}

/** Every static instance of an enum-like class, in declaration order. */
export function enumMembers<T extends EnumLike>(cls: { readonly prototype: T }): readonly T[] {
  // A class with a private constructor is no `new` signature for TypeScript: compare prototypes.
  return Object.values(cls).filter((v): v is T => v instanceof EnumLike && Object.getPrototypeOf(v) === cls.prototype);
}
