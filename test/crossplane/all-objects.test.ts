// Cross-check: every object the crossplane constructs emit, plus sample claims, run through
// klutch-kit's validator (ajv + CEL, claim CRD derived from the XRD the way Crossplane does).
import { describe, expect, it } from '@jest/globals';
import { Testing } from 'cdk8s';
import {
  AnyninesProviderConfig,
  AnyninesServiceType,
  CompositeDeletePolicy,
  CompositeResourceDefinition,
  Composition,
  ConnectionDetail,
  CrossplaneInstall,
  DeploymentRuntimeConfig,
  Function,
  FunctionStep,
  InstallMethod,
  KubernetesProviderConfig,
  Patch,
  Provider,
  PROVIDER_KUBERNETES_PACKAGE,
  ReadinessCheck,
  Transform,
} from '../../constructs/crossplane/index.js';
import { formatIssue, validateDocuments } from '../../constructs/validate/index.js';

function build() {
  const chart = Testing.chart();
  new CrossplaneInstall(chart, 'install', { installMethod: InstallMethod.fluxHelmRelease() });
  const drc = new DeploymentRuntimeConfig(chart, 'drc', { name: 'provider-kubernetes', serviceAccountName: 'provider-kubernetes' });
  new Provider(chart, 'pk', { package: PROVIDER_KUBERNETES_PACKAGE, runtimeConfig: drc });
  const pt = Function.patchAndTransform(chart, 'pt');
  new KubernetesProviderConfig(chart, 'pc', { name: 'kubernetes-provider' });
  new AnyninesProviderConfig(chart, 'a9s', {
    name: 'cache-service-broker',
    serviceType: AnyninesServiceType.SERVICE_BROKER,
    url: 'https://broker.example.com',
    username: { namespace: 'crossplane-system', name: 'broker', key: 'username' },
    password: { namespace: 'crossplane-system', name: 'broker', key: 'password' },
  });
  const xrd = new CompositeResourceDefinition(chart, 'xrd', {
    group: 'example.org',
    names: { kind: 'XCache', plural: 'xcaches' },
    claimNames: { kind: 'Cache', plural: 'caches' },
    defaultCompositionName: 'cache',
    defaultCompositeDeletePolicy: CompositeDeletePolicy.FOREGROUND,
    connectionSecretKeys: ['host'],
    versions: [
      {
        name: 'v1alpha1',
        schema: {
          type: 'object',
          properties: {
            spec: {
              type: 'object',
              required: ['plan'],
              'x-kubernetes-validations': [{ rule: "!self.plan.startsWith('big') || self.replicas >= 3", message: 'big plans need at least 3 replicas' }],
              properties: { plan: { type: 'string', enum: ['small', 'big'] }, replicas: { type: 'integer', default: 1 } },
            },
          },
        },
      },
    ],
  });
  const comp = new Composition(chart, 'comp', { name: 'cache', compositeTypeRef: xrd, writeConnectionSecretsToNamespace: 'crossplane-system' });
  comp.addPatchAndTransformStep({ function: pt }).addResource('cache', {
    base: {
      apiVersion: 'kubernetes.crossplane.io/v1alpha2',
      kind: 'Object',
      spec: { forProvider: { manifest: { apiVersion: 'v1', kind: 'ConfigMap' } }, providerConfigRef: { name: 'kubernetes-provider' } },
    },
    patches: [
      Patch.fromCompositeFieldPath('metadata.labels[crossplane.io/claim-namespace]', 'spec.forProvider.manifest.metadata.namespace'),
      Patch.fromCompositeFieldPath('spec.plan', 'spec.forProvider.manifest.data.size', { transforms: [Transform.map({ small: '1Gi', big: '10Gi' })] }),
    ],
    connectionDetails: [ConnectionDetail.fromFieldPath('host', 'status.atProvider.manifest.metadata.name')],
    readinessChecks: [ReadinessCheck.matchCondition()],
  });
  comp.addStep(FunctionStep.autoReady());
  return Testing.synth(chart);
}

const claim = (spec: Record<string, unknown>) => ({ apiVersion: 'example.org/v1alpha1', kind: 'Cache', metadata: { name: 'c1', namespace: 'team-a' }, spec });

describe('crossplane constructs through klutch-kit validate', () => {
  const objects = build();
  it('every emitted object is valid for Crossplane 2.x and 1.20, and a valid claim passes', () => {
    const docs = [...objects, claim({ plan: 'big', replicas: 3 })].map((doc, index) => ({ file: 'crossplane.yaml', index, doc }));
    const report = validateDocuments(docs);
    expect(report.issues.map(formatIssue)).toEqual([]);
    // DRC, Provider, Function, two ProviderConfigs, XRD, Composition (+ its P&T input) and the claim;
    // Flux kinds have no bundled schema.
    expect(report.schemaChecked).toBe(8);
    expect([...report.unknownKinds].sort()).toEqual(['helm.toolkit.fluxcd.io/v2 HelmRelease', 'source.toolkit.fluxcd.io/v1 HelmRepository']);
  });

  it('a claim that breaks the XRD schema or its CEL rule is reported', () => {
    const bad = [claim({ plan: 'huge' }), claim({ plan: 'big', replicas: 1 })];
    for (const c of bad) {
      const docs = [...objects, c].map((doc, index) => ({ file: 'crossplane.yaml', index, doc }));
      const report = validateDocuments(docs);
      expect(report.ok).toBe(false);
      expect(report.issues.map(formatIssue).join('\n')).toMatch(/Cache\/team-a\/c1/);
    }
  });
});
