/**
 * Where a data service's credentials land: the Secret names and types of bindings, and the permission
 * claims that let the konnector copy them to app clusters.
 */
import type { PermissionClaim, PermissionClaimSelector } from '../runtime/permission-claim.js';

/** Secret type crossplane-runtime gives the connection Secrets managed resources write. */
export const CONNECTION_SECRET_TYPE = 'connection.crossplane.io/v1alpha1';
/** Suffix of the Secret the a8s service-binding controller writes for a ServiceBinding `X`: `X-service-binding`. */
export const A8S_BINDING_SECRET_SUFFIX = '-service-binding';
/** Type of the a8s ServiceBinding Secret. */
export const A8S_BINDING_SECRET_TYPE = 'Opaque';
/** Keys of the a8s ServiceBinding Secret (no port: PostgreSQL listens on 5432). */
export const A8S_BINDING_SECRET_KEYS: readonly string[] = ['username', 'password', 'database', 'instance_service'];

export interface CredentialsClaimOptions {
  /**
   * Names of the claimed Secrets; an entry `*<suffix>` selects names ending in the suffix
   * (klutch-kit's konnector; `*` alone selects all). @default ['*']
   */
  readonly names?: readonly string[];
  /** Label selectors narrowing the claimed Secrets. @default - none */
  readonly labelSelectors?: ReadonlyArray<Record<string, string>>;
  /** Field selectors narrowing the claimed Secrets. @default ['type=connection.crossplane.io/v1alpha1'] */
  readonly fieldSelectors?: readonly string[];
  /** @default true */
  readonly required?: boolean;
}

/**
 * A permission claim on core `secrets` owned by the provider: credentials Secrets written on the
 * control plane (e.g. `<claim>-creds` from the a9s ServiceBinding's `writeConnectionSecretToRef`)
 * are synced to the app cluster. By default only Crossplane connection Secrets are selected
 * (field selector on the Secret type), not every Secret of the namespace.
 */
export function credentialsSecretClaim(options: CredentialsClaimOptions = {}): PermissionClaim {
  const fields = options.fieldSelectors ?? [`type=${CONNECTION_SECRET_TYPE}`];
  const names = options.names ?? ['*'];
  const selector: PermissionClaimSelector = {
    ...(names.length === 1 && names[0] === '*' ? {} : { names: [...names] }),
    owner: 'Provider',
    ...(fields.length > 0 ? { fieldSelectors: [...fields] } : {}),
    ...(options.labelSelectors && options.labelSelectors.length > 0 ? { labelSelectors: options.labelSelectors.map((l) => ({ ...l })) } : {}),
  };
  return { group: '', resource: 'secrets', version: 'v1', selector, required: options.required ?? true };
}

/**
 * The claim on the Secrets the a8s service-binding controller writes: for an a8s ServiceBinding
 * `X` it is `X-service-binding`, type Opaque, in the ServiceBinding's namespace (keys `username`,
 * `password`, `database`, `instance_service`). Exactly those: Opaque Secrets named `*-service-binding`.
 */
export function a8sBindingSecretClaim(options: Pick<CredentialsClaimOptions, 'required'> = {}): PermissionClaim {
  return credentialsSecretClaim({
    names: [`*${A8S_BINDING_SECRET_SUFFIX}`],
    fieldSelectors: [`type=${A8S_BINDING_SECRET_TYPE}`],
    required: options.required,
  });
}
