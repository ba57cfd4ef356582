import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { JSONSchemaProps } from '../../contract/api/index.js';
import {
  checkXrdRules,
  deriveClaimCrd,
  deriveXrCrd,
  SchemaRegistry,
  SchemaValidator,
  type CompositeResourceDefinitionLike,
} from '../../constructs/validate/index.js';

const fixtures = join(fileURLToPath(new URL('.', import.meta.url)), '..', 'fixtures', 'klutch');
const pgXrd = parse(readFileSync(join(fixtures, 'xp-common-postgresql_definition.yaml'), 'utf8')) as CompositeResourceDefinitionLike;

const specOf = (crd: ReturnType<typeof deriveClaimCrd>) => crd.spec.versions[0].schema.openAPIV3Schema.properties!.spec;
const statusOf = (crd: ReturnType<typeof deriveClaimCrd>) => crd.spec.versions[0].schema.openAPIV3Schema.properties!.status;

describe('deriveClaimCrd (Klutch PostgreSQL XRD)', () => {
  it.each(['2', '1.20'] as const)('Crossplane %s: names, scope, categories, printer columns, status subresource', (crossplane) => {
    const crd = deriveClaimCrd(pgXrd, { crossplane });
    expect(crd.metadata.name).toBe('postgresqlinstances.anynines.com');
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names).toEqual({ kind: 'PostgresqlInstance', plural: 'postgresqlinstances', categories: ['claim'] });
    const v = crd.spec.versions[0];
    expect([v.name, v.served, v.storage]).toEqual(['v1', true, true]);
    expect(v.subresources).toEqual({ status: {} });
    expect(v.additionalPrinterColumns!.map((c) => `${c.name}=${c.jsonPath}`)).toEqual([
      "SYNCED=.status.conditions[?(@.type=='Synced')].status",
      "READY=.status.conditions[?(@.type=='Ready')].status",
      'CONNECTION-SECRET=.spec.writeConnectionSecretToRef.name',
      'AGE=.metadata.creationTimestamp',
    ]);
  });

  it('injects the claim spec fields next to the XRD fields, keeps the XRD rules, drops unknown root keys', () => {
    const crd = deriveClaimCrd(pgXrd);
    const root = crd.spec.versions[0].schema.openAPIV3Schema;
    expect(Object.keys(root).sort()).toEqual(['properties', 'required', 'type']); // Klutch's `supported:` anchor block is gone
    expect(root.required).toEqual(['spec']);
    expect(root.properties!.metadata).toEqual({ type: 'object', properties: { name: { type: 'string', maxLength: 63 } } });
    const spec = specOf(crd);
    expect(Object.keys(spec.properties!).sort()).toEqual(
      [
        'acceptsIncomplete',
        'compositeDeletePolicy',
        'compositionRef',
        'compositionRevisionRef',
        'compositionRevisionSelector',
        'compositionSelector',
        'compositionUpdatePolicy',
        'expose',
        'parameters',
        'plan',
        'resourceRef',
        'service',
        'writeConnectionSecretToRef',
      ].sort(),
    );
    expect(spec.required).toEqual(['service', 'plan']);
    expect(spec.properties!.compositeDeletePolicy).toEqual({ type: 'string', enum: ['Background', 'Foreground'], default: 'Foreground' });
    expect(spec.properties!.writeConnectionSecretToRef).toEqual({ type: 'object', required: ['name'], properties: { name: { type: 'string' } } });
    expect(spec['x-kubernetes-validations']!.length).toBe(
      (pgXrd.spec.versions[0].schema!.openAPIV3Schema!.properties!.spec['x-kubernetes-validations'] as unknown[]).length,
    );
    expect(Object.keys(statusOf(crd).properties!)).toEqual(expect.arrayContaining(['conditions', 'connectionDetails', 'claimConditionTypes']));
    expect(statusOf(crd).properties!.conditions.items!.properties!.observedGeneration).toEqual({ type: 'integer', format: 'int64' });
  });

  it('Crossplane 1.20 differs: publishConnectionDetailsTo on the claim, no observedGeneration on conditions', () => {
    const v2 = deriveClaimCrd(pgXrd, { crossplane: '2' });
    const v120 = deriveClaimCrd(pgXrd, { crossplane: '1.20' });
    expect(specOf(v2).properties!.publishConnectionDetailsTo).toBeUndefined();
    expect(specOf(v120).properties!.publishConnectionDetailsTo).toMatchObject({
      required: ['name'],
      properties: { configRef: { default: { name: 'default' } } },
    });
    expect(statusOf(v120).properties!.conditions.items!.properties!.observedGeneration).toBeUndefined();
  });

  it('rejects claim names that collide with the XR names, naming the field', () => {
    const bad = structuredClone(pgXrd);
    bad.spec.claimNames = { kind: 'XPostgresqlInstance', plural: 'pgs' };
    expect(() => deriveClaimCrd(bad)).toThrow('spec.claimNames.kind "XPostgresqlInstance" conflicts with composite resource name');
    const none = structuredClone(pgXrd);
    delete none.spec.claimNames;
    expect(() => deriveClaimCrd(none)).toThrow('spec.claimNames is missing');
  });
});

