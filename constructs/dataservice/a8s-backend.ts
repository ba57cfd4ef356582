import { ConvertType, Patch, PatchAndTransformStep, ReadinessCheck, Transform } from '../crossplane/index.js';
import { Backend, BackendProps, DataServiceModel, statusPatches } from './backend.js';
import { ParameterLocation } from './parameter.js';
import { PlanSize } from './plan.js';
import { checkDnsLabel, checkString, copyJson, fail, isPlainObject } from './_util.js';

/** Klutch's provider-kubernetes ProviderConfig name. */
export const KUBERNETES_PROVIDER_CONFIG = 'kubernetes-provider';
/** Where a provider-kubernetes `Object` shows the observed manifest's status (the operator's status). */
export const OBJECT_OBSERVED_STATUS = 'status.atProvider.manifest.status';
/** `status.clusterStatus` value with which an a8s operator reports every replica ready. */
export const A8S_CLUSTER_RUNNING = 'Running';

/**
 * Readiness of an a8s data service instance: the provider-kubernetes `Object` is Ready (the
 * manifest is applied and observed) and the operator reports `status.clusterStatus: Running`
 * (a8s sets it once `status.readyReplicas` reaches `spec.replicas`; it is `NotRunning` before).
 * Without checks P&T would take the Object's own Ready condition, which provider-kubernetes sets as
 * soon as the object is created — long before a database exists.
 */
export function a8sInstanceReadiness(): ReadinessCheck[] {
  return [ReadinessCheck.matchCondition('Ready', 'True'), ReadinessCheck.matchString(`${OBJECT_OBSERVED_STATUS}.clusterStatus`, A8S_CLUSTER_RUNNING)];
}

/** Where the plan's resources go in the a8s manifest (paths below the manifest). */
export interface A8sPlanResourcePaths {
  /** @default ['spec.volumeSize'] */
  readonly storage?: readonly string[];
  /** @default ['spec.resources.requests.cpu', 'spec.resources.limits.cpu'] */
  readonly cpu?: readonly string[];
  /** @default ['spec.resources.requests.memory', 'spec.resources.limits.memory'] */
  readonly memory?: readonly string[];
  /** @default ['spec.replicas'] */
  readonly replicas?: readonly string[];
}

/** How one claim parameter maps onto the a8s manifest. */
export interface A8sParameterMapping {
  /** Path below the manifest. @default `spec.parameters.<name>` */
  readonly path?: string;
  /** Transforms applied to the value. @default - none */
  readonly transforms?: Transform[];
}

export interface A8sBackendProps extends BackendProps {
  /** The a8s custom resource: apiVersion and kind, e.g. `postgresql.anynines.com/v1beta3` `Postgresql`. */
  readonly manifest: { readonly apiVersion: string; readonly kind: string; readonly spec?: Record<string, unknown> };
  /** provider-kubernetes ProviderConfig name. @default 'kubernetes-provider' */
  readonly providerConfigName?: string;
  /**
   * Derive the manifest's `spec.version` (integer) from the service name by trimming this prefix,
   * e.g. `a9s-postgresql` (`a9s-postgresql15` → 15). @default - no version patch
   */
  readonly versionFromServicePrefix?: string;
  /** Target paths of the plan's size and replicas. @default - the a8s PostgreSQL layout */
  readonly planResourcePaths?: A8sPlanResourcePaths;
  /** Per-parameter mapping overrides (parameter name → mapping). @default - `spec.parameters.<name>` unchanged */
  readonly parameterMappings?: Readonly<Record<string, A8sParameterMapping>>;
  /** Top-level `spec.<field>` fields patched onto the manifest: field → path below the manifest. @default - none */
  readonly fieldPaths?: Readonly<Record<string, string>>;
  /** Manifest status fields copied to `status.managed`: key → path below the manifest's `status`. @default - none */
  readonly statusFields?: Readonly<Record<string, string>>;
  /**
   * When the composed `Object` (and so the claim) is Ready. Paths are on the `Object`; the
   * operator's status is below `status.atProvider.manifest.status` (OBJECT_OBSERVED_STATUS).
   * @default - a8sInstanceReadiness(): Object Ready and `clusterStatus` "Running"
   */
  readonly readinessChecks?: readonly ReadinessCheck[];
}

const DEFAULT_PATHS: Required<A8sPlanResourcePaths> = {
  storage: ['spec.volumeSize'],
  cpu: ['spec.resources.requests.cpu', 'spec.resources.limits.cpu'],
  memory: ['spec.resources.requests.memory', 'spec.resources.limits.memory'],
  replicas: ['spec.replicas'],
};

/**
 * The a8s backend: one provider-kubernetes `Object` per claim wrapping an a8s operator resource
 * (e.g. `postgresql.anynines.com/v1beta3 Postgresql`) named and namespaced like the claim. The plan
 * becomes node resources and replicas through a plan → value map built from the `Plan` objects.
 */
export class A8sBackend extends Backend {
  public readonly automation = 'a8s';
  public readonly providerConfigName: string;
  private readonly props: A8sBackendProps;
  private readonly paths: Required<A8sPlanResourcePaths>;

