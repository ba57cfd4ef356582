// Cluster DNS for the harness's real node: CoreDNS (built from tools/coredns with only the kubernetes, errors,
// health and ready plugins) as a Deployment in kube-system behind the `kube-dns` Service at CLUSTER_DNS.ip, the
// address kubelet writes into every pod's resolv.conf when the node was started with clusterDnsKubeletConfig().
// It answers `<service>.<namespace>.svc.cluster.local` (and headless Services with their pods' IPs) and nothing
// else: pods here reach no outside network. Its image is written like the other harness images
// (runtime/image/oci.ts), from the static binary, and pushed to the node's registry.
import type { KubernetesObject } from '@kubernetes/client-node';
import * as os from 'node:os';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { NONROOT_UID } from '../image/base.js';
import { hostPlatform } from '../image/dex.js';
import { imageIndex, layerFromEntries, platformImage, writeLayout } from '../image/oci.js';
import { pushLayoutImage } from '../image/registry.js';
import { applyManifests } from './apply.js';
import { clientOf } from './client.js';
import type { RealCluster } from './cluster.js';
import { NODE_NETWORK } from './node.js';

/** The cluster DNS Service's address (in the node's Service range) and the cluster domain. */
export const CLUSTER_DNS = { ip: '10.0.0.10', domain: 'cluster.local', namespace: 'kube-system', name: 'coredns' } as const;

/** The kubelet fields that point pods at the cluster DNS: pass as `startCluster({ nodes: 1, node: { kubeletConfig } })`. */
export function clusterDnsKubeletConfig(): Record<string, unknown> {
  return { clusterDNS: [CLUSTER_DNS.ip], clusterDomain: CLUSTER_DNS.domain };
}

/** True when the node's kubelet was started with clusterDnsKubeletConfig() (read from its configuration file). */
export function nodeHasClusterDns(nodeDir: string): boolean {
  try {
    const cfg = parseYaml(fs.readFileSync(path.join(nodeDir, 'kubelet-config.yaml'), 'utf8')) as { clusterDNS?: unknown } | null;
    return Array.isArray(cfg?.clusterDNS) && cfg.clusterDNS.includes(CLUSTER_DNS.ip);
  } catch {
    return false;
  }
}

const COREFILE = `.:1053 {
    errors
    health :8080
    ready :8181
    kubernetes ${CLUSTER_DNS.domain} in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
}
`;

/** The objects of the cluster DNS (image: its reference in the node's registry). */
export function clusterDnsObjects(image: string): KubernetesObject[] {
  const { namespace, name } = CLUSTER_DNS;
  const labels = { 'k8s-app': 'kube-dns' };
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'klutch-kit:coredns' },
      rules: [
        { apiGroups: [''], resources: ['services', 'pods', 'namespaces'], verbs: ['list', 'watch'] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
      ],
    } as KubernetesObject,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'klutch-kit:coredns' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'klutch-kit:coredns' },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    } as KubernetesObject,
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { Corefile: COREFILE } } as KubernetesObject,
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: name,
            // Its own resolv.conf must not point at itself.
            dnsPolicy: 'Default',
            securityContext: { runAsNonRoot: true, runAsUser: NONROOT_UID, runAsGroup: NONROOT_UID, seccompProfile: { type: 'RuntimeDefault' } },
            containers: [
              {
                name: 'coredns',
                image,
                args: ['-conf', '/etc/coredns/Corefile'],
                ports: [
                  { name: 'dns', containerPort: 1053, protocol: 'UDP' },
                  { name: 'dns-tcp', containerPort: 1053, protocol: 'TCP' },
                ],
                readinessProbe: { httpGet: { path: '/ready', port: 8181 }, periodSeconds: 2 },
                livenessProbe: { httpGet: { path: '/health', port: 8080 }, periodSeconds: 10 },
                resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '128Mi' } },
                securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
                volumeMounts: [{ name: 'config', mountPath: '/etc/coredns', readOnly: true }],
              },
            ],
            volumes: [{ name: 'config', configMap: { name } }],
          },
        },
      },
    } as KubernetesObject,
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'kube-dns', namespace, labels },
      spec: {
        selector: labels,
        clusterIP: CLUSTER_DNS.ip,
        ports: [
          { name: 'dns', port: 53, targetPort: 1053, protocol: 'UDP' },
          { name: 'dns-tcp', port: 53, targetPort: 1053, protocol: 'TCP' },
        ],
      },
    } as KubernetesObject,
  ];
}

/**
 * Builds the CoreDNS image from `binary`, pushes it to the node's registry and deploys the cluster DNS; resolves
 * when its pod is Ready. The node must have been started with clusterDnsKubeletConfig() for pods to use it.
 */
export async function startClusterDns(cluster: RealCluster, binary: string, opts: { timeoutMs?: number } = {}): Promise<{ image: string }> {
  const node = cluster.node;
  if (!node) throw new Error('startClusterDns: the cluster has no node; start it with startCluster({ nodes: 1 })');
  if (!CLUSTER_DNS.ip.startsWith(NODE_NETWORK.serviceSubnet.split('.').slice(0, 3).join('.')))
    throw new Error(`startClusterDns: ${CLUSTER_DNS.ip} is not in the node's Service range ${NODE_NETWORK.serviceSubnet}`);
  const bin = fs.readFileSync(binary);
  const layer = layerFromEntries([
    { type: 'file', path: 'coredns', data: bin, mode: 0o755 },
    { type: 'file', path: 'etc/passwd', data: Buffer.from(`root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:${NONROOT_UID}:${NONROOT_UID}::/:/sbin/nologin\n`) },
    { type: 'dir', path: 'tmp', mode: 0o1777 },
  ]);
  const idx = imageIndex([
    platformImage(hostPlatform(), [layer], {
      User: `${NONROOT_UID}:${NONROOT_UID}`,
      Entrypoint: ['/coredns'],
      Labels: { 'org.opencontainers.image.title': 'coredns' },
    }),
  ]);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'klutch-kit-coredns-'));
  const layout = path.join(tmp, 'layout');
  let image: string;
  try {
    writeLayout(layout, { coredns: idx });
    image = (await pushLayoutImage(layout, 'coredns', `${node.registry}/klutch-kit/coredns:1`)).pinned;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  await applyManifests(cluster.kubeConfig, clusterDnsObjects(image), { fieldManager: 'klutch-kit-harness', continueOnError: false });
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  const path_ = `/apis/apps/v1/namespaces/${CLUSTER_DNS.namespace}/deployments/${CLUSTER_DNS.name}`;
  for (;;) {
    const d = await clientOf(cluster.kubeConfig).request<{ status?: { readyReplicas?: number } }>('GET', path_);
    if ((d.status?.readyReplicas ?? 0) >= 1) return { image };
    if (Date.now() > deadline)
      throw new Error(
        `startClusterDns: the CoreDNS Deployment ${CLUSTER_DNS.namespace}/${CLUSTER_DNS.name} has no ready pod after ${(opts.timeoutMs ?? 120_000) / 1000} s`,
      );
    await new Promise((r) => setTimeout(r, 500));
  }
}
