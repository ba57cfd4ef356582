/**
 * `InstanceOperation`: an operation on data-service instances (ServiceBinding, Backup, Restore) — its XRD,
 * one Composition per backend (a8s, a9s) selected by the instance type, and the APIServiceExportTemplate
 * that makes it bindable (an `IApiExport`).
 */
import { Construct } from 'constructs';
import { CompositeResourceDefinition, Composition, CrossplaneVersion, PatchAndTransformStep, XrdScope } from '../crossplane/index.js';
import { ApiStyle, checkApiStyle, Parameter, ParameterLocation, ParameterProps, DEFAULT_EXPORT_TEMPLATE_NAMESPACE } from '../dataservice/index.js';
import { ApiServiceExportTemplate, type BindableApi, type IApiExport, type IBindGrantee } from '../runtime/api-service-export-template.js';
import type { PermissionClaim } from '../runtime/permission-claim.js';
import { OFFERING_ANNOTATION, type Offering } from '../../contract/api/offering.js';
import { ANYNINES_GROUP } from './_common.js';

/** A backend of an instance operation (ServiceBinding, Backup, Restore). */
export interface OperationBackend {
  /** Composition name. */
  readonly name: string;
  /** Automation technology (`a8s`, `a9s`, ...). */
  readonly automation: string;
  /** Instance types it handles. @default - all */
  readonly types?: readonly string[];
  /** Spec fields it needs set (non-empty). @default - none */
  readonly requiredFields?: readonly string[];
  /** Renders its composed resource(s) for the given instance types, in the given API style. */
  compose(step: PatchAndTransformStep, types: readonly string[], style: ApiStyle): void;
  /** Permission claims for the APIServiceExportTemplate. @default - none */
  readonly permissionClaims?: readonly PermissionClaim[];
  /** Permission claims with `ApiStyle.NAMESPACED_XR`. @default - permissionClaims */
  readonly namespacedPermissionClaims?: readonly PermissionClaim[];
}

export interface InstanceOperationProps {
  /** XR kind, e.g. `XServiceBinding`. */
  readonly kind: string;
  /** Claim kind, e.g. `ServiceBinding`. */
  readonly claimKind: string;
  /** Spec fields besides `serviceInstanceType`. */
  readonly fields: readonly ParameterProps[];
  /** Required spec fields (besides `serviceInstanceType`). */
  readonly required: readonly string[];
  /** Allowed `serviceInstanceType` values (data service short names, e.g. `postgresql`). */
  readonly types: readonly string[];
  readonly backends: readonly OperationBackend[];
  /** @default - the first backend */
  readonly defaultBackend?: string;
  /** @default 'crossplane-system' */
  readonly exportTemplateNamespace?: string;
  /** Claims or namespaced XRs (the XR kind is then `claimKind`). @default ApiStyle.CLAIMS */
  readonly apiStyle?: ApiStyle;
  /** @default CrossplaneVersion.V2_3 */
  readonly crossplaneVersion?: CrossplaneVersion;
  /**
   * Spec properties (OpenAPI) and CEL rules only the namespaced XR has, e.g. the ServiceBinding's
   * `writeConnectionSecretToRef` (a claim has Crossplane's own). @default - none
   */
  readonly namespacedSpec?: {
    readonly properties: Readonly<Record<string, unknown>>;
    readonly rules?: ReadonlyArray<{ readonly rule: string; readonly message: string }>;
  };
}

const fail = (prop: string, v: unknown, problem: string): never => {
  throw new Error(`${prop}: ${JSON.stringify(v)} ${problem}`);
};
const celList = (xs: readonly string[]) => `[${xs.map((x) => `'${x}'`).join(', ')}]`;

/**
 * An XRD + Compositions + APIServiceExportTemplate for an operation on a data service instance
 * (`ServiceBinding`, `Backup`, `Restore`): the claim names the instance (`instanceRef`) and its type
 * (`serviceInstanceType`); the claim's `compositionRef.name` picks the backend, and backends that
 * only handle some types reject the others (a claim without `compositionRef`, or with an empty name,
 * counts as the default backend).
 */
