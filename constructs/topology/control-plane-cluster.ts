/**
 * The control-plane cluster: Crossplane packages (provider-kubernetes, provider-anynines,
 * function-patch-and-transform) and their ProviderConfigs, the data-service catalogue, the binding
 * API CRDs, the bind backend and Dex.
 *
 * Exports (what app clusters can bind) are the `IApiExport` constructs in this chart (DataService,
 * ApiServiceExportTemplate, …), and claim APIs come from the XRDs. A data service added anywhere in this chart — `new
 * DataService(cp, …)`, `cp.addDataService(…)`, the catalogue — is prepared at synth (validation):
 * each export gets a binder ClusterRole through `BindBackend.addExportedApi`, and each backend the
 * ProviderConfig it references (or a validation error naming both). Add data services before
 * creating the AppClusters that bind them.
 */
import { ApiObject } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { fail } from '../_errors.js';
import { isDnsSubdomain } from '../_names.js';
import { bindingCrds } from '../../contract/api/index.js';
import { Catalogue, CatalogueProps } from '../catalogue/index.js';
import {
  AnyninesProviderConfig,
  AnyninesServiceType,
  CrossplaneInstall,
  CrossplaneInstallProps,
  DeploymentRuntimeConfig,
  Function as XpFunction,
  KubernetesProviderConfig,
  Provider,
  PROVIDER_KUBERNETES_PACKAGE,
  Configuration,
  ConfigurationPackageSource,
  dependencyOn,
  PackageDependencyKind,
} from '../crossplane/index.js';
import { DataService, DataServiceProps, KUBERNETES_PROVIDER_CONFIG } from '../dataservice/index.js';
import { KlutchMonitoring, type MonitoringOptions } from '../monitoring/index.js';
import {
  ApiServiceExportTemplate,
  BackendHttpRouteProps,
  BindBackend,
  BindBackendProps,
  Dex,
  isApiExport,
  DexConnector,
  DexProps,
  PermissionClaim,
  SecretKeyRef,
} from '../runtime/index.js';
import { CatalogueInstall } from './catalogue-install.js';
import { ClusterChart, ClusterRole } from './cluster-chart.js';

/** provider-anynines as released with Klutch 1.5.0. */
export const PROVIDER_ANYNINES_PACKAGE = 'public.ecr.aws/w5n9a2g2/klutch/provider-anynines:v1.5.0';
/** Namespace of Crossplane and of the APIServiceExportTemplates. */
export const CROSSPLANE_NAMESPACE = 'crossplane-system';

/** An API app clusters can bind: from an APIServiceExportTemplate. */
export interface ExportedApiInfo {
  readonly group: string;
  /** Plural resource (the claim plural). */
  readonly resource: string;
  /** `<resource>.<group>`: the APIServiceBinding and CRD name. */
  readonly name: string;
  readonly permissionClaims: readonly PermissionClaim[];
}

/** A claim API (from an XRD with claimNames, or a v2 XRD of namespaced composite resources, which app clusters bind directly). */
export interface ClaimApiInfo {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
}

/** Where the a9s service brokers and backup managers are, and their credentials. */
export interface AnyninesEndpoints {
  /** Base domain: `https://<ds>-service-broker.<baseDomain>` and `https://<ds>-backup-manager.<baseDomain>`. */
  readonly baseDomain: string;
  /** Namespace of the credentials Secrets `<providerconfig>-credentials` (keys `username`, `password`). @default "crossplane-system" */
  readonly credentialsNamespace?: string;
  /** Per ProviderConfig name: a different URL. @default - derived from baseDomain */
  readonly urls?: Record<string, string>;
}

/** Overrides for the bind backend of a {@link ControlPlaneCluster}. */
export interface ControlPlaneBackendProps extends Partial<BindBackendProps> {
  /**
   * Expose the backend (and Dex, path `/dex`) through a Gateway API HTTPRoute instead of an Ingress.
   * @default - an Ingress for `host` (`ingressClassName`, `tlsSecretName`)
   */
  readonly httpRoute?: BackendHttpRouteProps;
}

