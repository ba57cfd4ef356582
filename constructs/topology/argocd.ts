/**
 * Argo CD app-of-apps per synthesized cluster, next to the Flux Kustomizations: a root
 * `argoproj.io/v1alpha1` Application (`<cluster>/_argocd/root.yaml`) whose source is
 * `<cluster>/_argocd/apps/`, holding one Application per phase folder (`<cluster>/<NN>-<phase>`)
 * with `argocd.argoproj.io/sync-wave: NN`, so the root syncs the phases in order (CRDs before the
 * objects that need them). Argo CD waits for a child Application to be healthy before the next wave
 * only with an Application health check configured (`resource.customizations.health.argoproj.io_Application`
 * in `argocd-cm`; docs/topology.md). The files are not listed in `<cluster>/kustomization.yaml`.
 */
import { dirname } from 'node:path';
import type { RenderedCluster } from './rendered.js';

/** Where Argo CD finds the synthesized folders and where it applies them. */
export interface ArgoCdOptions {
  /** Git repository (or Helm/OCI repository URL) holding the synthesized output, e.g. `https://github.com/acme/platform.git`. */
  readonly repoURL: string;
  /** Path of the output folder inside the repository, e.g. `dist`. */
  readonly path: string;
  /** Revision to sync. @default "HEAD" */
  readonly targetRevision?: string;
  /** Namespace of the Applications (where Argo CD runs). @default "argocd" */
  readonly namespace?: string;
  /** Argo CD project. @default "default" */
  readonly project?: string;
  /**
   * Destination of each cluster's Applications, by cluster name: an API server URL or the name of a
   * cluster registered in Argo CD. @default - `https://kubernetes.default.svc` (Argo CD runs in each cluster)
   */
  readonly destinations?: Readonly<Record<string, { readonly server?: string; readonly name?: string }>>;
  /** Let Argo CD sync, prune and self-heal on its own. @default true */
  readonly automated?: boolean;
}

/** The files of one cluster's app-of-apps, relative to `<cluster>/_argocd/`. */
export interface ArgoCdFiles {
  /** `root.yaml`: the Application that syncs `apps/`. */
  readonly root: Record<string, any>;
  /** `apps/<NN>-<phase>.yaml`: one Application per phase folder, in apply order. */
  readonly apps: ReadonlyArray<{ readonly file: string; readonly application: Record<string, any> }>;
}

export const ARGOCD_FOLDER = '_argocd';
const APPLICATION_API_VERSION = 'argoproj.io/v1alpha1';
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function check(argo: ArgoCdOptions): void {
  const P = 'SynthOptions.argocd';
  if (!argo || typeof argo.repoURL !== 'string' || argo.repoURL.trim() === '' || /\s/.test(argo.repoURL)) {
    throw new Error(`${P}.repoURL: ${JSON.stringify(argo?.repoURL)} must be the repository URL (no spaces), e.g. "https://github.com/acme/platform.git"`);
  }
  if (typeof argo.path !== 'string' || argo.path.split('/').includes('..') || argo.path.startsWith('/')) {
    throw new Error(`${P}.path: ${JSON.stringify(argo.path)} must be the output folder's path inside the repository, e.g. "dist"`);
  }
  if (argo.namespace !== undefined && !DNS_LABEL.test(argo.namespace))
    throw new Error(`${P}.namespace: ${JSON.stringify(argo.namespace)} is not a DNS-1123 label`);
  if (argo.project !== undefined && !DNS_SUBDOMAIN.test(argo.project))
    throw new Error(`${P}.project: ${JSON.stringify(argo.project)} is not a DNS-1123 subdomain`);
  if (argo.targetRevision !== undefined && (typeof argo.targetRevision !== 'string' || argo.targetRevision === '')) {
    throw new Error(`${P}.targetRevision: ${JSON.stringify(argo.targetRevision)} must be a branch, tag or commit`);
  }
  for (const [cluster, d] of Object.entries(argo.destinations ?? {})) {
    if (!d || Boolean(d.server) === Boolean(d.name)) {
      throw new Error(`${P}.destinations.${cluster}: ${JSON.stringify(d)} must set exactly one of server (API server URL) or name (Argo CD cluster name)`);
    }
  }
}

/** The app-of-apps of one cluster (see {@link ArgoCdOptions}). */
export function argoCdApplications(cluster: RenderedCluster, argo: ArgoCdOptions): ArgoCdFiles {
  check(argo);
  const namespace = argo.namespace ?? 'argocd';
  const project = argo.project ?? 'default';
  const targetRevision = argo.targetRevision ?? 'HEAD';
  const base = argo.path.replace(/^\.\//, '').replace(/\/+$/, '');
  const at = (p: string) => (base === '' || base === '.' ? p : `${base}/${p}`);
  const destination = argo.destinations?.[cluster.name] ?? { server: 'https://kubernetes.default.svc' };
  const automated = argo.automated === false ? {} : { automated: { prune: true, selfHeal: true } };
  const application = (name: string, path: string, annotations?: Record<string, string>) => ({
    apiVersion: APPLICATION_API_VERSION,
    kind: 'Application',
    metadata: { name, namespace, ...(annotations ? { annotations } : {}) },
    spec: {
      project,
      source: { repoURL: argo.repoURL, targetRevision, path },
      destination: { ...destination, namespace: 'default' },
      syncPolicy: { ...automated },
    },
  });
  const phases = [...new Set(cluster.files.map((f) => dirname(f.path)))];
  const apps = phases.map((phase) => {
    const wave = /^(\d+)-/.exec(phase)?.[1];
    const app = application(
      `${cluster.name}-${phase}`,
      at(`${cluster.name}/${phase}`),
      wave !== undefined ? { 'argocd.argoproj.io/sync-wave': String(Number(wave)) } : undefined,
    );
    return { file: `apps/${phase}.yaml`, application: app };
  });
  // the root lives in the Argo CD cluster itself; it only creates the Applications above
  const root = application(cluster.name, at(`${cluster.name}/${ARGOCD_FOLDER}/apps`));
  root.spec.destination = { server: 'https://kubernetes.default.svc', namespace };
  return { root, apps };
}