export class InstanceOperation extends Construct implements IApiExport {
  public readonly xrd: CompositeResourceDefinition;
  public readonly compositions: ReadonlyMap<string, Composition>;
  public readonly exportTemplate: ApiServiceExportTemplate;
  public readonly types: readonly string[];
  public readonly apiStyle: ApiStyle;

  constructor(scope: Construct, id: string, props: InstanceOperationProps) {
    super(scope, id);
    const P = `InstanceOperationProps(${props.kind})`;
    const { style } = checkApiStyle(`${P}.apiStyle`, props.apiStyle, `${P}.crossplaneVersion`, props.crossplaneVersion);
    this.apiStyle = style;
    if (!Array.isArray(props.types) || props.types.length === 0) fail(`${P}.types`, props.types, 'must list at least one instance type');
    this.types = [...props.types];
    if (!Array.isArray(props.backends) || props.backends.length === 0) fail(`${P}.backends`, props.backends, 'must list at least one backend');
    const names = props.backends.map((b) => b.name);
    const def = props.defaultBackend ?? names[0];
    if (!names.includes(def)) fail(`${P}.defaultBackend`, def, `is an unknown backend; backends: ${names.join(', ')}`);
    const fields = props.fields.map((f, i) => new Parameter(`${P}.fields[${i}]`, f, ParameterLocation.SPEC, ['serviceInstanceType']));
    for (const r of props.required) if (!fields.some((f) => f.name === r)) fail(`${P}.required`, r, 'is not a declared field');

    const spec = this.specSchema(P, props, fields, def);

    const claimPlural = `${props.claimKind.toLowerCase()}s`;
    this.xrd = this.addXrd(props, spec, def);
    this.compositions = this.addCompositions(props.backends);
    this.exportTemplate = this.addExportTemplate(props, claimPlural, def);
  }

  /** The API this operation exports (its template's). */
  public get bindableApi(): BindableApi {
    return this.exportTemplate.bindableApi;
  }

  /** Lets `grantee` (a `BindBackend`) hand this API and its permission claims out to consumers. */
  public grantBind(grantee: IBindGrantee): void {
    this.exportTemplate.grantBind(grantee);
  }

  /** The claim's `spec` schema: the fields, the instance type, and CEL rules for what each backend requires and supports. */
  private specSchema(P: string, props: InstanceOperationProps, fields: Parameter[], def: string): Record<string, unknown> {
    const style = this.apiStyle;
    // A claim may omit spec.compositionRef (the XRD's defaultCompositionRef applies): read it behind has().
    const composition = style.compositionExpr(def);
    const rules: Array<{ rule: string; message: string }> = [];
    for (const b of props.backends) {
      for (const f of b.requiredFields ?? []) {
        if (!fields.some((x) => x.name === f)) fail(`${P}.backends(${b.name}).requiredFields`, f, 'is not a declared field');
        // An empty composition name counts as the default backend, as in the type rule below (with claims
        // only for the type rule: Klutch's claim XRDs require the field only for the named backend).
        const selectors = style.namespaced && b.name === def ? ['', b.name] : [b.name];
        const selected = selectors.length === 1 ? `${composition} == '${b.name}'` : `${composition} in ${celList(selectors)}`;
        rules.push({ rule: `!(${selected}) || (has(self.${f}) && self.${f} != '')`, message: `${b.name} requires spec.${f}` });
      }
    }
    for (const b of props.backends) {
      const types = b.types ?? this.types;
      for (const t of types) if (!this.types.includes(t)) fail(`${P}.backends(${b.name}).types`, t, `is not an instance type (${this.types.join(', ')})`);
      if (types.length === this.types.length) continue;
      const selectors = b.name === def ? ['', b.name] : [b.name];
      const allowed = types.filter((t) => this.types.includes(t));
      rules.push({
        rule: `!(${composition} in ${celList(selectors)}) || ${allowed.length === 1 ? `self.serviceInstanceType == '${allowed[0]}'` : `self.serviceInstanceType in ${celList(allowed)}`}`,
        message: 'Selected service instance type is not supported.',
      });
    }

    const properties: Record<string, unknown> = {};
    for (const f of fields) properties[f.name] = f.toOpenApi();
    if (style.namespaced && props.namespacedSpec) {
      for (const [k, v] of Object.entries(props.namespacedSpec.properties)) {
        if (k in properties || k === 'serviceInstanceType' || k === 'crossplane') fail(`${P}.namespacedSpec.properties`, k, 'is already a spec field');
        properties[k] = v;
      }
      rules.push(...(props.namespacedSpec.rules ?? []));
    }
    properties.serviceInstanceType = { type: 'string', enum: [...this.types], description: 'Type of the data service instance, e.g. postgresql.' };
    const spec: Record<string, unknown> = { type: 'object' };
    if (rules.length > 0) spec['x-kubernetes-validations'] = rules;
    spec.properties = properties;
    spec.required = [...props.required, 'serviceInstanceType'];
    return spec;
  }

