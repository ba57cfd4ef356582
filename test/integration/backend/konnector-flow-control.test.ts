// KonnectorFlowControl on a real kube-apiserver: the API server accepts the FlowSchemas and the
// PriorityLevelConfiguration, and classifies requests as intended — read from the
// X-Kubernetes-PF-FlowSchema-UID / -PriorityLevel-UID headers it puts on every answer: a konnector
// (ServiceAccount klutch-binder of a cluster namespace) on the binding API and an exported group →
// the konnectors' level; the backend's ServiceAccount → workload-high; the same konnector on
// another API → not the konnectors' level.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import https from 'node:https';
import { App, Chart } from 'cdk8s';
import { KonnectorFlowControl } from '../../../constructs/runtime/index.js';
import { KubeClient, type KubeObject } from '../../../runtime/core/index.js';
import { applyManifests, startCluster, type RealCluster } from '../../../runtime/realinfra/index.js';
import { eventually } from '../../realinfra/util.js';

jest.setTimeout(180_000);

let cluster: RealCluster;
let kube: KubeClient;
const FS = { group: 'flowcontrol.apiserver.k8s.io', version: 'v1', plural: 'flowschemas', namespaced: false, kind: 'FlowSchema' };
const PL = {
  group: 'flowcontrol.apiserver.k8s.io',
  version: 'v1',
  plural: 'prioritylevelconfigurations',
  namespaced: false,
  kind: 'PriorityLevelConfiguration',
};
const NS = { group: '', version: 'v1', plural: 'namespaces', namespaced: false, kind: 'Namespace' };
const SA = { group: '', version: 'v1', plural: 'serviceaccounts', namespaced: true, kind: 'ServiceAccount' };

beforeAll(async () => {
  cluster = await startCluster({ name: 'apf' });
  kube = new KubeClient(cluster.kubeConfig);
  const app = new App();
  const chart = new Chart(app, 'apf');
  new KonnectorFlowControl(chart, 'flow', { exportedApiGroups: ['mangodb.com'] });
  await applyManifests(cluster.kubeConfig, chart.toJson() as never[]);
}, 180_000);
afterAll(async () => {
  kube?.close();
  await cluster?.stop();
});

async function tokenFor(namespace: string, name: string): Promise<string> {
  await kube.create(NS, { metadata: { name: namespace } }).catch(() => undefined);
  await kube.create(SA, { metadata: { name, namespace } });
  const tr = await kube.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } },
  });
  return tr.status.token;
}

/** The FlowSchema and priority level uids the API server classified a GET of `path` into. */
function classify(token: string, path: string): Promise<{ flowSchema?: string; priorityLevel?: string; status?: number }> {
  return new Promise((resolve, reject) => {
    const req = https.request(`${cluster.server}${path}`, { ca: cluster.caPem, headers: { Authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({
          status: res.statusCode,
          flowSchema: res.headers['x-kubernetes-pf-flowschema-uid'] as string | undefined,
          priorityLevel: res.headers['x-kubernetes-pf-prioritylevel-uid'] as string | undefined,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('KonnectorFlowControl on a real API server', () => {
  it('puts konnectors into their own fair-queued level and the backend into workload-high', async () => {
    const konnectors = await kube.get<KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } }>(FS, undefined, 'klutch-konnectors');
    const controlPlane = await kube.get(FS, undefined, 'klutch-konnectors-control-plane');
    const level = await kube.get(PL, undefined, 'klutch-konnectors');
    const workloadHigh = await kube.get(PL, undefined, 'workload-high');
    // the API server checked the schema's reference to its level
    await eventually('FlowSchema Dangling=False', async () => {
      const fs = await kube.get<typeof konnectors>(FS, undefined, 'klutch-konnectors');
      return fs.status?.conditions?.some((c) => c.type === 'Dangling' && c.status === 'False');
    });

    const konnector = await tokenFor('cluster-0123456789ab', 'klutch-binder');
    const backend = await tokenFor('klutch-system', 'klutch-backend');
    const want = { flowSchema: konnectors.metadata.uid, priorityLevel: level.metadata.uid };
    // the configuration reaches the API server's dispatcher asynchronously
    await eventually('konnector traffic classified as klutch-konnectors', async () => {
      const c = await classify(konnector, '/apis/klutch.anynines.com/v1alpha1/namespaces/cluster-0123456789ab/clusterbindings');
      return c.flowSchema === want.flowSchema && c.priorityLevel === want.priorityLevel;
    });
    expect(await classify(konnector, '/apis/mangodb.com/v1alpha1/namespaces/cluster-0123456789ab-default/mangodbs')).toMatchObject(want);
    const other = await classify(konnector, '/api/v1/namespaces/cluster-0123456789ab/pods');
    expect(other.flowSchema).toBeDefined();
    expect(other.flowSchema).not.toBe(konnectors.metadata.uid);
    expect(await classify(backend, '/apis/klutch.anynines.com/v1alpha1/clusterbindings')).toMatchObject({
      flowSchema: controlPlane.metadata.uid,
      priorityLevel: workloadHigh.metadata.uid,
    });
  });
});
