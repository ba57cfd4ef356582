/**
 * Which provider-anynines a ControlPlaneCluster installs: the API style of its catalogue picks the flavour
 * (`ApiStyle.anyninesProvider`: claims → the cluster-scoped release, namespaced XRs → the namespaced provider of
 * Klutch's Crossplane v2 branch); a9s data services composing for the other flavour fail the synth naming both.
 */
import { App } from 'cdk8s';
import { AnyninesProviderFlavour, AnyninesServiceType } from '../../constructs/crossplane/index.js';
import { A9sBackend, ApiStyle } from '../../constructs/dataservice/index.js';
import { keyvalue } from '../../constructs/catalogue/a9s-instances.js';
import {
  CatalogueInstall,
  ControlPlaneCluster,
  type ControlPlaneClusterProps,
  PROVIDER_ANYNINES_NAMESPACED_PACKAGE,
  PROVIDER_ANYNINES_PACKAGE,
  renderTopology,
} from '../../constructs/topology/index.js';

type Obj = { apiVersion?: string; kind?: string; metadata?: { name?: string }; spec?: Record<string, unknown> };
const BASE = {
  host: 'bind.example.com',
  dex: { connectors: [{ type: 'mockCallback', id: 'mock', name: 'Mock', config: {} }] },
  anynines: { baseDomain: 'a9s.example.com' },
};

function controlPlane(props: Partial<ControlPlaneClusterProps>): { cp: ControlPlaneCluster; objs: Obj[]; deps: string } {
  const app = new App({ outdir: '/nonexistent' });
  const cp = new ControlPlaneCluster(app, 'CP', { ...BASE, ...props } as ControlPlaneClusterProps);
  const [cluster] = renderTopology(app);
  return {
    cp,
    objs: cluster!.files.map((f) => f.object as Obj),
    deps: JSON.stringify((cluster!.packages ?? []).map((p) => (p.meta.spec as { dependsOn?: unknown }).dependsOn)),
  };
}
const providerPackage = (objs: Obj[]) => objs.find((o) => o.kind === 'Provider' && o.metadata!.name === 'provider-anynines')!.spec!['package'];

