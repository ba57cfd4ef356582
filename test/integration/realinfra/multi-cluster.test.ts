// Several clusters side by side (a control plane and two app clusters), each with its own ports,
// folder, CA and etcd; stopping one leaves the others running.
import { afterAll, describe, expect, it, jest } from '@jest/globals';
import * as fs from 'node:fs';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { type RealCluster, startCluster } from '../../../runtime/realinfra/index.js';
import { pidAlive } from '../../../runtime/realinfra/registry.js';
import { statusOf } from '../../realinfra/util.js';

jest.setTimeout(180_000);

const started: RealCluster[] = [];

afterAll(async () => {
  await Promise.all(started.map((c) => c.stop()));
});

describe('clusters side by side', () => {
  it('runs three independent clusters at once and stops one without touching the others', async () => {
    const [cp, app1, app2] = await Promise.all(['control-plane', 'app-1', 'app-2'].map((name) => startCluster({ name })));
    started.push(cp!, app1!, app2!);
    const all = [cp!, app1!, app2!];

    expect(new Set(all.map((c) => c.server)).size).toBe(3);
    expect(new Set(all.map((c) => c.dir)).size).toBe(3);
    expect(new Set(all.map((c) => c.caPem)).size).toBe(3);
    expect(new Set(all.flatMap((c) => Object.values(c.ports))).size).toBe(12);

    // Each cluster has its own etcd: an object created in one is absent from the others.
    const core = all.map((c) => c.kubeConfig.makeApiClient(CoreV1Api));
    await core[0]!.createNamespace({ body: { metadata: { name: 'only-in-control-plane' } } });
    expect(await statusOf(core[0]!.readNamespace({ name: 'only-in-control-plane' }))).toBe(200);
    expect(await statusOf(core[1]!.readNamespace({ name: 'only-in-control-plane' }))).toBe(404);
    expect(await statusOf(core[2]!.readNamespace({ name: 'only-in-control-plane' }))).toBe(404);

    // Credentials do not cross clusters: app-1's admin certificate presented to app-2 (trusting
    // app-2's CA, so TLS succeeds) is not signed by app-2's CA, so app-2 sees an anonymous user.
    const mixed = new KubeConfig();
    const app1User = app1!.kubeConfig.getCurrentUser()!;
    mixed.loadFromOptions({
      clusters: [{ name: 'app-2', server: app2!.server, caData: Buffer.from(app2!.caPem).toString('base64') }],
      users: [{ ...app1User }],
      contexts: [{ name: 'mixed', cluster: 'app-2', user: app1User.name }],
      currentContext: 'mixed',
    });
    expect(await statusOf(mixed.makeApiClient(CoreV1Api).listNamespace())).toBe(401);

    // Stopping app-1 ends its processes and removes its folder; the others keep serving.
    const pids = Object.values(app1!.pids()).filter((p): p is number => p !== undefined);
    expect(pids).toHaveLength(3);
    await app1!.stop();
    expect(pids.filter((p) => pidAlive(p))).toEqual([]);
    expect(fs.existsSync(app1!.dir)).toBe(false);
    expect(await statusOf(core[0]!.readNamespace({ name: 'only-in-control-plane' }))).toBe(200);
    expect(await statusOf(core[2]!.listNamespace())).toBe(200);
    // stop() is idempotent.
    await app1!.stop();
  });
});
