/**
 * Schema pieces shared by several binding-API kinds: permission claims, conditions, group/resource
 * references and kubeconfig Secret references.
 */
import { arr, bool, map, obj, str, type TypeOf } from './_schema.js';
import { KUBECONFIG_SECRET_KEY } from './constants.js';

/** DNS-subdomain-or-empty pattern of an API group (`""` is the core group). */
export const GROUP_PATTERN = '^(|[a-z0-9]([-a-z0-9]*[a-z0-9](\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?)$';
/** Pattern of a plural resource name. */
export const RESOURCE_PATTERN = '^[a-z][-a-z0-9]*[a-z0-9]$';

/** `group` field: the API group, `""` for core. */
export const groupField = () => str({ default: '', pattern: GROUP_PATTERN, description: 'API group; the empty string is the core group.' });
/** `resource` field: the plural resource name. */
export const resourceField = () => str({ pattern: RESOURCE_PATTERN, description: 'Plural resource name (lower case).' });

/** A group + plural resource. */
export const groupResourceSchema = obj({ group: groupField(), resource: resourceField() }, { required: ['resource'] });
export type GroupResource = TypeOf<typeof groupResourceSchema>;

const patternEntry = obj({ pattern: str({ description: 'Wildcard pattern of a label or annotation key.' }) });
const patternList = (description: string) => arr(patternEntry, { description });

/** The properties of a PermissionClaim (shared with AcceptablePermissionClaim). */
export const permissionClaimProps = {
  group: groupField(),
  resource: resourceField(),
  version: str({ minLength: 1, description: 'API version of the claimed resource.' }),
  selector: obj(
    {
      names: arr(str(), { default: ['*'], description: 'Object names the claim selects; `*` selects all.' }),
      namespaces: arr(str(), {
        default: ['*'],
        description: 'Namespaces the claim selects; `*` selects all. Set to [] for cluster-scoped resources.',
      }),
      labelSelectors: arr(map(str()), { description: 'Label selectors (match labels) of selected objects.' }),
      fieldSelectors: arr(str(), { description: 'Field selectors of selected objects.' }),
      owner: str({ enum: ['Provider', 'Consumer'], description: 'Which side owns (creates) the claimed objects.' }),
    },
    { default: {}, description: 'Which objects of the resource are claimed.' },
  ),
  required: bool({ description: 'Whether the binding works only when the claim is accepted.' }),
  read: obj(
    {
      labels: patternList('Label keys read from the consumer.'),
      labelsOnProviderOwnedObjects: patternList('Label keys read from the consumer on provider-owned objects.'),
      annotations: patternList('Annotation keys read from the consumer.'),
      overrideAnnotations: patternList('Annotation keys read from the consumer that override provider values.'),
    },
    { default: {}, description: 'Labels and annotations the provider may read.' },
  ),
  create: obj(
    { replaceExisting: bool({ description: 'Replace an existing consumer object of the same name.' }) },
    { description: 'Create objects on the consumer side (owner Provider only).' },
  ),
  autoAdopt: bool({ description: 'Adopt matching consumer objects without asking.' }),
  autoDonate: bool({ description: 'Donate matching provider objects without asking.' }),
  onConflict: obj(
    {
      recreateWhenConsumerSideDeleted: bool({
        default: true,
        description: 'Recreate a provider-owned object when the consumer deletes it.',
      }),
    },
    { default: {}, description: 'What to do on conflicting changes.' },
  ),
  update: obj(
    {
      fields: arr(str(), { description: 'Fields (JSON paths) the provider may update.' }),
      preserving: arr(str(), { description: 'Fields preserved on update.' }),
      alwaysRecreate: bool({ description: 'Delete and recreate instead of updating.' }),
      labels: patternList('Label keys the provider may update.'),
      labelsOnConsumerOwnedObjects: patternList('Label keys the provider may update on consumer-owned objects.'),
      annotations: patternList('Annotation keys the provider may update.'),
      annotationsOnConsumerOwnedObjects: patternList('Annotation keys the provider may update on consumer-owned objects.'),
    },
    { description: 'What the provider may update.' },
  ),
} as const;

/** The CEL rule shared by every permission claim. */
export const ADOPT_DONATE_RULE = {
  rule: '!(has(self.autoDonate) && self.autoDonate && has(self.autoAdopt) && self.autoAdopt)',
  message: 'donate and adopt are mutually exclusive',
} as const;

/** A request by the provider for access to objects of a resource in the consumer cluster. */
export const permissionClaimSchema = obj(permissionClaimProps, {
  required: ['resource', 'version'],
  validations: [ADOPT_DONATE_RULE],
  description: 'A permission claim: objects of a resource the provider may access on the consumer side.',
});
export type PermissionClaim = TypeOf<typeof permissionClaimSchema>;

/** A permission claim with the consumer's decision. */
export const acceptablePermissionClaimSchema = obj(
  { ...permissionClaimProps, state: str({ enum: ['Accepted', 'Rejected'], description: 'The consumer decision.' }) },
  {
    required: ['resource', 'state', 'version'],
    validations: [ADOPT_DONATE_RULE],
    description: 'A permission claim accepted or rejected by the consumer.',
  },
);
export type AcceptablePermissionClaim = TypeOf<typeof acceptablePermissionClaimSchema>;

/** A cluster-api style condition (with `severity`). */
export const conditionSchema = obj(
  {
    type: str({ description: 'Condition type, e.g. Ready.' }),
    status: str({ description: 'True, False or Unknown.' }).as<'True' | 'False' | 'Unknown'>(),
    severity: str({ description: 'Error, Warning, Info or empty (only when status is False).' }).as<'' | 'Error' | 'Warning' | 'Info'>(),
    lastTransitionTime: str({ format: 'date-time', description: 'Last time the status changed (RFC 3339).' }),
    reason: str({ description: 'CamelCase reason of the last transition.' }),
    message: str({ description: 'Human readable detail.' }),
  },
  { required: ['lastTransitionTime', 'status', 'type'] },
);
export type Condition = TypeOf<typeof conditionSchema>;
export const conditionsField = () => arr(conditionSchema, { description: 'Observations of the object state.' });

/** Reference to the kubeconfig Secret in another namespace. */
export const namespacedKubeconfigSecretRefSchema = obj(
  {
    namespace: str({ minLength: 1, description: 'Namespace of the Secret.' }),
    name: str({ minLength: 1, description: 'Name of the Secret.' }),
    key: str({ enum: [KUBECONFIG_SECRET_KEY], description: 'Key in the Secret (always `kubeconfig`).' }),
  },
  {
    required: ['key', 'name', 'namespace'],
    validations: [{ rule: 'self == oldSelf', message: 'kubeconfigSecretRef is immutable' }],
    description: 'The Secret holding the kubeconfig of the other cluster.',
  },
);
export type NamespacedKubeconfigSecretRef = TypeOf<typeof namespacedKubeconfigSecretRefSchema>;

/** Reference to the kubeconfig Secret in the object's own namespace. */
export const localKubeconfigSecretRefSchema = obj(
  {
    name: str({ minLength: 1, description: 'Name of the Secret.' }),
    key: str({ enum: [KUBECONFIG_SECRET_KEY], description: 'Key in the Secret (always `kubeconfig`).' }),
  },
  {
    required: ['key', 'name'],
    validations: [{ rule: 'self == oldSelf', message: 'kubeconfigSecretRef is immutable' }],
    description: 'The Secret in this namespace holding the kubeconfig of the consumer cluster.',
  },
);
export type LocalKubeconfigSecretRef = TypeOf<typeof localKubeconfigSecretRefSchema>;
