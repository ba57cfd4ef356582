/**
 * Who owns a pair of claimed objects — the provider's object `up` in this binding's provider namespace
 * and the app-cluster object `down` of the same name — decided from the konnector's own records only,
 * **per binding**. Pure: ClaimSync (claims.ts) acts on the answer.
 *
 * The records on a copy (the konnector writes them; what the copied object carries under these keys is
 * dropped first, see `copyAnnotations`):
 *
 * - `klutch.anynines.com/resource-owner`: `Provider` on an app-cluster copy of a provider object,
 *   `Consumer` on a provider-side copy of an app-cluster object;
 * - `klutch.anynines.com/binding-uid`: the uid of the APIServiceBinding whose claim made the copy;
 * - `klutch.anynines.com/source-uid` (and `source-resource-version` on app-cluster copies): the object
 *   it was copied from.
 *
 * Rules:
 *
 * 1. A copy this binding made is this binding's: updated in the owner's direction, deleted when its
 *    source is gone.
 * 2. A copy another binding made is never updated, adopted or deleted. When this binding has an object
 *    of that name it would sync into it, the name is contested: `heldBy` names the holder (ClaimSync
 *    reports the conflict on both bindings). A second provider whose claim selects names the first
 *    uses therefore cannot overwrite the first one's credentials, delete them, or make the two fight.
 * 3. A copy without `binding-uid` (made by a konnector before it was recorded) is adopted only when its
 *    `source-uid` names this binding's object of that name (`up` for an app-cluster copy, `down` for a
 *    provider-side one): the source is what only the binding that made the copy can see. Otherwise it
 *    is held by an unknown binding (`heldBy: ''`) and left alone; in particular an old app-cluster copy
 *    whose provider object went while no konnector ran is not deleted (delete it by hand). A provider-side
 *    copy without `binding-uid` whose app-cluster source is gone is deleted as before: the provider side
 *    is this connection's own namespace, and no binding wants a copy of an object that is gone.
 * 4. A provider-side copy is a copy of the app-cluster object only when its `source-uid` names that
 *    object (whatever its `binding-uid` says): the provider can write its side, so an owner or binding
 *    record it forges cannot make the konnector push an app-cluster object up.
 * 5. Objects that are no copy: as before, the side where it exists owns it; an object on both sides
 *    that is neither's copy is the provider's only with `create.replaceExisting`.
 */
import type { KubeObject } from '../core/client.js';
import type { Owner } from './selector.js';
import {
  BINDING_UID_ANNOTATION,
  BOUND_ANNOTATION,
  KONNECTOR_ANNOTATIONS,
  RESOURCE_OWNER_ANNOTATION,
  SOURCE_RESOURCE_VERSION_ANNOTATION,
  SOURCE_UID_ANNOTATION,
} from './types.js';

/** Who made a copy: this binding, another binding's uid, or `''` for a copy without a binding record. */
export type Maker = { self: true } | { self: false; holder: string };

/**
 * Whether `o` is a copy with owner annotation `owner`, and who made it; undefined when it is not such a
 * copy. `source` is this binding's object on the other side (what a copy without binding record must
 * have been made from to be adopted).
 */
export function makerOf(o: KubeObject | undefined, owner: Owner, binding: string, source: KubeObject | undefined): Maker | undefined {
  const ann = o?.metadata.annotations;
  if (ann?.[RESOURCE_OWNER_ANNOTATION] !== owner) return undefined;
  const recorded = ann[BINDING_UID_ANNOTATION];
  if (recorded) return recorded === binding ? { self: true } : { self: false, holder: recorded };
  // No binding record (an older konnector): ours only if made from our object of that name.
  const uid = source?.metadata.uid;
  return uid && ann[SOURCE_UID_ANNOTATION] === uid ? { self: true } : { self: false, holder: '' };
}

export interface OwnershipInput {
  /** The object of that name in this binding's provider namespace. */
  readonly up: KubeObject | undefined;
  /** The object of that name in the app-cluster namespace. */
  readonly down: KubeObject | undefined;
  /** uid of this binding. */
  readonly binding: string;
  /** The claim's `create.replaceExisting`. */
  readonly replaceExisting: boolean;
}

