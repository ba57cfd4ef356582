/**
 * `CrossplaneInstall`: Crossplane itself from its Helm chart (as an Argo CD Application, a Flux HelmRelease
 * or rendered objects), with the feature flags of the chosen Crossplane version.
 */
import { spawnSync } from 'node:child_process';
import { ApiObject, Helm } from 'cdk8s';
import { Construct } from 'constructs';
import { readChartMeta } from './_chart.js';
import { CORE_FLAGS } from './_crossplane-flags.js';
import { checkDnsLabel, checkDnsSubdomain, checkInteger, checkNonEmpty, copyJson, fail, isPlainObject, show } from './_util.js';
import { CrossplaneVersion } from './crossplane-version.js';

/** The stable Crossplane Helm repository. */
export const CROSSPLANE_CHART_REPO = 'https://charts.crossplane.io/stable';
/** The chart name. */
export const CROSSPLANE_CHART = 'crossplane';
/** Flag added on Crossplane 1.20 because the konnector server-side-applies claims. */
export const SSA_CLAIMS_FLAG = '--enable-ssa-claims';

/** Options of an Argo CD Application install. */
export interface ArgoApplicationOptions {
  /** Name of the Application. @default 'crossplane' */
  readonly name?: string;
  /** Namespace Argo CD watches for Applications. @default 'argocd' */
  readonly namespace?: string;
  /** @default 'default' */
  readonly project?: string;
  /** Target cluster API server. @default 'https://kubernetes.default.svc' */
  readonly destinationServer?: string;
  /** Automated sync with prune and self-heal. @default true */
  readonly automated?: boolean;
}

/** Options of a Flux HelmRepository + HelmRelease install. */
export interface FluxHelmReleaseOptions {
  /** Name of the HelmRepository. @default 'crossplane-stable' */
  readonly repositoryName?: string;
  /** Namespace of the HelmRepository and HelmRelease. @default - the install namespace */
  readonly namespace?: string;
  /** Reconcile interval. @default '1h' */
  readonly interval?: string;
}

/** Options of a local `helm template` render. */
export interface HelmTemplateOptions {
  /** Path to a local chart folder or packaged chart (`crossplane-2.3.4.tgz`). */
  readonly chart: string;
  /** The helm binary. @default - `$HELM` if set, otherwise `helm` on PATH */
  readonly helmExecutable?: string;
  /** Extra `helm template` flags. @default - none */
  readonly helmFlags?: string[];
}

/** How the Crossplane chart reaches the cluster. */
export class InstallMethod {
  /** An Argo CD `Application` with the chart as Helm source (the default). */
  public static argoApplication(options: ArgoApplicationOptions = {}): InstallMethod {
    const p = 'InstallMethod.argoApplication(options)';
    if (options.name !== undefined) checkDnsSubdomain(`${p}.name`, options.name);
    if (options.namespace !== undefined) checkDnsLabel(`${p}.namespace`, options.namespace);
    if (options.project !== undefined) checkNonEmpty(`${p}.project`, options.project);
    if (options.destinationServer !== undefined && !/^https?:\/\/\S+$/.test(options.destinationServer))
      fail(`${p}.destinationServer`, options.destinationServer, 'must be an http(s) URL');
    return new InstallMethod('ArgoApplication', { ...options });
  }

  /** A Flux `HelmRepository` + `HelmRelease`. */
  public static fluxHelmRelease(options: FluxHelmReleaseOptions = {}): InstallMethod {
    const p = 'InstallMethod.fluxHelmRelease(options)';
    if (options.repositoryName !== undefined) checkDnsSubdomain(`${p}.repositoryName`, options.repositoryName);
    if (options.namespace !== undefined) checkDnsLabel(`${p}.namespace`, options.namespace);
    if (options.interval !== undefined && !/^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$/.test(options.interval))
      fail(`${p}.interval`, options.interval, 'is not a Go duration such as "1h" or "10m"');
    return new InstallMethod('FluxHelmRelease', { ...options });
  }

  /** Renders a local chart with `helm template` into plain manifests (needs helm). */
  public static helmTemplate(options: HelmTemplateOptions): InstallMethod {
    if (!isPlainObject(options)) fail('InstallMethod.helmTemplate(options)', options, 'must be {chart, helmExecutable?}');
    checkNonEmpty('InstallMethod.helmTemplate(options).chart', options.chart);
    return new InstallMethod('HelmTemplate', { ...options });
  }

  private constructor(
    /** `ArgoApplication`, `FluxHelmRelease` or `HelmTemplate`. */
    public readonly kind: 'ArgoApplication' | 'FluxHelmRelease' | 'HelmTemplate',
    /** @internal */
    public readonly _options: ArgoApplicationOptions & FluxHelmReleaseOptions & Partial<HelmTemplateOptions>,
  ) {}
}

