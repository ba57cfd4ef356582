import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { Chart, Testing } from 'cdk8s';
import { parse } from 'yaml';
import { Catalogue } from '../../../constructs/catalogue/index.js';
import { deriveClaimCrd } from '../../../constructs/validate/index.js';
import { defaultRegistry } from '../../../constructs/validate/index.js';
import { Catalog, exampleClaim, specParameters, type Crd, type ExportTemplate } from '../../../runtime/backend/catalog.js';
import { matchesQuery, resourcesPage, RESOURCES_CSP } from '../../../runtime/backend/html.js';
import type { KubeClient } from '../../../runtime/core/client.js';
import { ObjectStore } from '../../../runtime/core/object-cache.js';

/** The catalogue's objects as the backend reads them: the templates, and the claim CRDs Crossplane derives from the XRDs. */
function provider(services: string[]) {
  const chart = new Chart(Testing.app(), 'c');
  new Catalogue(chart, 'Cat', { services: services as never, operations: ['servicebinding'] });
  const objs = Testing.synth(chart) as any[];
  const templates = objs.filter((o) => o.kind === 'APIServiceExportTemplate') as ExportTemplate[];
  const crds = objs.filter((o) => o.kind === 'CompositeResourceDefinition').map((x) => deriveClaimCrd(x) as unknown as Crd);
  return { templates, crds };
}

function catalog(services: string[]): Catalog {
  const { templates, crds } = provider(services);
  const c = new Catalog({} as KubeClient, 'Namespaced');
  c.cache = { synced: () => true, templates: ObjectStore.of(...templates), crds: ObjectStore.of(...crds) };
  return c;
}

describe('catalogue data (templates + CRDs, one source of truth)', () => {
  it('lists plans with sizes and flags, services, backends and typed parameters with ranges', async () => {
    const apis = await catalog(['postgresql']).list();
    const pg = apis.find((a) => a.resource === 'postgresqlinstances')!;
    expect(pg.version).toBe('v1');
    const plan = pg.offering!.plans.find((p) => p.flags.includes('ssl') && p.topology !== 'single')!;
    expect(plan).toMatchObject({ replicas: expect.any(Number), cpu: expect.any(String), memory: expect.any(String) });
    expect(pg.offering!.backends.map((b) => b.name).sort()).toEqual(['a8s-postgresql', 'a9s-postgresql']);
    const paths = pg.parameters!.map((p) => p.path);
    expect(paths).toEqual(expect.arrayContaining(['service', 'plan']));
    expect(paths).not.toContain('compositionRef');
    expect(pg.parameters!.find((p) => p.path === 'plan')).toMatchObject({ type: 'string', required: true, enum: pg.offering!.plans.map((p) => p.name) });
    expect(pg.parameters!.filter((p) => p.constraints.length > 0).length).toBeGreaterThan(0);
    expect(pg.parameters!.filter((p) => p.description).length).toBeGreaterThan(0);
  });

  it('the example claim is valid against the claim CRD', async () => {
    const { crds } = provider(['postgresql', 'keyvalue']);
    const reg = defaultRegistry();
    for (const c of crds) reg.addCrd(c as never, 'test');
    for (const api of await catalog(['postgresql', 'keyvalue']).list()) {
      const claim = parse(api.exampleClaim!);
      expect({ api: api.resource, errors: reg.validate(claim).errors }).toEqual({ api: api.resource, errors: [] });
      if (api.offering) expect(claim.spec.compositionRef.name).toBe(api.offering.backends.find((b) => b.default)!.name);
    }
  });

  it('specParameters and exampleClaim on a hand-written schema', () => {
    const schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          required: ['size'],
          properties: {
            size: { type: 'integer', minimum: 1, maximum: 5, description: 'nodes' },
            tier: { type: 'string', enum: ['gold', 'silver'], default: 'silver' },
            compositionRef: { type: 'object', properties: { name: { type: 'string' } } },
            nested: { type: 'object', properties: { name: { type: 'string', maxLength: 63, pattern: '^[a-z]+$' } } },
          },
        },
      },
    };
    const ps = specParameters(schema);
    expect(ps).toEqual([
      { path: 'size', type: 'integer', required: true, description: 'nodes', constraints: ['1 – 5'] },
      { path: 'tier', type: 'string', required: false, enum: ['gold', 'silver'], default: 'silver', constraints: [] },
      { path: 'nested.name', type: 'string', required: false, constraints: ['≤ 63 characters', 'matches ^[a-z]+$'] },
    ]);
    expect(parse(exampleClaim({ group: 'g.io', version: 'v1', kind: 'Thing', scope: 'Namespaced', parameters: ps }))).toEqual({
      apiVersion: 'g.io/v1',
      kind: 'Thing',
      metadata: { name: 'my-thing', namespace: 'default' },
      spec: { size: 1 },
    });
  });
});

describe('catalogue page (server-rendered)', () => {
  it('shows every detail without JavaScript and filters server-side with ?q=', async () => {
    const apis = await catalog(['postgresql', 'keyvalue', 'mongodb']).list();
    const html = resourcesPage({ prettyName: 'P', user: 'u', sessionId: 's', csrf: 'c', apis, query: 'ssl a9s-keyvalue' });
    const visible = [...html.matchAll(/<section class="api" id="[^"]*" data-resource="([^"]+)"[^>]*?( hidden)?>/g)].filter((m) => !m[2]).map((m) => m[1]);
    expect(visible).toEqual(apis.filter((a) => matchesQuery(a, 'ssl a9s-keyvalue')).map((a) => `${a.resource}.${a.group}`));
    expect(visible).toEqual(['keyvalueinstances.anynines.com']);
    expect(html).toContain('1 of 4 APIs match \u201cssl a9s-keyvalue\u201d');
    expect(html).toContain('<th scope="col">Memory</th>');
    expect(html).toContain('<summary>Example claim</summary>');
    expect(html).toContain('value="ssl a9s-keyvalue"');
  });

  it("the CSP allows exactly the page's script, by hash", () => {
    const html = resourcesPage({
      prettyName: 'P',
      user: 'u',
      sessionId: 's',
      csrf: 'c',
      apis: [{ group: 'g', resource: 'r', kind: 'K', scope: 'Namespaced', versions: ['v1'], template: { namespace: 'n', name: 't' }, permissionClaims: [] }],
    });
    const script = /<script>([\s\S]*)<\/script>/.exec(html)![1];
    expect(RESOURCES_CSP).toContain(`script-src 'sha256-${createHash('sha256').update(script).digest('base64')}'`);
    expect(RESOURCES_CSP).toMatch(/^default-src 'none'; /);
  });
});
