/**
 * The informers of one provider connection: APIServiceExports, APIServiceNamespaces and the
 * ClusterBinding in the consumer's cluster namespace on the provider, and the consumer ↔ provider
 * namespace mapping read from the APIServiceNamespaces.
 */
import type { Logger } from 'pino';
import { isAlreadyExists, type KubeClient } from '../core/client.js';
import { Informer, onAny } from '../core/informer.js';
import { isDeleting } from './metadata.js';
import { type APIServiceExport, type APIServiceNamespace, type ClusterBinding } from './types.js';
import { BINDING_RESOURCES } from '../../contract/index.js';

export interface ProviderInformersOptions {
  /** Client of the provider (control plane). */
  readonly provider: KubeClient;
  /** The consumer's cluster namespace on the provider. */
  readonly clusterNamespace: string;
  readonly resyncMs: number;
  readonly log: Logger;
  /**
   * Whether the konnector's own record allows acting in a consumer namespace (see
   * consumer-namespaces.ts). An APIServiceNamespace for any other name is ignored: it maps nothing.
   * @default every namespace
   */
  readonly admits?: (consumerNamespace: string) => boolean;
}

export class ProviderInformers {
  readonly exports: Informer<APIServiceExport>;
  readonly apiNamespaces: Informer<APIServiceNamespace>;
  readonly clusterBindings: Informer<ClusterBinding>;
  private readonly provider: KubeClient;
  private readonly clusterNamespace: string;
  private readonly log: Logger;
  private readonly nsListeners = new Set<(ns: string[]) => void>();
  private lastMapping = new Map<string, string>();
  private readonly admits: (consumerNamespace: string) => boolean;

  constructor(opts: ProviderInformersOptions) {
    this.provider = opts.provider;
    this.clusterNamespace = opts.clusterNamespace;
    this.log = opts.log;
    this.admits = opts.admits ?? (() => true);
    const iopts = { namespace: opts.clusterNamespace, resyncMs: opts.resyncMs, logger: opts.log };
    this.exports = new Informer<APIServiceExport>(opts.provider, BINDING_RESOURCES.apiServiceExports, iopts);
    this.apiNamespaces = new Informer<APIServiceNamespace>(opts.provider, BINDING_RESOURCES.apiServiceNamespaces, iopts);
    this.clusterBindings = new Informer<ClusterBinding>(opts.provider, BINDING_RESOURCES.clusterBindings, iopts);
    this.apiNamespaces.addIndex('providerNamespace', (o) => (o.status?.namespace ? [o.status.namespace] : []));
    this.apiNamespaces.addEventHandler(onAny(() => this.mappingMayHaveChanged()));
  }

  private get all(): Array<Informer<APIServiceExport> | Informer<APIServiceNamespace> | Informer<ClusterBinding>> {
    return [this.exports, this.apiNamespaces, this.clusterBindings];
  }

  start(): void {
    for (const i of this.all) i.start();
  }

  /** Resolves once all three informers synced; rejects with the first informer error (or the timeout) otherwise. */
  async waitForSync(timeoutMs: number): Promise<void> {
    try {
      await Promise.all(this.all.map((i) => i.waitForSync(timeoutMs)));
    } catch (e) {
      throw new Error(this.all.find((i) => i.lastError)?.lastError?.message ?? (e as Error).message, { cause: e });
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.all.map((i) => i.stop()));
  }

  /** Notifies the listeners of the consumer namespaces whose provider namespace changed. */
  mappingMayHaveChanged(): void {
    const now = new Map(this.boundNamespaces().map((b) => [b.consumer, b.provider]));
    const changed = [...new Set([...now.keys(), ...this.lastMapping.keys()])].filter((k) => now.get(k) !== this.lastMapping.get(k));
    this.lastMapping = now;
    if (changed.length) for (const l of this.nsListeners) l(changed);
  }

  providerNamespaceFor(consumerNamespace: string): string | undefined {
    if (!this.admits(consumerNamespace)) return undefined;
    const o = this.apiNamespaces.getByName(this.clusterNamespace, consumerNamespace);
    return o && !isDeleting(o) ? o.status?.namespace || undefined : undefined;
  }

  consumerNamespaceFor(providerNamespace: string): string | undefined {
    const o = this.apiNamespaces.findByIndex('providerNamespace', providerNamespace, (x) => !isDeleting(x) && this.admits(x.metadata.name!));
    return o?.metadata.name;
  }

  async ensureAPIServiceNamespace(consumerNamespace: string): Promise<string | undefined> {
    const existing = this.apiNamespaces.getByName(this.clusterNamespace, consumerNamespace);
    if (existing) return isDeleting(existing) ? undefined : existing.status?.namespace || undefined;
    try {
      await this.provider.create(BINDING_RESOURCES.apiServiceNamespaces, {
        metadata: { name: consumerNamespace, namespace: this.clusterNamespace },
        spec: {},
      });
      this.log.info({ namespace: consumerNamespace }, 'created APIServiceNamespace; waiting for the provider to assign a namespace');
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
    return undefined;
  }

  boundNamespaces(): Array<{ consumer: string; provider: string }> {
    return this.apiNamespaces
      .list()
      .filter((o) => o.status?.namespace && !isDeleting(o) && this.admits(o.metadata.name!))
      .map((o) => ({ consumer: o.metadata.name!, provider: o.status!.namespace! }));
  }

  onNamespacesChanged(cb: (consumerNamespaces: string[]) => void): () => void {
    this.nsListeners.add(cb);
    return () => this.nsListeners.delete(cb);
  }
}
