/**
 * The control-plane cluster: Crossplane packages (provider-kubernetes, provider-anynines,
 * function-patch-and-transform) and their ProviderConfigs, the data-service catalogue, the binding
 * API CRDs, the bind backend and Dex.
 *
 * What the cluster exports is what is created in it: an `ApiServiceExportTemplate` (of a
 * `DataService`, a catalogue operation, or made by hand) with the cluster as its scope (at any depth)
 * registers itself when it is constructed, and the cluster grants it to its bind backend
 * (`template.grantBind(backend)`: one binder ClusterRole each); an XRD registers its claim API; a
 * `DataService` registers its backends' ProviderConfigs ({@link IProviderConfig} references, checked
 * to be this cluster's, the control plane's provider-kubernetes one emitted on demand). Nothing is
 * searched for in the tree. An AppCluster binding every export also binds one made after it.
 */
import { ApiObject, Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { ClusterRegistry, type DataServiceRecord, type ExportRecord } from '../_cluster-registry.js';
import { fail } from '../_errors.js';
import { isDnsSubdomain } from '../_names.js';
import { bindingCrds } from '../../contract/api/index.js';
import { Catalogue, CatalogueProps, type ICatalogueProviderConfigs } from '../catalogue/index.js';
import {
  AnyninesProviderConfig,
  AnyninesProviderFlavour,
  AnyninesServiceType,
  type AnyninesTls,
  type IProviderConfig,
  CrossplaneInstall,
  CrossplaneInstallProps,
  DeploymentRuntimeConfig,
  Function as XpFunction,
  KubernetesProviderConfig,
  Provider,
  PROVIDER_KUBERNETES_PACKAGE,
  PROVIDER_KUBERNETES_POLL,
  Configuration,
  ConfigurationPackageSource,
  dependencyOn,
  PackageDependencyKind,
} from '../crossplane/index.js';
import {
  ApiStyle,
  CONTROL_PLANE_KUBERNETES_CLUSTER_PROVIDER_CONFIG,
  CONTROL_PLANE_KUBERNETES_PROVIDER_CONFIG,
  DataService,
  DataServiceProps,
  KUBERNETES_PROVIDER_CONFIG,
} from '../dataservice/index.js';
import { KlutchMonitoring, type MonitoringOptions } from '../monitoring/index.js';
import {
  BackendHttpRouteProps,
  BindBackend,
  BindBackendProps,
  Dex,
  DexConnector,
  DexProps,
  type BindableApi,
  type IApiExport,
  PermissionClaim,
  SecretKeyRef,
} from '../runtime/index.js';
import { bindClusterRole } from '../runtime/_role-binding.js';
import { CatalogueInstall } from './catalogue-install.js';
import { ClusterChart, ClusterRole } from './cluster-chart.js';

/** provider-anynines as released with Klutch 1.5.0 (cluster-scoped managed resources, for claims). */
export const PROVIDER_ANYNINES_PACKAGE = AnyninesProviderFlavour.CLUSTER_SCOPED.defaultPackage;
/** provider-anynines of Klutch's Crossplane v2 branch (namespaced managed resources, for namespaced XRs; unreleased). */
export const PROVIDER_ANYNINES_NAMESPACED_PACKAGE = AnyninesProviderFlavour.NAMESPACED.defaultPackage;
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
  /**
   * TLS of the https endpoints (every a9s ProviderConfig whose URL is https; plain-http `urls` get none): the CA that
   * signed the brokers' and backup managers' certificates (`caBundleSecretRef`, a Secret key with PEM), or a server
   * name to verify. provider-anynines reads it as the ProviderConfig's `spec.tls`. @default - the system roots
   */
  readonly tls?: AnyninesTls;
}

