/**
 * Which label and annotation keys cross between an app cluster and its provider, as documented data
 * (each entry says why). The konnector copies objects both ways (claimed Secrets/ConfigMaps, the
 * consumer's objects of a bound API up, provider-created objects down); a key on such an object is
 * an instruction to every controller of the other cluster that reads it: Argo CD's
 * `argocd.argoproj.io/secret-type: cluster` makes a Secret a cluster credential, the Grafana sidecar
 * loads a ConfigMap labelled `grafana_dashboard`, replicator/reflector/kubed copy a Secret into
 * other namespaces, `crossplane.io/external-name` makes a composite adopt an existing external
 * resource. So a key crosses only when:
 *
 * 1. it is not one of the konnector's own keys ({@link KONNECTOR_KEYS}: the konnector sets them on
 *    its copies itself, a source's values are dropped);
 * 2. it is not on the {@link NEVER_CROSSING} list (replication, GitOps, ownership and Kubernetes'
 *    own families): this list wins over every allow-list, also one the app cluster's admin configures;
 * 3. it is on the allow-list: the documented defaults ({@link DEFAULT_CROSSING_LABELS},
 *    {@link DEFAULT_CROSSING_ANNOTATIONS}) plus the keys the app cluster's admin adds (the konnector's
 *    `--allow-label-key` / `--allow-annotation-key`, the Konnector construct's `allowedMetadataKeys`).
 *
 * A permission claim can narrow this per direction further (its `read` / `update` key patterns,
 * runtime/konnector/metadata.ts), never widen it. Patterns: `*` matches any run of characters
 * (none, `.` and `/` included); everything else matches itself. Shared by the konnector (the
 * decision) and the Konnector construct (the check of what an admin configures).
 */
import { fail } from './_errors.js';
import { BIND_GROUP } from './api/constants.js';

/** One key pattern and why it is on its list. */
export interface KeyRule {
  /** Key pattern: `*` matches any run of characters. */
  readonly pattern: string;
  /** Keys the pattern matches that the rule does not cover. */
  readonly except?: readonly string[];
  /** Why the keys are on this list. */
  readonly why: string;
}

/** The konnector's own keys: never copied from a source, set by the konnector on its copies. */
export const KONNECTOR_KEYS: readonly KeyRule[] = [
  {
    pattern: `${BIND_GROUP}/*`,
    why:
      'the konnector’s records on its copies (resource-owner, source-uid, source-resource-version, bound, adopted, consumer-spec-hash, cluster-namespace, …): ' +
      'ownership is decided from them, so only the konnector writes them; a value on the source would let the other side pass its object off as a konnector copy',
  },
  {
    pattern: `*.${BIND_GROUP}/*`,
    why: 'keys of the bind backend and the bootstrap (identity, create-only): instructions to the control plane, never to be copied between clusters',
  },
];