describe('deriveXrCrd', () => {
  it('legacy (v1) XRDs: cluster-scoped, claimRef/resourceRefs/writeConnectionSecretToRef directly under spec', () => {
    for (const crossplane of ['2', '1.20'] as const) {
      const crd = deriveXrCrd(pgXrd, { crossplane });
      expect(crd.metadata.name).toBe('xpostgresqlinstances.anynines.com');
      expect(crd.spec.scope).toBe('Cluster');
      expect(crd.spec.names.categories).toEqual(['composite']);
      const spec = specOf(crd);
      expect(spec.properties!.claimRef!.required).toEqual(['apiVersion', 'kind', 'namespace', 'name']);
      expect(spec.properties!.writeConnectionSecretToRef!.required).toEqual(['name', 'namespace']);
      expect(spec.properties!.resourceRefs!['x-kubernetes-list-type']).toBe('atomic');
      expect(spec.properties!.crossplane).toBeUndefined();
      expect(crd.spec.versions[0].additionalPrinterColumns!.find((c) => c.name === 'COMPOSITION')!.jsonPath).toBe('.spec.compositionRef.name');
    }
  });

  it('modern v2 XRDs nest Crossplane fields under spec.crossplane; namespaced ones have no namespace in resourceRefs', () => {
    const modern: CompositeResourceDefinitionLike = {
      apiVersion: 'apiextensions.crossplane.io/v2',
      kind: 'CompositeResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        names: { kind: 'Widget', plural: 'widgets' },
        defaultCompositionUpdatePolicy: 'Manual',
        versions: [
          {
            name: 'v1',
            served: true,
            referenceable: true,
            schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } },
          },
        ],
      },
    };
    const crd = deriveXrCrd(modern);
    expect(crd.spec.scope).toBe('Namespaced');
    const spec = specOf(crd);
    expect(Object.keys(spec.properties!).sort()).toEqual(['crossplane', 'size']);
    const xp = spec.properties!.crossplane.properties!;
    expect(xp.compositionUpdatePolicy).toEqual({ type: 'string', enum: ['Automatic', 'Manual'], default: 'Manual' });
    expect(Object.keys(xp.resourceRefs.items!.properties!).sort()).toEqual(['apiVersion', 'kind', 'name']);
    expect(Object.keys(statusOf(crd).properties!)).toEqual(['conditions']);
    const cluster = deriveXrCrd({ ...modern, spec: { ...modern.spec, scope: 'Cluster' } });
    expect(cluster.spec.scope).toBe('Cluster');
    expect(Object.keys(specOf(cluster).properties!.crossplane.properties!.resourceRefs.items!.properties!).sort()).toEqual([
      'apiVersion',
      'kind',
      'name',
      'namespace',
    ]);
  });

  it('a version without schema is an error naming the field', () => {
    const bad = structuredClone(pgXrd);
    delete bad.spec.versions[0].schema;
    expect(() => deriveXrCrd(bad)).toThrow('spec.versions[0].schema.openAPIV3Schema: custom resource validation cannot be nil');
  });
});

