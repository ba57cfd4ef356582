/**
 * `DataService`: the way to add a data service — its XRD (plans, services, parameters, CEL rules), one
 * Composition per backend and the APIServiceExportTemplate that makes its claims bindable; it registers
 * its names and ProviderConfigs with the cluster it is created in.
 */
import { ClusterRegistry } from '../_cluster-registry.js';
import { Construct } from 'constructs';
import { ApiServiceExportTemplate, type BindableApi, type IApiExport, type IBindGrantee } from '../runtime/api-service-export-template.js';
import type { PermissionClaim } from '../runtime/permission-claim.js';
import { OFFERING_ANNOTATION, type Offering } from '../../contract/api/offering.js';
import { CompositeDeletePolicy, CompositeResourceDefinition, Composition, CrossplaneVersion, PatchAndTransformStep, XrdScope } from '../crossplane/index.js';
import { ApiStyle, checkApiStyle } from './api-style.js';
import { Backend, DataServiceModel, ServiceOffering } from './backend.js';
import { Parameter, ParameterLocation, ParameterProps } from './parameter.js';
import { Plan, PlanSet } from './plan.js';
import { PlanChange, TopologyChange } from './topology.js';
import { planRules, RulePolicy, serviceRules, specRules } from './_rules.js';
import { checkDnsLabel, checkStringList, copyJson, fail, isDnsSubdomain, isPlainObject, show } from './_util.js';

/** The default size order (smallest first) used to derive upgrade paths. */
export const DEFAULT_SIZE_ORDER: readonly string[] = ['nano', 'small', 'medium', 'big'];

/** Namespace the bind backend conventionally reads APIServiceExportTemplates from. */
export const DEFAULT_EXPORT_TEMPLATE_NAMESPACE = 'crossplane-system';
/**
 * The claim's `Message` printer column: the message of the composed resource's `ReconcileError` condition (its
 * `Synced` False), which the backends copy into `status.managed.conditions` — e.g. provider-anynines' "create
 * failed: <the broker's description>" when a service broker refuses a provision.
 */
export const MANAGED_MESSAGE_COLUMN = { name: 'Message', jsonPath: ".status.managed.conditions[?(@.reason=='ReconcileError')].message" } as const;

