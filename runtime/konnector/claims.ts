/**
 * Claimed resources: objects of an accepted permission claim (typically Secrets and ConfigMaps, e.g. the
 * credentials Secret of a ServiceBinding) synced between each bound consumer namespace and its provider
 * namespace, by owner:
 *
 * - **Provider**-owned (exists upstream first, or annotated `klutch.anynines.com/resource-owner: Provider`):
 *   copied down, updated down, deleted down when gone upstream, recreated down when deleted there.
 * - **Consumer**-owned: the mirror image.
 *
 * Only objects the claim's whole selector matches are touched (names, namespaces, label selectors,
 * field selectors, owner). Informers are per bound namespace on both sides: the konnector never caches
 * every Secret of the app cluster.
 */
import type { Logger } from 'pino';
import { isAlreadyExists, isNotFound, keyOf, splitKey, type KubeObject, type ResourceRef } from '../core/client.js';
import { Controller } from '../core/controller.js';
import type { SyncContext } from './context.js';
import { cleanMeta, deepEqual, isDeleting } from './metadata.js';
import { MultiNamespaceInformer } from './multins-informer.js';
import { ownerAllowed, selects, type Owner } from './selector.js';
import { BOUND_ANNOTATION, RESOURCE_OWNER_ANNOTATION, type AcceptablePermissionClaim } from './types.js';

/** Resources whose claims the konnector syncs (namespaced, no status). */
const KINDS: Record<string, string> = { secrets: 'Secret', configmaps: 'ConfigMap', serviceaccounts: 'ServiceAccount' };

export function claimResource(c: AcceptablePermissionClaim): ResourceRef {
  const kind = (c.group ?? '') === '' ? KINDS[c.resource] : undefined;
  return { group: c.group ?? '', version: c.version, plural: c.resource, namespaced: true, kind };
}

/** Body of a claimed object: every top-level field except metadata and status. */
function body(o: KubeObject): Record<string, unknown> {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o as KubeObject & { status?: unknown };
  return rest;
}

export class ClaimSync {
  readonly resource: ResourceRef;
  private readonly consumer: MultiNamespaceInformer;
  private readonly providerInf: MultiNamespaceInformer;
  readonly controller: Controller;
  private readonly log: Logger;
  private readonly unsubscribe: () => void;
  private readonly label: string;

  constructor(
    private readonly ctx: SyncContext,
    readonly claim: AcceptablePermissionClaim,
    bindingName: string,
  ) {
    this.resource = claimResource(claim);
    this.label = `${claim.resource}${claim.group ? '.' + claim.group : ''}`;
    this.log = ctx.log.child({ claim: this.label, binding: bindingName });
    this.consumer = new MultiNamespaceInformer(ctx.app, this.resource, { resyncMs: ctx.resyncMs, logger: this.log });
    this.providerInf = new MultiNamespaceInformer(ctx.provider, this.resource, { resyncMs: ctx.resyncMs, logger: this.log });
    this.controller = new Controller({
      name: `claim:${this.label}:${bindingName}:${ctx.clusterNamespace}`,
      registry: ctx.registry,
      logger: this.log,
      workers: Math.max(1, Math.min(ctx.workers, 2)),
      backoffMaxMs: 30_000,
      reconciler: (k) => this.reconcile(k),
    });
    this.consumer.addEventHandler({
      onAdd: (o) => this.controller.enqueue(keyOf(o)),
      onUpdate: (_, o) => this.controller.enqueue(keyOf(o)),
      onDelete: (o) => this.controller.enqueue(keyOf(o)),
    });
    const fromProvider = (o: KubeObject) => {
      const c = o.metadata.namespace ? ctx.consumerNamespaceFor(o.metadata.namespace) : undefined;
      if (c) this.controller.enqueue(`${c}/${o.metadata.name}`);
    };
    this.providerInf.addEventHandler({ onAdd: fromProvider, onUpdate: (_, o) => fromProvider(o), onDelete: fromProvider });
    this.unsubscribe = ctx.onNamespacesChanged(() => void this.refreshNamespaces());
  }

  private selectedNamespaces() {
    const ns = this.claim.selector?.namespaces ?? ['*'];
    return this.ctx.boundNamespaces().filter((b) => ns.includes('*') || ns.includes(b.consumer));
  }

  private async refreshNamespaces(): Promise<void> {
    const pairs = this.selectedNamespaces();
    await Promise.all([this.consumer.setNamespaces(pairs.map((p) => p.consumer)), this.providerInf.setNamespaces(pairs.map((p) => p.provider))]);
    // New namespaces: their informers enqueue everything on their initial list.
  }

