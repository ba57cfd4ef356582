import { describe, expect, test, beforeEach, afterEach } from '@jest/globals';
import { ApiObject, App, Chart } from 'cdk8s';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { Construct } from 'constructs';
import { PHASES, renderTopology, SYNC_OPTIONS_ANNOTATION, SYNC_WAVE_ANNOTATION, synthTopology } from '../../constructs/topology/index.js';
import { formatIssue, validateDirectory } from '../../constructs/validate/index.js';
import { example } from './_fixture.js';
import { TestCluster } from '../support/test-cluster.js';

function configMap(scope: Construct, id: string, namespace: string, name: string): ApiObject {
  return new ApiObject(scope, id, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { k: id } });
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'klutch-synth-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name), rel ? `${rel}/${e.name}` : e.name);
      else out.push(rel ? `${rel}/${e.name}` : e.name);
    }
  };
  walk(root, '');
  return out.sort();
}

describe('renderTopology (example)', () => {
  test('one folder per cluster; every object belongs to exactly one cluster', () => {
    const { clusters } = example();
    expect(clusters.map((c) => c.name)).toEqual(['app-analytics', 'app-shop', 'control-plane']);
    expect(clusters.find((c) => c.name === 'control-plane')!.role).toBe('control-plane');
    // the konnector is on app clusters only, the backend on the control plane only
    const kinds = (n: string) => clusters.find((c) => c.name === n)!.files.map((f) => `${f.object.kind}/${f.object.metadata.name}`);
    expect(kinds('app-shop')).toContain('Deployment/konnector');
    expect(kinds('app-shop')).not.toContain('Deployment/klutch-backend');
    expect(kinds('control-plane')).toContain('Deployment/klutch-backend');
    expect(kinds('control-plane')).not.toContain('Deployment/konnector');
  });

  test('order: CRDs, then namespaces, then everything else; waves never decrease; folders match waves', () => {
    for (const c of example().clusters) {
      let last = -1;
      for (const f of c.files) {
        const wave = Number(f.object.metadata.annotations[SYNC_WAVE_ANNOTATION]);
        expect(wave).toBeGreaterThanOrEqual(last);
        last = wave;
        expect(f.path.startsWith(String(wave).padStart(2, '0') + '-')).toBe(true);
      }
      const idx = (pred: (o: any) => boolean) => c.files.findIndex((f) => pred(f.object));
      const lastCrd = c.files.map((f) => f.object.kind).lastIndexOf('CustomResourceDefinition');
      const firstNs = idx((o) => o.kind === 'Namespace');
      const firstOther = idx((o) => o.kind !== 'Namespace' && o.kind !== 'CustomResourceDefinition');
      expect(lastCrd).toBeLessThan(firstNs);
      expect(firstNs).toBeLessThan(firstOther);
    }
  });

  test('every namespace an object lives in is created in the same cluster before it (Argo CD objects live where Argo CD runs)', () => {
    for (const c of example().clusters) {
      const created = new Map<string, number>();
      c.files.forEach((f, i) => {
        if (f.object.kind === 'Namespace') created.set(f.object.metadata.name, i);
      });
      c.files.forEach((f, i) => {
        const ns = f.object.metadata.namespace;
        if (ns && ns !== 'default' && !f.object.apiVersion.startsWith('argoproj.io/')) {
          expect([f.path, created.has(ns)]).toEqual([f.path, true]);
          expect(created.get(ns)!).toBeLessThan(i);
        }
      });
    }
  });

  test('custom resources whose CRD is not in the cluster get SkipDryRunOnMissingResource; the others do not', () => {
    const shop = example().clusters.find((c) => c.name === 'app-shop')!;
    const claim = shop.files.find((f) => f.object.kind === 'PostgresqlInstance')!.object;
    expect(claim.metadata.annotations[SYNC_OPTIONS_ANNOTATION]).toBe('SkipDryRunOnMissingResource=true');
    const binding = shop.files.find((f) => f.object.kind === 'APIServiceBinding')!.object;
    expect(binding.metadata.annotations[SYNC_OPTIONS_ANNOTATION]).toBeUndefined(); // its CRD is in 00-crds
    const dep = shop.files.find((f) => f.object.kind === 'Deployment')!.object;
    expect(dep.metadata.annotations[SYNC_OPTIONS_ANNOTATION]).toBeUndefined();
  });

  test('file paths are unique within each cluster', () => {
    for (const c of example().clusters) {
      const paths = c.files.map((f) => f.path);
      expect(new Set(paths).size).toBe(paths.length);
    }
  });
});

