/**
 * The data-service API the benchmarks bind through the real backend: a namespaced claim CRD with a
 * status subresource, and the APIServiceExportTemplate that offers it with a claim on the credential
 * Secrets labelled `app.kubernetes.io/component=credentials` (what a provider writes for each claim).
 */
import type { KubeObject, ResourceRef } from '../runtime/core/client.js';

/**
 * The label of the credential Secrets, and its value. A key that crosses to the app cluster by default
 * (contract/metadata-keys.ts): the soak and scale benches find the downstream copies by it, and a
 * `klutch.anynines.com/*` key is the konnector's own and never copied.
 */
export const CREDS_LABEL = 'app.kubernetes.io/component';
export const CREDS_LABEL_VALUE = 'credentials';

type Props = Record<string, Record<string, unknown>>;

/** The CRD of `r` (version `r.version`, served and stored) with these spec and status properties. */
export function claimCrd(r: ResourceRef & { kind: string }, spec: Props, status: Props): KubeObject {
  const singular = r.kind.toLowerCase();
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${r.plural}.${r.group}` },
    spec: {
      group: r.group,
      names: { kind: r.kind, listKind: `${r.kind}List`, plural: r.plural, singular },
      scope: 'Namespaced',
      versions: [
        {
          name: r.version,
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: spec }, status: { type: 'object', properties: status } } },
          },
          subresources: { status: {} },
        },
      ],
    },
  } as KubeObject;
}

/** The catalogue entry the backend offers `r` through, claiming the labelled credential Secrets. */
export function credentialsExportTemplate(r: ResourceRef): KubeObject {
  return {
    apiVersion: 'example-backend.klutch.anynines.com/v1alpha1',
    kind: 'APIServiceExportTemplate',
    metadata: { name: r.plural, namespace: 'crossplane-system' },
    spec: {
      APIServiceSelector: { group: r.group, resource: r.plural },
      permissionClaims: [
        { group: '', resource: 'secrets', version: 'v1', selector: { labelSelectors: [{ [CREDS_LABEL]: CREDS_LABEL_VALUE }], owner: 'Provider' } },
      ],
    },
  } as KubeObject;
}
