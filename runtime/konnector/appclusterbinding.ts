/**
 * Control-plane mode: the AppClusterBinding controller (runs on the control plane). For each
 * AppClusterBinding it sets up what a konnector running on the control plane for that app cluster
 * needs, in the binding root namespace `klutch-bind-<namespace>-<name>`:
 *
 * - the app cluster kubeconfig Secret mirrored as `app-cluster-kubeconfig` (`SecretValid`);
 * - ServiceAccount `klutch-binder`, Role + RoleBinding `control-plane-connector`;
 * - ClusterBinding `cluster` (providerPrettyName = the AppClusterBinding's name);
 * - one APIServiceBinding per `spec.apiExports` entry, named `<resource>.<group>`, **with the permission
 *   claims of the matching APIServiceExport accepted** (Klutch creates them without claims, so service
 *   binding credentials never reach the app); bindings no longer listed are deleted;
 * - the konnector Deployment (`konnector.deploy`), container overrides merged in (`KonnectorDeployed`);
 * - on delete (finalizer `klutch.anynines.com/appclusterbinding-cleanup`): the bindings are deleted and
 *   the konnector gets up to `bindingCleanupGraceMs` to unbind them (its finalizer
 *   `klutch.anynines.com/konnector`); then the Deployment and the root namespace are deleted.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { CoreResources, isNotFound, keyOf, splitKey, type KubeClient, type KubeObject, type ResourceRef } from '../core/client.js';
import { conditionsEqual, setCondition, setSummary, type Condition } from '../core/conditions.js';
import { Controller } from '../core/controller.js';
import { Informer, onAny } from '../core/informer.js';
import { silentLogger } from '../core/logger.js';
import { KubeconfigError, parseKubeconfigSecret } from './kubeconfig.js';
import { setFinalizer } from './metadata.js';
import {
  APP_CLUSTER_BINDING_FINALIZER,
  BINDING_FINALIZER,
  APP_CLUSTER_BINDING_NAME_LABEL,
  APP_CLUSTER_BINDING_NAMESPACE_LABEL,
  CLUSTER_BINDING_NAME,
  ConditionType,
  type AppClusterBinding,
  type APIServiceExport,
  type Secret,
} from './types.js';
import { KONNECTOR_VERSION } from './version.js';
import { BIND_GROUP, BINDER_NAME, BINDING_RESOURCES } from '../../contract/index.js';

const MANAGER = 'klutch.anynines.com/appclusterbinding';
const DEPLOYMENTS: ResourceRef = { group: 'apps', version: 'v1', plural: 'deployments', namespaced: true, kind: 'Deployment' };
export const APP_KUBECONFIG_SECRET = 'app-cluster-kubeconfig';

/** `klutch-bind-<namespace>-<name>`, shortened with a hash when longer than a DNS label. */
export function bindingRootNamespace(namespace: string, name: string): string {
  const full = `klutch-bind-${namespace}-${name}`;
  if (full.length <= 63) return full;
  const h = createHash('sha256').update(full).digest('hex').slice(0, 8);
  return `${full.slice(0, 54).replace(/-+$/, '')}-${h}`;
}

export interface AppClusterBindingControllerOptions {
  client: KubeClient;
  /** Image of the konnector Deployment. @default klutch-konnector:<version> */
  konnectorImage?: string;
  logger?: Logger;
  registry?: Registry;
  workers?: number;
  /**
   * How long, after an AppClusterBinding is deleted, its konnector may take to unbind (delete the CRDs
   * and objects on both sides) before its binding finalizers are removed. @default 120000 (2 min)
   */
  bindingCleanupGraceMs?: number;
}

type Container = Record<string, unknown> & { name: string };

export class AppClusterBindingController {
  private readonly informer: Informer<AppClusterBinding>;
  readonly controller: Controller;
  private readonly c: KubeClient;
  private readonly log: Logger;
  private readonly bindingCleanupGraceMs: number;

  constructor(private readonly opts: AppClusterBindingControllerOptions) {
    this.c = opts.client;
    this.bindingCleanupGraceMs = opts.bindingCleanupGraceMs ?? 120_000;
    if (!Number.isFinite(this.bindingCleanupGraceMs) || this.bindingCleanupGraceMs < 0) {
      throw new Error(`AppClusterBindingControllerOptions.bindingCleanupGraceMs: ${opts.bindingCleanupGraceMs} must be a number >= 0`);
    }
    this.log = opts.logger ?? silentLogger;
    this.informer = new Informer<AppClusterBinding>(this.c, BINDING_RESOURCES.appClusterBindings, { logger: this.log });
    this.controller = new Controller({
      name: BINDING_RESOURCES.appClusterBindings.plural,
      workers: opts.workers ?? 2,
      registry: opts.registry,
      logger: this.log,
      backoffMaxMs: 30_000,
      reconciler: (k) => this.reconcile(k),
    });
    this.informer.addEventHandler(onAny((o) => this.controller.enqueue(keyOf(o))));
  }

