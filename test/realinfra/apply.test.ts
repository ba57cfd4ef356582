// Unit tests (no cluster) of the pure parts of runtime/realinfra/apply.ts.
import { afterEach, describe, expect, it } from '@jest/globals';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { APPLY_ORDER, objectRef, readManifests, sortForApply } from '../../runtime/realinfra/apply.js';

const obj = (kind: string, name: string, namespace?: string) => ({ apiVersion: 'v1', kind, metadata: { name, ...(namespace ? { namespace } : {}) } });

describe('sortForApply', () => {
  it("puts kinds in Helm's install order, custom resources last, stable within a kind", () => {
    const sorted = sortForApply([
      obj('Widget', 'w1'),
      obj('Deployment', 'd'),
      obj('Widget', 'w2'),
      obj('CustomResourceDefinition', 'c'),
      obj('Namespace', 'n'),
      obj('ClusterRole', 'r'),
    ]);
    expect(sorted.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Namespace/n',
      'CustomResourceDefinition/c',
      'ClusterRole/r',
      'Deployment/d',
      'Widget/w1',
      'Widget/w2',
    ]);
    expect(APPLY_ORDER.indexOf('Namespace')).toBeLessThan(APPLY_ORDER.indexOf('CustomResourceDefinition'));
  });

  it('names objects as Kind/namespace/name', () => {
    expect(objectRef(obj('ConfigMap', 'c', 'ns'))).toBe('ConfigMap/ns/c');
    expect(objectRef(obj('Namespace', 'n'))).toBe('Namespace/n');
  });
});

describe('readManifests', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reads every YAML/JSON document under a folder in path order, flattening Lists', () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-test-manifests-'));
    fs.mkdirSync(path.join(dir, '10-apps'));
    fs.writeFileSync(
      path.join(dir, '00-base.yaml'),
      'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: a\n',
    );
    fs.writeFileSync(path.join(dir, '10-apps', 'list.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [obj('Secret', 's', 'a')] }));
    fs.writeFileSync(path.join(dir, 'README.md'), '# not a manifest');
    expect(readManifests(dir).map(objectRef)).toEqual(['Namespace/a', 'ConfigMap/a/c', 'Secret/a/s']);
  });

  it('names the file and document of something that is not a Kubernetes object', () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-test-manifests-'));
    const f = path.join(dir, 'bad.yaml');
    fs.writeFileSync(f, 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\njust: data\n');
    expect(() => readManifests(dir!)).toThrow(`readManifests: ${f} document 2 is not a Kubernetes object`);
  });
});
