import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BINDER_NAME,
  BINDER_RULES,
  BINDING_RESOURCES,
  bindingKinds,
  binderPolicyRules,
  exportedResourceRules,
  goJson,
  apiServiceBindingKind,
} from '../../contract/index.js';
import { binderClusterRole } from '../../runtime/backend/binder.js';

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
const importsOf = (file: string): string[] => [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)[^;]*?from '([^']+)'/gms)].map((m) => m[1]);

/** Every module reachable from `entry` through relative imports, and the packages they import. */
function graph(entry: string): { files: string[]; packages: Set<string> } {
  const files: string[] = [];
  const packages = new Set<string>();
  const todo = [entry];
  while (todo.length) {
    const f = todo.pop()!;
    if (files.includes(f)) continue;
    files.push(f);
    for (const spec of importsOf(f)) {
      if (spec.startsWith('.')) todo.push(resolve(dirname(f), spec.replace(/\.js$/, '.ts')));
      else packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
    }
  }
  return { files, packages };
}

describe('the binding contract (contract/)', () => {
  it('depends on neither cdk8s nor constructs nor any runtime part', () => {
    const { files, packages } = graph(join(root, 'contract/index.ts'));
    expect([...packages].filter((p) => /^(cdk8s|cdk8s-plus-\d+|constructs|@pulumi)/.test(p))).toEqual([]);
    expect(files.map((f) => relative(root, f)).filter((f) => f.startsWith('runtime/') || f.startsWith('stacks/'))).toEqual([]);
  });

  it('offers the API kinds, the wire encoding and the binder RBAC from one entry point', () => {
    expect(apiServiceBindingKind.kind).toBe('APIServiceBinding');
    expect(goJson('BindingProvider', { kind: 'BindingProvider', apiVersion: 'v1alpha1' })).toBe('{"kind":"BindingProvider","apiVersion":"v1alpha1"}');
    expect(BINDER_NAME).toBe('klutch-binder');
  });

  it('has one resource table of the binding API, one entry per kind, as the CRDs serve them', () => {
    const table = Object.values(BINDING_RESOURCES);
    expect(table.map((r) => r.kind).sort()).toEqual(bindingKinds.map((k) => k.kind).sort());
    for (const k of bindingKinds) {
      const crd = k.crd();
      expect(table.find((r) => r.kind === k.kind)).toEqual({
        group: crd.spec.group,
        version: crd.spec.versions[0].name,
        plural: crd.spec.names.plural,
        kind: crd.spec.names.kind,
        namespaced: crd.spec.scope === 'Namespaced',
      });
    }
    expect(BINDING_RESOURCES.apiServiceExportTemplates.group).toBe('example-backend.klutch.anynines.com');
  });

  it('kubectl-bind imports nothing from the backend', () => {
    const dir = join(root, 'runtime/kubectl-bind');
    const offenders = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) =>
        importsOf(join(dir, f))
          .filter((s) => s.includes('/backend/'))
          .map((s) => `${f}: ${s}`),
      );
    expect(offenders).toEqual([]);
  });

  it('the klutch-binder ClusterRole the backend applies has exactly the contract rules, without the reasons', () => {
    expect(binderClusterRole().rules).toEqual(binderPolicyRules());
    expect(binderPolicyRules()).toHaveLength(BINDER_RULES.length);
    for (const r of binderPolicyRules()) expect(r).not.toHaveProperty('why');
    expect(BINDER_RULES.every((r) => r.why.length > 0 && !r.verbs.includes('*'))).toBe(true);
  });

  it('per-consumer rules cover exported resources with status and claimed resources, by group', () => {
    const exp = (plural: string, group: string, scope = 'Namespaced', claims: Array<{ group?: string; resource: string }> = []) => ({
      metadata: {},
      spec: { group, scope, names: { plural }, permissionClaims: claims },
    });
    expect(exportedResourceRules([exp('pgs', 'a.com', 'Namespaced', [{ resource: 'secrets' }]), exp('buckets', 'b.com', 'Cluster')])).toEqual([
      { apiGroups: [''], resources: ['secrets'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
      { apiGroups: ['a.com'], resources: ['pgs', 'pgs/status'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
      { apiGroups: ['b.com'], resources: ['buckets', 'buckets/status'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
    ]);
    expect(exportedResourceRules([exp('pgs', 'a.com'), exp('buckets', 'b.com', 'Cluster', [{ resource: 'secrets' }])], true)).toEqual([
      { apiGroups: ['b.com'], resources: ['buckets', 'buckets/status'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
    ]);
  });
});
