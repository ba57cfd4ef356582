/**
 * Under `pulumi.runtime.setMocks`, with stand-in modules for @pulumi/eks and @pulumi/aws given through the program's
 * `importer` (the real packages are not installed): the wiring when they are present — the EKS cluster gets the mapped
 * options and the aws provider of its region and feeds the cluster's k8s provider. With `images.registry`, the
 * RuntimeImages component builds and pushes both images through a recording builder (the real build and push are
 * tested in test/integration/image/), the objects that name an image get the pushed reference pinned by digest and
 * depend on the component, and the groups that name none (the CRDs) are registered while the images still build.
 * Nothing is built or created for real here.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import * as pulumi from '@pulumi/pulumi';
import type * as StacksModule from '../../stacks/index.js';

const KUBECONFIG = (server: string) =>
  `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: t}}]\n`;

interface Registration {
  type: string;
  name: string;
  urn: string;
  provider: string;
  dependencies: string[];
  raw: Record<string, any>;
}
const registrations: Registration[] = [];
const imported: string[] = [];

function byName(name: string): Registration {
  const r = registrations.find((x) => x.name === name);
  if (!r) throw new Error(`no resource named ${name}; have ${registrations.map((x) => x.name).join(', ')}`);
  return r;
}

/** Like eks.Cluster: a component whose kubeconfig comes from a child custom resource on the aws provider. */
class FakeEksControlPlane extends pulumi.CustomResource {
  declare public readonly kubeconfigJson: pulumi.Output<string>;
  constructor(name: string, args: Record<string, unknown>, opts?: pulumi.CustomResourceOptions) {
    super('aws:eks/cluster:Cluster', name, { ...args, kubeconfigJson: undefined }, opts);
  }
}
class FakeEksCluster extends pulumi.ComponentResource {
  public readonly kubeconfigJson: pulumi.Output<string>;
  constructor(name: string, args: Record<string, unknown>, opts?: pulumi.ComponentResourceOptions) {
    super('eks:index:Cluster', name, {}, opts);
    this.kubeconfigJson = new FakeEksControlPlane(`${name}-eksCluster`, args, { parent: this }).kubeconfigJson;
  }
}
class FakeAwsProvider extends pulumi.ProviderResource {
  constructor(name: string, args: Record<string, unknown>, opts?: pulumi.ResourceOptions) {
    super('aws', name, args, opts);
  }
}
const DIGEST = { backend: `sha256:${'b'.repeat(64)}`, konnector: `sha256:${'c'.repeat(64)}` };
const imageCalls: string[] = [];
/** How many resources were registered when each image was pushed. */
const pushedAt: number[] = [];
/** Resolved when the control plane's CRD group is registered: the build below waits for it. */
let foundationRegistered: () => void;
const foundationSeen = new Promise<void>((r) => (foundationRegistered = r));
const imageBuilder: StacksModule.RuntimeImageBuilder = {
  build: async ({ output, base, platforms }) => {
    imageCalls.push(`build ${output.endsWith('/layout')} ${base ?? 'default'} ${platforms?.join(',') ?? 'all'}`);
    // the build ends only once a group that names no image is registered: were every group to wait for the images,
    // this would never happen (the guard turns that into a failure naming it)
    let guard: NodeJS.Timeout | undefined;
    await Promise.race([
      foundationSeen,
      new Promise((_, reject) => {
        guard = setTimeout(() => reject(new Error('cp-foundation was not registered while the images were building')), 30_000);
      }),
    ]).finally(() => clearTimeout(guard));
    return { backend: { digest: DIGEST.backend }, konnector: { digest: DIGEST.konnector } };
  },
  push: async (_layout, name, ref) => {
    imageCalls.push(`push ${name} ${ref}`);
    pushedAt.push(registrations.length);
    return { digest: DIGEST[name] };
  },
};
const modules: Record<string, unknown> = {
  '@pulumi/eks': { Cluster: FakeEksCluster },
  '@pulumi/aws': { Provider: FakeAwsProvider },
};

