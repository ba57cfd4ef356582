/**
 * Parses and checks fully qualified OCI package references of Crossplane packages (internal).
 */
import { fail } from './_util.js';

/**
 * A fully qualified OCI package reference: `<registry host>/<path>:<tag>` or `...@sha256:<digest>`.
 * The registry host must contain a dot or a port (or be `localhost`), because Crossplane 2.x has
 * no default registry.
 */
const PACKAGE_REF =
  /^((?:[a-zA-Z0-9-]+\.)+[a-zA-Z0-9-]+(?::[0-9]+)?|localhost(?::[0-9]+)?|[a-zA-Z0-9-]+:[0-9]+)\/([a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*)(?::([\w][\w.-]{0,127}))?(?:@(sha256:[a-f0-9]{64}))?$/;

/** A Crossplane package reference split into its parts (`parsePackageRef`). */
export interface ParsedPackage {
  readonly registry: string;
  readonly repository: string;
  readonly tag?: string;
  readonly digest?: string;
  /** Last path segment, e.g. `function-patch-and-transform`. */
  readonly basename: string;
}

export function parsePackageRef(prop: string, ref: unknown): ParsedPackage {
  if (typeof ref !== 'string') fail(prop, ref, 'must be a package reference string such as "xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:v1.2.1"');
  const m = PACKAGE_REF.exec(ref);
  if (!m) {
    const first = ref.split('/')[0];
    const hint =
      ref.includes('/') && !/[.:]/.test(first) && first !== 'localhost'
        ? `is not fully qualified: "${first}" is not a registry host; prefix it with a registry such as "xpkg.crossplane.io/"`
        : 'is not a fully qualified package reference "<registry>/<repository>:<tag>" (e.g. "xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:v1.2.1")';
    fail(prop, ref, hint);
  }
  if (!m[3] && !m[4]) fail(prop, ref, 'has neither a tag nor a digest; pin a version (":v1.2.3" or "@sha256:...")');
  const repository = m[2];
  return { registry: m[1], repository, tag: m[3], digest: m[4], basename: repository.split('/').pop()! };
}
