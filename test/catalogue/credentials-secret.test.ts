// CatalogueProps.credentialsSecretSuffix: the credentials Secret's name, `<binding><suffix>`, in both API styles.
import { describe, expect, it } from '@jest/globals';
import { App, Chart } from 'cdk8s';
import { Catalogue, type CatalogueProps, serviceBinding } from '../../constructs/catalogue/index.js';
import { ApiStyle } from '../../constructs/dataservice/index.js';
import { selects } from '../../runtime/konnector/selector.js';
import { render, xrFor } from '../dataservice/_render.js';

type Obj = Record<string, any>;

function synth(props: CatalogueProps) {
  const chart = new Chart(new App(), 'control-plane');
  new Catalogue(chart, 'catalogue', props);
  const objects = chart.toJson() as Obj[];
  const byName = (kind: string, name: string) => {
    const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
    if (!o) throw new Error(`no ${kind} ${name}`);
    return o;
  };
  return { objects, byName };
}

const secret = (name: string, type: string) => ({ apiVersion: 'v1', kind: 'Secret', type, metadata: { name, namespace: 'team-a' } });
const CONNECTION = 'connection.crossplane.io/v1alpha1';
const claimedBy = (template: Obj) => (o: Obj) => template.spec.permissionClaims.some((c: Obj) => selects(c.selector, o as never, 'ns'));

describe('CatalogueProps.credentialsSecretSuffix with claims', () => {
  const { byName } = synth({ credentialsSecretSuffix: '-conn' });

  it('the a9s ServiceBinding writes <claim><suffix> in the claim namespace', () => {
    const [b] = render(byName('Composition', 'a9s-servicebinding'), xrFor('app', 'team-a', { instanceRef: 'db', serviceInstanceType: 'keyvalue' }));
    expect(b.spec.writeConnectionSecretToRef).toEqual({ name: 'app-conn', namespace: 'team-a' });
  });

  it('the export claims *<suffix> connection Secrets and the a8s operator Secret, nothing named -creds', () => {
    const claimed = claimedBy(byName('APIServiceExportTemplate', 'servicebindings'));
    expect(claimed(secret('app-conn', CONNECTION))).toBe(true);
    expect(claimed(secret('app-service-binding', 'Opaque'))).toBe(true);
    expect(claimed(secret('app-creds', CONNECTION))).toBe(false);
    expect(claimed(secret('app-conn', 'Opaque'))).toBe(false);
  });

  it('leaves the claim schema as Klutch has it (no writeConnectionSecretToRef of ours)', () => {
    const xrd = byName('CompositeResourceDefinition', 'xservicebindings.anynines.com');
    expect(JSON.stringify(xrd)).not.toContain('-conn');
  });
});

describe('CatalogueProps.credentialsSecretSuffix with namespaced XRs', () => {
  const { byName } = synth({ apiStyle: ApiStyle.NAMESPACED_XR, credentialsSecretSuffix: '-conn' });
  const binding = (spec: Obj) => ({ apiVersion: 'anynines.com/v1', kind: 'ServiceBinding', metadata: { name: 'app', namespace: 'team-a' }, spec });

  it('the a8s Composition composes <binding><suffix>; a name of the binding replaces it', () => {
    const comp = byName('Composition', 'a8s-servicebinding');
    const [, creds] = render(comp, binding({ instanceRef: 'pg', serviceInstanceType: 'postgresql' }));
    expect(creds.spec.forProvider.manifest.metadata).toEqual({ name: 'app-conn', namespace: 'team-a' });
    const [, own] = render(comp, binding({ instanceRef: 'pg', serviceInstanceType: 'postgresql', writeConnectionSecretToRef: { name: 'orders-conn' } }));
    expect(own.spec.forProvider.manifest.metadata).toEqual({ name: 'orders-conn', namespace: 'team-a' });
  });

  it('the a9s ServiceBinding writes <binding><suffix>; a name of the binding replaces it', () => {
    const comp = byName('Composition', 'a9s-servicebinding');
    const [b] = render(comp, binding({ instanceRef: 'kv', serviceInstanceType: 'keyvalue' }));
    expect(b.spec.writeConnectionSecretToRef).toEqual({ name: 'app-conn', namespace: 'team-a' });
    const [own] = render(comp, binding({ instanceRef: 'kv', serviceInstanceType: 'keyvalue', writeConnectionSecretToRef: { name: 'orders-conn' } }));
    expect(own.spec.writeConnectionSecretToRef).toEqual({ name: 'orders-conn', namespace: 'team-a' });
  });

  it('the XRD accepts only names ending in the suffix, and says so; the export claims exactly *<suffix>', () => {
    const xrd = byName('CompositeResourceDefinition', 'servicebindings.anynines.com');
    const ref = xrd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.writeConnectionSecretToRef;
    const pattern = new RegExp(ref.properties.name.pattern);
    expect(pattern.test('orders-conn')).toBe(true);
    expect(pattern.test('orders.v2-conn')).toBe(true);
    expect(pattern.test('orders-creds')).toBe(false);
    expect(pattern.test('-conn')).toBe(false);
    expect(ref.description).toContain('<name>-conn');
    expect(ref.properties.name.description).toContain('*-conn Secrets only');
    const t = byName('APIServiceExportTemplate', 'servicebindings');
    expect(t.spec.permissionClaims).toHaveLength(1);
    const claimed = claimedBy(t);
    expect(claimed(secret('orders-conn', CONNECTION))).toBe(true);
    expect(claimed(secret('orders-creds', CONNECTION))).toBe(false);
  });
});

describe('credentialsSecretSuffix: default and bad values', () => {
  it("defaults to Klutch's -creds in both styles", () => {
    for (const apiStyle of ApiStyle.all) {
      const [b] = render(synth({ apiStyle }).byName('Composition', 'a9s-servicebinding'), {
        metadata: { name: 'app', namespace: 'team-a', labels: { 'crossplane.io/claim-name': 'app', 'crossplane.io/claim-namespace': 'team-a' } },
        spec: { instanceRef: 'kv', serviceInstanceType: 'keyvalue' },
      });
      expect(b.spec.writeConnectionSecretToRef.name).toBe('app-creds');
    }
  });

  it.each([['creds'], ['-'], ['-Creds'], ['-conn-'], ['-a_b'], [`-${'a'.repeat(63)}`], [''], [42]])('rejects %p, naming the prop and the value', (bad) => {
    expect(() => synth({ credentialsSecretSuffix: bad as string })).toThrow(
      `CatalogueProps.credentialsSecretSuffix: ${JSON.stringify(bad)} is not a Secret name suffix: use "-" followed by lowercase letters, digits and "-", ending in a letter or digit (at most 63 characters), e.g. "-creds"`,
    );
  });

  it('serviceBinding() checks its option under its own name', () => {
    expect(() => serviceBinding(['keyvalue'], { credentialsSecretSuffix: 'x' })).toThrow(
      'ServiceBindingOptions.credentialsSecretSuffix: "x" is not a Secret name suffix',
    );
  });
});
