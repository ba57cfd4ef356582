import { describe, expect, it } from '@jest/globals';
import { ConnectionDetail, ConvertType, Function, Patch, PatchAndTransformStep, ReadinessCheck, Transform } from '../../constructs/crossplane/index.js';
import { ptInputErrors } from './_schema.js';

describe('PatchAndTransformStep', () => {
  it('renders a pt.fn.crossplane.io/v1beta1 Resources input that validates against the P&T CRD', () => {
    const step = new PatchAndTransformStep({
      patchSets: {
        'claim-labels': [
          Patch.fromCompositeFieldPath('metadata.labels[crossplane.io/claim-namespace]', 'metadata.labels[crossplane.io/claim-namespace]'),
          Patch.fromCompositeFieldPath('metadata.labels[crossplane.io/claim-name]', 'metadata.labels[crossplane.io/claim-name]'),
        ],
      },
    });
    const pg = step.addResource('a8s-postgresql', {
      base: {
        apiVersion: 'kubernetes.crossplane.io/v1alpha2',
        kind: 'Object',
        spec: { forProvider: { manifest: { apiVersion: 'postgresql.anynines.com/v1beta3', kind: 'Postgresql' } } },
      },
      patches: [Patch.patchSet('claim-labels')],
    });
    pg.addPatch(
      Patch.fromCompositeFieldPath('spec.service', 'spec.forProvider.manifest.spec.version', {
        transforms: [Transform.trimPrefix('a9s-postgresql'), Transform.convert(ConvertType.INT)],
      }),
      Patch.combineFromComposite(['metadata.labels[crossplane.io/claim-namespace]', 'metadata.labels[crossplane.io/claim-name]'], '%s-%s', 'metadata.name'),
      Patch.toCompositeFieldPath('status.atProvider.manifest.status', 'status.managed'),
    );
    pg.addConnectionDetail(ConnectionDetail.fromConnectionSecretKey('password'), ConnectionDetail.fromValue('port', '5432'));
    pg.addReadinessCheck(ReadinessCheck.matchCondition());
    step.addResource('extra', { readinessChecks: [ReadinessCheck.none()] });

    const input = step.toInput();
    expect(input.apiVersion).toBe('pt.fn.crossplane.io/v1beta1');
    expect(input.kind).toBe('Resources');
    expect((input.patchSets as any[]).map((s) => s.name)).toEqual(['claim-labels']);
    expect((input.resources as any[]).map((r) => r.name)).toEqual(['a8s-postgresql', 'extra']);
    expect((input.resources as any[])[1]).toEqual({ name: 'extra', readinessChecks: [{ type: 'None' }] });
    expect(ptInputErrors(input)).toEqual([]);
    expect(step.resourceNames).toEqual(['a8s-postgresql', 'extra']);
    expect(step.toPipelineStep()).toMatchObject({ step: 'patch-and-transform', functionRef: { name: 'function-patch-and-transform' }, input });
  });

  it('supports writeConnectionSecretToRef for modern XRs, a custom step name and function', () => {
    const step = new PatchAndTransformStep({
      step: 'compose',
      function: Function.fromFunctionName('pt'),
      resources: { r: { base: { apiVersion: 'v1', kind: 'Secret' } } },
      writeConnectionSecretToRef: { name: 'conn' },
    });
    const s = step.toPipelineStep();
    expect(s.step).toBe('compose');
    expect(s.functionRef).toEqual({ name: 'pt' });
    expect(s.input!.writeConnectionSecretToRef).toEqual({ name: 'conn' });
    expect(ptInputErrors(s.input)).toEqual([]);
  });

  it('copies the base so later edits of the caller object do not leak', () => {
    const base = { apiVersion: 'v1', kind: 'ConfigMap', data: { a: '1' } };
    const step = new PatchAndTransformStep({ resources: { cm: { base } } });
    base.data.a = '2';
    expect((step.toInput().resources as any[])[0].base.data.a).toBe('1');
  });

  it('throws on invalid resources, patch sets and checks', () => {
    const step = new PatchAndTransformStep();
    step.addResource('r');
    expect(() => step.addResource('r')).toThrow('PatchAndTransformStep.addResource(name): "r" is already a resource of step "patch-and-transform"');
    expect(() => step.addResource('', {})).toThrow('PatchAndTransformStep.addResource("") name: "" must be a non-empty string');
    expect(() => step.addResource('b', { base: { kind: 'X' } })).toThrow('PatchAndTransformStep.addResource("b").base.apiVersion: undefined must be set');
    expect(() => step.addResource('c', { base: { apiVersion: 'v1' } })).toThrow('PatchAndTransformStep.addResource("c").base.kind: undefined must be set');
    expect(() => step.addResource('d', { patches: Patch.patchSet('ps') as never })).toThrow(
      'PatchAndTransformStep.addResource("d").patches: {"type":"PatchSet","patchSetName":"ps"} must be a list',
    );
    expect(() => step.addPatchSet('ps')).toThrow('PatchAndTransformStep.addPatchSet("ps") patches: [] must contain at least one patch');
    step.addPatchSet('ps', Patch.fromCompositeFieldPath('spec.a', 'spec.a'));
    expect(() => step.addPatchSet('ps', Patch.fromCompositeFieldPath('spec.a', 'spec.a'))).toThrow(
      'PatchAndTransformStep.addPatchSet("ps") name: "ps" is declared twice',
    );
    expect(() => step.addPatchSet('nested', Patch.patchSet('ps'))).toThrow(
      'PatchAndTransformStep.addPatchSet("nested") patches[0]: "ps" references a PatchSet; patch sets cannot be nested',
    );
    const r = step.resource('r')!;
    expect(() => r.addConnectionDetail(ConnectionDetail.fromValue('k', 'v'), ConnectionDetail.fromValue('k', 'w'))).toThrow(
      'ComposedResource("r").connectionDetails: "k" is declared twice',
    );
    expect(() => r.addReadinessCheck(ReadinessCheck.none(), ReadinessCheck.nonEmpty('status.x'))).toThrow(
      'ComposedResource("r").readinessChecks: ["None","NonEmpty"] combines None with other checks',
    );
    expect(() => r.addPatch({ type: 'X' } as never)).toThrow('ComposedResource("r").patches[0]: {"type":"X"} must be made with a Patch factory');
    r.addPatch(Patch.patchSet('nope'));
    expect(() => step.toInput()).toThrow('resource "r" references PatchSet "nope", which is not declared (declared: ps)');
    expect(() => new PatchAndTransformStep({ writeConnectionSecretToRef: { name: 'x', namespace: 'Bad' } })).toThrow(
      'PatchAndTransformStepProps.writeConnectionSecretToRef.namespace: "Bad"',
    );
  });
});
