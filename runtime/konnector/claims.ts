/**
 * Claimed resources: objects of an accepted permission claim (typically Secrets and ConfigMaps, e.g. the
 * credentials Secret of a ServiceBinding) synced between each bound consumer namespace and its provider
 * namespace, by owner:
 *
 * - **Provider**-owned (exists upstream only, or its app-cluster copy carries the konnector's
 *   `klutch.anynines.com/resource-owner: Provider`): copied down, updated down, deleted down when gone
 *   upstream, recreated down when deleted there.
 * - **Consumer**-owned (exists in the app cluster only, or its provider-side copy carries the
 *   `source-uid` of that app-cluster object): the mirror image.
 *
 * Ownership comes from the konnector's own records, never from an owner annotation the provider writes,
 * and it is **per binding**: every copy records the APIServiceBinding whose claim made it
 * (`klutch.anynines.com/binding-uid`), and a copy another binding made is never updated, adopted or
 * deleted (claim-ownership.ts has the rules). Two bindings whose claims select one name in one
 * namespace are a conflict, shown on both bindings (claim-conflicts.ts), not a write loop. Only
 * namespaces the konnector bound are synced (consumer-namespaces.ts).
 *
 * A claimed Secret crosses (either way) only if its `type` is on the Secret type allow-list
 * (contract/secret-types.ts): never `kubernetes.io/service-account-token`, whose copy would make the
 * app cluster's token controller mint a ServiceAccount token. A refused one is not written at all (an
 * existing copy is left as it is) and shown on the binding (claim-refusals.ts).
 *
 * Only objects the claim's whole selector matches are touched (names, namespaces, label selectors,
 * field selectors, owner); a claim never touches an object whose name it does not select (so several
 * claims of one resource with disjoint `names` do not fight over each other's copies). Informers are
 * per bound namespace on both sides: the konnector never caches every Secret of the app cluster.
 *
 * Claim options (see `_claim-options.ts` for the pure parts):
 *
 * - `create.replaceExisting` (Provider-owned): a consumer object of the same name that is not a
 *   konnector copy (no `resource-owner: Provider` annotation) is left alone unless this is true; then
 *   it is replaced by the provider's copy (updated in place, or deleted and recreated when immutable,
 *   of another type, or with `update.alwaysRecreate`). `update.preserving` does not apply to it.
 * - `onConflict.recreateWhenConsumerSideDeleted` (Provider-owned, default true): when false, a copy the
 *   consumer deleted is not recreated while the provider object keeps the uid and resourceVersion
 *   recorded on the copy (`source-uid` / `source-resource-version` annotations); any provider-side
 *   change brings it back. The set of consumer-deleted copies is in memory (seeded from the delete
 *   events of our copies, not counting the konnector's own deletes): after a konnector restart (or a
 *   change of the binding's claims, which restarts the claim syncers) a missing copy is recreated
 *   once; a consumer deletion while the konnector is not running is not seen either.
 * - `update.alwaysRecreate` (both directions): a copy that must change is deleted and recreated.
 * - `update.preserving` (both directions): values (or absence) of the target at these paths survive
 *   updates of the copy; the konnector's own annotations are never preserved.
 */
import type { Logger } from 'pino';
import { isAlreadyExists, isNotFound, keyOf, splitKey, type KubeClient, type KubeObject, type ResourceRef } from '../core/client.js';
import { Controller } from '../core/controller.js';
import { onAny, stripManagedFields } from '../core/informer.js';
import { copyAnnotations, copyRecords, makerOf, ownership } from './claim-ownership.js';
import type { SyncContext } from './context.js';
import { claimMetadataFilters, cleanMeta, copyMetadataInSync, deepEqual, isDeleting, type MetadataFilter } from './metadata.js';
import { MultiNamespaceInformer } from './multins-informer.js';
import { ResourceGate } from './resource-gate.js';
import { NamespaceBudget } from './namespace-budget.js';
import { BindingGuard } from './binding-guard.js';
import { ownerAllowed, selects, type Owner } from './selector.js';
import { SecretTypePolicy, secretTypeOf } from '../../contract/secret-types.js';
import { applyPreserving, claimOptions, sourceStamp, type ClaimOptions } from './_claim-options.js';
import {
  BINDING_UID_ANNOTATION,
  RESOURCE_OWNER_ANNOTATION,
  SOURCE_RESOURCE_VERSION_ANNOTATION,
  SOURCE_UID_ANNOTATION,
  type AcceptablePermissionClaim,
} from './types.js';

