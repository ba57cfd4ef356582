import { describe, expect, it } from '@jest/globals';
import { newBindingProvider, newBindingResponse, type JSONSchemaProps } from '../../contract/api/index.js';
import { isTransitionRule, parseWire, pointerToPath, SchemaValidator, toAjvSchema, validateWire } from '../../constructs/validate/index.js';

/** A CRD root schema with the given spec schema. */
function root(spec: JSONSchemaProps, extra: Partial<JSONSchemaProps> = {}): JSONSchemaProps {
  return { type: 'object', properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, spec }, ...extra };
}
const obj = (spec: unknown, name = 'x') => ({ apiVersion: 'e.com/v1', kind: 'W', metadata: { name }, spec });
const paths = (v: SchemaValidator, o: unknown, old?: unknown) => v.validate(o, old).map((e) => `${e.path}: ${e.message}`);

describe('OpenAPI quirks', () => {
  it('nullable admits null only where declared', () => {
    const v = new SchemaValidator(root({ type: 'object', properties: { a: { type: 'string', nullable: true }, b: { type: 'string' } } }));
    expect(paths(v, obj({ a: null }))).toEqual([]);
    expect(paths(v, obj({ b: null }))).toEqual(['spec.b: Invalid value: null: must be of type string']);
  });

  it('x-kubernetes-int-or-string admits integers and strings; the pattern applies to strings', () => {
    const v = new SchemaValidator(
      root({
        type: 'object',
        properties: { q: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true, pattern: '^[0-9]+(Mi|Gi)?$' } },
      }),
    );
    expect(paths(v, obj({ q: 5 }))).toEqual([]);
    expect(paths(v, obj({ q: '5Gi' }))).toEqual([]);
    expect(paths(v, obj({ q: 'lots' }))).toEqual([`spec.q: Invalid value: "lots": must match '^[0-9]+(Mi|Gi)?$'`]);
    expect(paths(v, obj({ q: true }))).toEqual(['spec.q: Invalid value: true: must be of type integer or string']);
  });

  it('unknown fields are errors unless x-kubernetes-preserve-unknown-fields', () => {
    const v = new SchemaValidator(
      root({
        type: 'object',
        properties: {
          strict: { type: 'object', properties: { a: { type: 'string' } } },
          free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        },
      }),
    );
    expect(paths(v, obj({ strict: { a: 'x', b: 1 }, free: { anything: { goes: [1] } } }))).toEqual([
      'spec.strict.b: unknown field "b" (not declared in the schema)',
    ]);
    const lax = new SchemaValidator(root({ type: 'object', properties: { a: { type: 'string' } } }), { rejectUnknownFields: false });
    expect(paths(lax, obj({ a: 'x', b: 1 }))).toEqual([]);
  });

  it('embedded resources admit apiVersion/kind/metadata and check metadata', () => {
    const v = new SchemaValidator(
      root({
        type: 'object',
        properties: { manifest: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } },
      }),
    );
    expect(paths(v, obj({ manifest: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { a: 'b' } }, data: { k: 'v' } } }))).toEqual([]);
    expect(paths(v, obj({ manifest: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { labels: { a: 7 } } } }))).toEqual([
      'spec.manifest.metadata.labels.a: Invalid value: 7: must be of type string',
    ]);
  });

  it('checks root metadata: custom resource names are DNS subdomains; labels, namespace', () => {
    const v = new SchemaValidator(root({ type: 'object' }));
    expect(paths(v, { apiVersion: 'e.com/v1', kind: 'W', metadata: { name: 'a/b', namespace: 'Bad_NS', labels: { l: 'x'.repeat(64) } } })).toEqual([
      `metadata.name: Invalid value: "a/b": must match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'`,
      `metadata.namespace: Invalid value: "Bad_NS": must match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'`,
      `metadata.labels.l: Invalid value: "${'x'.repeat(64)}": must NOT have more than 63 characters`,
    ]);
  });

  it('OpenAPI v3.0 boolean exclusiveMinimum becomes a number bound', () => {
    const s = toAjvSchema(root({ type: 'object', properties: { n: { type: 'integer', minimum: 0, exclusiveMinimum: true } } }));
    expect((s.properties as Record<string, { properties: Record<string, unknown> }>).spec.properties.n).toEqual({ type: 'integer', exclusiveMinimum: 0 });
    const v = new SchemaValidator(root({ type: 'object', properties: { n: { type: 'integer', minimum: 0, exclusiveMinimum: true } } }));
    expect(paths(v, obj({ n: 0 }))).toEqual(['spec.n: Invalid value: 0: must be > 0']);
  });

  it('applies defaults (nested) before validating, like the API server', () => {
    const s = root({
      type: 'object',
      properties: {
        sel: { type: 'object', default: {}, properties: { names: { type: 'array', items: { type: 'string' }, default: ['*'] } } },
        mode: { type: 'string', enum: ['A', 'B'], default: 'A' },
      },
      required: ['mode'],
    });
    const v = new SchemaValidator(s);
    expect(v.defaulted(obj({})).spec).toEqual({ sel: { names: ['*'] }, mode: 'A' });
    expect(paths(v, obj({}))).toEqual([]);
  });

  it('partial mode (Composition bases): no required fields, no CEL; types and unknown fields still checked', () => {
    const v = new SchemaValidator(
      root({
        type: 'object',
        required: ['size'],
        properties: { size: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self > 5' }] }, tier: { type: 'string' } },
      }),
    );
    expect(paths(v, obj({ size: 1 }))).toEqual(['spec.size: failed rule: self > 5']);
    expect(v.validate(obj({ size: 1 }), undefined, { partial: true })).toEqual([]);
    expect(v.validate(obj({ tier: 3, x: 1 }), undefined, { partial: true }).map((e) => e.path)).toEqual(['spec.x', 'spec.tier']);
  });

  it('reports required, enum and type errors with path and received value', () => {
    const v = new SchemaValidator(
      root({
        type: 'object',
        required: ['size'],
        properties: { size: { type: 'integer' }, tier: { type: 'string', enum: ['gold', 'silver'] }, tags: { type: 'array', items: { type: 'string' } } },
      }),
    );
    expect(paths(v, obj({ tier: 'bronze', tags: ['a', 3] }))).toEqual([
      'spec.size: Required value',
      'spec.tier: Unsupported value: "bronze": supported values: "gold", "silver"',
      'spec.tags[1]: Invalid value: 3: must be of type string',
    ]);
    expect(pointerToPath('/spec/a~1b/0/c')).toBe('spec["a/b"][0].c');
  });
});

