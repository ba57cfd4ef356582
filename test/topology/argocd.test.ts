import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { ApiObject, App } from 'cdk8s';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { argoCdApplications, renderTopology, synthTopology } from '../../constructs/topology/index.js';
import { formatIssue, validateDirectory } from '../../constructs/validate/index.js';
import { TestCluster } from '../support/test-cluster.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'klutch-argocd-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function app(outdir: string): App {
  const a = new App({ outdir });
  for (const name of ['cp', 'apps']) {
    const c = new TestCluster(a, name);
    new ApiObject(c, 'Cm', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'team-a' }, data: { k: 'v' } });
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
  }
  return a;
}

const read = (f: string) => parse(readFileSync(f, 'utf8'));

describe('Argo CD app-of-apps', () => {
  test('per cluster: a root Application syncing _argocd/apps, one Application per phase folder with its sync wave', async () => {
    const outdir = join(dir, 'dist');
    await synthTopology(app(outdir), {
      outdir,
      argocd: { repoURL: 'https://git.example.com/platform.git', path: './dist/', destinations: { apps: { name: 'app-cluster-1' } } },
    });
    for (const cluster of ['cp', 'apps']) {
      const root = read(join(outdir, cluster, '_argocd', 'root.yaml'));
      expect(root).toEqual({
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Application',
        metadata: { name: cluster, namespace: 'argocd' },
        spec: {
          project: 'default',
          source: { repoURL: 'https://git.example.com/platform.git', targetRevision: 'HEAD', path: `dist/${cluster}/_argocd/apps` },
          destination: { server: 'https://kubernetes.default.svc', namespace: 'argocd' },
          syncPolicy: { automated: { prune: true, selfHeal: true } },
        },
      });
      const files = readdirSync(join(outdir, cluster, '_argocd', 'apps')).sort();
      expect(files).toEqual(['00-crds.yaml', '10-namespaces.yaml', '30-config.yaml']);
      const apps = files.map((f) => read(join(outdir, cluster, '_argocd', 'apps', f)));
      expect(apps.map((a) => [a.metadata.name, a.metadata.annotations['argocd.argoproj.io/sync-wave'], a.spec.source.path])).toEqual([
        [`${cluster}-00-crds`, '0', `dist/${cluster}/00-crds`],
        [`${cluster}-10-namespaces`, '10', `dist/${cluster}/10-namespaces`],
        [`${cluster}-30-config`, '30', `dist/${cluster}/30-config`],
      ]);
      // every phase folder the synth wrote has its Application
      const phases = readdirSync(join(outdir, cluster), { withFileTypes: true })
        .filter((e) => e.isDirectory() && /^\d\d-/.test(e.name))
        .map((e) => `${e.name}.yaml`);
      expect(phases.sort()).toEqual(files);
      expect(apps[0].spec.destination).toEqual(
        cluster === 'apps' ? { name: 'app-cluster-1', namespace: 'default' } : { server: 'https://kubernetes.default.svc', namespace: 'default' },
      );
      expect(readFileSync(join(outdir, cluster, 'kustomization.yaml'), 'utf8')).not.toContain('_argocd');
    }
  });

  test('klutch-kit validate checks the Applications against the vendored Argo CD CRD (no unknown kind)', async () => {
    const outdir = join(dir, 'dist');
    await synthTopology(app(outdir), { outdir, argocd: { repoURL: 'https://git.example.com/platform.git', path: 'dist' } });
    const r = validateDirectory(outdir);
    expect(r.issues.map(formatIssue)).toEqual([]);
    expect(r.unknownKinds).not.toContain('argoproj.io/v1alpha1 Application');
    // the schema is really applied: a wrong field type in an Application is reported
    const bad = join(outdir, 'cp', '_argocd', 'apps', '00-crds.yaml');
    const text = readFileSync(bad, 'utf8').replace(/project: default/, 'project: [default]');
    writeFileSync(bad, text);
    const r2 = validateDirectory(outdir);
    expect(r2.issues.map(formatIssue).join('\n')).toMatch(/cp\/_argocd\/apps\/00-crds\.yaml: Application\/argocd\/cp-00-crds: spec\.project/);
  });

  test('bad options are refused naming the option and value, before anything is written', async () => {
    const outdir = join(dir, 'dist');
    const a = app(outdir);
    const clusters = renderTopology(a);
    expect(() => argoCdApplications(clusters[0], { repoURL: '', path: 'dist' })).toThrow(
      'SynthOptions.argocd.repoURL: "" must be the repository URL (no spaces), e.g. "https://github.com/acme/platform.git"',
    );
    expect(() => argoCdApplications(clusters[0], { repoURL: 'https://g/x.git', path: '../dist' })).toThrow(
      'SynthOptions.argocd.path: "../dist" must be the output folder\'s path inside the repository, e.g. "dist"',
    );
    expect(() => argoCdApplications(clusters[0], { repoURL: 'https://g/x.git', path: 'dist', namespace: 'Argo CD' })).toThrow(
      'SynthOptions.argocd.namespace: "Argo CD" is not a DNS-1123 label',
    );
    expect(() =>
      argoCdApplications(clusters[0], { repoURL: 'https://g/x.git', path: 'dist', destinations: { cp: { server: 'https://k', name: 'k' } } }),
    ).toThrow(
      'SynthOptions.argocd.destinations.cp: {"server":"https://k","name":"k"} must set exactly one of server (API server URL) or name (Argo CD cluster name)',
    );
    await expect(synthTopology(a, { outdir, argocd: { repoURL: 'https://g/x.git', path: '/abs' } })).rejects.toThrow(/SynthOptions\.argocd\.path: "\/abs"/);
    expect(existsSync(outdir)).toBe(false);
  });
});
