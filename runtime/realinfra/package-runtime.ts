/**
 * The harness's share of Crossplane's `External` package runtime (crossplane.ts plays it): when a package revision's
 * runtime may start, and the loop that serves the revisions whenever one of them changes.
 *
 * Crossplane's own Deployment runtime starts a provider once its revision has installed the package's objects (the
 * `RevisionHealthy` condition on 2.x, `Healthy` on 1.20), not once the managed resources' CRDs exist: on 2.x those
 * come later, from the ManagedResourceDefinitions the package manager activates, and a provider with the `SafeStart`
 * capability (provider-kubernetes) starts their controllers when they appear. The harness does the same, and also
 * waits until the CRDs the revision installed itself (its ProviderConfig kinds) are served, so that the provider's
 * controllers for them find their kinds at once.
 */
interface Condition {
  readonly type: string;
  readonly status: string;
}

/** What the harness reads of a package revision. */
export interface PackageRevision {
  readonly spec?: Record<string, unknown>;
  readonly status?: { readonly conditions?: readonly Condition[]; readonly [field: string]: unknown };
}

interface ObjectRef {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly name?: string;
}

/** The condition a revision sets once it installed its objects: `RevisionHealthy` on Crossplane 2.x, `Healthy` on 1.20. */
export function installedCondition(v2: boolean): 'RevisionHealthy' | 'Healthy' {
  return v2 ? 'RevisionHealthy' : 'Healthy';
}

/** Whether the revision is the active one and has installed its objects (its runtime may start). */
export function revisionInstalled(rev: PackageRevision, v2: boolean): boolean {
  if (rev.spec?.['desiredState'] !== 'Active') return false;
  const type = installedCondition(v2);
  return rev.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
}

/** The names of the CustomResourceDefinitions the revision installed (status.objectRefs; not its ManagedResourceDefinitions). */
export function installedCrds(rev: PackageRevision): string[] {
  const refs = rev.status?.['objectRefs'];
  return (Array.isArray(refs) ? (refs as ObjectRef[]) : [])
    .filter((r) => r.kind === 'CustomResourceDefinition' && r.apiVersion?.startsWith('apiextensions.k8s.io/') && typeof r.name === 'string')
    .map((r) => r.name!);
}

/**
 * Runs `serve` whenever it is kicked, one run at a time: a kick during a run asks for one more run after it (however
 * many kicks came), so a change that arrives while the revisions are being served is never missed, and never served
 * twice at once. A failed run goes to `onError` and is cleared by the next successful one.
 */
export class ServeLoop {
  private running = false;
  private again = false;
  private stopped = false;
  private current: Promise<void> = Promise.resolve();

  constructor(
    private readonly serve: () => Promise<void>,
    private readonly onError: (e: unknown) => void,
    private readonly onSuccess: () => void = () => undefined,
  ) {}

  /** Serves now, or once more after the run in progress. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.current = this.loop();
  }

  /** No run after this; resolves when the run in progress (if any) ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.current;
  }

  private async loop(): Promise<void> {
    try {
      do {
        this.again = false;
        try {
          await this.serve();
          this.onSuccess();
        } catch (e) {
          this.onError(e);
        }
      } while (this.again && !this.stopped);
    } finally {
      this.running = false;
    }
  }
}
