/**
 * What the synth renders for one cluster — its files in apply order and its Configuration package
 * sources — as plain records: what `synth.ts` produces and the GitOps writers (`argocd.ts`, Flux in
 * `synth.ts`) read, in a file of its own so that neither imports the other for it.
 */

/** One rendered object and the file it goes to (relative to the cluster folder). */
export interface RenderedFile {
  readonly path: string;
  readonly object: Record<string, any>;
  /** Construct path, or `(synth)` for objects the synth adds (missing Namespaces). */
  readonly source: string;
}

/** A Crossplane Configuration package source (see ConfigurationPackageSource). */
export interface RenderedPackage {
  /** Package name (`crossplane.yaml` metadata.name). */
  readonly name: string;
  /** The `crossplane.yaml` object. */
  readonly meta: Record<string, any>;
  /** The packaged objects (XRDs, then Compositions), with their file names. */
  readonly files: readonly RenderedFile[];
}

export interface RenderedCluster {
  readonly name: string;
  readonly role: string;
  /** In apply order. */
  readonly files: readonly RenderedFile[];
  /** Configuration package sources of this cluster (written to `<cluster>.packages/<name>/`). @default - none */
  readonly packages?: readonly RenderedPackage[];
}