export interface ControlPlaneClusterProps {
  /** Cluster name and output folder. @default "control-plane" */
  readonly clusterName?: string;
  /** Public host of the backend (`https://<host>/`) and Dex (`https://<host>/dex`). */
  readonly host: string;
  /** API server URL written into consumers' kubeconfigs (`--external-address`). @default - the backend's own */
  readonly externalAddress?: string;
  /** OIDC client secret (shared by Dex's static client and the backend). @default { name: "klutch-oidc", key: "client-secret" } in the backend namespace */
  readonly oidcClientSecret?: SecretKeyRef;
  /** Secret with `signing-key` and `encryption-key` for the backend cookies. @default "klutch-cookies" */
  readonly cookieSecretName?: string;
  /** Dex in front of the backend; `false` to use an external issuer (`backend.oidc.issuerUrl`). */
  readonly dex: false | ({ readonly connectors: DexConnector[] } & Partial<Omit<DexProps, 'issuer' | 'staticClients' | 'connectors'>>);
  /** Overrides for the bind backend. @default - derived from host */
  readonly backend?: ControlPlaneBackendProps;
  /** The Klutch catalogue; `false` to add data services yourself. @default - the whole catalogue */
  readonly catalogue?: CatalogueProps | false;
  /**
   * How the catalogue's XRDs and Compositions reach Crossplane: as objects of this cluster, or in a
   * Configuration package installed by a `Configuration` object (the package source is written to
   * `<outdir>/<clusterName>.packages/<name>/`; push it with `klutch-kit package push`).
   * Data services added with `addDataService` stay objects either way.
   * @default CatalogueInstall.OBJECTS
   */
  readonly catalogueInstall?: CatalogueInstall;
  /** a9s endpoints; required when the catalogue includes a9s backends. */
  readonly anynines?: AnyninesEndpoints;
  /** The Crossplane install (version, install method, args). @default - Crossplane 2.x as an Argo CD Application */
  readonly crossplane?: CrossplaneInstallProps;
  /** Package references. @default - klutch-kit's pinned versions */
  readonly packages?: { readonly providerKubernetes?: string; readonly providerAnynines?: string; readonly patchAndTransform?: string };
  /** Ingress class for backend and Dex. @default - cluster default */
  readonly ingressClassName?: string;
  /** TLS Secret for the host. @default - none */
  readonly tlsSecretName?: string;
  /**
   * Monitoring of the bind backend: a ServiceMonitor/PodMonitor, the PrometheusRule and the Grafana
   * dashboard (needs the Prometheus Operator's CRDs on the cluster). @default - none
   */
  readonly monitoring?: MonitoringOptions;
}

/** Groups and resources provider-kubernetes manages for the a8s backends (instead of Klutch's cluster-admin). */
const A8S_MANAGED = [
  { group: 'postgresql.anynines.com', resources: ['postgresqls'] },
  { group: 'backups.anynines.com', resources: ['backups', 'restores'] },
  { group: 'servicebindings.anynines.com', resources: ['servicebindings'] },
];

export class ControlPlaneCluster extends ClusterChart {
  public readonly clusterRole = ClusterRole.CONTROL_PLANE;
  public readonly host: string;
  public readonly backend: BindBackend;
  public readonly dex?: Dex;
  private firstCatalogue?: Catalogue;
  private catalogueSource?: ConfigurationPackageSource;
  private catalogueConfig?: Configuration;
  private readonly catalogueInstall: CatalogueInstall;
  public readonly crossplane: CrossplaneInstall;
  public readonly providerKubernetes: Provider;
  public readonly providerAnynines: Provider;
  public readonly patchAndTransform: XpFunction;
  /** The backend's monitoring, when `monitoring` is set. */
  public readonly monitoring?: KlutchMonitoring;
  private readonly anynines?: AnyninesEndpoints;
  private readonly providerConfigNames = new Set<string>();
  private scanned?: { children: number; exports: ExportedApiInfo[]; claimApis: ClaimApiInfo[]; byKind: Map<string, ClaimApiInfo[]> };
  /** Each XRD is serialized once, however often the chart is scanned. */
  private readonly infoCache = new WeakMap<ApiObject, ClaimApiInfo | null>();

