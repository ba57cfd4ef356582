/** Shared by the cluster components: one provider per cluster, and the two ordered ConfigGroups. */
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { definedKinds, type KubeObject, splitForDeploy } from './manifests.js';

/** One `k8s.Provider` per cluster, parented to the cluster's component. */
export function clusterProvider(cluster: string, conn: { kubeconfig: pulumi.Input<string>; context?: string }, parent: pulumi.Resource): k8s.Provider {
  return new k8s.Provider(
    cluster,
    {
      kubeconfig: pulumi.secret(conn.kubeconfig),
      ...(conn.context ? { context: conn.context } : {}),
      // The cluster's identity is its name: a rotated kubeconfig (new certificate, new port) updates the provider
      // instead of replacing every object in the cluster.
      clusterIdentifier: cluster,
      enableServerSideApply: true,
    },
    { parent },
  );
}

export interface DeployedObjects {
  /** CRDs and Namespaces (undefined when the cluster gets none). */
  readonly foundation?: k8s.yaml.v2.ConfigGroup;
  /** What `platform` returned (e.g. the Crossplane Helm chart). */
  readonly platform?: pulumi.Resource;
  /** Crossplane packages (pkg.crossplane.io), after the platform; awaited until Healthy unless skipAwait. */
  readonly packages?: k8s.yaml.v2.ConfigGroup;
  /** Everything else; depends on `foundation` and on `after`. */
  readonly objects?: k8s.yaml.v2.ConfigGroup;
}

/**
 * Image references the objects name before the images exist (`<registry>/<image>:<tag>`, from {@link RuntimeImages}
 * of stacks/images.ts) and the pinned references (`…@sha256:…`) they become once the images are pushed.
 */
export interface ImagePins {
  /** The references as the objects hold them. */
  readonly refs: readonly string[];
  /** Each of `refs` → its pinned reference; rejects when the images could not be built or pushed. */
  readonly pinned: pulumi.Output<Readonly<Record<string, string>>>;
  /** The resource that builds and pushes them (a group that names one depends on it). */
  readonly build: pulumi.Resource;
}

/** `o` with every string equal to a key of `pins` replaced by its value. */
export function pinImages<T>(o: T, pins: Readonly<Record<string, string>>): T {
  if (typeof o === 'string') return (Object.hasOwn(pins, o) ? pins[o] : o) as T;
  if (Array.isArray(o)) return o.map((v: unknown) => pinImages(v, pins)) as T;
  if (typeof o === 'object' && o !== null) return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, pinImages(v, pins)])) as T;
  return o;
}

/** Does `o` hold one of `refs` as a string value? */
const namesImage = (o: unknown, refs: readonly string[]): boolean =>
  typeof o === 'string'
    ? refs.includes(o)
    : Array.isArray(o)
      ? o.some((v) => namesImage(v, refs))
      : typeof o === 'object' && o !== null && Object.values(o).some((v) => namesImage(v, refs));

/** Crossplane's own API groups (its CRDs come with Crossplane, not with a package). */
const CROSSPLANE_CORE = /^(pkg|apiextensions|ops|protection)\.crossplane\.io\//;

/** `group/Kind` of an object, as {@link definedKinds} names them. */
const groupKind = (o: KubeObject) => `${o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : ''}/${o.kind}`;

/** A kind every API server serves: the core group, a group without a dot, or one under `k8s.io`. */
const isBuiltIn = (o: KubeObject) => {
  const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0]! : '';
  return !group.includes('.') || group === 'k8s.io' || group.endsWith('.k8s.io');
};

/** Crossplane package kinds that report a `Healthy` condition. */
const PACKAGE_KINDS = new Set(['Provider', 'Function', 'Configuration']);
/** The kinds of a provider's own configuration (Crossplane 2.x adds the cluster-scoped one of namespaced MRs). */
const PROVIDER_CONFIG_KINDS = new Set(['ProviderConfig', 'ClusterProviderConfig']);

/**
 * Deploys a cluster's objects in stages, each a ConfigGroup with `dependsOn` on the stages before it:
 *
 * 1. `<cluster>-foundation`: CRDs, then Namespaces (awaited, so CRDs are established before anything uses them);
 * 2. `platform(foundation)`: e.g. the Crossplane Helm chart (optional);
 * 3. `<cluster>-packages`: Crossplane Providers/Functions/Configurations, annotated `pulumi.com/waitFor: condition=Healthy`
 *    so the CRDs they install exist before their ProviderConfigs (unless `skipAwait` without `awaitPackages`); after
 *    the platform, and after the foundation only when there is a platform or a package object needs the foundation
 *    (a kind or a namespace of it): with Crossplane already running they install beside the foundation;
 * 4. `<cluster>-objects`: everything else, also after `after(foundation)` (e.g. the Secrets the workloads reference),
 *    and after the packages only when one of its objects uses a kind a package installs (or the packages are not
 *    awaited): the packages' install, the longest wait, overlaps the rest.
 *
 * Workload awaits of stage 4 are skipped when `skipAwait` is set. With `imagePins`, a group whose objects name one of
 * its references gets the pinned references once the images are pushed, and waits for that alone: the other groups
 * are applied while the images build.
 */