describe('CEL rules (x-kubernetes-validations)', () => {
  const rule = (r: string, message?: string) => ({ rule: r, ...(message ? { message } : {}) });

  it('evaluates has(), size(), matches, all/exists and integer comparisons with the rule message and path', () => {
    const v = new SchemaValidator(
      root({
        type: 'object',
        properties: {
          replicas: { type: 'integer', 'x-kubernetes-validations': [rule('self > 0 && self <= 5', 'replicas must be 1..5')] },
          names: {
            type: 'array',
            items: { type: 'string' },
            'x-kubernetes-validations': [rule("self.all(n, n.matches('^[a-z]+$'))", 'only lower-case names'), rule('size(self) <= 2')],
          },
          roles: { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [rule("self.exists(r, r == 'admin')", 'an admin is needed')] },
          a: { type: 'boolean' },
          b: { type: 'boolean' },
        },
        'x-kubernetes-validations': [rule('!(has(self.a) && has(self.b))', 'a and b are mutually exclusive')],
      }),
    );
    expect(paths(v, obj({ replicas: 3, names: ['ab'], roles: ['admin'] }))).toEqual([]);
    expect(paths(v, obj({ replicas: 0, names: ['Ab', 'c', 'd'], roles: ['user'], a: true, b: false }))).toEqual([
      'spec: a and b are mutually exclusive',
      'spec.replicas: replicas must be 1..5',
      'spec.names: only lower-case names',
      'spec.names: failed rule: size(self) <= 2',
      'spec.roles: an admin is needed',
    ]);
  });

  it('rules see the root object (metadata.name rules)', () => {
    const v = new SchemaValidator(
      root(
        { type: 'object', properties: { group: { type: 'string' } } },
        { 'x-kubernetes-validations': [rule('self.metadata.name.endsWith("." + self.spec.group)', 'name must end with the group')] },
      ),
    );
    expect(paths(v, obj({ group: 'e.com' }, 'ws.e.com'))).toEqual([]);
    expect(paths(v, obj({ group: 'e.com' }, 'ws.x.com'))).toEqual([': name must end with the group']);
  });

  it('transition rules run only on updates, with oldSelf correlated through properties and list-map keys', () => {
    const v = new SchemaValidator(
      root({
        type: 'object',
        properties: {
          service: { type: 'string', 'x-kubernetes-validations': [rule('self == oldSelf', 'service is immutable')] },
          plans: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
            items: {
              type: 'object',
              required: ['name'],
              properties: { name: { type: 'string' }, size: { type: 'integer', 'x-kubernetes-validations': [rule('self >= oldSelf', 'no downsizing')] } },
            },
          },
          atomic: {
            type: 'array',
            items: { type: 'object', properties: { size: { type: 'integer', 'x-kubernetes-validations': [rule('self >= oldSelf', 'never evaluated')] } } },
          },
        },
      }),
    );
    const old = obj({
      service: 'pg13',
      plans: [
        { name: 'a', size: 2 },
        { name: 'b', size: 5 },
      ],
      atomic: [{ size: 9 }],
    });
    // On create, transition rules are skipped.
    expect(paths(v, obj({ service: 'pg15', plans: [{ name: 'a', size: 1 }] }))).toEqual([]);
    // On update, items correlate by key (b moved to index 0), never through atomic lists.
    expect(
      paths(
        v,
        obj({
          service: 'pg15',
          plans: [
            { name: 'b', size: 4 },
            { name: 'a', size: 3 },
            { name: 'c', size: 1 },
          ],
          atomic: [{ size: 1 }],
        }),
        old,
      ),
    ).toEqual(['spec.service: service is immutable', 'spec.plans[0].size: no downsizing']);
    expect(paths(v, old, old)).toEqual([]);
  });

  it('list-type set and map reject duplicates', () => {
    const v = new SchemaValidator(
      root({
        type: 'object',
        properties: {
          s: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
          m: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['port', 'protocol'],
            items: { type: 'object', properties: { port: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' } } },
          },
        },
      }),
    );
    expect(paths(v, obj({ s: ['a', 'b', 'a'], m: [{ port: 80 }, { port: 80, protocol: 'UDP' }, { port: 80, protocol: 'TCP' }] }))).toEqual([
      'spec.s[2]: Duplicate value: "a"',
      'spec.m[2]: Duplicate value: [80,"TCP"]',
    ]);
  });

  it('messageExpression, errors at evaluation time and type() on int-or-string', () => {
    const v = new SchemaValidator(
      root({
        type: 'object',
        properties: {
          n: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self < 10', messageExpression: "'n is ' + string(self) + ', want < 10'" }] },
          t: {
            anyOf: [{ type: 'integer' }, { type: 'string' }],
            'x-kubernetes-int-or-string': true,
            'x-kubernetes-validations': [rule("type(self) == string ? self == 'off' : self >= 0", 'off or >= 0')],
          },
          ref: { type: 'object', properties: { name: { type: 'string' } } },
        },
        'x-kubernetes-validations': [rule("self.ref.name == 'a'", 'ref must be a')],
      }),
    );
    expect(paths(v, obj({ n: 12, t: 'on', ref: { name: 'a' } }))).toEqual(['spec.n: n is 12, want < 10', 'spec.t: off or >= 0']);
    expect(paths(v, obj({ n: 1, t: -1, ref: { name: 'a' } }))).toEqual(['spec.t: off or >= 0']);
    expect(paths(v, obj({ n: 1, t: 'off' }))[0]).toMatch(/^spec: rule "self.ref.name == 'a'" could not be evaluated: /);
  });

  it('does not run rules when a value has the wrong type (as the API server)', () => {
    const v = new SchemaValidator(root({ type: 'object', properties: { n: { type: 'integer', 'x-kubernetes-validations': [rule('self > 1')] } } }));
    expect(paths(v, obj({ n: 'x' }))).toEqual(['spec.n: Invalid value: "x": must be of type integer']);
  });

  it('recognises transition rules by an oldSelf identifier, not inside strings', () => {
    expect(isTransitionRule('self == oldSelf')).toBe(true);
    expect(isTransitionRule("self.contains('oldSelf')")).toBe(false);
    expect(isTransitionRule('self.oldSelfish == 1')).toBe(false);
  });
});

