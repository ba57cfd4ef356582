/**
 * `PatchAndTransformStep`: a function-patch-and-transform pipeline step — its composed resource templates,
 * patches, connection details and readiness checks.
 */
import { checkDnsLabel, checkNonEmpty, copyJson, fail, isPlainObject, show } from './_util.js';
import { ConnectionDetail } from './connection-detail.js';
import { Function, IFunction } from './function.js';
import { Patch, PatchType } from './patch.js';
import { checkCredential, checkStepBasics, FunctionCredential, IPipelineStep, PipelineStepConfig, renderStep } from './pipeline-step.js';
import { ReadinessCheck } from './readiness-check.js';

/** Options of one composed resource template. */
export interface ComposedResourceOptions {
  /**
   * The base object (apiVersion, kind, spec, ...). Omit it to patch a resource that an earlier
   * pipeline step produced under the same name.
   * @default - no base
   */
  readonly base?: Record<string, unknown>;
  /** @default - none */
  readonly patches?: Patch[];
  /** @default - none */
  readonly connectionDetails?: ConnectionDetail[];
  /** @default - P&T's default (the resource's Ready condition) */
  readonly readinessChecks?: ReadinessCheck[];
}

/** A resource template of a PatchAndTransformStep (`resources[]`). Created with `step.addResource()`. */
export class ComposedResource {
  /** The composition resource name (`crossplane.io/composition-resource-name`). */
  public readonly name: string;
  private readonly base?: Record<string, unknown>;
  private readonly patches: Patch[] = [];
  private readonly connectionDetails: ConnectionDetail[] = [];
  private readonly readinessChecks: ReadinessCheck[] = [];

  /** @internal */
  constructor(name: string, options: ComposedResourceOptions) {
    const p = `PatchAndTransformStep.addResource(${show(name)})`;
    this.name = checkNonEmpty(`${p} name`, name);
    if (!isPlainObject(options)) fail(`${p} options`, options, 'must be an object');
    if (options.base !== undefined) {
      const b = options.base;
      if (!isPlainObject(b)) fail(`${p}.base`, b, 'must be an object');
      if (typeof b.apiVersion !== 'string' || b.apiVersion === '') fail(`${p}.base.apiVersion`, b.apiVersion, 'must be set');
      if (typeof b.kind !== 'string' || b.kind === '') fail(`${p}.base.kind`, b.kind, 'must be set');
      this.base = copyJson(b);
    }
    const o: ComposedResourceOptions = options;
    for (const k of ['patches', 'connectionDetails', 'readinessChecks'] as const) {
      if (o[k] !== undefined && !Array.isArray(o[k])) fail(`${p}.${k}`, o[k], 'must be a list');
    }
    this.addPatch(...(o.patches ?? []));
    this.addConnectionDetail(...(o.connectionDetails ?? []));
    this.addReadinessCheck(...(o.readinessChecks ?? []));
  }

  /** Adds patches (applied in order). */
  public addPatch(...patches: Patch[]): void {
    patches.forEach((x, i) => {
      if (!(x instanceof Patch))
        fail(
          `ComposedResource(${show(this.name)}).patches[${this.patches.length + i}]`,
          x,
          'must be made with a Patch factory (Patch.fromCompositeFieldPath(), ...)',
        );
    });
    this.patches.push(...patches);
  }

  /** Adds connection details; keys must be unique within the resource. */
  public addConnectionDetail(...details: ConnectionDetail[]): void {
    for (const d of details) {
      if (!(d instanceof ConnectionDetail)) fail(`ComposedResource(${show(this.name)}).connectionDetails`, d, 'must be made with a ConnectionDetail factory');
      if (this.connectionDetails.some((x) => x.name === d.name)) fail(`ComposedResource(${show(this.name)}).connectionDetails`, d.name, 'is declared twice');
      this.connectionDetails.push(d);
    }
  }

  /** Adds readiness checks (all must pass). */
  public addReadinessCheck(...checks: ReadinessCheck[]): void {
    for (const c of checks) {
      if (!(c instanceof ReadinessCheck)) fail(`ComposedResource(${show(this.name)}).readinessChecks`, c, 'must be made with a ReadinessCheck factory');
      this.readinessChecks.push(c);
    }
    if (this.readinessChecks.length > 1 && this.readinessChecks.some((c) => c.type === 'None')) {
      fail(
        `ComposedResource(${show(this.name)}).readinessChecks`,
        this.readinessChecks.map((c) => c.type),
        'combines None with other checks; None means always ready',
      );
    }
  }

  /** Names of the PatchSets this resource references. */
  public get referencedPatchSets(): string[] {
    return this.patches.filter((x) => x.type === PatchType.PATCH_SET).map((x) => x.patchSetName!);
  }

  /** @internal */
  public _toJson(): Record<string, unknown> {
    const out: Record<string, unknown> = { name: this.name };
    if (this.base) out.base = copyJson(this.base);
    if (this.patches.length) out.patches = this.patches.map((x) => x.toJson());
    if (this.connectionDetails.length) out.connectionDetails = this.connectionDetails.map((x) => x.toJson());
    if (this.readinessChecks.length) out.readinessChecks = this.readinessChecks.map((x) => x.toJson());
    return out;
  }
}

/** Where P&T writes the connection secret of a modern (Crossplane 2.x namespaced/cluster) XR. */
export interface ConnectionSecretRef {
  readonly name: string;
  /** @default - the XR's namespace */
  readonly namespace?: string;
}

