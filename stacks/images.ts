/**
 * Runtime images built by the stack (`images.registry`): {@link RuntimeImages}, a component that builds the backend and
 * konnector images with `klutch-kit image build` (runtime/image: from the packed package, without Docker) and pushes
 * them with the OCI distribution API. Builds are reproducible, so the digests are known before the push: a preview
 * builds (no push) and shows the exact references an `up` deploys; an `up` pushes, then the manifests use
 * `<registry>/<image>:<version>@<digest>`. The manifests are made before the build with the tag references
 * ({@link RuntimeImages.tags}); only the groups of objects that name one wait for the push ({@link RuntimeImages.pins}),
 * so everything else (CRDs, namespaces, Crossplane packages) is applied while the images build.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import { KLUTCH_KIT_VERSION } from '../constructs/runtime/index.js';
import { buildRuntimeImages as buildImageLayout } from '../runtime/image/build.js';
import { parsePlatform } from '../runtime/image/oci.js';
import { pushLayoutImage } from '../runtime/image/registry.js';
import type { ImagePins } from './_deploy.js';
import { CONFIG_NAMESPACE, type ImagePlatform, StackConfigError } from './config.js';

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

/** What the component does with the images; the default builds with runtime/image and pushes with the distribution API. */
export interface RuntimeImageBuilder {
  /** Builds both images into the OCI layout `output`; returns each image's index digest. */
  build(opts: {
    readonly output: string;
    readonly base?: string;
    /** @default both, linux/amd64 and linux/arm64 */
    readonly platforms?: readonly ImagePlatform[];
    readonly log: (line: string) => void;
  }): Promise<Record<RuntimeImage, { readonly digest: string }>>;
  /** Pushes image `name` of the layout as `ref` (`<registry>/<repository>:<tag>`); returns the index digest. */
  push(layout: string, name: RuntimeImage, ref: string, log: (line: string) => void): Promise<{ readonly digest: string }>;
}

export const defaultImageBuilder: RuntimeImageBuilder = {
  build: async ({ output, base, platforms, log }) =>
    (await buildImageLayout({ output, ...(base ? { base } : {}), ...(platforms ? { platforms: platforms.map(parsePlatform) } : {}), log })).images,
  push: (layout, name, ref, log) => pushLayoutImage(layout, name, ref, { log }),
};

export interface RuntimeImagesArgs {
  /** `images.registry`: registry and repository prefix, e.g. `ghcr.io/my-org`. */
  readonly registry: string;
  /** @default KLUTCH_KIT_VERSION */
  readonly tag?: string;
  /** `images.base`: `local` or `<registry>/<repository>@sha256:<hex>`. @default the distroless Node.js 22 of runtime/image/build.ts */
  readonly base?: string;
  /** `images.platforms`: e.g. only the platform of a local cluster. @default both, linux/amd64 and linux/arm64 */
  readonly platforms?: readonly ImagePlatform[];
  /** @default defaultImageBuilder */
  readonly builder?: RuntimeImageBuilder;
}

/**
 * Builds and (outside a preview) pushes the backend and konnector images. `refs` resolves to the pinned references
 * (`<registry>/<image>:<tag>@<digest>`) once the images are pushed; the outputs `backend` and `konnector` hold the same.
 */
export class RuntimeImages extends pulumi.ComponentResource {
  public static readonly TYPE = 'klutch-kit:stacks:RuntimeImages';
  /** Image → pinned reference, after the push (in a preview: after the build). */
  public readonly refs: Promise<Record<RuntimeImage, string>>;
  /** Image → `<registry>/<image>:<tag>`, known at once: what the manifests name until {@link pins} pins them. */
  public readonly tags: Record<RuntimeImage, string>;
  public readonly backend: pulumi.Output<string>;
  public readonly konnector: pulumi.Output<string>;

  constructor(name: string, args: RuntimeImagesArgs, opts?: pulumi.ComponentResourceOptions) {
    super(RuntimeImages.TYPE, name, {}, opts);
    const tags = (this.tags = runtimeImageRefs(args.registry, args.tag));
    const builder = args.builder ?? defaultImageBuilder;
    const log = (line: string) => void pulumi.log.info(line, this);
    const preview = pulumi.runtime.isDryRun();
    this.refs = (async () => {
      const dir = mkdtempSync(join(tmpdir(), 'klutch-stack-images-'));
      try {
        const output = join(dir, 'layout');
        const built = await builder.build({ output, ...(args.base ? { base: args.base } : {}), ...(args.platforms ? { platforms: args.platforms } : {}), log });
        const refs = {} as Record<RuntimeImage, string>;
        for (const image of RUNTIME_IMAGES) {
          let digest = built[image].digest;
          if (!preview) {
            const pushed = await builder.push(output, image, tags[image], log);
            if (pushed.digest !== digest) throw new Error(`RuntimeImages ${name}: pushed ${image} as ${pushed.digest}, built ${digest}`);
            digest = pushed.digest;
          }
          refs[image] = `${tags[image]}@${digest}`;
        }
        return refs;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    })();
    // A failure is reported once, by `refs` (the program awaits it); the outputs then stay empty instead of raising
    // a second, unhandled rejection.
    const settled = this.refs.then(
      (r) => r,
      () => undefined,
    );
    this.backend = pulumi.output(settled.then((r) => r?.backend ?? ''));
    this.konnector = pulumi.output(settled.then((r) => r?.konnector ?? ''));
    this.registerOutputs({ backend: this.backend, konnector: this.konnector });
  }

  /**
   * The tag references and the pinned ones they become (for the cluster components' `imagePins`): a group of objects
   * naming a tag waits for the push; a failed build fails that group (and `refs`, which the program awaits).
   */
  public pins(): ImagePins {
    return {
      refs: RUNTIME_IMAGES.map((i) => this.tags[i]),
      build: this,
      pinned: pulumi.output(this.refs.then((r) => Object.fromEntries(RUNTIME_IMAGES.map((i) => [this.tags[i], r[i]])))),
    };
  }
}

export interface BuiltImages {
  /** The references the manifests use (pinned by digest). */
  readonly refs: Record<RuntimeImage, string>;
  readonly component: RuntimeImages;
}

/**
 * Builds and pushes both runtime images (images.registry); resolves when they are in the registry, so a program that
 * awaits it registers no cluster object before the images exist. Faster: a {@link RuntimeImages} whose `tags` the
 * manifests name and whose `pins()` go to the Topology (`imagePins`), so only the objects naming an image wait for it.
 */
export async function buildRuntimeImages(
  registry: string,
  options: { base?: string; platforms?: readonly ImagePlatform[]; builder?: RuntimeImageBuilder } = {},
): Promise<BuiltImages> {
  const images = new RuntimeImages('klutch-runtime-images', {
    registry,
    ...(options.base ? { base: options.base } : {}),
    ...(options.platforms ? { platforms: options.platforms } : {}),
    ...(options.builder ? { builder: options.builder } : {}),
  });
  return { refs: await images.refs, component: images };
}