/** Keys that never cross, whatever an allow-list says. */
export const NEVER_CROSSING: readonly KeyRule[] = [
  {
    pattern: '*.argoproj.io/*',
    why: 'Argo CD: `argocd.argoproj.io/secret-type` makes a Secret a cluster or repository credential, tracking-id/instance tie an object to an Application (synced, pruned), `notifications.argoproj.io` subscribes',
  },
  {
    pattern: 'fluxcd.io/*',
    why: 'Flux v1: sync and automation instructions',
  },
  {
    pattern: '*.fluxcd.io/*',
    why: 'Flux: `kustomize.toolkit.fluxcd.io/name|namespace` tie an object to a Kustomization (garbage collection), `reconcile: disabled`, `ssa` change how Flux applies it',
  },
  {
    pattern: 'helm.sh/*',
    why: 'Helm: `helm.sh/resource-policy`, hooks and chart labels instruct Helm',
  },
  {
    pattern: '*.helm.sh/*',
    why: 'Helm: `meta.helm.sh/release-name|release-namespace` let a release adopt (and later delete) the object',
  },
  {
    pattern: '*.k14s.io/*',
    why: 'Carvel kapp: `kapp.k14s.io/app` and association labels make an app own (and prune) the object',
  },
  {
    pattern: 'replicator.v1.mittwald.de/*',
    why: 'kubernetes-replicator: `replicate-to` / `replicate-from` copy the Secret into (or out of) other namespaces, beyond the bound ones',
  },
  {
    pattern: '*.emberstack.com/*',
    why: 'reflector: `reflector.v1.k8s.emberstack.com/reflection-allowed|reflection-auto-enabled|…` mirror the Secret into other namespaces, beyond the bound ones',
  },
  {
    pattern: '*.appscode.com/*',
    why: 'kubed / config-syncer: `kubed.appscode.com/sync` copies the Secret into every namespace with a matching label',
  },
  {
    pattern: 'grafana_*',
    why: 'Grafana sidecar: `grafana_dashboard`, `grafana_datasource`, `grafana_alert`, … load the object into Grafana (a datasource with credentials, a dashboard), `grafana_folder` places it',
  },
  {
    pattern: 'k8s-sidecar-target-directory',
    why: 'the Grafana sidecar (k8s-sidecar) writes the object to this directory of the Grafana pod',
  },
  {
    pattern: 'crossplane.io/*',
    why: 'Crossplane: `crossplane.io/external-name` makes a composite or managed resource adopt an existing external resource (another tenant’s database), claim/composite labels tie objects together',
  },
  {
    pattern: '*.crossplane.io/*',
    why: 'Crossplane and its providers: instructions to the control plane’s controllers',
  },
  {
    pattern: 'cert-manager.io/*',
    why: 'cert-manager: certificate-name/issuer keys tie a Secret to a Certificate (overwritten, injected as CA); `allow-direct-injection` makes it a CA source',
  },
  {
    pattern: '*.cert-manager.io/*',
    why: 'cert-manager controllers’ own records',
  },
  {
    pattern: 'kubernetes.io/*',
    why: 'Kubernetes’ own keys: `kubernetes.io/service-account.name` makes the token controller mint a token into the Secret, `kubernetes.io/metadata.name` is the API server’s',
  },
  {
    pattern: '*.kubernetes.io/*',
    except: ['app.kubernetes.io/*'],
    why: 'Kubernetes’ own keys: `kubectl.kubernetes.io/last-applied-configuration` (kubectl apply’s record), `pod-security.kubernetes.io/*`, `service.kubernetes.io/*`, `endpointslice.kubernetes.io/*` (controllers act on them)',
  },
  {
    pattern: 'k8s.io/*',
    why: 'Kubernetes’ own keys',
  },
  {
    pattern: '*.k8s.io/*',
    why: 'Kubernetes’ own keys (`kustomize.config.k8s.io/*`, …)',
  },
  {
    pattern: '*.x-k8s.io/*',
    why: 'the Kubernetes SIG projects: `cluster.x-k8s.io/*` (Cluster API ownership and cluster credentials), Gateway API, …',
  },
  {
    pattern: 'app.kubernetes.io/managed-by',
    why: 'the tool that manages the object (Helm checks it before adopting, other tools before changing): on a copy the konnector manages it',
  },
  {
    pattern: 'app.kubernetes.io/instance',
    why: 'Argo CD’s default label tracking: an Application of the other cluster would claim (and prune) the copy',
  },
];

/** Labels that cross by default: the recommended, descriptive `app.kubernetes.io` labels. */
export const DEFAULT_CROSSING_LABELS: readonly KeyRule[] = [
  { pattern: 'app.kubernetes.io/name', why: 'recommended label: the application’s name; descriptive, no controller acts on it on a Secret or ConfigMap' },
  { pattern: 'app.kubernetes.io/component', why: 'recommended label: the component (e.g. database); descriptive' },
  { pattern: 'app.kubernetes.io/part-of', why: 'recommended label: the higher-level application; descriptive' },
  { pattern: 'app.kubernetes.io/version', why: 'recommended label: the version; descriptive' },
];

/**
 * Annotations that cross by default: none. The sync needs none (the konnector's own are set by the
 * konnector), and annotations carry instructions to controllers more often than labels do; an app
 * cluster's admin adds the ones its tooling needs.
 */
export const DEFAULT_CROSSING_ANNOTATIONS: readonly KeyRule[] = [];

/** Whether a label or an annotation. */
export type MetadataKind = 'label' | 'annotation';

const compiled = new Map<string, RegExp>();

/** Whether `key` matches the pattern (`*` matches any run of characters, everything else itself). */
export function keyPatternMatches(pattern: string, key: string): boolean {
  let re = compiled.get(pattern);
  if (!re) {
    re = new RegExp(
      '^' +
        pattern
          .split('*')
          .map((p) => p.replace(/[.+?^${}()|[\]\\/-]/g, '\\$&'))
          .join('.*') +
        '$',
      's',
    );
    if (compiled.size > 1000) compiled.clear();
    compiled.set(pattern, re);
  }
  return re.test(key);
}

const ruleMatches = (r: KeyRule, key: string): boolean => keyPatternMatches(r.pattern, key) && !(r.except ?? []).some((e) => keyPatternMatches(e, key));

const QUALIFIED_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Whether `key` is a valid label/annotation key: `[<DNS subdomain>/]<name>`. */
export function isMetadataKey(key: string): boolean {
  const slash = key.lastIndexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (!QUALIFIED_NAME.test(name) || name.length > 63) return false;
  return prefix === undefined || (prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix));
}