export interface DataServiceProps {
  /** API group of the XR and claim, e.g. `anynines.com`. */
  readonly group: string;
  /** API version. @default 'v1' */
  readonly version?: string;
  /** Composite resource kind with claims, e.g. `XPostgresqlInstance` (unused with `ApiStyle.NAMESPACED_XR`). */
  readonly kind: string;
  /**
   * The kind app clusters bind, e.g. `PostgresqlInstance`: the claim kind, or with
   * `ApiStyle.NAMESPACED_XR` the kind of the namespaced composite resource itself.
   */
  readonly claimKind: string;
  /**
   * Claims (an `apiextensions.crossplane.io/v1` XRD with claimNames) or namespaced composite
   * resources (a v2 XRD, `scope: Namespaced`, Crossplane 2.x only), rendered from the same plans,
   * parameters and backends. @default ApiStyle.CLAIMS
   */
  readonly apiStyle?: ApiStyle;
  /** The Crossplane release the output targets; `ApiStyle.NAMESPACED_XR` needs 2.x. @default CrossplaneVersion.V2_3 */
  readonly crossplaneVersion?: CrossplaneVersion;
  /** @default - kind in lower case + "s" */
  readonly plural?: string;
  /** @default - claim kind in lower case + "s" */
  readonly claimPlural?: string;
  /** Human name used in messages, e.g. `postgresql`. @default - claim kind in lower case */
  readonly label?: string;
  /** The plans. */
  readonly plans: readonly Plan[];
  /** Size names from smallest to biggest; derives default upgrade paths. @default DEFAULT_SIZE_ORDER */
  readonly sizeOrder?: readonly string[];
  /** The services (versions) offered, with their plans. */
  readonly services: readonly ServiceOffering[];
  /** Parameters under `spec.parameters`. @default - none */
  readonly parameters?: readonly ParameterProps[];
  /** Extra top-level `spec` fields (e.g. `expose`). @default - none */
  readonly fields?: readonly ParameterProps[];
  /** Automation backends; each emits one Composition named after it. */
  readonly backends: readonly Backend[];
  /** Name of the backend used when a claim names no composition. @default - the first backend */
  readonly defaultBackend?: string;
  /** @default PlanChange.UPGRADE_ONLY */
  readonly planChange?: PlanChange;
  /** @default TopologyChange.SCALE_OUT_ONLY */
  readonly topologyChange?: TopologyChange;
  /** Plan flags that may not change on update. @default - every flag some plan carries */
  readonly immutableFlags?: readonly string[];
  /** Offer `spec.acceptsIncomplete` (asynchronous broker operations). @default true */
  readonly acceptsIncomplete?: boolean;
  /** @default CompositeDeletePolicy.FOREGROUND */
  readonly deletePolicy?: CompositeDeletePolicy;
  /** Add the `ManagedResource` printer column (`.status.managed.state`). @default true */
  readonly managedStateColumn?: boolean;
  /**
   * Add the `Message` printer column (`MANAGED_MESSAGE_COLUMN`): the composed resource's reconcile error as its
   * provider reports it, e.g. the service broker's description of a refused provision, copied into the claim's
   * `status.managed.conditions` by the backends. @default true
   */
  readonly managedMessageColumn?: boolean;
  /** Extra permission claims of the APIServiceExportTemplate (backends add their own). @default - none */
  readonly permissionClaims?: readonly PermissionClaim[];
  /** Namespace of the APIServiceExportTemplate. @default 'crossplane-system' */
  readonly exportTemplateNamespace?: string;
  /** Description of the claim's `spec.plan`. @default - generic */
  readonly planDescription?: string;
  /** Description of the claim's `spec.service`. @default - generic */
  readonly serviceDescription?: string;
}

const KIND = /^[A-Z][A-Za-z0-9]*$/;

/**
 * A data service as other constructs take it (its reference type, as aws-cdk-lib's `IQueue` or
 * cdk8s-plus' `IRole`): the API it exports, the validated model and the automation backends. A
 * `DataService` is one; an L3 of your own that wraps one can implement it by delegating.
 */
export interface IDataService extends IApiExport {
  /** The validated model (group, version, kinds, plans, services, parameters, API style). */
  readonly model: DataServiceModel;
  /** The automation backends, one Composition each. */
  readonly backends: readonly Backend[];
  /** Claims or namespaced XRs. */
  readonly apiStyle: ApiStyle;
  /** Name of the CRD the app clusters get (`<claimPlural>.<group>`). */
  readonly claimCrdName: string;
}

/**
 * A data service offered to app clusters: emits the XRD (with claims, plan/service enums and CEL
 * rules), one Composition per automation backend, and the `APIServiceExportTemplate` that makes the
 * claim bindable.
 */
export class DataService extends Construct implements IDataService {
  public readonly xrd: CompositeResourceDefinition;
  /** Compositions by backend name. */
  public readonly compositions: ReadonlyMap<string, Composition>;
  /** The APIServiceExportTemplate making the claim CRD bindable. */
  public readonly exportTemplate: ApiServiceExportTemplate;
  /** The validated model (plans, services, parameters). */
  public readonly model: DataServiceModel;
  public readonly backends: readonly Backend[];
  public readonly defaultBackend: string;
  /** Claims or namespaced XRs. */
  public readonly apiStyle: ApiStyle;

