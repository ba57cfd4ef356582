/**
 * `Plan`: a data-service plan (topology and size), the plan sets of a data service and their upgrade paths.
 */
import { PlanTopology } from './topology.js';
import { checkDnsLabel, checkStringList, fail, isPlainObject, show } from './_util.js';

/** Compute and storage of one node of a plan. */
export interface PlanSize {
  /** Size name, e.g. `nano`, `small`, `medium`, `big`. */
  readonly name: string;
  /** CPU of one node (Kubernetes quantity, e.g. `"2"`). @default - not set (backend decides) */
  readonly cpu?: string;
  /** Memory of one node (Kubernetes quantity, e.g. `"4Gi"`). @default - not set */
  readonly memory?: string;
  /** Persistent volume size of one node (e.g. `"50Gi"`). @default - not set */
  readonly storage?: string;
}

export interface PlanProps {
  /** Plan name as the claim's `spec.plan` carries it, e.g. `postgresql-replica-small-ssl`. */
  readonly name: string;
  /** Single node or several. */
  readonly topology: PlanTopology;
  /** Node size. */
  readonly size: PlanSize;
  /** Node count. @default - the topology's default (1 for single, 3 for replica/cluster) */
  readonly replicas?: number;
  /** Flags such as `ssl` or `bionic`; by default every flag is immutable across plan updates. @default [] */
  readonly flags?: readonly string[];
  /**
   * Plans this plan may be upgraded to (directly; upgrades are transitive).
   * @default - every plan of the next bigger size in the data service's size order
   */
  readonly upgradesTo?: readonly string[];
  /** @default - none */
  readonly description?: string;
}

const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;
const FLAG = /^[a-z][a-z0-9]*$/;

/**
 * A service plan: a first-class typed object (name, topology, size, replicas, flags, upgrade path).
 * Plans are rendered into the claim schema (enums) and CEL rules (no downgrade, no multi-node →
 * single, immutable flags) by `DataService`, and into per-plan resources by backends such as
 * `A8sBackend`.
 */
export class Plan {
  public readonly name: string;
  public readonly topology: PlanTopology;
  public readonly size: PlanSize;
  public readonly replicas: number;
  public readonly flags: readonly string[];
  /** Explicit upgrade targets, or undefined when derived from the size order. */
  public readonly upgradesTo?: readonly string[];
  public readonly description?: string;

  constructor(props: PlanProps) {
    if (!isPlainObject(props)) fail('PlanProps', props, 'must be an object');
    const p = `Plan(${show(props.name)})`;
    this.name = checkDnsLabel('PlanProps.name', props.name);
    if (!(props.topology instanceof PlanTopology))
      fail(`${p}.topology`, props.topology, 'must be a PlanTopology (PlanTopology.SINGLE, PlanTopology.REPLICA, PlanTopology.CLUSTER or PlanTopology.of())');
    this.topology = props.topology;
    if (!isPlainObject(props.size)) fail(`${p}.size`, props.size, 'must be an object { name, cpu?, memory?, storage? }');
    checkDnsLabel(`${p}.size.name`, props.size.name);
    for (const k of ['cpu', 'memory', 'storage'] as const) {
      const v = props.size[k];
      if (v !== undefined && (typeof v !== 'string' || !QUANTITY.test(v)))
        fail(`${p}.size.${k}`, v, 'must be a Kubernetes quantity string such as "2", "500m" or "4Gi"');
    }
    this.size = { ...props.size };
    const replicas = props.replicas ?? props.topology.defaultReplicas;
    if (!Number.isInteger(replicas) || replicas < 1) fail(`${p}.replicas`, props.replicas, 'must be an integer >= 1');
    if (!props.topology.multiNode && replicas !== 1) fail(`${p}.replicas`, replicas, `must be 1 for topology "${props.topology.name}"`);
    if (props.topology.multiNode && replicas < 2) fail(`${p}.replicas`, replicas, `must be >= 2 for multi-node topology "${props.topology.name}"`);
    this.replicas = replicas;
    const flags = props.flags === undefined ? [] : checkStringList(`${p}.flags`, props.flags);
    for (const f of flags) if (!FLAG.test(f)) fail(`${p}.flags`, f, 'must be a lowercase word (e.g. "ssl")');
    this.flags = flags;
    if (props.upgradesTo !== undefined) {
      this.upgradesTo = checkStringList(`${p}.upgradesTo`, props.upgradesTo);
      if (this.upgradesTo.includes(this.name)) fail(`${p}.upgradesTo`, this.name, 'is the plan itself: a plan cannot upgrade to itself');
    }
    this.description = props.description;
  }

  /** Whether the plan carries a flag (e.g. `ssl`). */
  public hasFlag(flag: string): boolean {
    return this.flags.includes(flag);
  }

  /** Whether the plan runs several nodes. */
  public get multiNode(): boolean {
    return this.topology.multiNode;
  }
}

