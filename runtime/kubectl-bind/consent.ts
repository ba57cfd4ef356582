/**
 * What `kubectl bind` shows and checks before it writes anything: the resource policy of the
 * contract (`contract/resource-policy.ts`) applied to an export request (every exported resource and
 * every permission claim), and the consent text of a claim with every option that writes into the
 * app cluster, dangerous ones flagged.
 */
import {
  decideResource,
  parseAllowedResource,
  refusalMessage,
  resourceName,
  type AllowedResource,
  type ResourceDecision,
  type ResourceUse,
} from '../../contract/resource-policy.js';
import type { PermissionClaim } from '../../contract/wire.js';
import { checkAllowedNamespace } from '../../contract/allowed-namespaces.js';
import { CliError, Exit } from './exit.js';
import { KONNECTOR_NAMESPACE } from '../../contract/api/constants.js';

/** The flag that allows a resource outside the default allow-list. */
export const ALLOW_FLAG = '--allow-resource';
const allowHint = (name: string) => `${ALLOW_FLAG} ${name}`;

/** Parses the values of `--allow-resource` (repeatable). */
export function parseAllowResources(values: readonly string[] | undefined): AllowedResource[] {
  return (values ?? []).map((v) => {
    try {
      return parseAllowedResource(ALLOW_FLAG, v);
    } catch (e) {
      throw new CliError((e as Error).message, Exit.USAGE);
    }
  });
}

/** The flag that narrows the konnector's Secret and ConfigMap rights to namespaces (repeatable). */
export const ALLOW_NAMESPACE_FLAG = '--allow-namespace';

/**
 * Parses the values of `--allow-namespace` (repeatable) as the konnector checks its own flag (a DNS-1123
 * label, no system namespace), and not the konnector's namespace; sorted, without repeats.
 */
export function parseAllowNamespaces(values: readonly string[] | undefined): string[] {
  const out = new Set<string>();
  for (const v of values ?? []) {
    try {
      checkAllowedNamespace(ALLOW_NAMESPACE_FLAG, v);
    } catch (e) {
      throw new CliError((e as Error).message, Exit.USAGE);
    }
    if (v === KONNECTOR_NAMESPACE) {
      throw new CliError(`${ALLOW_NAMESPACE_FLAG}: "${v}" is the konnector's own namespace, where it never syncs claimed objects; remove it`, Exit.USAGE);
    }
    out.add(v);
  }
  return [...out].sort();
}

/** The flag that gives the konnector Secret and ConfigMap rights in every namespace (the weaker choice). */
export const ALL_NAMESPACES_FLAG = '--all-namespaces';

/**
 * The namespace of the app cluster's kubeconfig context, as kubectl takes it (`default` when the context
 * names none), checked as `--allow-namespace` is: the konnector's default namespace.
 */
export function contextNamespace(ns: string | undefined): string {
  const v = ns || 'default';
  try {
    checkAllowedNamespace("the kubeconfig context's namespace", v);
  } catch (e) {
    throw new CliError(`${(e as Error).message}; pass ${ALLOW_NAMESPACE_FLAG} <namespace> (or ${ALL_NAMESPACES_FLAG})`, Exit.USAGE);
  }
  if (v === KONNECTOR_NAMESPACE) {
    throw new CliError(
      `the kubeconfig context's namespace: "${v}" is the konnector's own namespace, where it never syncs claimed objects; pass ${ALLOW_NAMESPACE_FLAG} <namespace> (or ${ALL_NAMESPACES_FLAG})`,
      Exit.USAGE,
    );
  }
  return v;
}

/**
 * The consent line saying where the konnector may touch Secrets and ConfigMaps: `namespaces` (from
 * `--allow-namespace`, or `from` says where else), or every namespace (`undefined`, `--all-namespaces`).
 */
export function namespaceScopeLine(namespaces: readonly string[] | undefined, from: string = ALLOW_NAMESPACE_FLAG): string {
  return namespaces
    ? `🔒 the konnector may read and write Secrets and ConfigMaps only in namespace${namespaces.length === 1 ? '' : 's'} ${namespaces.join(', ')} (${from}) and its own, ${KONNECTOR_NAMESPACE}; it syncs nothing elsewhere (more with ${ALLOW_NAMESPACE_FLAG} <namespace>)`
    : `⚠️  the konnector may read and write Secrets and ConfigMaps in EVERY namespace (${ALL_NAMESPACES_FLAG}): whoever holds its token reads every Secret of this cluster; without the flag it is narrowed to the context's namespace or ${ALLOW_NAMESPACE_FLAG}`;
}

interface RequestLike {
  spec: { resources: Array<{ group?: string; resource: string; permissionClaims?: PermissionClaim[] }> };
}

/** The policy's decision on every exported resource and every claim of a request. */
export function requestDecisions(request: RequestLike, allowed: readonly AllowedResource[]): ResourceDecision[] {
  const out: ResourceDecision[] = [];
  const seen = new Set<string>();
  const add = (r: { group?: string; resource: string }, use: ResourceUse) => {
    const k = `${use}:${resourceName(r)}`;
    if (seen.has(k)) return;
    seen.add(k);
    out.push(decideResource(r, use, allowed));
  };
  for (const r of request.spec.resources) {
    add(r, 'export');
    for (const c of r.permissionClaims ?? []) add(c, 'claim');
  }
  return out;
}