/** Overrides for the bind backend of a {@link ControlPlaneCluster}. */
export interface ControlPlaneBackendProps extends Partial<BindBackendProps> {
  /**
   * Expose the backend (and Dex, path `/dex`) through a Gateway API HTTPRoute instead of an Ingress.
   * @default - an Ingress for `host` (`ingressClassName`, `tlsSecretName`)
   */
  readonly httpRoute?: BackendHttpRouteProps;
}

/** The Crossplane packages of a {@link ControlPlaneCluster}. */
export interface ControlPlanePackages {
  /** @default PROVIDER_KUBERNETES_PACKAGE */
  readonly providerKubernetes?: string;
  /**
   * provider-anynines. @default - the package of `providerAnyninesFlavour`: PROVIDER_ANYNINES_PACKAGE for claims,
   * PROVIDER_ANYNINES_NAMESPACED_PACKAGE for the namespaced API style
   */
  readonly providerAnynines?: string;
  /**
   * Which provider-anynines `providerAnynines` is: the scope of its managed resources. The a9s data services of this
   * cluster must compose for it (`ApiStyle.anyninesProvider`), else the synth fails naming both.
   * @default - the flavour of `providerAnynines` when it is one of klutch-kit's defaults, else the one the catalogue's API style needs
   */
  readonly providerAnyninesFlavour?: AnyninesProviderFlavour;
  /** @default function-patch-and-transform of klutch-kit's pin */
  readonly patchAndTransform?: string;
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
  readonly packages?: ControlPlanePackages;
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

/** What the backend and Dex share: where they run, the issuer, the OIDC client's Secret, the backend's route. */
interface OidcAccess {
  readonly backendNs: string;
  readonly clientSecret: SecretKeyRef;
  readonly issuerUrl: string;
  readonly route?: BackendHttpRouteProps;
}

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
  /** Which provider-anynines `providerAnynines` is (cluster-scoped or namespaced managed resources). */
  public readonly anyninesProvider: AnyninesProviderFlavour;
  public readonly patchAndTransform: XpFunction;
  /** The backend's monitoring, when `monitoring` is set. */
  public readonly monitoring?: KlutchMonitoring;
  /** The control plane's provider-kubernetes ProviderConfig (`kubernetes-provider`), the default of `A8sBackend`. */
  public readonly kubernetesProviderConfig: IProviderConfig;
  private readonly anynines?: AnyninesEndpoints;
  /** The ProviderConfigs this cluster emitted, by kind and name. */
  private readonly providerConfigs = new Map<string, IProviderConfig>();
  /** What the constructs created in this cluster registered: exports, claim APIs, data services. */
  private readonly registry: ClusterRegistry;
  /** What the catalogue's Compositions reference: this cluster's ProviderConfigs, emitted when asked for. */
  private readonly catalogueProviderConfigs: ICatalogueProviderConfigs = {
    serviceBroker: (service) => this.addProviderConfig(`${service}-service-broker`, AnyninesServiceType.SERVICE_BROKER),
    backupManager: (service) => this.addProviderConfig(`${service}-backup-manager`, AnyninesServiceType.BACKUP_MANAGER),
    kubernetes: (style) => (style.namespaced ? this.addClusterProviderConfig(KUBERNETES_PROVIDER_CONFIG) : this.kubernetesProviderConfig),
  };

