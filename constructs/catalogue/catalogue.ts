/**
 * `Catalogue`: the Klutch catalogue as one construct — the instance data services and the instance
 * operations (ServiceBinding, Backup, Restore) chosen by props, each a `DataService` or
 * `InstanceOperation` created in it, with the ProviderConfigs its cluster provides.
 */
import { Construct } from 'constructs';
import type { CrossplaneVersion } from '../crossplane/index.js';
import { A9sBackend, ApiStyle, checkApiStyle, DataService, DataServiceProps } from '../dataservice/index.js';
import { keyvalue, logme2, mariadb, messaging, mongodb, prometheus, search } from './a9s-instances.js';
import { InstanceOperation, InstanceOperationProps } from './instance-operation.js';
import { backup, checkCredentialsSecretSuffix, INSTANCE_TYPES, restore, serviceBinding, type ServiceBindingOptions } from './operations.js';
import { postgresql } from './postgresql.js';
import { checkCatalogueProviderConfigs, type ICatalogueProviderConfigs, KLUTCH_PROVIDER_CONFIG_NAMES } from './provider-configs.js';

/** The instance data services of the Klutch catalogue. */
export const CATALOGUE_SERVICES = ['postgresql', 'keyvalue', 'mariadb', 'messaging', 'mongodb', 'search', 'logme2', 'prometheus'] as const;
export type CatalogueService = (typeof CATALOGUE_SERVICES)[number];

/** Operations on instances. */
export const CATALOGUE_OPERATIONS = ['servicebinding', 'backup', 'restore'] as const;
export type CatalogueOperation = (typeof CATALOGUE_OPERATIONS)[number];

/** Automation technologies. */
export const CATALOGUE_AUTOMATIONS = ['a8s', 'a9s'] as const;
export type CatalogueAutomation = (typeof CATALOGUE_AUTOMATIONS)[number];

const BUILDERS: Record<CatalogueService, (pcs: ICatalogueProviderConfigs) => DataServiceProps> = {
  postgresql,
  keyvalue,
  mariadb,
  messaging,
  mongodb,
  search,
  logme2,
  prometheus,
};
const OPERATIONS: Record<CatalogueOperation, (types: readonly string[], options: ServiceBindingOptions) => InstanceOperationProps> = {
  servicebinding: serviceBinding,
  backup: (types) => backup(types),
  restore: (types) => restore(types),
};

export interface CatalogueProps {
  /** Instance data services to add. @default - all of CATALOGUE_SERVICES */
  readonly services?: readonly CatalogueService[];
  /** Operations to add (for the chosen services). @default - all of CATALOGUE_OPERATIONS */
  readonly operations?: readonly CatalogueOperation[];
  /** Automation backends to include (a service left without a backend is an error). @default ['a8s', 'a9s'] */
  readonly automations?: readonly CatalogueAutomation[];
  /** Namespace of the APIServiceExportTemplates. @default 'crossplane-system' */
  readonly exportTemplateNamespace?: string;
  /**
   * Claims (`XPostgresqlInstance` + claim `PostgresqlInstance`, as Klutch's `main`) or namespaced
   * composite resources (`PostgresqlInstance` itself, as Klutch's Crossplane v2 branch). @default ApiStyle.CLAIMS
   */
  readonly apiStyle?: ApiStyle;
  /** The Crossplane release the catalogue targets; `ApiStyle.NAMESPACED_XR` needs 2.x. @default CrossplaneVersion.V2_3 */
  readonly crossplaneVersion?: CrossplaneVersion;
  /**
   * The ProviderConfigs the Compositions reference. `ControlPlaneCluster.addCatalogue` passes the
   * cluster, which emits each one asked for. @default KLUTCH_PROVIDER_CONFIG_NAMES - made elsewhere, Klutch's names
   */
  readonly providerConfigs?: ICatalogueProviderConfigs;
  /**
   * The end of a ServiceBinding's credentials Secret name, `<binding><suffix>`, in both API styles: the Secret the a9s
   * ServiceBinding writes and, with namespaced XRs, the one the a8s Composition composes; the ServiceBinding export
   * claims `*<suffix>` Secrets, and a namespaced binding's own `spec.writeConnectionSecretToRef.name` must end in it.
   * (The claims style's a8s Secret keeps the a8s operator's name, `<binding>-service-binding`.) `-` followed by
   * lowercase letters, digits and `-`.
   * @default '-creds' (Klutch's name)
   */
  readonly credentialsSecretSuffix?: string;
}

/** ProviderConfig names the catalogue's Compositions reference (what it asked `CatalogueProps.providerConfigs` for). */
export interface CatalogueProviderConfigs {
  /** provider-kubernetes (`kubernetes-provider`), when an a8s backend is included. */
  readonly kubernetes: string[];
  /** provider-anynines service brokers (`<ds>-service-broker`). */
  readonly serviceBrokers: string[];
  /** provider-anynines backup managers (`<ds>-backup-manager`). */
  readonly backupManagers: string[];
}

function pick<T extends string>(prop: string, given: readonly T[] | undefined, all: readonly T[]): T[] {
  if (given === undefined) return [...all];
  if (!Array.isArray(given)) throw new Error(`${prop}: ${JSON.stringify(given)} must be a list of ${all.join(', ')}`);
  for (const g of given) {
    if (!all.includes(g)) throw new Error(`${prop}: ${JSON.stringify(g)} is unknown; choose from ${all.join(', ')}`);
  }
  return all.filter((a) => given.includes(a));
}

