/**
 * The objects the export reconcilers' unit tests (export-spec, export-status, export-adoption,
 * export-isolation) work on; their API servers are FakeApiServers (test/support/fake-api-server.ts),
 * their caches ObjectStores. The reconcilers' real-cluster tests are test/integration/konnector/.
 */
import type { KubeObject, ResourceRef } from '../../../runtime/core/client.js';

/** The bound resource in the tests: namespaced widgets. */
export const WIDGETS: ResourceRef = { group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true };
/** A cluster-scoped bound resource. */
export const GADGETS: ResourceRef = { group: 'example.com', version: 'v1', plural: 'gadgets', kind: 'Gadget', namespaced: false };

export function widget(namespace: string | undefined, name: string, extra: Partial<KubeObject> & { spec?: unknown; status?: unknown } = {}): KubeObject {
  const { metadata, ...rest } = extra;
  return {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name, ...(namespace ? { namespace } : {}), uid: `uid-${name}`, resourceVersion: '1', ...metadata },
    ...rest,
  };
}
