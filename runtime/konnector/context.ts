/** What the per-export and per-claim syncers need from their provider connection. */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { KubeClient } from '../core/client.js';
import type { MetadataKeyPolicy } from '../../contract/metadata-keys.js';
import type { DeletionTimeoutSink } from './deletion-timeouts.js';
import type { ClaimConflictSink } from './claim-conflicts.js';
import type { ClaimRefusalSink } from './claim-refusals.js';
import type { SecretTypePolicy } from '../../contract/secret-types.js';
import type { KonnectorMetrics } from './metrics.js';
import type { ResourceGate } from './resource-gate.js';
import type { BindingLimitSink } from './binding-limits.js';
import type { WriteBudgetOptions } from './write-budget.js';

export interface SyncContext {
  /** The consumer's cluster namespace on the provider (current-context namespace of the kubeconfig). */
  readonly clusterNamespace: string;
  readonly provider: KubeClient;
  /** The app cluster (where bound CRDs and the user's objects live). */
  readonly app: KubeClient;
  readonly log: Logger;
  readonly registry: Registry;
  readonly metrics: KonnectorMetrics;
  readonly workers: number;
  readonly resyncMs: number;
  /**
   * Most objects the provider may make the konnector create in one app-cluster namespace per claim or
   * export (copies of claimed objects, adopted objects); past it the konnector creates no more there
   * and says so in its log and metrics.
   */
  readonly maxProviderObjectsPerNamespace: number;
  /** The label and annotation keys that cross between the clusters (contract/metadata-keys.ts). */
  readonly metadataKeys: MetadataKeyPolicy;
  /** How long a provider may keep an upstream copy terminating before its app-cluster object is released (export-spec.ts). */
  readonly upstreamDeletionTimeoutMs: number;
  /** Where released app-cluster objects are recorded for their binding's condition (deletion-timeouts.ts). */
  readonly deletionTimeouts: DeletionTimeoutSink;
  /** What the app cluster's admin lets a provider export or claim (resource-gate.ts). @default ResourceGate.DEFAULT */
  readonly resourceGate?: ResourceGate;
  /**
   * Konnector-wide record of claim conflicts (two bindings, of this provider or another, whose claims
   * select one name in one app-cluster namespace): shown on both bindings (claim-conflicts.ts).
   */
  readonly claimConflicts: ClaimConflictSink;
  /** Which Secret types a claimed Secret may have to be copied, either way (contract/secret-types.ts). @default SecretTypePolicy.DEFAULT */
  readonly secretTypes?: SecretTypePolicy;
  /**
   * Konnector-wide record of claimed objects refused for their Secret type, shown on the binding
   * (claim-refusals.ts). Without it a refusal is only logged and counted.
   */
  readonly claimRefusals?: ClaimRefusalSink;
  /**
   * Konnector-wide record of the limits a binding hit (namespace allow-list, cache cap, write budget),
   * shown on the binding (binding-limits.ts). Without it a limit is only logged.
   */
  readonly limits?: BindingLimitSink;
  /**
   * Most provider objects the konnector caches for one binding (its export's and its claims' provider
   * informers together); past it they freeze (object-cap.ts). @default DEFAULT_MAX_CACHED_OBJECTS_PER_BINDING
   */
  readonly maxCachedObjectsPerBinding?: number;
  /** Writes of one object per window before the konnector backs off (write-budget.ts). @default DEFAULT_WRITE_BUDGET */
  readonly writeBudget?: WriteBudgetOptions;
  /**
   * Whether an app-cluster namespace is on the konnector's namespace allow-list (`--allow-namespace`):
   * outside it nothing is synced and the konnector has no Secret rights. @default every namespace
   */
  isNamespaceAllowed?(consumerNamespace: string): boolean;
  /** Provider namespace bound to a consumer namespace (APIServiceNamespace status), if assigned. */
  providerNamespaceFor(consumerNamespace: string): string | undefined;
  /** Consumer namespace of a provider namespace, if it is one of this consumer's. */
  consumerNamespaceFor(providerNamespace: string): string | undefined;
  /**
   * Ensures the APIServiceNamespace for a consumer namespace exists on the provider; returns the
   * provider namespace once the backend assigned it, else undefined.
   */
  ensureAPIServiceNamespace(consumerNamespace: string): Promise<string | undefined>;
  /** Pairs (consumer namespace, provider namespace) of all assigned APIServiceNamespaces. */
  boundNamespaces(): Array<{ consumer: string; provider: string }>;
  /**
   * Records that an object of a bound resource is present in (or gone from) an app-cluster namespace:
   * the konnector's own record of which namespaces it bound (see consumer-namespaces.ts).
   */
  noteConsumerObject(source: string, namespace: string, name: string, present: boolean): void;
  /** Whether an app-cluster namespace is never synced (kube-system, the konnector's own, …). */
  isReservedNamespace(consumerNamespace: string): boolean;
  /** Subscribe to changes of the namespace mapping; returns an unsubscribe function. */
  onNamespacesChanged(cb: (consumerNamespaces: string[]) => void): () => void;
}