/** The Secret type the token controller fills with a ServiceAccount token, and the annotation naming that ServiceAccount. */
const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';
const SERVICE_ACCOUNT_NAME_ANNOTATION = 'kubernetes.io/service-account.name';

/** Resources whose claims the konnector syncs (namespaced, no status). */
const KINDS: Record<string, string> = { secrets: 'Secret', configmaps: 'ConfigMap', serviceaccounts: 'ServiceAccount' };

export function claimResource(c: AcceptablePermissionClaim): ResourceRef {
  const kind = (c.group ?? '') === '' ? KINDS[c.resource] : undefined;
  return { group: c.group ?? '', version: c.version, plural: c.resource, namespaced: true, kind };
}

/** The binding whose claim a ClaimSync serves. */
export interface ClaimBinding {
  /** Its name (the name of the export it binds). */
  readonly name: string;
  /** Its uid: recorded on every copy this syncer makes. */
  readonly uid: string;
  /** The binding's limits (cache cap, write budget), shared with its export syncer. @default a guard of this syncer's own */
  readonly guard?: BindingGuard;
}

let syncers = 0;

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
  private readonly opts: ClaimOptions;
  /** Label/annotation keys that cross, by direction (the konnector's policy narrowed by the claim). */
  private readonly meta: { up: MetadataFilter; down: MetadataFilter };
  /** uids of copies the konnector itself is deleting (their delete events are not consumer deletes). */
  private readonly ownDeletes = new Set<string>();
  /**
   * Consumer-deleted copies of provider-owned objects (`recreateWhenConsumerSideDeleted: false`):
   * consumer key → source stamp (`<provider uid>/<resourceVersion>`) of the deleted copy.
   */
  private readonly consumerDeleted = new Map<string, string>();
  /** App-cluster namespaces whose copy limit was logged. */
  private readonly limitWarned = new Set<string>();
  /** Copies the provider may make us create per app-cluster namespace. */
  private readonly budget: NamespaceBudget;
  /** This syncer as the reporter of claim conflicts (unique per instance). */
  private readonly reporter: string;
  /** Consumer keys this syncer reported a conflict for. */
  private readonly conflicted = new Set<string>();
  /** Consumer keys whose copy this syncer refused for its Secret type (refuseType). */
  private readonly refused = new Set<string>();
  /** The binding's limits: its provider informer counts against the binding's cache cap, its writes against the write budget. */
  private readonly guard: BindingGuard;

  constructor(
    private readonly ctx: SyncContext,
    readonly claim: AcceptablePermissionClaim,
    readonly binding: ClaimBinding,
  ) {
    if (!binding.uid) throw new Error(`ClaimSync: binding ${JSON.stringify(binding.name)} has no uid; every copy must record the binding that made it`);
    const bindingName = binding.name;
    (ctx.resourceGate ?? ResourceGate.DEFAULT).assertClaim(claim); // resource-gate.ts: never a claim outside the allow-list
    this.resource = claimResource(claim);
    this.label = `${claim.resource}${claim.group ? '.' + claim.group : ''}`;
    this.reporter = `${binding.uid}/${this.label}/${++syncers}`;
    this.log = ctx.log.child({ claim: this.label, binding: bindingName });
    this.opts = claimOptions(claim);
    this.meta = claimMetadataFilters(ctx.metadataKeys, claim);
    this.budget = new NamespaceBudget(ctx.maxProviderObjectsPerNamespace);
    this.guard = binding.guard ?? new BindingGuard(ctx, binding);
    if (this.opts.invalidPreserving.length) this.log.warn({ paths: this.opts.invalidPreserving }, 'ignoring invalid update.preserving paths');
    this.consumer = new MultiNamespaceInformer(ctx.app, this.resource, { resyncMs: ctx.resyncMs, logger: this.log, transform: stripManagedFields });
    this.providerInf = new MultiNamespaceInformer(ctx.provider, this.resource, {
      resyncMs: ctx.resyncMs,
      logger: this.log,
      transform: stripManagedFields,
      admission: this.guard.admission(`claim ${this.label}`),
    });
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
      onDelete: (o) => {
        this.noteConsumerDelete(o);
        this.controller.enqueue(keyOf(o));
      },
    });
    const fromProvider = (o: KubeObject) => {
      const c = o.metadata.namespace ? ctx.consumerNamespaceFor(o.metadata.namespace) : undefined;
      if (c) this.controller.enqueue(`${c}/${o.metadata.name}`);
    };
    this.providerInf.addEventHandler(onAny(fromProvider));
    this.unsubscribe = ctx.onNamespacesChanged(() => void this.refreshNamespaces());
  }

  private selectedNamespaces() {
    const ns = this.claim.selector?.namespaces ?? ['*'];
    return this.ctx.boundNamespaces().filter((b) => ns.includes('*') || ns.includes(b.consumer));
  }

  private async refreshNamespaces(syncTimeoutMs = 60_000): Promise<void> {
    const pairs = this.selectedNamespaces();
    const bound = new Set(pairs.map((p) => p.consumer));
    for (const k of [...this.consumerDeleted.keys()]) if (!bound.has(splitKey(k).namespace ?? '')) this.consumerDeleted.delete(k);
    for (const k of [...this.conflicted]) if (!bound.has(splitKey(k).namespace ?? '')) this.resolveConflict(k);
    for (const k of [...this.refused]) if (!bound.has(splitKey(k).namespace ?? '')) this.resolveRefusal(k);
    const newPairs = pairs.filter((p) => !this.consumer.namespaces.includes(p.consumer) || !this.providerInf.namespaces.includes(p.provider));
    await Promise.all([this.consumer.setNamespaces(pairs.map((p) => p.consumer)), this.providerInf.setNamespaces(pairs.map((p) => p.provider))]);
    // New namespaces: their informers enqueue everything on their initial list, but a key is dropped while the
    // other side's informer has not synced yet (reconcile). So once both sides of a new pair have synced,
    // everything in it is enqueued again: nothing waits for the next resync.
    await Promise.all(newPairs.map((p) => this.enqueueWhenSynced(p.consumer, p.provider, syncTimeoutMs)));
  }

  private async enqueueWhenSynced(consumerNs: string, providerNs: string, timeoutMs: number): Promise<void> {
    try {
      await Promise.all([this.consumer.waitForNamespaceSync(consumerNs, timeoutMs), this.providerInf.waitForNamespaceSync(providerNs, timeoutMs)]);
    } catch (e) {
      this.log.warn({ namespace: consumerNs, err: (e as Error).message }, 'namespace informers not synced; its objects wait for the next resync');
      return;
    }
    const names = new Set([...this.consumer.list(consumerNs), ...this.providerInf.list(providerNs)].map((o) => o.metadata.name!));
    for (const n of names) this.controller.enqueue(`${consumerNs}/${n}`);
  }

  async start(timeoutMs = 60_000): Promise<void> {
    await this.refreshNamespaces(timeoutMs);
    await Promise.all([this.consumer.waitForSync(timeoutMs), this.providerInf.waitForSync(timeoutMs)]);
    this.controller.start();
  }

  async stop(): Promise<void> {
    this.unsubscribe();
    await this.controller.stop();
    await Promise.all([this.consumer.stop(), this.providerInf.stop()]);
    this.conflicted.clear();
    this.ctx.claimConflicts.resolveAll(this.reporter);
    this.refused.clear();
    this.ctx.claimRefusals?.resolveAll(this.reporter);
  }

  private isCopy(o: KubeObject, owner: Owner): boolean {
    return o.metadata.annotations?.[RESOURCE_OWNER_ANNOTATION] === owner;
  }

  /**
   * Whether `o` is a copy (owner annotation `owner`) that no other binding recorded as its own: made by
   * this binding, or without a binding record (whose adoption ownership() checked against its source).
   */
  private notForeign(o: KubeObject, owner: Owner): boolean {
    const recorded = o.metadata.annotations?.[BINDING_UID_ANNOTATION];
    return this.isCopy(o, owner) && (!recorded || recorded === this.binding.uid);
  }

  /** Records a consumer's deletion of one of our copies of a provider-owned object (see the header). */
  private noteConsumerDelete(o: KubeObject): void {
    const uid = o.metadata.uid;
    if (uid && this.ownDeletes.delete(uid)) return;
    if (this.opts.recreateWhenConsumerSideDeleted || !this.isCopy(o, 'Provider') || !o.metadata.namespace) return;
    if (!selects({ names: this.claim.selector?.names }, o, undefined)) return;
    const pns = this.ctx.providerNamespaceFor(o.metadata.namespace);
    const up = pns ? this.providerInf.getByName(pns, o.metadata.name!) : undefined;
    // Another binding's copy: its deletion is that binding's business.
    if (!makerOf(o, 'Provider', this.binding.uid, up)?.self) return;
    const ann = o.metadata.annotations ?? {};
    // (A copy made before the source annotations existed: take the provider object as it is now.)
    const stamp =
      sourceStamp(ann[SOURCE_UID_ANNOTATION], ann[SOURCE_RESOURCE_VERSION_ANNOTATION]) ?? sourceStamp(up?.metadata.uid, up?.metadata.resourceVersion);
    if (stamp) this.consumerDeleted.set(keyOf(o), stamp);
  }

  private async deleteCopy(client: KubeClient, ns: string, target: KubeObject): Promise<void> {
    const uid = target.metadata.uid;
    if (uid) this.ownDeletes.add(uid);
    try {
      await client.delete(this.resource, ns, target.metadata.name!, { uid });
    } catch (e) {
      if (uid) this.ownDeletes.delete(uid);
      throw e;
    }
  }

  private async reconcile(key: string): Promise<void> {
    // A refusal stays recorded only while the object the claim would copy is still refused.
    const refused = await this.sync(key);
    if (!refused) this.resolveRefusal(key);
  }

  /** Syncs the object at `key` (consumer namespace/name); true when its copy was refused (refuseType). */
  private async sync(key: string): Promise<boolean> {
    const { namespace: cns, name } = splitKey(key);
    if (!cns) return false;
    // Names never change: an object whose name the claim does not select is another claim's business.
    if (!selects({ names: this.claim.selector?.names }, { metadata: { name } }, undefined)) return false;
    const pns = this.ctx.providerNamespaceFor(cns);
    if (!pns || !this.consumer.hasSynced(cns) || !this.providerInf.hasSynced(pns)) return false; // namespace not bound (yet)
    const up = this.providerInf.getByName(pns, name);
    const down = this.consumer.getByName(cns, name);
    if (!up) this.consumerDeleted.delete(key);
    const sel = this.claim.selector;
    const own = ownership({ up, down, binding: this.binding.uid, replaceExisting: this.opts.replaceExisting });
    if (own.heldBy !== undefined) {
      // Another binding's copy: never touched. A conflict when this claim would sync its own object into it.
      const c = own.contested;
      const wanted = !!c && !isDeleting(c) && ownerAllowed(sel, own.direction === 'down' ? 'Provider' : 'Consumer') && selects(sel, c, cns);
      if (wanted) this.reportConflict(key, cns, name, own.heldBy);
      else this.resolveConflict(key);
      return false;
    }
    this.resolveConflict(key);
    const owner = own.owner;
    if (!owner) {
      if (up && down) this.log.debug({ key }, 'object exists on both sides without an owner annotation; leaving it alone');
      return false;
    }
    if (!ownerAllowed(sel, owner)) return false;
    if (owner === 'Provider') {
      const source = up && !isDeleting(up) && selects(sel, up, cns) ? up : undefined;
      if (source && down && !isDeleting(down) && !this.isCopy(down, 'Provider')) {
        // A consumer object of the same name that we did not create.
        if (!this.opts.replaceExisting) {
          this.log.debug({ key }, 'a consumer object of the same name exists and create.replaceExisting is not set; leaving it alone');
          return false;
        }
        return this.mirror(source, down, cns, 'Provider', 'down', true);
      }
      if (source && !down) {
        const deleted = this.consumerDeleted.get(key);
        if (deleted !== undefined) {
          if (!this.opts.recreateWhenConsumerSideDeleted && deleted === sourceStamp(source.metadata.uid, source.metadata.resourceVersion)) {
            this.log.debug({ key }, 'the consumer deleted the copy and the provider object is unchanged; not recreating it');
            return false;
          }
          this.consumerDeleted.delete(key);
        }
      }
      return this.mirror(source, down, cns, 'Provider', 'down');
    } else {
      const source = down && !isDeleting(down) && selects(sel, down, cns) ? down : undefined;
      return this.mirror(source, up, pns, 'Consumer', 'up');
    }
  }

  private reportConflict(key: string, namespace: string, name: string, holder: string): void {
    this.conflicted.add(key);
    const isNew = this.ctx.claimConflicts.report(this.reporter, { claimant: this.binding.uid, holder, resource: this.label, namespace, name });
    if (isNew) {
      this.log.warn(
        { key, holder: holder || '(not recorded)' },
        "the claim selects an object another binding's copy holds; leaving the copy to that binding (condition ClaimConflict on both bindings)",
      );
    }
  }

  private resolveConflict(key: string): void {
    if (!this.conflicted.delete(key)) return;
    const { namespace, name } = splitKey(key);
    this.ctx.claimConflicts.resolve(this.reporter, namespace ?? '', name);
    this.log.info({ key }, 'claim conflict resolved');
  }

  /**
   * Makes `target` (in `targetNs` on the other side) a copy of `source`, or deletes our copy when
   * source is gone. `replace`: the target is a foreign object being replaced (no preserving).
   */
  private async mirror(
    source: KubeObject | undefined,
    target: KubeObject | undefined,
    targetNs: string,
    owner: Owner,
    dir: 'up' | 'down',
    replace = false,
  ): Promise<boolean> {
    const client = dir === 'down' ? this.ctx.app : this.ctx.provider;
    const t0 = performance.now();
    if (!source) {
      // Delete only copies this binding made (owner annotation, and no other binding's record).
      if (target && !isDeleting(target) && this.notForeign(target, owner)) {
        await this.deleteCopy(client, targetNs, target);
        this.done(dir, 'delete', t0);
      }
      return false;
    }
    if (this.refuseType(source, dir, dir === 'down' ? targetNs : source.metadata.namespace!)) return true;
    const marks = copyRecords(source, dir, this.binding.uid);
    // The konnector's records come from the konnector only: whatever the source carries under those keys is dropped.
    const meta = cleanMeta(
      { ...source.metadata, annotations: copyAnnotations(source.metadata.annotations, {}) },
      source.metadata.name!,
      targetNs,
      marks,
      this.meta[dir],
    );
    let desired: KubeObject = { apiVersion: source.apiVersion, kind: source.kind ?? this.resource.kind, metadata: meta, ...body(source) };
    const what = `${this.label} ${targetNs}/${source.metadata.name}`;
    if (!target) {
      const name = desired.metadata.name!;
      if (dir === 'down' && this.atLimit(targetNs, name)) return false;
      try {
        this.guard.write(dir, what); // a copy deleted and recreated over and over counts too
      } catch (e) {
        if (dir === 'down') this.budget.release(targetNs, name); // nothing was created: the slot goes back
        throw e;
      }
      try {
        await client.create(this.resource, desired);
        this.done(dir, 'create', t0);
      } catch (e) {
        if (!isAlreadyExists(e)) {
          this.budget.release(targetNs, name);
          throw e;
        }
      }
      return false;
    }
    if (isDeleting(target)) return false;
    if (!replace) desired = applyPreserving(desired, target, this.opts.preserving, marks);
    const same = deepEqual(body(target), body(desired)) && copyMetadataInSync(target.metadata, desired.metadata);
    if (same) {
      this.guard.settled(dir, what);
      return false;
    }
    this.guard.write(dir, what); // throws RequeueError once the copy's write budget is spent (a fight)
    const immutable = (target as { immutable?: boolean }).immutable === true || (target as { type?: string }).type !== (desired as { type?: string }).type;
    if (immutable || this.opts.alwaysRecreate) {
      await this.deleteCopy(client, targetNs, target);
      try {
        await client.create(this.resource, desired);
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
      this.done(dir, replace ? 'replace' : 'recreate', t0);
      return false;
    }
    try {
      await client.update(this.resource, { ...desired, metadata: { ...desired.metadata, resourceVersion: target.metadata.resourceVersion } });
      this.done(dir, replace ? 'replace' : 'update', t0);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    return false;
  }

  /**
   * Whether `source` (a claimed Secret about to be copied `dir`) has a type outside the Secret type
   * allow-list (contract/secret-types.ts): then nothing is written (no copy, no update of an existing
   * one) and the refusal is reported on the binding (claim-refusals.ts). `appNs`: its app-cluster namespace.
   */
  private refuseType(source: KubeObject, dir: 'up' | 'down', appNs: string): boolean {
    if (this.resource.group !== '' || this.resource.plural !== 'secrets') return false;
    const type = secretTypeOf(source as { type?: unknown });
    const verdict = (this.ctx.secretTypes ?? SecretTypePolicy.DEFAULT).decide(type);
    if (verdict.allowed) return false;
    const name = source.metadata.name!;
    const key = `${appNs}/${name}`;
    const sa = type === SERVICE_ACCOUNT_TOKEN_TYPE ? (source.metadata.annotations?.[SERVICE_ACCOUNT_NAME_ANNOTATION] ?? '') : undefined;
    this.refused.add(key);
    this.ctx.metrics.syncErrors.inc({ direction: dir, resource: this.label });
    const isNew = this.ctx.claimRefusals?.report(this.reporter, {
      binding: this.binding.uid,
      resource: this.label,
      namespace: appNs,
      name,
      direction: dir,
      type,
      serviceAccount: sa,
      why: verdict.why,
    });
    if (isNew !== false) this.log.warn({ key, type, direction: dir, serviceAccount: sa }, `claimed Secret not copied: its type is refused (${verdict.why})`);
    return true;
  }

  private resolveRefusal(key: string): void {
    if (!this.refused.delete(key)) return;
    const { namespace, name } = splitKey(key);
    this.ctx.claimRefusals?.resolve(this.reporter, namespace ?? '', name);
  }

  /**
   * Whether the provider already has the most copies it may have in an app-cluster namespace for this
   * claim (SyncContext.maxProviderObjectsPerNamespace): one log line per namespace, a metric per refusal.
   */
  private atLimit(ns: string, name: string): boolean {
    const max = this.budget.max;
    // This binding's copies (and unrecorded ones, to be safe); another binding's copies count towards its own limit.
    const copies = this.consumer
      .list(ns)
      .filter((o) => this.notForeign(o, 'Provider'))
      .map((o) => o.metadata.name!);
    if (this.budget.tryTake(ns, name, copies)) {
      this.limitWarned.delete(ns);
      return false;
    }
    this.ctx.metrics.syncErrors.inc({ direction: 'down', resource: this.label });
    if (!this.limitWarned.has(ns)) {
      this.limitWarned.add(ns);
      this.log.warn({ namespace: ns, max }, 'the provider has the most copies it may have in this namespace; not copying more');
    }
    return true;
  }

  private done(dir: 'up' | 'down', op: string, t0: number): void {
    this.ctx.metrics.objectsSynced.inc({ direction: dir, resource: this.label, operation: op });
    this.ctx.metrics.syncDuration.observe({ direction: dir, resource: this.label }, (performance.now() - t0) / 1000);
  }
}
