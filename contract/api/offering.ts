/**
 * What a bindable API offers beyond its schema — services, plan sizes, flags, the automation
 * backends — as one JSON annotation on its APIServiceExportTemplate. `DataService` writes it from
 * its typed plans and backends; the bind backend's catalogue page reads it next to the CRD (the
 * services, plans and parameters of the CRD stay the authority on what a claim may say).
 */

/** The annotation on an APIServiceExportTemplate. */
export const OFFERING_ANNOTATION = 'catalogue.klutch-kit.io/offering';

export interface OfferingPlan {
  readonly name: string;
  /** `single`, `replica`, `cluster`, … */
  readonly topology: string;
  readonly replicas: number;
  /** Per node, Kubernetes quantities. */
  readonly cpu?: string;
  readonly memory?: string;
  readonly storage?: string;
  /** e.g. `ssl`. */
  readonly flags: readonly string[];
  readonly description?: string;
}

export interface OfferingService {
  readonly name: string;
  /** Plans this service can be ordered with. */
  readonly plans: readonly string[];
}

export interface OfferingBackend {
  /** The Composition a claim selects with `spec.compositionRef.name`. */
  readonly name: string;
  /** e.g. `a8s` (operators in Kubernetes), `a9s` (VMs through service brokers). */
  readonly automation: string;
  /** Services it provisions; for an operation on instances (ServiceBinding, Backup, …) the instance types it handles. */
  readonly services: readonly string[];
  readonly plans: readonly string[];
  /** Used when a claim names no composition. */
  readonly default: boolean;
}

export interface Offering {
  readonly services: readonly OfferingService[];
  readonly plans: readonly OfferingPlan[];
  readonly backends: readonly OfferingBackend[];
}

const isStr = (v: unknown): v is string => typeof v === 'string';
const strList = (v: unknown): v is string[] => Array.isArray(v) && v.every(isStr);

/**
 * Reads an offering annotation. Returns the offering, or an error naming the first field that is
 * not what {@link Offering} says (the page then shows the API without it).
 */
export function parseOffering(text: string): { offering?: Offering; error?: string } {
  let v: any;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return { error: `${OFFERING_ANNOTATION}: not JSON (${(e as Error).message})` };
  }
  const bad = (path: string, value: unknown, want: string) => ({ error: `${OFFERING_ANNOTATION}: ${path}: ${JSON.stringify(value)?.slice(0, 80)} ${want}` });
  if (!v || typeof v !== 'object') return bad('', v, 'must be an object');
  for (const k of ['services', 'plans', 'backends']) if (!Array.isArray(v[k])) return bad(k, v[k], 'must be a list');
  for (const [i, s] of v.services.entries()) {
    if (!isStr(s?.name) || !strList(s?.plans)) return bad(`services[${i}]`, s, 'must be { name, plans: string[] }');
  }
  for (const [i, p] of v.plans.entries()) {
    if (!isStr(p?.name) || !isStr(p?.topology) || !Number.isInteger(p?.replicas) || !strList(p?.flags))
      return bad(`plans[${i}]`, p, 'must be { name, topology, replicas, flags, cpu?, memory?, storage?, description? }');
    for (const k of ['cpu', 'memory', 'storage', 'description'])
      if (p[k] !== undefined && !isStr(p[k])) return bad(`plans[${i}].${k}`, p[k], 'must be a string');
  }
  for (const [i, b] of v.backends.entries()) {
    if (!isStr(b?.name) || !isStr(b?.automation) || !strList(b?.services) || !strList(b?.plans) || typeof b?.default !== 'boolean') {
      return bad(`backends[${i}]`, b, 'must be { name, automation, services, plans, default }');
    }
  }
  return { offering: v as Offering };
}