  async start(timeoutMs = 60_000): Promise<void> {
    await this.refreshNamespaces();
    await Promise.all([this.consumer.waitForSync(timeoutMs), this.providerInf.waitForSync(timeoutMs)]);
    this.controller.start();
  }

  async stop(): Promise<void> {
    this.unsubscribe();
    await this.controller.stop();
    await Promise.all([this.consumer.stop(), this.providerInf.stop()]);
  }

  private ownerOf(up: KubeObject | undefined, down: KubeObject | undefined): Owner | undefined {
    const a = (up?.metadata.annotations?.[RESOURCE_OWNER_ANNOTATION] ?? down?.metadata.annotations?.[RESOURCE_OWNER_ANNOTATION]) as Owner | undefined;
    if (a === 'Provider' || a === 'Consumer') return a;
    if (up && !down) return 'Provider';
    if (down && !up) return 'Consumer';
    return undefined;
  }

  private async reconcile(key: string): Promise<void> {
    const { namespace: cns, name } = splitKey(key);
    if (!cns) return;
    const pns = this.ctx.providerNamespaceFor(cns);
    if (!pns || !this.consumer.hasSynced(cns) || !this.providerInf.hasSynced(pns)) return; // namespace not bound (yet)
    const up = this.providerInf.get(pns, name);
    const down = this.consumer.get(cns, name);
    const owner = this.ownerOf(up, down);
    if (!owner) {
      if (up && down) this.log.debug({ key }, 'object exists on both sides without an owner annotation; leaving it alone');
      return;
    }
    if (!ownerAllowed(this.claim.selector, owner)) return;
    const sel = this.claim.selector;
    if (owner === 'Provider') {
      const source = up && !isDeleting(up) && selects(sel, up, cns) ? up : undefined;
      await this.mirror(source, down, cns, 'Provider', 'down');
    } else {
      const source = down && !isDeleting(down) && selects(sel, down, cns) ? down : undefined;
      await this.mirror(source, up, pns, 'Consumer', 'up');
    }
  }

  /** Makes `target` (in `targetNs` on the other side) a copy of `source`, or deletes our copy when source is gone. */
  private async mirror(source: KubeObject | undefined, target: KubeObject | undefined, targetNs: string, owner: Owner, dir: 'up' | 'down'): Promise<void> {
    const client = dir === 'down' ? this.ctx.app : this.ctx.provider;
    const t0 = performance.now();
    if (!source) {
      // Delete only copies we made (owner annotation) and that the claim still selects.
      if (target && !isDeleting(target) && target.metadata.annotations?.[RESOURCE_OWNER_ANNOTATION] === owner) {
        await client.delete(this.resource, targetNs, target.metadata.name!, { uid: target.metadata.uid });
        this.done(dir, 'delete', t0);
      }
      return;
    }
    const meta = cleanMeta(source.metadata, source.metadata.name!, targetNs, { [RESOURCE_OWNER_ANNOTATION]: owner, [BOUND_ANNOTATION]: 'true' });
    const desired: KubeObject = { apiVersion: source.apiVersion, kind: source.kind ?? this.resource.kind, metadata: meta, ...body(source) };
    if (!target) {
      try {
        await client.create(this.resource, desired);
        this.done(dir, 'create', t0);
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
      return;
    }
    if (isDeleting(target)) return;
    const same =
      deepEqual(body(target), body(desired)) &&
      deepEqual(target.metadata.labels ?? {}, desired.metadata.labels ?? {}) &&
      Object.entries(desired.metadata.annotations ?? {}).every(([k, v]) => target.metadata.annotations?.[k] === v);
    if (same) return;
    const immutable = (target as { immutable?: boolean }).immutable === true || (target as { type?: string }).type !== (desired as { type?: string }).type;
    if (immutable) {
      await client.delete(this.resource, targetNs, target.metadata.name!, { uid: target.metadata.uid });
      try {
        await client.create(this.resource, desired);
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
      this.done(dir, 'recreate', t0);
      return;
    }
    try {
      await client.update(this.resource, { ...desired, metadata: { ...desired.metadata, resourceVersion: target.metadata.resourceVersion } });
      this.done(dir, 'update', t0);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  private done(dir: 'up' | 'down', op: string, t0: number): void {
    this.ctx.metrics.objectsSynced.inc({ direction: dir, resource: this.label, operation: op });
    this.ctx.metrics.syncDuration.observe({ direction: dir, resource: this.label }, (performance.now() - t0) / 1000);
  }
}