  constructor(scope: Construct, id: string, props: ControlPlaneClusterProps) {
    const P = 'ControlPlaneClusterProps';
    if (!props || typeof props !== 'object') fail(P, props, 'must be an object with host and dex');
    super(scope, id, { clusterName: props.clusterName ?? 'control-plane' }, P);
    // Constructs created below this chart tell it what they export, offer and reference.
    this.registry = ClusterRegistry.ofChart(this);
    this.registry.listen({
      onExport: (e) => this.backend?.addBindableApi(e as BindableApi), // no backend only while the constructor has not made it yet (see below)
      onDataService: (d) => this.checkProviderConfigsOf(d),
    });
    const checked = ControlPlaneCluster.checkProps(props);
    this.host = checked.host;
    this.anynines = props.anynines;
    this.catalogueInstall = checked.catalogueInstall;

    this.addBindingCrds();
    const xp = this.addCrossplane(props);
    this.crossplane = xp.install;
    this.providerKubernetes = xp.providerKubernetes;
    this.providerAnynines = xp.providerAnynines;
    this.anyninesProvider = xp.anyninesProvider;
    this.patchAndTransform = xp.patchAndTransform;
    this.kubernetesProviderConfig = this.addProviderConfig(KUBERNETES_PROVIDER_CONFIG);

    const access = this.oidcAccess(props);
    this.backend = this.addBackend(props, access);
    if (props.monitoring) this.monitoring = new KlutchMonitoring(this, 'Monitoring', { ...props.monitoring, backend: this.backend });
    if (props.dex !== false) this.dex = this.addDex(props.dex, access, props);

    if (props.catalogue !== false) this.addCatalogue('Catalogue', props.catalogue ?? {});
  }

  /** The props checked before anything is created: the host, `dex` given, the catalogue's install method. */
  private static checkProps(props: ControlPlaneClusterProps): { host: string; catalogueInstall: CatalogueInstall } {
    const P = 'ControlPlaneClusterProps';
    if (!isDnsSubdomain(props.host, 1)) {
      fail(`${P}.host`, props.host, 'is not a fully qualified host name (e.g. "bind.example.com")');
    }
    if (props.dex === undefined) throw new Error(`${P}.dex: undefined; give Dex connectors, or false to use an external OIDC issuer via backend.oidc`);
    if (props.catalogueInstall !== undefined && !(props.catalogueInstall instanceof CatalogueInstall)) {
      fail(`${P}.catalogueInstall`, props.catalogueInstall, 'must be CatalogueInstall.OBJECTS or CatalogueInstall.configurationPackage({ package })');
    }
    return { host: props.host, catalogueInstall: props.catalogueInstall ?? CatalogueInstall.OBJECTS };
  }

  /** The binding API CRDs (klutch.anynines.com + the template CRD). */
  private addBindingCrds(): void {
    for (const crd of bindingCrds()) {
      new ApiObject(this, `Crd-${crd.metadata.name}`, crd as never);
    }
  }