  constructor(scope: Construct, id: string, props: ControlPlaneClusterProps) {
    const P = 'ControlPlaneClusterProps';
    if (!props || typeof props !== 'object') fail(P, props, 'must be an object with host and dex');
    super(scope, id, { clusterName: props.clusterName ?? 'control-plane' }, P);
    if (!isDnsSubdomain(props.host, 1)) {
      fail(`${P}.host`, props.host, 'is not a fully qualified host name (e.g. "bind.example.com")');
    }
    this.host = props.host;
    if (props.dex === undefined) throw new Error(`${P}.dex: undefined; give Dex connectors, or false to use an external OIDC issuer via backend.oidc`);
    this.anynines = props.anynines;
    if (props.catalogueInstall !== undefined && !(props.catalogueInstall instanceof CatalogueInstall)) {
      fail(`${P}.catalogueInstall`, props.catalogueInstall, 'must be CatalogueInstall.OBJECTS or CatalogueInstall.configurationPackage({ package })');
    }
    this.catalogueInstall = props.catalogueInstall ?? CatalogueInstall.OBJECTS;

    // Binding API CRDs (klutch.anynines.com + the template CRD).
    for (const crd of bindingCrds()) {
      new ApiObject(this, `Crd-${crd.metadata.name}`, crd as never);
    }

    // Crossplane itself, then its packages.
    this.crossplane = new CrossplaneInstall(this, 'Crossplane', { namespace: CROSSPLANE_NAMESPACE, ...props.crossplane });
    this.providerKubernetes = new Provider(this, 'ProviderKubernetes', {
      package: props.packages?.providerKubernetes ?? PROVIDER_KUBERNETES_PACKAGE,
      name: 'provider-kubernetes',
      runtimeConfig: new DeploymentRuntimeConfig(this, 'ProviderKubernetesRuntime', { name: 'provider-kubernetes', serviceAccountName: 'provider-kubernetes' }),
    });
    this.providerAnynines = new Provider(this, 'ProviderAnynines', {
      package: props.packages?.providerAnynines ?? PROVIDER_ANYNINES_PACKAGE,
      name: 'provider-anynines',
    });
    this.patchAndTransform = XpFunction.patchAndTransform(this, 'FunctionPatchAndTransform', {
      ...(props.packages?.patchAndTransform ? { package: props.packages.patchAndTransform } : {}),
      name: 'function-patch-and-transform',
    });
    // provider-kubernetes (InjectedIdentity) gets exactly the a8s resources it composes — not cluster-admin.
    new k8s.KubeClusterRole(this, 'ProviderKubernetesRole', {
      metadata: { name: 'klutch-provider-kubernetes-a8s' },
      rules: A8S_MANAGED.map((m) => ({ apiGroups: [m.group], resources: m.resources, verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] })),
    });
    new k8s.KubeClusterRoleBinding(this, 'ProviderKubernetesRoleBinding', {
      metadata: { name: 'klutch-provider-kubernetes-a8s' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'klutch-provider-kubernetes-a8s' },
      subjects: [{ kind: 'ServiceAccount', name: 'provider-kubernetes', namespace: CROSSPLANE_NAMESPACE }],
    });

