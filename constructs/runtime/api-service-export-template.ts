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

/**
 * A construct that offers an API to app clusters through an APIServiceExportTemplate:
 * `DataService`, the catalogue's `InstanceOperation`, and the template itself. The template
 * registers itself with the `ControlPlaneCluster` it is created in, which grants it to its bind
 * backend (`BindBackend.grantExport`: one binder ClusterRole each).
 */
export interface IApiExport extends IConstruct {
  /** The template that offers the API. */
  readonly exportTemplate: ApiServiceExportTemplate;
}

/** Whether `x` is an {@link IApiExport}. */
export function isApiExport(x: unknown): x is IApiExport {
  return x instanceof Construct && (x as { exportTemplate?: unknown }).exportTemplate instanceof ApiServiceExportTemplate;
}

export class ApiServiceExportTemplate extends Construct implements IApiExport {
  /** The L1 object. */
  public readonly apiObject: ApiObject;
  public readonly group: string;
  public readonly resource: string;
  public readonly permissionClaims: readonly PermissionClaim[];
  /** The permission claims as written into the template (defaults filled in). */
  public readonly renderedPermissionClaims: readonly PermissionClaim[];

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
    // What a control plane exports is what is created in it.
    ClusterRegistry.of(this).registerExport({ source: this, group: this.group, resource: this.resource, permissionClaims: this.renderedPermissionClaims });
  }

  /** This template ({@link IApiExport}: a template offers its own API). */
  public get exportTemplate(): ApiServiceExportTemplate {
    return this;
  }
}
