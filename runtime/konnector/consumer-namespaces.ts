/**
 * Which app-cluster namespaces one provider connection may act in: the konnector's own record, kept
 * from what the app cluster holds, never from what the provider writes.
 *
 * An APIServiceNamespace on the provider only maps a consumer namespace to a provider namespace; the
 * provider (or anyone holding the consumer kubeconfig) can create one for any name, `kube-system`
 * included. So a consumer namespace counts as bound only while the app cluster has at least one object
 * of a bound resource in it (the app developer's claim is the reason the konnector created the
 * APIServiceNamespace in the first place), and for `lingerMs` after its last one went, so that the
 * provider's clean-up of claimed objects (e.g. the credentials Secret of a deleted ServiceBinding) still
 * reaches the app cluster. Namespaces of the cluster itself (`kube-system`, `kube-public`,
 * `kube-node-lease`) and the konnector's own namespaces (where the provider kubeconfig Secrets live) are
 * never bound, whatever they hold.
 *
 * The record lives in memory: after a restart it is rebuilt from the app cluster's objects by the export
 * syncers' initial lists; only the linger of a namespace that emptied shortly before is lost.
 */

import { SYSTEM_NAMESPACES } from '../../contract/allowed-namespaces.js';

/** Namespaces a konnector never syncs into or out of (contract/allowed-namespaces.ts). */
export { SYSTEM_NAMESPACES };

/** @default linger of an emptied namespace: 10 minutes. */
export const DEFAULT_NAMESPACE_LINGER_MS = 10 * 60_000;

export interface ConsumerNamespacesOptions {
  /** Namespaces never bound besides {@link SYSTEM_NAMESPACES} (the konnector's own). */
  readonly reserved?: () => Iterable<string>;
  /**
   * The konnector's namespace allow-list (`--allow-namespace`): a namespace outside it is never bound,
   * whatever it holds. @default every namespace
   */
  readonly allowed?: (namespace: string) => boolean;
  /** How long a namespace stays bound after its last bound object went. @default 10 minutes */
  readonly lingerMs?: number;
  /** Called with the namespaces whose bound state changed. */
  readonly changed: (namespaces: string[]) => void;
  /** Timer source (tests). @default setTimeout / clearTimeout */
  readonly setTimer?: (fn: () => void, ms: number) => { cancel(): void };
}

export class ConsumerNamespaces {
  /** namespace → keys of the bound objects (`<syncer>/<name>`) present in it. */
  private readonly objects = new Map<string, Set<string>>();
  private readonly lingering = new Map<string, { cancel(): void }>();
  private readonly lingerMs: number;
  private readonly setTimer: (fn: () => void, ms: number) => { cancel(): void };

  constructor(private readonly opts: ConsumerNamespacesOptions) {
    this.lingerMs = opts.lingerMs ?? DEFAULT_NAMESPACE_LINGER_MS;
    this.setTimer =
      opts.setTimer ??
      ((fn, ms) => {
        const t = setTimeout(fn, ms);
        t.unref();
        return { cancel: () => clearTimeout(t) };
      });
  }

  /** Whether the namespace is reserved: never bound, whatever it holds. */
  isReserved(namespace: string): boolean {
    if (SYSTEM_NAMESPACES.includes(namespace)) return true;
    for (const r of this.opts.reserved?.() ?? []) if (r === namespace) return true;
    return false;
  }

  /** Whether the connection may act in this app-cluster namespace. */
  isBound(namespace: string): boolean {
    if (this.isReserved(namespace) || this.opts.allowed?.(namespace) === false) return false;
    return (this.objects.get(namespace)?.size ?? 0) > 0 || this.lingering.has(namespace);
  }

  /** A bound object `key` of syncer `source` is present in (or gone from) `namespace`. */
  note(source: string, namespace: string, name: string, present: boolean): void {
    const key = `${source}/${name}`;
    const wasBound = this.isBound(namespace);
    let set = this.objects.get(namespace);
    if (present) {
      if (!set) this.objects.set(namespace, (set = new Set()));
      set.add(key);
      this.lingering.get(namespace)?.cancel();
      this.lingering.delete(namespace);
    } else if (set?.delete(key) && set.size === 0) {
      this.objects.delete(namespace);
      if (this.lingerMs > 0 && !this.lingering.has(namespace)) {
        this.lingering.set(
          namespace,
          this.setTimer(() => {
            this.lingering.delete(namespace);
            if (!this.isBound(namespace)) this.opts.changed([namespace]);
          }, this.lingerMs),
        );
      }
    }
    if (wasBound !== this.isBound(namespace)) this.opts.changed([namespace]);
  }

  /** Cancels the linger timers (the connection stops). */
  stop(): void {
    for (const t of this.lingering.values()) t.cancel();
    this.lingering.clear();
  }
}
