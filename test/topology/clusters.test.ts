import { describe, expect, test } from '@jest/globals';
import { App } from 'cdk8s';
import { CrossplaneVersion } from '../../constructs/crossplane/index.js';
import type { IDataService } from '../../constructs/index.js'; // the root barrel names the reference type
import { KonnectorNamespaces } from '../../constructs/runtime/index.js';
import { AppCluster, ControlPlaneCluster, ControlPlaneClusterProps } from '../../constructs/topology/index.js';
import { example, objects } from './_fixture.js';

const dexProps: ControlPlaneClusterProps['dex'] = {
  connectors: [
    {
      type: 'oidc',
      id: 'corp',
      name: 'Corp SSO',
      config: { issuer: 'https://sso.example.com', clientID: 'klutch', clientSecret: '$SSO_SECRET' },
      secretEnv: { SSO_SECRET: { name: 'sso', key: 'secret' } },
    },
  ],
};

function find(objs: Record<string, any>[], kind: string, name?: string) {
  const o = objs.find((x) => x.kind === kind && (name === undefined || x.metadata.name === name));
  if (!o) throw new Error(`no ${kind}/${name}`);
  return o;
}

describe('ControlPlaneCluster (example)', () => {
  const cp = () => objects('control-plane');

  test('carries the binding CRDs, Crossplane packages and the whole catalogue', () => {
    const crds = cp()
      .filter((o) => o.kind === 'CustomResourceDefinition')
      .map((o) => o.metadata.name)
      .sort();
    expect(crds).toEqual([
      'apiservicebindings.klutch.anynines.com',
      'apiserviceexportrequests.klutch.anynines.com',
      'apiserviceexports.klutch.anynines.com',
      'apiserviceexporttemplates.example-backend.klutch.anynines.com',
      'apiservicenamespaces.klutch.anynines.com',
      'appclusterbindings.klutch.anynines.com',
      'clusterbindings.klutch.anynines.com',
    ]);
    expect(
      cp()
        .filter((o) => o.kind === 'Provider')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['provider-anynines', 'provider-kubernetes']);
    expect(find(cp(), 'Function').metadata.name).toBe('function-patch-and-transform');
    expect(find(cp(), 'Provider', 'provider-kubernetes').spec.package).toMatch(/^xpkg\.crossplane\.io\/crossplane-contrib\/provider-kubernetes:v/);
    // provider-kubernetes re-reads a Ready Object's a8s object every minute, not every 10 (its default)
    const runtime = find(cp(), 'DeploymentRuntimeConfig', find(cp(), 'Provider', 'provider-kubernetes').spec.runtimeConfigRef.name);
    expect(runtime.spec.deploymentTemplate.spec.template.spec.containers[0].args).toEqual(['--poll=1m']);
    const claims = cp()
      .filter((o) => o.kind === 'CompositeResourceDefinition')
      .map((o) => o.spec.claimNames.kind)
      .sort();
    expect(claims).toEqual([
      'Backup',
      'KeyvalueInstance',
      'Logme2Instance',
      'MariadbInstance',
      'MessagingInstance',
      'MongodbInstance',
      'PostgresqlInstance',
      'PrometheusInstance',
      'Restore',
      'SearchInstance',
      'ServiceBinding',
    ]);
    expect(cp().filter((o) => o.kind === 'APIServiceExportTemplate')).toHaveLength(11);
  });

  test('Crossplane is installed (Argo CD Application by default, 1.20 with --enable-ssa-claims) before its packages', () => {
    const files = example().clusters.find((c) => c.name === 'control-plane')!.files;
    const app = files.findIndex((f) => f.object.kind === 'Application');
    expect(files[app].object.spec.source).toMatchObject({ chart: 'crossplane', repoURL: 'https://charts.crossplane.io/stable' });
    expect(files[app].object.spec.destination.namespace).toBe('crossplane-system');
    expect(app).toBeLessThan(files.findIndex((f) => f.object.kind === 'Provider'));
    // no argocd Namespace is invented for the Application
    expect(files.some((f) => f.object.kind === 'Namespace' && f.object.metadata.name === 'argocd')).toBe(false);
    const old = new ControlPlaneCluster(new App({ outdir: '/nonexistent' }), 'CP', {
      host: 'bind.example.com',
      dex: dexProps,
      catalogue: false,
      crossplane: { version: CrossplaneVersion.V1_20 },
    });
    expect(JSON.stringify(old.crossplane.releaseObjects.map((o) => o.toJson()))).toContain('--enable-ssa-claims');
  });

  test('wiring: every Composition uses an installed Function and an existing ProviderConfig', () => {
    const fns = new Set(
      cp()
        .filter((o) => o.kind === 'Function')
        .map((o) => o.metadata.name),
    );
    const pcs = new Set(
      cp()
        .filter((o) => o.kind === 'ProviderConfig')
        .map((o) => `${o.apiVersion.split('/')[0]}/${o.metadata.name}`),
    );
    let refs = 0;
    for (const comp of cp().filter((o) => o.kind === 'Composition')) {
      for (const step of comp.spec.pipeline) {
        expect(fns.has(step.functionRef.name)).toBe(true);
        for (const r of step.input?.resources ?? []) {
          const name = r.base?.spec?.providerConfigRef?.name;
          if (name) {
            const group = r.base.apiVersion.startsWith('kubernetes.crossplane.io') ? 'kubernetes.crossplane.io' : 'dataservices.anynines.com';
            expect([...pcs]).toContain(`${group}/${name}`);
            refs++;
          }
        }
      }
    }
    expect(refs).toBeGreaterThan(5);
    // a9s ProviderConfigs read their credentials from Secrets, never inline
    const broker = find(cp(), 'ProviderConfig', 'postgresql-service-broker');
    expect(JSON.stringify(broker.spec)).toMatch(/postgresql-service-broker-credentials/);
  });

  test('wiring: Dex and the backend agree on issuer, client, callback and client secret', () => {
    const dexCfg = find(cp(), 'ConfigMap', 'dex-config').data['config.yaml'];
    expect(dexCfg).toMatch(/issuer: https:\/\/bind\.klutch\.example\.com\/dex/);
    expect(dexCfg).toMatch(/- https:\/\/bind\.klutch\.example\.com\/callback/);
    const backend = find(cp(), 'Deployment', 'klutch-backend').spec.template.spec.containers[0];
    expect(backend.args).toEqual(
      expect.arrayContaining([
        '--oidc-issuer-url=https://bind.klutch.example.com/dex',
        '--oidc-issuer-client-id=klutch-backend',
        '--oidc-callback-url=https://bind.klutch.example.com/callback',
        '--external-address=https://api.control-plane.klutch.example.com:6443',
      ]),
    );
    const dexEnv = find(cp(), 'Deployment', 'dex').spec.template.spec.containers[0].env.find((e: any) => e.name === 'DEX_CLIENT_SECRET_0');
    const backendEnv = backend.env.find((e: any) => e.name === 'OIDC_CLIENT_SECRET');
    expect(dexEnv.valueFrom.secretKeyRef).toEqual(backendEnv.valueFrom.secretKeyRef);
    const ing = cp().filter((o) => o.kind === 'Ingress');
    expect(ing.map((i) => i.spec.rules[0].http.paths[0].path).sort()).toEqual(['/', '/dex']);
  });

  test('RBAC of the whole topology: no cluster-admin, no wildcard anything, no wildcard verbs on secrets', () => {
    for (const c of example().clusters) {
      for (const { object: o } of c.files) {
        if (o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding') {
          expect([o.metadata.name, o.roleRef.name]).not.toContain('cluster-admin');
        }
        if (o.kind === 'ClusterRole' || o.kind === 'Role') {
          for (const r of o.rules ?? []) {
            expect(r.verbs).not.toContain('*');
            expect(r.resources).not.toContain('*');
            expect(r.apiGroups).not.toContain('*');
            if (r.resources.includes('secrets')) expect(r.verbs).not.toContain('deletecollection');
          }
        }
      }
    }
  });

  test('every export has a binder ClusterRole aggregated into klutch-binder-exports', () => {
    const templates = cp().filter((o) => o.kind === 'APIServiceExportTemplate');
    const roles = new Set(
      cp()
        .filter((o) => o.kind === 'ClusterRole' && o.metadata.labels?.['klutch.anynines.com/aggregate-to-binder-exports'] === 'true')
        .map((o) => o.metadata.name),
    );
    for (const t of templates) {
      const sel = t.spec.APIServiceSelector;
      expect(roles.has(`klutch-binder-exports-${sel.resource}.${sel.group}`)).toBe(true);
    }
    expect(example().topo.controlPlane.exports.map((e) => e.name)).toContain('postgresqlinstances.anynines.com');
  });

  test('bad props throw naming the prop and value', () => {
    const mk = (p: Partial<ControlPlaneClusterProps>) =>
      new ControlPlaneCluster(new App({ outdir: '/nonexistent' }), 'CP', {
        host: 'bind.example.com',
        dex: dexProps,
        catalogue: false,
        ...p,
      } as ControlPlaneClusterProps);
    expect(() => mk({ host: 'not a host' })).toThrow(/ControlPlaneClusterProps\.host: "not a host"/);
    expect(() => mk({ clusterName: 'CP_1' })).toThrow(/ControlPlaneClusterProps\.clusterName: "CP_1"/);
    expect(() => mk({ dex: undefined })).toThrow(/ControlPlaneClusterProps\.dex: undefined/);
    expect(() => mk({ dex: false })).toThrow(/ControlPlaneClusterProps\.backend\.oidc\.issuerUrl: undefined/);
    expect(() => mk({ catalogue: {} })).toThrow(/ControlPlaneClusterProps\.anynines: undefined; the a9s ProviderConfig "postgresql-service-broker"/);
    expect(() => mk({ catalogue: { services: ['postgresql'], automations: ['a8s'] }, packages: { providerAnynines: 'provider-anynines:v1' } })).toThrow(
      /ProviderProps\.package: "provider-anynines:v1"/,
    );
  });

  test('with a Gateway API route for the backend, Dex is routed through the same Gateway', () => {
    const cp = new ControlPlaneCluster(new App({ outdir: '/nonexistent' }), 'CP', {
      host: 'bind.example.com',
      dex: dexProps,
      catalogue: false,
      backend: { httpRoute: { hostnames: ['bind.example.com'], parentRefs: [{ name: 'eg', namespace: 'envoy-gateway-system' }] } },
    });
    const objs = cp.toJson() as Record<string, any>[];
    expect(objs.filter((o) => o.kind === 'Ingress')).toHaveLength(0);
    const routes = objs.filter((o) => o.kind === 'HTTPRoute');
    expect(routes.map((r) => r.spec.rules[0].matches[0].path.value).sort()).toEqual(['/', '/dex']);
    for (const r of routes) expect(r.spec.parentRefs[0]).toMatchObject({ name: 'eg', namespace: 'envoy-gateway-system' });
    expect(routes.find((r) => r.metadata.name === 'dex')!.spec.rules[0].backendRefs[0]).toEqual({ name: 'dex', port: 5556 });
  });

  test('an export template created in the control plane registers itself: its binder ClusterRole at once, nothing to call', async () => {
    const { ApiServiceExportTemplate } = await import('../../constructs/runtime/index.js');
    const { renderTopology } = await import('../../constructs/topology/index.js');
    const app = new App({ outdir: '/nonexistent' });
    const cp = new ControlPlaneCluster(app, 'CP', { host: 'bind.example.com', dex: dexProps, catalogue: false });
    expect(cp.backend.exportedApis).toEqual([]);
    new ApiServiceExportTemplate(cp, 'Widgets', { group: 'widgets.example.com', resource: 'widgets' });
    expect(cp.backend.exportedApis).toEqual([{ group: 'widgets.example.com', resource: 'widgets' }]);
    const objs = renderTopology(app)[0].files.map((f) => f.object);
    expect(cp.backend.exportedApis).toEqual([{ group: 'widgets.example.com', resource: 'widgets' }]);
    expect(objs.some((o) => o.kind === 'ClusterRole' && o.metadata.name === 'klutch-binder-exports-widgets.widgets.example.com')).toBe(true);
  });

  test('any IApiExport in the chart is an export, once however many constructs name its template', async () => {
    const { ApiServiceExportTemplate, isApiExport } = await import('../../constructs/runtime/index.js');
    type IBindGrantee = import('../../constructs/runtime/index.js').IBindGrantee;
    const { Construct } = await import('constructs');
    /** An L3 of the user's own that offers an API (as DataService does), by delegating to its template. */
    class Gadgets extends Construct {
      public readonly exportTemplate = new ApiServiceExportTemplate(this, 'T', {
        group: 'gadgets.example.com',
        resource: 'gadgets',
        permissionClaims: [{ resource: 'secrets', version: 'v1' }],
      });
      public readonly bindableApi = this.exportTemplate.bindableApi;
      public grantBind(grantee: IBindGrantee): void {
        this.exportTemplate.grantBind(grantee);
      }
    }
    const app = new App({ outdir: '/nonexistent' });
    const cp = new ControlPlaneCluster(app, 'CP', { host: 'bind.example.com', dex: dexProps, catalogue: false });
    const g = new Gadgets(cp, 'Gadgets');
    expect(isApiExport(g)).toBe(true);
    expect(isApiExport(g.exportTemplate)).toBe(true);
    expect(isApiExport(cp.backend)).toBe(false);
    expect(cp.exports).toEqual([
      {
        group: 'gadgets.example.com',
        resource: 'gadgets',
        name: 'gadgets.gadgets.example.com',
        permissionClaims: [{ group: '', resource: 'secrets', version: 'v1', selector: { names: ['*'], namespaces: ['*'] } }],
      },
    ]);
    expect(cp.backend.exportedApis).toEqual([{ group: 'gadgets.example.com', resource: 'gadgets' }]);
    // A template outside any control plane registers nowhere.
    const { Chart } = await import('cdk8s');
    new Gadgets(new Chart(app, 'Plain'), 'Gadgets');
    expect(cp.exports.map((e) => e.name)).toEqual(['gadgets.gadgets.example.com']);
  });

  test('an app cluster binds a data service added to its control plane after it (order does not matter)', async () => {
    const { A8sBackend, DataService, OperatorProfile, Plan, PlanTopology } = await import('../../constructs/dataservice/index.js');
    const { renderTopology } = await import('../../constructs/topology/index.js');
    const app = new App({ outdir: '/nonexistent' });
    const cp = new ControlPlaneCluster(app, 'CP', {
      host: 'bind.example.com',
      dex: dexProps,
      catalogue: { services: ['postgresql'], operations: [], automations: ['a8s'] },
    });
    const early = new AppCluster(app, 'A', { clusterName: 'app-1', controlPlane: cp });
    // A data service made after the app cluster.
    new DataService(cp, 'Late', {
      group: 'late.example.com',
      kind: 'XLateInstance',
      claimKind: 'LateInstance',
      plans: [new Plan({ name: 'single-small', topology: PlanTopology.SINGLE, size: { name: 'small', cpu: '1', memory: '1Gi', storage: '5Gi' } })],
      services: [{ name: 'a9s-postgresql14' }],
      backends: [new A8sBackend({ name: 'late-k8s', profile: OperatorProfile.A8S_POSTGRESQL })],
    });
    expect([...early.bindings.keys()]).toEqual(['postgresqlinstances.anynines.com', 'lateinstances.late.example.com']);
    const rendered = renderTopology(app);
    const appObjs = rendered.find((c) => c.name === 'app-1')!.files.map((f) => f.object);
    expect(
      appObjs
        .filter((o) => o.kind === 'APIServiceBinding')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['lateinstances.late.example.com', 'postgresqlinstances.anynines.com']);
    const role = find(appObjs, 'ClusterRole', 'klutch-konnector-klutch-bind');
    expect(role.rules.find((r: any) => r.apiGroups.includes('late.example.com'))?.resources).toEqual(['lateinstances', 'lateinstances/status']);
    const cpObjs = rendered.find((c) => c.name === 'control-plane')!.files.map((f) => f.object);
    expect(cpObjs.some((o) => o.kind === 'ClusterRole' && o.metadata.name === 'klutch-binder-exports-lateinstances.late.example.com')).toBe(true);
  });

  test('an app cluster of a control plane without exports fails at synth, naming the control plane', async () => {
    const { renderTopology } = await import('../../constructs/topology/index.js');
    const app = new App({ outdir: '/nonexistent' });
    const cp = new ControlPlaneCluster(app, 'CP', { host: 'bind.example.com', dex: dexProps, catalogue: false });
    new AppCluster(app, 'A', { clusterName: 'app-1', controlPlane: cp });
    expect(() => renderTopology(app)).toThrow(/AppClusterProps\.controlPlane: control plane "control-plane" exports no API; add a data service/);
  });

  test('a data service that is not in the catalogue becomes bindable', () => {
    const app = new App({ outdir: '/nonexistent' });
    const cp = new ControlPlaneCluster(app, 'CP', {
      host: 'bind.example.com',
      dex: dexProps,
      catalogue: { services: ['postgresql'], operations: [], automations: ['a8s'] },
    });
    expect(cp.exports.map((e) => e.name)).toEqual(['postgresqlinstances.anynines.com']);
    const app1 = new AppCluster(app, 'A', { clusterName: 'app-1', controlPlane: cp });
    expect([...app1.bindings.keys()]).toEqual(['postgresqlinstances.anynines.com']);
    expect(() => app1.addClaim({ kind: 'KeyvalueInstance', name: 'x', spec: {} })).toThrow(
      /AppCluster\.addClaim\.kind: "KeyvalueInstance" is not a claim kind/,
    );
  });
});

