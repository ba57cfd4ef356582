/**
 * `PipelineStep`: one step of a Composition's function pipeline (function reference, input, credentials).
 */
import { checkDnsLabel, checkDnsSubdomain, copyJson, fail, isPlainObject } from './_util.js';
import { IFunction } from './function.js';

/** A credential passed to a function (`pipeline[].credentials[]`). */
export interface FunctionCredential {
  /** Name the function sees. */
  readonly name: string;
  /** The Secret holding the credential. */
  readonly secretNamespace: string;
  readonly secretName: string;
}

/** One rendered `spec.pipeline[]` entry. */
export interface PipelineStepConfig {
  readonly step: string;
  readonly functionRef: { readonly name: string };
  readonly input?: Record<string, unknown>;
  readonly credentials?: Array<Record<string, unknown>>;
}

/** A step of a Composition pipeline. */
export interface IPipelineStep {
  /** Unique step name within the pipeline. */
  readonly stepName: string;
  /** Renders the step; throws when the step is incomplete or inconsistent. */
  toPipelineStep(): PipelineStepConfig;
}

export interface FunctionStepProps {
  /** Step name (a DNS label). */
  readonly step: string;
  /** The function to call. */
  readonly function: IFunction;
  /** The function's input: a KRM object with apiVersion and kind. @default - no input */
  readonly input?: Record<string, unknown>;
  /** @default - none */
  readonly credentials?: FunctionCredential[];
}

/** A pipeline step calling any function with an optional input object. */
export class FunctionStep implements IPipelineStep {
  /** function-auto-ready as the (last) step `auto-ready`. */
  public static autoReady(fn: IFunction = { functionName: 'function-auto-ready' }): FunctionStep {
    return new FunctionStep({ step: 'auto-ready', function: fn });
  }

  public readonly stepName: string;
  private readonly props: FunctionStepProps;

  constructor(props: FunctionStepProps) {
    this.stepName = checkStepBasics('FunctionStepProps', props);
    if (props.input !== undefined) {
      if (!isPlainObject(props.input) || typeof props.input.apiVersion !== 'string' || typeof props.input.kind !== 'string') {
        fail('FunctionStepProps.input', props.input, 'must be a KRM object with apiVersion and kind');
      }
    }
    (props.credentials ?? []).forEach((c, i) => checkCredential(`FunctionStepProps.credentials[${i}]`, c));
    this.props = { ...props, input: copyJson(props.input) };
  }

  public toPipelineStep(): PipelineStepConfig {
    return renderStep(this.stepName, this.props.function, this.props.input, this.props.credentials);
  }
}

/** @internal */
export function checkStepBasics(p: string, props: { step?: string; function?: IFunction }): string {
  if (!isPlainObject(props)) fail(p, props, 'must be an object');
  checkDnsLabel(`${p}.step`, props.step);
  if (!props.function || typeof props.function.functionName !== 'string')
    fail(`${p}.function`, props.function, 'must be a Function (or Function.fromFunctionName(...))');
  checkDnsSubdomain(`${p}.function`, props.function.functionName);
  return props.step!;
}

/** @internal */
export function checkCredential(prop: string, c: FunctionCredential): void {
  if (!isPlainObject(c)) fail(prop, c, 'must be an object');
  checkDnsLabel(`${prop}.name`, c.name);
  checkDnsLabel(`${prop}.secretNamespace`, c.secretNamespace);
  checkDnsSubdomain(`${prop}.secretName`, c.secretName);
}

/** @internal */
export function renderStep(step: string, fn: IFunction, input?: Record<string, unknown>, credentials?: FunctionCredential[]): PipelineStepConfig {
  const out: { step: string; functionRef: { name: string }; input?: Record<string, unknown>; credentials?: Array<Record<string, unknown>> } = {
    step,
    functionRef: { name: fn.functionName },
  };
  if (input !== undefined) out.input = copyJson(input);
  if (credentials && credentials.length > 0) {
    out.credentials = credentials.map((c) => ({ name: c.name, source: 'Secret', secretRef: { namespace: c.secretNamespace, name: c.secretName } }));
  }
  return out;
}