export interface Ownership {
  /** Sync in the owner's direction (`Provider`: down, `Consumer`: up); undefined: leave the pair alone. */
  readonly owner?: Owner;
  /** Another binding's copy holds the name: its uid (`''` when not recorded). Never touched. */
  readonly heldBy?: string;
  /**
   * With heldBy: this binding's object that would be synced into the held copy, in `direction` (the name
   * is in conflict when the claim selects it); undefined when this binding has none.
   */
  readonly contested?: KubeObject;
  readonly direction?: 'up' | 'down';
}

/** The decision for one object pair (see the rules in the header). */
export function ownership({ up, down, binding, replaceExisting }: OwnershipInput): Ownership {
  const downCopy = makerOf(down, 'Provider', binding, up);
  if (downCopy) {
    if (downCopy.self) return { owner: 'Provider' };
    // Our provider object would be copied into it; a provider-side copy of ours is not a provider object.
    const contested = up && !makerOf(up, 'Consumer', binding, undefined) ? up : undefined;
    return { heldBy: downCopy.holder, contested, direction: 'down' };
  }
  const upCopy = makerOf(up, 'Consumer', binding, down);
  if (up && down) {
    if (upCopy) {
      // The provider can write the provider-side copy, records included: it is a copy of this app-cluster
      // object only if it names its uid, which the provider cannot know unless the konnector pushed it up.
      // Anything else (an older konnector's copy of another object, or the provider's own) is left alone.
      const fromDown = !!down.metadata.uid && up.metadata.annotations?.[SOURCE_UID_ANNOTATION] === down.metadata.uid;
      if (!fromDown) return {};
      if (upCopy.self) return { owner: 'Consumer' };
      // Another binding of this provider connection pushed this app-cluster object up: contested.
      return { heldBy: upCopy.holder, contested: down, direction: 'up' };
    }
    // Both exist and neither is a copy of the other: the provider's object wins only when the claim replaces existing ones.
    return replaceExisting ? { owner: 'Provider' } : {};
  }
  if (up) {
    if (!upCopy) return { owner: 'Provider' };
    // A copy of an app-cluster object that is gone: ours (or unrecorded) is deleted upstream, another binding's is left to it.
    const recorded = up.metadata.annotations?.[BINDING_UID_ANNOTATION];
    return !recorded || recorded === binding ? { owner: 'Consumer' } : { heldBy: recorded, direction: 'up' };
  }
  if (down) return { owner: 'Consumer' };
  return {};
}

/**
 * The konnector's records on the copy of `source` that `binding` makes in direction `dir` (`down`: a
 * provider object to the app cluster, owner `Provider`; `up`: an app-cluster object to the provider,
 * owner `Consumer`).
 */
export function copyRecords(source: KubeObject, dir: 'up' | 'down', binding: string): Record<string, string> {
  const marks: Record<string, string> = {
    [RESOURCE_OWNER_ANNOTATION]: dir === 'down' ? 'Provider' : 'Consumer',
    [BOUND_ANNOTATION]: 'true',
    [BINDING_UID_ANNOTATION]: binding,
  };
  const { uid, resourceVersion } = source.metadata;
  if (dir === 'down' && uid && resourceVersion) {
    marks[SOURCE_UID_ANNOTATION] = uid;
    marks[SOURCE_RESOURCE_VERSION_ANNOTATION] = resourceVersion;
  } else if (dir === 'up' && uid) {
    // What makes the provider-side copy a copy of this app-cluster object (rule 4): the provider cannot
    // know the uid of an app-cluster object the konnector never pushed up.
    marks[SOURCE_UID_ANNOTATION] = uid;
  }
  return marks;
}

/**
 * The annotations of a copy of `source`: the source's own annotations without the konnector's keys
 * (whatever the other side wrote there), then the konnector's records `marks`.
 */
export function copyAnnotations(source: Record<string, string> | undefined, marks: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(source ?? {})) if (!KONNECTOR_ANNOTATIONS.includes(k)) out[k] = v;
  return { ...out, ...marks };
}
