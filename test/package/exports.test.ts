/**
 * The package surface without packing it: root exports by name, the Node.js version rule of the
 * CommonJS entry files, and the exports map / typesVersions / cjs/ files agreeing with each other.
 * (`npm run test:package` packs the tarball and uses it from real projects.)
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { describe, expect, it } from '@jest/globals';
import * as root from '../../constructs/index.js';
import type { api } from '../../constructs/index.js';
import { catalogue, dataservice, topology } from '../../constructs/index.js';

const require = createRequire(import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  exports: Record<string, string | { types: string; require: string; default: string }>;
  typesVersions: { '*': Record<string, string[]> };
  files: string[];
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

describe('root exports', () => {
  it('names the common constructs, the same objects as in their namespaces', () => {
    expect(root.ControlPlaneCluster).toBe(topology.ControlPlaneCluster);
    expect(root.AppCluster).toBe(topology.AppCluster);
    expect(root.synthTopology).toBe(topology.synthTopology);
    expect(root.renderTopology).toBe(topology.renderTopology);
    expect(root.DataService).toBe(dataservice.DataService);
    expect(root.Plan).toBe(dataservice.Plan);
    expect(root.PlanTopology).toBe(dataservice.PlanTopology);
    // the deprecated name of PlanTopology, until 1.0
    expect(root.Topology).toBe(dataservice.PlanTopology);
    expect(root.A8sBackend).toBe(dataservice.A8sBackend);
    expect(root.A9sBackend).toBe(dataservice.A9sBackend);
    expect(root.credentialsSecretClaim).toBe(dataservice.credentialsSecretClaim);
    expect(root.Catalogue).toBe(catalogue.Catalogue);
  });
  it('keeps the namespaces', () => {
    expect(Object.keys(root).filter((k) => /^[a-z]/.test(k) && typeof (root as Record<string, unknown>)[k] === 'object')).toEqual(
      expect.arrayContaining(['api', 'catalogue', 'crossplane', 'dataservice', 'runtime', 'topology', 'validate']),
    );
  });
});

describe('ObjectMeta', () => {
  it("is assignable to and from client-node's V1ObjectMeta", () => {
    const ours: api.ObjectMeta = { name: 'a', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'b', uid: 'u' }], creationTimestamp: new Date(0) };
    const theirs: V1ObjectMeta = ours;
    const back: api.ObjectMeta = theirs;
    expect(back.name).toBe('a');
  });
});

describe('Node.js version check of the CommonJS entries', () => {
  const { supportsNode, checkNode, MINIMUM } = require('../../cjs/_node.cjs') as {
    supportsNode(v: string): boolean;
    checkNode(v?: string): void;
    MINIMUM: string;
  };
  it('accepts the versions with require() of ES modules and rejects the others', () => {
    for (const v of ['20.19.0', '20.20.2', 'v22.12.0', '22.20.1', '23.0.0', '24.3.0']) expect([v, supportsNode(v)]).toEqual([v, true]);
    for (const v of ['18.20.4', '20.18.3', '21.7.3', '22.11.0', 'x']) expect([v, supportsNode(v)]).toEqual([v, false]);
    expect(() => checkNode()).not.toThrow();
  });
  it('says which version runs and which is needed', () => {
    expect(() => checkNode('20.18.3')).toThrow(`klutch-kit needs Node.js ${MINIMUM}`);
    expect(() => checkNode('20.18.3')).toThrow('this is Node.js 20.18.3');
  });
  it('is the same rule as the ES module check of the package root', async () => {
    const esm = await import('../../constructs/_node-version.js');
    expect(esm.MINIMUM_NODE).toBe(MINIMUM);
    for (const v of ['18.20.4', '20.18.3', '20.19.0', '21.7.3', '22.11.0', '22.12.0', '23.0.0', '24.3.0', 'x'])
      expect([v, esm.supportsNode(v)]).toEqual([v, supportsNode(v)]);
  });
  it('matches engines.node', () => {
    expect((JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { engines: { node: string } }).engines.node).toBe(MINIMUM);
  });
});

describe('package.json', () => {
  const entries = Object.entries(pkg.exports).filter((e): e is [string, { types: string; require: string; default: string }] => typeof e[1] === 'object');
  it('gives every exports entry types, a CommonJS entry and the ES module, and a typesVersions path', () => {
    expect(entries.length).toBeGreaterThanOrEqual(10);
    for (const [key, e] of entries) {
      expect(Object.keys(e)).toEqual(['types', 'require', 'default']);
      expect(e.types).toBe(e.default.replace(/\.js$/, '.d.ts'));
      const shim = readFileSync(new URL(`../../${e.require}`, import.meta.url), 'utf8');
      expect(shim).toContain(`require('.${e.default}')`);
      if (key !== '.') expect(pkg.typesVersions['*'][key.slice(2)]).toEqual([e.types.slice(2)]);
    }
    expect(Object.keys(pkg.typesVersions['*']).length).toBe(entries.length - 1);
  });
  it('has the source file of every exports entry', () => {
    for (const [, e] of entries) {
      const src = e.default.replace(/^\.\/lib\//, '../../').replace(/\.js$/, '.ts');
      expect([src, existsSync(new URL(src, import.meta.url))]).toEqual([src, true]);
    }
  });
  it('makes cdk8s, cdk8s-plus-28 and constructs peers, Pulumi and the runtime libraries optional peers', () => {
    for (const n of ['cdk8s', 'cdk8s-plus-28', 'constructs']) {
      expect([n, pkg.peerDependencies[n], pkg.peerDependenciesMeta[n]]).toEqual([n, expect.any(String), undefined]);
    }
    for (const n of ['@pulumi/pulumi', '@pulumi/kubernetes', '@kubernetes/client-node', 'openid-client', 'jose', 'pino', 'prom-client']) {
      expect([n, pkg.peerDependenciesMeta[n]?.optional]).toEqual([n, true]);
    }
    for (const n of Object.keys(pkg.peerDependencies)) {
      expect([n, pkg.dependencies[n]]).toEqual([n, undefined]);
      expect([n, typeof pkg.devDependencies[n]]).toEqual([n, 'string']);
    }
  });
});

describe('the examples', () => {
  it('each clickhouse.ts is the README\'s "Adding a data service" block, byte for byte (npm run test:package runs them)', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('## Adding a data service')))?.[1];
    expect(block).toBeDefined();
    for (const example of ['esm-nodenext', 'cdk8s-app', 'pulumi-app', 'cdk8s-plus-33']) {
      expect({ example, same: readFileSync(new URL(`../../examples/${example}/clickhouse.ts`, import.meta.url), 'utf8') === block }).toEqual({
        example,
        same: true,
      });
    }
  });
});
