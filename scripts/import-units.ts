/**
 * The units of `npm run import` (scripts/import.ts): each is one `cdk8s import NAME:=FILE` run whose
 * FILE (`imports/crds/units/NAME.yaml`) concatenates the listed CRD files. cdk8s.yaml names the same
 * inputs, so a plain `npx cdk8s import` regenerates imports/*.ts — except units with a class prefix,
 * which cdk8s.yaml cannot set per import (see CDK8S_YAML_IMPORTS).
 */
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderBindingCrdFiles } from '../contract/api/crds.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const crdsDir = join(root, 'imports', 'crds');

/** Where the unit inputs are written, relative to the repository root. */
export const UNITS_DIR = 'imports/crds/units';

/**
 * Environment for every cdk8s CLI run: without it cdk8s-cli asks the npm registry for a newer
 * version before each command and, offline, prints an `http error` stack trace (cdk8s-cli reads its
 * options from `CDK8S_*` variables; this is `--no-check-upgrade`).
 */
export const CDK8S_ENV = { CDK8S_CHECK_UPGRADE: 'false' } as const;

/** One `cdk8s import NAME:=file` unit: the files are concatenated into one multi-document input. */
export interface ImportUnit {
  readonly name: string;
  /** Paths relative to the repo root. */
  readonly files: readonly string[];
  /** Applies the function-patch-and-transform enum fix (see imports/crds/SOURCES.md). */
  readonly patchPt?: boolean;
  /** `--class-prefix` (provider-kubernetes: a class named `Object` would shadow the global). */
  readonly classPrefix?: string;
}

const xp = (f: string) => `imports/crds/crossplane/v2/${f}`;

export const IMPORT_UNITS: readonly ImportUnit[] = [
  {
    // imports/crossplane-apiextensions.crossplane.io.ts, imports/crossplane-pkg.crossplane.io.ts
    name: 'crossplane',
    files: [
      xp('apiextensions.crossplane.io_compositeresourcedefinitions.yaml'),
      xp('apiextensions.crossplane.io_compositions.yaml'),
      xp('pkg.crossplane.io_providers.yaml'),
      xp('pkg.crossplane.io_functions.yaml'),
      xp('pkg.crossplane.io_configurations.yaml'),
      xp('pkg.crossplane.io_deploymentruntimeconfigs.yaml'),
    ],
  },
  {
    // imports/provider-kubernetes-kubernetes.crossplane.io.ts, imports/provider-kubernetes-kubernetes.m.crossplane.io.ts
    // (classes KubernetesObject, KubernetesProviderConfig, KubernetesClusterProviderConfig)
    name: 'provider-kubernetes',
    classPrefix: 'Kubernetes',
    files: [
      'imports/crds/provider-kubernetes/kubernetes.crossplane.io_objects.yaml',
      'imports/crds/provider-kubernetes/kubernetes.crossplane.io_providerconfigs.yaml',
      'imports/crds/provider-kubernetes/kubernetes.m.crossplane.io_objects.yaml',
      'imports/crds/provider-kubernetes/kubernetes.m.crossplane.io_providerconfigs.yaml',
      'imports/crds/provider-kubernetes/kubernetes.m.crossplane.io_clusterproviderconfigs.yaml',
    ],
  },
  {
    // imports/patch-and-transform-pt.fn.crossplane.io.ts
    name: 'patch-and-transform',
    files: ['imports/crds/function-patch-and-transform/pt.fn.crossplane.io_resources.yaml'],
    patchPt: true,
  },
  {
    // imports/provider-anynines-dataservices.anynines.com.ts
    name: 'provider-anynines',
    files: readdirSync(join(crdsDir, 'provider-anynines'))
      .filter((f) => f.endsWith('.yaml'))
      .sort()
      .map((f) => `imports/crds/provider-anynines/${f}`),
  },
  {
    // imports/prometheus-operator-monitoring.coreos.com.ts (ServiceMonitor, PodMonitor, PrometheusRule)
    name: 'prometheus-operator',
    files: readdirSync(join(crdsDir, 'prometheus-operator'))
      .filter((f) => f.endsWith('.yaml'))
      .sort()
      .map((f) => `imports/crds/prometheus-operator/${f}`),
  },
  {
    // imports/klutch-klutch.anynines.com.ts, imports/klutch-example-backend.klutch.anynines.com.ts
    name: 'klutch',
    files: [...renderBindingCrdFiles().keys()].sort().map((f) => `contract/api/crds/${f}`),
  },
];

/** The `imports:` entries of cdk8s.yaml: every unit without a class prefix. */
export const CDK8S_YAML_IMPORTS: readonly string[] = IMPORT_UNITS.filter((u) => !u.classPrefix).map((u) => `${u.name}:=${UNITS_DIR}/${u.name}.yaml`);
