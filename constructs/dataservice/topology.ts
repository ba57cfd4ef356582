/**
 * `Topology`: how the instances of a plan are laid out (single node, replicas, cluster), and which plan or
 * topology changes a data service allows.
 */
import { checkDnsLabel, fail } from './_util.js';
import { EnumLike, enumMembers } from '../_enum-like.js';

/** Options of a custom topology. */
export interface TopologyOptions {
  /** Whether instances of this topology run more than one node (replicated or clustered). */
  readonly multiNode: boolean;
  /** Number of nodes a plan of this topology gets unless the plan says otherwise. */
  readonly defaultReplicas: number;
}

/**
 * How the instances of a plan are laid out: one node, or several (replica set / cluster).
 * Use the static instances; `Topology.of()` makes a custom one.
 */
export class Topology {
  /** One node (`*-single-*` plans). */
  public static readonly SINGLE = new Topology('single', { multiNode: false, defaultReplicas: 1 });
  /** A primary with replicas (`*-replica-*` plans: PostgreSQL, KeyValue, MongoDB). */
  public static readonly REPLICA = new Topology('replica', { multiNode: true, defaultReplicas: 3 });
  /** A multi-node cluster (`*-cluster-*` plans: MariaDB, Messaging, Search, LogMe2). */
  public static readonly CLUSTER = new Topology('cluster', { multiNode: true, defaultReplicas: 3 });

  /** A custom topology, e.g. `Topology.of('sharded', { multiNode: true, defaultReplicas: 6 })`. */
  public static of(name: string, options: TopologyOptions): Topology {
    checkDnsLabel('Topology.of(name)', name);
    if (!options || typeof options.multiNode !== 'boolean') fail('Topology.of(options).multiNode', options?.multiNode, 'must be a boolean');
    return new Topology(name, options);
  }

  /** Whether this topology runs more than one node. */
  public readonly multiNode: boolean;
  /** Default node count. */
  public readonly defaultReplicas: number;

  private constructor(
    public readonly name: string,
    options: TopologyOptions,
  ) {
    if (!Number.isInteger(options.defaultReplicas) || options.defaultReplicas < 1) {
      fail(`Topology.of(${JSON.stringify(name)}).defaultReplicas`, options.defaultReplicas, 'must be an integer >= 1');
    }
    if (!options.multiNode && options.defaultReplicas !== 1) {
      fail(`Topology.of(${JSON.stringify(name)}).defaultReplicas`, options.defaultReplicas, 'must be 1 for a single-node topology');
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
