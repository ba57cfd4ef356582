import { describe, expect, it } from '@jest/globals';
import { Testing } from 'cdk8s';
import {
  AUTO_READY_PACKAGE,
  DeploymentRuntimeConfig,
  Function,
  PackagePullPolicy,
  PATCH_AND_TRANSFORM_PACKAGE,
  RevisionActivationPolicy,
} from '../../constructs/crossplane/index.js';
import { schemaErrors } from './_schema.js';

const FN_V2 = 'crossplane/v2/pkg.crossplane.io_functions.yaml';
const FN_V120 = 'crossplane/v1.20/pkg.crossplane.io_functions.yaml';

describe('Function', () => {
  it('emits pkg.crossplane.io/v1 Function named after the package, valid on 2.3 and 1.20', () => {
    const chart = Testing.chart();
    const drc = new DeploymentRuntimeConfig(chart, 'drc', { name: 'functions' });
    const pt = Function.patchAndTransform(chart, 'pt', {
      runtimeConfig: drc,
      packagePullPolicy: PackagePullPolicy.IF_NOT_PRESENT,
      packagePullSecrets: ['regcred'],
      revisionActivationPolicy: RevisionActivationPolicy.AUTOMATIC,
      revisionHistoryLimit: 2,
      commonLabels: { team: 'data' },
    });
    const ar = Function.autoReady(chart, 'ar');
    const fns = Testing.synth(chart).filter((o) => o.kind === 'Function');
    expect(fns.map((f) => f.metadata.name)).toEqual(['function-patch-and-transform', 'function-auto-ready']);
    expect(pt.functionName).toBe('function-patch-and-transform');
    expect(ar.functionName).toBe('function-auto-ready');
    expect(fns[0]).toMatchObject({
      apiVersion: 'pkg.crossplane.io/v1',
      spec: {
        package: PATCH_AND_TRANSFORM_PACKAGE,
        packagePullPolicy: 'IfNotPresent',
        packagePullSecrets: [{ name: 'regcred' }],
        revisionActivationPolicy: 'Automatic',
        revisionHistoryLimit: 2,
        commonLabels: { team: 'data' },
        runtimeConfigRef: { apiVersion: 'pkg.crossplane.io/v1beta1', kind: 'DeploymentRuntimeConfig', name: 'functions' },
      },
    });
    expect(fns[1].spec).toEqual({ package: AUTO_READY_PACKAGE });
    for (const f of fns) {
      expect(schemaErrors(FN_V2, f, 'v1')).toEqual([]);
      expect(schemaErrors(FN_V120, f, 'v1')).toEqual([]);
    }
  });

  it('accepts digests, ports and explicit names', () => {
    const chart = Testing.chart();
    const digest = `ghcr.io/acme/function-x@sha256:${'a'.repeat(64)}`;
    expect(new Function(chart, 'a', { package: digest }).name).toBe('function-x');
    expect(new Function(chart, 'b', { package: 'registry.local:5000/fns/function-y:v1.0.0', name: 'y' }).name).toBe('y');
    expect(new Function(chart, 'c', { package: 'localhost:5000/function-z:latest' }).name).toBe('function-z');
  });

  it('rejects package refs that are not fully qualified or not pinned', () => {
    const chart = Testing.chart();
    expect(() => new Function(chart, 'a', { package: 'crossplane-contrib/function-patch-and-transform:v0.10.7' })).toThrow(
      'FunctionProps.package: "crossplane-contrib/function-patch-and-transform:v0.10.7" is not fully qualified: "crossplane-contrib" is not a registry host',
    );
    expect(() => new Function(chart, 'b', { package: 'xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform' })).toThrow(
      'FunctionProps.package: "xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform" has neither a tag nor a digest',
    );
    expect(() => new Function(chart, 'c', { package: 'function-patch-and-transform:v1' })).toThrow(
      'FunctionProps.package: "function-patch-and-transform:v1" is not a fully qualified package reference',
    );
    expect(() => new Function(chart, 'd', { package: 'xpkg.crossplane.io/Acme/Fn:v1' })).toThrow('FunctionProps.package: "xpkg.crossplane.io/Acme/Fn:v1"');
    expect(() => new Function(chart, 'e', { package: PATCH_AND_TRANSFORM_PACKAGE, name: 'Bad_Name' })).toThrow('FunctionProps.name: "Bad_Name"');
    expect(() => new Function(chart, 'f', { package: PATCH_AND_TRANSFORM_PACKAGE, revisionHistoryLimit: -1 })).toThrow(
      'FunctionProps.revisionHistoryLimit: -1 must be an integer >= 0',
    );
    expect(() => new Function(chart, 'g', { package: PATCH_AND_TRANSFORM_PACKAGE, packagePullPolicy: 'Sometimes' as unknown as PackagePullPolicy })).toThrow(
      'FunctionProps.packagePullPolicy: "Sometimes" must be one of Always, IfNotPresent, Never',
    );
  });
});