    // Bind backend and Dex.
    const backendNs = props.backend?.namespace ?? 'klutch-system';
    const clientSecret = props.oidcClientSecret ?? { name: 'klutch-oidc', key: 'client-secret' };
    const cookieSecret = props.cookieSecretName ?? 'klutch-cookies';
    const issuerUrl = props.dex === false ? props.backend?.oidc?.issuerUrl : `https://${this.host}/dex`;
    if (!issuerUrl) throw new Error(`${P}.backend.oidc.issuerUrl: undefined; with dex: false the backend needs an external issuer`);
    const { httpRoute: route, ...backendProps } = props.backend ?? {};
    this.backend = new BindBackend(this, 'Backend', {
      namespace: backendNs,
      externalAddress: props.externalAddress,
      ...backendProps,
      oidc: { issuerUrl, clientId: 'klutch-backend', clientSecret, callbackUrl: `https://${this.host}/callback`, ...props.backend?.oidc },
      cookies: props.backend?.cookies ?? {
        signingKey: { name: cookieSecret, key: 'signing-key' },
        encryptionKey: { name: cookieSecret, key: 'encryption-key' },
      },
    });
    if (route) this.backend.exposeViaHttpRoute(route);
    else this.backend.exposeViaIngress({ host: this.host, className: props.ingressClassName, tlsSecretName: props.tlsSecretName });
    if (props.monitoring) this.monitoring = new KlutchMonitoring(this, 'Monitoring', { ...props.monitoring, backend: this.backend });
    if (props.dex !== false) {
      const { connectors, ...dexRest } = props.dex;
      this.dex = new Dex(this, 'Dex', {
        namespace: backendNs,
        ...dexRest,
        issuer: issuerUrl,
        staticClients: [{ id: 'klutch-backend', name: 'Klutch', redirectUris: [`https://${this.host}/callback`], secret: clientSecret }],
        connectors,
      });
      if (route) {
        // Same Gateway as the backend, path /dex.
        new ApiObject(this, 'DexHTTPRoute', {
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'HTTPRoute',
          metadata: { name: 'dex', namespace: backendNs },
          spec: {
            parentRefs: route.parentRefs.map((r) => ({
              group: 'gateway.networking.k8s.io',
              kind: 'Gateway',
              name: r.name,
              ...(r.namespace ? { namespace: r.namespace } : {}),
              ...(r.sectionName ? { sectionName: r.sectionName } : {}),
            })),
            hostnames: [...route.hostnames],
            rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/dex' } }], backendRefs: [{ name: this.dex.name, port: 5556 }] }],
          },
        });
      } else {
        new k8s.KubeIngress(this, 'DexIngress', {
          metadata: { name: 'dex', namespace: backendNs },
          spec: {
            ...(props.ingressClassName ? { ingressClassName: props.ingressClassName } : {}),
            ...(props.tlsSecretName ? { tls: [{ hosts: [this.host], secretName: props.tlsSecretName }] } : {}),
            rules: [
              {
                host: this.host,
                http: { paths: [{ path: '/dex', pathType: 'Prefix', backend: { service: { name: this.dex.name, port: { name: 'http' } } } }] },
              },
            ],
          },
        });
      }
    }

    // At synth: every data service of the chart gets its ProviderConfigs and every export its binder
    // ClusterRole (the backend can only hand out what it holds) — however they were added.
    this.node.addValidation({ validate: () => this.prepareForSynth() });

