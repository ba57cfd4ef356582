import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Testing } from 'cdk8s';
import { parse } from 'yaml';
import { CrossplaneInstall, CrossplaneVersion, InstallMethod, SSA_CLAIMS_FLAG } from '../../constructs/crossplane/index.js';

function synth(props: ConstructorParameters<typeof CrossplaneInstall>[2]) {
  const chart = Testing.chart();
  const install = new CrossplaneInstall(chart, 'xp', props);
  return { install, out: Testing.synth(chart) };
}

describe('CrossplaneInstall', () => {
  it('defaults to Crossplane 2.3.4 as an Argo CD Application in crossplane-system, with the Namespace first', () => {
    const { install, out } = synth({});
    expect(out.map((o) => o.kind)).toEqual(['Namespace', 'Application']);
    expect(out[0]).toEqual({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'crossplane-system' } });
    const app = out[1];
    expect(app.apiVersion).toBe('argoproj.io/v1alpha1');
    expect(app.metadata).toEqual({ name: 'crossplane', namespace: 'argocd' });
    expect(app.spec.source).toEqual({
      repoURL: 'https://charts.crossplane.io/stable',
      chart: 'crossplane',
      targetRevision: '2.3.4',
      helm: { releaseName: 'crossplane' },
    });
    expect(app.spec.destination).toEqual({ server: 'https://kubernetes.default.svc', namespace: 'crossplane-system' });
    expect(app.spec.syncPolicy.automated).toEqual({ prune: true, selfHeal: true });
    expect(install.version).toBe(CrossplaneVersion.V2_3);
    expect(install.values).toEqual({});
    expect(install.args).toEqual([]);
  });

  it('on 1.20 adds --enable-ssa-claims automatically (the konnector server-side-applies claims)', () => {
    const { install, out } = synth({ version: CrossplaneVersion.V1_20, args: ['--debug'] });
    expect(install.args).toEqual(['--debug', SSA_CLAIMS_FLAG]);
    expect(out[1].spec.source.targetRevision).toBe('1.20.13');
    expect(out[1].spec.source.helm.valuesObject).toEqual({ args: ['--debug', '--enable-ssa-claims'] });
    expect(synth({ version: CrossplaneVersion.V1_20, args: ['--enable-ssa-claims'] }).install.args).toEqual(['--enable-ssa-claims']);
    expect(synth({ version: CrossplaneVersion.V2_3 }).install.args).not.toContain(SSA_CLAIMS_FLAG);
    expect(() => synth({ version: CrossplaneVersion.V1_20, args: ['--enable-ssa-claims=false'] })).toThrow(
      'CrossplaneInstallProps.args: "--enable-ssa-claims=false" turns off server-side-applied claims',
    );
  });

  it('maps namespace, resources, metrics and replicas into chart values, and exposes them', () => {
    const { install, out } = synth({
      namespace: 'xp',
      args: ['--enable-operations', '--poll-interval=30s', '--max-reconcile-rate', '50'],
      resources: { requests: { cpu: '200m', memory: '512Mi' }, limits: { memory: '2Gi' } },
      rbacManagerResources: { limits: { cpu: '100m' } },
      metrics: true,
      metricsPort: 9090,
      replicas: 2,
      values: { provider: { defaultActivations: ['*'] }, metrics: { enabled: true } },
    });
    expect(install.values).toEqual({
      args: ['--enable-operations', '--poll-interval=30s', '--max-reconcile-rate', '50'],
      replicas: 2,
      resourcesCrossplane: { requests: { cpu: '200m', memory: '512Mi' }, limits: { memory: '2Gi' } },
      resourcesRBACManager: { limits: { cpu: '100m' } },
      metrics: { enabled: true, port: '9090' },
      provider: { defaultActivations: ['*'] },
    });
    expect(out[0].metadata.name).toBe('xp');
    expect(out[1].spec.destination.namespace).toBe('xp');
    expect(out[1].spec.source.helm.valuesObject).toEqual(install.values);
    // the getter returns a copy
    (install.values.args as string[]).push('--x');
    expect(install.args).toHaveLength(4);
  });

  it('emits a Flux HelmRepository + HelmRelease pinned to the chart version', () => {
    const { out } = synth({ version: CrossplaneVersion.V1_20, installMethod: InstallMethod.fluxHelmRelease({ namespace: 'flux-system', interval: '10m' }) });
    expect(out.map((o) => o.kind)).toEqual(['Namespace', 'HelmRepository', 'HelmRelease']);
    const [, repo, rel] = out;
    expect(repo).toEqual({
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'HelmRepository',
      metadata: { name: 'crossplane-stable', namespace: 'flux-system' },
      spec: { interval: '10m', url: 'https://charts.crossplane.io/stable' },
    });
    expect(rel.apiVersion).toBe('helm.toolkit.fluxcd.io/v2');
    expect(rel.metadata).toEqual({ name: 'crossplane', namespace: 'flux-system' });
    expect(rel.spec.chart.spec).toEqual({
      chart: 'crossplane',
      version: '1.20.13',
      sourceRef: { kind: 'HelmRepository', name: 'crossplane-stable', namespace: 'flux-system' },
    });
    expect(rel.spec.targetNamespace).toBe('crossplane-system');
    expect(rel.spec.values).toEqual({ args: ['--enable-ssa-claims'] });
    expect(() => InstallMethod.fluxHelmRelease({ interval: 'hourly' })).toThrow(
      'InstallMethod.fluxHelmRelease(options).interval: "hourly" is not a Go duration',
    );
  });

  it('can skip the Namespace and use Argo options', () => {
    const { out } = synth({
      createNamespace: false,
      installMethod: InstallMethod.argoApplication({
        name: 'xp-core',
        namespace: 'gitops',
        project: 'platform',
        automated: false,
        destinationServer: 'https://10.0.0.1:6443',
      }),
    });
    expect(out.map((o) => o.kind)).toEqual(['Application']);
    expect(out[0].metadata).toEqual({ name: 'xp-core', namespace: 'gitops' });
    expect(out[0].spec.project).toBe('platform');
    expect(out[0].spec.syncPolicy).not.toHaveProperty('automated');
    expect(out[0].spec.destination.server).toBe('https://10.0.0.1:6443');
  });

  describe('version-specific args', () => {
    it.each([
      ['--enable-operations', CrossplaneVersion.V1_20, 'only exists in Crossplane 2.x, not in 1.20.13'],
      ['--enable-custom-to-managed-resource-conversion', CrossplaneVersion.V1_20, 'only exists in Crossplane 2.x'],
      ['--enable-composition-functions', CrossplaneVersion.V2_3, 'is a Crossplane 1.x flag that Crossplane 2.3.4 no longer has'],
      ['--enable-environment-configs', CrossplaneVersion.V2_0, 'is a Crossplane 1.x flag that Crossplane 2.0.8 no longer has'],
      ['--registry=index.docker.io', CrossplaneVersion.V2_3, 'is a Crossplane 1.x flag'],
      ['--enable-external-secret-stores', CrossplaneVersion.V2_1, 'is a Crossplane 1.x flag'],
      ['--enable-pipeline-inspector', CrossplaneVersion.V2_1, 'was added after Crossplane 2.1.8'],
      ['--enable-provider-deletion-protection', CrossplaneVersion.V2_2, 'was added after Crossplane 2.2.4'],
      ['--enable-magic', CrossplaneVersion.V2_3, 'is not a flag of Crossplane 2.3.4'],
      ['-r', CrossplaneVersion.V2_3, 'is not a flag of Crossplane 2.3.4'],
    ])('%s on %s throws', (arg, version, message) => {
      expect(() => synth({ version, args: [arg] })).toThrow(`CrossplaneInstallProps.args[0]: ${JSON.stringify(arg)} ${message}`);
    });

    it.each([
      ['--enable-composition-functions', CrossplaneVersion.V1_20],
      ['--registry=xpkg.crossplane.io', CrossplaneVersion.V1_20],
      ['--enable-operations', CrossplaneVersion.V2_0],
      ['--enable-provider-deletion-protection', CrossplaneVersion.V2_3],
      ['--enable-ssa-claims', CrossplaneVersion.V2_3],
      ['--debug', CrossplaneVersion.V2_3],
      ['-d', CrossplaneVersion.V1_20],
      ['--cache-dir=/cache', CrossplaneVersion.V2_3],
    ])('%s on %s is accepted', (arg, version) => {
      expect(synth({ version, args: [arg] }).install.args).toContain(arg);
    });

    it('newer patch and minor versions use the nearest known flag table; skipArgValidation turns the check off', () => {
      expect(() => synth({ version: CrossplaneVersion.of('2.4.0'), args: ['--enable-composition-functions'] })).toThrow('no longer has');
      expect(synth({ version: CrossplaneVersion.of('2.4.0'), args: ['--enable-operations'] }).install.args).toEqual(['--enable-operations']);
      expect(synth({ version: CrossplaneVersion.of('2.4.0'), args: ['--enable-future'], skipArgValidation: true }).install.args).toEqual(['--enable-future']);
    });
  });

  it('throws on other bad props, naming prop and value', () => {
    expect(() => synth({ namespace: 'Crossplane' })).toThrow('CrossplaneInstallProps.namespace: "Crossplane"');
    expect(() => synth({ version: '2.3.4' as never })).toThrow('CrossplaneInstallProps.version: "2.3.4" must be a CrossplaneVersion');
    expect(() => synth({ metricsPort: 9090 })).toThrow('CrossplaneInstallProps.metricsPort: 9090 needs metrics: true');
    expect(() => synth({ metrics: true, metricsPort: 70000 })).toThrow('CrossplaneInstallProps.metricsPort: 70000 must be a port');
    expect(() => synth({ replicas: 0 })).toThrow('CrossplaneInstallProps.replicas: 0 must be an integer >= 1');
    expect(() => synth({ resources: { limits: { cpu: 'lots' } } })).toThrow('CrossplaneInstallProps.resources.limits.cpu: "lots" is not a Kubernetes quantity');
    expect(() => synth({ values: { args: ['--x'] } })).toThrow('CrossplaneInstallProps.values.args: ["--x"] is set through CrossplaneInstallProps.args');
    expect(() => synth({ installMethod: 'argo' as never })).toThrow('CrossplaneInstallProps.installMethod: "argo" must be made with InstallMethod');
    expect(() => synth({ args: [''] })).toThrow('CrossplaneInstallProps.args[0]: "" must be a non-empty string');
  });

  describe('HelmTemplate (local chart)', () => {
    let dir: string;
    let fakeHelm: string;
    let chartDir: string;
    beforeAll(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'xp-install-'));
      // A stand-in for `helm`: answers `version`, and for `template` prints a ConfigMap carrying
      // the release name, chart, namespace and the values file it was given.
      fakeHelm = path.join(dir, 'fake-helm');
      writeFileSync(
        fakeHelm,
        [
          '#!/bin/sh',
          'if [ "$1" = version ]; then echo v3.16.0+fake; exit 0; fi',
          'vals=""; ns=""; a=""; b=""',
          'while [ $# -gt 0 ]; do case "$1" in -f) vals="$2"; shift 2;; --namespace) ns="$2"; shift 2;; *) a="$b"; b="$1"; shift;; esac; done',
          'echo "apiVersion: v1"; echo "kind: ConfigMap"; echo "metadata:"; echo "  name: $a-rendered"; echo "  namespace: $ns"',
          'echo "data:"; echo "  chart: \\"$b\\""; echo "  values: |"; sed "s/^/    /" "$vals"',
          '',
        ].join('\n'),
      );
      chmodSync(fakeHelm, 0o755);
      chartDir = path.join(dir, 'crossplane');
      mkdirSync(chartDir);
      writeFileSync(path.join(chartDir, 'Chart.yaml'), 'apiVersion: v1\nname: crossplane\nversion: 1.20.13\nappVersion: 1.20.13\n');
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('renders the local chart with helm template and the values used', () => {
      const { install, out } = synth({
        version: CrossplaneVersion.V1_20,
        args: ['--debug'],
        installMethod: InstallMethod.helmTemplate({ chart: chartDir, helmExecutable: fakeHelm }),
      });
      expect(out.map((o) => o.kind)).toEqual(['Namespace', 'ConfigMap']);
      const cm = out[1];
      expect(cm.metadata).toEqual({ name: 'crossplane-rendered', namespace: 'crossplane-system' });
      expect(cm.data.chart).toBe(chartDir);
      expect(parse(cm.data.values)).toEqual(install.values);
      expect(parse(cm.data.values).args).toEqual(['--debug', '--enable-ssa-claims']);
      expect(install.releaseObjects).toHaveLength(1);
    });

    it('reads the version of a packaged chart (.tgz) and rejects a mismatch', () => {
      const tgz = path.join(dir, 'crossplane-1.20.13.tgz');
      execFileSync('tar', ['czf', tgz, '-C', dir, 'crossplane']);
      expect(synth({ version: CrossplaneVersion.V1_20, installMethod: InstallMethod.helmTemplate({ chart: tgz, helmExecutable: fakeHelm }) }).out).toHaveLength(
        2,
      );
      expect(() => synth({ version: CrossplaneVersion.V2_3, installMethod: InstallMethod.helmTemplate({ chart: tgz, helmExecutable: fakeHelm }) })).toThrow(
        `InstallMethod.helmTemplate(options).chart: ${JSON.stringify(tgz)} is chart version "1.20.13" but CrossplaneInstallProps.version is "2.3.4"`,
      );
    });

    it('gives a clear error when helm is missing or the chart does not exist', () => {
      expect(() =>
        synth({
          version: CrossplaneVersion.V1_20,
          installMethod: InstallMethod.helmTemplate({ chart: chartDir, helmExecutable: path.join(dir, 'no-such-helm') }),
        }),
      ).toThrow(/InstallMethod.helmTemplate\(options\).helmExecutable: ".*no-such-helm" cannot be run \(ENOENT\): install helm 3 on PATH, set \$HELM/);
      expect(() => synth({ installMethod: InstallMethod.helmTemplate({ chart: path.join(dir, 'missing'), helmExecutable: fakeHelm }) })).toThrow(
        'does not exist; give a local chart folder or a packaged .tgz',
      );
      const other = path.join(dir, 'other');
      mkdirSync(other, { recursive: true });
      writeFileSync(path.join(other, 'Chart.yaml'), 'name: nginx\nversion: 2.3.4\n');
      expect(() => synth({ installMethod: InstallMethod.helmTemplate({ chart: other, helmExecutable: fakeHelm }) })).toThrow(
        'is the chart "nginx", not "crossplane"',
      );
    });
  });
});
