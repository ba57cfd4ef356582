/**
 * `example-backend.klutch.anynines.com/v1alpha1` APIServiceExportTemplate: tells the bind backend
 * that the CRD `<resource>.<group>` may be bound, and which permission claims go with it.
 * Note the capitalised `spec.APIServiceSelector` key (Klutch's wire format).
 */
import { ApiObject } from 'cdk8s';
import { Construct, IConstruct } from 'constructs';
import { ClusterRegistry } from '../_cluster-registry.js';
import { fail } from '../_errors.js';
import { apiServiceExportTemplateKind, type APIServiceExportTemplateSpec } from '../../contract/api/index.js';
import { checkDnsLabel, checkDnsSubdomain } from './_pod.js';
import { checkGroup, checkResource, PermissionClaim, renderPermissionClaim } from './permission-claim.js';

export interface ApiServiceExportTemplateProps {
  /** API group of the exported CRD, e.g. `anynines.com`. */
  readonly group: string;
  /** Plural resource of the exported CRD, e.g. `postgresqlinstances`. */
  readonly resource: string;
  /** Version (informational since Klutch 1.5). @default - not set */
  readonly version?: string;
  /** Permission claims handed to every binding of this API. @default [] */
  readonly permissionClaims?: PermissionClaim[];
  /** Object name. @default `<resource>` */
  readonly name?: string;
  /** Namespace; the backend reads templates in all namespaces. @default "crossplane-system" */
  readonly namespace?: string;
  /** Annotations, e.g. the catalogue offering (`OFFERING_ANNOTATION`) that DataService writes. @default - none */
  readonly annotations?: Record<string, string>;
}

/** An exported API as a grant hands it on: its group, resource (plural) and permission claims. */
export interface BindableApi {
  readonly group: string;
  /** The resource (plural), e.g. `postgresqlinstances`. */
  readonly resource: string;
  /** The permission claims each binding of the API carries (as the template writes them). */
  readonly permissionClaims: readonly PermissionClaim[];
}

/** What an export can be granted to: a program that hands the API out to consumers (a `BindBackend`). */
export interface IBindGrantee extends IConstruct {
  /**
   * Lets this grantee hand `api` out to consumers; called by {@link IApiExport.grantBind}.
   * `by` names the grant in error messages.
   */
  addBindableApi(api: BindableApi, by?: string): void;
}

/**
 * A construct that offers an API to app clusters through an APIServiceExportTemplate:
 * `DataService`, the catalogue's `InstanceOperation`, the template itself, or an export made
 * elsewhere (`ApiServiceExportTemplate.fromBindableApi`). A template registers itself with the
 * `ControlPlaneCluster` it is created in, which grants it to its bind backend
 * (`api.grantBind(backend)`: one binder ClusterRole each).
 */
export interface IApiExport extends IConstruct {
  /** The API exported (one object per export: compared by identity). */
  readonly bindableApi: BindableApi;
  /** Lets `grantee` hand this API (and its permission claims) out to consumers. */
  grantBind(grantee: IBindGrantee): void;
}

/** Whether `x` is an {@link IApiExport}. */
export function isApiExport(x: unknown): x is IApiExport {
  return (
    x instanceof Construct &&
    typeof (x as Partial<IApiExport>).grantBind === 'function' &&
    typeof (x as Partial<IApiExport>).bindableApi === 'object' &&
    (x as Partial<IApiExport>).bindableApi !== null
  );
}

/** An export made elsewhere (another app or chart), imported by its API: see `ApiServiceExportTemplate.fromBindableApi`. */
class ImportedApiExport extends Construct implements IApiExport {
  public readonly bindableApi: BindableApi;

  constructor(scope: Construct, id: string, api: BindableApi, at: string) {
    super(scope, id);
    if (!api || typeof api !== 'object') fail(at, api, 'must be { group, resource, permissionClaims? } of an export made elsewhere');
    const permissionClaims = (api.permissionClaims ?? []).map((c, i) => renderPermissionClaim(`${at}.permissionClaims[${i}]`, c) as unknown as PermissionClaim);
    this.bindableApi = { group: checkGroup(`${at}.group`, api.group), resource: checkResource(`${at}.resource`, api.resource), permissionClaims };
  }

