/**
 * The binding contract, in one place and without cdk8s: what the constructs, the Pulumi stacks,
 * the backend, the konnector and the CLI (kubectl-bind) agree on.
 *
 * - the binding API (`klutch.anynines.com/v1alpha1`, `example-backend.klutch.anynines.com/v1alpha1`):
 *   typed schemas, object types, `<kind>Kind` (CRD, `make`, `is`), names and conditions;
 * - the wire messages (BindingProvider, BindingResponse) and their Go-compatible encoding (`wire.ts`);
 * - the RBAC handed to a consumer: the `klutch-binder` ClusterRole and the per-consumer rules over
 *   exported and claimed resources (`binder-rbac.ts`).
 *
 * The API definitions still live in `constructs/api/` (re-exported here; they import nothing from
 * cdk8s) so that deep imports keep working.
 */
export * from '../constructs/api/index.js';
export * from './wire.js';
export * from './binder-rbac.js';
