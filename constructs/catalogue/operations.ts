/**
 * The instance operations of the Klutch catalogue (ServiceBinding, Backup, Restore): their kinds, the
 * instance types they apply to, and the a8s and a9s backends that compose them.
 */
import { Patch, PatchAndTransformStep, ReadinessCheck, Transform } from '../crossplane/index.js';
import {
  a8sBindingSecretClaim,
  A8S_BINDING_SECRET_SUFFIX,
  A9S_API_VERSION,
  ApiStyle,
  claimLabelPatches,
  CONNECTION_SECRET_TYPE,
  credentialsSecretClaim,
  KUBERNETES_PROVIDER_CONFIG,
  OBJECT_OBSERVED_STATUS,
} from '../dataservice/index.js';
import { fail } from '../_errors.js';
import type { InstanceOperationProps, OperationBackend } from './instance-operation.js';

/** Every instance type of the Klutch catalogue, in Klutch's order. */
export const INSTANCE_TYPES: readonly string[] = ['keyvalue', 'postgresql', 'mongodb', 'search', 'logme2', 'prometheus', 'messaging', 'mariadb'];

/** Label the a9s ServiceBinding MR carries with the instance type. */
export const INSTANCE_TYPE_LABEL = 'klutch.io/instance-type';

/** a8s operator resources per instance type (only PostgreSQL has an a8s operator in Klutch). */
const A8S_INSTANCES: Readonly<Record<string, { apiGroup: string; version: string; kind: string; backupKind: string }>> = {
  postgresql: { apiGroup: 'postgresql.anynines.com', version: 'v1beta3', kind: 'Postgresql', backupKind: 'PostgreSQL' },
};
export const A8S_INSTANCE_TYPES: readonly string[] = Object.keys(A8S_INSTANCES);

const claimLabels = (style: ApiStyle) => claimLabelPatches(style);
/** The a8s object is named and namespaced like the bound object (the claim, or the namespaced XR itself). */
const manifestNameAndNamespace = (style: ApiStyle) => [
  Patch.fromCompositeFieldPath(style.namespacePath, 'spec.forProvider.manifest.metadata.namespace'),
  Patch.fromCompositeFieldPath(style.namePath, 'spec.forProvider.manifest.metadata.name'),
];
const toStatus = (prefix: string, keys: readonly string[]) => keys.map((k) => Patch.toCompositeFieldPath(`${prefix}${k}`, `status.managed.${k}`));
/**
 * A provider-kubernetes Object wrapping an a8s resource. `deriveReadiness` makes the Object Ready
 * only when the a8s resource's own `Ready` condition is True (`readiness.policy: DeriveFromObject`),
 * for the a8s kinds that report conditions (Backup, Restore).
 */
const object = (style: ApiStyle, apiVersion: string, kind: string, deriveReadiness = false) => ({
  apiVersion: style.objectApiVersion,
  kind: 'Object',
  spec: {
    forProvider: { manifest: { apiVersion, kind } },
    providerConfigRef: style.objectProviderConfigRef(KUBERNETES_PROVIDER_CONFIG),
    ...(deriveReadiness ? { readiness: { policy: 'DeriveFromObject' } } : {}),
  },
});
/** Ready when the composed resource's own Ready condition is True. */
const readyCondition = () => [ReadinessCheck.matchCondition('Ready', 'True')];
const typeMap = (types: readonly string[], f: (t: (typeof A8S_INSTANCES)[string]) => string) =>
  Transform.map(Object.fromEntries(types.map((t) => [t, f(A8S_INSTANCES[t])])));

function a8s(
  name: string,
  compose: (step: PatchAndTransformStep, types: readonly string[], style: ApiStyle) => void,
  extra: Partial<OperationBackend> = {},
): OperationBackend {
  return { name, automation: 'a8s', types: A8S_INSTANCE_TYPES, compose, ...extra };
}

/** Suffix of the connection Secret the a9s ServiceBinding writes (`<claim>-creds`). */
export const A9S_BINDING_SECRET_SUFFIX = '-creds';

