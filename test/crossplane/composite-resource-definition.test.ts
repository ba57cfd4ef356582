import { describe, expect, it } from '@jest/globals';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { Testing } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import {
  CompositeDeletePolicy,
  CompositeResourceDefinition,
  CompositeResourceDefinitionProps,
  PrinterColumnType,
  RESERVED_SPEC_FIELDS,
  RESERVED_STATUS_FIELDS,
} from '../../constructs/crossplane/index.js';
import { KLUTCH_FIXTURES, schemaErrors } from './_schema.js';

const XRD_V2 = 'crossplane/v2/apiextensions.crossplane.io_compositeresourcedefinitions.yaml';
const XRD_V120 = 'crossplane/v1.20/apiextensions.crossplane.io_compositeresourcedefinitions.yaml';

const schema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      'x-kubernetes-validations': [{ rule: 'self.plan == oldSelf.plan || true', message: 'plan' }],
      properties: { plan: { type: 'string', enum: ['small', 'big'] }, service: { type: 'string' } },
      required: ['plan'],
    },
    status: { type: 'object', properties: { managed: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
  },
};

function props(over: Partial<CompositeResourceDefinitionProps> = {}): CompositeResourceDefinitionProps {
  return {
    group: 'anynines.com',
    names: { kind: 'XKeyvalueInstance', plural: 'xkeyvalueinstances' },
    claimNames: { kind: 'KeyvalueInstance', plural: 'keyvalueinstances' },
    versions: [{ name: 'v1', schema }],
    ...over,
  };
}

function synthOne(p: CompositeResourceDefinitionProps): any {
  const chart = Testing.chart();
  new CompositeResourceDefinition(chart, 'xrd', p);
  const out = Testing.synth(chart);
  expect(out).toHaveLength(1);
  return out[0];
}

