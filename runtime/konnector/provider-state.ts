/** Small types shared by the reconcilers of a provider connection. */
import type { Condition } from '../core/conditions.js';

/** A condition's status, reason and message, as a reconciler reports it for the attached bindings. */
export type ConditionState = Pick<Condition, 'status' | 'reason' | 'message'>;

export function sameState(a: ConditionState | undefined, b: ConditionState): boolean {
  return !!a && a.status === b.status && a.reason === b.reason && a.message === b.message;
}

/** The binding keys attached to one provider connection (a read-only view). */
export interface AttachedBindings {
  has(bindingKey: string): boolean;
  keys(): string[];
  /** Keys of the attached bindings with this name (the name of their APIServiceExport). */
  named(name: string): string[];
}