/** Name of the composed credentials Secret's resource in the a8s ServiceBinding Composition (namespaced XRs). */
export const A8S_CREDENTIALS_RESOURCE = 'credentials';

/** What `credentialsSecretSuffix` (CatalogueProps, ServiceBindingOptions) accepts: `-` then a DNS-1123 label's characters. */
const SUFFIX = /^-[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Checks a credentials Secret suffix: `-` followed by lowercase letters, digits and `-`, ending in a letter or digit,
 * at most 63 characters (so `<binding><suffix>` is a Secret name).
 */
export function checkCredentialsSecretSuffix(prop: string, v: unknown): string {
  if (typeof v !== 'string' || v.length > 63 || !SUFFIX.test(v)) {
    fail(
      prop,
      v,
      'is not a Secret name suffix: use "-" followed by lowercase letters, digits and "-", ending in a letter or digit (at most 63 characters), e.g. "-creds"',
    );
  }
  return v;
}

/**
 * Names a namespaced ServiceBinding's credentials Secret may have (`spec.writeConnectionSecretToRef.name`): a
 * DNS-1123 subdomain ending in the suffix (`-creds` by default), so that the export's one narrow permission claim
 * (`*-creds` Secrets of type connection.crossplane.io/v1alpha1) brings exactly the credentials to the app cluster.
 */
export function credentialsSecretNamePattern(suffix: string = A9S_BINDING_SECRET_SUFFIX): string {
  return `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*${suffix}$`;
}

/** credentialsSecretNamePattern() of the default suffix `-creds`. */
export const CREDENTIALS_SECRET_NAME_PATTERN = credentialsSecretNamePattern();

/**
 * The namespaced ServiceBinding's `spec.writeConnectionSecretToRef` (Klutch v2 has the same field): the name of
 * the credentials Secret in the binding's namespace, `<binding><suffix>` when unset. Validated by
 * credentialsSecretNamePattern(suffix) (at most 253 characters) and immutable: set, changed or removed after
 * creation it is rejected (the Secret would be left behind under its old name).
 */
export function credentialsSecretRef(suffix: string = A9S_BINDING_SECRET_SUFFIX) {
  return {
    properties: {
      writeConnectionSecretToRef: {
        type: 'object',
        description: `The credentials Secret in the ServiceBinding's namespace. Default: <name>${suffix}.`,
        properties: {
          name: {
            type: 'string',
            maxLength: 253,
            pattern: credentialsSecretNamePattern(suffix),
            description: `Name of the credentials Secret: a DNS-1123 subdomain ending in ${suffix} (the app cluster receives *${suffix} Secrets only).`,
          },
        },
        required: ['name'],
      },
    },
    rules: [
      {
        rule:
          "(has(self.writeConnectionSecretToRef) ? self.writeConnectionSecretToRef.name : '') == " +
          "(has(oldSelf.writeConnectionSecretToRef) ? oldSelf.writeConnectionSecretToRef.name : '')",
        message: 'spec.writeConnectionSecretToRef.name is immutable',
      },
    ],
  } as const;
}

/** credentialsSecretRef() of the default suffix `-creds`. */
export const CREDENTIALS_SECRET_REF = credentialsSecretRef();

/**
 * Namespaced XRs have no connection details: the a8s ServiceBinding Composition composes the
 * credentials Secret itself, `<binding><suffix>` (`<binding>-creds` by default) of type `connection.crossplane.io/v1alpha1` in the
 * XR's namespace — a provider-kubernetes `Object` wrapping the Secret whose `data` is patched (by
 * provider-kubernetes' `references[].patchesFrom`) from the Secret the a8s service-binding controller
 * writes (`<binding>-service-binding`). The keys are the a8s ones (username, password, database,
 * instance_service). Ready once provider-kubernetes has read the a8s Secret and applied the copy.
 */
function composeCredentialsSecret(step: PatchAndTransformStep, suffix: string): void {
  const style = ApiStyle.NAMESPACED_XR;
  step.addResource(A8S_CREDENTIALS_RESOURCE, {
    base: {
      apiVersion: style.objectApiVersion,
      kind: 'Object',
      spec: {
        forProvider: { manifest: { apiVersion: 'v1', kind: 'Secret', type: CONNECTION_SECRET_TYPE } },
        references: [{ patchesFrom: { apiVersion: 'v1', kind: 'Secret', fieldPath: 'data' }, toFieldPath: 'data' }],
        providerConfigRef: style.objectProviderConfigRef(KUBERNETES_PROVIDER_CONFIG),
      },
    },
    readinessChecks: readyCondition(),
    patches: [
      Patch.fromCompositeFieldPath(style.namespacePath, 'spec.forProvider.manifest.metadata.namespace'),
      Patch.fromCompositeFieldPath(style.namePath, 'spec.forProvider.manifest.metadata.name', {
        transforms: [Transform.stringFormat(`%s${suffix}`)],
      }),
      // a name of the user's choice replaces `<binding><suffix>` (unset: the patch is skipped)
      Patch.fromCompositeFieldPath('spec.writeConnectionSecretToRef.name', 'spec.forProvider.manifest.metadata.name'),
      Patch.fromCompositeFieldPath(style.namespacePath, 'spec.references[0].patchesFrom.namespace'),
      Patch.fromCompositeFieldPath(style.namePath, 'spec.references[0].patchesFrom.name', {
        transforms: [Transform.stringFormat(`%s${A8S_BINDING_SECRET_SUFFIX}`)],
      }),
    ],
  });
}

/** Options of serviceBinding(). */
export interface ServiceBindingOptions {
  /**
   * The end of the credentials Secret's name, `<binding><suffix>`: the Secret the a9s ServiceBinding writes (both API
   * styles) and the one the a8s Composition composes (namespaced XRs); the export claims `*<suffix>` Secrets of type
   * connection.crossplane.io/v1alpha1, and a namespaced binding's own `writeConnectionSecretToRef.name` must end in
   * it. Not the a8s Secret of the claims style, which the a8s operator names `<binding>-service-binding`.
   * @default '-creds' (A9S_BINDING_SECRET_SUFFIX, Klutch's name)
   */
  readonly credentialsSecretSuffix?: string;
}

/**
 * ServiceBinding: credentials for an instance, each backend's Secret claimed exactly for the app
 * cluster: a8s's service-binding controller writes `<claim>-service-binding` (type Opaque), the a9s
 * ServiceBinding writes the connection Secret `<claim>-creds` (type connection.crossplane.io/v1alpha1),
 * both in the claim's namespace. With namespaced XRs both backends give `<binding>-creds` (type
 * connection.crossplane.io/v1alpha1): a8s composes it (see composeCredentialsSecret). `-creds` is
 * `options.credentialsSecretSuffix`.
 */
export function serviceBinding(types: readonly string[] = INSTANCE_TYPES, options: ServiceBindingOptions = {}): InstanceOperationProps {
  const suffix =
    options.credentialsSecretSuffix === undefined
      ? A9S_BINDING_SECRET_SUFFIX
      : checkCredentialsSecretSuffix('ServiceBindingOptions.credentialsSecretSuffix', options.credentialsSecretSuffix);
  const credentialsClaim = () => credentialsSecretClaim({ names: [`*${suffix}`] });
  return {
    kind: 'XServiceBinding',
    claimKind: 'ServiceBinding',
    types,
    required: ['instanceRef'],
    fields: [
      { name: 'acceptsIncomplete', type: 'boolean', description: 'Allow asynchronous broker operations.' },
      { name: 'instanceRef', type: 'string', description: 'Name of the data service instance claim (same namespace).' },
      { name: 'region', type: 'string', enum: ['eu-central-1', 'us-east-1'], description: 'Unused; kept for compatibility with Klutch.' },
      { name: 'policy', type: 'string', description: 'Unused; kept for compatibility with Klutch.' },
    ],
    namespacedSpec: credentialsSecretRef(suffix),
    backends: [
      a8s(
        'a8s-servicebinding',
        (step, ts, style) => {
          step.addResource('a8s-servicebinding', {
            base: object(style, 'servicebindings.anynines.com/v1beta3', 'ServiceBinding'),
            // The a8s ServiceBinding has no conditions: its credentials may be used once status.implemented is true.
            readinessChecks: [...readyCondition(), ReadinessCheck.matchTrue(`${OBJECT_OBSERVED_STATUS}.implemented`)],
            patches: [
              ...manifestNameAndNamespace(style),
              Patch.fromCompositeFieldPath('spec.serviceInstanceType', 'spec.forProvider.manifest.spec.instance.apiVersion', {
                transforms: [typeMap(ts, (i) => `${i.apiGroup}/${i.version}`)],
              }),
              Patch.fromCompositeFieldPath('spec.serviceInstanceType', 'spec.forProvider.manifest.spec.instance.kind', {
                transforms: [typeMap(ts, (i) => i.kind)],
              }),
              Patch.fromCompositeFieldPath(style.namespacePath, 'spec.forProvider.manifest.spec.instance.namespace'),
              Patch.fromCompositeFieldPath('spec.instanceRef', 'spec.forProvider.manifest.spec.instance.name'),
              ...toStatus('status.atProvider.manifest.status.', ['implemented', 'secret.name', 'secret.namespace']),
            ],
          });
          if (style.namespaced) composeCredentialsSecret(step, suffix);
        },
        { permissionClaims: [a8sBindingSecretClaim()], namespacedPermissionClaims: [credentialsClaim()] },
      ),
      {
        name: 'a9s-servicebinding',
        automation: 'a9s',
        permissionClaims: [credentialsClaim()],
        compose: (step, _types, style) => {
          step.addResource('a9s-servicebinding', {
            base: { apiVersion: A9S_API_VERSION, kind: 'ServiceBinding', spec: { forProvider: { acceptsIncomplete: true } } },
            readinessChecks: readyCondition(),
            patches: [
              Patch.fromCompositeFieldPath('spec.serviceInstanceType', `metadata.labels[${INSTANCE_TYPE_LABEL}]`),
              ...claimLabels(style),
              Patch.fromCompositeFieldPath('spec.instanceRef', 'spec.forProvider.instanceName'),
              Patch.fromCompositeFieldPath('spec.serviceInstanceType', 'spec.providerConfigRef.name', {
                transforms: [Transform.stringFormat('%s-service-broker')],
              }),
              Patch.fromCompositeFieldPath(style.namespacePath, 'spec.writeConnectionSecretToRef.namespace'),
              Patch.fromCompositeFieldPath(style.namePath, 'spec.writeConnectionSecretToRef.name', {
                transforms: [Transform.stringFormat(`%s${suffix}`)],
              }),
              // namespaced XRs: a name of the user's choice (credentialsSecretRef) replaces `<binding><suffix>`
              ...(style.namespaced ? [Patch.fromCompositeFieldPath('spec.writeConnectionSecretToRef.name', 'spec.writeConnectionSecretToRef.name')] : []),
              ...toStatus('status.atProvider.', ['serviceBindingID', 'state']),
              Patch.toCompositeFieldPath('status.conditions', 'status.managed.conditions'),
            ],
          });
        },
      },
    ],
  };
}

/** Backup of an instance (a8s operator or a9s Backup Manager). */
export function backup(types: readonly string[] = INSTANCE_TYPES): InstanceOperationProps {
  return {
    kind: 'XBackup',
    claimKind: 'Backup',
    types,
    required: ['instanceRef'],
    fields: [{ name: 'instanceRef', type: 'string', description: 'Name of the data service instance claim to back up.' }],
    backends: [
      a8s('a8s-backup', (step, ts, style) => {
        step.addResource('a8s-backup', {
          base: object(style, 'backups.anynines.com/v1beta3', 'Backup', true),
          readinessChecks: readyCondition(),
          patches: [
            ...manifestNameAndNamespace(style),
            Patch.fromCompositeFieldPath('spec.serviceInstanceType', 'spec.forProvider.manifest.spec.serviceInstance.apiGroup', {
              transforms: [typeMap(ts, (i) => i.apiGroup)],
            }),
            Patch.fromCompositeFieldPath('spec.serviceInstanceType', 'spec.forProvider.manifest.spec.serviceInstance.kind', {
              transforms: [typeMap(ts, (i) => i.backupKind)],
            }),
            Patch.fromCompositeFieldPath('spec.instanceRef', 'spec.forProvider.manifest.spec.serviceInstance.name'),
            ...toStatus('status.atProvider.manifest.status.', [
              'backupID',
              'conditions',
              'lastObservationTime',
              'podUsedNamespacedName',
              'podUsedUID',
              'retries',
            ]),
          ],
        });
      }),
      {
        name: 'a9s-backup',
        automation: 'a9s',
        compose: (step, _types, style) => {
          step.addResource('a9s-backup', {
            base: { apiVersion: A9S_API_VERSION, kind: 'Backup' },
            readinessChecks: readyCondition(),
            patches: [
              ...claimLabels(style),
              Patch.fromCompositeFieldPath('spec.instanceRef', 'spec.forProvider.instanceName'),
              Patch.fromCompositeFieldPath('spec.serviceInstanceType', 'spec.providerConfigRef.name', {
                transforms: [Transform.stringFormat('%s-backup-manager')],
              }),
              ...toStatus('status.atProvider.', ['downloadable', 'finished_at', 'id', 'size', 'status', 'triggered_at']),
              Patch.toCompositeFieldPath('status.conditions', 'status.managed.conditions'),
            ],
          });
        },
      },
    ],
  };
}

/** Restore of a backup (a8s needs the instance too). */
export function restore(types: readonly string[] = INSTANCE_TYPES): InstanceOperationProps {
  return {
    kind: 'XRestore',
    claimKind: 'Restore',
    types,
    required: ['backupRef'],
    fields: [
      { name: 'backupRef', type: 'string', description: 'Name of the Backup claim to restore.' },
      { name: 'instanceRef', type: 'string', description: 'Name of the instance to restore into (required for a8s).' },
    ],
    backends: [
      a8s(
        'a8s-restore',
        (step, ts, style) => {
          step.addResource('a8s-restore', {
            base: object(style, 'backups.anynines.com/v1beta3', 'Restore', true),
            readinessChecks: readyCondition(),
            patches: [
              ...manifestNameAndNamespace(style),
              Patch.fromCompositeFieldPath('spec.serviceInstanceType', 'spec.forProvider.manifest.spec.serviceInstance.apiGroup', {
                transforms: [typeMap(ts, (i) => i.apiGroup)],
              }),
              Patch.fromCompositeFieldPath('spec.serviceInstanceType', 'spec.forProvider.manifest.spec.serviceInstance.kind', {
                transforms: [typeMap(ts, (i) => i.backupKind)],
              }),
              Patch.fromCompositeFieldPath('spec.instanceRef', 'spec.forProvider.manifest.spec.serviceInstance.name'),
              Patch.fromCompositeFieldPath('spec.backupRef', 'spec.forProvider.manifest.spec.backupName'),
              ...toStatus('status.atProvider.manifest.status.', [
                'conditions',
                'lastObservationTime',
                'podToPoll.ip',
                'podToPoll.namespacedName',
                'podToPoll.uid',
                'restoreID',
              ]),
            ],
          });
        },
        { requiredFields: ['instanceRef'] },
      ),
      {
        name: 'a9s-restore',
        automation: 'a9s',
        compose: (step, _types, style) => {
          step.addResource('a9s-restore', {
            base: { apiVersion: A9S_API_VERSION, kind: 'Restore' },
            readinessChecks: readyCondition(),
            patches: [
              ...claimLabels(style),
              Patch.fromCompositeFieldPath('spec.backupRef', 'spec.forProvider.backupName'),
              Patch.fromCompositeFieldPath('spec.serviceInstanceType', 'spec.providerConfigRef.name', {
                transforms: [Transform.stringFormat('%s-backup-manager')],
              }),
              ...toStatus('status.atProvider.', ['finishedAt', 'restoreId', 'state', 'triggeredAt']),
              Patch.toCompositeFieldPath('status.conditions', 'status.managed.conditions'),
            ],
          });
        },
      },
    ],
  };
}