beforeAll(async () => {
  await pulumi.runtime.setMocks(
    {
      newResource: (args) => ({
        id: `${args.name}-id`,
        state: args.type === 'aws:eks/cluster:Cluster' ? { ...args.inputs, kubeconfigJson: KUBECONFIG('https://eks.example.com') } : { ...args.inputs },
      }),
      call: (args) => ({ ...args.inputs }),
    },
    'klutch-kit',
    'unit',
    false,
  );
  const monitor = (pulumi.runtime as unknown as { getMonitor(): any }).getMonitor();
  const original = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req: any, cb: any) => {
    const raw = (req.getObject()?.toJavaScript() ?? {}) as Record<string, unknown>;
    original(req, (err: unknown, resp: any) => {
      if (!err && req.getName() === 'cp-foundation') foundationRegistered();
      if (!err)
        registrations.push({
          type: req.getType(),
          name: req.getName(),
          urn: resp.getUrn(),
          provider: req.getProvider(),
          dependencies: req.getDependenciesList(),
          raw,
        });
      cb(err, resp);
    });
  };
  pulumi.runtime.setAllConfig(
    {
      'klutch-kit:controlPlane': JSON.stringify({ name: 'cp' }),
      'klutch-kit:appClusters': JSON.stringify([{ name: 'app-1', access: { kind: 'eks', region: 'eu-central-1', desiredCapacity: 3 } }]),
      'klutch-kit:backend': JSON.stringify({ url: 'https://bind.example.com' }),
      'klutch-kit:oidc': JSON.stringify({ issuerUrl: 'https://issuer.example.com' }),
      'klutch-kit:images': JSON.stringify({ registry: 'registry.example.com/klutch', base: 'local', platforms: ['linux/arm64'] }),
      'klutch-kit:skipAwait': 'true',
      'klutch-kit:manifests': 'runtime',
      'klutch-kit:kubeconfig-cp': KUBECONFIG('https://127.0.0.1:6441'),
      'klutch-kit:oidcClientSecret': 'a-client-secret-of-some-length',
      'klutch-kit:cookieSigningKey': Buffer.alloc(32, 7).toString('base64'),
    },
    ['klutch-kit:kubeconfig-cp', 'klutch-kit:oidcClientSecret', 'klutch-kit:cookieSigningKey'],
  );
  const stacks: typeof StacksModule = await import('../../stacks/index.js');
  const outputs = await stacks.klutchProgram({
    imageBuilder,
    importer: async (spec) => {
      imported.push(spec);
      return modules[spec];
    },
  });
  await new Promise((r) => pulumi.all([outputs.kubeconfigs, outputs.bindCommands]).apply(r));
  for (let i = 0; i < 100 && !['cp-objects', 'app-1-objects'].every((n) => registrations.some((r) => r.name === n)); i++)
    await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 200));
}, 120_000);

describe('EKS with @pulumi/eks present', () => {
  it('creates eks.Cluster with the mapped options through an aws provider for the region', () => {
    expect(imported).toEqual(expect.arrayContaining(['@pulumi/eks', '@pulumi/aws']));
    const aws = byName('app-1-aws');
    expect(aws.type).toBe('pulumi:providers:aws');
    expect(aws.raw['region']).toBe('eu-central-1');
    expect(byName('app-1').type).toBe('klutch-kit:stacks:AppCluster');
    expect(registrations.filter((r) => r.type === 'eks:index:Cluster').map((r) => r.name)).toEqual(['app-1']);
    const cluster = byName('app-1-eksCluster');
    expect(cluster.raw).toMatchObject({ name: 'app-1', instanceType: 't3.medium', desiredCapacity: 3, minSize: 3, maxSize: 3 });
    expect(cluster.provider.startsWith(`${aws.urn}::`)).toBe(true);
  });

  it("feeds the EKS kubeconfig into the cluster's k8s provider", () => {
    const provider = registrations.find((r) => r.type === 'pulumi:providers:kubernetes' && r.name === 'app-1')!;
    expect(provider.dependencies).toContain(byName('app-1-eksCluster').urn);
    expect(JSON.stringify(provider.raw['kubeconfig'])).toContain('eks.example.com');
  });
});

describe('runtime images (images.registry)', () => {
  it('builds once onto images.base for images.platforms and pushes both images under the registry with the klutch-kit version', () => {
    expect(imageCalls).toEqual([
      'build true local linux/arm64',
      expect.stringMatching(/^push backend registry\.example\.com\/klutch\/backend:\d+\.\d+\.\d+/),
      expect.stringMatching(/^push konnector registry\.example\.com\/klutch\/konnector:\d+\.\d+\.\d+/),
    ]);
    expect(byName('klutch-runtime-images').type).toBe('klutch-kit:stacks:RuntimeImages');
  });

  it('uses the pushed references, pinned by digest, in the manifests; only the groups naming an image wait for the push', () => {
    const images = (group: string) =>
      (byName(group).raw['objs'] as StacksModule.KubeObject[])
        .filter((o) => o.kind === 'Deployment')
        .flatMap((o) => ((o as any).spec.template.spec.containers as { image: string }[]).map((c) => c.image));
    expect(images('cp-objects')).toContainEqual(expect.stringMatching(new RegExp(`^registry\\.example\\.com/klutch/backend:[\\w.-]+@${DIGEST.backend}$`)));
    expect(images('app-1-objects')).toContainEqual(
      expect.stringMatching(new RegExp(`^registry\\.example\\.com/klutch/konnector:[\\w.-]+@${DIGEST.konnector}$`)),
    );
    expect(pushedAt).toHaveLength(2);
    const at = (name: string) => registrations.findIndex((r) => r.name === name);
    for (const group of ['cp-objects', 'app-1-objects']) for (const n of pushedAt) expect(n).toBeLessThanOrEqual(at(group));
    // the CRDs name no image: registered before the push
    for (const n of pushedAt) expect(at('cp-foundation')).toBeLessThan(n);
  });
});
