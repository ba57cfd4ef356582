import { describe, expect, it } from '@jest/globals';
import { isolationFor, locKey, type IsolationContext } from '../../../runtime/konnector/export-isolation.js';
import { CLUSTER_NAMESPACE_ANNOTATION } from '../../../runtime/konnector/types.js';
import { widget } from './_export-fixtures.js';

const ctx: IsolationContext = {
  clusterNamespace: 'cluster-a',
  providerNamespaceFor: (ns) => ({ shop: 'cluster-a-shop' })[ns],
  consumerNamespaceFor: (ns) => ({ 'cluster-a-shop': 'shop' })[ns],
};
const owned = (name: string, namespace?: string, owner = 'cluster-a') =>
  widget(namespace, name, { metadata: { annotations: { [CLUSTER_NAMESPACE_ANNOTATION]: owner } } });

describe('isolation strategies', () => {
  it('namespaced resources go to the provider namespace of their consumer namespace, same name', () => {
    const s = isolationFor(true, undefined, ctx);
    expect(s.providerNamespaced).toBe(true);
    expect(s.toProvider('shop', 'db')).toEqual({ namespace: 'cluster-a-shop', name: 'db' });
    expect(s.toProvider('unassigned', 'db')).toBeUndefined();
    expect(s.toConsumer(widget('cluster-a-shop', 'db'))).toEqual({ namespace: 'shop', name: 'db' });
    expect(s.toConsumer(widget('cluster-b-shop', 'db'))).toBeUndefined();
    expect(s.upstreamAnnotations()).toEqual({});
    expect(s.refuseTakeover(widget('cluster-a-shop', 'db'))).toBeUndefined();
  });

  it('Prefixed (the default for cluster-scoped) prefixes the cluster namespace and owns only annotated, prefixed objects', () => {
    const s = isolationFor(false, undefined, ctx);
    expect(s.name).toBe('Prefixed');
    expect(s.providerNamespaced).toBe(false);
    expect(s.toProvider(undefined, 'db')).toEqual({ name: 'cluster-a-db' });
    expect(s.toConsumer(owned('cluster-a-db'))).toEqual({ name: 'db' });
    expect(s.toConsumer(widget(undefined, 'cluster-a-db'))).toBeUndefined(); // no annotation
    expect(s.toConsumer(owned('other-db'))).toBeUndefined(); // no prefix
    expect(s.toConsumer(owned('cluster-a-db', undefined, 'cluster-b'))).toBeUndefined();
    expect(s.upstreamAnnotations()).toEqual({ [CLUSTER_NAMESPACE_ANNOTATION]: 'cluster-a' });
    expect(s.refuseTakeover(owned('cluster-a-db'))).toBeUndefined();
    expect(s.refuseTakeover(owned('cluster-a-db', undefined, 'cluster-b'))).toBe(
      'upstream cluster-a-db belongs to cluster namespace "cluster-b", not "cluster-a"; refusing to take it over',
    );
    expect(s.refuseTakeover(widget(undefined, 'cluster-a-db'))).toContain('"(none)"');
  });

  it('None keeps the name and owns only objects annotated with its cluster namespace', () => {
    const s = isolationFor(false, 'None', ctx);
    expect(s.toProvider(undefined, 'db')).toEqual({ name: 'db' });
    expect(s.toConsumer(owned('db'))).toEqual({ name: 'db' });
    expect(s.toConsumer(owned('db', undefined, 'cluster-b'))).toBeUndefined();
    expect(s.refuseTakeover(owned('db', undefined, 'cluster-b'))).toContain('refusing to take it over');
  });

  it('Namespaced puts cluster-scoped copies into the cluster namespace and owns what is there', () => {
    const s = isolationFor(false, 'Namespaced', ctx);
    expect(s.providerNamespaced).toBe(true);
    expect(s.toProvider(undefined, 'db')).toEqual({ namespace: 'cluster-a', name: 'db' });
    expect(s.toConsumer(widget('cluster-a', 'db'))).toEqual({ name: 'db' });
    expect(s.toConsumer(widget('cluster-b', 'db'))).toBeUndefined();
    expect(s.upstreamAnnotations()).toEqual({ [CLUSTER_NAMESPACE_ANNOTATION]: 'cluster-a' });
    expect(s.refuseTakeover(widget('cluster-a', 'db'))).toBeUndefined();
  });

  it('every strategy maps a consumer object up and back to itself', () => {
    for (const [namespaced, mode, ns] of [
      [true, undefined, 'shop'],
      [false, 'Prefixed', undefined],
      [false, 'None', undefined],
      [false, 'Namespaced', undefined],
    ] as const) {
      const s = isolationFor(namespaced, mode, ctx);
      const loc = s.toProvider(ns, 'db')!;
      const up = widget(loc.namespace, loc.name, { metadata: { annotations: s.upstreamAnnotations() } });
      expect({ mode, back: s.toConsumer(up) }).toEqual({ mode, back: ns ? { namespace: ns, name: 'db' } : { name: 'db' } });
      expect(locKey(loc)).toBe(loc.namespace ? `${loc.namespace}/${loc.name}` : loc.name);
    }
  });

  it('an unknown clusterScopedIsolation is an error naming the field and the value', () => {
    expect(() => isolationFor(false, 'Shared', ctx)).toThrow('spec.clusterScopedIsolation: "Shared" is not one of "Prefixed", "None", "Namespaced"');
  });
});