export interface PatchAndTransformStepProps {
  /** @default 'patch-and-transform' */
  readonly step?: string;
  /** @default - the Function named `function-patch-and-transform` */
  readonly function?: IFunction;
  /** Resources, in order. More can be added with `addResource`. @default - none */
  readonly resources?: Record<string, ComposedResourceOptions>;
  /** Named patch sets. More can be added with `addPatchSet`. @default - none */
  readonly patchSets?: Record<string, Patch[]>;
  /**
   * `writeConnectionSecretToRef` of the input. Only modern (Crossplane 2.x) XRs use it; for the
   * claim-based v1 XRDs of this toolkit leave it unset and use the Composition's
   * `writeConnectionSecretsToNamespace`.
   * @default - none
   */
  readonly writeConnectionSecretToRef?: ConnectionSecretRef;
  /** @default - none */
  readonly credentials?: FunctionCredential[];
}

/**
 * A Composition pipeline step running function-patch-and-transform with a typed
 * `pt.fn.crossplane.io/v1beta1 Resources` input.
 */
export class PatchAndTransformStep implements IPipelineStep {
  /** apiVersion of the input. */
  public static readonly INPUT_API_VERSION = 'pt.fn.crossplane.io/v1beta1';

  public readonly stepName: string;
  private readonly fn: IFunction;
  private readonly resources: ComposedResource[] = [];
  private readonly patchSets = new Map<string, Patch[]>();
  private readonly connectionSecretRef?: ConnectionSecretRef;
  private readonly credentials: FunctionCredential[];

  constructor(props: PatchAndTransformStepProps = {}) {
    const p = 'PatchAndTransformStepProps';
    const step = props.step ?? 'patch-and-transform';
    const fn = props.function ?? Function.fromFunctionName('function-patch-and-transform');
    this.stepName = checkStepBasics(p, { step, function: fn });
    this.fn = fn;
    for (const [name, patches] of Object.entries(props.patchSets ?? {})) this.addPatchSet(name, ...patches);
    for (const [name, options] of Object.entries(props.resources ?? {})) this.addResource(name, options);
    if (props.writeConnectionSecretToRef !== undefined) {
      const r = props.writeConnectionSecretToRef;
      if (!isPlainObject(r)) fail(`${p}.writeConnectionSecretToRef`, r, 'must be {name, namespace?}');
      checkNonEmpty(`${p}.writeConnectionSecretToRef.name`, r.name);
      if (r.namespace !== undefined) checkDnsLabel(`${p}.writeConnectionSecretToRef.namespace`, r.namespace);
      this.connectionSecretRef = { ...r };
    }
    this.credentials = [...(props.credentials ?? [])];
    this.credentials.forEach((c, i) => checkCredential(`${p}.credentials[${i}]`, c));
  }

  /** Adds a resource template; names must be unique within the step. */
  public addResource(name: string, options: ComposedResourceOptions = {}): ComposedResource {
    if (this.resources.some((r) => r.name === name)) fail('PatchAndTransformStep.addResource(name)', name, `is already a resource of step "${this.stepName}"`);
    const r = new ComposedResource(name, options);
    this.resources.push(r);
    return r;
  }

  /** Looks up a resource template by name. */
  public resource(name: string): ComposedResource | undefined {
    return this.resources.find((r) => r.name === name);
  }

  /** Names of the resource templates, in order. */
  public get resourceNames(): string[] {
    return this.resources.map((r) => r.name);
  }

  /** Declares a named PatchSet; resources use it with `Patch.patchSet(name)`. */
  public addPatchSet(name: string, ...patches: Patch[]): void {
    const p = `PatchAndTransformStep.addPatchSet(${show(name)})`;
    checkDnsLabel(`${p} name`, name);
    if (this.patchSets.has(name)) fail(`${p} name`, name, 'is declared twice');
    if (patches.length === 0) fail(`${p} patches`, patches, 'must contain at least one patch');
    patches.forEach((x, i) => {
      if (!(x instanceof Patch)) fail(`${p} patches[${i}]`, x, 'must be made with a Patch factory');
      if (x.type === PatchType.PATCH_SET) fail(`${p} patches[${i}]`, x.patchSetName, 'references a PatchSet; patch sets cannot be nested');
    });
    this.patchSets.set(name, [...patches]);
  }

  /** Problems that make the step unusable (empty, or a referenced PatchSet not declared). */
  public validate(): string[] {
    const errors: string[] = [];
    if (this.resources.length === 0) errors.push(`PatchAndTransformStep "${this.stepName}": has no resources; add one with addResource()`);
    for (const r of this.resources) {
      for (const ps of r.referencedPatchSets) {
        if (!this.patchSets.has(ps)) {
          errors.push(
            `PatchAndTransformStep "${this.stepName}": resource "${r.name}" references PatchSet ${show(ps)}, which is not declared (declared: ${[...this.patchSets.keys()].join(', ') || 'none'})`,
          );
        }
      }
    }
    return errors;
  }

  /** The `pt.fn.crossplane.io/v1beta1 Resources` input object. */
  public toInput(): Record<string, unknown> {
    const errors = this.validate();
    if (errors.length) throw new Error(errors.join('\n'));
    const input: Record<string, unknown> = { apiVersion: PatchAndTransformStep.INPUT_API_VERSION, kind: 'Resources' };
    if (this.patchSets.size) {
      input.patchSets = [...this.patchSets.entries()].map(([name, patches]) => ({ name, patches: patches.map((x) => x.toJson()) }));
    }
    input.resources = this.resources.map((r) => r._toJson());
    if (this.connectionSecretRef) input.writeConnectionSecretToRef = { ...this.connectionSecretRef };
    return input;
  }

  public toPipelineStep(): PipelineStepConfig {
    return renderStep(this.stepName, this.fn, this.toInput(), this.credentials);
  }
}