describe('renderTopology (layout rules)', () => {
  test('same-named objects in two namespaces get two files', () => {
    const app = new App({ outdir: dir });
    const c = new TestCluster(app, 'one');
    configMap(c, 'A', 'team-a', 'settings');
    configMap(c, 'B', 'team-b', 'settings');
    const [r] = renderTopology(app);
    const paths = r.files.filter((f) => f.object.kind === 'ConfigMap').map((f) => f.path);
    expect(paths).toEqual(['30-config/configmap_team-a_settings.yaml', '30-config/configmap_team-b_settings.yaml']);
  });

  test('the same object defined twice is an error naming both constructs, not a silent overwrite', () => {
    const app = new App({ outdir: dir });
    const c = new TestCluster(app, 'one');
    configMap(c, 'First', 'team-a', 'settings');
    configMap(c, 'Second', 'team-a', 'settings');
    expect(() => renderTopology(app)).toThrow(/ConfigMap team-a\/settings is defined twice \(one\/First and one\/Second\)/);
  });

  test('the same object in two clusters is fine (two folders)', () => {
    const app = new App({ outdir: dir });
    configMap(new TestCluster(app, 'one'), 'A', 'team-a', 'settings');
    configMap(new TestCluster(app, 'two'), 'A', 'team-a', 'settings');
    expect(renderTopology(app).map((c) => c.files.length)).toEqual([2, 2]); // ConfigMap + its Namespace
  });

  test('objects outside any cluster chart, duplicate cluster names and bad identities are refused', () => {
    const app1 = new App({ outdir: dir });
    configMap(new Chart(app1, 'loose'), 'A', 'team-a', 'x');
    expect(() => renderTopology(app1)).toThrow(/\[loose\/A\] ConfigMap "x" is not inside a ControlPlaneCluster or AppCluster chart/);
    const app2 = new App({ outdir: dir });
    new TestCluster(app2, 'same');
    const c2 = new TestCluster(new Chart(app2, 'nested'), 'same');
    configMap(c2, 'A', 'ns', 'x');
    expect(() => renderTopology(app2)).toThrow(/two cluster charts are named "same"/);
    const app3 = new App({ outdir: dir });
    configMap(new TestCluster(app3, 'one'), 'A', 'team-a', 'Bad_Name');
    expect(() => renderTopology(app3)).toThrow(/\[one\/A\] ConfigMap: metadata\.name: "Bad_Name" is not a DNS-1123 subdomain/);
    expect(() => new TestCluster(new App({ outdir: dir }), 'Not A Label')).toThrow(/TestCluster\.clusterName: "Not A Label"/);
  });

  test('construct validations run once and fail the render', () => {
    const app = new App({ outdir: dir });
    const c = new TestCluster(app, 'one');
    configMap(c, 'A', 'ns', 'x').node.addValidation({ validate: () => ['broken on purpose'] });
    expect(() => renderTopology(app)).toThrow(/\[one\/A\] broken on purpose/);
  });
});

