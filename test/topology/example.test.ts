import { describe, expect, test } from '@jest/globals';
import { validateDocuments, formatIssue } from '../../constructs/validate/index.js';
import { example } from './_fixture.js';

describe('example topology (constructs/app)', () => {
  test('every object of every cluster passes klutch-kit validate, sample claims included', () => {
    for (const c of example().clusters) {
      const docs = c.files.map((f, index) => ({ file: `${c.name}/${f.path}`, index, doc: f.object }));
      // Claims are validated against the claim CRDs derived from the control plane's XRDs.
      const xrds = example()
        .clusters.find((x) => x.name === 'control-plane')!
        .files.filter((f) => f.object.kind === 'CompositeResourceDefinition')
        .map((f, index) => ({ file: `control-plane/${f.path}`, index, doc: f.object }));
      const r = validateDocuments(c.role === 'app' ? [...xrds, ...docs] : docs);
      expect(r.issues.map(formatIssue)).toEqual([]);
      expect(r.ok).toBe(true);
      if (c.role === 'app') {
        const claims = c.files.filter((f) => f.object.apiVersion === 'anynines.com/v1').length;
        expect(claims).toBeGreaterThanOrEqual(3);
        expect(r.unknownKinds.filter((k) => k.startsWith('anynines.com/'))).toEqual([]);
      }
    }
  });

  test('a claim that the catalogue rejects would fail the same validation', () => {
    const shop = example().clusters.find((x) => x.name === 'app-shop')!;
    const xrds = example()
      .clusters.find((x) => x.name === 'control-plane')!
      .files.filter((f) => f.object.kind === 'CompositeResourceDefinition');
    const claim = structuredClone(shop.files.find((f) => f.object.kind === 'PostgresqlInstance')!.object);
    claim.spec.plan = 'postgresql-gigantic';
    const r = validateDocuments([...xrds.map((f, index) => ({ file: f.path, index, doc: f.object })), { file: 'claim.yaml', index: 0, doc: claim }]);
    expect(r.ok).toBe(false);
    expect(r.issues.map(formatIssue).join('\n')).toMatch(/claim\.yaml: PostgresqlInstance\/shop\/orders-db: spec/);
  });
});
