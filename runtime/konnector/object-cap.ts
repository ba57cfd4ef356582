/**
 * A cap on the provider objects the konnector caches for one binding: its export's provider informer and
 * its claims' provider informers share one {@link ObjectCap}. A provider (or anyone holding the consumer
 * kubeconfig) that floods the namespaces a binding watches would otherwise make the konnector's memory
 * grow without bound and starve every other binding's sync. Past the cap the binding's informers
 * **freeze**: the objects they hold stay cached and in sync (updates and deletes still arrive), no new
 * one is admitted (it is neither cached nor synced), and the binding shows `CacheLimitReached` with a
 * `Warning` Event and the metric `klutch_konnector_limited_total{limit="CacheLimitReached"}` counting
 * every refused object (binding-limits.ts). Nothing is dropped silently. Once the binding holds fewer
 * objects than the cap (the provider deleted some), the condition goes; an object refused meanwhile
 * enters with its next change or the informer's next relist.
 */
import type { KubeObject } from '../core/client.js';
import type { InformerAdmission } from '../core/informer.js';

/** @default of `--max-cached-objects-per-binding`. */
export const DEFAULT_MAX_CACHED_OBJECTS_PER_BINDING = 20_000;

export interface ObjectCapEvents {
  /** The cap was reached: `first` is the first object refused (`<source> <namespace>/<name>`). */
  frozen(first: string): void;
  /** Below the cap again. */
  thawed(): void;
  /** One more object refused. */
  refused(): void;
}

export class ObjectCap {
  /** `<source>\0<namespace>/<name>` of every object held. */
  private readonly held = new Set<string>();
  private isFrozen = false;

  constructor(
    readonly max: number,
    private readonly events: ObjectCapEvents,
  ) {
    if (!Number.isInteger(max) || max < 1) throw new Error(`ObjectCap: max ${max} must be an integer >= 1`);
  }

  /** How many objects the binding's informers hold. */
  get size(): number {
    return this.held.size;
  }

  get frozen(): boolean {
    return this.isFrozen;
  }

  /** The admission of one informer (`source`: what it watches, e.g. `export mangodbs.mangodb.com`, `claim secrets`). */
  admission(source: string): InformerAdmission<KubeObject> {
    const key = (o: KubeObject) => `${source}\0${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    return {
      admit: (o) => {
        const k = key(o);
        if (this.held.has(k)) return true;
        if (this.held.size < this.max) {
          this.held.add(k);
          return true;
        }
        if (!this.isFrozen) {
          this.isFrozen = true;
          this.events.frozen(`${source} ${o.metadata.namespace ? o.metadata.namespace + '/' : ''}${o.metadata.name}`);
        }
        this.events.refused();
        return false;
      },
      forget: (o) => {
        if (!this.held.delete(key(o))) return;
        if (this.isFrozen && this.held.size < this.max) {
          this.isFrozen = false;
          this.events.thawed();
        }
      },
    };
  }
}
