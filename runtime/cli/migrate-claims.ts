// The steps of `klutch-kit migrate` (docs/dataservice.md, "Migration: claims in production → namespaced XRs"):
// release the claims of a control plane without touching what they composed (operator objects, databases),
// then re-create them as namespaced XRs once the catalogue is replaced. Dependencies are injected (a
// KubeClient, a progress line writer, a sleep) so that each step is tested against a real API server.
//
// Why the XRs are paused first: an XR's reconcile that started before its claim was deleted still finishes its
// composition and server-side applies the composed resources. When it lands after an orphaned composed resource
// was deleted, the apply creates it again with the defaults (`deletionPolicy: Delete`), managing the same
// operator object, and owned by the XR being deleted; the garbage collector then deletes the new one and its
// provider deletes the operator object. A paused XR does not compose (Crossplane checks the pause annotation
// before anything else), and reconciles of one XR never overlap, so once an XR reports `ReconcilePaused` no
// compose of it is running or will start. The composed resources are then orphaned and deleted while nothing
// can re-create them, the operator objects are checked, and only then are the claims deleted and the XRs
// unpaused (a deleted XR's reconcile removes its finalizer and composes nothing).
import { isAlreadyExists, isNotFound, type KubeClient, type KubeObject, type ResourceRef } from '../core/client.js';
import { ResourcePaths } from '../core/discovery.js';

export const PAUSED_ANNOTATION = 'crossplane.io/paused';
/** Marks the XRs `release-claims` paused, so that a second run finishes what an interrupted one started. */
export const RELEASE_ANNOTATION = 'klutch.anynines.com/migration';
const RELEASE_VALUE = 'release-claims';

export interface MigrateDeps {
  readonly client: KubeClient;
  /** A progress line. */
  readonly log: (line: string) => void;
  /** @default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Time allowed for each wait (pause seen, composed resources gone, claims gone, XRs gone or Ready). @default 300000 */
  readonly timeoutMs?: number;
  /** @default 500 */
  readonly pollMs?: number;
}

/** A migration step failed; the message names the object, what was seen and what to do. Nothing after it ran. */
export class MigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationError';
  }
}