describe('AppCluster (example)', () => {
  test('konnector, binding CRD and one binding per export, pointing at the kubeconfig Secret', () => {
    const shop = objects('app-shop');
    expect(find(shop, 'CustomResourceDefinition').metadata.name).toBe('apiservicebindings.klutch.anynines.com');
    const bindings = shop.filter((o) => o.kind === 'APIServiceBinding');
    expect(bindings.map((b) => b.metadata.name).sort()).toEqual(
      example()
        .topo.controlPlane.exports.map((e) => e.name)
        .sort(),
    );
    for (const b of bindings) {
      expect(b.metadata.namespace).toBe('klutch-bind');
      expect(b.spec.kubeconfigSecretRef).toEqual({ name: 'kubeconfig-control-plane', namespace: 'klutch-bind', key: 'kubeconfig' });
    }
    // the credentials claim of servicebindings is accepted, so only that Secret reaches the app
    const sb = bindings.find((b) => b.metadata.name === 'servicebindings.anynines.com')!;
    expect(sb.spec.permissionClaims.length).toBeGreaterThan(0);
    for (const c of sb.spec.permissionClaims) expect(c.state).toBe('Accepted');
    expect(shop.filter((o) => o.kind === 'Secret')).toHaveLength(0); // kubeconfig is never in git
    expect(find(shop, 'Deployment', 'konnector').spec.replicas).toBe(2);
  });

  test('konnector RBAC follows what the cluster binds', () => {
    const mainRole = (objs: any[]) => objs.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'klutch-konnector-klutch-bind');
    const role = mainRole(objects('app-analytics'));
    const bound = role.rules
      .filter((r: any) => r.apiGroups.includes('anynines.com'))
      .flatMap((r: any) => r.resources)
      .filter((r: string) => !r.endsWith('/status'));
    expect(bound.sort()).toEqual(['backups', 'postgresqlinstances', 'servicebindings']);
    const shopRole = mainRole(objects('app-shop'));
    const shopBound = shopRole.rules.filter((r: any) => r.apiGroups.includes('anynines.com')).flatMap((r: any) => r.resources);
    expect(shopBound).toContain('keyvalueinstances');
  });

  test("the konnector's Secret rights: only in the namespaces of the cluster's claims, never cluster-wide", () => {
    for (const [cluster, ns] of [
      ['app-analytics', 'analytics'],
      ['app-shop', 'shop'],
    ]) {
      const objs = objects(cluster);
      const wide = objs.filter((o) => o.kind === 'ClusterRoleBinding').map((b) => b.roleRef.name);
      const wideRules = objs.filter((o) => o.kind === 'ClusterRole' && wide.includes(o.metadata.name)).flatMap((r) => r.rules);
      expect(wideRules.filter((r: any) => r.apiGroups.includes('') && r.resources.includes('secrets'))).toEqual([]);
      const claims = objs.filter((o) => o.kind === 'RoleBinding' && o.roleRef.name === 'klutch-konnector-klutch-bind-claims');
      expect(claims.map((b) => b.metadata.namespace)).toEqual([ns]);
      const args = objs.find((o) => o.kind === 'Deployment' && o.metadata.name === 'konnector')!.spec.template.spec.containers[0].args;
      expect(args.filter((a: string) => a.startsWith('--allow-namespace') || a === '--all-namespaces')).toEqual([`--allow-namespace=${ns}`]);
    }
  });

  test("sample claims use bound claim kinds with the XRD's group and version", () => {
    const claims = objects('app-analytics').filter((o) => o.apiVersion === 'anynines.com/v1');
    expect(claims.map((c) => `${c.kind}/${c.metadata.namespace}/${c.metadata.name}`).sort()).toEqual([
      'Backup/analytics/warehouse-nightly',
      'PostgresqlInstance/analytics/warehouse',
      'ServiceBinding/analytics/warehouse-creds',
    ]);
  });

  test('konnector namespaces: no claim → default; named namespaces refuse a claim elsewhere; all() takes any', () => {
    const { controlPlane } = example().topo;
    const app = new App({ outdir: '/nonexistent' });
    const bare = new AppCluster(app, 'Bare', { clusterName: 'bare', controlPlane, bind: ['postgresqlinstances.anynines.com'] });
    expect(bare.konnector.allowedNamespaces).toEqual(['default']);
    const named = new AppCluster(app, 'Named', {
      clusterName: 'named',
      controlPlane,
      bind: ['postgresqlinstances.anynines.com'],
      konnector: { namespaces: KonnectorNamespaces.only('team-a') },
    });
    const claim = { kind: 'PostgresqlInstance', name: 'db', spec: {} };
    expect(() => named.addClaim({ ...claim, namespace: 'team-b' })).toThrow(
      'AppCluster.addClaim.namespace: "team-b" is not one of the konnector\'s namespaces (team-a): nothing would be synced there; add it to AppClusterProps.konnector.namespaces',
    );
    expect(() => named.addClaim({ ...claim, namespace: 'kube-system' })).toThrow('AppCluster.addClaim.namespace: "kube-system" is a system namespace');
    named.addClaim({ ...claim, namespace: 'team-a' });
    expect(named.konnector.allowedNamespaces).toEqual(['team-a']);
    const wide = new AppCluster(app, 'Wide', {
      clusterName: 'wide',
      controlPlane,
      bind: ['postgresqlinstances.anynines.com'],
      konnector: { namespaces: KonnectorNamespaces.all() },
    });
    wide.addClaim({ ...claim, namespace: 'team-b' });
    expect(wide.konnector.allowedNamespaces).toBeUndefined();
  });

  test('bind takes data services and operations by reference, as the same bindings their names give', () => {
    const { controlPlane } = example().topo;
    const catalogue = controlPlane.catalogue!;
    const app = new App({ outdir: '/nonexistent' });
    const byRef = new AppCluster(app, 'ByRef', {
      clusterName: 'by-ref',
      controlPlane,
      bind: [catalogue.service('postgresql'), catalogue.operations.get('servicebinding')!],
    });
    const byName = new AppCluster(app, 'ByName', {
      clusterName: 'by-name',
      controlPlane,
      bind: ['postgresqlinstances.anynines.com', 'servicebindings.anynines.com'],
    });
    expect(byRef.boundApis).toEqual(byName.boundApis);
    expect([...byRef.bindings.keys()]).toEqual(['postgresqlinstances.anynines.com', 'servicebindings.anynines.com']);
    // a data service of another control plane is no export of this one, whatever its name
    const otherCp = new ControlPlaneCluster(new App({ outdir: '/nonexistent' }), 'CP', {
      host: 'bind.example.com',
      dex: dexProps,
      anynines: { baseDomain: 'a9s.example.com' },
      catalogue: { services: ['postgresql'], operations: [] },
    });
    const other = otherCp.catalogue!.service('postgresql');
    expect(() => new AppCluster(app, 'Other', { clusterName: 'other', controlPlane, bind: [other] })).toThrow(
      /AppClusterProps\.bind\[0\]: ".*" is not exported by "control-plane": it was created outside that control plane/,
    );
  });

  test('bad props and claims throw naming the prop and value', () => {
    const { controlPlane } = example().topo;
    const app = new App({ outdir: '/nonexistent' });
    expect(() => new AppCluster(app, 'X', { clusterName: 'x', controlPlane, bind: ['nope.example.com'] })).toThrow(
      /AppClusterProps\.bind\[0\]: "nope\.example\.com" is not exported by "control-plane"/,
    );
    expect(() => new AppCluster(app, 'Y', { clusterName: 'control-plane', controlPlane })).toThrow(
      /AppClusterProps\.clusterName: "control-plane" is the control plane's name/,
    );
    expect(() => new AppCluster(app, 'Z', { clusterName: 'z', controlPlane: {} as ControlPlaneCluster })).toThrow(
      /AppClusterProps\.controlPlane: object is not a ControlPlaneCluster/,
    );
    const a = new AppCluster(app, 'A', { clusterName: 'a', controlPlane, bind: ['postgresqlinstances.anynines.com'] });
    expect(() => a.addClaim({ kind: 'Backup', name: 'b', spec: {} })).toThrow(
      /AppCluster\.addClaim\.kind: "Backup" \(backups\.anynines\.com\) is not bound in cluster "a"/,
    );
    a.addClaim({ kind: 'PostgresqlInstance', name: 'db', spec: {} });
    expect(() => a.addClaim({ kind: 'PostgresqlInstance', name: 'db', spec: {} })).toThrow(
      /AppCluster\.addClaim\.name: "db" is already a PostgresqlInstance in namespace default/,
    );
  });

  test('addClaim takes the data service by reference (IDataService): the same claim its kind gives', () => {
    const { controlPlane } = example().topo;
    const postgresql: IDataService = controlPlane.catalogue!.service('postgresql');
    const app = new App({ outdir: '/nonexistent' });
    const a = new AppCluster(app, 'A', { clusterName: 'a', controlPlane, bind: [postgresql] });
    const spec = { service: 'a9s-postgresql15', plan: 'postgresql-single-nano' };
    const byRef = a.addClaim({ dataService: postgresql, name: 'by-ref', spec });
    const byKind = a.addClaim({ kind: 'PostgresqlInstance', name: 'by-kind', spec });
    expect({ ...byRef.toJson(), metadata: {} }).toEqual({ ...byKind.toJson(), metadata: {} });
    expect(byRef.toJson()).toMatchObject({ apiVersion: 'anynines.com/v1', kind: 'PostgresqlInstance', metadata: { name: 'by-ref', namespace: 'default' } });
    expect(() => a.addClaim({ dataService: postgresql, name: 'by-ref', spec })).toThrow(
      'AppCluster.addClaim.name: "by-ref" is already a PostgresqlInstance in namespace default of cluster "a"',
    );
    expect(() => a.addClaim({ dataService: postgresql, kind: 'PostgresqlInstance', name: 'x', spec })).toThrow(
      'AppCluster.addClaim.kind: "PostgresqlInstance" is given with dataService, which sets the kind and group; pass one of them',
    );
    expect(() => a.addClaim({ name: 'x', spec })).toThrow(
      'AppCluster.addClaim.kind: undefined must be a claim kind such as "PostgresqlInstance" (or pass dataService)',
    );
    expect(() => a.addClaim({ dataService: controlPlane as never, name: 'x', spec })).toThrow(
      'AppCluster.addClaim.dataService: "ControlPlane" is not a data service (IDataService), e.g. a DataService or catalogue.service("postgresql")',
    );
    // Not bound here: named by the binding, as a claim by kind is.
    const keyvalue = controlPlane.catalogue!.service('keyvalue');
    expect(() => a.addClaim({ dataService: keyvalue, name: 'kv', spec: {} })).toThrow(
      /AppCluster\.addClaim\.kind: "KeyvalueInstance" \(keyvalueinstances\.anynines\.com\) is not bound in cluster "a"/,
    );
    // A data service of another control plane, even one of the same kind, is refused by path.
    const otherCp = new ControlPlaneCluster(new App({ outdir: '/nonexistent' }), 'CP', {
      host: 'bind.example.com',
      dex: dexProps,
      anynines: { baseDomain: 'a9s.example.com' },
      catalogue: { services: ['postgresql'], operations: [] },
    });
    expect(() => a.addClaim({ dataService: otherCp.catalogue!.service('postgresql'), name: 'x', spec })).toThrow(
      'AppCluster.addClaim.dataService: "CP/Catalogue/postgresql" is not exported by "control-plane": it was created outside that control plane',
    );
  });
});
