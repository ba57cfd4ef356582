/**
 * The kubeconfig a program uses when none is named: the in-cluster service account in a pod, else
 * `$KUBECONFIG` (its files merged as kubectl merges them, kubeconfig-merge.ts), else
 * `~/.kube/config` (read by kubeconfig.ts). Apart from both so that each of them stays a leaf.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { type ClusterAccess, loadKubeconfigFile } from './kubeconfig.js';
import { kubeconfigPaths, loadKubeconfigFiles } from './kubeconfig-merge.js';

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** In-cluster service account when running in a pod, else $KUBECONFIG (its files merged as kubectl does), else ~/.kube/config. */
export function loadDefaultKubeconfig(context?: string): ClusterAccess {
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT;
  if (host && port && !context) {
    let namespace: string | undefined;
    try {
      namespace = readFileSync(join(SA_DIR, 'namespace'), 'utf8').trim();
    } catch {
      namespace = undefined;
    }
    return {
      server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
      caData: readFileSync(join(SA_DIR, 'ca.crt')),
      tokenFile: join(SA_DIR, 'token'),
      namespace,
      context: 'in-cluster',
    };
  }
  const env = process.env.KUBECONFIG?.split(':').find(Boolean);
  return env ? loadKubeconfigFiles(kubeconfigPaths(process.env.KUBECONFIG), context) : loadKubeconfigFile(join(homedir(), '.kube', 'config'), context);
}
