/**
 * `Backend`: what an automation backend of a `DataService` is (it composes one Composition and names the
 * ProviderConfigs it uses), and the `DataServiceModel` the backends compose from.
 */
import type { PermissionClaim } from '../runtime/permission-claim.js';
import { type IProviderConfig, Patch, PatchAndTransformStep } from '../crossplane/index.js';
import type { ApiStyle } from './api-style.js';
import { Parameter } from './parameter.js';
import { PlanSet } from './plan.js';
import { checkDnsLabel, checkStringList, fail, isPlainObject } from './_util.js';

/** Label Crossplane puts on XRs (and copies onto composed resources) with the claim's name. */
export const CLAIM_NAME_LABEL = 'crossplane.io/claim-name';
/** Label with the claim's namespace. */
export const CLAIM_NAMESPACE_LABEL = 'crossplane.io/claim-namespace';

/** A service (version) offered by a data service, e.g. `a9s-postgresql15`. */
export interface ServiceOffering {
  /** Service name as the claim's `spec.service` carries it. */
  readonly name: string;
  /** Plans this service supports. @default - all plans of the data service */
  readonly plans?: readonly string[];
  /** @default - none */
  readonly description?: string;
}

/** The validated data service a backend composes (built by `DataService`). */
export interface DataServiceModel {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly claimKind: string;
  readonly claimPlural: string;
  readonly plans: PlanSet;
  /** Services with their resolved plan lists. */
  readonly services: ReadonlyArray<{ readonly name: string; readonly plans: readonly string[] }>;
  /** All parameters (`spec.parameters.*` and top-level `spec.*` fields). */
  readonly parameters: readonly Parameter[];
  /** Whether the claim has `spec.acceptsIncomplete`. */
  readonly acceptsIncomplete: boolean;
  /** Claims or namespaced XRs: where the bound object's name, namespace and compositionRef are. */
  readonly apiStyle: ApiStyle;
}

export interface BackendProps {
  /** Name of the backend's Composition; claims select it with `spec.compositionRef.name`. */
  readonly name: string;
  /** Services this backend provisions. @default - all services */
  readonly services?: readonly string[];
  /** Plans this backend provisions. @default - all plans */
  readonly plans?: readonly string[];
}

/**
 * An automation backend: renders the composed resources of one Composition of a data service.
 * `A8sBackend` (provider-kubernetes `Object`s for the a8s operators) and `A9sBackend`
 * (provider-anynines `ServiceInstance`) are built in; subclass it for other automation.
 */
export abstract class Backend {
  /** Composition name (= the claim's `compositionRef.name` selecting this backend). */
  public readonly name: string;
  /** Services this backend provisions, or undefined for all. */
  public readonly services?: readonly string[];
  /** Plans this backend provisions, or undefined for all. */
  public readonly plans?: readonly string[];
  /** The automation technology, e.g. `a8s` or `a9s`. */
  public abstract readonly automation: string;

  protected constructor(prop: string, props: BackendProps) {
    if (!isPlainObject(props)) fail(prop, props, 'must be an object with at least a name');
    this.name = checkDnsLabel(`${prop}.name`, props.name);
    if (props.services !== undefined) this.services = checkStringList(`${prop}.services`, props.services);
    if (props.plans !== undefined) this.plans = checkStringList(`${prop}.plans`, props.plans);
  }

  /** Adds this backend's composed resources to the Composition's P&T step. */
  public abstract compose(step: PatchAndTransformStep, model: DataServiceModel): void;

  /** Permission claims the backend needs in the APIServiceExportTemplate (e.g. credentials). */
  public permissionClaims(_model: DataServiceModel): PermissionClaim[] {
    return [];
  }

  /** Plans this backend serves within a model. */
  public planNames(model: DataServiceModel): string[] {
    return this.plans ? [...this.plans] : model.plans.names;
  }

  /** Services this backend serves within a model. */
  public serviceNames(model: DataServiceModel): string[] {
    return this.services ? [...this.services] : model.services.map((s) => s.name);
  }

  /**
   * The ProviderConfigs this backend's composed resources reference. A `ControlPlaneCluster` checks
   * that each one it emits is its own (not another cluster's) and emits the control plane's
   * provider-kubernetes one where a backend takes the default. @default - none
   */
  public providerConfigs(_model: DataServiceModel): readonly IProviderConfig[] {
    return [];
  }

  /** Parameters this backend accepts. */
  public parametersOf(model: DataServiceModel): Parameter[] {
    return model.parameters.filter((p) => p.allowedOn(this.name));
  }
}

/** Patches copying the claim-name and claim-namespace labels from the XR onto the composed resource (claims only: a namespaced XR has none). */
export function claimLabelPatches(style?: ApiStyle): Patch[] {
  if (style?.namespaced) return [];
  return [CLAIM_NAMESPACE_LABEL, CLAIM_NAME_LABEL].map((l) => Patch.fromCompositeFieldPath(`metadata.labels[${l}]`, `metadata.labels[${l}]`));
}

/** `ToCompositeFieldPath` patches copying `<from>` of the composed resource to `status.managed.<key>`. */
export function statusPatches(map: Readonly<Record<string, string>>): Patch[] {
  return Object.entries(map).map(([key, from]) => Patch.toCompositeFieldPath(from, `status.managed.${key}`));
}
