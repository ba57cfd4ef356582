/**
 * `A9sBackend`: the backend that composes a data service with provider-anynines managed resources (an a9s
 * service broker's instances).
 */
import { checkProviderConfig, type IProviderConfig, Patch, PatchAndTransformStep, ReadinessCheck } from '../crossplane/index.js';
import { Backend, BackendProps, claimLabelPatches, DataServiceModel, statusPatches } from './backend.js';
import { ParameterLocation } from './parameter.js';
import { fail, kebabCase, snakeCase } from './_util.js';
import { EnumLike, enumMembers } from '../_enum-like.js';

/** API version of provider-anynines managed resources. */
export const A9S_API_VERSION = 'dataservices.anynines.com/v1';
/** The Cloud Foundry organization GUID Klutch's a9s Compositions send to the service broker. */
export const A9S_DEFAULT_ORGANIZATION_GUID = 'a1d46b5c-b639-4f43-85c7-e9a0e5f01f75';
/** The Cloud Foundry space GUID Klutch's a9s Compositions send to the service broker. */
export const A9S_DEFAULT_SPACE_GUID = '1bf71cf3-9017-4846-bffc-b9b31872bfaf';

/** How camelCase claim parameter names become broker parameter names (enum-like: static instances). */
export class ParameterCase extends EnumLike {
  /** `maxConnections` → `max_connections` */
  public static readonly SNAKE = new ParameterCase('snake');
  /** `replBacklogSize` → `repl-backlog-size` */
  public static readonly KEBAB = new ParameterCase('kebab');
  /** unchanged */
  public static readonly CAMEL = new ParameterCase('camel');

  /** Every instance, in declaration order. */
  public static get all(): readonly ParameterCase[] {
    return enumMembers(ParameterCase);
  }

  private constructor(
    /** The case name, e.g. `snake`. */
    value: string,
  ) {
    super(value);
  }
}

export interface A9sBackendProps extends BackendProps {
  /**
   * The provider-anynines service-broker ProviderConfig, e.g. `cp.addProviderConfig('postgresql-service-broker',
   * AnyninesServiceType.SERVICE_BROKER)`, or `AnyninesProviderConfig.fromName()` for one made elsewhere.
   */
  readonly providerConfig: IProviderConfig;
  /** Default broker naming of parameters without a `brokerName`. @default ParameterCase.SNAKE */
  readonly parameterCase?: ParameterCase;
  /** Cloud Foundry organization GUID sent to the broker. @default A9S_DEFAULT_ORGANIZATION_GUID */
  readonly organizationGuid?: string;
  /** Cloud Foundry space GUID sent to the broker. @default A9S_DEFAULT_SPACE_GUID */
  readonly spaceGuid?: string;
  /** Top-level `spec.<field>` fields patched onto the ServiceInstance: field → target path. @default - none */
  readonly fieldPaths?: Readonly<Record<string, string>>;
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The a9s backend: one provider-anynines `ServiceInstance` per claim, provisioned through an Open
 * Service Broker. The claim's `crossplane.io/claim-name|claim-namespace` labels are copied onto the
 * managed resource (provider-anynines resolves bindings, backups and restores by them); `service`
 * and `plan` become `serviceName`/`planName`; camelCase parameters become broker parameter names.
 */
export class A9sBackend extends Backend {
  public readonly automation = 'a9s';
  public readonly providerConfig: IProviderConfig;
  public readonly parameterCase: ParameterCase;
  public readonly organizationGuid: string;
  public readonly spaceGuid: string;
  private readonly fieldPaths: Readonly<Record<string, string>>;

  constructor(props: A9sBackendProps) {
    super('A9sBackendProps', props);
    this.providerConfig = checkProviderConfig('A9sBackendProps.providerConfig', props.providerConfig);
    this.parameterCase = props.parameterCase ?? ParameterCase.SNAKE;
    if (!(this.parameterCase instanceof ParameterCase))
      fail('A9sBackendProps.parameterCase', props.parameterCase, `must be one of ${ParameterCase.all.join(', ')}`);
    this.organizationGuid = props.organizationGuid ?? A9S_DEFAULT_ORGANIZATION_GUID;
    this.spaceGuid = props.spaceGuid ?? A9S_DEFAULT_SPACE_GUID;
    if (!GUID.test(this.organizationGuid)) fail('A9sBackendProps.organizationGuid', props.organizationGuid, 'must be a lowercase GUID');
    if (!GUID.test(this.spaceGuid)) fail('A9sBackendProps.spaceGuid', props.spaceGuid, 'must be a lowercase GUID');
    this.fieldPaths = { ...(props.fieldPaths ?? {}) };
  }

  public providerConfigs(): readonly IProviderConfig[] {
    return [this.providerConfig];
  }

  /** The broker name of a claim parameter. */
  public brokerNameOf(name: string, explicit?: string): string {
    if (explicit !== undefined) return explicit;
    switch (this.parameterCase) {
      case ParameterCase.KEBAB:
        return kebabCase(name);
      case ParameterCase.CAMEL:
        return name;
      default:
        return snakeCase(name);
    }
  }

  public compose(step: PatchAndTransformStep, model: DataServiceModel): void {
    for (const f of Object.keys(this.fieldPaths)) {
      if (!model.parameters.some((p) => p.location === ParameterLocation.SPEC && p.name === f)) {
        fail(`A9sBackend(${JSON.stringify(this.name)}).fieldPaths`, f, 'is not a top-level field of the data service');
      }
    }
    const patches: Patch[] = [
      ...claimLabelPatches(model.apiStyle),
      Patch.fromCompositeFieldPath('spec.service', 'spec.forProvider.serviceName'),
      Patch.fromCompositeFieldPath('spec.plan', 'spec.forProvider.planName'),
    ];
    if (model.acceptsIncomplete) patches.push(Patch.fromCompositeFieldPath('spec.acceptsIncomplete', 'spec.forProvider.acceptsIncomplete'));
    for (const p of this.parametersOf(model)) {
      if (p.location === ParameterLocation.SPEC) {
        const to = this.fieldPaths[p.name];
        if (to !== undefined) patches.push(Patch.fromCompositeFieldPath(p.fieldPath, to));
        continue;
      }
      const broker = this.brokerNameOf(p.name, p.brokerName);
      for (const leaf of p.leaves()) {
        const rest = leaf.map((s) => `.${s}`).join('');
        patches.push(Patch.fromCompositeFieldPath(`${p.fieldPath}${rest}`, `spec.forProvider.parameters.${broker}${rest}`));
      }
    }
    patches.push(
      ...statusPatches({
        createdAt: 'status.atProvider.createdAt',
        provisionedAt: 'status.atProvider.provisionedAt',
        state: 'status.atProvider.state',
        updatedAt: 'status.atProvider.updatedAt',
        conditions: 'status.conditions',
      }),
    );
    step.addResource(this.name, {
      base: {
        apiVersion: A9S_API_VERSION,
        kind: 'ServiceInstance',
        spec: {
          forProvider: { acceptsIncomplete: true, organizationGuid: this.organizationGuid, spaceGuid: this.spaceGuid },
          providerConfigRef: { name: this.providerConfig.name },
        },
      },
      patches,
      // provider-anynines sets the ServiceInstance Ready once the broker reports the instance provisioned.
      readinessChecks: [ReadinessCheck.matchCondition('Ready', 'True')],
    });
  }
}
