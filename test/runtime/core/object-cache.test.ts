/** The one read cache of the runtime: ObjectStore (behind every informer) read through ObjectCache. */
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../../../runtime/core/client.js';
import { ObjectStore } from '../../../runtime/core/object-cache.js';

const obj = (namespace: string | undefined, name: string, owner?: string): KubeObject => ({
  metadata: { name, ...(namespace ? { namespace } : {}), ...(owner ? { labels: { owner } } : {}) },
});
const names = (os: KubeObject[]) => os.map((o) => o.metadata.name).sort();

describe('ObjectStore', () => {
  it('finds objects by key, by namespace and name, and lists them per namespace', () => {
    const s = ObjectStore.of(obj('a', 'x'), obj('b', 'x'), obj(undefined, 'cluster-wide'));
    expect(s.get('a/x')).toBe(s.getByName('a', 'x'));
    expect(s.get('a/x')?.metadata.namespace).toBe('a');
    expect(s.getByName(undefined, 'cluster-wide')?.metadata.name).toBe('cluster-wide');
    expect(s.getByName('c', 'x')).toBeUndefined();
    expect(names(s.list('b'))).toEqual(['x']);
    expect(s.list()).toHaveLength(3);
  });

  it('keeps its indexes in step with puts, replacements and deletes, including objects indexed before addIndex', () => {
    const s = ObjectStore.of(obj('a', 'x', 'alice'));
    s.addIndex('owner', (o) => (o.metadata.labels?.owner ? [o.metadata.labels.owner] : []));
    s.put(obj('a', 'y', 'alice'));
    expect(names(s.byIndex('owner', 'alice'))).toEqual(['x', 'y']);
    expect(s.put(obj('a', 'y', 'bob'))?.metadata.labels?.owner).toBe('alice');
    expect(names(s.byIndex('owner', 'alice'))).toEqual(['x']);
    expect(names(s.byIndex('owner', 'bob'))).toEqual(['y']);
    expect(s.delete('a/x')?.metadata.name).toBe('x');
    expect(s.delete('a/x')).toBeUndefined();
    expect(s.byIndex('owner', 'alice')).toEqual([]);
    expect(s.size).toBe(1);
  });

  it('names the store and the index in its errors', () => {
    const s = new ObjectStore('Informer widgets.example.com');
    expect(() => s.byIndex('owner', 'alice')).toThrow('Informer widgets.example.com: no index "owner"; call addIndex first');
    s.addIndex('owner', () => []);
    expect(() => s.addIndex('owner', () => [])).toThrow('Informer widgets.example.com: index "owner" already exists');
  });
});