describe('CompositeResourceDefinition', () => {
  it('emits an apiextensions.crossplane.io/v1 XRD named <plural>.<group>, without scope', () => {
    const chart = Testing.chart();
    const xrd = new CompositeResourceDefinition(
      chart,
      'xrd',
      props({
        defaultCompositionName: 'a9s-keyvalue',
        defaultCompositeDeletePolicy: CompositeDeletePolicy.FOREGROUND,
        connectionSecretKeys: ['username', 'password'],
      }),
    );
    xrd.addPrinterColumn({ name: 'Plan', jsonPath: '.spec.plan' });
    const [o] = Testing.synth(chart);
    expect(o.apiVersion).toBe('apiextensions.crossplane.io/v1');
    expect(o.kind).toBe('CompositeResourceDefinition');
    expect(o.metadata.name).toBe('xkeyvalueinstances.anynines.com');
    expect(o.spec).not.toHaveProperty('scope');
    expect(o.spec.claimNames).toEqual({
      kind: 'KeyvalueInstance',
      plural: 'keyvalueinstances',
      singular: 'keyvalueinstance',
      listKind: 'KeyvalueInstanceList',
    });
    expect(o.spec.defaultCompositionRef).toEqual({ name: 'a9s-keyvalue' });
    expect(o.spec.defaultCompositeDeletePolicy).toBe('Foreground');
    expect(o.spec.connectionSecretKeys).toEqual(['username', 'password']);
    expect(o.spec.versions).toHaveLength(1);
    expect(o.spec.versions[0]).toMatchObject({ name: 'v1', served: true, referenceable: true });
    expect(o.spec.versions[0].schema.openAPIV3Schema).toEqual(schema);
    expect(o.spec.versions[0].additionalPrinterColumns).toEqual([{ name: 'Plan', type: 'string', jsonPath: '.spec.plan' }]);
    expect(xrd.compositeApiVersion).toBe('anynines.com/v1');
    expect(xrd.compositeKind).toBe('XKeyvalueInstance');
    expect(xrd.claimApiVersion).toBe('anynines.com/v1');
    expect(xrd.name).toBe('xkeyvalueinstances.anynines.com');
  });

  it('validates against the reference XRD CRDs of Crossplane 2.3 and 1.20 (CEL kept in the schema)', () => {
    const chart = Testing.chart();
    const xrd = new CompositeResourceDefinition(
      chart,
      'xrd',
      props({
        names: { kind: 'XKeyvalueInstance', plural: 'xkeyvalueinstances', categories: ['klutch'], shortNames: ['xkv'] },
        defaultCompositionName: 'a9s-keyvalue',
        defaultCompositeDeletePolicy: CompositeDeletePolicy.FOREGROUND,
        connectionSecretKeys: ['uri'],
      }),
    );
    xrd.addVersion({
      name: 'v1alpha1',
      schema,
      served: true,
      deprecated: true,
      deprecationWarning: 'use v1',
      additionalPrinterColumns: [{ name: 'Age', jsonPath: '.metadata.creationTimestamp', type: PrinterColumnType.DATE, priority: 1 }],
    });
    const [o] = Testing.synth(chart);
    expect(schemaErrors(XRD_V2, o, 'v1')).toEqual([]);
    expect(schemaErrors(XRD_V120, o, 'v1')).toEqual([]);
    expect(o.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations']).toHaveLength(1);
    // the validator itself is strict: an unknown spec field or a bad enum value fails
    expect(schemaErrors(XRD_V2, { ...o, spec: { ...o.spec, bogus: 1 } }, 'v1').join()).toMatch(/additional/);
    expect(schemaErrors(XRD_V120, { ...o, spec: { ...o.spec, defaultCompositeDeletePolicy: 'Later' } }, 'v1').join()).toMatch(/allowed values/);
  });

  it('round-trips every Klutch XRD and the result is valid on both Crossplane lines', () => {
    const dir = KLUTCH_FIXTURES;
    const files = readdirSync(dir).filter((f) => /^xp-.*definition.*\.yaml$/.test(f));
    expect(files.length).toBeGreaterThanOrEqual(10);
    for (const f of files) {
      for (const doc of parseAllDocuments(readFileSync(path.join(dir, f), 'utf8'))) {
        const src = doc.toJS() as any;
        if (!src || src.kind !== 'CompositeResourceDefinition') continue;
        const chart = Testing.chart();
        new CompositeResourceDefinition(chart, 'xrd', {
          name: src.metadata.name,
          group: src.spec.group,
          names: src.spec.names,
          claimNames: src.spec.claimNames,
          versions: src.spec.versions.map((v: any) => ({ name: v.name, served: v.served, referenceable: v.referenceable, schema: v.schema.openAPIV3Schema })),
          defaultCompositionName: src.spec.defaultCompositionRef?.name,
          defaultCompositeDeletePolicy: CompositeDeletePolicy.all.find((x) => x.value === src.spec.defaultCompositeDeletePolicy),
        });
        const [o] = Testing.synth(chart);
        expect(o.metadata.name).toBe(src.metadata.name);
        expect(o.spec.versions[0].schema.openAPIV3Schema.properties).toEqual(src.spec.versions[0].schema.openAPIV3Schema.properties);
        expect(schemaErrors(XRD_V2, o, 'v1')).toEqual([]);
        expect(schemaErrors(XRD_V120, o, 'v1')).toEqual([]);
      }
    }
  });

  it('throws when metadata.name is not <plural>.<group>', () => {
    expect(() => synthOne(props({ name: 'keyvalues.anynines.com' }))).toThrow(
      'CompositeResourceDefinitionProps.name: "keyvalues.anynines.com" must be "<names.plural>.<group>" = "xkeyvalueinstances.anynines.com"',
    );
  });

  it('throws on a bad group, kind or plural, naming the value', () => {
    expect(() => synthOne(props({ group: 'Foo_Bar' }))).toThrow('CompositeResourceDefinitionProps.group: "Foo_Bar" is not a DNS-1123 subdomain');
    expect(() => synthOne(props({ group: 'example' }))).toThrow('CompositeResourceDefinitionProps.group: "example" must contain at least one dot');
    expect(() => synthOne(props({ names: { kind: 'xThing', plural: 'xthings' } }))).toThrow('CompositeResourceDefinitionProps.names.kind: "xThing"');
    expect(() => synthOne(props({ names: { kind: 'XThing', plural: 'XThings' } }))).toThrow(
      'CompositeResourceDefinitionProps.names.plural: "XThings" is not a DNS-1123 label',
    );
  });

  it('limits names to 63 characters', () => {
    const long = 'x' + 'a'.repeat(63);
    expect(() => synthOne(props({ names: { kind: 'XThing', plural: long } }))).toThrow(`CompositeResourceDefinitionProps.names.plural: "${long}"`);
    const longKind = 'X' + 'a'.repeat(63);
    expect(() => synthOne(props({ names: { kind: longKind, plural: 'xthings' } }))).toThrow(
      `names.kind: "${longKind}" must be a PascalCase kind of at most 63 characters`,
    );
    const claimPlural = 'c' + 'a'.repeat(63);
    expect(() => synthOne(props({ claimNames: { kind: 'Thing', plural: claimPlural } }))).toThrow(`claimNames.plural: "${claimPlural}"`);
  });

  it('requires claim names to differ from XR names', () => {
    expect(() => synthOne(props({ claimNames: { kind: 'XKeyvalueInstance', plural: 'keyvalueinstances' } }))).toThrow(
      'CompositeResourceDefinitionProps.claimNames.kind: "XKeyvalueInstance" must differ from the composite resource names',
    );
    expect(() => synthOne(props({ claimNames: { kind: 'KeyvalueInstance', plural: 'xkeyvalueinstances' } }))).toThrow(
      'CompositeResourceDefinitionProps.claimNames.plural: "xkeyvalueinstances" must differ',
    );
    expect(() => synthOne(props({ claimNames: { kind: 'KeyvalueInstance', plural: 'kvs', singular: 'xkeyvalueinstance' } }))).toThrow(
      'claimNames.singular: "xkeyvalueinstance" must differ',
    );
  });

  it('requires exactly one referenceable version, and it must be served', () => {
    expect(() =>
      synthOne(
        props({
          versions: [
            { name: 'v1', schema },
            { name: 'v2', schema },
          ],
        }),
      ),
    ).toThrow(/CompositeResourceDefinitionProps.versions: .* must have exactly one referenceable version, found 0/);
    expect(() =>
      synthOne(
        props({
          versions: [
            { name: 'v1', schema, referenceable: true },
            { name: 'v2', schema, referenceable: true },
          ],
        }),
      ),
    ).toThrow(/found 2/);
    expect(() => synthOne(props({ versions: [{ name: 'v1', schema, served: false }] }))).toThrow(
      'CompositeResourceDefinitionProps.versions[0].served: false must be true: version "v1" is referenceable',
    );
    expect(() => synthOne(props({ versions: [] }))).toThrow('CompositeResourceDefinitionProps.versions: [] must list at least one version');
    expect(() => synthOne(props({ versions: [{ name: 'one', schema }] }))).toThrow(
      'CompositeResourceDefinitionProps.versions[0].name: "one" is not a Kubernetes version name',
    );

    const chart = Testing.chart();
    const xrd = new CompositeResourceDefinition(chart, 'xrd', props());
    expect(() => xrd.addVersion({ name: 'v2', schema, referenceable: true })).toThrow(
      'CompositeResourceDefinition.addVersion("v2").referenceable: true conflicts with referenceable version "v1"',
    );
    expect(() => xrd.addVersion({ name: 'v1', schema })).toThrow('CompositeResourceDefinition.addVersion("v1").name: "v1" is declared twice');
    xrd.addVersion({ name: 'v2', schema, referenceable: false });
    expect(xrd.versionNames).toEqual(['v1', 'v2']);
    expect(xrd.referenceableVersion).toBe('v1');
    const [o] = Testing.synth(chart);
    expect(o.spec.versions.filter((v: any) => v.referenceable)).toEqual([expect.objectContaining({ name: 'v1', served: true })]);
  });

  it.each(RESERVED_SPEC_FIELDS.map((f) => [f]))('rejects the reserved spec field %s', (field) => {
    const bad = { type: 'object', properties: { spec: { type: 'object', properties: { plan: { type: 'string' }, [field]: { type: 'object' } } } } };
    expect(() => synthOne(props({ versions: [{ name: 'v1', schema: bad }] }))).toThrow(
      `CompositeResourceDefinitionProps.versions[0].schema.properties.spec.properties: "${field}" is a reserved field`,
    );
  });

  it.each(RESERVED_STATUS_FIELDS.map((f) => [f]))('rejects the reserved status field %s', (field) => {
    const bad = { type: 'object', properties: { status: { type: 'object', properties: { [field]: { type: 'array' } } } } };
    expect(() => synthOne(props({ versions: [{ name: 'v1', schema: bad }] }))).toThrow(`schema.properties.status.properties: "${field}" is a reserved field`);
  });

  it('covers the reserved fields the issue names', () => {
    for (const f of [
      'compositionRef',
      'compositionSelector',
      'compositionRevisionRef',
      'compositionUpdatePolicy',
      'resourceRefs',
      'writeConnectionSecretToRef',
      'publishConnectionDetailsTo',
      'claimRef',
      'environmentConfigRefs',
    ]) {
      expect(RESERVED_SPEC_FIELDS).toContain(f);
    }
    expect(RESERVED_STATUS_FIELDS).toEqual(expect.arrayContaining(['conditions', 'connectionDetails']));
  });

  it('rejects schemas Crossplane cannot use', () => {
    expect(() => synthOne(props({ versions: [{ name: 'v1', schema: { type: 'string' } }] }))).toThrow(
      'CompositeResourceDefinitionProps.versions[0].schema.type: "string" must be "object"',
    );
    expect(() => synthOne(props({ versions: [{ name: 'v1', schema: { type: 'object', properties: { data: { type: 'string' } } } }] }))).toThrow(
      'CompositeResourceDefinitionProps.versions[0].schema.properties: "data" is not allowed at the top level',
    );
    expect(() =>
      synthOne(
        props({
          versions: [
            { name: 'v1', schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-validations': [{ message: 'no rule' }] } } } },
          ],
        }),
      ),
    ).toThrow('schema.properties.spec.x-kubernetes-validations[0].rule: undefined must be a non-empty CEL expression');
  });

  it('validates the remaining props', () => {
    expect(() => synthOne(props({ defaultCompositionName: 'Bad Name' }))).toThrow('CompositeResourceDefinitionProps.defaultCompositionName: "Bad Name"');
    expect(() => synthOne(props({ defaultCompositeDeletePolicy: 'Later' as unknown as CompositeDeletePolicy }))).toThrow(
      'CompositeResourceDefinitionProps.defaultCompositeDeletePolicy: "Later" must be Background or Foreground',
    );
    expect(() => synthOne(props({ claimNames: undefined, defaultCompositeDeletePolicy: CompositeDeletePolicy.FOREGROUND }))).toThrow(
      'defaultCompositeDeletePolicy: "Foreground" only applies to claims',
    );
    expect(() => synthOne(props({ connectionSecretKeys: ['a', 'a'] }))).toThrow('CompositeResourceDefinitionProps.connectionSecretKeys: "a" is listed twice');
    expect(() => synthOne(props({ connectionSecretKeys: ['a/b'] }))).toThrow('connectionSecretKeys: "a/b" is not a valid Secret key');
    const chart = Testing.chart();
    const xrd = new CompositeResourceDefinition(chart, 'xrd', props());
    expect(() => xrd.addPrinterColumn({ name: 'X', jsonPath: 'spec.x' })).toThrow('jsonPath: "spec.x" must be a JSONPath starting with "."');
    expect(() => xrd.addPrinterColumn({ name: 'X', jsonPath: '.spec.x' }, 'v9')).toThrow('addPrinterColumn(version): "v9" is not a version');
  });

  it('an XRD without claims emits no claimNames and no claim apiVersion', () => {
    const chart = Testing.chart();
    const xrd = new CompositeResourceDefinition(chart, 'xrd', props({ claimNames: undefined }));
    const [o] = Testing.synth(chart);
    expect(o.spec).not.toHaveProperty('claimNames');
    expect(xrd.claimApiVersion).toBeUndefined();
    expect(schemaErrors(XRD_V2, o, 'v1')).toEqual([]);
  });

  it('copies the schema, so later mutation of the input does not leak', () => {
    const s = JSON.parse(JSON.stringify(schema));
    const chart = Testing.chart();
    const xrd = new CompositeResourceDefinition(chart, 'xrd', props({ versions: [{ name: 'v1', schema: s }] }));
    s.properties.spec.properties.plan.enum.push('huge');
    expect((xrd.schemaOf('v1') as any).properties.spec.properties.plan.enum).toEqual(['small', 'big']);
    xrd.setDefaultComposition('later');
    expect(Testing.synth(chart)[0].spec.defaultCompositionRef).toEqual({ name: 'later' });
  });
});