    // Catalogue.
    if (props.catalogue !== false) this.addCatalogue('Catalogue', props.catalogue ?? {});
    this.addProviderConfig(KUBERNETES_PROVIDER_CONFIG);
  }

  /** The first catalogue added: the Klutch catalogue unless `catalogue: false` (then the first addCatalogue()). */
  public get catalogue(): Catalogue | undefined {
    return this.firstCatalogue;
  }

  /** The catalogue's Configuration package source (CatalogueInstall.configurationPackage). */
  public get cataloguePackage(): ConfigurationPackageSource | undefined {
    return this.catalogueSource;
  }

  /** The `Configuration` installing the catalogue package (CatalogueInstall.configurationPackage). */
  public get catalogueConfiguration(): Configuration | undefined {
    return this.catalogueConfig;
  }

  /** Adds the Klutch catalogue (or a part of it) with the ProviderConfigs its Compositions use. */
  public addCatalogue(id: string, props: CatalogueProps = {}): Catalogue {
    // The catalogue targets this cluster's Crossplane: namespaced XRs on a 1.20 install fail here, naming both props.
    const c = new Catalogue(this.catalogueScope(), id, { crossplaneVersion: this.crossplane.version, ...props });
    const pkg = this.cataloguePackage;
    if (pkg) {
      // The package needs what its Compositions use; the chart installs them too.
      pkg.addDependency(dependencyOn(PackageDependencyKind.FUNCTION, this.patchAndTransform.packageRef));
      if (c.providerConfigs.kubernetes.length > 0) pkg.addDependency(dependencyOn(PackageDependencyKind.PROVIDER, this.providerKubernetes.packageRef));
      if (c.providerConfigs.serviceBrokers.length + c.providerConfigs.backupManagers.length > 0) {
        pkg.addDependency(dependencyOn(PackageDependencyKind.PROVIDER, this.providerAnynines.packageRef));
      }
    }
    this.firstCatalogue ??= c;
    for (const n of c.providerConfigs.kubernetes) this.addProviderConfig(n);
    if (c.apiStyle.namespaced) for (const n of c.providerConfigs.kubernetes) this.addClusterProviderConfig(n);
    for (const n of c.providerConfigs.serviceBrokers) this.addProviderConfig(n, AnyninesServiceType.SERVICE_BROKER);
    for (const n of c.providerConfigs.backupManagers) this.addProviderConfig(n, AnyninesServiceType.BACKUP_MANAGER);
    this.registerExports();
    return c;
  }

  /** Where catalogues go: this chart, or the catalogue's package source (created on first use). */
  private catalogueScope(): Construct {
    const install = this.catalogueInstall.packageProps;
    if (!install) return this;
    if (!this.cataloguePackage) {
      const name = install.name ?? 'klutch-catalogue';
      const src = new ConfigurationPackageSource(this, 'CataloguePackage', {
        name,
        crossplaneVersion: install.crossplaneVersion,
        annotations: { 'meta.crossplane.io/description': 'The klutch-kit data-service catalogue: XRDs and Compositions.' },
      });
      const conf = new Configuration(this, 'CatalogueConfiguration', {
        package: install.package,
        name,
        skipDependencyResolution: install.skipDependencyResolution,
      });
      this.catalogueSource = src;
      this.catalogueConfig = conf;
    }
    return this.catalogueSource!;
  }

  /**
   * Adds a data service (e.g. one that is not in the catalogue) and makes it bindable. The same as
   * `new DataService(cp, id, props)`, which is prepared at synth, except that problems with the
   * backends' ProviderConfigs throw here.
   */
  public addDataService(id: string, props: DataServiceProps): DataService {
    const ds = new DataService(this, id, props);
    const problems = this.addProviderConfigsOf(ds);
    if (problems.length > 0) throw new Error(problems.join('; '));
    // Register just this export (a full scan per data service would make N additions cost O(N²)).
    this.backend.addExportedApi({ group: ds.exportTemplate.group, resource: ds.exportTemplate.resource });
    return ds;
  }

  /**
   * Adds a ProviderConfig once: provider-kubernetes (InjectedIdentity) when no service type is
   * given, else provider-anynines for the a9s endpoint with credentials from
   * `<name>-credentials` (keys `username`, `password`).
   */
  public addProviderConfig(name: string, anyninesType?: AnyninesServiceType): void {
    if (this.providerConfigNames.has(name)) return;
    if (anyninesType === undefined) {
      this.providerConfigNames.add(name);
      new KubernetesProviderConfig(this, `ProviderConfig-${name}`, { name });
      return;
    }
    const a = this.anynines;
    if (!a) throw new Error(`ControlPlaneClusterProps.anynines: undefined; the a9s ProviderConfig "${name}" needs endpoints (baseDomain) and credentials`);
    if (typeof a.baseDomain !== 'string' || !/^[a-z0-9.-]+$/.test(a.baseDomain)) {
      fail('ControlPlaneClusterProps.anynines.baseDomain', a.baseDomain, 'is not a domain name');
    }
    this.providerConfigNames.add(name); // only once it is emitted: a failed attempt fails again
    const ns = a.credentialsNamespace ?? CROSSPLANE_NAMESPACE;
    const secret = `${name}-credentials`;
    new AnyninesProviderConfig(this, `ProviderConfig-${name}`, {
      name,
      serviceType: anyninesType,
      url: a.urls?.[name] ?? `https://${name}.${a.baseDomain}`,
      username: { namespace: ns, name: secret, key: 'username' },
      password: { namespace: ns, name: secret, key: 'password' },
      healthCheckEndpoint: anyninesType === AnyninesServiceType.SERVICE_BROKER ? '/osb_ext/v1/healthy' : '/v2/healthy',
    });
  }

  /**
   * Adds a provider-kubernetes `ClusterProviderConfig` (`kubernetes.m.crossplane.io`) once, for the
   * namespaced `Object`s of namespaced XRs (InjectedIdentity), and lets provider-kubernetes manage
   * the credentials Secrets those Compositions compose (and read the a8s ones they copy).
   */
  public addClusterProviderConfig(name: string): void {
    const key = `cluster:${name}`;
    if (this.providerConfigNames.has(key)) return;
    this.providerConfigNames.add(key);
    new KubernetesProviderConfig(this, `ClusterProviderConfig-${name}`, { name, forNamespacedObjects: true });
    if (this.node.tryFindChild('ProviderKubernetesSecretsRole')) return;
    new k8s.KubeClusterRole(this, 'ProviderKubernetesSecretsRole', {
      metadata: { name: 'klutch-provider-kubernetes-secrets' },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }],
    });
    new k8s.KubeClusterRoleBinding(this, 'ProviderKubernetesSecretsRoleBinding', {
      metadata: { name: 'klutch-provider-kubernetes-secrets' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'klutch-provider-kubernetes-secrets' },
      subjects: [{ kind: 'ServiceAccount', name: 'provider-kubernetes', namespace: CROSSPLANE_NAMESPACE }],
    });
  }

  /**
   * Gives every export template in this chart a binder ClusterRole (idempotent). Synth does it for
   * every template; call it only to read `backend.exportedApis` before synth.
   */
  public registerExports(): void {
    this.scanned = undefined;
    for (const e of this.exports) this.backend.addExportedApi({ group: e.group, resource: e.resource });
  }

  /**
   * The ProviderConfigs the backends of a data service reference: a8s (provider-kubernetes) and a9s
   * (provider-anynines service broker) ones are added; for other automations a ProviderConfig of that
   * name must be in this chart. Returns the problems, each naming the backend and the ProviderConfig.
   */
  private addProviderConfigsOf(ds: DataService): string[] {
    const problems: string[] = [];
    for (const b of ds.backends) {
      const pc = (b as { providerConfigName?: unknown }).providerConfigName;
      if (typeof pc !== 'string') continue;
      const what = `DataService ${ds.node.path}: backend "${b.name}" (${b.automation}) references ProviderConfig "${pc}"`;
      if (b.automation === 'a8s' || b.automation === 'a9s') {
        try {
          this.addProviderConfig(pc, b.automation === 'a9s' ? AnyninesServiceType.SERVICE_BROKER : undefined);
          if (b.automation === 'a8s' && ds.apiStyle.namespaced) this.addClusterProviderConfig(pc);
        } catch (e) {
          problems.push(`${what}, which cannot be emitted: ${e instanceof Error ? e.message : String(e)}`);
        }
      } else if (
        !this.providerConfigNames.has(pc) &&
        !this.node.findAll().some((c) => c instanceof ApiObject && c.kind === 'ProviderConfig' && c.name === pc)
      ) {
        problems.push(`${what}, which nothing in control plane "${this.clusterName}" emits; add it to the chart (e.g. cp.addProviderConfig("${pc}"))`);
      }
    }
    return problems;
  }

  /** Synth-time preparation (a validation): ProviderConfigs of every data service, binder ClusterRoles of every export. */
  private prepareForSynth(): string[] {
    const problems: string[] = [];
    for (const c of this.node.findAll()) if (c instanceof DataService) problems.push(...this.addProviderConfigsOf(c));
    this.registerExports();
    const held = new Set(this.backend.exportedApis.map((e) => `${e.resource}.${e.group}`));
    for (const e of this.exports)
      if (!held.has(e.name)) problems.push(`APIServiceExportTemplate for ${e.name} has no binder ClusterRole, so the backend could not grant it`);
    return problems;
  }

  /** The APIs app clusters can bind: of every {@link IApiExport} in this chart (DataService, ApiServiceExportTemplate, …). */
  public get exports(): ExportedApiInfo[] {
    return [...this.scan().exports];
  }

  /** Claim APIs (kind, plural, group, referenceable version) from the XRDs in this chart. */
  public get claimApis(): ClaimApiInfo[] {
    return [...this.scan().claimApis];
  }

  /** Claim APIs of a kind (index built with the scan). */
  public claimApisOfKind(kind: string): readonly ClaimApiInfo[] {
    return this.scan().byKind.get(kind) ?? [];
  }

  /** One walk over the chart, cached until a construct is added at the top level of the chart. */
  private scan(): { exports: ExportedApiInfo[]; claimApis: ClaimApiInfo[]; byKind: Map<string, ClaimApiInfo[]> } {
    const children = this.node.children.length;
    if (this.scanned && this.scanned.children === children) return this.scanned;
    const templates = new Set<ApiServiceExportTemplate>();
    const claimApis: ClaimApiInfo[] = [];
    for (const c of this.node.findAll()) {
      if (isApiExport(c)) {
        templates.add(c.exportTemplate);
        continue;
      }
      if (!(c instanceof ApiObject) || c.kind !== 'CompositeResourceDefinition') continue;
      let info = this.infoCache.get(c);
      if (info === undefined) {
        info = xrdClaimInfo(c);
        this.infoCache.set(c, info);
      }
      if (info !== null) claimApis.push(info);
    }
    const exports = [...templates].map(exportInfo);
    exports.sort((a, b) => (a.name < b.name ? -1 : 1));
    const byKind = new Map<string, ClaimApiInfo[]>();
    for (const a of claimApis) byKind.set(a.kind, [...(byKind.get(a.kind) ?? []), a]);
    this.scanned = { children, exports, claimApis, byKind };
    return this.scanned;
  }
}

function exportInfo(t: ApiServiceExportTemplate): ExportedApiInfo {
  return { group: t.group, resource: t.resource, name: `${t.resource}.${t.group}`, permissionClaims: [...t.renderedPermissionClaims] };
}

function xrdClaimInfo(c: ApiObject): ClaimApiInfo | null {
  type Names = { kind: string; plural: string };
  const spec = (
    c.toJson() as { spec: { group: string; scope?: string; names: Names; claimNames?: Names; versions: { name: string; referenceable?: boolean }[] } }
  ).spec;
  const bound = spec.claimNames ?? (spec.scope === 'Namespaced' ? spec.names : undefined);
  if (!bound) return null;
  const version = (spec.versions.find((v) => v.referenceable) ?? spec.versions[0]).name;
  return { group: spec.group, version, kind: bound.kind, plural: bound.plural };
}
