/**
 * `Patch`: the patches of function-patch-and-transform (from/to composite field paths, combines, patch
 * sets) and their policies, as values that render to the step's input.
 */
import { checkDnsLabel, checkFieldPath, checkNonEmpty, fail } from './_util.js';
import { Transform } from './transform.js';

/** Patch types of function-patch-and-transform (enum-like: static instances). */
export class PatchType {
  public static readonly FROM_COMPOSITE_FIELD_PATH = new PatchType('FromCompositeFieldPath');
  public static readonly TO_COMPOSITE_FIELD_PATH = new PatchType('ToCompositeFieldPath');
  public static readonly COMBINE_FROM_COMPOSITE = new PatchType('CombineFromComposite');
  public static readonly COMBINE_TO_COMPOSITE = new PatchType('CombineToComposite');
  public static readonly FROM_ENVIRONMENT_FIELD_PATH = new PatchType('FromEnvironmentFieldPath');
  public static readonly TO_ENVIRONMENT_FIELD_PATH = new PatchType('ToEnvironmentFieldPath');
  public static readonly PATCH_SET = new PatchType('PatchSet');

  private constructor(
    /** The `type` value in the P&T input, e.g. `FromCompositeFieldPath`. */
    public readonly value: string,
  ) {}

  public toString(): string {
    return this.value;
  }
}

/** What happens when the `fromFieldPath` does not exist (enum-like: static instances). */
export class FromFieldPathPolicy {
  /** Skip the patch (P&T's default). */
  public static readonly OPTIONAL = new FromFieldPathPolicy('Optional');
  /** Fail the composition until the field exists. */
  public static readonly REQUIRED = new FromFieldPathPolicy('Required');

  private constructor(
    /** The `policy.fromFieldPath` value in the P&T input. */
    public readonly value: string,
  ) {}

  public toString(): string {
    return this.value;
  }
}

/** How the patched value is merged into `toFieldPath` (enum-like: static instances). */
export class ToFieldPathPolicy {
  public static readonly REPLACE = new ToFieldPathPolicy('Replace');
  public static readonly MERGE_OBJECTS = new ToFieldPathPolicy('MergeObjects');
  public static readonly MERGE_OBJECTS_APPEND_ARRAYS = new ToFieldPathPolicy('MergeObjectsAppendArrays');
  public static readonly FORCE_MERGE_OBJECTS = new ToFieldPathPolicy('ForceMergeObjects');
  public static readonly FORCE_MERGE_OBJECTS_APPEND_ARRAYS = new ToFieldPathPolicy('ForceMergeObjectsAppendArrays');

  private constructor(
    /** The `policy.toFieldPath` value in the P&T input. */
    public readonly value: string,
  ) {}

  public toString(): string {
    return this.value;
  }
}

/** Options shared by all value patches. */
export interface PatchOptions {
  /** Transforms applied in order to the value. @default - none */
  readonly transforms?: Transform[];
  /** @default - P&T's default (Optional) */
  readonly fromFieldPathPolicy?: FromFieldPathPolicy;
  /** @default - P&T's default (Replace) */
  readonly toFieldPathPolicy?: ToFieldPathPolicy;
}

/**
 * A function-patch-and-transform patch. Build it with the static factories, e.g.
 * `Patch.fromCompositeFieldPath('spec.plan', 'spec.forProvider.plan', { transforms: [...] })`.
 */
export class Patch {
  /** Copies a field of the composite resource onto the composed resource. */
  public static fromCompositeFieldPath(fromFieldPath: string, toFieldPath?: string, options: PatchOptions = {}): Patch {
    return Patch.value(PatchType.FROM_COMPOSITE_FIELD_PATH, 'Patch.fromCompositeFieldPath', fromFieldPath, toFieldPath, options);
  }

  /** Copies a field of the (observed) composed resource onto the composite resource. */
  public static toCompositeFieldPath(fromFieldPath: string, toFieldPath?: string, options: PatchOptions = {}): Patch {
    return Patch.value(PatchType.TO_COMPOSITE_FIELD_PATH, 'Patch.toCompositeFieldPath', fromFieldPath, toFieldPath, options);
  }

  /** Copies a field of the in-memory environment onto the composed resource. */
  public static fromEnvironmentFieldPath(fromFieldPath: string, toFieldPath?: string, options: PatchOptions = {}): Patch {
    return Patch.value(PatchType.FROM_ENVIRONMENT_FIELD_PATH, 'Patch.fromEnvironmentFieldPath', fromFieldPath, toFieldPath, options);
  }

  /** Copies a field of the composed resource into the in-memory environment. */
  public static toEnvironmentFieldPath(fromFieldPath: string, toFieldPath?: string, options: PatchOptions = {}): Patch {
    return Patch.value(PatchType.TO_ENVIRONMENT_FIELD_PATH, 'Patch.toEnvironmentFieldPath', fromFieldPath, toFieldPath, options);
  }

