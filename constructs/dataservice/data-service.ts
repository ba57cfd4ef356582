import { Construct } from 'constructs';
import { ApiServiceExportTemplate, type IApiExport, type PermissionClaim } from '../runtime/index.js';
import { OFFERING_ANNOTATION, type Offering } from '../../contract/api/offering.js';
import { CompositeDeletePolicy, CompositeResourceDefinition, Composition, CrossplaneVersion, PatchAndTransformStep, XrdScope } from '../crossplane/index.js';
import { ApiStyle, checkApiStyle } from './api-style.js';
import { Backend, DataServiceModel, ServiceOffering } from './backend.js';
import { Parameter, ParameterLocation, ParameterProps } from './parameter.js';
import { Plan, PlanSet } from './plan.js';
import { PlanChange, TopologyChange } from './topology.js';
import { planRules, RulePolicy, serviceRules, specRules } from './_rules.js';
import { checkDnsLabel, checkStringList, copyJson, fail, isDnsSubdomain, isPlainObject, show } from './_util.js';
import { registerDataService } from './_conflicts.js';

/** The default size order (smallest first) used to derive upgrade paths. */
export const DEFAULT_SIZE_ORDER: readonly string[] = ['nano', 'small', 'medium', 'big'];

/** Namespace the bind backend conventionally reads APIServiceExportTemplates from. */
export const DEFAULT_EXPORT_TEMPLATE_NAMESPACE = 'crossplane-system';

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
 * A data service offered to app clusters: emits the XRD (with claims, plan/service enums and CEL
 * rules), one Composition per automation backend, and the `APIServiceExportTemplate` that makes the
 * claim bindable.
 */
export class DataService extends Construct implements IApiExport {
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
    const version = props.version ?? 'v1';
    if (!/^v[0-9]+((alpha|beta)[0-9]+)?$/.test(version)) fail(`${P}.version`, props.version, 'is not a Kubernetes version name (v1, v1alpha1, ...)');
    for (const k of ['kind', 'claimKind'] as const) {
      if (typeof props[k] !== 'string' || !KIND.test(props[k])) fail(`${P}.${k}`, props[k], 'must be a PascalCase kind');
    }
    const plural = checkDnsLabel(`${P}.plural`, props.plural ?? `${props.kind.toLowerCase()}s`);
    const claimPlural = checkDnsLabel(`${P}.claimPlural`, props.claimPlural ?? `${props.claimKind.toLowerCase()}s`);
    const label = props.label ?? props.claimKind.toLowerCase();

    // Plans and services.
    const plans = new PlanSet(`${P}.plans`, props.plans, props.sizeOrder ?? DEFAULT_SIZE_ORDER);
    if (!Array.isArray(props.services) || props.services.length === 0) fail(`${P}.services`, props.services, 'must list at least one service');
    const services: Array<{ name: string; plans: string[] }> = [];
    props.services.forEach((s, i) => {
      if (!isPlainObject(s)) fail(`${P}.services[${i}]`, s, 'must be { name, plans? }');
      const name = checkDnsLabel(`${P}.services[${i}].name`, s.name);
      if (services.some((x) => x.name === name)) fail(`${P}.services[${i}].name`, name, 'is a duplicate service');
      const sp = s.plans === undefined ? plans.names : [...checkStringList(`${P}.services[${i}].plans`, s.plans)];
      for (const pl of sp)
        if (!plans.get(pl)) fail(`${P}.services[${i}](${show(name)}).plans`, pl, `is referenced but not defined; defined plans: ${plans.names.join(', ')}`);
      if (sp.length === 0) fail(`${P}.services[${i}].plans`, s.plans, 'must list at least one plan');
      services.push({ name, plans: sp });
    });

    // Parameters.
    const parameters: Parameter[] = [];
    const addParam = (prop: string, pp: ParameterProps, loc: ParameterLocation) => {
      const par = new Parameter(prop, pp, loc);
      if (parameters.some((x) => x.location === loc && x.name === par.name)) fail(`${prop}.name`, par.name, 'is a duplicate parameter');
      parameters.push(par);
    };
    (props.fields ?? []).forEach((f, i) => addParam(`${P}.fields[${i}]`, f, ParameterLocation.SPEC));
    (props.parameters ?? []).forEach((f, i) => addParam(`${P}.parameters[${i}]`, f, ParameterLocation.PARAMETERS));

