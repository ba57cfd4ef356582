/**
 * Base class of the per-cluster charts. Each `ClusterChart` becomes one folder `dist/<cluster>/`
 * with its own ordered layout (see `synth.ts`); objects of one cluster never land in another.
 */
import { Chart } from 'cdk8s';
import { Construct, IConstruct } from 'constructs';
import { Slot } from '../_cluster-registry.js';
import { EnumLike, enumMembers } from '../_enum-like.js';
import { fail } from '../_errors.js';
import { isDnsLabel } from '../_names.js';

/** What kind of cluster a chart describes. */
export class ClusterRole extends EnumLike {
  /** The central cluster: Crossplane, the catalogue and the bind backend. */
  public static readonly CONTROL_PLANE = new ClusterRole('control-plane');
  /** A cluster of application developers: the konnector and the bound claims. */
  public static readonly APP = new ClusterRole('app');

  /** Every role, in declaration order. */
  public static get all(): readonly ClusterRole[] {
    return enumMembers(ClusterRole);
  }

  private constructor(value: string) {
    super(value);
  }
}

export interface ClusterChartProps {
  /** Cluster name; the output folder `dist/<name>/`. A DNS-1123 label. */
  readonly clusterName: string;
  /** Labels added to every object of the cluster. @default - none */
  readonly labels?: Record<string, string>;
}

const CLUSTER_CHART = Symbol.for('klutch-kit.topology.ClusterChart');
/** The cluster charts created in an app, kept on its root construct. */
const CLUSTERS = new Slot<ClusterChart[]>('klutch-kit.topology.clusters');

export abstract class ClusterChart extends Chart {
  /** True for every ClusterChart, across module copies. */
  public static isClusterChart(x: unknown): x is ClusterChart {
    return typeof x === 'object' && x !== null && (x as Record<symbol, unknown>)[CLUSTER_CHART] === true;
  }

  /** The cluster charts created in the app (construct tree) of `c`, in the order they were created. */
  public static clustersOf(c: IConstruct): readonly ClusterChart[] {
    return [...(CLUSTERS.get(c.node.root) ?? [])];
  }

  public readonly clusterName: string;
  public abstract readonly clusterRole: ClusterRole;

  protected constructor(scope: Construct, id: string, props: ClusterChartProps, propsName: string) {
    if (!props || !isDnsLabel(props.clusterName)) {
      fail(`${propsName}.clusterName`, props?.clusterName, 'is not a DNS-1123 label (it names the folder dist/<clusterName>/)');
    }
    super(scope, id, { labels: props.labels, disableResourceNameHashes: true });
    Object.defineProperty(this, CLUSTER_CHART, { value: true });
    this.clusterName = props.clusterName;
    // The chart registers itself with its app: synthTopology renders the clusters created in it.
    CLUSTERS.getOrInit(this.node.root, () => []).push(this);
  }
}
