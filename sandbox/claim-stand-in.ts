/**
 * SANDBOX STAND-IN — not Crossplane. In the sandbox (`npm run sandbox`) no container runtime runs, so
 * Crossplane's controllers and the data-service providers cannot answer claims. This small reconciler
 * runs against the **control plane only** and plays their visible result for the claims that the
 * konnectors sync up:
 *
 * - every PostgresqlInstance / ServiceBinding claim gets `status.conditions` Synced=True and Ready=True
 *   (reason `SandboxStandIn`, so nobody mistakes it for a real reconcile);
 * - every ServiceBinding gets a credentials Secret `<claim>-creds` (or `spec.writeConnectionSecretToRef.name`)
 *   in the claim's namespace, of type `connection.crossplane.io/v1alpha1` with the keys of the real
 *   Composition's connection secret (username, password, database, instance_service, port) — the type the
 *   ServiceBinding export template's permission claim selects, so the konnector brings it down.
 *
 * Never used by a test of Crossplane behaviour; only by the sandbox and its end-to-end suite.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { CoreResources, isNotFound, KubeClient, type KubeObject, type ResourceRef } from '../core/client.js';
import { setCondition, type Condition } from '../core/conditions.js';
import { Controller } from '../core/controller.js';
import { Informer } from '../core/informer.js';
import { silentLogger } from '../core/logger.js';

export const STAND_IN_REASON = 'SandboxStandIn';
export const STAND_IN_MANAGER = 'klutch-sandbox-stand-in';
export const CONNECTION_SECRET_TYPE = 'connection.crossplane.io/v1alpha1';

export const SANDBOX_CLAIMS = {
  postgresqlInstances: { group: 'anynines.com', version: 'v1', plural: 'postgresqlinstances', kind: 'PostgresqlInstance', namespaced: true } satisfies ResourceRef,
  serviceBindings: { group: 'anynines.com', version: 'v1', plural: 'servicebindings', kind: 'ServiceBinding', namespaced: true } satisfies ResourceRef,
};

type Claim = KubeObject & {
  spec?: { instanceRef?: string; serviceInstanceType?: string; writeConnectionSecretToRef?: { name?: string } };
  status?: { conditions?: Condition[] };
};

/** The name of the credentials Secret the stand-in writes for a ServiceBinding claim. */
export function credentialsSecretName(claim: Claim): string {
  return claim.spec?.writeConnectionSecretToRef?.name ?? `${claim.metadata.name}-creds`;
}

export interface ClaimStandInOptions {
  /** A client of the control plane (never of an app cluster). */
  client: KubeClient;
  logger?: Logger;
}

export class ClaimStandIn {
  private readonly informers: Array<{ ref: ResourceRef; informer: Informer<Claim>; controller: Controller }> = [];
  private readonly log: Logger;

  constructor(private readonly opts: ClaimStandInOptions) {
    this.log = (opts.logger ?? silentLogger).child({ component: 'sandbox-claim-stand-in' });
    for (const ref of Object.values(SANDBOX_CLAIMS)) {
      const informer = new Informer<Claim>(opts.client, ref, { logger: this.log });
      const controller = new Controller({ name: `stand-in-${ref.plural}`, logger: this.log, reconciler: (key) => this.reconcile(ref, informer, key) });
      const enqueue = (o: Claim) => controller.enqueue(`${o.metadata.namespace}/${o.metadata.name}`);
      informer.addEventHandler({ onAdd: enqueue, onUpdate: (_o, n) => enqueue(n) });
      this.informers.push({ ref, informer, controller });
    }
  }

  async start(): Promise<void> {
    for (const { informer, controller } of this.informers) {
      informer.start();
      controller.start();
    }
    await Promise.all(this.informers.map(({ informer }) => informer.waitForSync(60_000)));
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers.map(async ({ informer, controller }) => {
      await controller.stop();
      await informer.stop();
    }));
  }

  private async reconcile(ref: ResourceRef, informer: Informer<Claim>, key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const claim = informer.getByName(ns, name);
    if (!claim || claim.metadata.deletionTimestamp) return;
    const c = this.opts.client;
    if (ref.kind === 'ServiceBinding') {
      const secretName = credentialsSecretName(claim);
      const existing = await c.getOrNull(CoreResources.secrets, ns, secretName);
      if (!existing) {
        const instance = claim.spec?.instanceRef ?? name;
        await c.create(CoreResources.secrets, {
          metadata: {
            name: secretName,
            namespace: ns,
            labels: { 'app.kubernetes.io/managed-by': STAND_IN_MANAGER },
            ownerReferences: [{ apiVersion: `${ref.group}/${ref.version}`, kind: ref.kind!, name, uid: claim.metadata.uid!, controller: true }],
          },
          type: CONNECTION_SECRET_TYPE,
          stringData: {
            username: `a9s-${randomBytes(4).toString('hex')}`,
            password: randomBytes(18).toString('base64url'),
            database: instance.replace(/-/g, '_'),
            instance_service: `${instance}-master.${ns}.svc.cluster.local`,
            port: '5432',
          },
        } as KubeObject);
        this.log.info({ claim: key, secret: secretName }, 'stand-in wrote the credentials Secret');
      }
    }
    let conds = claim.status?.conditions ?? [];
    const ready = conds.find((x) => x.type === 'Ready')?.status === 'True' && conds.find((x) => x.type === 'Synced')?.status === 'True';
    if (ready) return;
    const message = 'answered by the sandbox stand-in (runtime/sandbox/claim-stand-in.ts), not by Crossplane';
    conds = setCondition(conds, { type: 'Synced', status: 'True', reason: 'ReconcileSuccess', message });
    conds = setCondition(conds, { type: 'Ready', status: 'True', reason: STAND_IN_REASON, message });
    try {
      await c.mergePatch(ref, ns, name, { status: { conditions: conds } }, 'status');
      this.log.info({ claim: key, kind: ref.kind }, 'stand-in set Ready/Synced');
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}
