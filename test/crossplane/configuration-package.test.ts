/**
 * ConfigurationPackageSource: what a package carries is what was added to it. An XRD or Composition
 * construct created below a package source adds its object when it is constructed; an object of those
 * kinds made by hand is added with addObject(), and one left out is an error at render, not a silent
 * move to the cluster.
 */
import { describe, expect, test } from '@jest/globals';
import { ApiObject, App, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import {
  CompositeResourceDefinition,
  Composition,
  CompositeType,
  ConfigurationPackageSource,
  FunctionStep,
  XrdScope,
} from '../../constructs/crossplane/index.js';
import { ClusterChart, renderTopology } from '../../constructs/topology/index.js';
import { TestCluster } from '../support/test-cluster.js';

const schema = { type: 'object', properties: { spec: { type: 'object' } } } as const;

function xrd(scope: Construct, id: string, namespaced = false): CompositeResourceDefinition {
  const plural = `x${id.toLowerCase()}s`;
  return new CompositeResourceDefinition(scope, id, {
    group: 'example.org',
    names: { kind: `X${id}`, plural },
    ...(namespaced ? { scope: XrdScope.NAMESPACED } : { claimNames: { kind: id, plural: `${id.toLowerCase()}s` } }),
    versions: [{ name: 'v1', schema }],
  });
}

const rawComposition = (scope: Construct, id: string, name: string) =>
  new ApiObject(scope, id, {
    apiVersion: 'apiextensions.crossplane.io/v1',
    kind: 'Composition',
    metadata: { name },
    spec: { compositeTypeRef: { apiVersion: 'example.org/v1', kind: 'XA' }, mode: 'Pipeline', pipeline: [] },
  });

function setup() {
  const app = new App({ outdir: '/nonexistent' });
  const cluster = new TestCluster(app, 'cp');
  const pkg = new ConfigurationPackageSource(cluster, 'Pkg', { name: 'my-package' });
  return { app, cluster, pkg };
}

describe('ConfigurationPackageSource', () => {
  test('XRDs and Compositions created below it (at any depth) are its objects; others below it stay in the cluster', () => {
    const { app, cluster, pkg } = setup();
    const a = xrd(pkg, 'A');
    const nested = new Construct(pkg, 'Nested');
    const comp = new Composition(nested, 'Comp', { name: 'a-default', compositeTypeRef: a, pipeline: [FunctionStep.autoReady()] });
    new ApiObject(pkg, 'Settings', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'ns' } });
    const outside = xrd(cluster, 'B');
    expect(pkg.objects).toEqual([a.apiObject, comp.apiObject]);
    expect(ConfigurationPackageSource.packageOf(comp.apiObject)).toBe(pkg);
    expect(ConfigurationPackageSource.packageOf(outside.apiObject)).toBeUndefined();

    const [c] = renderTopology(app);
    expect(c.packages!.map((p) => [p.name, p.files.map((f) => `${f.object.kind}/${f.object.metadata.name}`)])).toEqual([
      ['my-package', ['CompositeResourceDefinition/xas.example.org', 'Composition/a-default']],
    ]);
    const kinds = c.files.map((f) => `${f.object.kind}/${f.object.metadata.name}`);
    expect(kinds).toContain('ConfigMap/settings');
    expect(kinds).toContain('CompositeResourceDefinition/xbs.example.org');
    expect(kinds).not.toContain('Composition/a-default');
    // packagedObjects() renders the same objects, XRDs first.
    expect(pkg.packagedObjects().map((o) => o.kind)).toEqual(['CompositeResourceDefinition', 'Composition']);
  });

  test('the default Crossplane constraint becomes >=v2.0.0 once a v2 XRD is added', () => {
    const { pkg } = setup();
    xrd(pkg, 'A');
    expect(pkg.effectiveCrossplaneVersion).toBe('>=v1.20.0');
    xrd(pkg, 'N', true);
    expect(pkg.effectiveCrossplaneVersion).toBe('>=v2.0.0');
    expect((pkg.toMeta().spec as { crossplane: unknown }).crossplane).toEqual({ version: '>=v2.0.0' });
  });

  test('an XRD or Composition made by hand goes in with addObject(); left out, it is an error naming it and the fix', () => {
    const { app, pkg } = setup();
    const raw = rawComposition(pkg, 'Raw', 'raw');
    expect(() => renderTopology(app)).toThrow(
      '[cp/Pkg/Raw] Composition: "raw" is below Configuration package source "my-package" but not in it: create it with Composition, or call addObject() on the package source',
    );
    pkg.addObject(raw);
    pkg.addObject(raw); // idempotent
    expect(pkg.objects).toEqual([raw]);
    const [c] = renderTopology(app);
    expect(c.packages![0].files.map((f) => f.object.metadata.name)).toEqual(['raw']);
    expect(c.files.map((f) => f.object.kind)).not.toContain('Composition');
  });

  test('addObject refuses other kinds, objects outside the source and objects of another package', () => {
    const { cluster, pkg } = setup();
    const cm = new ApiObject(pkg, 'Cm', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } });
    expect(() => pkg.addObject(cm)).toThrow(
      'ConfigurationPackageSource.addObject(obj).kind: "v1/ConfigMap" is not a CompositeResourceDefinition or Composition of apiextensions.crossplane.io; only those go into a package',
    );
    expect(() => pkg.addObject({ kind: 'Composition' } as never)).toThrow(
      'ConfigurationPackageSource.addObject(obj): {"kind":"Composition"} must be an ApiObject',
    );
    expect(() => pkg.addObject(rawComposition(cluster, 'Outside', 'outside'))).toThrow(
      'ConfigurationPackageSource.addObject(obj): "cp/Outside" is not below this package source (cp/Pkg); create the object in its scope',
    );
    const inner = new ConfigurationPackageSource(pkg, 'Inner', { name: 'inner' });
    const comp = new Composition(inner, 'Comp', { name: 'c', compositeTypeRef: CompositeType.of('example.org/v1', 'XA') });
    expect(inner.objects).toEqual([comp.apiObject]); // the nearest source
    expect(() => pkg.addObject(comp.apiObject)).toThrow(
      'ConfigurationPackageSource.addObject(obj): "cp/Pkg/Inner/Comp/Resource" is already in package "inner" (cp/Pkg/Inner)',
    );
    expect(pkg.objects).toEqual([]);
  });
});

describe('ClusterChart.clustersOf', () => {
  test('the cluster charts created in an app, in creation order, at any depth; none in another app', () => {
    const app = new App({ outdir: '/nonexistent' });
    const b = new TestCluster(app, 'b');
    const a = new TestCluster(new Chart(app, 'Group'), 'a');
    expect(ClusterChart.clustersOf(app)).toEqual([b, a]);
    expect(ClusterChart.clustersOf(a)).toEqual([b, a]);
    expect(ClusterChart.clustersOf(new App({ outdir: '/nonexistent' }))).toEqual([]);
  });
});
