import { describe, expect, it } from '@jest/globals';
import { Parameter, ParameterLocation } from '../../constructs/dataservice/index.js';

const param = (props: ConstructorParameters<typeof Parameter>[1], loc = ParameterLocation.PARAMETERS) =>
  new Parameter('DataServiceProps.parameters[0]', props, loc);

describe('Parameter', () => {
  it('renders typed schemas: enums, bounds, items, nested properties, int-or-string, rules', () => {
    expect(param({ name: 'maxConnections', type: 'integer', minimum: 1, maximum: 10, description: 'd' }).toOpenApi()).toEqual({
      type: 'integer',
      minimum: 1,
      maximum: 10,
      description: 'd',
    });
    expect(param({ name: 'levels', type: 'array', items: { type: 'string', enum: ['a', 'b'] } }).toOpenApi()).toEqual({
      type: 'array',
      items: { type: 'string', enum: ['a', 'b'] },
    });
    expect(
      param({ name: 'groks', type: 'array', items: { type: 'object', properties: { pattern: { type: 'string' } }, required: ['pattern'] } }).toOpenApi(),
    ).toEqual({ type: 'array', items: { type: 'object', properties: { pattern: { type: 'string' } }, required: ['pattern'] } });
    expect(
      param({ name: 'ttl', type: 'int-or-string', rules: [{ rule: "type(self) == string ? self == 'off' : self >= 0", message: 'm' }] }).toOpenApi(),
    ).toEqual({
      anyOf: [{ type: 'integer' }, { type: 'string' }],
      'x-kubernetes-int-or-string': true,
      'x-kubernetes-validations': [{ rule: "type(self) == string ? self == 'off' : self >= 0", message: 'm' }],
    });
    expect(param({ name: 'cfg', type: 'object', preserveUnknownFields: true }).toOpenApi()).toEqual({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    });
  });

  it('knows its field path, CEL presence test and leaf paths for patches', () => {
    const p = param({ name: 'a', type: 'object', properties: { b: { type: 'object', properties: { c: { type: 'integer' }, d: { type: 'string' } } } } });
    expect(p.fieldPath).toBe('spec.parameters.a');
    expect(p.celHas).toBe('(has(self.parameters) && has(self.parameters.a))');
    expect(p.leaves()).toEqual([
      ['b', 'c'],
      ['b', 'd'],
    ]);
    const f = param({ name: 'expose', type: 'string' }, ParameterLocation.SPEC);
    expect(f.fieldPath).toBe('spec.expose');
    expect(f.celHas).toBe('has(self.expose)');
    expect(f.leaves()).toEqual([[]]);
  });

  it('restricts to backends and multi-node plans when asked', () => {
    const p = param({ name: 'workMem', type: 'string', backends: ['a9s-postgresql'], multiNodeOnly: true, brokerName: 'work_mem' });
    expect(p.allowedOn('a9s-postgresql')).toBe(true);
    expect(p.allowedOn('a8s-postgresql')).toBe(false);
    expect(p.multiNodeOnly).toBe(true);
    expect(p.brokerName).toBe('work_mem');
    expect(param({ name: 'x', type: 'string' }).allowedOn('anything')).toBe(true);
  });

  it('rejects names that collide with reserved fields, CEL keywords or are not camelCase', () => {
    expect(() => param({ name: 'compositionRef', type: 'string' }, ParameterLocation.SPEC)).toThrow(
      'DataServiceProps.parameters[0].name: "compositionRef" collides with a reserved field Crossplane injects',
    );
    expect(() => param({ name: 'writeConnectionSecretToRef', type: 'object' }, ParameterLocation.SPEC)).toThrow('reserved field');
    expect(() => param({ name: 'plan', type: 'string' }, ParameterLocation.SPEC)).toThrow('"plan" collides with a field the construct owns');
    expect(() => param({ name: 'namespace', type: 'string' })).toThrow('"namespace" is a CEL reserved word');
    expect(() => param({ name: 'max_connections', type: 'integer' })).toThrow('"max_connections" must be a camelCase identifier');
  });

  it('rejects inconsistent schemas, naming the prop and the value', () => {
    expect(() => param({ name: 'a', type: 'text' as never })).toThrow('DataServiceProps.parameters[0]("a").type: "text" must be one of');
    expect(() => param({ name: 'a', type: 'string', minimum: 1 })).toThrow('("a").minimum: 1 only applies to integer and number');
    expect(() => param({ name: 'a', type: 'integer', minimum: 5, maximum: 1 })).toThrow('("a").minimum: 5 is greater than maximum 1');
    expect(() => param({ name: 'a', type: 'integer', minimum: 1.5 })).toThrow('("a").minimum: 1.5 must be a finite integer');
    expect(() => param({ name: 'a', type: 'string', enum: ['x', 1] })).toThrow('("a").enum: 1 is not a valid string enum value');
    expect(() => param({ name: 'a', type: 'string', enum: ['x', 'x'] })).toThrow('lists a value twice');
    expect(() => param({ name: 'a', type: 'array' })).toThrow('("a").items: undefined must be set for an array parameter');
    expect(() => param({ name: 'a', type: 'object', properties: { b: { type: 'string' } }, required: ['c'] })).toThrow(
      '("a").required: "c" is not a declared property',
    );
    expect(() => param({ name: 'a', type: 'string', rules: [{ rule: '', message: 'm' }] })).toThrow(
      '("a").rules[0].rule: "" must be a non-empty CEL expression',
    );
    expect(() => param({ name: 'a', type: 'string', brokerName: 'has space' })).toThrow('("a").brokerName: "has space"');
    expect(() => param({ name: 'a', type: 'string', backends: [] })).toThrow('("a").backends: [] must name at least one backend');
  });
});