describe('synthTopology', () => {
  function keepOld(outdir: string): void {
    mkdirSync(join(outdir, 'previous'), { recursive: true });
    writeFileSync(join(outdir, 'previous', 'marker.yaml'), 'kept: true\n');
  }
  function expectUnchanged(outdir: string): void {
    expect(listFiles(outdir)).toEqual(['previous/marker.yaml']);
    expect(readdirSync(dir).filter((n) => n !== 'dist')).toEqual([]); // no temp or old folders left
  }

  test('writes dist/<cluster>/<phase>/<file> and a kustomization listing every file in order; replaces old output', async () => {
    const outdir = join(dir, 'dist');
    keepOld(outdir);
    const app = new App({ outdir });
    const c = new TestCluster(app, 'one');
    configMap(c, 'A', 'team-a', 'settings');
    configMap(c, 'B', 'team-b', 'settings');
    const r = await synthTopology(app, { outdir });
    expect(r.objects).toBe(4);
    expect(listFiles(outdir)).toEqual([
      'one/10-namespaces/namespace__cluster_team-a.yaml',
      'one/10-namespaces/namespace__cluster_team-b.yaml',
      'one/30-config/configmap_team-a_settings.yaml',
      'one/30-config/configmap_team-b_settings.yaml',
      'one/kustomization.yaml',
    ]);
    const k = parse(readFileSync(join(outdir, 'one/kustomization.yaml'), 'utf8'));
    expect(k.resources).toEqual(listFiles(join(outdir, 'one')).filter((f) => f !== 'kustomization.yaml'));
    const cm = parse(readFileSync(join(outdir, 'one/30-config/configmap_team-b_settings.yaml'), 'utf8'));
    expect(cm).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'team-b' }, data: { k: 'B' } });
    expect(readdirSync(dir)).toEqual(['dist']);
  });

  test('an invalid object leaves dist/ exactly as it was', async () => {
    const outdir = join(dir, 'dist');
    keepOld(outdir);
    const app = new App({ outdir });
    const c = new TestCluster(app, 'one');
    configMap(c, 'Good', 'team-a', 'fine');
    configMap(c, 'Bad', 'team-a', 'Not-Valid!');
    await expect(synthTopology(app, { outdir })).rejects.toThrow(/metadata\.name: "Not-Valid!"/);
    expectUnchanged(outdir);
  });

  test('a validator failure leaves dist/ exactly as it was, and sees the complete temp folder', async () => {
    const outdir = join(dir, 'dist');
    keepOld(outdir);
    const app = new App({ outdir });
    configMap(new TestCluster(app, 'one'), 'A', 'team-a', 'x');
    let seen: string[] = [];
    await expect(
      synthTopology(app, {
        outdir,
        validate: (tmp) => {
          seen = listFiles(tmp);
          return { ok: false, problems: ['one/30-config/x.yaml: ConfigMap/team-a/x: data: bad'] };
        },
      }),
    ).rejects.toThrow(/validation failed, .* left unchanged:\n {2}one\/30-config\/x.yaml: ConfigMap\/team-a\/x: data: bad/);
    expect(seen).toContain('one/30-config/configmap_team-a_x.yaml');
    expectUnchanged(outdir);
  });

  test('with klutch-kit validate: a schema-invalid binding aborts the synth and names file, object and field', async () => {
    const outdir = join(dir, 'dist');
    keepOld(outdir);
    const app = new App({ outdir });
    const c = new TestCluster(app, 'one');
    new ApiObject(c, 'Binding', {
      apiVersion: 'klutch.anynines.com/v1alpha1',
      kind: 'APIServiceBinding',
      metadata: { name: 'postgresqlinstances.anynines.com', namespace: 'klutch-bind' },
      spec: { kubeconfigSecretRef: { name: 'kubeconfig', namespace: 'klutch-bind', key: 'not-kubeconfig' } },
    });
    let problems: readonly string[] = [];
    await expect(
      synthTopology(app, {
        outdir,
        validate: (tmp) => {
          const r = validateDirectory(tmp);
          problems = r.issues.map(formatIssue);
          return { ok: r.ok, problems };
        },
      }),
    ).rejects.toThrow(/left unchanged/);
    expect(problems.join('\n')).toMatch(
      /one\/80-bindings\/apiservicebinding\.klutch\.anynines\.com_klutch-bind_postgresqlinstances\.anynines\.com\.yaml: APIServiceBinding\/klutch-bind\/postgresqlinstances\.anynines\.com: spec\.kubeconfigSecretRef\.key/,
    );
    expectUnchanged(outdir);
  });

  test('flux: one Kustomization per phase folder, chained with dependsOn, not listed in kustomization.yaml', async () => {
    const outdir = join(dir, 'dist');
    const app = new App({ outdir });
    const c = new TestCluster(app, 'one');
    configMap(c, 'A', 'team-a', 'x');
    new ApiObject(c, 'Crd', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        names: { kind: 'Widget', plural: 'widgets' },
        scope: 'Namespaced',
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
      },
    });
    await synthTopology(app, { outdir, flux: { sourceRef: { name: 'gitops' }, path: './dist/' } });
    const text = readFileSync(join(outdir, 'one', '_flux', 'kustomizations.yaml'), 'utf8');
    const ks = text
      .split(/^---$/m)
      .map((d) => parse(d))
      .filter(Boolean);
    expect(ks.map((k) => [k.metadata.name, k.spec.path, k.spec.dependsOn?.[0]?.name])).toEqual([
      ['one-00-crds', './dist/one/00-crds', undefined],
      ['one-10-namespaces', './dist/one/10-namespaces', 'one-00-crds'],
      ['one-30-config', './dist/one/30-config', 'one-10-namespaces'],
    ]);
    for (const k of ks) expect(k.spec).toMatchObject({ prune: true, wait: true, sourceRef: { kind: 'GitRepository', name: 'gitops' } });
    expect(readFileSync(join(outdir, 'one', 'kustomization.yaml'), 'utf8')).not.toContain('_flux');
    await expect(synthTopology(app, { outdir, flux: { sourceRef: { name: 'Bad Name' }, path: './dist' } })).rejects.toThrow(
      /SynthOptions\.flux\.sourceRef\.name: "Bad Name"/,
    );
    expect(existsSync(join(outdir, 'one', '_flux', 'kustomizations.yaml'))).toBe(true); // previous output kept
  });

  test('first synth into a missing outdir creates it', async () => {
    const outdir = join(dir, 'nested', 'dist');
    const app = new App({ outdir });
    configMap(new TestCluster(app, 'one'), 'A', 'team-a', 'x');
    await synthTopology(app, { outdir });
    expect(existsSync(join(outdir, 'one', '30-config', 'configmap_team-a_x.yaml'))).toBe(true);
    expect(PHASES.config.folder).toBe('30-config');
  });
});
