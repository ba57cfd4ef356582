/**
 * The binding API as the konnector reads and writes it: the shapes come from contract/api (one
 * source of truth), wrapped in the runtime's loose KubeObject type.
 */
import type { AcceptablePermissionClaim } from '../../contract/index.js';
import { BOUND_ANNOTATION, RESOURCE_OWNER_ANNOTATION } from '../../contract/index.js';
import type { KubeObject } from '../core/client.js';

export {
  BOUND_ANNOTATION,
  CLUSTER_NAMESPACE_ANNOTATION,
  RESOURCE_OWNER_ANNOTATION,
  SYNCER_FINALIZER,
  CLUSTER_BINDING_NAME,
  KUBECONFIG_SECRET_KEY,
  ConditionType,
  APP_CLUSTER_BINDING_FINALIZER,
  APP_CLUSTER_BINDING_NAME_LABEL,
  APP_CLUSTER_BINDING_NAMESPACE_LABEL,
} from '../../contract/index.js';
export type { AcceptablePermissionClaim };

export type { APIServiceBinding, APIServiceExport, APIServiceNamespace, AppClusterBinding, ClusterBinding } from '../core/binding-objects.js';
export type Secret = KubeObject & { type?: string; data?: Record<string, string>; stringData?: Record<string, string> };

/** Finalizer on each served APIServiceBinding: its CRD and objects are cleaned up (on both sides) before it goes. */
export const BINDING_FINALIZER = 'klutch.anynines.com/konnector';
/** Annotation on upstream copies: hash of the consumer spec last applied (detects removed fields). */
export const SPEC_HASH_ANNOTATION = 'klutch.anynines.com/consumer-spec-hash';
/** Annotation on downstream copies of provider-created objects. */
export const ADOPTED_ANNOTATION = 'klutch.anynines.com/adopted';
export { EXPORTED_LABEL } from '../../contract/index.js';
/**
 * Annotations on downstream copies of provider-owned claimed objects: uid and resourceVersion of the
 * provider object the copy was made from (`onConflict.recreateWhenConsumerSideDeleted: false` uses
 * them to recognise a consumer-deleted copy of an unchanged provider object).
 */
export const SOURCE_UID_ANNOTATION = 'klutch.anynines.com/source-uid';
export const SOURCE_RESOURCE_VERSION_ANNOTATION = 'klutch.anynines.com/source-resource-version';
/**
 * Annotation on every copy of a claimed object (both directions): the uid of the APIServiceBinding
 * whose claim made it. Ownership is per binding: a copy another binding made is never updated,
 * adopted or deleted (claim-ownership.ts). The konnector owns it: the value the source object carries
 * is dropped when copying (see KONNECTOR_ANNOTATIONS).
 */
export const BINDING_UID_ANNOTATION = 'klutch.anynines.com/binding-uid';
/**
 * The annotations the konnector writes on claimed copies: never taken from the object being copied
 * (a provider cannot forge the records that decide ownership).
 */
export const KONNECTOR_ANNOTATIONS: readonly string[] = [
  RESOURCE_OWNER_ANNOTATION,
  BOUND_ANNOTATION,
  SOURCE_UID_ANNOTATION,
  SOURCE_RESOURCE_VERSION_ANNOTATION,
  BINDING_UID_ANNOTATION,
];
/**
 * Condition on an APIServiceBinding while one of its claims selects an object name another binding's
 * copy holds in the same app-cluster namespace (on both bindings; absent when there is none). Not part
 * of `Ready`: the holder keeps syncing, the other binding's copy of that name is not made.
 */
export const CLAIM_CONFLICT_CONDITION = 'ClaimConflict';