  async start(timeoutMs = 60_000): Promise<void> {
    this.informer.start();
    await this.informer.waitForSync(timeoutMs);
    this.controller.start();
  }

  async stop(): Promise<void> {
    await this.controller.stop();
    await this.informer.stop();
  }

  private apply(r: ResourceRef, o: KubeObject): Promise<KubeObject> {
    return this.c.apply(r, o, MANAGER, { force: true });
  }

  private async reconcile(key: string): Promise<{ requeueAfterMs: number } | void> {
    const acb = this.informer.get(key);
    if (!acb) return;
    const { namespace = '', name } = splitKey(key);
    const root = bindingRootNamespace(namespace, name);
    const labels = { [APP_CLUSTER_BINDING_NAME_LABEL]: name, [APP_CLUSTER_BINDING_NAMESPACE_LABEL]: namespace };

    if (acb.metadata.deletionTimestamp) {
      const wait = await this.cleanup(root, labels, acb.metadata.deletionTimestamp);
      if (wait !== undefined) return { requeueAfterMs: wait };
      const fin = (acb.metadata.finalizers ?? []).filter((f) => f !== APP_CLUSTER_BINDING_FINALIZER);
      if (fin.length !== (acb.metadata.finalizers ?? []).length) {
        await this.c.update(BINDING_RESOURCES.appClusterBindings, { ...acb, metadata: { ...acb.metadata, finalizers: fin } }).catch((e) => {
          if (!isNotFound(e)) throw e;
        });
      }
      this.log.info({ appClusterBinding: key, root }, 'cleaned up app cluster binding');
      return;
    }
    if (!(acb.metadata.finalizers ?? []).includes(APP_CLUSTER_BINDING_FINALIZER)) {
      await this.c.update(BINDING_RESOURCES.appClusterBindings, {
        ...acb,
        metadata: { ...acb.metadata, finalizers: [...(acb.metadata.finalizers ?? []), APP_CLUSTER_BINDING_FINALIZER] },
      });
      return; // the update event brings us back
    }

    let conds = acb.status?.conditions as Condition[] | undefined;
    const ref = acb.spec.kubeconfigSecretRef;
    const secret = await this.c.getOrNull<Secret>(CoreResources.secrets, ref.namespace, ref.name);
    let kubeconfigB64: string | undefined;
    try {
      const parsed = parseKubeconfigSecret(secret, { namespace: ref.namespace, name: ref.name, key: ref.key }, { requireNamespace: false });
      kubeconfigB64 = secret!.data![ref.key];
      conds = setCondition(conds, {
        type: ConditionType.SecretValid,
        status: 'True',
        reason: 'KubeconfigSecretValid',
        message: `app cluster ${parsed.server}`,
      });
    } catch (e) {
      if (!(e instanceof KubeconfigError)) throw e;
      conds = setCondition(conds, {
        type: ConditionType.SecretValid,
        status: 'False',
        severity: 'Error',
        reason: e.reason,
        message: `${e.message.replace(/rerun `kubectl bind`[^;]*/, 'fix the app cluster kubeconfig Secret')}`,
      });
    }

    if (kubeconfigB64) {
      await this.apply(CoreResources.namespaces, { metadata: { name: root, labels } });
      await this.apply(CoreResources.serviceaccounts, { metadata: { name: BINDER_NAME, namespace: root, labels } });
      await this.apply(CoreResources.secrets, { metadata: { name: APP_KUBECONFIG_SECRET, namespace: root, labels }, data: { kubeconfig: kubeconfigB64 } });
      await this.apply(BINDING_RESOURCES.clusterBindings, {
        metadata: { name: CLUSTER_BINDING_NAME, namespace: root, labels },
        spec: { kubeconfigSecretRef: { name: APP_KUBECONFIG_SECRET, key: 'kubeconfig' }, providerPrettyName: name },
      });
      await this.apply(CoreResources.roles, {
        metadata: { name: 'control-plane-connector', namespace: root, labels },
        rules: [
          {
            apiGroups: [BIND_GROUP],
            resources: [BINDING_RESOURCES.apiServiceBindings.plural, `${BINDING_RESOURCES.apiServiceBindings.plural}/status`],
            verbs: ['get', 'list', 'watch', 'update', 'patch'],
          },
          {
            apiGroups: [BIND_GROUP],
            resources: [BINDING_RESOURCES.clusterBindings.plural, BINDING_RESOURCES.apiServiceExports.plural],
            verbs: ['get', 'list', 'watch'],
          },
          {
            apiGroups: [BIND_GROUP],
            resources: [`${BINDING_RESOURCES.clusterBindings.plural}/status`, `${BINDING_RESOURCES.apiServiceExports.plural}/status`],
            verbs: ['get', 'patch', 'update'],
          },
          { apiGroups: [BIND_GROUP], resources: [BINDING_RESOURCES.apiServiceNamespaces.plural], verbs: ['get', 'list', 'watch', 'create', 'delete'] },
          { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
        ],
      });
      await this.apply(CoreResources.rolebindings, {
        metadata: { name: 'control-plane-connector', namespace: root, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'control-plane-connector' },
        subjects: [{ kind: 'ServiceAccount', name: BINDER_NAME, namespace: root }],
      });
      await this.applyBindings(acb, root, labels);
      conds = await this.applyDeployment(acb, root, labels, conds);
    }
    conds = setSummary(conds, [ConditionType.SecretValid, ConditionType.KonnectorDeployed]);
    if (!conditionsEqual(conds, acb.status?.conditions as Condition[] | undefined)) {
      await this.c.mergePatch(BINDING_RESOURCES.appClusterBindings, namespace, name, { status: { conditions: conds } }, 'status');
    }
    // Exports appear later (the backend processes export requests): pick up their claims.
    return { requeueAfterMs: 30_000 };
  }

  private async applyBindings(acb: AppClusterBinding, root: string, labels: Record<string, string>): Promise<void> {
    const want = new Set<string>();
    for (const e of acb.spec.apiExports ?? []) {
      const bname = `${e.resource}.${e.group ?? ''}`.replace(/\.$/, '');
      want.add(bname);
      const exp = await this.c.getOrNull<APIServiceExport>(BINDING_RESOURCES.apiServiceExports, root, bname);
      const spec: Record<string, unknown> = { kubeconfigSecretRef: { namespace: root, name: APP_KUBECONFIG_SECRET, key: 'kubeconfig' } };
      if (exp?.spec.permissionClaims?.length) spec.permissionClaims = exp.spec.permissionClaims.map((c) => ({ ...c, state: 'Accepted' }));
      await this.apply(BINDING_RESOURCES.apiServiceBindings, { metadata: { name: bname, namespace: root, labels }, spec });
    }
    const selector = Object.entries(labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const existing = await this.c.list(BINDING_RESOURCES.apiServiceBindings, root, { labelSelector: selector });
    for (const b of existing.items) {
      if (!want.has(b.metadata.name!)) await this.c.delete(BINDING_RESOURCES.apiServiceBindings, root, b.metadata.name!);
    }
  }

  private async applyDeployment(acb: AppClusterBinding, root: string, labels: Record<string, string>, conds: Condition[] | undefined): Promise<Condition[]> {
    if (!acb.spec.konnector?.deploy) {
      await this.c.delete(DEPLOYMENTS, root, 'konnector');
      return setCondition(conds, {
        type: ConditionType.KonnectorDeployed,
        status: 'True',
        reason: 'DeploymentNotRequested',
        message: 'spec.konnector.deploy is false: run a konnector with --control-plane-mode for this app cluster yourself',
      });
    }
    const base: Container = {
      name: 'konnector',
      image: this.opts.konnectorImage ?? `klutch-konnector:${KONNECTOR_VERSION}`,
      args: [
        '--control-plane-mode',
        `--app-cluster-kubeconfig-secret-name=${APP_KUBECONFIG_SECRET}`,
        `--app-cluster-kubeconfig-secret-namespace=${root}`,
        '--app-cluster-kubeconfig-secret-key=kubeconfig',
        `--binding-root-namespace=${root}`,
        `--lease-namespace=${root}`,
        '--health-address=0.0.0.0:8080',
        // the app cluster's admin bounds this konnector by the kubeconfig handed over (its RBAC there), not by a
        // role we render; narrow what it syncs with spec.konnector.overrides.args (docs/konnector.md)
        '--all-namespaces',
      ],
      env: [
        { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      ],
      readinessProbe: { httpGet: { path: '/readyz', port: 8080 } },
      livenessProbe: { httpGet: { path: '/healthz', port: 8080 } },
      securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } },
    };
    const container = mergeContainer(base, (acb.spec.konnector.overrides ?? {}) as Record<string, unknown>);
    const podLabels = { app: 'konnector', ...labels };
    try {
      await this.apply(DEPLOYMENTS, {
        metadata: { name: 'konnector', namespace: root, labels: podLabels },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'konnector', [APP_CLUSTER_BINDING_NAME_LABEL]: labels[APP_CLUSTER_BINDING_NAME_LABEL] } },
          template: { metadata: { labels: podLabels }, spec: { serviceAccountName: BINDER_NAME, containers: [container] } },
        },
      });
    } catch (e) {
      return setCondition(conds, {
        type: ConditionType.KonnectorDeployed,
        status: 'False',
        severity: 'Error',
        reason: 'DeploymentFailed',
        message: `applying Deployment ${root}/konnector failed: ${(e as Error).message}; check spec.konnector.overrides`,
      });
    }
    return setCondition(conds, {
      type: ConditionType.KonnectorDeployed,
      status: 'True',
      reason: 'DeploymentApplied',
      message: `Deployment ${root}/konnector applied`,
    });
  }

  /**
   * Deletes the bindings first and waits (up to `bindingCleanupGraceMs` after the AppClusterBinding's
   * deletion) until the konnector has unbound them (CRD and objects gone on both sides, its finalizer
   * released); a konnector that cannot do that in time (e.g. never started) gets its finalizer
   * removed. Then the Deployment and the root namespace go. Returns a requeue delay while waiting.
   */
  private async cleanup(root: string, labels: Record<string, string>, deletedAt: string | undefined): Promise<number | undefined> {
    const selector = Object.entries(labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const bindings = await this.c.list(BINDING_RESOURCES.apiServiceBindings, root, { labelSelector: selector }).catch((e) => {
      if (isNotFound(e)) return { items: [] as KubeObject[], metadata: {} };
      throw e;
    });
    const waiting = bindings.items.filter((b) => (b.metadata.finalizers ?? []).includes(BINDING_FINALIZER));
    for (const b of bindings.items) {
      if (!b.metadata.deletionTimestamp)
        await this.c.delete(BINDING_RESOURCES.apiServiceBindings, root, b.metadata.name!).catch((e) => {
          if (!isNotFound(e)) throw e;
        });
    }
    if (waiting.length) {
      const since = deletedAt ? Date.now() - Date.parse(deletedAt) : 0;
      if (since < this.bindingCleanupGraceMs) return 1000;
      for (const b of waiting) {
        this.log.warn(
          { binding: `${root}/${b.metadata.name}` },
          'the konnector did not unbind in time: removing its finalizer; objects of this binding may remain on the app cluster',
        );
        await setFinalizer(this.c, BINDING_RESOURCES.apiServiceBindings, b, BINDING_FINALIZER, false);
      }
      return 200;
    }
    await this.c.delete(DEPLOYMENTS, root, 'konnector').catch((e) => {
      if (!isNotFound(e)) throw e;
    });
    await this.c.delete(CoreResources.namespaces, undefined, root).catch((e) => {
      if (!isNotFound(e)) throw e;
    });
    return undefined;
  }
}

/**
 * Container overrides: scalar and object fields replace the base; `env`, `envFrom`, `volumeMounts`
 * and `ports` are merged by name (strategic-merge style), `args`/`command` replace.
 */
export function mergeContainer(base: Container, overrides: Record<string, unknown>): Container {
  const out: Container = { ...base };
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined || k === 'name') continue;
    if ((k === 'env' || k === 'volumeMounts' || k === 'ports' || k === 'envFrom') && Array.isArray(v)) {
      const cur = [...((out[k] as Array<Record<string, unknown>> | undefined) ?? [])];
      for (const item of v as Array<Record<string, unknown>>) {
        const id = (item.name ?? item.mountPath ?? item.containerPort ?? JSON.stringify(item)) as string;
        const i = cur.findIndex((x) => (x.name ?? x.mountPath ?? x.containerPort ?? JSON.stringify(x)) === id);
        if (i >= 0) cur[i] = { ...cur[i], ...item };
        else cur.push(item);
      }
      out[k] = cur;
    } else {
      out[k] = v;
    }
  }
  return out;
}