/**
 * Refuses a request that names a resource outside the allow-list (all of them in one message, each
 * with its reason and the flag that allows it); returns the decisions otherwise.
 */
export function checkRequest(request: RequestLike, allowed: readonly AllowedResource[]): ResourceDecision[] {
  const decisions = requestDecisions(request, allowed);
  const refused = decisions.filter((d) => !d.allowed);
  if (refused.length) {
    throw new CliError(
      `the export request names ${refused.length === 1 ? 'a resource' : 'resources'} this cluster does not let a provider touch; nothing was created:\n${refused
        .map((d) => `  - ${refusalMessage(d, allowHint)}`)
        .join('\n')}`,
      Exit.CONSENT,
    );
  }
  return decisions;
}

/** One line of the consent text for a resource allowed only by `--allow-resource`. */
export function allowedByNameWarning(d: ResourceDecision): string {
  const what = d.use === 'export' ? `export of ${d.name}: the konnector gets read/write on every ${d.name} object, cluster-wide` : `claim on ${d.name}`;
  return `⚠️  ${what} — outside the default allow-list, allowed by ${allowHint(d.name)}: ${d.why}`;
}

/** The one-line summary of a claim: resource, names, direction, required. */
export function describeClaim(c: PermissionClaim): string {
  const what = resourceName(c);
  const sel = c.selector ?? {};
  const names = sel.names?.length && !(sel.names.length === 1 && sel.names[0] === '*') ? ` named ${sel.names.join(', ')}` : '';
  const owner =
    sel.owner === 'Provider'
      ? ' created by the provider (synced into your cluster)'
      : sel.owner === 'Consumer'
        ? ' created in your cluster (synced to the provider)'
        : ' created on either side (synced both ways)';
  return `${what}${names}${owner}${c.required ? ' [required]' : ''}`;
}

const list = (v: readonly string[] | undefined, all = '*'): string => (v === undefined ? `${all} (default)` : v.length ? v.join(', ') : '(none)');
const patterns = (v: ReadonlyArray<{ pattern?: string }> | undefined): string | undefined => (v?.length ? v.map((p) => p.pattern ?? '').join(', ') : undefined);

/**
 * Every option of a claim that decides what is written into (or read from) the app cluster, one per
 * line, dangerous ones starting with ⚠️.
 */
export function claimDetails(c: PermissionClaim): string[] {
  const sel = c.selector ?? {};
  const out: string[] = [];
  const allNames = !sel.names || sel.names.includes('*');
  const allNamespaces = !sel.namespaces || sel.namespaces.includes('*');
  out.push(`selector.names: ${list(sel.names)}${allNames ? ' — every object of the resource' : ''}`);
  out.push(`selector.namespaces: ${list(sel.namespaces)}${allNamespaces ? ' — every namespace you bind' : ''}`);
  if (sel.labelSelectors?.length) out.push(`selector.labelSelectors: ${sel.labelSelectors.map((s) => JSON.stringify(s)).join(' or ')}`);
  if (sel.fieldSelectors?.length) out.push(`selector.fieldSelectors: ${sel.fieldSelectors.join(' or ')}`);
  const unfiltered = allNames && !sel.labelSelectors?.length && !sel.fieldSelectors?.length;
  if (sel.owner !== 'Provider' && unfiltered) {
    out.push(
      `⚠️  selector.owner: ${sel.owner ?? '(both)'} — every ${resourceName(c)} object in the namespaces you bind is copied to the provider; narrow it with names or selectors`,
    );
  } else {
    out.push(`selector.owner: ${sel.owner ?? '(both)'}`);
  }
  if (c.create?.replaceExisting) {
    out.push('⚠️  create.replaceExisting: true — an object of the same name your team created is replaced by the provider’s');
  }
  if (c.update?.alwaysRecreate) out.push('update.alwaysRecreate: true — changed copies are deleted and created again');
  if (c.update?.preserving?.length) out.push(`update.preserving: ${c.update.preserving.join(', ')} — kept as they are in the target on updates`);
  if (c.update?.fields?.length) out.push(`update.fields: ${c.update.fields.join(', ')}`);
  for (const k of ['labels', 'labelsOnConsumerOwnedObjects', 'annotations', 'annotationsOnConsumerOwnedObjects'] as const) {
    const p = patterns(c.update?.[k]);
    if (p) out.push(`update.${k}: ${p}`);
  }
  const recreate = c.onConflict?.recreateWhenConsumerSideDeleted !== false;
  out.push(
    `onConflict.recreateWhenConsumerSideDeleted: ${recreate}${recreate ? ' — a copy you delete is created again' : ' — a copy you delete stays deleted until the provider changes it'}`,
  );
  for (const k of ['labels', 'labelsOnProviderOwnedObjects', 'annotations', 'overrideAnnotations'] as const) {
    const p = patterns(c.read?.[k]);
    if (p) out.push(`read.${k}: ${p} — read from your objects by the provider`);
  }
  if (c.autoAdopt) out.push('autoAdopt: true — matching objects of your cluster are adopted without asking');
  if (c.autoDonate) out.push('autoDonate: true — matching provider objects are donated without asking');
  return out;
}
