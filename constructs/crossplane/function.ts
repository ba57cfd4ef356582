/**
 * `Function`: installs a Crossplane composition function package (`function-patch-and-transform` by
 * `Function.patchAndTransform`); `IFunction` names one a pipeline step references.
 */
import { Construct } from 'constructs';
import { checkDnsSubdomain } from './_util.js';
import { PackageBase, RuntimePackageProps } from './package-base.js';

/** Something that names a Crossplane composition function (`functionRef.name`). */
export interface IFunction {
  /** `metadata.name` of the Function object. */
  readonly functionName: string;
}

export interface FunctionProps extends RuntimePackageProps {}

/**
 * The function-patch-and-transform version klutch-kit pins by default: the one the real-Crossplane harness
 * builds (tools/crossplane/function-patch-and-transform/go.mod).
 */
export const PATCH_AND_TRANSFORM_PACKAGE = 'xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform:v0.10.8';
/** The function-auto-ready version klutch-kit pins by default. */
export const AUTO_READY_PACKAGE = 'xpkg.crossplane.io/crossplane-contrib/function-auto-ready:v0.7.0';

/**
 * A Crossplane composition function package (`pkg.crossplane.io/v1 Function`).
 * Its `metadata.name` is what Compositions reference in `functionRef.name`.
 */
export class Function extends PackageBase implements IFunction {
  /** Refers to a Function by name (installed elsewhere). */
  public static fromFunctionName(name: string): IFunction {
    return { functionName: checkDnsSubdomain('Function.fromFunctionName(name)', name) };
  }

  /** function-patch-and-transform, named `function-patch-and-transform` as in Klutch. */
  public static patchAndTransform(scope: Construct, id: string, props: Partial<FunctionProps> = {}): Function {
    return new Function(scope, id, { package: PATCH_AND_TRANSFORM_PACKAGE, ...props });
  }

  /** function-auto-ready, named `function-auto-ready`. */
  public static autoReady(scope: Construct, id: string, props: Partial<FunctionProps> = {}): Function {
    return new Function(scope, id, { package: AUTO_READY_PACKAGE, ...props });
  }

  constructor(scope: Construct, id: string, props: FunctionProps) {
    super(scope, id, 'Function', props, true);
  }

  public get functionName(): string {
    return this.name;
  }
}