describe('ControlPlaneCluster: the provider-anynines flavour follows the API style', () => {
  it('claims (the default) install the cluster-scoped release; namespaced XRs the namespaced provider of Klutch’s v2 branch', () => {
    const claims = controlPlane({});
    expect(claims.cp.anyninesProvider).toBe(AnyninesProviderFlavour.CLUSTER_SCOPED);
    expect(providerPackage(claims.objs)).toBe(PROVIDER_ANYNINES_PACKAGE);
    const ns = controlPlane({ catalogue: { apiStyle: ApiStyle.NAMESPACED_XR } });
    expect(ns.cp.anyninesProvider).toBe(AnyninesProviderFlavour.NAMESPACED);
    expect(ns.cp.anyninesProvider).toBe(ns.cp.catalogue!.apiStyle.anyninesProvider);
    expect(providerPackage(ns.objs)).toBe(PROVIDER_ANYNINES_NAMESPACED_PACKAGE);
    // the namespaced a9s Compositions compose provider-anynines' resources (namespaced by the XR), no claim labels
    const comp = ns.objs.find((o) => o.kind === 'Composition' && o.metadata!.name === 'a9s-postgresql') as unknown as {
      spec: { pipeline: Array<{ input: { resources: Array<{ base: Obj; patches: Array<{ toFieldPath?: string }> }> } }> };
    };
    const [res] = comp.spec.pipeline[0]!.input.resources;
    expect(res!.base).toMatchObject({ apiVersion: 'dataservices.anynines.com/v1', kind: 'ServiceInstance' });
    expect(res!.base.metadata).toBeUndefined();
    expect(res!.patches.filter((p) => /claim-name|claim-namespace|metadata\.namespace/.test(p.toFieldPath ?? ''))).toEqual([]);
  });

  it('a catalogue package depends on the release by version; the v2 branch’s tag (no version) is installed by the Provider object only', () => {
    const install = CatalogueInstall.configurationPackage({ package: 'xpkg.example.com/klutch/catalogue:v0.1.0' });
    const claims = controlPlane({ catalogueInstall: install });
    expect(claims.deps).toContain('"provider":"public.ecr.aws/w5n9a2g2/klutch/provider-anynines","version":">=v1.5.0"');
    const ns = controlPlane({ catalogueInstall: install, catalogue: { apiStyle: ApiStyle.NAMESPACED_XR } });
    expect(ns.deps).toContain('function-patch-and-transform');
    expect(ns.deps).not.toContain('provider-anynines');
    expect(providerPackage(ns.objs)).toBe(PROVIDER_ANYNINES_NAMESPACED_PACKAGE);
  });

  it('namespaced a9s with the cluster-scoped provider fails the synth, naming the data service, the style and the provider package', () => {
    const both = [
      /DataService CP\/Catalogue\/keyvalue: its a9s backend "a9s-keyvalue" \(API style NamespacedXR\) composes the managed resources of the namespaced provider-anynines/,
      /but control plane "control-plane" installs the cluster-scoped provider-anynines \(public\.ecr\.aws\/w5n9a2g2\/klutch\/provider-anynines:v1\.5\.0\)/,
      /namespaced composite resources compose only namespaced resources/,
    ];
    const given = () =>
      controlPlane({ catalogue: { apiStyle: ApiStyle.NAMESPACED_XR, services: ['keyvalue'] }, packages: { providerAnynines: PROVIDER_ANYNINES_PACKAGE } });
    for (const re of both) expect(given).toThrow(re);
    // a package of one's own registry, said to be cluster-scoped
    expect(() =>
      controlPlane({
        catalogue: { apiStyle: ApiStyle.NAMESPACED_XR, services: ['keyvalue'] },
        packages: { providerAnynines: 'registry.example.com/provider-anynines:v1.5.0', providerAnyninesFlavour: AnyninesProviderFlavour.CLUSTER_SCOPED },
      }),
    ).toThrow(/installs the cluster-scoped provider-anynines \(registry\.example\.com\/provider-anynines:v1\.5\.0\)/);
    // and the other way round: claims with the namespaced provider
    expect(() => controlPlane({ catalogue: { services: ['keyvalue'] }, packages: { providerAnyninesFlavour: AnyninesProviderFlavour.NAMESPACED } })).toThrow(
      /\(API style Claims\) composes the managed resources of the cluster-scoped provider-anynines .* installs the namespaced provider-anynines/,
    );
    // a package of one's own registry without a flavour: the catalogue's
    expect(
      controlPlane({ catalogue: { apiStyle: ApiStyle.NAMESPACED_XR }, packages: { providerAnynines: 'registry.example.com/provider-anynines:v2.0.0' } }).cp
        .anyninesProvider,
    ).toBe(AnyninesProviderFlavour.NAMESPACED);
  });

  it('a namespaced a9s data service added to a claims control plane fails the same way; a contradicting flavour prop fails naming both props', () => {
    const app = new App({ outdir: '/nonexistent' });
    const cp = new ControlPlaneCluster(app, 'CP', { ...BASE, catalogue: false } as ControlPlaneClusterProps);
    const props = keyvalue();
    const a9s = new A9sBackend({ name: 'a9s-kv2', providerConfig: cp.addProviderConfig('kv2-service-broker', AnyninesServiceType.SERVICE_BROKER) });
    expect(() => cp.addDataService('kv2', { ...props, group: 'kv2.example.com', backends: [a9s], apiStyle: ApiStyle.NAMESPACED_XR })).toThrow(
      /DataService CP\/kv2: its a9s backend "a9s-kv2" \(API style NamespacedXR\).*installs the cluster-scoped provider-anynines/,
    );
    expect(() =>
      controlPlane({ packages: { providerAnynines: PROVIDER_ANYNINES_PACKAGE, providerAnyninesFlavour: AnyninesProviderFlavour.NAMESPACED } }),
    ).toThrow(
      'ControlPlaneClusterProps.packages.providerAnyninesFlavour: "Namespaced" contradicts ControlPlaneClusterProps.packages.providerAnynines public.ecr.aws/w5n9a2g2/klutch/provider-anynines:v1.5.0, which is the cluster-scoped provider-anynines (public.ecr.aws/w5n9a2g2/klutch/provider-anynines:v1.5.0)',
    );
    expect(() => controlPlane({ packages: { providerAnyninesFlavour: 'Namespaced' as never } })).toThrow(
      /ControlPlaneClusterProps\.packages\.providerAnyninesFlavour: "Namespaced" must be AnyninesProviderFlavour\.CLUSTER_SCOPED or AnyninesProviderFlavour\.NAMESPACED/,
    );
  });
});