  /** The XRD (claims, or namespaced XRs) in the anynines group. */
  private addXrd(props: InstanceOperationProps, spec: Record<string, unknown>, def: string): CompositeResourceDefinition {
    const style = this.apiStyle;
    const plural = `${props.kind.toLowerCase()}s`;
    const claimPlural = `${props.claimKind.toLowerCase()}s`;
    return new CompositeResourceDefinition(this, 'Definition', {
      group: ANYNINES_GROUP,
      ...(style.namespaced
        ? { scope: XrdScope.NAMESPACED, names: { kind: props.claimKind, plural: claimPlural } }
        : { names: { kind: props.kind, plural }, claimNames: { kind: props.claimKind, plural: claimPlural } }),
      defaultCompositionName: def,
      versions: [
        {
          name: 'v1',
          served: true,
          referenceable: true,
          schema: {
            type: 'object',
            properties: {
              spec,
              status: { type: 'object', properties: { managed: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
            },
          },
        },
      ],
    });
  }

  /** One Composition per backend, over the instance types it handles. */
  private addCompositions(backends: readonly OperationBackend[]): Map<string, Composition> {
    const style = this.apiStyle;
    const compositions = new Map<string, Composition>();
    for (const b of backends) {
      const step = new PatchAndTransformStep();
      b.compose(
        step,
        (b.types ?? this.types).filter((t) => this.types.includes(t)),
        style,
      );
      compositions.set(b.name, new Composition(this, `Composition-${b.name}`, { name: b.name, compositeTypeRef: this.xrd, pipeline: [step] }));
    }
    return compositions;
  }

  /** The APIServiceExportTemplate: the backends' permission claims and the catalogue page's offering. */
  private addExportTemplate(props: InstanceOperationProps, claimPlural: string, def: string): ApiServiceExportTemplate {
    const style = this.apiStyle;
    const claims: PermissionClaim[] = [];
    const claimsOf = (b: OperationBackend) => (style.namespaced ? (b.namespacedPermissionClaims ?? b.permissionClaims) : b.permissionClaims) ?? [];
    for (const b of props.backends) for (const c of claimsOf(b)) if (!claims.some((x) => JSON.stringify(x) === JSON.stringify(c))) claims.push(c);
    // The catalogue page's offering: no services or plans of its own; each backend with the instance types it handles.
    const offering: Offering = {
      services: [],
      plans: [],
      backends: props.backends.map((b) => ({
        name: b.name,
        automation: b.automation,
        services: (b.types ?? this.types).filter((t) => this.types.includes(t)),
        plans: [],
        default: b.name === def,
      })),
    };
    return new ApiServiceExportTemplate(this, 'ExportTemplate', {
      group: ANYNINES_GROUP,
      resource: claimPlural,
      version: 'v1',
      permissionClaims: claims,
      namespace: props.exportTemplateNamespace ?? DEFAULT_EXPORT_TEMPLATE_NAMESPACE,
      annotations: { [OFFERING_ANNOTATION]: JSON.stringify(offering) },
    });
  }
}