describe('wire documents (BindingProvider, BindingResponse)', () => {
  it('parseWire accepts documents built with the constructors and names bad fields', () => {
    const p = newBindingProvider('anynines', 'v1.5.0', 'https://bind.example.com/authorize');
    expect(parseWire('BindingProvider', JSON.stringify(p))).toEqual(p);
    expect(validateWire('BindingProvider', { ...p, authenticationMethods: [] }).map((e) => `${e.path}: ${e.message}`)).toEqual([
      'authenticationMethods: Invalid value: []: must NOT have fewer than 1 items',
    ]);
    const r = newBindingResponse({
      sessionID: 's',
      identity: 'iss/sub',
      kubeconfig: 'k',
      requests: [{ metadata: { name: 'pg.anynines.com' }, spec: { resources: [{ resource: 'postgresqlinstances', group: 'anynines.com' }] } }],
    });
    expect(parseWire('BindingResponse', JSON.stringify(r)).requests).toHaveLength(1);
    const bad = { ...r, kubeconfig: 'not base64!', requests: [{ metadata: { name: 'x' }, spec: { resources: [] } }] };
    expect(() => parseWire('BindingResponse', bad)).toThrow('BindingResponse is invalid:\n  kubeconfig: Invalid value: "not base64!": must be a valid byte');
    expect(() => parseWire('BindingResponse', { ...r, requests: [{ metadata: { name: 'x' }, spec: { resources: [] } }] })).toThrow(
      'BindingResponse is invalid:\n  requests[0].spec.resources: Invalid value: []: must NOT have fewer than 1 items',
    );
    expect(() => parseWire('BindingProvider', '{oops')).toThrow(/^BindingProvider: not valid JSON/);
  });
});

