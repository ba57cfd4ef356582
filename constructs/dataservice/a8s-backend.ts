/**
 * `A8sBackend`: the backend that composes a data service with an a8s operator's custom resources through
 * provider-kubernetes `Object`s, laid out by an `OperatorProfile`.
 */
import { checkProviderConfig, ConvertType, type IProviderConfig, Patch, PatchAndTransformStep, ReadinessCheck, Transform } from '../crossplane/index.js';
import { Backend, BackendProps, DataServiceModel, statusPatches } from './backend.js';
import { objectProviderConfig, objectProviderConfigRef } from './control-plane-provider-config.js';
import { OBJECT_OBSERVED_STATUS, OperatorProfile } from './operator-profile.js';
import { ParameterLocation } from './parameter.js';
import { PlanSize } from './plan.js';
import { copyJson, fail } from './_util.js';

/**
 * Readiness of an a8s PostgreSQL instance: the provider-kubernetes `Object` is Ready (the manifest is
 * applied and observed) and the operator reports `status.clusterStatus: Running` (a8s sets it once
 * `status.readyReplicas` reaches `spec.replicas`; it is `NotRunning` before). The checks of
 * `OperatorProfile.A8S_POSTGRESQL`.
 */
export function a8sInstanceReadiness(): ReadinessCheck[] {
  return OperatorProfile.A8S_POSTGRESQL.readinessChecks();
}

/** Props that moved into `OperatorProfile` (a JavaScript caller passing them gets an error naming the new home). */
const MOVED = ['manifest', 'versionFromServicePrefix', 'planResourcePaths', 'parameterMappings', 'fieldPaths', 'statusFields', 'readinessChecks'] as const;

export interface A8sBackendProps extends BackendProps {
  /**
   * What the backend writes into the operator's object and which status means ready:
   * `OperatorProfile.A8S_POSTGRESQL`, or `OperatorProfile.of({...})` for another operator.
   */
  readonly profile: OperatorProfile;
  /**
   * The provider-kubernetes ProviderConfig of the `Object`s: a `ProviderConfig` for claims, a
   * `ClusterProviderConfig` for namespaced XRs (`KubernetesProviderConfig`, or `.fromName()` for one
   * made elsewhere). @default - the control plane's `kubernetes-provider` (CONTROL_PLANE_KUBERNETES_PROVIDER_CONFIG)
   */
  readonly providerConfig?: IProviderConfig;
}

/**
 * The a8s backend: one provider-kubernetes `Object` per claim wrapping an operator resource named and
 * namespaced like the claim, laid out as its `OperatorProfile` says (e.g. `OperatorProfile.A8S_POSTGRESQL`:
 * `postgresql.anynines.com/v1beta3 Postgresql`). The plan becomes the profile's resource and replica
 * fields through a plan → value map built from the `Plan` objects.
 */
export class A8sBackend extends Backend {
  public readonly automation = 'a8s';
  /** The ProviderConfig given, or undefined for the control plane's. */
  public readonly providerConfig?: IProviderConfig;
  /** What the backend writes into the operator's object and which status means ready. */
  public readonly profile: OperatorProfile;

  constructor(props: A8sBackendProps) {
    super('A8sBackendProps', props);
    for (const k of MOVED) {
      if ((props as unknown as Record<string, unknown>)[k] !== undefined)
        fail(
          `A8sBackendProps.${k}`,
          (props as unknown as Record<string, unknown>)[k],
          `moved into the backend's OperatorProfile: pass profile: OperatorProfile.A8S_POSTGRESQL or OperatorProfile.of({ ... }) (docs/dataservice.md, Operator profiles)`,
        );
    }
    if (props.profile === undefined)
      fail('A8sBackendProps.profile', props.profile, 'is required: OperatorProfile.A8S_POSTGRESQL, or OperatorProfile.of({ ... }) for another operator');
    if (!(props.profile instanceof OperatorProfile))
      fail('A8sBackendProps.profile', props.profile, 'must be made with OperatorProfile.of() or be a built-in profile');
    if (props.providerConfig !== undefined) this.providerConfig = checkProviderConfig('A8sBackendProps.providerConfig', props.providerConfig);
    this.profile = props.profile;
  }

  /** The ProviderConfig of the `Object`s: the one given (checked against the API style), else the control plane's. */
  public providerConfigs(model: DataServiceModel): readonly IProviderConfig[] {
    return [objectProviderConfig(`A8sBackend(${JSON.stringify(this.name)}).providerConfig`, this.providerConfig, model.apiStyle)];
  }