/**
 * The validated set of a data service's plans and their upgrade graph.
 *
 * Throws on duplicate plan names, upgrade targets that are not defined, sizes missing from the size
 * order, and cycles in the upgrade graph.
 */
export class PlanSet {
  public readonly plans: readonly Plan[];
  public readonly sizeOrder: readonly string[];
  private readonly byName = new Map<string, Plan>();
  private readonly edges = new Map<string, readonly string[]>();
  private readonly reach = new Map<string, ReadonlySet<string>>();

  /**
   * @param prop     name of the prop holding the plans, for error messages
   * @param plans    the plans
   * @param sizeOrder size names from smallest to biggest (derives default upgrade paths)
   */
  constructor(prop: string, plans: readonly Plan[], sizeOrder: readonly string[]) {
    if (!Array.isArray(plans) || plans.length === 0) fail(prop, plans, 'must list at least one Plan');
    plans.forEach((pl, i) => {
      if (!(pl instanceof Plan)) fail(`${prop}[${i}]`, pl, 'must be a Plan (new Plan({...}))');
      if (this.byName.has(pl.name)) fail(`${prop}[${i}].name`, pl.name, 'is a duplicate plan: plan names must be unique');
      this.byName.set(pl.name, pl);
    });
    this.plans = [...plans];
    this.sizeOrder = checkStringList(`${prop} size order`, sizeOrder);
    for (const pl of plans) {
      if (!this.sizeOrder.includes(pl.size.name)) {
        fail(`${prop}: Plan(${show(pl.name)}).size.name`, pl.size.name, `is not in the size order [${this.sizeOrder.join(', ')}]; add it to sizeOrder`);
      }
    }
    // Upgrade edges: explicit, or to every plan of the next bigger size that exists.
    const ranksPresent = [...new Set(plans.map((pl) => this.rank(pl)))].sort((a, b) => a - b);
    for (const pl of plans) {
      if (pl.upgradesTo !== undefined) {
        for (const t of pl.upgradesTo) {
          if (!this.byName.has(t))
            fail(`${prop}: Plan(${show(pl.name)}).upgradesTo`, t, `is referenced but not defined; defined plans: ${[...this.byName.keys()].join(', ')}`);
        }
        this.edges.set(pl.name, [...pl.upgradesTo]);
      } else {
        const next = ranksPresent.find((r) => r > this.rank(pl));
        this.edges.set(pl.name, next === undefined ? [] : plans.filter((q) => this.rank(q) === next).map((q) => q.name));
      }
    }
    this.checkAcyclic(prop);
    for (const pl of plans) this.reach.set(pl.name, this.closure(pl.name));
  }

  /** Names of all plans, in declaration order. */
  public get names(): string[] {
    return this.plans.map((p) => p.name);
  }

  public get(name: string): Plan | undefined {
    return this.byName.get(name);
  }

  /** Position of the plan's size in the size order (0 = smallest). */
  public rank(plan: Plan): number {
    return this.sizeOrder.indexOf(plan.size.name);
  }

  /** Direct upgrade targets of a plan. */
  public upgradeTargets(name: string): readonly string[] {
    return this.edges.get(name) ?? [];
  }

  /** Whether `to` is reachable from `from` along upgrade paths (a plan does not reach itself). */
  public isUpgrade(from: string, to: string): boolean {
    return this.reach.get(from)?.has(to) ?? false;
  }

  /** Whether moving from `from` to `to` is a downgrade: `from` is an upgrade of `to`. */
  public isDowngrade(from: string, to: string): boolean {
    return from !== to && this.isUpgrade(to, from);
  }

  /** For each plan, the plans that would be a downgrade from it (only plans that have some). */
  public downgrades(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const from of this.names) {
      const list = this.names.filter((to) => this.isDowngrade(from, to));
      if (list.length > 0) out.set(from, list);
    }
    return out;
  }

  /** Every flag that some plan carries. */
  public get flags(): string[] {
    return [...new Set(this.plans.flatMap((p) => p.flags))];
  }

  private closure(start: string): Set<string> {
    const seen = new Set<string>();
    const stack = [...this.upgradeTargets(start)];
    while (stack.length > 0) {
      const n = stack.pop()!;
      if (seen.has(n)) continue;
      seen.add(n);
      stack.push(...this.upgradeTargets(n));
    }
    return seen;
  }

  private checkAcyclic(prop: string): void {
    const state = new Map<string, 'visiting' | 'done'>();
    const path: string[] = [];
    const visit = (n: string): void => {
      if (state.get(n) === 'done') return;
      if (state.get(n) === 'visiting') {
        const cycle = [...path.slice(path.indexOf(n)), n];
        fail(`${prop}: Plan(${show(n)}).upgradesTo`, cycle.join(' -> '), 'is a cycle in plan upgrades; upgrade paths must only lead to bigger plans');
      }
      state.set(n, 'visiting');
      path.push(n);
      for (const t of this.upgradeTargets(n)) visit(t);
      path.pop();
      state.set(n, 'done');
    };
    for (const n of this.names) visit(n);
  }
}
