// Many bound namespaces on real clusters: with informerScope Namespaced the konnector runs one
// provider watch per bound namespace for the export and one per namespace and claim on both sides, so
// 80 namespaces mean well over a hundred watches per cluster connection. Everything must still sync.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { CoreResources, type KubeClient, type KubeObject } from '../../../runtime/core/client.js';
import type { Secret } from '../../../runtime/konnector/types.js';
import { CREDS_LABEL, ensure, eventually, parallel, startBoundPair, WIDGETS, type BoundPair } from './fixture.js';

jest.setTimeout(300_000);

const NAMESPACES = 80;
const names = Array.from({ length: NAMESPACES }, (_, i) => `tenant-${i}`);

let cpc: KubeClient;
let ac: KubeClient;

let pair: BoundPair | undefined;

beforeAll(async () => {
  pair = await startBoundPair('scale', { clusterNamespace: 'cluster-scale' });
  ({ cpc, ac } = pair);
}, 400_000);

afterAll(async () => {
  await pair?.stop();
}, 120_000);

describe(`konnector with ${NAMESPACES} bound namespaces`, () => {
  it('syncs an object up and its credentials Secret down in every namespace', async () => {
    await parallel(names, 8, async (ns) => {
      await ensure(ac, CoreResources.namespaces, { metadata: { name: ns } });
      await eventually(`widget in ${ns}`, () => ensure(ac, WIDGETS, { metadata: { name: 'db', namespace: ns }, spec: { size: 1 } }), 60_000);
    });
    await eventually(
      `all ${NAMESPACES} objects upstream`,
      async () => {
        const up = await cpc.list(WIDGETS);
        return up.items.filter((o) => o.metadata.namespace?.startsWith('cluster-scale-tenant-')).length === NAMESPACES;
      },
      180_000,
      500,
    );
    // The provider writes a credentials Secret next to each upstream object; each comes down.
    await parallel(names, 8, (ns) =>
      cpc.create(CoreResources.secrets, {
        metadata: { name: 'db-creds', namespace: `cluster-scale-${ns}`, labels: { [CREDS_LABEL]: 'true' } },
        stringData: { password: ns },
      }),
    );
    await eventually(
      `all ${NAMESPACES} credentials Secrets down`,
      async () => {
        const got = await Promise.all(names.map((ns) => ac.getOrNull<Secret>(CoreResources.secrets, ns, 'db-creds')));
        return got.every((s) => s !== undefined);
      },
      180_000,
      500,
    );
    for (const ns of names.slice(0, 5)) {
      const s = (await ac.get<Secret>(CoreResources.secrets, ns, 'db-creds')) as KubeObject & Secret;
      expect(Buffer.from(s.data!.password!, 'base64').toString()).toBe(ns);
    }
    // Still responsive afterwards: a change in the last namespace goes up.
    await ac.mergePatch(WIDGETS, names[NAMESPACES - 1], 'db', { spec: { size: 7 } });
    await eventually(
      'change upstream',
      async () => ((await cpc.get(WIDGETS, `cluster-scale-${names[NAMESPACES - 1]}`, 'db')) as KubeObject & { spec: { size: number } }).spec.size === 7,
      60_000,
    );
  });
});