export function deployObjects(
  cluster: string,
  objs: readonly KubeObject[],
  opts: {
    parent: pulumi.Resource;
    provider: k8s.Provider;
    skipAwait: boolean;
    /** Await the Crossplane packages (`Healthy`) even with `skipAwait` (Crossplane runs, workloads may not). @default false */
    awaitPackages?: boolean;
    after?: (foundation?: pulumi.Resource) => pulumi.Resource[];
    platform?: (foundation?: pulumi.Resource) => pulumi.Resource | undefined;
    /** Image references to pin once the images are pushed (stacks/images.ts). @default none */
    imagePins?: ImagePins;
  },
): DeployedObjects {
  const split = splitForDeploy(cluster, objs);
  const ro = { parent: opts.parent, provider: opts.provider };
  const pins = opts.imagePins;
  // the objects of a group, pinned when they name an image to pin, and what the group then waits for
  const pinned = (list: readonly KubeObject[]): { objs: pulumi.Input<KubeObject[]>; waits: pulumi.Resource[] } =>
    pins && list.some((o) => namesImage(o, pins.refs))
      ? { objs: pins.pinned.apply((m) => list.map((o) => pinImages(o, m))), waits: [pins.build] }
      : { objs: [...list], waits: [] };
  const f = pinned(split.foundation);
  const foundation =
    split.foundation.length > 0
      ? new k8s.yaml.v2.ConfigGroup(`${cluster}-foundation`, { objs: f.objs }, f.waits.length > 0 ? { ...ro, dependsOn: f.waits } : ro)
      : undefined;
  const platform = opts.platform?.(foundation);
  const before = [...(foundation ? [foundation] : []), ...(platform ? [platform] : [])];
  const pkgObjs = split.objects.filter((o) => o.apiVersion.startsWith('pkg.crossplane.io/'));
  const skipPackageAwait = opts.skipAwait && !opts.awaitPackages;
  // With awaitPackages, the ProviderConfigs of the packages' own CRDs are single CustomResources after the packages:
  // a ConfigGroup must resolve every kind when it registers, which races the CRDs a just-Healthy Provider installs.
  // Both kinds: a ClusterProviderConfig in the objects group failed `pulumi up` ("failed to determine if the following
  // GVK is namespaced") when its CRD came a moment after the Provider was Healthy (CI, 2026-11-29).
  const late = opts.awaitPackages ? split.objects.filter((o) => PROVIDER_CONFIG_KINDS.has(o.kind) && !o.apiVersion.startsWith('pkg.crossplane.io/')) : [];
  const rest = split.objects.filter((o) => !o.apiVersion.startsWith('pkg.crossplane.io/') && !late.includes(o));
  const defined = definedKinds(split.foundation);
  // a package object uses a kind of the foundation (e.g. Crossplane's own CRDs) or one of its namespaces
  const foundationNamespaces = new Set(split.foundation.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name));
  const packagesNeedFoundation = pkgObjs.some((o) => defined.has(groupKind(o)) || foundationNamespaces.has(o.metadata.namespace ?? ''));
  const p = pinned(
    skipPackageAwait
      ? pkgObjs
      : pkgObjs.map((o) =>
          PACKAGE_KINDS.has(o.kind)
            ? {
                ...o,
                metadata: {
                  ...o.metadata,
                  annotations: { ...((o.metadata['annotations'] as Record<string, string>) ?? {}), 'pulumi.com/waitFor': 'condition=Healthy' },
                },
              }
            : o,
        ),
  );
  const packages =
    pkgObjs.length > 0
      ? new k8s.yaml.v2.ConfigGroup(
          `${cluster}-packages`,
          { objs: p.objs, skipAwait: skipPackageAwait },
          // without a platform nor a kind of the foundation to wait for, the packages install beside the foundation
          { ...ro, dependsOn: [...(platform || packagesNeedFoundation ? before : []), ...p.waits] },
        )
      : undefined;
  const providerConfigs = late.map(
    (o) =>
      new k8s.apiextensions.CustomResource(
        `${cluster}-${o.kind.toLowerCase()}-${o.metadata.name}`,
        { ...o },
        { ...ro, dependsOn: [...before, ...(packages ? [packages] : [])] },
      ),
  );
  const usesPackageKind = (o: KubeObject) => !isBuiltIn(o) && !defined.has(groupKind(o)) && !CROSSPLANE_CORE.test(o.apiVersion);
  const after = opts.after ? opts.after(foundation) : [];
  const o = pinned(rest);
  const objects =
    rest.length > 0
      ? new k8s.yaml.v2.ConfigGroup(
          `${cluster}-objects`,
          { objs: o.objs, skipAwait: opts.skipAwait },
          {
            ...ro,
            // only what uses a kind a package installs waits for the packages (awaited Healthy, they take the longest)
            dependsOn: [
              ...before,
              ...(packages && (skipPackageAwait || rest.some(usesPackageKind)) ? [packages, ...providerConfigs] : []),
              ...after,
              ...o.waits,
            ],
          },
        )
      : undefined;
  return {
    ...(foundation ? { foundation } : {}),
    ...(platform ? { platform } : {}),
    ...(packages ? { packages } : {}),
    ...(objects ? { objects } : {}),
  };
}
