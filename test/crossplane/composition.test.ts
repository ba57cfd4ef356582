import { describe, expect, it } from '@jest/globals';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { Testing } from 'cdk8s';
import { parse } from 'yaml';
import {
  CompositeResourceDefinition,
  CompositeType,
  Composition,
  ConnectionDetail,
  Function,
  FunctionStep,
  IPipelineStep,
  Patch,
  PatchAndTransformStep,
  ReadinessCheck,
  StringConversion,
  Transform,
} from '../../constructs/crossplane/index.js';
import { ptInputErrors, KLUTCH_FIXTURES, schemaErrors } from './_schema.js';

const COMP_V2 = 'crossplane/v2/apiextensions.crossplane.io_compositions.yaml';
const COMP_V120 = 'crossplane/v1.20/apiextensions.crossplane.io_compositions.yaml';

/** Klutch's a9s-servicebinding Composition, built with the typed API. */
function serviceBinding(chart = Testing.chart()) {
  const comp = new Composition(chart, 'sb', { name: 'a9s-servicebinding', compositeTypeRef: CompositeType.of('anynines.com/v1', 'XServiceBinding') });
  const pt = comp.addPatchAndTransformStep();
  pt.addResource('a9s-servicebinding', {
    base: { apiVersion: 'dataservices.anynines.com/v1', kind: 'ServiceBinding', spec: { forProvider: { acceptsIncomplete: true } } },
    patches: [
      Patch.fromCompositeFieldPath('spec.serviceInstanceType', 'metadata.labels[klutch.io/instance-type]'),
      Patch.fromCompositeFieldPath('metadata.labels[crossplane.io/claim-namespace]', 'metadata.labels[crossplane.io/claim-namespace]'),
      Patch.fromCompositeFieldPath('metadata.labels[crossplane.io/claim-name]', 'metadata.labels[crossplane.io/claim-name]'),
      Patch.fromCompositeFieldPath('spec.instanceRef', 'spec.forProvider.instanceName'),
      Patch.fromCompositeFieldPath('spec.serviceInstanceType', 'spec.providerConfigRef.name', { transforms: [Transform.stringFormat('%s-service-broker')] }),
      Patch.fromCompositeFieldPath('metadata.labels[crossplane.io/claim-namespace]', 'spec.writeConnectionSecretToRef.namespace'),
      Patch.fromCompositeFieldPath('metadata.labels[crossplane.io/claim-name]', 'spec.writeConnectionSecretToRef.name', {
        transforms: [Transform.stringFormat('%s-creds')],
      }),
      Patch.toCompositeFieldPath('status.atProvider.serviceBindingID', 'status.managed.serviceBindingID'),
      Patch.toCompositeFieldPath('status.atProvider.state', 'status.managed.state'),
      Patch.toCompositeFieldPath('status.conditions', 'status.managed.conditions'),
    ],
  });
  return { chart, comp, pt };
}

/** Klutch writes FromCompositeFieldPath patches without `type`; P&T defaults it. */
function withDefaultPatchType(input: any): any {
  const fix = (ps: any[] = []) =>
    ps.forEach((p) => {
      if (!p.type) p.type = 'FromCompositeFieldPath';
    });
  for (const r of input.resources ?? []) fix(r.patches);
  for (const s of input.patchSets ?? []) fix(s.patches);
  return input;
}

