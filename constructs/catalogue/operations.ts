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

/**
 * Names a namespaced ServiceBinding's credentials Secret may have (`spec.writeConnectionSecretToRef.name`): a
 * DNS-1123 subdomain ending in `-creds`, so that the export's one narrow permission claim (`*-creds` Secrets of
 * type connection.crossplane.io/v1alpha1) brings exactly the credentials to the app cluster.
 */
export const CREDENTIALS_SECRET_NAME_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*-creds$';

/**
 * The namespaced ServiceBinding's `spec.writeConnectionSecretToRef` (Klutch v2 has the same field): the name of
 * the credentials Secret in the binding's namespace, `<binding>-creds` when unset. Validated by
 * CREDENTIALS_SECRET_NAME_PATTERN (at most 253 characters) and immutable: set, changed or removed after
 * creation it is rejected (the Secret would be left behind under its old name).
 */
export const CREDENTIALS_SECRET_REF = {
  properties: {
    writeConnectionSecretToRef: {
      type: 'object',
      description: "The credentials Secret in the ServiceBinding's namespace. Default: <name>-creds.",
      properties: {
        name: {
          type: 'string',
          maxLength: 253,
          pattern: CREDENTIALS_SECRET_NAME_PATTERN,
          description: 'Name of the credentials Secret: a DNS-1123 subdomain ending in -creds (the app cluster receives *-creds Secrets only).',
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

/**
 * Namespaced XRs have no connection details: the a8s ServiceBinding Composition composes the
 * credentials Secret itself, `<binding>-creds` of type `connection.crossplane.io/v1alpha1` in the
 * XR's namespace — a provider-kubernetes `Object` wrapping the Secret whose `data` is patched (by
 * provider-kubernetes' `references[].patchesFrom`) from the Secret the a8s service-binding controller
 * writes (`<binding>-service-binding`). The keys are the a8s ones (username, password, database,
 * instance_service). Ready once provider-kubernetes has read the a8s Secret and applied the copy.
 */
function composeCredentialsSecret(step: PatchAndTransformStep): void {
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
        transforms: [Transform.stringFormat(`%s${A9S_BINDING_SECRET_SUFFIX}`)],
      }),
      // a name of the user's choice replaces `<binding>-creds` (unset: the patch is skipped)
      Patch.fromCompositeFieldPath('spec.writeConnectionSecretToRef.name', 'spec.forProvider.manifest.metadata.name'),
      Patch.fromCompositeFieldPath(style.namespacePath, 'spec.references[0].patchesFrom.namespace'),
      Patch.fromCompositeFieldPath(style.namePath, 'spec.references[0].patchesFrom.name', {
        transforms: [Transform.stringFormat(`%s${A8S_BINDING_SECRET_SUFFIX}`)],
      }),
    ],
  });
}

/**
 * ServiceBinding: credentials for an instance, each backend's Secret claimed exactly for the app
 * cluster: a8s's service-binding controller writes `<claim>-service-binding` (type Opaque), the a9s
 * ServiceBinding writes the connection Secret `<claim>-creds` (type connection.crossplane.io/v1alpha1),
 * both in the claim's namespace. With namespaced XRs both backends give `<binding>-creds` (type
 * connection.crossplane.io/v1alpha1): a8s composes it (see composeCredentialsSecret).
 */
export function serviceBinding(types: readonly string[] = INSTANCE_TYPES): InstanceOperationProps {
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
    namespacedSpec: CREDENTIALS_SECRET_REF,
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
          if (style.namespaced) composeCredentialsSecret(step);
        },
        { permissionClaims: [a8sBindingSecretClaim()], namespacedPermissionClaims: [credentialsSecretClaim({ names: [`*${A9S_BINDING_SECRET_SUFFIX}`] })] },
      ),
      {
        name: 'a9s-servicebinding',
        automation: 'a9s',
        permissionClaims: [credentialsSecretClaim({ names: [`*${A9S_BINDING_SECRET_SUFFIX}`] })],
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
                transforms: [Transform.stringFormat(`%s${A9S_BINDING_SECRET_SUFFIX}`)],
              }),
              // namespaced XRs: a name of the user's choice (CREDENTIALS_SECRET_REF) replaces `<binding>-creds`
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
