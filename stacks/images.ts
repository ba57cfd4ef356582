/**
 * Runtime images built by the stack (`images.registry`): runtime/Dockerfile.konnector and runtime/Dockerfile.backend
 * (context: the repository root) built and pushed with @pulumi/docker-build, which is not a dependency of
 * klutch-kit; it is loaded with a dynamic `import()`, and a missing package fails with the install instruction.
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as pulumi from '@pulumi/pulumi';
import { KLUTCH_KIT_VERSION } from '../constructs/runtime/index.js';
import { CONFIG_NAMESPACE, StackConfigError } from './config.js';
import { type Importer, loadOptional } from './optional.js';

/** The built images. */
export const RUNTIME_IMAGES = ['backend', 'konnector'] as const;
export type RuntimeImage = (typeof RUNTIME_IMAGES)[number];

/** `<registry>/<image>:<tag>` of each runtime image. Pure; rejects a bad registry with the key and the value. */
export function runtimeImageRefs(registry: string, tag: string = KLUTCH_KIT_VERSION): Record<RuntimeImage, string> {
  const r = registry.replace(/\/+$/, '');
  if (r === '' || /\s/.test(r) || /^[a-z]+:\/\//i.test(r) || /[:@]/.test(r.split('/').slice(1).join('/'))) {
    throw new StackConfigError(
      `${CONFIG_NAMESPACE}:images.registry: expected a registry and repository prefix such as "ghcr.io/my-org" (no scheme, tag or digest), got ${JSON.stringify(registry)}`,
    );
  }
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(tag) || tag === 'latest') {
    throw new StackConfigError(`${CONFIG_NAMESPACE}:images.registry: image tag ${JSON.stringify(tag)} is not a pinned tag`);
  }
  return { backend: `${r}/backend:${tag}`, konnector: `${r}/konnector:${tag}` };
}

/** The repository root (build context). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function dockerBuildMissingMessage(registry: string): string {
  return (
    `${CONFIG_NAMESPACE}:images.registry is "${registry}", but @pulumi/docker-build is not installed; run \`npm install @pulumi/docker-build\` ` +
    `(building also needs a Docker daemon with buildx, logged in to the registry), or build runtime/Dockerfile.backend and runtime/Dockerfile.konnector yourself ` +
    `(docker build -f runtime/Dockerfile.backend .) and set images.backend / images.konnector to the pushed references`
  );
}

interface DockerBuildModule {
  Image: new (name: string, args: Record<string, unknown>, opts?: pulumi.CustomResourceOptions) => pulumi.CustomResource;
}

export interface BuiltImages {
  /** The references the manifests use (the pushed tags). */
  readonly refs: Record<RuntimeImage, string>;
  /** The docker-build Image resources; the cluster objects depend on them. */
  readonly builds: pulumi.Resource[];
}

/** Builds and pushes both runtime images. */
export async function buildRuntimeImages(registry: string, importer?: Importer): Promise<BuiltImages> {
  const refs = runtimeImageRefs(registry);
  const db = await loadOptional<DockerBuildModule>('@pulumi/docker-build', dockerBuildMissingMessage(registry), importer);
  const builds = RUNTIME_IMAGES.map(
    (image) =>
      new db.Image(`klutch-${image}`, {
        context: { location: REPO_ROOT },
        dockerfile: { location: path.join(REPO_ROOT, 'runtime', `Dockerfile.${image}`) },
        tags: [refs[image]],
        push: true,
      }),
  );
  return { refs, builds };
}