describe('validating claims against the derived claim CRD (Klutch PostgreSQL rules)', () => {
  const reg = new SchemaRegistry();
  reg.addXrd(pgXrd, 'xp-common-postgresql_definition.yaml', ['2', '1.20']);
  const claim = (spec: Record<string, unknown>, name = 'db') => ({
    apiVersion: 'anynines.com/v1',
    kind: 'PostgresqlInstance',
    metadata: { name, namespace: 'app' },
    spec,
  });
  const errs = (o: unknown, old?: unknown) => reg.validate(o, old).errors.map((e) => `${e.path}: ${e.message}`);
  const a9s = { service: 'a9s-postgresql13', plan: 'postgresql-single-small', compositionRef: { name: 'a9s-postgresql' } };

  it('registers claim and XR kinds for both Crossplane releases', () => {
    expect(reg.lookup('anynines.com/v1', 'PostgresqlInstance').map((s) => s.target)).toEqual(['2', '1.20']);
    expect(reg.lookup('anynines.com/v1', 'XPostgresqlInstance').map((s) => s.scope)).toEqual(['Cluster', 'Cluster']);
  });

  it('accepts valid a9s and a8s claims', () => {
    expect(errs(claim(a9s))).toEqual([]);
    expect(
      errs(
        claim({
          service: 'a9s-postgresql14',
          plan: 'postgresql-replica-medium',
          compositionRef: { name: 'a8s-postgresql' },
          expose: 'LoadBalancer',
          writeConnectionSecretToRef: { name: 'db-creds' },
        }),
      ),
    ).toEqual([]);
  });

  it('rejects an unsupported service, an a8s-only parameter on a9s, bionic on pg15, and a long name', () => {
    expect(errs(claim({ ...a9s, service: 'a9s-postgresql99' }))).toEqual(['spec: Unsupported service used for postgresql']);
    expect(errs(claim({ ...a9s, parameters: { sslCiphers: 'HIGH' } }))).toEqual(['spec: parameters.sslCiphers is not supported for a9s-postgresql']);
    expect(errs(claim({ ...a9s, service: 'a9s-postgresql15', plan: 'postgresql-single-small-bionic' }))).toEqual([
      'spec: Bionic plans are only supported by a9s PostgreSQL 13',
    ]);
    expect(errs(claim(a9s, 'x'.repeat(64)))).toEqual([`metadata.name: Invalid value: "${'x'.repeat(64)}": must NOT have more than 63 characters`]);
    expect(errs(claim({ ...a9s, writeConnectionSecretToRef: { name: 's', namespace: 'other' } }))).toEqual([
      'spec.writeConnectionSecretToRef.namespace: unknown field "namespace" (not declared in the schema)',
    ]);
  });

  it('a claim without compositionRef fails the rules that read it (as on a real API server)', () => {
    const e = errs(claim({ service: 'a9s-postgresql13', plan: 'postgresql-single-small' }));
    expect(e.length).toBeGreaterThan(0);
    expect(e[0]).toMatch(/^spec: rule ".*self\.compositionRef\.name.*" could not be evaluated/);
  });

  it('update pairs: plan upgrade allowed, downgrade and service change rejected', () => {
    const big = claim({ ...a9s, plan: 'postgresql-single-big' });
    expect(errs(big, claim(a9s))).toEqual([]);
    expect(errs(claim(a9s), big)).toEqual(['spec.plan: Transition from bigger to smaller plan size is not supported.']);
    expect(errs(claim({ ...a9s, service: 'a9s-postgresql15' }), claim(a9s))).toEqual(['spec.service: Service is an immutable field']);
    const replica = claim({ ...a9s, plan: 'postgresql-replica-small' });
    expect(errs(replica, claim(a9s))).toEqual([]);
    expect(errs(claim(a9s), replica)).toEqual(['spec.plan: Migration from clustered to single Data Service Instance is not supported.']);
    expect(errs(claim({ ...a9s, plan: 'postgresql-single-small-ssl' }), claim(a9s))).toEqual([
      'spec.plan: Plan migrations not possible from Non-SSL to SSL and SSL to Non-SSL',
    ]);
  });

  it('the XR CRD accepts an XR with a claimRef and rejects an incomplete one', () => {
    const xr = (extra: Record<string, unknown>) => ({
      apiVersion: 'anynines.com/v1',
      kind: 'XPostgresqlInstance',
      metadata: { name: 'db-abcde' },
      spec: { ...a9s, ...extra },
    });
    expect(errs(xr({ claimRef: { apiVersion: 'anynines.com/v1', kind: 'PostgresqlInstance', namespace: 'app', name: 'db' } }))).toEqual([]);
    expect(errs(xr({ claimRef: { apiVersion: 'anynines.com/v1', kind: 'PostgresqlInstance', name: 'db' } }))).toEqual([
      'spec.claimRef.namespace: Required value',
    ]);
  });

  it('derived schemas validate with the generic validator too', () => {
    const schema = deriveClaimCrd(pgXrd).spec.versions[0].schema.openAPIV3Schema as JSONSchemaProps;
    expect(new SchemaValidator(schema).validate(claim(a9s))).toEqual([]);
  });
});