  public compose(step: PatchAndTransformStep, model: DataServiceModel): void {
    const p = `A8sBackend(${JSON.stringify(this.name)})`;
    const pp = `${p}.profile(${JSON.stringify(this.profile.name)})`;
    const profile = this.profile;
    const m = (path: string) => `spec.forProvider.manifest.${path}`;
    const patches: Patch[] = [
      // Named and namespaced like the bound object: the claim (its labels on the XR) or the namespaced XR itself.
      Patch.fromCompositeFieldPath(model.apiStyle.namespacePath, m('metadata.namespace')),
      Patch.fromCompositeFieldPath(model.apiStyle.namePath, m('metadata.name')),
    ];
    if (profile.version !== undefined) {
      const { prefix, path, convert } = profile.version;
      const integer = convert !== ConvertType.STRING;
      for (const s of this.serviceNames(model)) {
        const rest = s.slice(prefix.length);
        if (!s.startsWith(prefix) || rest === '' || (integer && !/^[0-9]+$/.test(rest))) {
          fail(`${pp}.version.prefix`, prefix, `does not turn service "${s}" into ${integer ? 'an integer version' : 'a version'}`);
        }
      }
      patches.push(
        Patch.fromCompositeFieldPath('spec.service', m(path), {
          transforms: [Transform.trimPrefix(prefix), ...(integer ? [Transform.convert(convert)] : [])],
        }),
      );
    }
    // Plan → node resources and replicas, from the Plan objects.
    const plans = this.planNames(model).map((n) => model.plans.get(n)!);
    for (const key of ['storage', 'cpu', 'memory'] as const) {
      const targets = profile.planResourcePaths[key];
      if (targets.length === 0) continue;
      const missing = plans.filter((pl) => pl.size[key as keyof PlanSize] === undefined);
      if (missing.length === plans.length) continue;
      if (missing.length > 0)
        fail(
          `${p}: Plan(${JSON.stringify(missing[0].name)}).size.${key}`,
          undefined,
          `must be set: other plans of backend "${this.name}" set it and its profile maps it to ${targets.join(', ')}`,
        );
      const map = Object.fromEntries(plans.map((pl) => [pl.name, pl.size[key as keyof PlanSize]]));
      for (const t of targets) patches.push(Patch.fromCompositeFieldPath('spec.plan', m(t), { transforms: [Transform.map(map)] }));
    }
    const replicas = Object.fromEntries(plans.map((pl) => [pl.name, pl.replicas]));
    for (const t of profile.planResourcePaths.replicas)
      patches.push(Patch.fromCompositeFieldPath('spec.plan', m(t), { transforms: [Transform.map(replicas)] }));

    const mappings = profile.parameterMappings;
    const fields = profile.fieldPaths;
    const mine = this.parametersOf(model);
    for (const k of Object.keys(mappings)) {
      if (profile.isOptionalKey(k)) continue;
      if (!mine.some((x) => x.location === ParameterLocation.PARAMETERS && x.name === k))
        fail(`${pp}.parameterMappings`, k, `is not a parameter accepted by backend "${this.name}"`);
    }
    for (const k of Object.keys(fields)) {
      if (profile.isOptionalKey(k)) continue;
      if (!mine.some((x) => x.location === ParameterLocation.SPEC && x.name === k)) fail(`${pp}.fieldPaths`, k, 'is not a top-level field of the data service');
    }
    for (const f of mine.filter((x) => x.location === ParameterLocation.SPEC)) {
      if (fields[f.name] !== undefined) patches.push(Patch.fromCompositeFieldPath(f.fieldPath, m(fields[f.name])));
    }
    for (const par of mine.filter((x) => x.location === ParameterLocation.PARAMETERS)) {
      const mp = mappings[par.name] ?? {};
      const target = mp.path ?? `${profile.parametersPath}.${par.name}`;
      patches.push(Patch.fromCompositeFieldPath(par.fieldPath, m(target), mp.transforms ? { transforms: mp.transforms } : {}));
    }
    patches.push(...statusPatches(Object.fromEntries(Object.entries(profile.statusFields).map(([k, v]) => [k, `${OBJECT_OBSERVED_STATUS}.${v}`]))));

    const manifest: Record<string, unknown> = { apiVersion: profile.apiVersion, kind: profile.kind };
    if (profile.spec !== undefined) manifest.spec = copyJson(profile.spec);
    step.addResource(this.name, {
      base: {
        apiVersion: model.apiStyle.objectApiVersion,
        kind: 'Object',
        spec: { forProvider: { manifest }, providerConfigRef: objectProviderConfigRef(this.providerConfigs(model)[0], model.apiStyle) },
      },
      patches,
      readinessChecks: profile.readinessChecks(),
    });
  }
}
