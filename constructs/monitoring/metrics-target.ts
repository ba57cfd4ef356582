/**
 * What a ServiceMonitor/PodMonitor scrapes: one of klutch-kit's runtime components, found by the
 * labels the runtime constructs put on its Service and Pods.
 */
import { fail } from '../_errors.js';
import { checkDnsLabel } from '../runtime/_pod.js';
import { BACKEND_NAMESPACE, KONNECTOR_NAMESPACE } from '../runtime/_defaults.js';
import type { BindBackend } from '../runtime/bind-backend.js';
import type { Konnector } from '../runtime/konnector.js';
import { EnumLike, enumMembers } from '../_enum-like.js';

/** The runtime component a target belongs to (it decides which dashboard rows and alerts apply) (enum-like: static instances). */
export class MetricsComponent extends EnumLike {
  public static readonly KONNECTOR = new MetricsComponent('konnector');
  public static readonly BACKEND = new MetricsComponent('backend');

  /** Every instance, in declaration order. */
  public static get all(): readonly MetricsComponent[] {
    return enumMembers(MetricsComponent);
  }

  private constructor(
    /** The component name, `konnector` or `backend`. */
    value: string,
  ) {
    super(value);
  }
}

export interface MetricsTargetOptions {
  /** Namespace of the component. @default "klutch-bind" (konnector), "klutch-system" (backend) */
  readonly namespace?: string;
  /** Name of the backend (BindBackendProps.name); ignored for the konnector. @default "klutch-backend" */
  readonly name?: string;
}

/** A scrape target; build one with the static methods. */
export class MetricsTarget {
  /** The konnector of an app cluster (Service `konnector-metrics`, port `metrics`; Pod port `http`). */
  public static konnector(options: MetricsTargetOptions = {}): MetricsTarget {
    const ns = checkDnsLabel('MetricsTargetOptions.namespace', options.namespace ?? KONNECTOR_NAMESPACE);
    return new MetricsTarget(MetricsComponent.KONNECTOR, ns, 'konnector', 'konnector-metrics', 'metrics', 'http', {
      'app.kubernetes.io/name': 'konnector',
      'app.kubernetes.io/component': 'konnector',
    });
  }

  /** The bind backend of a control plane (Service `<name>`, port `http`; Pod port `http`). */
  public static backend(options: MetricsTargetOptions = {}): MetricsTarget {
    const ns = checkDnsLabel('MetricsTargetOptions.namespace', options.namespace ?? BACKEND_NAMESPACE);
    const name = checkDnsLabel('MetricsTargetOptions.name', options.name ?? 'klutch-backend');
    return new MetricsTarget(MetricsComponent.BACKEND, ns, name, name, 'http', 'http', {
      'app.kubernetes.io/name': name,
      'app.kubernetes.io/component': 'bind-backend',
    });
  }

  /** The target of a {@link Konnector} construct (its namespace). */
  public static fromKonnector(konnector: Konnector): MetricsTarget {
    if (!konnector || typeof konnector.namespace !== 'string') fail('MetricsTarget.fromKonnector.konnector', konnector, 'is not a Konnector construct');
    return MetricsTarget.konnector({ namespace: konnector.namespace });
  }

  /** The target of a {@link BindBackend} construct (its namespace and name). */
  public static fromBindBackend(backend: BindBackend): MetricsTarget {
    if (!backend || typeof backend.namespace !== 'string' || typeof backend.name !== 'string') {
      fail('MetricsTarget.fromBindBackend.backend', backend, 'is not a BindBackend construct');
    }
    return MetricsTarget.backend({ namespace: backend.namespace, name: backend.name });
  }

  private constructor(
    /** Which component. */
    public readonly component: MetricsComponent,
    /** Namespace of its Service and Pods. */
    public readonly namespace: string,
    /** Base name of the monitor objects. */
    public readonly name: string,
    /** Name of the Service that exposes /metrics. */
    public readonly serviceName: string,
    /** Port name on that Service. */
    public readonly servicePort: string,
    /** Container port name on the Pods. */
    public readonly podPort: string,
    /** Labels on both the Service and the Pods (a subset of the standard labels). */
    public readonly selector: Readonly<Record<string, string>>,
  ) {}
}
