import { describe, expect, it } from '@jest/globals';
import { App, Chart } from 'cdk8s';
import { backup, InstanceOperation, InstanceOperationProps, restore, serviceBinding } from '../../constructs/catalogue/index.js';
import { claimValidator } from './_equivalence.js';

type Obj = Record<string, any>;

function build(props: InstanceOperationProps) {
  const chart = new Chart(new App(), 'cp');
  const op = new InstanceOperation(chart, 'op', props);
  const xrd = (chart.toJson() as Obj[]).find((o) => o.kind === 'CompositeResourceDefinition')!;
  return { op, xrd, spec: xrd.spec.versions[0].schema.openAPIV3Schema.properties.spec };
}

describe('InstanceOperation', () => {
  it('renders type allow-lists per backend; an empty composition name counts as the default backend', () => {
    const { spec, op } = build(serviceBinding(['postgresql', 'mongodb']));
    expect(spec.properties.serviceInstanceType.enum).toEqual(['postgresql', 'mongodb']);
    expect(spec['x-kubernetes-validations']).toEqual([
      {
        rule: "!((has(self.compositionRef) ? self.compositionRef.name : 'a8s-servicebinding') in ['', 'a8s-servicebinding']) || self.serviceInstanceType == 'postgresql'",
        message: 'Selected service instance type is not supported.',
      },
    ]);
    expect([...op.compositions.keys()]).toEqual(['a8s-servicebinding', 'a9s-servicebinding']);
  });

  it('backends that need a field reject claims without it (a8s restore needs instanceRef)', () => {
    const { xrd } = build(restore());
    const v = claimValidator(xrd as never);
    const c = (spec: Obj) => ({ apiVersion: 'anynines.com/v1', kind: 'Restore', metadata: { name: 'r', namespace: 'n' }, spec });
    expect(v.validate(c({ backupRef: 'b', serviceInstanceType: 'postgresql', compositionRef: { name: 'a8s-restore' } })).map((e) => e.message)).toEqual([
      'a8s-restore requires spec.instanceRef',
    ]);
    expect(v.validate(c({ backupRef: 'b', instanceRef: 'i', serviceInstanceType: 'postgresql', compositionRef: { name: 'a8s-restore' } }))).toEqual([]);
    expect(v.validate(c({ backupRef: 'b', serviceInstanceType: 'mongodb', compositionRef: { name: 'a9s-restore' } }))).toEqual([]);
  });

  it('a claim without compositionRef is accepted and judged as one naming the default backend', () => {
    const { xrd } = build(restore());
    expect(xrd.spec.defaultCompositionRef).toEqual({ name: 'a8s-restore' });
    const v = claimValidator(xrd as never);
    const c = (spec: Obj) => ({ apiVersion: 'anynines.com/v1', kind: 'Restore', metadata: { name: 'r', namespace: 'n' }, spec });
    expect(v.validate(c({ backupRef: 'b', instanceRef: 'i', serviceInstanceType: 'postgresql' }))).toEqual([]);
    // The default (a8s) backend needs instanceRef and handles PostgreSQL only.
    expect(v.validate(c({ backupRef: 'b', serviceInstanceType: 'postgresql' })).map((e) => e.message)).toEqual(['a8s-restore requires spec.instanceRef']);
    expect(v.validate(c({ backupRef: 'b', instanceRef: 'i', serviceInstanceType: 'mongodb' })).map((e) => e.message)).toEqual([
      'Selected service instance type is not supported.',
    ]);
  });

  it('with the a9s backend as default there is no type restriction', () => {
    const p = backup(['keyvalue']);
    const { spec, xrd } = build({ ...p, backends: p.backends.filter((b) => b.name.startsWith('a9s')) });
    expect(spec['x-kubernetes-validations']).toBeUndefined();
    expect(xrd.spec.defaultCompositionRef).toEqual({ name: 'a9s-backup' });
  });

  it('rejects bad props, naming the prop and the value', () => {
    expect(() => build({ ...backup(), defaultBackend: 'a7s-backup' })).toThrow(
      'InstanceOperationProps(XBackup).defaultBackend: "a7s-backup" is an unknown backend',
    );
    expect(() => build({ ...backup(), types: [] })).toThrow('InstanceOperationProps(XBackup).types: [] must list at least one instance type');
    expect(() => build({ ...backup(['mongodb']) })).toThrow(
      'InstanceOperationProps(XBackup).backends(a8s-backup).types: "postgresql" is not an instance type (mongodb)',
    );
    expect(() => build({ ...backup(), required: ['backupRef'] })).toThrow('InstanceOperationProps(XBackup).required: "backupRef" is not a declared field');
    expect(() => build({ ...backup(), fields: [{ name: 'serviceInstanceType', type: 'string' }] })).toThrow('collides with a field the construct owns');
  });
});