describe('checkXrdRules (rules the XRD CRD schema does not carry)', () => {
  it('accepts the Klutch XRD and names each broken rule', () => {
    expect(checkXrdRules(pgXrd)).toEqual([]);
    const bad = structuredClone(pgXrd);
    bad.metadata = { name: 'postgres.anynines.com' };
    bad.spec.versions = [{ ...bad.spec.versions[0], served: false }];
    expect(checkXrdRules(bad).map((e) => `${e.path}: ${e.message}`)).toEqual([
      'metadata.name: Invalid value: "postgres.anynines.com": must be spec.names.plural+"."+spec.group ("xpostgresqlinstances.anynines.com")',
      'spec.versions[0].served: Invalid value: false: the referenceable version "v1" must be served',
    ]);
    bad.spec.versions = [{ ...pgXrd.spec.versions[0] }, { ...pgXrd.spec.versions[0], name: 'v2' }];
    expect(checkXrdRules(bad).map((e) => e.path)).toEqual(['metadata.name', 'spec.versions']);
    const reserved = structuredClone(pgXrd);
    reserved.spec.versions[0].schema!.openAPIV3Schema!.properties!.spec.properties!.claimRef = { type: 'object' };
    expect(checkXrdRules(reserved).map((e) => `${e.path}: ${e.message}`)).toEqual([
      'spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.claimRef: Forbidden: spec.claimRef is reserved by Crossplane (LegacyCluster XRDs) and would be overwritten; rename the field',
    ]);
  });
});

describe('defaults Crossplane adds (the XRD CRD defaults its policies, so the stored XRD always has them)', () => {
  const bare: CompositeResourceDefinitionLike = {
    apiVersion: 'apiextensions.crossplane.io/v1',
    kind: 'CompositeResourceDefinition',
    metadata: { name: 'xthings.example.com' },
    spec: {
      group: 'example.com',
      names: { kind: 'XThing', plural: 'xthings' },
      claimNames: { kind: 'Thing', plural: 'things' },
      versions: [{ name: 'v1', served: true, referenceable: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object' } } } } }],
    },
  };
  it.each(['2', '1.20'] as const)(
    'Crossplane %s: XR compositionUpdatePolicy defaults to Automatic, claim compositeDeletePolicy to Background',
    (crossplane) => {
      expect(specOf(deriveXrCrd(bare, { crossplane })).properties!.compositionUpdatePolicy).toEqual({
        type: 'string',
        enum: ['Automatic', 'Manual'],
        default: 'Automatic',
      });
      const claim = specOf(deriveClaimCrd(bare, { crossplane })).properties!;
      expect(claim.compositeDeletePolicy).toEqual({ type: 'string', enum: ['Background', 'Foreground'], default: 'Background' });
      // The claim's compositionUpdatePolicy gets no default.
      expect(claim.compositionUpdatePolicy).toEqual({ type: 'string', enum: ['Automatic', 'Manual'] });
    },
  );
});