  public grantBind(grantee: IBindGrantee): void {
    grantee.addBindableApi(this.bindableApi, `${this.node.path}.grantBind()`);
  }
}

export class ApiServiceExportTemplate extends Construct implements IApiExport {
  /**
   * An export made elsewhere (by another app, a Helm chart, by hand), by its API: grant it to a
   * backend of this app (`ApiServiceExportTemplate.fromBindableApi(this, 'Pg', { group, resource }).grantBind(backend)`).
   * Nothing is emitted.
   */
  public static fromBindableApi(
    scope: Construct,
    id: string,
    api: Omit<BindableApi, 'permissionClaims'> & Partial<Pick<BindableApi, 'permissionClaims'>>,
  ): IApiExport {
    return new ImportedApiExport(scope, id, { ...api, permissionClaims: api?.permissionClaims ?? [] }, 'ApiServiceExportTemplate.fromBindableApi(api)');
  }

  /** The L1 object. */
  public readonly apiObject: ApiObject;
  public readonly group: string;
  public readonly resource: string;
  public readonly permissionClaims: readonly PermissionClaim[];
  /** The permission claims as written into the template (defaults filled in). */
  public readonly renderedPermissionClaims: readonly PermissionClaim[];
  public readonly bindableApi: BindableApi;

  constructor(scope: Construct, id: string, props: ApiServiceExportTemplateProps) {
    super(scope, id);
    this.group = checkGroup('ApiServiceExportTemplateProps.group', props.group);
    this.resource = checkResource('ApiServiceExportTemplateProps.resource', props.resource);
    const name = checkDnsSubdomain('ApiServiceExportTemplateProps.name', props.name ?? props.resource);
    const namespace = checkDnsLabel('ApiServiceExportTemplateProps.namespace', props.namespace ?? 'crossplane-system');
    if (props.version !== undefined && (typeof props.version !== 'string' || props.version.length === 0)) {
      fail('ApiServiceExportTemplateProps.version', props.version, 'must be a non-empty string');
    }
    this.permissionClaims = [...(props.permissionClaims ?? [])];
    const claims = this.permissionClaims.map((c, i) => renderPermissionClaim(`ApiServiceExportTemplateProps.permissionClaims[${i}]`, c));
    this.renderedPermissionClaims = claims as unknown as PermissionClaim[];
    const spec = {
      APIServiceSelector: {
        group: this.group,
        resource: this.resource,
        ...(props.version ? { version: props.version } : {}),
      },
      ...(claims.length > 0 ? { permissionClaims: claims } : {}),
    } as APIServiceExportTemplateSpec;
    const { apiVersion, kind, metadata, ...rest } = apiServiceExportTemplateKind.make(name, spec, { namespace });
    for (const [k, v] of Object.entries(props.annotations ?? {})) {
      if (typeof v !== 'string') fail(`ApiServiceExportTemplateProps.annotations["${k}"]`, v, 'must be a string');
    }
    const annotations = props.annotations && Object.keys(props.annotations).length > 0 ? { annotations: { ...props.annotations } } : {};
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion,
      kind,
      metadata: { name: metadata.name!, namespace: metadata.namespace, ...annotations },
      ...rest,
    });
    this.bindableApi = { group: this.group, resource: this.resource, permissionClaims: this.renderedPermissionClaims };
    // What a control plane exports is what is created in it.
    ClusterRegistry.of(this).registerExport(this.bindableApi);
  }

  public grantBind(grantee: IBindGrantee): void {
    grantee.addBindableApi(this.bindableApi, `${this.node.path}.grantBind()`);
  }

  /**
   * This template.
   * @deprecated an export is an {@link IApiExport}: use `bindableApi` or `grantBind()`.
   */
  public get exportTemplate(): ApiServiceExportTemplate {
    return this;
  }
}