/** Compute resources of a Crossplane pod. */
export interface CrossplaneResources {
  /** @default - chart default */
  readonly requests?: Record<string, string>;
  /** @default - chart default */
  readonly limits?: Record<string, string>;
}

export interface CrossplaneInstallProps {
  /** @default CrossplaneVersion.V2_3 */
  readonly version?: CrossplaneVersion;
  /** @default 'crossplane-system' */
  readonly namespace?: string;
  /** Helm release name. @default 'crossplane' */
  readonly releaseName?: string;
  /** @default InstallMethod.argoApplication() */
  readonly installMethod?: InstallMethod;
  /**
   * Extra `crossplane core start` flags, checked against the flags the chosen version has.
   * On 1.20, `--enable-ssa-claims` is added when missing.
   * @default - none
   */
  readonly args?: string[];
  /** Skip the flag check (for flags of Crossplane versions newer than klutch-kit knows). @default false */
  readonly skipArgValidation?: boolean;
  /** Resources of the Crossplane pod (`resourcesCrossplane`). @default - chart default */
  readonly resources?: CrossplaneResources;
  /** Resources of the RBAC manager pod (`resourcesRBACManager`). @default - chart default */
  readonly rbacManagerResources?: CrossplaneResources;
  /** Expose Prometheus metrics (`metrics.enabled`). @default false */
  readonly metrics?: boolean;
  /** Metrics port. @default - chart default (8080) */
  readonly metricsPort?: number;
  /** @default - chart default (1) */
  readonly replicas?: number;
  /** Emit the Namespace object. @default true */
  readonly createNamespace?: boolean;
  /** Extra chart values, deep-merged over the typed ones (escape hatch). @default - none */
  readonly values?: Record<string, unknown>;
}

/**
 * Crossplane from its Helm chart, pinned to a version, emitted for GitOps (Argo CD Application,
 * Flux HelmRepository + HelmRelease) or rendered locally with `helm template`, plus its Namespace.
 */
export class CrossplaneInstall extends Construct {
  public readonly version: CrossplaneVersion;
  public readonly namespace: string;
  public readonly releaseName: string;
  public readonly installMethod: InstallMethod;
  /** The Namespace object, unless `createNamespace: false`. */
  public readonly namespaceObject?: ApiObject;
  /** The objects that install the chart (Application, HelmRepository + HelmRelease, or the rendered manifests). */
  public readonly releaseObjects: ApiObject[];
  private readonly chartValues: Record<string, unknown>;

