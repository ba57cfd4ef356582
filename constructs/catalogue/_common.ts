/** Shared data of the Klutch catalogue. Internal. */
import { Plan, PlanSize, PlanTopology } from '../dataservice/index.js';

/** Klutch's API group for data services. */
export const ANYNINES_GROUP = 'anynines.com';

/** Node sizes of the a8s PostgreSQL plans (Klutch's `a8s-postgresql` plan → resources map). */
export const A8S_SIZES: Readonly<Record<string, PlanSize>> = {
  nano: { name: 'nano', storage: '3Gi', cpu: '2', memory: '1Gi' },
  small: { name: 'small', storage: '10Gi', cpu: '2', memory: '2Gi' },
  medium: { name: 'medium', storage: '50Gi', cpu: '2', memory: '4Gi' },
  big: { name: 'big', storage: '100Gi', cpu: '4', memory: '16Gi' },
};

/** A size by name, without resources (a9s VM plans: the broker decides). */
export const size = (name: string): PlanSize => ({ name });

const TOPOLOGIES: Readonly<Record<string, PlanTopology>> = { single: PlanTopology.SINGLE, replica: PlanTopology.REPLICA, cluster: PlanTopology.CLUSTER };

/**
 * Plans named `<prefix>-<topology>-<size>[-<flag>...]`, e.g. `plans('mariadb', ['single-nano', 'cluster-big'], [[], ['ssl']])`.
 * @param sizes resolves a size name to a PlanSize (default: name only)
 */
export function plans(prefix: string, shapes: readonly string[], flagSets: ReadonlyArray<readonly string[]>, sizes: (name: string) => PlanSize = size): Plan[] {
  const out: Plan[] = [];
  for (const shape of shapes) {
    const [topology, sz] = shape.split('-');
    for (const flags of flagSets) {
      out.push(
        new Plan({
          name: [prefix, topology, sz, ...flags].join('-'),
          topology: TOPOLOGIES[topology],
          size: sizes(sz),
          flags,
        }),
      );
    }
  }
  return out;
}

/** Names of plans. */
export const names = (ps: readonly Plan[]): string[] => ps.map((p) => p.name);

export const STATUS_DESCRIPTION = 'Observed state of the managed resource.';
