/**
 * `PlanTopology`: how the instances of a plan are laid out (single node, replicas, cluster), and which plan or
 * topology changes a data service allows.
 */
import { checkDnsLabel, fail } from './_util.js';
import { EnumLike, enumMembers } from '../_enum-like.js';

/** Options of a custom topology. */
export interface PlanTopologyOptions {
  /** Whether instances of this topology run more than one node (replicated or clustered). */
  readonly multiNode: boolean;
  /** Number of nodes a plan of this topology gets unless the plan says otherwise. */
  readonly defaultReplicas: number;
}

/**
 * How the instances of a plan are laid out: one node, or several (replica set / cluster).
 * Use the static instances; `PlanTopology.of()` makes a custom one.
 */
export class PlanTopology {
  /** One node (`*-single-*` plans). */
  public static readonly SINGLE = new PlanTopology('single', { multiNode: false, defaultReplicas: 1 });
  /** A primary with replicas (`*-replica-*` plans: PostgreSQL, KeyValue, MongoDB). */
  public static readonly REPLICA = new PlanTopology('replica', { multiNode: true, defaultReplicas: 3 });
  /** A multi-node cluster (`*-cluster-*` plans: MariaDB, Messaging, Search, LogMe2). */
  public static readonly CLUSTER = new PlanTopology('cluster', { multiNode: true, defaultReplicas: 3 });

  /** A custom topology, e.g. `PlanTopology.of('sharded', { multiNode: true, defaultReplicas: 6 })`. */
  public static of(name: string, options: PlanTopologyOptions): PlanTopology {
    checkDnsLabel('PlanTopology.of(name)', name);
    if (!options || typeof options.multiNode !== 'boolean') fail('PlanTopology.of(options).multiNode', options?.multiNode, 'must be a boolean');
    return new PlanTopology(name, options);
  }

  /** Whether this topology runs more than one node. */
  public readonly multiNode: boolean;
  /** Default node count. */
  public readonly defaultReplicas: number;

  private constructor(
    public readonly name: string,
    options: PlanTopologyOptions,
  ) {
    if (!Number.isInteger(options.defaultReplicas) || options.defaultReplicas < 1) {
      fail(`PlanTopology.of(${JSON.stringify(name)}).defaultReplicas`, options.defaultReplicas, 'must be an integer >= 1');
    }
    if (!options.multiNode && options.defaultReplicas !== 1) {
      fail(`PlanTopology.of(${JSON.stringify(name)}).defaultReplicas`, options.defaultReplicas, 'must be 1 for a single-node topology');
    }
    this.multiNode = options.multiNode;
    this.defaultReplicas = options.defaultReplicas;
  }

  public toString(): string {
    return this.name;
  }
}

/** Which topology changes a plan update may make (enum-like: static instances). */
export class TopologyChange extends EnumLike {
  /** single → multi-node allowed, multi-node → single rejected (PostgreSQL, MariaDB, …). */
  public static readonly SCALE_OUT_ONLY = new TopologyChange('ScaleOutOnly');
  /** Neither direction (KeyValue, LogMe2). */
  public static readonly NONE = new TopologyChange('None');
  /** Both directions. */
  public static readonly ANY = new TopologyChange('Any');

  /** Every instance, in declaration order. */
  public static get all(): readonly TopologyChange[] {
    return enumMembers(TopologyChange);
  }

  private constructor(
    /** The policy name, e.g. `ScaleOutOnly`. */
    value: string,
  ) {
    super(value);
  }
}

/** Which plan changes an update may make (enum-like: static instances). */
export class PlanChange extends EnumLike {
  /** Same or bigger plans only; downgrades (along the plans' upgrade paths) are rejected. */
  public static readonly UPGRADE_ONLY = new PlanChange('UpgradeOnly');
  /** The plan is immutable (Prometheus). */
  public static readonly NONE = new PlanChange('None');
  /** Any plan change (other rules such as flags and topology still apply). */
  public static readonly ANY = new PlanChange('Any');

  /** Every instance, in declaration order. */
  public static get all(): readonly PlanChange[] {
    return enumMembers(PlanChange);
  }

  private constructor(
    /** The policy name, e.g. `UpgradeOnly`. */
    value: string,
  ) {
    super(value);
  }
}

/**
 * @deprecated Renamed {@link PlanTopology}: `Topology` is the Pulumi component of `klutch-kit/stacks` (the clusters).
 * This alias goes in 1.0.
 */
export const Topology = PlanTopology;
/** @deprecated Renamed {@link PlanTopology}; this alias goes in 1.0. */
export type Topology = PlanTopology;
/** @deprecated Renamed {@link PlanTopologyOptions}; this alias goes in 1.0. */
export type TopologyOptions = PlanTopologyOptions;