  constructor(scope: Construct, id: string, props: DataServiceProps) {
    super(scope, id);
    const P = 'DataServiceProps';
    if (!isPlainObject(props)) fail(P, props, 'must be an object');
    if (!isDnsSubdomain(props.group, 1)) {
      fail(`${P}.group`, props.group, 'must be a DNS subdomain with at least one dot (e.g. "anynines.com")');
    }
    const { style } = checkApiStyle(`${P}.apiStyle`, props.apiStyle, `${P}.crossplaneVersion`, props.crossplaneVersion);
    this.apiStyle = style;
    const { version, plural, claimPlural, label } = checkNames(P, props);

    // Plans and services.
    const plans = new PlanSet(`${P}.plans`, props.plans, props.sizeOrder ?? DEFAULT_SIZE_ORDER);
    const services = checkServices(P, props.services, plans);

    // Parameters.
    const parameters = checkParameters(P, props);

    // Backends.
    const backendNames = checkBackends(P, props.backends, services, plans, parameters);
    this.defaultBackend = props.defaultBackend ?? backendNames[0];
    if (!backendNames.includes(this.defaultBackend))
      fail(`${P}.defaultBackend`, props.defaultBackend, `is an unknown backend; backends: ${backendNames.join(', ')}`);
    this.backends = [...props.backends];

    const { planChange, topologyChange, immutableFlags } = checkChanges(P, props, plans);

    const acceptsIncomplete = props.acceptsIncomplete ?? true;
    const kind = style.namespaced ? props.claimKind : props.kind;
    this.model = {
      group: props.group,
      version,
      kind,
      claimKind: props.claimKind,
      claimPlural,
      plans,
      services,
      parameters,
      acceptsIncomplete,
      apiStyle: style,
    };
    checkBackendOffers(P, this.backends, this.model);
    const policy: RulePolicy = { planChange, topologyChange, immutableFlags, label, defaultBackend: this.defaultBackend, apiStyle: style };

    const spec = claimSpecSchema(props, this.model, this.backends, policy);

    if (style.namespaced && props.deletePolicy !== undefined) {
      fail(`${P}.deletePolicy`, props.deletePolicy.value, `only applies to claims, but ${P}.apiStyle is ${style.value}; remove it`);
    }
    this.xrd = this.addXrd(props, spec, plural, claimPlural, version);
    this.compositions = this.addCompositions();

    // APIServiceExportTemplate.
    const claims = permissionClaimsOf(props.permissionClaims, this.backends, this.model);
    const offering = offeringOf(this.model, this.backends, this.defaultBackend);
    this.exportTemplate = new ApiServiceExportTemplate(this, 'ExportTemplate', {
      group: props.group,
      resource: claimPlural,
      version,
      permissionClaims: claims,
      namespace: props.exportTemplateNamespace ?? DEFAULT_EXPORT_TEMPLATE_NAMESPACE,
      annotations: { [OFFERING_ANNOTATION]: JSON.stringify(offering) },
    });

    // Unique in the cluster: kinds, resources, backends' Compositions, the export template.
    // and the ProviderConfigs its backends use, which a control plane emits or checks.
    ClusterRegistry.of(this).registerDataService({
      path: this.node.path,
      group: props.group,
      kind,
      plural: style.namespaced ? claimPlural : plural,
      claimKind: props.claimKind,
      claimPlural,
      backends: this.backends.map((b) => ({ name: b.name, automation: `${b.automation}`, providerConfigs: b.providerConfigs(this.model) })),
      exportTemplate: { namespace: props.exportTemplateNamespace ?? DEFAULT_EXPORT_TEMPLATE_NAMESPACE, name: claimPlural },
      apiStyle: style.value,
    });
  }

