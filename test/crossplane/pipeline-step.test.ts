import { describe, expect, it } from '@jest/globals';
import { Function, FunctionStep } from '../../constructs/crossplane/index.js';

describe('FunctionStep', () => {
  it('renders step, functionRef, input and credentials', () => {
    const step = new FunctionStep({
      step: 'render-templates',
      function: Function.fromFunctionName('function-go-templating'),
      input: { apiVersion: 'gotemplating.fn.crossplane.io/v1beta1', kind: 'GoTemplate', source: 'Inline', inline: { template: '---' } },
      credentials: [{ name: 'db', secretNamespace: 'crossplane-system', secretName: 'db-creds' }],
    });
    expect(step.stepName).toBe('render-templates');
    expect(step.toPipelineStep()).toEqual({
      step: 'render-templates',
      functionRef: { name: 'function-go-templating' },
      input: { apiVersion: 'gotemplating.fn.crossplane.io/v1beta1', kind: 'GoTemplate', source: 'Inline', inline: { template: '---' } },
      credentials: [{ name: 'db', source: 'Secret', secretRef: { namespace: 'crossplane-system', name: 'db-creds' } }],
    });
  });

  it('autoReady() calls function-auto-ready without input', () => {
    expect(FunctionStep.autoReady().toPipelineStep()).toEqual({ step: 'auto-ready', functionRef: { name: 'function-auto-ready' } });
    expect(FunctionStep.autoReady(Function.fromFunctionName('ready')).toPipelineStep().functionRef).toEqual({ name: 'ready' });
  });

  it('throws on bad props', () => {
    const fn = Function.fromFunctionName('f');
    expect(() => new FunctionStep({ step: 'Bad Step', function: fn })).toThrow('FunctionStepProps.step: "Bad Step" is not a DNS-1123 label');
    expect(() => new FunctionStep({ step: 's', function: undefined as never })).toThrow('FunctionStepProps.function: undefined must be a Function');
    expect(() => new FunctionStep({ step: 's', function: fn, input: { kind: 'X' } })).toThrow(
      'FunctionStepProps.input: {"kind":"X"} must be a KRM object with apiVersion and kind',
    );
    expect(() => new FunctionStep({ step: 's', function: fn, credentials: [{ name: 'c', secretNamespace: 'NS', secretName: 'x' }] })).toThrow(
      'FunctionStepProps.credentials[0].secretNamespace: "NS"',
    );
    expect(() => Function.fromFunctionName('Fn')).toThrow('Function.fromFunctionName(name): "Fn"');
  });
});