  constructor(scope: Construct, id: string, props: CrossplaneInstallProps = {}) {
    super(scope, id);
    const p = 'CrossplaneInstallProps';
    if (props.version !== undefined && !(props.version instanceof CrossplaneVersion)) {
      fail(`${p}.version`, props.version, 'must be a CrossplaneVersion (e.g. CrossplaneVersion.V2_3 or CrossplaneVersion.of("1.20.13"))');
    }
    this.version = props.version ?? CrossplaneVersion.V2_3;
    this.namespace = checkDnsLabel(`${p}.namespace`, props.namespace ?? 'crossplane-system');
    this.releaseName = checkDnsLabel(`${p}.releaseName`, props.releaseName ?? 'crossplane');
    if (this.releaseName.length > 53) fail(`${p}.releaseName`, this.releaseName, "exceeds Helm's 53-character release name limit");
    if (props.installMethod !== undefined && !(props.installMethod instanceof InstallMethod)) {
      fail(`${p}.installMethod`, props.installMethod, 'must be made with InstallMethod.argoApplication(), fluxHelmRelease() or helmTemplate()');
    }
    this.installMethod = props.installMethod ?? InstallMethod.argoApplication();

    const args = [...(props.args ?? [])];
    args.forEach((a, i) => checkNonEmpty(`${p}.args[${i}]`, a));
    if (!props.skipArgValidation) checkArgs(`${p}.args`, args, this.version);
    if (this.version.isV1 && !args.some((a) => a === SSA_CLAIMS_FLAG || a.startsWith(`${SSA_CLAIMS_FLAG}=`))) args.push(SSA_CLAIMS_FLAG);
    if (args.some((a) => a === `${SSA_CLAIMS_FLAG}=false`)) {
      fail(`${p}.args`, `${SSA_CLAIMS_FLAG}=false`, 'turns off server-side-applied claims, which the konnector needs');
    }

    if (props.metricsPort !== undefined) {
      checkInteger(`${p}.metricsPort`, props.metricsPort, 1);
      if (props.metricsPort > 65535) fail(`${p}.metricsPort`, props.metricsPort, 'must be a port (1-65535)');
      if (!props.metrics) fail(`${p}.metricsPort`, props.metricsPort, 'needs metrics: true');
    }
    if (props.replicas !== undefined) checkInteger(`${p}.replicas`, props.replicas, 1);
    if (props.values !== undefined && !isPlainObject(props.values)) fail(`${p}.values`, props.values, 'must be an object of chart values');

    const typed: Record<string, unknown> = {};
    if (args.length) typed.args = args;
    if (props.replicas !== undefined) typed.replicas = props.replicas;
    if (props.resources) typed.resourcesCrossplane = checkResources(`${p}.resources`, props.resources);
    if (props.rbacManagerResources) typed.resourcesRBACManager = checkResources(`${p}.rbacManagerResources`, props.rbacManagerResources);
    if (props.metrics !== undefined) {
      typed.metrics = props.metricsPort !== undefined ? { enabled: props.metrics, port: String(props.metricsPort) } : { enabled: props.metrics };
    }
    if (props.values?.args !== undefined)
      fail(`${p}.values.args`, props.values.args, 'is set through CrossplaneInstallProps.args (checked against the version); move it there');
    this.chartValues = deepMerge(typed, copyJson(props.values ?? {}));

    if (props.createNamespace ?? true) {
      this.namespaceObject = new ApiObject(this, 'Namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: this.namespace } });
    }

    switch (this.installMethod.kind) {
      case 'ArgoApplication':
        this.releaseObjects = [this.argoApplication()];
        break;
      case 'FluxHelmRelease':
        this.releaseObjects = this.fluxRelease();
        break;
      case 'HelmTemplate':
        this.releaseObjects = this.helmTemplate();
        break;
    }
    if (this.namespaceObject) for (const o of this.releaseObjects) o.addDependency(this.namespaceObject);
  }

  /** A copy of the chart values used for the install. */
  public get values(): Record<string, unknown> {
    return copyJson(this.chartValues);
  }

  /** The effective `args` value (including `--enable-ssa-claims` on 1.20). */
  public get args(): string[] {
    return Array.isArray(this.chartValues.args) ? [...(this.chartValues.args as string[])] : [];
  }

  private argoApplication(): ApiObject {
    const o = this.installMethod._options;
    const automated = o.automated ?? true;
    const helm: Record<string, unknown> = { releaseName: this.releaseName };
    if (Object.keys(this.chartValues).length) helm.valuesObject = copyJson(this.chartValues);
    return new ApiObject(this, 'Application', {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: o.name ?? 'crossplane', namespace: o.namespace ?? 'argocd' },
      spec: {
        project: o.project ?? 'default',
        source: { repoURL: CROSSPLANE_CHART_REPO, chart: CROSSPLANE_CHART, targetRevision: this.version.chartVersion, helm },
        destination: { server: o.destinationServer ?? 'https://kubernetes.default.svc', namespace: this.namespace },
        syncPolicy: {
          ...(automated ? { automated: { prune: true, selfHeal: true } } : {}),
          syncOptions: ['ServerSideApply=true'],
        },
      },
    });
  }

  private fluxRelease(): ApiObject[] {
    const o = this.installMethod._options;
    const ns = o.namespace ?? this.namespace;
    const interval = o.interval ?? '1h';
    const repoName = o.repositoryName ?? 'crossplane-stable';
    const repo = new ApiObject(this, 'HelmRepository', {
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'HelmRepository',
      metadata: { name: repoName, namespace: ns },
      spec: { interval, url: CROSSPLANE_CHART_REPO },
    });
    const spec: Record<string, unknown> = {
      interval,
      releaseName: this.releaseName,
      targetNamespace: this.namespace,
      chart: { spec: { chart: CROSSPLANE_CHART, version: this.version.chartVersion, sourceRef: { kind: 'HelmRepository', name: repoName, namespace: ns } } },
      install: { remediation: { retries: 3 } },
      upgrade: { remediation: { retries: 3 } },
    };
    if (Object.keys(this.chartValues).length) spec.values = copyJson(this.chartValues);
    const release = new ApiObject(this, 'HelmRelease', {
      apiVersion: 'helm.toolkit.fluxcd.io/v2',
      kind: 'HelmRelease',
      metadata: { name: this.releaseName, namespace: ns },
      spec,
    });
    release.addDependency(repo);
    return [repo, release];
  }