  /**
   * Crossplane itself, then its packages; provider-kubernetes (InjectedIdentity) gets exactly the a8s
   * resources it composes — not cluster-admin.
   */
  private addCrossplane(props: ControlPlaneClusterProps): {
    install: CrossplaneInstall;
    providerKubernetes: Provider;
    providerAnynines: Provider;
    anyninesProvider: AnyninesProviderFlavour;
    patchAndTransform: XpFunction;
  } {
    const install = new CrossplaneInstall(this, 'Crossplane', { namespace: CROSSPLANE_NAMESPACE, ...props.crossplane });
    const providerKubernetes = new Provider(this, 'ProviderKubernetes', {
      package: props.packages?.providerKubernetes ?? PROVIDER_KUBERNETES_PACKAGE,
      name: 'provider-kubernetes',
      runtimeConfig: new DeploymentRuntimeConfig(this, 'ProviderKubernetesRuntime', {
        name: 'provider-kubernetes',
        serviceAccountName: 'provider-kubernetes',
        args: [`--poll=${PROVIDER_KUBERNETES_POLL}`],
      }),
    });
    const anyninesProvider = ControlPlaneCluster.anyninesProviderOf(props);
    const providerAnynines = new Provider(this, 'ProviderAnynines', {
      package: props.packages?.providerAnynines ?? anyninesProvider.defaultPackage,
      name: 'provider-anynines',
    });
    const patchAndTransform = XpFunction.patchAndTransform(this, 'FunctionPatchAndTransform', {
      ...(props.packages?.patchAndTransform ? { package: props.packages.patchAndTransform } : {}),
      name: 'function-patch-and-transform',
    });
    const a8sRole = new kplus.k8s.KubeClusterRole(this, 'ProviderKubernetesRole', {
      metadata: { name: 'klutch-provider-kubernetes-a8s' },
      rules: A8S_MANAGED.map((m) => ({ apiGroups: [m.group], resources: m.resources, verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] })),
    });
    bindClusterRole(
      this,
      'ProviderKubernetesRoleBinding',
      kplus.ClusterRole.fromClusterRoleName(this, 'ProviderKubernetesRoleRef', a8sRole.name),
      PROVIDER_KUBERNETES_SA,
      {
        name: 'klutch-provider-kubernetes-a8s',
      },
    );
    return { install, providerKubernetes, providerAnynines, anyninesProvider, patchAndTransform };
  }

  /**
   * The provider-anynines flavour to install: `packages.providerAnyninesFlavour`, else that of a default package given,
   * else the one the catalogue's API style composes for (claims when there is no catalogue).
   */
  private static anyninesProviderOf(props: ControlPlaneClusterProps): AnyninesProviderFlavour {
    const P = 'ControlPlaneClusterProps.packages';
    const given = props.packages?.providerAnyninesFlavour;
    if (given !== undefined && !(given instanceof AnyninesProviderFlavour)) {
      fail(`${P}.providerAnyninesFlavour`, given, 'must be AnyninesProviderFlavour.CLUSTER_SCOPED or AnyninesProviderFlavour.NAMESPACED');
    }
    const pkg = props.packages?.providerAnynines;
    const known = pkg === undefined ? undefined : AnyninesProviderFlavour.ofPackage(pkg);
    if (given && known && given !== known) {
      fail(`${P}.providerAnyninesFlavour`, given.value, `contradicts ${P}.providerAnynines ${pkg}, which is ${known.describe()}`);
    }
    const style = props.catalogue ? props.catalogue.apiStyle : undefined;
    return given ?? known ?? (style instanceof ApiStyle ? style : ApiStyle.CLAIMS).anyninesProvider;
  }

  /** Where the backend and Dex run and how the backend signs users in (an error when `dex: false` leaves no issuer). */
  private oidcAccess(props: ControlPlaneClusterProps): OidcAccess {
    const issuerUrl = props.dex === false ? props.backend?.oidc?.issuerUrl : `https://${this.host}/dex`;
    if (!issuerUrl) throw new Error(`ControlPlaneClusterProps.backend.oidc.issuerUrl: undefined; with dex: false the backend needs an external issuer`);
    return {
      backendNs: props.backend?.namespace ?? 'klutch-system',
      clientSecret: props.oidcClientSecret ?? { name: 'klutch-oidc', key: 'client-secret' },
      issuerUrl,
      route: props.backend?.httpRoute,
    };
  }

  /** The bind backend, granted the exports made so far, exposed through the HTTPRoute or an Ingress. */
  private addBackend(props: ControlPlaneClusterProps, access: OidcAccess): BindBackend {
    const cookieSecret = props.cookieSecretName ?? 'klutch-cookies';
    const { httpRoute: _route, ...backendProps } = props.backend ?? {};
    const backend = new BindBackend(this, 'Backend', {
      namespace: access.backendNs,
      externalAddress: props.externalAddress,
      ...backendProps,
      oidc: {
        issuerUrl: access.issuerUrl,
        clientId: 'klutch-backend',
        clientSecret: access.clientSecret,
        callbackUrl: `https://${this.host}/callback`,
        ...props.backend?.oidc,
      },
      cookies: props.backend?.cookies ?? {
        signingKey: { name: cookieSecret, key: 'signing-key' },
        encryptionKey: { name: cookieSecret, key: 'encryption-key' },
      },
    });
    // Export templates created before the backend (by a subclass) are granted now.
    for (const e of this.registry.exports) backend.addBindableApi(e as BindableApi);
    if (access.route) backend.exposeViaHttpRoute(access.route);
    else backend.exposeViaIngress({ host: this.host, className: props.ingressClassName, tlsSecretName: props.tlsSecretName });
    return backend;
  }

  /** Dex as the backend's issuer at `https://<host>/dex`, routed like the backend. */
  private addDex(dexProps: Exclude<ControlPlaneClusterProps['dex'], false>, access: OidcAccess, props: ControlPlaneClusterProps): Dex {
    const { backendNs, clientSecret, issuerUrl, route } = access;
    const { connectors, ...dexRest } = dexProps;
    const dex = new Dex(this, 'Dex', {
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
          rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/dex' } }], backendRefs: [{ name: dex.name, port: 5556 }] }],
        },
      });
    } else {
      new kplus.k8s.KubeIngress(this, 'DexIngress', {
        metadata: { name: 'dex', namespace: backendNs },
        spec: {
          ...(props.ingressClassName ? { ingressClassName: props.ingressClassName } : {}),
          ...(props.tlsSecretName ? { tls: [{ hosts: [this.host], secretName: props.tlsSecretName }] } : {}),
          rules: [
            {
              host: this.host,
              http: { paths: [{ path: '/dex', pathType: 'Prefix', backend: { service: { name: dex.name, port: { name: 'http' } } } }] },
            },
          ],
        },
      });
    }
    return dex;
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

  /** Adds the Klutch catalogue (or a part of it); its Compositions reference this cluster's ProviderConfigs, emitted as they are asked for. */
  public addCatalogue(id: string, props: CatalogueProps = {}): Catalogue {
    // The catalogue targets this cluster's Crossplane: namespaced XRs on a 1.20 install fail here, naming both props.
    const c = new Catalogue(this.catalogueScope(), id, {
      crossplaneVersion: this.crossplane.version,
      providerConfigs: this.catalogueProviderConfigs,
      ...props,
    });
    const pkg = this.cataloguePackage;
    if (pkg) {
      // The package needs what its Compositions use; the chart installs them too.
      pkg.addDependency(dependencyOn(PackageDependencyKind.FUNCTION, this.patchAndTransform.packageRef));
      if (c.providerConfigs.kubernetes.length > 0) pkg.addDependency(dependencyOn(PackageDependencyKind.PROVIDER, this.providerKubernetes.packageRef));
      // A tag that is no version (the v2 branch's KLT-877) cannot be a dependency's semver constraint: the Provider object installs it.
      if (c.providerConfigs.serviceBrokers.length + c.providerConfigs.backupManagers.length > 0 && isVersionTagged(this.providerAnynines.packageRef)) {
        pkg.addDependency(dependencyOn(PackageDependencyKind.PROVIDER, this.providerAnynines.packageRef));
      }
    }
    this.firstCatalogue ??= c;
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
   * Adds a data service (e.g. one that is not in the catalogue): the same as
   * `new DataService(cp, id, props)`. Either way the data service registers itself with this cluster
   * when it is constructed: its export is granted to the bind backend, its claim API is offered, and
   * its backends' ProviderConfigs are checked (an error names the backend and the ProviderConfig).
   */
  public addDataService(id: string, props: DataServiceProps): DataService {
    return new DataService(this, id, props);
  }

  /**
   * A ProviderConfig of this cluster, emitted once: provider-kubernetes (InjectedIdentity) when no
   * service type is given, else provider-anynines for the a9s endpoint with credentials from
   * `<name>-credentials` (keys `username`, `password`). Pass the result to a backend
   * (`new A9sBackend({ providerConfig: cp.addProviderConfig('clickhouse-service-broker', AnyninesServiceType.SERVICE_BROKER) })`).
   */
  public addProviderConfig(name: string, anyninesType?: AnyninesServiceType): IProviderConfig {
    const key = `ProviderConfig/${name}`;
    const had = this.providerConfigs.get(key);
    if (had) {
      const wanted = anyninesType === undefined ? 'provider-kubernetes' : `provider-anynines ${anyninesType.value}`;
      const is = had instanceof AnyninesProviderConfig ? `provider-anynines ${had.serviceType.value}` : 'provider-kubernetes';
      if (wanted !== is)
        fail('ControlPlaneCluster.addProviderConfig(name)', name, `is already a ${is} ProviderConfig of this cluster; a ${wanted} one needs another name`);
      return had;
    }
    let pc: IProviderConfig;
    if (anyninesType === undefined) {
      pc = new KubernetesProviderConfig(this, `ProviderConfig-${name}`, { name });
    } else {
      const a = this.anynines;
      if (!a) throw new Error(`ControlPlaneClusterProps.anynines: undefined; the a9s ProviderConfig "${name}" needs endpoints (baseDomain) and credentials`);
      if (typeof a.baseDomain !== 'string' || !/^[a-z0-9.-]+$/.test(a.baseDomain)) {
        fail('ControlPlaneClusterProps.anynines.baseDomain', a.baseDomain, 'is not a domain name');
      }
      const ns = a.credentialsNamespace ?? CROSSPLANE_NAMESPACE;
      const secret = `${name}-credentials`;
      pc = new AnyninesProviderConfig(this, `ProviderConfig-${name}`, {
        name,
        serviceType: anyninesType,
        url: a.urls?.[name] ?? `https://${name}.${a.baseDomain}`,
        username: { namespace: ns, name: secret, key: 'username' },
        password: { namespace: ns, name: secret, key: 'password' },
        healthCheckEndpoint: anyninesType === AnyninesServiceType.SERVICE_BROKER ? '/osb_ext/v1/healthy' : '/v2/healthy',
        ...(a.tls && !(a.urls?.[name] ?? 'https:').startsWith('http:') ? { tls: a.tls } : {}),
      });
    }
    this.providerConfigs.set(key, pc); // only once it is emitted: a failed attempt fails again
    return pc;
  }

  /**
   * A provider-kubernetes `ClusterProviderConfig` (`kubernetes.m.crossplane.io`) of this cluster,
   * emitted once, for the namespaced `Object`s of namespaced XRs (InjectedIdentity); the first one
   * also lets provider-kubernetes manage the credentials Secrets those Compositions compose (and
   * read the a8s ones they copy).
   */
  public addClusterProviderConfig(name: string): IProviderConfig {
    const key = `ClusterProviderConfig/${name}`;
    const had = this.providerConfigs.get(key);
    if (had) return had;
    const pc = new KubernetesProviderConfig(this, `ClusterProviderConfig-${name}`, { name, forNamespacedObjects: true });
    this.providerConfigs.set(key, pc);
    if (this.node.tryFindChild('ProviderKubernetesSecretsRole')) return pc;
    const role = new kplus.k8s.KubeClusterRole(this, 'ProviderKubernetesSecretsRole', {
      metadata: { name: 'klutch-provider-kubernetes-secrets' },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }],
    });
    bindClusterRole(
      this,
      'ProviderKubernetesSecretsRoleBinding',
      kplus.ClusterRole.fromClusterRoleName(this, 'ProviderKubernetesSecretsRoleRef', role.name),
      PROVIDER_KUBERNETES_SA,
      { name: 'klutch-provider-kubernetes-secrets' },
    );
    return pc;
  }

  /**
   * The ProviderConfigs the backends of a data service in this cluster reference: the control
   * plane's provider-kubernetes ones are emitted here (the ClusterProviderConfig on first use); one
   * emitted by another cluster is an error naming the data service, the backend and both clusters;
   * one made elsewhere (`ProviderConfig.fromName`) is the user's to create.
   */
  private checkProviderConfigsOf(ds: DataServiceRecord): void {
    const a9s = ds.backends.find((b) => b.automation === 'a9s');
    const style = ApiStyle.all.find((s) => s.value === ds.apiStyle) ?? ApiStyle.CLAIMS;
    const needed = style.anyninesProvider;
    if (a9s && needed !== this.anyninesProvider) {
      throw new Error(
        `DataService ${ds.path}: its a9s backend "${a9s.name}" (API style ${style.value}) composes the managed resources of ` +
          `${needed.describe()}, but control plane "${this.clusterName}" installs ${this.anyninesProvider.describe(this.providerAnynines.packageRef)}; ` +
          `${needed.value === 'Namespaced' ? 'namespaced composite resources compose only namespaced resources' : 'claims compose its cluster-scoped resources'}. ` +
          `Give the a9s data services one API style, and set ControlPlaneClusterProps.packages.providerAnynines (and providerAnyninesFlavour: ` +
          `AnyninesProviderFlavour.${needed === AnyninesProviderFlavour.NAMESPACED ? 'NAMESPACED' : 'CLUSTER_SCOPED'}) to a package of that provider, or leave them unset`,
      );
    }
    for (const b of ds.backends) {
      for (const pc of b.providerConfigs) {
        if (pc === CONTROL_PLANE_KUBERNETES_PROVIDER_CONFIG) continue; // emitted by the constructor
        if (pc === CONTROL_PLANE_KUBERNETES_CLUSTER_PROVIDER_CONFIG) {
          this.addClusterProviderConfig(pc.name);
          continue;
        }
        if (pc.apiObject === undefined) continue;
        const owner = Chart.of(pc.apiObject);
        if (owner !== this) {
          const where = ClusterChart.isClusterChart(owner) ? `cluster "${owner.clusterName}"` : `chart ${owner.node.path}`;
          throw new Error(
            `DataService ${ds.path}: backend "${b.name}" (${b.automation}) references ${pc.kind} "${pc.name}" of ${where}, ` +
              `not of control plane "${this.clusterName}"; use cp.addProviderConfig("${pc.name}") of this cluster, or ProviderConfig.fromName() for one made elsewhere`,
          );
        }
      }
    }
  }

  /** The APIs app clusters can bind: every APIServiceExportTemplate created in this cluster (of a DataService, an operation, or by hand), by name. */
  public get exports(): ExportedApiInfo[] {
    return this.registry.exports.map(exportInfo).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Calls `f` for every export made in this cluster from now on (an `AppCluster` binding every export). */
  public onExport(f: (e: ExportedApiInfo) => void): void {
    this.registry.listen({ onExport: (e) => f(exportInfo(e)) });
  }

  /** The export of `api` (a DataService, a catalogue operation, an export template) when it was created in this cluster, else undefined. */
  public exportOf(api: IApiExport): ExportedApiInfo | undefined {
    const e = this.registry.exports.find((x) => x === api.bindableApi);
    return e ? exportInfo(e) : undefined;
  }

  /** Claim APIs (kind, plural, group, referenceable version) of the XRDs created in this cluster. */
  public get claimApis(): ClaimApiInfo[] {
    return [...this.registry.claimApis];
  }

  /** Claim APIs of a kind. */
  public claimApisOfKind(kind: string): readonly ClaimApiInfo[] {
    return this.registry.claimApis.filter((a) => a.kind === kind);
  }
}

/** True when a package reference's tag is a semantic version (`…:v1.5.0`), which a dependency constraint can name. */
function isVersionTagged(ref: string): boolean {
  const tag = /:([^/:@]+)$/.exec(ref)?.[1];
  return tag === undefined || /^v?\d+\.\d+\.\d+([-+].*)?$/.test(tag);
}

/** provider-kubernetes' ServiceAccount (named by its DeploymentRuntimeConfig). */
const PROVIDER_KUBERNETES_SA = { name: 'provider-kubernetes', namespace: CROSSPLANE_NAMESPACE };

function exportInfo(e: ExportRecord): ExportedApiInfo {
  return { group: e.group, resource: e.resource, name: `${e.resource}.${e.group}`, permissionClaims: [...e.permissionClaims] as PermissionClaim[] };
}
