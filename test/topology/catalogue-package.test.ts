/**
 * The catalogue as a Crossplane Configuration package: with CatalogueInstall.configurationPackage the
 * control plane's manifests carry a `Configuration` instead of the XRDs and Compositions, and the
 * synth writes the package source (crossplane.yaml + the XRDs and Compositions) beside the cluster.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { parse } from 'yaml';
import { PATCH_AND_TRANSFORM_PACKAGE, PROVIDER_KUBERNETES_PACKAGE } from '../../constructs/crossplane/index.js';
import {
  CatalogueInstall,
  ControlPlaneCluster,
  ControlPlaneClusterProps,
  PROVIDER_ANYNINES_PACKAGE,
  renderTopology,
  synthTopology,
} from '../../constructs/topology/index.js';
import { packageYamlFromDir } from '../../runtime/xpkg/image.js';

const dex: ControlPlaneClusterProps['dex'] = { connectors: [{ type: 'mockCallback', id: 'mock', name: 'Mock', config: {} }] } as never;
const dir = mkdtempSync(join(tmpdir(), 'klutch-pkg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function controlPlane(install?: CatalogueInstall, catalogue: ControlPlaneClusterProps['catalogue'] = { services: ['postgresql'], automations: ['a8s'] }) {
  const app = new App({ outdir: '/nonexistent' });
  const cp = new ControlPlaneCluster(app, 'CP', { host: 'bind.example.com', dex, catalogue, ...(install ? { catalogueInstall: install } : {}) });
  return { app, cp };
}

const repoOf = (ref: string) => ref.replace(/:[^:/]+$/, '');
const tagOf = (ref: string) => ref.slice(ref.lastIndexOf(':') + 1);

describe('CatalogueInstall.configurationPackage', () => {
  test('the cluster gets a Configuration and no XRD or Composition; the package gets them, with dependsOn', () => {
    const { app, cp } = controlPlane(CatalogueInstall.configurationPackage({ package: '127.0.0.1:5000/klutch/catalogue:v0.1.0' }));
    const [c] = renderTopology(app);
    const kinds = c.files.map((f) => f.object.kind);
    expect(kinds).not.toContain('CompositeResourceDefinition');
    expect(kinds).not.toContain('Composition');
    // Export templates and ProviderConfigs stay in the cluster.
    expect(kinds).toContain('APIServiceExportTemplate');
    const conf = c.files.map((f) => f.object).find((o) => o.kind === 'Configuration')!;
    expect(conf).toMatchObject({
      apiVersion: 'pkg.crossplane.io/v1',
      metadata: { name: 'klutch-catalogue' },
      spec: { package: '127.0.0.1:5000/klutch/catalogue:v0.1.0' },
    });
    expect(c.packages).toHaveLength(1);
    const pkg = c.packages![0];
    expect(pkg.meta).toEqual({
      apiVersion: 'meta.pkg.crossplane.io/v1',
      kind: 'Configuration',
      metadata: {
        name: 'klutch-catalogue',
        annotations: { 'meta.crossplane.io/description': 'The klutch-kit data-service catalogue: XRDs and Compositions.' },
      },
      spec: {
        crossplane: { version: '>=v1.20.0' },
        dependsOn: [
          { function: repoOf(PATCH_AND_TRANSFORM_PACKAGE), version: `>=${tagOf(PATCH_AND_TRANSFORM_PACKAGE)}` },
          { provider: repoOf(PROVIDER_KUBERNETES_PACKAGE), version: `>=${tagOf(PROVIDER_KUBERNETES_PACKAGE)}` },
        ],
      },
    });
    // XRDs first, then Compositions; the same objects the Objects install puts in the cluster.
    expect(pkg.files.map((f) => `${f.object.kind}/${f.object.metadata.name}`)).toEqual([
      'CompositeResourceDefinition/xbackups.anynines.com',
      'CompositeResourceDefinition/xpostgresqlinstances.anynines.com',
      'CompositeResourceDefinition/xrestores.anynines.com',
      'CompositeResourceDefinition/xservicebindings.anynines.com',
      'Composition/a8s-backup',
      'Composition/a8s-postgresql',
      'Composition/a8s-restore',
      'Composition/a8s-servicebinding',
    ]);
    const [objects] = renderTopology(controlPlane().app);
    const plain = objects.files.map((f) => f.object).filter((o) => o.kind === 'Composition' || o.kind === 'CompositeResourceDefinition');
    const strip = (o: Record<string, any>) => {
      const { annotations, ...md } = o.metadata;
      void annotations;
      return { ...o, metadata: md };
    };
    expect(pkg.files.map((f) => f.object)).toEqual(expect.arrayContaining(plain.map(strip)));
    // The claim APIs are still known to the control plane (the backend exports them).
    expect(cp.claimApis.map((a) => a.kind).sort()).toEqual(['Backup', 'PostgresqlInstance', 'Restore', 'ServiceBinding']);
    expect(cp.cataloguePackage?.packageName).toBe('klutch-catalogue');
  });

  test('a9s backends add provider-anynines to dependsOn; name, constraint and skipDependencyResolution are props', () => {
    const app = new App({ outdir: '/nonexistent' });
    new ControlPlaneCluster(app, 'CP', {
      host: 'bind.example.com',
      dex,
      anynines: { baseDomain: 'a9s.example.com' },
      catalogue: { services: ['keyvalue'], operations: [], automations: ['a9s'] },
      catalogueInstall: CatalogueInstall.configurationPackage({
        package: 'registry.example.com/k/cat:v1',
        name: 'cat',
        crossplaneVersion: '>=v2.0.0',
        skipDependencyResolution: true,
      }),
    });
    const [c] = renderTopology(app);
    expect(c.packages![0].meta.spec).toEqual({
      crossplane: { version: '>=v2.0.0' },
      dependsOn: [
        { function: repoOf(PATCH_AND_TRANSFORM_PACKAGE), version: `>=${tagOf(PATCH_AND_TRANSFORM_PACKAGE)}` },
        { provider: repoOf(PROVIDER_ANYNINES_PACKAGE), version: `>=${tagOf(PROVIDER_ANYNINES_PACKAGE)}` },
      ],
    });
    expect(c.files.map((f) => f.object).find((o) => o.kind === 'Configuration')).toMatchObject({
      metadata: { name: 'cat' },
      spec: { package: 'registry.example.com/k/cat:v1', skipDependencyResolution: true },
    });
  });

  test('bad props name the prop and the value', () => {
    expect(() => CatalogueInstall.configurationPackage({ package: 'catalogue:v1' })).toThrow(
      /CatalogueInstall\.configurationPackage\(props\)\.package: "catalogue:v1" is not a fully qualified package reference/,
    );
    expect(() => controlPlane({ mode: 'Package' } as never)).toThrow(
      /ControlPlaneClusterProps\.catalogueInstall: \{"mode":"Package"\} must be CatalogueInstall\.OBJECTS/,
    );
  });

  test('synth writes <outdir>/<cluster>.packages/<name>/ (crossplane.yaml + objects), which package build reads', async () => {
    const { app } = controlPlane(CatalogueInstall.configurationPackage({ package: '127.0.0.1:5000/klutch/catalogue:v0.1.0' }));
    const outdir = join(dir, 'dist');
    await synthTopology(app, { outdir });
    expect(readdirSync(outdir).sort()).toEqual(['control-plane', 'control-plane.packages']);
    const src = join(outdir, 'control-plane.packages', 'klutch-catalogue');
    const files = readdirSync(src).sort();
    expect(files).toContain('crossplane.yaml');
    expect(files.filter((f) => f.startsWith('composition.'))).toHaveLength(4);
    expect(parse(readFileSync(join(src, 'crossplane.yaml'), 'utf8'))).toMatchObject({ apiVersion: 'meta.pkg.crossplane.io/v1', kind: 'Configuration' });
    const docs = packageYamlFromDir(src)
      .split(/^---\n/m)
      .filter(Boolean)
      .map((d) => parse(d));
    expect(docs[0].kind).toBe('Configuration');
    expect(
      docs
        .slice(1)
        .map((d) => d.kind)
        .sort(),
    ).toEqual([...Array(4).fill('CompositeResourceDefinition'), ...Array(4).fill('Composition')]);
  });
});