  private helmTemplate(): ApiObject[] {
    const o = this.installMethod._options;
    const chart = o.chart!;
    const meta = readChartMeta(chart);
    if (meta === undefined) fail('InstallMethod.helmTemplate(options).chart', chart, 'does not exist; give a local chart folder or a packaged .tgz');
    if (meta.name !== undefined && meta.name !== CROSSPLANE_CHART)
      fail('InstallMethod.helmTemplate(options).chart', chart, `is the chart ${show(meta.name)}, not "crossplane"`);
    if (meta.version !== undefined && meta.version !== this.version.chartVersion) {
      fail(
        'InstallMethod.helmTemplate(options).chart',
        chart,
        `is chart version ${show(meta.version)} but CrossplaneInstallProps.version is "${this.version.chartVersion}"; pin the matching CrossplaneVersion.of("${meta.version}")`,
      );
    }
    const helmExecutable = o.helmExecutable ?? process.env.HELM ?? 'helm';
    const probe = spawnSync(helmExecutable, ['version', '--short'], { encoding: 'utf8' });
    if (probe.error || probe.status !== 0) {
      fail(
        'InstallMethod.helmTemplate(options).helmExecutable',
        helmExecutable,
        `cannot be run (${probe.error ? ((probe.error as NodeJS.ErrnoException).code ?? probe.error.message) : `exit ${probe.status}`}): install helm 3 on PATH, set $HELM, or use InstallMethod.argoApplication()/fluxHelmRelease(), which need no helm`,
      );
    }
    const helm = new Helm(this, 'Chart', {
      chart,
      releaseName: this.releaseName,
      namespace: this.namespace,
      values: copyJson(this.chartValues),
      helmExecutable,
      helmFlags: o.helmFlags ? [...o.helmFlags] : undefined,
    });
    return helm.apiObjects;
  }
}

function checkResources(prop: string, r: CrossplaneResources): Record<string, unknown> {
  if (!isPlainObject(r)) fail(prop, r, 'must be {requests?, limits?}');
  const out: Record<string, unknown> = {};
  for (const k of ['requests', 'limits'] as const) {
    const v = r[k];
    if (v === undefined) continue;
    if (!isPlainObject(v)) fail(`${prop}.${k}`, v, 'must be an object such as {cpu: "100m", memory: "256Mi"}');
    for (const [res, q] of Object.entries(v)) {
      if (typeof q !== 'string' || !/^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$/.test(q))
        fail(`${prop}.${k}.${res}`, q, 'is not a Kubernetes quantity (e.g. "500m", "1Gi")');
    }
    out[k] = { ...v };
  }
  return out;
}

/**
 * Checks `crossplane core start` flags against the flags the version has: unknown flags make the
 * Crossplane pod fail to start.
 */
function checkArgs(prop: string, args: string[], version: CrossplaneVersion): void {
  const known = Object.keys(CORE_FLAGS).map((k) => k.split('.').map(Number));
  const [maj, min] = [version.major, version.minor];
  const line = known.filter(([a, b]) => a === maj && b <= min).sort((x, y) => y[1] - x[1])[0];
  const table = CORE_FLAGS[line ? `${line[0]}.${line[1]}` : version.minorLine];
  if (!table) return;
  const v1 = CORE_FLAGS['1.20'];
  const newest = CORE_FLAGS['2.3'];
  args.forEach((arg, i) => {
    let name: string;
    if (arg.startsWith('--')) {
      name = arg.slice(2).split('=')[0];
    } else if (/^-[a-zA-Z]$/.test(arg) || /^-[a-zA-Z]=/.test(arg)) {
      const s = arg[1];
      if (!table.short.includes(s)) fail(`${prop}[${i}]`, arg, `is not a flag of Crossplane ${version.chartVersion}`);
      return;
    } else {
      return; // the value of the previous flag
    }
    if (name === '' || table.flags.includes(name)) return;
    if (table.removed.includes(name) || (!version.isV1 && v1.flags.includes(name))) {
      fail(`${prop}[${i}]`, arg, `is a Crossplane 1.x flag that Crossplane ${version.chartVersion} no longer has (it fails to start); remove it`);
    }
    if (version.isV1 && newest.flags.includes(name)) {
      fail(`${prop}[${i}]`, arg, `only exists in Crossplane 2.x, not in ${version.chartVersion}; remove it or pick a 2.x CrossplaneVersion`);
    }
    if (newest.flags.includes(name)) {
      fail(`${prop}[${i}]`, arg, `was added after Crossplane ${version.chartVersion}; pick a newer CrossplaneVersion or remove it`);
    }
    fail(`${prop}[${i}]`, arg, `is not a flag of Crossplane ${version.chartVersion} (crossplane core start); an unknown flag makes the pod fail to start`);
  });
}

function deepMerge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    out[k] = isPlainObject(v) && isPlainObject(out[k]) ? deepMerge(out[k] as Record<string, unknown>, v) : v;
  }
  return out;
}