  constructor(props: A8sBackendProps) {
    super('A8sBackendProps', props);
    const m = props.manifest;
    if (!isPlainObject(m)) fail('A8sBackendProps.manifest', m, 'must be { apiVersion, kind, spec? }');
    if (typeof m.apiVersion !== 'string' || !/^[a-z0-9.-]+\/v[0-9a-z]+$/.test(m.apiVersion))
      fail('A8sBackendProps.manifest.apiVersion', m.apiVersion, 'must be "<group>/<version>"');
    if (typeof m.kind !== 'string' || !/^[A-Z][A-Za-z0-9]*$/.test(m.kind)) fail('A8sBackendProps.manifest.kind', m.kind, 'must be a PascalCase kind');
    this.providerConfigName = checkDnsLabel('A8sBackendProps.providerConfigName', props.providerConfigName ?? KUBERNETES_PROVIDER_CONFIG);
    if (props.versionFromServicePrefix !== undefined) checkString('A8sBackendProps.versionFromServicePrefix', props.versionFromServicePrefix);
    if (props.readinessChecks !== undefined) {
      if (!Array.isArray(props.readinessChecks) || props.readinessChecks.length === 0)
        fail('A8sBackendProps.readinessChecks', props.readinessChecks, 'must list at least one ReadinessCheck (leave it unset for the a8s default)');
      props.readinessChecks.forEach((c, i) => {
        if (!(c instanceof ReadinessCheck)) fail(`A8sBackendProps.readinessChecks[${i}]`, c, 'must be made with a ReadinessCheck factory');
      });
    }
    this.paths = { ...DEFAULT_PATHS, ...(props.planResourcePaths ?? {}) };
    this.props = props;
  }

  public compose(step: PatchAndTransformStep, model: DataServiceModel): void {
    const p = `A8sBackend(${JSON.stringify(this.name)})`;
    const m = (path: string) => `spec.forProvider.manifest.${path}`;
    const patches: Patch[] = [
      // Named and namespaced like the bound object: the claim (its labels on the XR) or the namespaced XR itself.
      Patch.fromCompositeFieldPath(model.apiStyle.namespacePath, m('metadata.namespace')),
      Patch.fromCompositeFieldPath(model.apiStyle.namePath, m('metadata.name')),
    ];
    if (this.props.versionFromServicePrefix !== undefined) {
      const prefix = this.props.versionFromServicePrefix;
      for (const s of this.serviceNames(model)) {
        if (!s.startsWith(prefix) || !/^[0-9]+$/.test(s.slice(prefix.length))) {
          fail(`${p}.versionFromServicePrefix`, prefix, `does not turn service "${s}" into an integer version`);
        }
      }
      patches.push(
        Patch.fromCompositeFieldPath('spec.service', m('spec.version'), {
          transforms: [Transform.trimPrefix(prefix), Transform.convert(ConvertType.INT)],
        }),
      );
    }
    // Plan → node resources and replicas, from the Plan objects.
    const plans = this.planNames(model).map((n) => model.plans.get(n)!);
    for (const key of ['storage', 'cpu', 'memory'] as const) {
      const targets = this.paths[key];
      if (targets.length === 0) continue;
      const missing = plans.filter((pl) => pl.size[key as keyof PlanSize] === undefined);
      if (missing.length === plans.length) continue;
      if (missing.length > 0)
        fail(
          `${p}: Plan(${JSON.stringify(missing[0].name)}).size.${key}`,
          undefined,
          `must be set: other plans of backend "${this.name}" set it and it is mapped to ${targets.join(', ')}`,
        );
      const map = Object.fromEntries(plans.map((pl) => [pl.name, pl.size[key as keyof PlanSize]]));
      for (const t of targets) patches.push(Patch.fromCompositeFieldPath('spec.plan', m(t), { transforms: [Transform.map(map)] }));
    }
    const replicas = Object.fromEntries(plans.map((pl) => [pl.name, pl.replicas]));
    for (const t of this.paths.replicas) patches.push(Patch.fromCompositeFieldPath('spec.plan', m(t), { transforms: [Transform.map(replicas)] }));

    const mappings = this.props.parameterMappings ?? {};
    const fields = this.props.fieldPaths ?? {};
    const mine = this.parametersOf(model);
    for (const k of Object.keys(mappings)) {
      if (!mine.some((x) => x.location === ParameterLocation.PARAMETERS && x.name === k))
        fail(`${p}.parameterMappings`, k, `is not a parameter accepted by backend "${this.name}"`);
    }
    for (const k of Object.keys(fields)) {
      if (!mine.some((x) => x.location === ParameterLocation.SPEC && x.name === k)) fail(`${p}.fieldPaths`, k, 'is not a top-level field of the data service');
    }
    for (const f of mine.filter((x) => x.location === ParameterLocation.SPEC)) {
      if (fields[f.name] !== undefined) patches.push(Patch.fromCompositeFieldPath(f.fieldPath, m(fields[f.name])));
    }
    for (const par of mine.filter((x) => x.location === ParameterLocation.PARAMETERS)) {
      const mp = mappings[par.name] ?? {};
      const target = mp.path ?? `spec.parameters.${par.name}`;
      patches.push(Patch.fromCompositeFieldPath(par.fieldPath, m(target), mp.transforms ? { transforms: mp.transforms } : {}));
    }
    patches.push(
      ...statusPatches(Object.fromEntries(Object.entries(this.props.statusFields ?? {}).map(([k, v]) => [k, `status.atProvider.manifest.status.${v}`]))),
    );

    const manifest: Record<string, unknown> = { apiVersion: this.props.manifest.apiVersion, kind: this.props.manifest.kind };
    if (this.props.manifest.spec !== undefined) manifest.spec = copyJson(this.props.manifest.spec);
    step.addResource(this.name, {
      base: {
        apiVersion: model.apiStyle.objectApiVersion,
        kind: 'Object',
        spec: { forProvider: { manifest }, providerConfigRef: model.apiStyle.objectProviderConfigRef(this.providerConfigName) },
      },
      patches,
      readinessChecks: [...(this.props.readinessChecks ?? a8sInstanceReadiness())],
    });
  }
}