type Obj = KubeObject & { spec?: Record<string, unknown>; status?: { conditions?: Condition[] } };
interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
interface Ref {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** One claim kind of the group: its XRD's claim and XR resources. */
interface ClaimKind {
  readonly xrd: string;
  readonly claim: ResourceRef;
  readonly xr: ResourceRef;
}

/** What a composed resource manages, when it is a provider-kubernetes Object: the object to keep (and its uid). */
export interface Kept {
  readonly ref: Ref;
  readonly uid: string;
}

export interface ReleasePlan {
  /** The claims as read (what `--save` writes). */
  readonly claims: readonly Obj[];
  /** Per claim, its XR and composed resources. */
  readonly items: ReadonlyArray<{ claim: Obj; xrRef: ResourceRef; xr: Obj; composed: ReadonlyArray<{ ref: ResourceRef; obj: Obj }> }>;
  /** XRs an interrupted run paused and whose claims are gone already: unpaused to finish their deletion. */
  readonly leftovers: ReadonlyArray<{ xrRef: ResourceRef; xr: Obj }>;
  /** The objects provider-kubernetes Objects manage, by uid: they must outlive the release. */
  readonly kept: readonly Kept[];
}

const show = (r: { kind?: string; metadata?: { name?: string; namespace?: string } } | Ref): string => {
  const kind = 'metadata' in r ? r.kind : (r as Ref).kind;
  const name = 'metadata' in r ? r.metadata?.name : (r as Ref).name;
  const ns = 'metadata' in r ? r.metadata?.namespace : (r as Ref).namespace;
  return `${kind} ${ns ? `${ns}/` : ''}${name}`;
};
const cond = (o: Obj | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);

async function resourceOf(paths: ResourcePaths, apiVersion: string, kind: string): Promise<ResourceRef> {
  const r = await paths.resource(apiVersion, kind);
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  return { group, version, plural: r.name, kind, namespaced: r.namespaced };
}

async function waitUntil<T>(deps: MigrateDeps, what: string, fn: () => Promise<T | undefined>, state: () => string): Promise<T> {
  const timeoutMs = deps.timeoutMs ?? 300_000;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new MigrationError(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}; ${state()}`);
    await sleep(deps.pollMs ?? 500);
  }
}

const XRD: ResourceRef = {
  group: 'apiextensions.crossplane.io',
  version: 'v1',
  plural: 'compositeresourcedefinitions',
  kind: 'CompositeResourceDefinition',
  namespaced: false,
};

interface Xrd extends KubeObject {
  spec: {
    group: string;
    names: { kind: string; plural: string };
    claimNames?: { kind: string; plural: string };
    scope?: string;
    versions: Array<{ name: string; referenceable?: boolean }>;
  };
}

async function xrdsOf(client: KubeClient, group: string): Promise<Xrd[]> {
  return ((await client.list<Xrd>(XRD)).items ?? []).filter((x) => x.spec.group === group);
}

function claimKinds(xrds: readonly Xrd[]): ClaimKind[] {
  return xrds
    .filter((x) => x.spec.claimNames)
    .map((x) => {
      const version = (x.spec.versions.find((v) => v.referenceable) ?? x.spec.versions[0]).name;
      return {
        xrd: x.metadata.name!,
        claim: { group: x.spec.group, version, plural: x.spec.claimNames!.plural, kind: x.spec.claimNames!.kind, namespaced: true },
        xr: { group: x.spec.group, version, plural: x.spec.names.plural, kind: x.spec.names.kind, namespaced: false },
      };
    });
}

/** The composed resources of an XR: `spec.resourceRefs` (claims' XRs) or `spec.crossplane.resourceRefs`. */
const resourceRefsOf = (xr: Obj): Ref[] =>
  ((xr.spec?.resourceRefs ?? (xr.spec?.crossplane as { resourceRefs?: unknown } | undefined)?.resourceRefs ?? []) as Ref[]).filter((r) => r && r.name);

/**
 * Why a composed resource cannot be orphaned, or undefined. `spec.deletionPolicy: Orphan` keeps what a managed
 * resource manages only while its management policies are the default (`["*"]`) or leave out `Delete`; a
 * provider-kubernetes v1alpha1 Object says the same with `managementPolicy`.
 */
export function orphanProblem(o: Obj): string | undefined {
  const spec = o.spec ?? {};
  if (typeof spec.deletionPolicy !== 'string')
    return 'has no spec.deletionPolicy: it is not a managed resource, and deleting its claim would delete it; take it out of the Composition first';
  const policies = spec.managementPolicies as string[] | undefined;
  if (Array.isArray(policies) && !(policies.length === 1 && policies[0] === '*') && (policies.includes('Delete') || policies.includes('*')))
    return `has spec.managementPolicies ${JSON.stringify(policies)}: with Delete in non-default management policies its provider deletes what it manages whatever spec.deletionPolicy says; remove "Delete" (e.g. ["Observe","Create","Update","LateInitialize"]) and run again`;
  if (spec.managementPolicy === 'ObserveDelete')
    return 'has spec.managementPolicy "ObserveDelete": its provider deletes what it manages whatever spec.deletionPolicy says; set it to "Default" and run again';
  return undefined;
}

/** The object a provider-kubernetes Object manages (`spec.forProvider.manifest`), if the composed resource is one. */
function managedBy(o: Obj): Ref | undefined {
  if (o.kind !== 'Object' || !/^kubernetes(\.m)?\.crossplane\.io\//.test(o.apiVersion ?? '')) return undefined;
  const m = (o.spec?.forProvider as { manifest?: { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } } } | undefined)
    ?.manifest;
  if (!m?.apiVersion || !m.kind || !m.metadata?.name) return undefined;
  const namespace = m.metadata.namespace ?? o.metadata.namespace;
  return { apiVersion: m.apiVersion, kind: m.kind, name: m.metadata.name, ...(namespace ? { namespace } : {}) };
}

/** The claim's XR carries the mark of a `release-claims` run: an interrupted run is being resumed. */
async function isResumed(client: KubeClient, k: ClaimKind, claim: Obj): Promise<boolean> {
  const name = (claim.spec?.resourceRef as { name?: string } | undefined)?.name;
  if (!name) return false;
  return (await client.getOrNull(k.xr, undefined, name))?.metadata.annotations?.[RELEASE_ANNOTATION] === RELEASE_VALUE;
}

/**
 * Reads the claims of `group` (all namespaces, or those given) with their XRs and composed resources and checks
 * that each can be released; writes nothing. Throws a MigrationError naming every problem found.
 */
export async function planRelease(deps: MigrateDeps, opts: { group: string; namespaces?: readonly string[] }): Promise<ReleasePlan> {
  const { client } = deps;
  const paths = new ResourcePaths(client);
  const kinds = claimKinds(await xrdsOf(client, opts.group));
  if (kinds.length === 0)
    throw new MigrationError(
      `no CompositeResourceDefinition of group ${opts.group} offers claims: there is nothing to release (was the catalogue replaced already? then run \`klutch-kit migrate create-xrs\`)`,
    );
  const problems: string[] = [];
  const items: Array<ReleasePlan['items'][number]> = [];
  const leftovers: Array<ReleasePlan['leftovers'][number]> = [];
  const kept: Kept[] = [];
  for (const k of kinds) {
    const claims: Obj[] = [];
    for (const ns of opts.namespaces ?? [undefined]) claims.push(...(await client.list<Obj>(k.claim, ns)).items);
    const claimed = new Set<string>();
    for (const claim of claims.sort((a, b) => show(a).localeCompare(show(b)))) {
      claim.apiVersion ??= `${k.claim.group}/${k.claim.version}`;
      claim.kind ??= k.claim.kind;
      const at = show(claim);
      if (claim.metadata.deletionTimestamp && !(await isResumed(client, k, claim)))
        problems.push(`${at} is being deleted already: wait until it is gone, or restore it from a saved copy, and run again`);
      if (claim.metadata.annotations?.[PAUSED_ANNOTATION] !== undefined)
        problems.push(`${at} has annotation ${PAUSED_ANNOTATION}: a claim copies its annotations to its XR and would undo the pause; remove it and run again`);
      const xrName = (claim.spec?.resourceRef as { name?: string } | undefined)?.name;
      if (!xrName) {
        problems.push(`${at} is not bound to a composite resource (spec.resourceRef is empty): wait until it is Ready, or delete it, and run again`);
        continue;
      }
      claimed.add(xrName);
      const xr = await client.getOrNull<Obj>(k.xr, undefined, xrName);
      if (!xr) {
        problems.push(`${at}: its ${k.xr.kind} ${xrName} does not exist`);
        continue;
      }
      xr.apiVersion ??= `${k.xr.group}/${k.xr.version}`;
      xr.kind ??= k.xr.kind;
      const composed: Array<{ ref: ResourceRef; obj: Obj }> = [];
      for (const r of resourceRefsOf(xr)) {
        const ref = await resourceOf(paths, r.apiVersion, r.kind);
        const obj = await client.getOrNull<Obj>(ref, ref.namespaced ? (r.namespace ?? xr.metadata.namespace) : undefined, r.name);
        if (!obj) continue; // listed but gone: nothing to orphan
        obj.apiVersion ??= r.apiVersion;
        obj.kind ??= r.kind;
        const p = orphanProblem(obj);
        if (p) problems.push(`${show(obj)} (composed by ${k.xr.kind} ${xrName} of ${at}) ${p}`);
        const target = managedBy(obj);
        if (target) {
          const t = await client.getOrNull(await resourceOf(paths, target.apiVersion, target.kind), target.namespace, target.name).catch(() => undefined);
          if (t?.metadata.uid) kept.push({ ref: target, uid: t.metadata.uid });
        }
        composed.push({ ref, obj });
      }
      items.push({ claim, xrRef: k.xr, xr, composed });
    }
    // XRs a previous, interrupted run paused and whose claims were deleted: unpausing them finishes their deletion.
    for (const xr of (await client.list<Obj>(k.xr)).items) {
      if (xr.metadata.annotations?.[RELEASE_ANNOTATION] === RELEASE_VALUE && xr.metadata.deletionTimestamp && !claimed.has(xr.metadata.name!)) {
        xr.apiVersion ??= `${k.xr.group}/${k.xr.version}`;
        xr.kind ??= k.xr.kind;
        leftovers.push({ xrRef: k.xr, xr });
      }
    }
  }
  if (problems.length) throw new MigrationError(`cannot release the claims, nothing was changed:\n  - ${problems.join('\n  - ')}`);
  return { claims: items.map((i) => i.claim), items, leftovers, kept };
}

async function checkKept(deps: MigrateDeps, kept: readonly Kept[], when: string): Promise<void> {
  const paths = new ResourcePaths(deps.client);
  for (const k of kept) {
    const o = await deps.client.getOrNull(await resourceOf(paths, k.ref.apiVersion, k.ref.kind), k.ref.namespace, k.ref.name);
    if (o?.metadata.uid !== k.uid)
      throw new MigrationError(
        `${show(k.ref)} (uid ${k.uid}) is ${o ? `replaced (uid ${o.metadata.uid})` : 'gone'} ${when}: stop here, nothing more was changed; restore it from its backup (docs/dataservice.md)`,
      );
  }
}

/**
 * Releases the claims of a plan: pauses their XRs and waits until Crossplane reports them paused, orphans and
 * deletes the composed resources (checking that what provider-kubernetes Objects managed is still there, same uid),
 * deletes the claims, then unpauses the XRs so that Crossplane finishes their deletion. Idempotent: a run
 * after an interrupted one picks up where it stopped.
 */
export async function executeRelease(deps: MigrateDeps, plan: ReleasePlan): Promise<void> {
  const { client, log } = deps;
  const n = plan.items.length;
  // 1. Pause the XRs; wait until each reports ReconcilePaused: from then on no compose of it runs.
  for (const { xrRef, xr } of plan.items) {
    await client.mergePatch(xrRef, undefined, xr.metadata.name!, {
      metadata: { annotations: { [PAUSED_ANNOTATION]: 'true', [RELEASE_ANNOTATION]: RELEASE_VALUE } },
    });
  }
  for (const { xrRef, xr, claim } of plan.items) {
    let last: Obj | undefined;
    await waitUntil(
      deps,
      `${show(xr)} (of ${show(claim)}) to report Synced=False reason ReconcilePaused`,
      async () => {
        last = await client.getOrNull<Obj>(xrRef, undefined, xr.metadata.name!);
        if (last && last.metadata.annotations?.[PAUSED_ANNOTATION] !== 'true')
          throw new MigrationError(
            `${show(xr)}: annotation ${PAUSED_ANNOTATION} was changed by someone else (now ${JSON.stringify(last.metadata.annotations?.[PAUSED_ANNOTATION])}); nothing was deleted, run again`,
          );
        return cond(last, 'Synced')?.reason === 'ReconcilePaused' ? true : undefined;
      },
      () => `its Synced condition: ${JSON.stringify(cond(last, 'Synced') ?? null)}; is Crossplane running?`,
    );
  }
  log(`paused ${n} composite resource(s)`);

  // 2. Orphan the composed resources, then delete them: nothing re-creates them while their XRs are paused.
  const composed = plan.items.flatMap((i) => i.composed.map((c) => ({ ...c, of: i.xr })));
  for (const { ref, obj } of composed) {
    const ns = ref.namespaced ? obj.metadata.namespace : undefined;
    const after = await client.mergePatch<Obj>(ref, ns, obj.metadata.name!, { spec: { deletionPolicy: 'Orphan' } }).catch((e: unknown) => {
      if (isNotFound(e)) return undefined;
      throw e;
    });
    if (after && after.spec?.deletionPolicy !== 'Orphan')
      throw new MigrationError(`${show(obj)}: spec.deletionPolicy is ${JSON.stringify(after.spec?.deletionPolicy)} after setting Orphan; nothing was deleted`);
  }
  log(`set deletionPolicy Orphan on ${composed.length} composed resource(s)`);
  for (const { ref, obj } of composed) await client.delete(ref, ref.namespaced ? obj.metadata.namespace : undefined, obj.metadata.name!);
  for (const { ref, obj, of } of composed) {
    let last: Obj | undefined;
    await waitUntil(
      deps,
      `${show(obj)} (composed by ${show(of)}) to be gone`,
      async () => {
        last = await client.getOrNull<Obj>(ref, ref.namespaced ? obj.metadata.namespace : undefined, obj.metadata.name!);
        return last ? undefined : true;
      },
      () => `finalizers ${JSON.stringify(last?.metadata.finalizers ?? [])}: its provider removes its finalizer; is the provider running?`,
    );
  }
  await checkKept(deps, plan.kept, 'after its composed resource was deleted');
  log(`deleted ${composed.length} composed resource(s); the ${plan.kept.length} object(s) they managed are still there`);

  // 3. Delete the claims: Crossplane deletes their XRs (paused, so they stay; with compositeDeletePolicy Foreground
  //    the claim waits for its XR). Once each XR is marked deleted, unpause it: a deleted XR's reconcile removes its
  //    finalizer and composes nothing. Then the XRs and the claims go.
  const paths = new ResourcePaths(client);
  for (const { claim } of plan.items)
    await client.delete(await resourceOf(paths, claim.apiVersion!, claim.kind!), claim.metadata.namespace, claim.metadata.name!);
  const xrs = [
    ...plan.items.map((i) => ({ xrRef: i.xrRef, xr: i.xr, claim: i.claim as Obj | undefined })),
    ...plan.leftovers.map((l) => ({ ...l, claim: undefined })),
  ];
  for (const { xrRef, xr, claim } of xrs) {
    const state = await waitUntil(
      deps,
      `${show(xr)}${claim ? ` (of ${show(claim)})` : ''} to be marked deleted`,
      async () => {
        const live = await client.getOrNull<Obj>(xrRef, undefined, xr.metadata.name!);
        return !live ? 'gone' : live.metadata.deletionTimestamp ? 'deleting' : undefined;
      },
      () => 'its claim deletes it; is Crossplane running?',
    );
    if (state === 'gone') continue;
    await client
      .mergePatch(xrRef, undefined, xr.metadata.name!, { metadata: { annotations: { [PAUSED_ANNOTATION]: null, [RELEASE_ANNOTATION]: null } } })
      .catch((e: unknown) => {
        if (!isNotFound(e)) throw e;
      });
  }
  for (const { xrRef, xr } of xrs) {
    let last: Obj | undefined;
    await waitUntil(
      deps,
      `${show(xr)} to be gone`,
      async () => {
        last = await client.getOrNull<Obj>(xrRef, undefined, xr.metadata.name!);
        return last ? undefined : true;
      },
      () => `finalizers ${JSON.stringify(last?.metadata.finalizers ?? [])}, Synced ${JSON.stringify(cond(last, 'Synced') ?? null)}; is Crossplane running?`,
    );
  }
  for (const { claim } of plan.items) {
    const ref = await resourceOf(paths, claim.apiVersion!, claim.kind!);
    let last: Obj | undefined;
    await waitUntil(
      deps,
      `${show(claim)} to be gone`,
      async () => {
        last = await client.getOrNull<Obj>(ref, claim.metadata.namespace, claim.metadata.name!);
        return last ? undefined : true;
      },
      () => `finalizers ${JSON.stringify(last?.metadata.finalizers ?? [])}, Synced ${JSON.stringify(cond(last, 'Synced') ?? null)}; is Crossplane running?`,
    );
  }
  await checkKept(deps, plan.kept, 'after the claims were deleted');
  log(`released ${n} claim(s): claims and composite resources gone, the ${plan.kept.length} object(s) they composed kept`);
}

/** Claim fields that name Crossplane machinery; under a namespaced XR they move to spec.crossplane or go. */
const MOVED = ['compositionRef', 'compositionSelector'] as const;
const DROPPED = [
  'resourceRef',
  'writeConnectionSecretToRef',
  'publishConnectionDetailsTo',
  'compositeDeletePolicy',
  'compositionUpdatePolicy',
  'compositionRevisionRef',
  'compositionRevisionSelector',
] as const;

/** The namespaced XR for a saved claim: same apiVersion, kind, name, namespace and spec; compositionRef under spec.crossplane. */
export function xrOfClaim(claim: Obj): Obj {
  const spec: Record<string, unknown> = { ...(claim.spec ?? {}) };
  const crossplane: Record<string, unknown> = {};
  for (const k of MOVED) {
    if (spec[k] !== undefined) crossplane[k] = spec[k];
    delete spec[k];
  }
  for (const k of DROPPED) delete spec[k];
  return {
    apiVersion: claim.apiVersion,
    kind: claim.kind,
    metadata: { name: claim.metadata.name, namespace: claim.metadata.namespace },
    spec: { ...spec, ...(Object.keys(crossplane).length ? { crossplane } : {}) },
  };
}

/** Checks a saved claim (as `release-claims --save` wrote it); returns a problem or undefined. */
function savedClaimProblem(o: unknown, i: number): string | undefined {
  const c = o as Obj | undefined;
  if (!c || typeof c !== 'object') return `item ${i} is not an object`;
  for (const [f, v] of [
    ['apiVersion', c.apiVersion],
    ['kind', c.kind],
    ['metadata.name', c.metadata?.name],
    ['metadata.namespace', c.metadata?.namespace],
  ] as const)
    if (typeof v !== 'string' || v === '')
      return `item ${i}: ${f} is ${JSON.stringify(v)}; expected a claim as \`klutch-kit migrate release-claims --save\` wrote it`;
  return undefined;
}

/**
 * Re-creates saved claims as namespaced XRs (an XR that exists already is left alone) and waits until each is
 * Ready. Checks first that every kind is now served by a namespaced XRD (the catalogue was replaced).
 */
export async function createXrs(deps: MigrateDeps, claims: readonly unknown[], opts: { wait?: boolean } = {}): Promise<void> {
  const { client, log } = deps;
  const problems = claims.map(savedClaimProblem).filter((p): p is string => p !== undefined);
  if (problems.length) throw new MigrationError(`the saved claims cannot be read, nothing was created:\n  - ${problems.join('\n  - ')}`);
  const saved = claims as Obj[];
  const paths = new ResourcePaths(client);
  const groups = [...new Set(saved.map((c) => c.apiVersion!.split('/')[0]))];
  const xrds = (await Promise.all(groups.map((g) => xrdsOf(client, g)))).flat();
  const refs = new Map<string, ResourceRef>();
  for (const c of saved) {
    const key = `${c.apiVersion}/${c.kind}`;
    if (refs.has(key)) continue;
    const group = c.apiVersion!.split('/')[0];
    const xrd = xrds.find((x) => x.spec.group === group && x.spec.names.kind === c.kind);
    const claimXrd = xrds.find((x) => x.spec.group === group && x.spec.claimNames?.kind === c.kind);
    if (claimXrd || !xrd || xrd.spec.scope !== 'Namespaced')
      problems.push(
        `${c.kind} (${c.apiVersion}) is ${claimXrd ? `still a claim of XRD ${claimXrd.metadata.name}` : xrd ? `an XR of scope ${JSON.stringify(xrd.spec.scope ?? 'LegacyCluster')}` : 'served by no XRD'}: replace the catalogue by the ApiStyle.NAMESPACED_XR one first (docs/dataservice.md, migration step 3)`,
      );
    else refs.set(key, await resourceOf(paths, c.apiVersion!, c.kind!));
  }
  if (problems.length) throw new MigrationError(`cannot create the XRs, nothing was created:\n  - ${problems.join('\n  - ')}`);
  let created = 0;
  for (const c of saved) {
    const xr = xrOfClaim(c);
    try {
      await client.create(refs.get(`${c.apiVersion}/${c.kind}`)!, xr);
      created++;
    } catch (e) {
      if (!isAlreadyExists(e)) throw new MigrationError(`${show(c)}: cannot create it as a namespaced XR: ${(e as Error).message}`);
    }
  }
  log(`created ${created} namespaced XR(s) (${saved.length - created} existed already)`);
  if (opts.wait === false) return;
  for (const c of saved) {
    const ref = refs.get(`${c.apiVersion}/${c.kind}`)!;
    let last: Obj | undefined;
    await waitUntil(
      deps,
      `${show(c)} to be Ready`,
      async () => {
        last = await client.getOrNull<Obj>(ref, c.metadata.namespace, c.metadata.name!);
        return cond(last, 'Ready')?.status === 'True' ? true : undefined;
      },
      () => `Ready ${JSON.stringify(cond(last, 'Ready') ?? null)}, Synced ${JSON.stringify(cond(last, 'Synced') ?? null)}`,
    );
  }
  log(`${saved.length} namespaced XR(s) Ready`);
}