/** The rule of `rules` covering every key `pattern` can match, if one does. */
function coveringRule(rules: readonly KeyRule[], pattern: string): KeyRule | undefined {
  // A rule whose pattern matches the allow pattern's text (its `*` as plain characters) matches
  // every key the allow pattern matches; a rule's exceptions must not overlap it either.
  return rules.find(
    (r) =>
      keyPatternMatches(r.pattern, pattern) &&
      (r.except ?? []).every((e) => !keyPatternMatches(e, pattern) && !keyPatternMatches(pattern, e) && !keyPatternMatches(pattern, e.replace(/\*/g, 'x'))),
  );
}

/**
 * Returns `value` when it is a key pattern an app cluster's admin may add to the allow-list, or
 * throws naming `field`, the value and what to do: a label/annotation key (`[<DNS subdomain>/]<name>`)
 * in which `*` stands for any run of characters, not covered entirely by the konnector's own keys or
 * the never-crossing list.
 */
export function checkAllowedKeyPattern(field: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') fail(field, value, 'must be a label or annotation key pattern such as "example.com/team" or "example.com/*"');
  if (!isMetadataKey(value.replace(/\*/g, 'x'))) {
    fail(
      field,
      value,
      'is not a label or annotation key pattern: [<DNS subdomain>/]<name> (name: at most 63 letters, digits, "-", "_", "."), with "*" for any run of characters',
    );
  }
  const own = coveringRule(KONNECTOR_KEYS, value);
  if (own) fail(field, value, `is one of the konnector's own keys (${own.pattern}: ${own.why}); they are never copied — remove it`);
  const never = coveringRule(NEVER_CROSSING, value);
  if (never) fail(field, value, `never crosses (${never.pattern}: ${never.why}); the never-crossing list wins over the allow-list — remove it`);
  return value;
}

/** Why a key crosses or not. */
export type KeyVerdict =
  | { readonly crosses: true; readonly rule: KeyRule }
  | { readonly crosses: false; readonly reason: 'konnector' | 'never'; readonly rule: KeyRule }
  | { readonly crosses: false; readonly reason: 'not-allowed' };

/** The allow-list an app cluster's admin adds to the defaults, per kind. */
export interface AllowedMetadataKeys {
  /** Label key patterns. @default [] */
  readonly labels?: readonly string[];
  /** Annotation key patterns. @default [] */
  readonly annotations?: readonly string[];
}

/** The keys that cross: the konnector's own keys and the never-crossing list first, then the allow-list. */
export class MetadataKeyPolicy {
  /** The documented defaults, nothing added. */
  static readonly DEFAULT = new MetadataKeyPolicy(DEFAULT_CROSSING_LABELS, DEFAULT_CROSSING_ANNOTATIONS);

  /**
   * The defaults plus the admin's patterns (checked with {@link checkAllowedKeyPattern}; `field`
   * names the option in errors, e.g. `KonnectorOptions.allowedMetadataKeys`).
   */
  static create(added: AllowedMetadataKeys = {}, field = 'allowedMetadataKeys'): MetadataKeyPolicy {
    const rules = (kind: 'labels' | 'annotations') =>
      (added[kind] ?? []).map((p, i) => ({ pattern: checkAllowedKeyPattern(`${field}.${kind}[${i}]`, p), why: 'added by the app cluster’s admin' }));
    return new MetadataKeyPolicy([...DEFAULT_CROSSING_LABELS, ...rules('labels')], [...DEFAULT_CROSSING_ANNOTATIONS, ...rules('annotations')]);
  }

  private constructor(
    /** Labels allowed to cross (defaults first). */
    readonly labels: readonly KeyRule[],
    /** Annotations allowed to cross (defaults first). */
    readonly annotations: readonly KeyRule[],
  ) {}

  /** Whether (and why) a key of this kind crosses. */
  verdict(kind: MetadataKind, key: string): KeyVerdict {
    const own = KONNECTOR_KEYS.find((r) => ruleMatches(r, key));
    if (own) return { crosses: false, reason: 'konnector', rule: own };
    const never = NEVER_CROSSING.find((r) => ruleMatches(r, key));
    if (never) return { crosses: false, reason: 'never', rule: never };
    const allowed = (kind === 'label' ? this.labels : this.annotations).find((r) => ruleMatches(r, key));
    return allowed ? { crosses: true, rule: allowed } : { crosses: false, reason: 'not-allowed' };
  }

  crosses(kind: MetadataKind, key: string): boolean {
    return this.verdict(kind, key).crosses;
  }

  /** Whether a key is on the never-crossing list (whatever an allow-list says). */
  static isNeverCrossing(key: string): boolean {
    return NEVER_CROSSING.some((r) => ruleMatches(r, key));
  }

  /** Whether a key is one of the konnector's own (set by the konnector only). */
  static isKonnectorKey(key: string): boolean {
    return KONNECTOR_KEYS.some((r) => ruleMatches(r, key));
  }
}