  /** The XRD: claims (or namespaced XRs) with the given `spec` schema and the managed-state column. */
  private addXrd(props: DataServiceProps, spec: Record<string, unknown>, plural: string, claimPlural: string, version: string): CompositeResourceDefinition {
    const style = this.apiStyle;
    return new CompositeResourceDefinition(this, 'Definition', {
      group: props.group,
      ...(style.namespaced
        ? { scope: XrdScope.NAMESPACED, names: { kind: props.claimKind, plural: claimPlural } }
        : {
            names: { kind: props.kind, plural },
            claimNames: { kind: props.claimKind, plural: claimPlural },
            defaultCompositeDeletePolicy: props.deletePolicy ?? CompositeDeletePolicy.FOREGROUND,
          }),
      defaultCompositionName: this.defaultBackend,
      versions: [
        {
          name: version,
          served: true,
          referenceable: true,
          schema: {
            type: 'object',
            properties: {
              spec,
              status: { type: 'object', properties: { managed: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
            },
          },
          additionalPrinterColumns: [
            ...((props.managedStateColumn ?? true) ? [{ name: 'ManagedResource', jsonPath: '.status.managed.state' }] : []),
            ...((props.managedMessageColumn ?? true) ? [MANAGED_MESSAGE_COLUMN] : []),
          ],
        },
      ],
    });
  }

  /** One Composition per backend, named after it. */
  private addCompositions(): Map<string, Composition> {
    const compositions = new Map<string, Composition>();
    for (const b of this.backends) {
      const step = new PatchAndTransformStep();
      b.compose(step, this.model);
      compositions.set(b.name, new Composition(this, `Composition-${b.name}`, { name: b.name, compositeTypeRef: this.xrd, pipeline: [step] }));
    }
    return compositions;
  }

  /** The API this data service exports (its template's). */
  public get bindableApi(): BindableApi {
    return this.exportTemplate.bindableApi;
  }

  /** Lets `grantee` (a `BindBackend`) hand this API and its permission claims out to consumers. */
  public grantBind(grantee: IBindGrantee): void {
    this.exportTemplate.grantBind(grantee);
  }

  /** The Composition of a backend. */
  public composition(backend: string): Composition {
    const c = this.compositions.get(backend);
    if (!c) fail('DataService.composition(backend)', backend, `is an unknown backend; backends: ${[...this.compositions.keys()].join(', ')}`);
    return c;
  }

  /** Name of the CRD the app clusters get (`<claimPlural>.<group>`): the claim CRD, or the namespaced XR's CRD. */
  public get claimCrdName(): string {
    return `${this.model.claimPlural}.${this.model.group}`;
  }
}

/** `props.services`: each service's plans (all plans unless listed), every plan defined. */
function checkServices(P: string, list: DataServiceProps['services'], plans: PlanSet): Array<{ name: string; plans: string[] }> {
  if (!Array.isArray(list) || list.length === 0) fail(`${P}.services`, list, 'must list at least one service');
  const services: Array<{ name: string; plans: string[] }> = [];
  list.forEach((s, i) => {
    if (!isPlainObject(s)) fail(`${P}.services[${i}]`, s, 'must be { name, plans? }');
    const name = checkDnsLabel(`${P}.services[${i}].name`, s.name);
    if (services.some((x) => x.name === name)) fail(`${P}.services[${i}].name`, name, 'is a duplicate service');
    const sp = s.plans === undefined ? plans.names : [...checkStringList(`${P}.services[${i}].plans`, s.plans)];
    for (const pl of sp)
      if (!plans.get(pl)) fail(`${P}.services[${i}](${show(name)}).plans`, pl, `is referenced but not defined; defined plans: ${plans.names.join(', ')}`);
    if (sp.length === 0) fail(`${P}.services[${i}].plans`, s.plans, 'must list at least one plan');
    services.push({ name, plans: sp });
  });
  return services;
}

/** `props.fields` (in `spec`) and `props.parameters` (in `spec.parameters`), no name twice in one place. */
function checkParameters(P: string, props: DataServiceProps): Parameter[] {
  const parameters: Parameter[] = [];
  const addParam = (prop: string, pp: ParameterProps, loc: ParameterLocation) => {
    const par = new Parameter(prop, pp, loc);
    if (parameters.some((x) => x.location === loc && x.name === par.name)) fail(`${prop}.name`, par.name, 'is a duplicate parameter');
    parameters.push(par);
  };
  (props.fields ?? []).forEach((f, i) => addParam(`${P}.fields[${i}]`, f, ParameterLocation.SPEC));
  (props.parameters ?? []).forEach((f, i) => addParam(`${P}.parameters[${i}]`, f, ParameterLocation.PARAMETERS));

  return parameters;
}

/** `props.backends`: known, uniquely named, offering only this service's services and plans; the parameters' backends exist. */
function checkBackends(P: string, list: DataServiceProps['backends'], services: Array<{ name: string }>, plans: PlanSet, parameters: Parameter[]): string[] {
  if (!Array.isArray(list) || list.length === 0) fail(`${P}.backends`, list, 'must list at least one backend (A8sBackend, A9sBackend, ...)');
  const backendNames: string[] = [];
  list.forEach((b, i) => {
    if (!(b instanceof Backend)) fail(`${P}.backends[${i}]`, b, 'is an unknown backend: use A8sBackend, A9sBackend or a subclass of Backend');
    if (backendNames.includes(b.name)) fail(`${P}.backends[${i}].name`, b.name, 'is a duplicate backend (Composition) name');
    backendNames.push(b.name);
    for (const s of b.services ?? [])
      if (!services.some((x) => x.name === s))
        fail(`${P}.backends[${i}](${show(b.name)}).services`, s, `is not a service of this data service (${services.map((x) => x.name).join(', ')})`);
    for (const pl of b.plans ?? [])
      if (!plans.get(pl)) fail(`${P}.backends[${i}](${show(b.name)}).plans`, pl, `is referenced but not defined; defined plans: ${plans.names.join(', ')}`);
  });
  for (const par of parameters) {
    if (par.multiNodeOnly && !plans.plans.some((pl) => pl.multiNode)) {
      fail(
        `${P}.parameters(${show(par.name)}).multiNodeOnly`,
        true,
        'needs at least one multi-node (replica/cluster) plan; without one the parameter could never be set',
      );
    }
    for (const b of par.backends ?? []) {
      if (!backendNames.includes(b)) fail(`${P}.parameters(${show(par.name)}).backends`, b, `is an unknown backend; backends: ${backendNames.join(', ')}`);
    }
  }
  return backendNames;
}

/** What a claim update may change: `props.planChange`, `props.topologyChange`, `props.immutableFlags`. */
function checkChanges(
  P: string,
  props: DataServiceProps,
  plans: PlanSet,
): { planChange: PlanChange; topologyChange: TopologyChange; immutableFlags: string[] } {
  const planChange = props.planChange ?? PlanChange.UPGRADE_ONLY;
  if (!(planChange instanceof PlanChange)) fail(`${P}.planChange`, props.planChange, `must be one of ${PlanChange.all.join(', ')}`);
  const topologyChange = props.topologyChange ?? TopologyChange.SCALE_OUT_ONLY;
  if (!(topologyChange instanceof TopologyChange)) fail(`${P}.topologyChange`, props.topologyChange, `must be one of ${TopologyChange.all.join(', ')}`);
  const immutableFlags = props.immutableFlags === undefined ? plans.flags : [...checkStringList(`${P}.immutableFlags`, props.immutableFlags)];
  for (const f of immutableFlags)
    if (!plans.flags.includes(f)) fail(`${P}.immutableFlags`, f, `is not a flag of any plan (${plans.flags.join(', ') || 'none'})`);

  return { planChange, topologyChange, immutableFlags };
}

/** The OpenAPI schema of the claim's `spec`: service, plan, fields, parameters, and the CEL rules between them. */
function claimSpecSchema(props: DataServiceProps, model: DataServiceModel, backends: readonly Backend[], policy: RulePolicy): Record<string, unknown> {
  const specProps: Record<string, unknown> = {};
  if (model.acceptsIncomplete) specProps.acceptsIncomplete = { type: 'boolean' };
  specProps.service = {
    type: 'string',
    description: props.serviceDescription ?? 'Service specifies the type and version of the data service instance.',
    enum: model.services.map((s) => s.name),
    'x-kubernetes-validations': serviceRules(),
  };
  const pr = planRules(model, policy);
  specProps.plan = {
    type: 'string',
    description: props.planDescription ?? 'Plan specifies the service plan: single or clustered instances of different sizes.',
    enum: model.plans.names,
    ...(pr.length > 0 ? { 'x-kubernetes-validations': pr } : {}),
  };
  for (const f of model.parameters.filter((x) => x.location === ParameterLocation.SPEC)) specProps[f.name] = f.toOpenApi();
  const params = model.parameters.filter((x) => x.location === ParameterLocation.PARAMETERS);
  if (params.length > 0) specProps.parameters = { type: 'object', properties: Object.fromEntries(params.map((x) => [x.name, x.toOpenApi()])) };
  const sr = specRules(model, backends, policy);
  const spec: Record<string, unknown> = { type: 'object' };
  if (sr.length > 0) spec['x-kubernetes-validations'] = sr;
  spec.properties = specProps;
  spec.required = ['service', 'plan'];

  return spec;
}

/** The export template's permission claims: the data service's own, then each backend's not yet listed. */
function permissionClaimsOf(extra: readonly PermissionClaim[] | undefined, backends: readonly Backend[], model: DataServiceModel): PermissionClaim[] {
  const claims: PermissionClaim[] = [...(extra ?? []).map((c) => copyJson(c))];
  for (const b of backends) {
    for (const c of b.permissionClaims(model)) {
      if (!claims.some((x) => JSON.stringify(x) === JSON.stringify(c))) claims.push(c);
    }
  }
  return claims;
}

/** What the bind backend's catalogue page shows beyond the claim schema (sizes, flags, backends). */
function offeringOf(model: DataServiceModel, backends: readonly Backend[], defaultBackend: string): Offering {
  return {
    services: model.services.map((s) => ({ name: s.name, plans: [...s.plans] })),
    plans: model.plans.plans.map((pl) => ({
      name: pl.name,
      topology: pl.topology.name,
      replicas: pl.replicas,
      ...(pl.size.cpu ? { cpu: pl.size.cpu } : {}),
      ...(pl.size.memory ? { memory: pl.size.memory } : {}),
      ...(pl.size.storage ? { storage: pl.size.storage } : {}),
      flags: [...pl.flags],
      ...(pl.description ? { description: pl.description } : {}),
    })),
    backends: backends.map((b) => ({
      name: b.name,
      automation: b.automation,
      services: b.serviceNames(model),
      plans: b.planNames(model),
      default: b.name === defaultBackend,
    })),
  };
}

/** `props.version`, `props.kind`, `props.claimKind`, their plurals and the label of the CEL messages. */
function checkNames(P: string, props: DataServiceProps): { version: string; plural: string; claimPlural: string; label: string } {
  const version = props.version ?? 'v1';
  if (!/^v[0-9]+((alpha|beta)[0-9]+)?$/.test(version)) fail(`${P}.version`, props.version, 'is not a Kubernetes version name (v1, v1alpha1, ...)');
  for (const k of ['kind', 'claimKind'] as const) {
    if (typeof props[k] !== 'string' || !KIND.test(props[k])) fail(`${P}.${k}`, props[k], 'must be a PascalCase kind');
  }
  const plural = checkDnsLabel(`${P}.plural`, props.plural ?? `${props.kind.toLowerCase()}s`);
  const claimPlural = checkDnsLabel(`${P}.claimPlural`, props.claimPlural ?? `${props.claimKind.toLowerCase()}s`);
  const label = props.label ?? props.claimKind.toLowerCase();

  return { version, plural, claimPlural, label };
}

/** Each backend offers, for each service it serves, at least one of that service's plans. */
function checkBackendOffers(P: string, backends: readonly Backend[], model: DataServiceModel): void {
  for (const b of backends) {
    const bs = b.serviceNames(model);
    const bp = b.planNames(model);
    for (const s of model.services.filter((x) => bs.includes(x.name))) {
      if (!s.plans.some((pl) => bp.includes(pl))) fail(`${P}.backends(${show(b.name)})`, s.name, `offers service "${s.name}" but none of its plans`);
    }
  }
}