    // Backends.
    if (!Array.isArray(props.backends) || props.backends.length === 0)
      fail(`${P}.backends`, props.backends, 'must list at least one backend (A8sBackend, A9sBackend, ...)');
    const backendNames: string[] = [];
    props.backends.forEach((b, i) => {
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
    this.defaultBackend = props.defaultBackend ?? backendNames[0];
    if (!backendNames.includes(this.defaultBackend))
      fail(`${P}.defaultBackend`, props.defaultBackend, `is an unknown backend; backends: ${backendNames.join(', ')}`);
    this.backends = [...props.backends];

    const planChange = props.planChange ?? PlanChange.UPGRADE_ONLY;
    if (!(planChange instanceof PlanChange)) fail(`${P}.planChange`, props.planChange, `must be one of ${PlanChange.all.join(', ')}`);
    const topologyChange = props.topologyChange ?? TopologyChange.SCALE_OUT_ONLY;
    if (!(topologyChange instanceof TopologyChange)) fail(`${P}.topologyChange`, props.topologyChange, `must be one of ${TopologyChange.all.join(', ')}`);
    const immutableFlags = props.immutableFlags === undefined ? plans.flags : [...checkStringList(`${P}.immutableFlags`, props.immutableFlags)];
    for (const f of immutableFlags)
      if (!plans.flags.includes(f)) fail(`${P}.immutableFlags`, f, `is not a flag of any plan (${plans.flags.join(', ') || 'none'})`);

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
    for (const b of this.backends) {
      const bs = b.serviceNames(this.model);
      const bp = b.planNames(this.model);
      for (const s of services.filter((x) => bs.includes(x.name))) {
        if (!s.plans.some((pl) => bp.includes(pl))) fail(`${P}.backends(${show(b.name)})`, s.name, `offers service "${s.name}" but none of its plans`);
      }
    }
    const policy: RulePolicy = { planChange, topologyChange, immutableFlags, label, defaultBackend: this.defaultBackend, apiStyle: style };

    // XRD.
    const specProps: Record<string, unknown> = {};
    if (acceptsIncomplete) specProps.acceptsIncomplete = { type: 'boolean' };
    specProps.service = {
      type: 'string',
      description: props.serviceDescription ?? 'Service specifies the type and version of the data service instance.',
      enum: services.map((s) => s.name),
      'x-kubernetes-validations': serviceRules(),
    };
    const pr = planRules(this.model, policy);
    specProps.plan = {
      type: 'string',
      description: props.planDescription ?? 'Plan specifies the service plan: single or clustered instances of different sizes.',
      enum: plans.names,
      ...(pr.length > 0 ? { 'x-kubernetes-validations': pr } : {}),
    };
    for (const f of parameters.filter((x) => x.location === ParameterLocation.SPEC)) specProps[f.name] = f.toOpenApi();
    const params = parameters.filter((x) => x.location === ParameterLocation.PARAMETERS);
    if (params.length > 0) specProps.parameters = { type: 'object', properties: Object.fromEntries(params.map((x) => [x.name, x.toOpenApi()])) };
    const sr = specRules(this.model, this.backends, policy);
    const spec: Record<string, unknown> = { type: 'object' };
    if (sr.length > 0) spec['x-kubernetes-validations'] = sr;
    spec.properties = specProps;
    spec.required = ['service', 'plan'];

    if (style.namespaced && props.deletePolicy !== undefined) {
      fail(`${P}.deletePolicy`, props.deletePolicy.value, `only applies to claims, but ${P}.apiStyle is ${style.value}; remove it`);
    }
    this.xrd = new CompositeResourceDefinition(this, 'Definition', {
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
          additionalPrinterColumns: (props.managedStateColumn ?? true) ? [{ name: 'ManagedResource', jsonPath: '.status.managed.state' }] : [],
        },
      ],
    });

    // Compositions.
    const compositions = new Map<string, Composition>();
    for (const b of this.backends) {
      const step = new PatchAndTransformStep();
      b.compose(step, this.model);
      compositions.set(b.name, new Composition(this, `Composition-${b.name}`, { name: b.name, compositeTypeRef: this.xrd, pipeline: [step] }));
    }
    this.compositions = compositions;

    // APIServiceExportTemplate.
    const claims: PermissionClaim[] = [...(props.permissionClaims ?? []).map((c) => copyJson(c))];
    for (const b of this.backends) {
      for (const c of b.permissionClaims(this.model)) {
        if (!claims.some((x) => JSON.stringify(x) === JSON.stringify(c))) claims.push(c);
      }
    }
    // What the bind backend's catalogue page shows beyond the claim schema (sizes, flags, backends).
    const offering: Offering = {
      services: this.model.services.map((s) => ({ name: s.name, plans: [...s.plans] })),
      plans: plans.plans.map((pl) => ({
        name: pl.name,
        topology: pl.topology.name,
        replicas: pl.replicas,
        ...(pl.size.cpu ? { cpu: pl.size.cpu } : {}),
        ...(pl.size.memory ? { memory: pl.size.memory } : {}),
        ...(pl.size.storage ? { storage: pl.size.storage } : {}),
        flags: [...pl.flags],
        ...(pl.description ? { description: pl.description } : {}),
      })),
      backends: this.backends.map((b) => ({
        name: b.name,
        automation: b.automation,
        services: b.serviceNames(this.model),
        plans: b.planNames(this.model),
        default: b.name === this.defaultBackend,
      })),
    };
    this.exportTemplate = new ApiServiceExportTemplate(this, 'ExportTemplate', {
      group: props.group,
      resource: claimPlural,
      version,
      permissionClaims: claims,
      namespace: props.exportTemplateNamespace ?? DEFAULT_EXPORT_TEMPLATE_NAMESPACE,
      annotations: { [OFFERING_ANNOTATION]: JSON.stringify(offering) },
    });

    // Unique in the cluster: kinds, resources, backends' Compositions, the export template.
    registerDataService(this, {
      path: this.node.path,
      group: props.group,
      kind,
      plural: style.namespaced ? claimPlural : plural,
      claimKind: props.claimKind,
      claimPlural,
      backends: this.backends.map((b) => b.name),
      exportTemplate: { namespace: props.exportTemplateNamespace ?? DEFAULT_EXPORT_TEMPLATE_NAMESPACE, name: claimPlural },
    });
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