  /**
   * Combines several composite fields with a Go format string (strategy `string`) into one
   * field of the composed resource, e.g. `combineFromComposite(['metadata.labels[a]', 'spec.b'], '%s-%s', 'metadata.name')`.
   */
  public static combineFromComposite(variables: string[], fmt: string, toFieldPath: string, options: PatchOptions = {}): Patch {
    return Patch.combine(PatchType.COMBINE_FROM_COMPOSITE, 'Patch.combineFromComposite', variables, fmt, toFieldPath, options);
  }

  /** Combines several composed-resource fields into one field of the composite resource. */
  public static combineToComposite(variables: string[], fmt: string, toFieldPath: string, options: PatchOptions = {}): Patch {
    return Patch.combine(PatchType.COMBINE_TO_COMPOSITE, 'Patch.combineToComposite', variables, fmt, toFieldPath, options);
  }

  /** Applies the patches of a named PatchSet (declared on the same P&T step). */
  public static patchSet(patchSetName: string): Patch {
    checkDnsLabel('Patch.patchSet(patchSetName)', patchSetName);
    return new Patch(PatchType.PATCH_SET, { type: PatchType.PATCH_SET.value, patchSetName });
  }

  private static value(type: PatchType, fn: string, from: string, to: string | undefined, options: PatchOptions): Patch {
    checkFieldPath(`${fn}(fromFieldPath)`, from);
    if (to !== undefined) checkFieldPath(`${fn}(toFieldPath)`, to);
    const json: Record<string, unknown> = { type: type.value, fromFieldPath: from };
    if (to !== undefined) json.toFieldPath = to;
    return new Patch(type, { ...json, ...renderOptions(fn, options) });
  }

  private static combine(type: PatchType, fn: string, variables: string[], fmt: string, to: string, options: PatchOptions): Patch {
    if (!Array.isArray(variables) || variables.length === 0) fail(`${fn}(variables)`, variables, 'must list at least one field path');
    variables.forEach((v, i) => checkFieldPath(`${fn}(variables[${i}])`, v));
    checkNonEmpty(`${fn}(fmt)`, fmt);
    const found = fmt.replace(/%%/g, '').match(/%[-+# 0-9.]*(\[[0-9]+\])?[vTtbcdoOqxXUeEfFgGsp]/g) ?? [];
    const indexed = found.some((v) => v.includes('['));
    const verbs = found.length;
    if (verbs === 0 || (!indexed && verbs !== variables.length)) {
      fail(`${fn}(fmt)`, fmt, `has ${verbs} format verb(s) but ${variables.length} variable(s) are given`);
    }
    checkFieldPath(`${fn}(toFieldPath)`, to);
    return new Patch(type, {
      type: type.value,
      combine: { strategy: 'string', variables: variables.map((fromFieldPath) => ({ fromFieldPath })), string: { fmt } },
      toFieldPath: to,
      ...renderOptions(fn, options),
    });
  }

  private constructor(
    /** The patch type. */
    public readonly type: PatchType,
    private readonly json: Record<string, unknown>,
  ) {}

  /** Name of the referenced PatchSet, for `PatchSet` patches. */
  public get patchSetName(): string | undefined {
    return this.type === PatchType.PATCH_SET ? (this.json.patchSetName as string) : undefined;
  }

  /** The patch as it appears in the P&T input. */
  public toJson(): Record<string, unknown> {
    return JSON.parse(JSON.stringify(this.json)) as Record<string, unknown>;
  }
}

function renderOptions(fn: string, o: PatchOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (o.transforms !== undefined) {
    if (!Array.isArray(o.transforms)) fail(`${fn}(options.transforms)`, o.transforms, 'must be a list of Transform');
    o.transforms.forEach((t, i) => {
      if (!(t instanceof Transform))
        fail(`${fn}(options.transforms[${i}])`, t, 'must be made with a Transform factory (Transform.map(), Transform.stringFormat(), ...)');
    });
    if (o.transforms.length > 0) out.transforms = o.transforms.map((t) => t.toJson());
  }
  const policy: Record<string, unknown> = {};
  if (o.fromFieldPathPolicy !== undefined) {
    if (!(o.fromFieldPathPolicy instanceof FromFieldPathPolicy)) {
      fail(`${fn}(options.fromFieldPathPolicy)`, o.fromFieldPathPolicy, 'must be FromFieldPathPolicy.OPTIONAL or FromFieldPathPolicy.REQUIRED');
    }
    policy.fromFieldPath = o.fromFieldPathPolicy.value;
  }
  if (o.toFieldPathPolicy !== undefined) {
    if (!(o.toFieldPathPolicy instanceof ToFieldPathPolicy)) {
      fail(`${fn}(options.toFieldPathPolicy)`, o.toFieldPathPolicy, 'must be a ToFieldPathPolicy (REPLACE, MERGE_OBJECTS, ...)');
    }
    policy.toFieldPath = o.toFieldPathPolicy.value;
  }
  if (Object.keys(policy).length > 0) out.policy = policy;
  return out;
}
