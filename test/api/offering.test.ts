import { describe, expect, it } from '@jest/globals';
import { Chart, Testing } from 'cdk8s';
import { OFFERING_ANNOTATION, parseOffering } from '../../contract/api/index.js';
import { Catalogue } from '../../constructs/catalogue/index.js';

describe('catalogue offering annotation', () => {
  const chart = new Chart(Testing.app(), 'c');
  new Catalogue(chart, 'Cat', { services: ['postgresql', 'keyvalue'], operations: [] });
  const objs = Testing.synth(chart) as any[];

  it('DataService writes it on its export template; it agrees with the claim schema', () => {
    const templates = objs.filter((o) => o.kind === 'APIServiceExportTemplate');
    expect(templates.map((t) => t.metadata.name).sort()).toEqual(['keyvalueinstances', 'postgresqlinstances']);
    for (const t of templates) {
      const { offering, error } = parseOffering(t.metadata.annotations[OFFERING_ANNOTATION]);
      expect(error).toBeUndefined();
      const xrd = objs.find((o) => o.kind === 'CompositeResourceDefinition' && o.spec.claimNames.plural === t.spec.APIServiceSelector.resource);
      const spec = xrd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties;
      expect(offering!.plans.map((p) => p.name)).toEqual(spec.plan.enum);
      expect(offering!.services.map((s) => s.name)).toEqual(spec.service.enum);
      const comps = objs
        .filter((o) => o.kind === 'Composition' && o.spec.compositeTypeRef.kind === xrd.spec.names.kind)
        .map((o) => o.metadata.name)
        .sort();
      expect(offering!.backends.map((b) => b.name).sort()).toEqual(comps);
      expect(offering!.backends.filter((b) => b.default).map((b) => b.name)).toEqual([xrd.spec.defaultCompositionRef.name]);
    }
    const pg = parseOffering(templates.find((t) => t.metadata.name === 'postgresqlinstances').metadata.annotations[OFFERING_ANNOTATION]).offering!;
    const ssl = pg.plans.find((p) => p.flags.includes('ssl'))!;
    expect(ssl).toMatchObject({ topology: expect.any(String), replicas: expect.any(Number) });
    expect(pg.plans.some((p) => p.cpu && p.memory && p.storage)).toBe(true);
  });

  it('parseOffering names the broken field', () => {
    expect(parseOffering('{').error).toMatch(/^catalogue.klutch-kit.io\/offering: not JSON/);
    expect(parseOffering('{"services":[],"plans":[{"name":"x","topology":"single","replicas":"1","flags":[]}],"backends":[]}').error).toBe(
      'catalogue.klutch-kit.io/offering: plans[0]: {"name":"x","topology":"single","replicas":"1","flags":[]} must be { name, topology, replicas, flags, cpu?, memory?, storage?, description? }',
    );
    expect(parseOffering('{"services":[],"plans":[],"backends":[{"name":"a8s","automation":"a8s","services":[],"plans":[]}]}').error).toContain('backends[0]');
  });
});
