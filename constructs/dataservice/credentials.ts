import type { PermissionClaim, PermissionClaimSelector } from '../runtime/index.js';

/** Secret type crossplane-runtime gives the connection Secrets managed resources write. */
export const CONNECTION_SECRET_TYPE = 'connection.crossplane.io/v1alpha1';

export interface CredentialsClaimOptions {
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
  const selector: PermissionClaimSelector = {
    owner: 'Provider',
    ...(fields.length > 0 ? { fieldSelectors: [...fields] } : {}),
    ...(options.labelSelectors && options.labelSelectors.length > 0 ? { labelSelectors: options.labelSelectors.map((l) => ({ ...l })) } : {}),
  };
  return { group: '', resource: 'secrets', version: 'v1', selector, required: options.required ?? true };
}
