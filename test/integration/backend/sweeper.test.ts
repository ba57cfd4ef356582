// The sweeper on a real provider cluster with --stale-cluster-timeout: an app cluster whose konnector
// never heartbeats gets Abandoned=True (a condition the real ClusterBinding schema accepts) and an
// event, then its cluster namespace is deleted after the notice; one whose konnector heartbeats
// (written with the consumer's own kubeconfig, as the konnector does) is left alone.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type KubeObject } from '../../../runtime/core/index.js';
import { responseKubeconfig } from '../../../contract/wire.js';
import { eventually } from '../../realinfra/util.js';
import { CLIENT_ID, startProvider, type ProviderEnv } from './_fixture.js';

jest.setTimeout(180_000);

let env: ProviderEnv;
const CB = { group: 'klutch.anynines.com', version: 'v1alpha1', plural: 'clusterbindings', namespaced: true, kind: 'ClusterBinding' };
const NS = { group: '', version: 'v1', plural: 'namespaces', namespaced: false, kind: 'Namespace' };
const EVENTS = { group: '', version: 'v1', plural: 'events', namespaced: true, kind: 'Event' };
type Obj = KubeObject & { status?: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>; [k: string]: unknown } };

beforeAll(async () => {
  env = await startProvider('sweeper', ['--stale-cluster-timeout=4s', '--sweep-notice=4s']);
}, 180_000);
afterAll(async () => {
  await env?.stop();
});

async function bind(clusterID: string): Promise<{ ns: string; consumer: KubeClient }> {
  const now = Math.floor(Date.now() / 1000);
  const tok = await env.op.signAsIssuer({ iss: env.op.issuer, sub: 'sweep-user', aud: CLIENT_ID, iat: now, exp: now + 300 });
  const res = await fetch(`${env.backend.url}/bind`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${tok}` },
    body: JSON.stringify({ group: 'mangodb.com', resource: 'mangodbs', clusterID }),
  });
  expect(res.status).toBe(200);
  const kc = new KubeConfig();
  kc.loadFromString(responseKubeconfig((await res.json()) as Parameters<typeof responseKubeconfig>[0]));
  return { ns: kc.getContextObject(kc.getCurrentContext())!.namespace!, consumer: new KubeClient(kc) };
}

describe('sweeping app clusters whose konnector is silent', () => {
  it('condition and event first, deletion after the notice; a heartbeating one stays', async () => {
    const silent = await bind('silent-cluster');
    const alive = await bind('alive-cluster');
    let beating = true;
    const heartbeats = (async () => {
      while (beating) {
        const cb = (await alive.consumer.get(CB, alive.ns, 'cluster')) as Obj;
        await alive.consumer
          .updateStatus(CB, { ...cb, status: { ...cb.status, lastHeartbeatTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), heartbeatInterval: '1s' } })
          .catch(() => undefined);
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();
    try {
      const abandoned = await eventually(
        'Abandoned=True on the silent one',
        async () => {
          const cb = (await env.kube.getOrNull(CB, silent.ns, 'cluster')) as Obj | undefined;
          return cb?.status?.conditions?.find((c) => c.type === 'Abandoned' && c.status === 'True');
        },
        { timeoutMs: 60_000 },
      );
      expect(abandoned.reason).toBe('KonnectorSilent');
      expect(abandoned.message).toMatch(
        /no konnector heartbeat since the bind \d+s ago \(limit 4s\); the cluster namespace will be deleted at \d{4}-\d\d-\d\dT/,
      );
      // the condition and the event are two writes: the event may land just after the condition is seen
      await eventually('an Abandoned event on the silent one', async () => {
        const events = await env.kube.list(EVENTS, silent.ns);
        return events.items.some((e) => (e as unknown as { reason: string }).reason === 'Abandoned');
      });
      await eventually(
        'the silent cluster namespace deleted',
        async () => {
          const ns = await env.kube.getOrNull(NS, undefined, silent.ns);
          return !ns || Boolean(ns.metadata.deletionTimestamp);
        },
        { timeoutMs: 60_000 },
      );
      const kept = (await env.kube.get(CB, alive.ns, 'cluster')) as Obj;
      expect(kept.status?.conditions?.find((c) => c.type === 'Abandoned' && c.status === 'True')).toBeUndefined();
      expect((await env.kube.get(NS, undefined, alive.ns)).metadata.deletionTimestamp).toBeUndefined();
      const metrics = await (await fetch(`${env.backend.url}/metrics`)).text();
      expect(metrics).toContain('klutch_backend_sweeps_total{reason="abandoned",mode="delete"} 1');
    } finally {
      beating = false;
      await heartbeats;
      silent.consumer.close();
      alive.consumer.close();
    }
  });
});