describe('Composition', () => {
  it("emits apiextensions.crossplane.io/v1 with mode Pipeline, equal to Klutch's a9s-servicebinding", () => {
    const { chart } = serviceBinding();
    const [o] = Testing.synth(chart);
    const ref = parse(readFileSync(path.join(KLUTCH_FIXTURES, 'xp-a9s-servicebinding-composition.yaml'), 'utf8'));
    withDefaultPatchType(ref.spec.pipeline[0].input);
    expect(o.apiVersion).toBe('apiextensions.crossplane.io/v1');
    expect(o.kind).toBe('Composition');
    expect(o.spec.mode).toBe('Pipeline');
    expect(o).toEqual(ref);
  });

  it('validates against the Composition CRDs of Crossplane 2.3 and 1.20, and its input against the P&T CRD', () => {
    const chart = Testing.chart();
    const xrd = new CompositeResourceDefinition(chart, 'xrd', {
      group: 'example.org',
      names: { kind: 'XCache', plural: 'xcaches' },
      claimNames: { kind: 'Cache', plural: 'caches' },
      versions: [{ name: 'v1alpha1', schema: { type: 'object', properties: { spec: { type: 'object', properties: { plan: { type: 'string' } } } } } }],
    });
    const comp = new Composition(chart, 'comp', { name: 'cache-default', compositeTypeRef: xrd, writeConnectionSecretsToNamespace: 'crossplane-system' });
    const pt = comp.addPatchAndTransformStep({
      patchSets: { claim: [Patch.fromCompositeFieldPath('metadata.labels[crossplane.io/claim-name]', 'metadata.labels[crossplane.io/claim-name]')] },
    });
    const r = pt.addResource('cache', {
      base: { apiVersion: 'kubernetes.crossplane.io/v1alpha2', kind: 'Object', spec: { forProvider: { manifest: { apiVersion: 'v1', kind: 'ConfigMap' } } } },
      patches: [
        Patch.patchSet('claim'),
        Patch.fromCompositeFieldPath('spec.plan', 'spec.forProvider.manifest.data.plan', { transforms: [Transform.stringConvert(StringConversion.TO_UPPER)] }),
      ],
    });
    r.addConnectionDetail(ConnectionDetail.fromFieldPath('plan', 'spec.forProvider.manifest.data.plan'));
    r.addReadinessCheck(ReadinessCheck.matchCondition());
    comp.addStep(FunctionStep.autoReady());
    const [, o] = Testing.synth(chart);
    expect(o.kind).toBe('Composition');
    expect(o.spec.compositeTypeRef).toEqual({ apiVersion: 'example.org/v1alpha1', kind: 'XCache' });
    expect(o.spec.writeConnectionSecretsToNamespace).toBe('crossplane-system');
    expect(o.spec.pipeline.map((s: any) => s.step)).toEqual(['patch-and-transform', 'auto-ready']);
    expect(o.spec.pipeline[1]).toEqual({ step: 'auto-ready', functionRef: { name: 'function-auto-ready' } });
    expect(schemaErrors(COMP_V2, o, 'v1')).toEqual([]);
    expect(schemaErrors(COMP_V120, o, 'v1')).toEqual([]);
    expect(ptInputErrors(o.spec.pipeline[0].input)).toEqual([]);
    // the Composition schema check is meaningful: a wrong mode fails on v2
    expect(schemaErrors(COMP_V2, { ...o, spec: { ...o.spec, mode: 'Resources' } }, 'v1').join()).toMatch(/allowed values/);
  });

  it('every Klutch composition input passes the P&T schema check used here', () => {
    const dir = KLUTCH_FIXTURES;
    const files = readdirSync(dir).filter((f) => /^xp-.*composition\.yaml$/.test(f));
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) {
      const c = parse(readFileSync(path.join(dir, f), 'utf8'));
      for (const step of c.spec.pipeline) expect([f, ptInputErrors(step.input)]).toEqual([f, []]);
    }
  });

  it('uses the function named by a Function construct', () => {
    const chart = Testing.chart();
    const fn = Function.patchAndTransform(chart, 'pt', { name: 'pt-fn' });
    const comp = new Composition(chart, 'c', { name: 'c', compositeTypeRef: CompositeType.of('a.example.org/v1', 'XA') });
    comp.addPatchAndTransformStep({ function: fn, resources: { r: { base: { apiVersion: 'v1', kind: 'ConfigMap' } } } });
    const out = Testing.synth(chart);
    const c = out.find((o) => o.kind === 'Composition')!;
    expect(c.spec.pipeline[0].functionRef).toEqual({ name: 'pt-fn' });
    expect(out.find((o) => o.kind === 'Function')!.metadata.name).toBe('pt-fn');
  });

  it('rejects duplicate step names and more than 99 steps', () => {
    const chart = Testing.chart();
    const comp = new Composition(chart, 'c', { compositeTypeRef: CompositeType.of('a.example.org/v1', 'XA') });
    comp.addStep(FunctionStep.autoReady());
    expect(() => comp.addStep(FunctionStep.autoReady())).toThrow('Composition.addStep(step).stepName: "auto-ready" is already a step of this pipeline');
    for (let i = 1; i < 99; i++) comp.addStep(new FunctionStep({ step: `s${i}`, function: Function.fromFunctionName('f') }));
    expect(() => comp.addStep(new FunctionStep({ step: 's99', function: Function.fromFunctionName('f') }))).toThrow(
      'Composition.addStep(step): "s99" exceeds the maximum of 99 pipeline steps',
    );
    expect(() => comp.addStep({ stepName: 'x' } as unknown as IPipelineStep)).toThrow('Composition.addStep(step)');
  });

  it('fails synth with an empty pipeline, an empty P&T step or an undeclared PatchSet', () => {
    const empty = Testing.chart();
    new Composition(empty, 'c', { name: 'empty', compositeTypeRef: CompositeType.of('a.example.org/v1', 'XA') });
    expect(() => Testing.synth(empty)).toThrow(/Composition "empty": the pipeline has no steps/);

    const noRes = Testing.chart();
    new Composition(noRes, 'c', { name: 'nores', compositeTypeRef: CompositeType.of('a.example.org/v1', 'XA') }).addPatchAndTransformStep();
    expect(() => Testing.synth(noRes)).toThrow(/PatchAndTransformStep "patch-and-transform": has no resources/);

    const undeclared = Testing.chart();
    const c = new Composition(undeclared, 'c', { name: 'undeclared', compositeTypeRef: CompositeType.of('a.example.org/v1', 'XA') });
    c.addPatchAndTransformStep({ resources: { r: { patches: [Patch.patchSet('missing')] } } });
    expect(() => Testing.synth(undeclared)).toThrow(/resource "r" references PatchSet "missing", which is not declared/);
  });

  it('validates its props', () => {
    const chart = Testing.chart();
    expect(() => new Composition(chart, 'a', { compositeTypeRef: undefined as never })).toThrow(
      'CompositionProps.compositeTypeRef: undefined must be a CompositeResourceDefinition or CompositeType.of',
    );
    expect(() => new Composition(chart, 'b', { name: 'Bad', compositeTypeRef: CompositeType.of('a.example.org/v1', 'XA') })).toThrow(
      'CompositionProps.name: "Bad"',
    );
    expect(
      () =>
        new Composition(chart, 'c', { compositeTypeRef: CompositeType.of('a.example.org/v1', 'XA'), writeConnectionSecretsToNamespace: 'Crossplane System' }),
    ).toThrow('CompositionProps.writeConnectionSecretsToNamespace: "Crossplane System"');
    expect(() => CompositeType.of('v1', 'XA')).toThrow('CompositeType.apiVersion: "v1" must be "<group>/<version>"');
    expect(() => CompositeType.of('a.example.org/v1', 'xa')).toThrow('CompositeType.kind: "xa" must be a PascalCase kind');
  });

  it('keeps step order and lets later mutation of a step show up at synth', () => {
    const { chart, comp, pt } = serviceBinding();
    pt.resource('a9s-servicebinding')!.addReadinessCheck(ReadinessCheck.matchString('status.atProvider.state', 'succeeded'));
    comp.addStep(FunctionStep.autoReady());
    expect(comp.stepNames).toEqual(['patch-and-transform', 'auto-ready']);
    const [o] = Testing.synth(chart);
    expect(o.spec.pipeline[0].input.resources[0].readinessChecks).toEqual([
      { type: 'MatchString', fieldPath: 'status.atProvider.state', matchString: 'succeeded' },
    ]);
    expect(pt).toBeInstanceOf(PatchAndTransformStep);
  });
});