describe('Kubernetes CEL libraries (lists, regex)', () => {
  const v = new SchemaValidator(
    root({
      type: 'object',
      properties: {
        ports: {
          type: 'array',
          items: { type: 'integer' },
          'x-kubernetes-validations': [
            { rule: 'self.isSorted()', message: 'ports must be sorted' },
            { rule: 'self.sum() <= 1000', message: 'sum too big' },
            { rule: 'self.min() > 0 && self.max() < 700', message: 'out of range' },
            { rule: 'self.indexOf(443) == self.lastIndexOf(443)', message: '443 twice' },
          ],
        },
        names: {
          type: 'array',
          items: { type: 'string' },
          'x-kubernetes-validations': [{ rule: "self.isSorted() && self.indexOf('b') != -1", message: 'sorted with b' }],
        },
        image: {
          type: 'string',
          'x-kubernetes-validations': [{ rule: "self.find('[0-9]+$') != '' && size(self.findAll('[a-z]+')) == 2", message: 'registry/name:version' }],
        },
      },
    }),
  );

  it('accepts values that satisfy the rules', () => {
    expect(paths(v, obj({ ports: [80, 443], names: ['a', 'b'], image: 'reg/app:3' }))).toEqual([]);
  });

  it('rejects with each rule message', () => {
    expect(paths(v, obj({ ports: [443, 80, 443], names: ['b', 'a'], image: 'app:latest' }))).toEqual([
      'spec.ports: ports must be sorted',
      'spec.ports: 443 twice',
      'spec.names: sorted with b',
      'spec.image: registry/name:version',
    ]);
    expect(paths(v, obj({ ports: [600, 650] }))).toEqual(['spec.ports: sum too big']);
    expect(paths(v, obj({ ports: [] }))[0]).toMatch(
      /^spec.ports: rule "self.min\(\) > 0 && self.max\(\) < 700" could not be evaluated: .*min called on empty list/,
    );
  });
});