/**
 * The Klutch catalogue (crossplane-api `anynines-dataservices`): PostgreSQL (a8s + a9s), KeyValue,
 * MariaDB, Messaging, MongoDB, Search, LogMe2, Prometheus (a9s), and ServiceBinding, Backup and
 * Restore (a8s for PostgreSQL + a9s) — with the same services, plans, parameters and rules.
 */
export class Catalogue extends Construct {
  /** Data services by name. */
  public readonly services: ReadonlyMap<CatalogueService, DataService>;
  /** Operations by name. */
  public readonly operations: ReadonlyMap<CatalogueOperation, InstanceOperation>;
  public readonly providerConfigs: CatalogueProviderConfigs;
  /** Claims or namespaced XRs. */
  public readonly apiStyle: ApiStyle;

  constructor(scope: Construct, id: string, props: CatalogueProps = {}) {
    super(scope, id);
    const { style, version } = checkApiStyle('CatalogueProps.apiStyle', props.apiStyle, 'CatalogueProps.crossplaneVersion', props.crossplaneVersion);
    this.apiStyle = style;
    const styleProps = { apiStyle: style, crossplaneVersion: version };
    const chosen = pick('CatalogueProps.services', props.services, CATALOGUE_SERVICES);
    const ops = pick('CatalogueProps.operations', props.operations, CATALOGUE_OPERATIONS);
    const bindingOptions: ServiceBindingOptions =
      props.credentialsSecretSuffix === undefined
        ? {}
        : { credentialsSecretSuffix: checkCredentialsSecretSuffix('CatalogueProps.credentialsSecretSuffix', props.credentialsSecretSuffix) };
    const autos = pick('CatalogueProps.automations', props.automations, CATALOGUE_AUTOMATIONS);
    if (chosen.length === 0 && ops.length > 0) throw new Error(`CatalogueProps.operations: ${JSON.stringify(ops)} need at least one service`);
    const given =
      props.providerConfigs === undefined
        ? KLUTCH_PROVIDER_CONFIG_NAMES
        : checkCatalogueProviderConfigs('CatalogueProps.providerConfigs', props.providerConfigs);
    // The builders make every backend; those of an automation left out are dropped below and must not
    // make the cluster emit their ProviderConfigs.
    const a9s = (autos as string[]).includes('a9s');
    const pcs: ICatalogueProviderConfigs = {
      serviceBroker: (s) => (a9s ? given : KLUTCH_PROVIDER_CONFIG_NAMES).serviceBroker(s),
      backupManager: (s) => given.backupManager(s),
      kubernetes: (st) => given.kubernetes(st),
    };
    const services = new Map<CatalogueService, DataService>();
    const brokers: string[] = [];
    let usesA8s = false;
    for (const name of chosen) {
      const p = BUILDERS[name](pcs);
      const backends = p.backends.filter((b) => (autos as string[]).includes(b.automation));
      if (backends.length === 0) {
        throw new Error(
          `CatalogueProps.automations: ${JSON.stringify(autos)} leaves service "${name}" without a backend (it has ${p.backends.map((b) => b.automation).join(', ')})`,
        );
      }
      usesA8s ||= backends.some((b) => b.automation === 'a8s');
      for (const b of backends) if (b instanceof A9sBackend) brokers.push(b.providerConfig.name);
      // Parameters of dropped backends go with them.
      const kept = backends.map((b) => b.name);
      const parameters = (p.parameters ?? [])
        .filter((x) => x.backends === undefined || x.backends.some((b) => kept.includes(b)))
        .map((x) => (x.backends === undefined ? x : { ...x, backends: x.backends.filter((b) => kept.includes(b)) }));
      services.set(
        name,
        new DataService(this, name, {
          ...p,
          backends,
          parameters,
          defaultBackend: backends[0].name,
          exportTemplateNamespace: props.exportTemplateNamespace,
          ...styleProps,
        }),
      );
    }
    const types = INSTANCE_TYPES.filter((t) => (chosen as string[]).includes(t));
    const operations = new Map<CatalogueOperation, InstanceOperation>();
    const managers: string[] = [];
    for (const op of ops) {
      const p = OPERATIONS[op](types, bindingOptions);
      const backends = p.backends.filter((b) => {
        if (!(autos as string[]).includes(b.automation)) return false;
        // An operation backend is kept only if some chosen service has a backend of the same automation for its types.
        return (b.types ?? types).some((t) => types.includes(t) && services.get(t as CatalogueService)?.backends.some((x) => x.automation === b.automation));
      });
      if (backends.length === 0)
        throw new Error(`CatalogueProps.automations: ${JSON.stringify(autos)} leaves operation "${op}" without a backend for ${types.join(', ')}`);
      if (backends.some((b) => b.automation === 'a8s')) usesA8s = true;
      if (op !== 'servicebinding' && backends.some((b) => b.automation === 'a9s')) {
        for (const t of chosen) if (services.get(t)?.backends.some((x) => x.automation === 'a9s') && !managers.includes(t)) managers.push(t);
      }
      operations.set(op, new InstanceOperation(this, op, { ...p, backends, exportTemplateNamespace: props.exportTemplateNamespace, ...styleProps }));
    }
    this.services = services;
    this.operations = operations;
    this.providerConfigs = {
      kubernetes: usesA8s ? [pcs.kubernetes(style).name] : [],
      serviceBrokers: brokers,
      backupManagers: managers.map((m) => pcs.backupManager(m).name),
    };
  }

  /** A data service by name. */
  public service(name: CatalogueService): DataService {
    const s = this.services.get(name);
    if (!s) throw new Error(`Catalogue.service(name): ${JSON.stringify(name)} is not in this catalogue (${[...this.services.keys()].join(', ')})`);
    return s;
  }
}
