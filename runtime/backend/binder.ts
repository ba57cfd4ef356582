/**
 * What `/bind` does on the provider cluster for one consumer (identity + cluster id):
 * cluster namespace (found by its identity label/annotation, else created), ServiceAccount
 * `klutch-binder`, RoleBinding to ClusterRole `klutch-binder`, `ClusterBinding cluster`, a new
 * credential (the Secret `credential` every token is bound to, replaced on each bind so that the
 * tokens of earlier binds die), a token from the TokenRequest API (expiring; re-issued by the token
 * rotator up to the credential's maximum life) and the kubeconfig Secret (see contract/credential.ts).
 * Every other step is idempotent (create-or-verify, or server-side apply), so re-binding converges.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { fail } from '../../contract/_errors.js';
import { isDnsLabel } from '../../contract/_names.js';
import { ApiError, isAlreadyExists, type KubeClient, type KubeObject } from '../core/client.js';
import {
  CLUSTER_BINDING_NAME,
  IDENTITY_ANNOTATION,
  IDENTITY_HASH_LABEL,
  ISSUER_ANNOTATION,
  KUBECONFIG_SECRET,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  R,
  SUBJECT_HASH_LABEL,
  TOKEN_EXPIRY_ANNOTATION,
  TOKEN_ISSUED_ANNOTATION,
} from './refs.js';
import { BINDER_NAME, apiServiceExportRequestKind } from '../../contract/index.js';
import { binderPolicyRules } from '../../contract/binder-rbac.js';
import { BIND_API_VERSION, type APIServiceExportRequestResponse } from '../../contract/wire.js';
import {
  CREDENTIAL_EXPIRY_ANNOTATION,
  CREDENTIAL_SECRET,
  SEALED_KUBECONFIG_ANNOTATION,
  newRotationKey,
  rotationKeyExtension,
  sealKubeconfig,
} from '../../contract/credential.js';
import type { BindableApi } from './catalog.js';
import { LimitError, type IdentityLock } from './limits.js';

export const FIELD_MANAGER = 'klutch-backend';

export interface ExternalCluster {
  /** API server URL written into handed-out kubeconfigs. */
  server: string;
  /** PEM CA bundle (base64 for `certificate-authority-data`), if any. */
  caData?: string;
  /** TLS server name (SNI), if any. */
  tlsServerName?: string;
  insecureSkipTlsVerify?: boolean;
}

export interface BinderOptions {
  namespacePrefix: string;
  prettyName: string;
  external: ExternalCluster;
  /** TokenRequest expirationSeconds. */
  tokenTtlSeconds: number;
  /**
   * Maximum life of one credential (one bind): no token of it is valid after this many seconds from
   * the bind, however often it was rotated; then the consumer binds again. @default 2592000 (30 days)
   */
  credentialMaxLifeSeconds?: number;
  /** App clusters (cluster namespaces) one identity (iss + sub) may have; 0: unlimited. @default 0 */
  maxClustersPerIdentity?: number;
  /** Serializes count-and-create per identity across replicas (without it the limit is per request). */
  identityLock?: IdentityLock;
}

export interface ConsumerIdentity {
  iss: string;
  sub: string;
  clusterId: string;
}

export interface BindResult {
  namespace: string;
  kubeconfig: string;
  tokenExpiration: string;
  namespaceCreated: boolean;
}

/** Klutch's identity string (`<sub>#<clusterID>`), stored in the namespace annotation. */
export const identityString = (id: ConsumerIdentity): string => `${id.sub}#${id.clusterId}`;
export const identityHash = (id: ConsumerIdentity): string =>
  createHash('sha224')
    .update(`${id.iss}\n${identityString(id)}`)
    .digest('hex')
    .slice(0, 40);
/** Hash of issuer + subject: the same for every app cluster of one identity. */
export const subjectHash = (id: { iss: string; sub: string }): string => createHash('sha224').update(`${id.iss}\n${id.sub}`).digest('hex').slice(0, 40);

/** Validates a namespace prefix: the created names are `<prefix>-<12 hex>`. */
export function validateNamespacePrefix(prefix: string): string {
  if (!isDnsLabel(prefix, 63 - 13)) fail('--namespace-prefix', prefix, 'is not a DNS label of at most 50 characters (names are <prefix>-<12 hex digits>)');
  return prefix;
}

/** Resolves the cluster written into handed-out kubeconfigs from flags and the backend's own kubeconfig. */
export function externalCluster(kube: KubeClient, flags: { externalAddress?: string; externalCaFile?: string; externalServerName?: string }): ExternalCluster {
  // the backend's own connection: a client-node KubeConfig or runtime/core's ClusterAccess
  const src = kube.source;
  const own: { server: string; caData?: string; caFile?: string; skipTLSVerify?: boolean } =
    'getCurrentCluster' in src
      ? (src.getCurrentCluster() as { server: string; caData?: string; caFile?: string; skipTLSVerify?: boolean })
      : { server: src.server, caData: src.caData?.toString('base64'), skipTLSVerify: src.skipTLSVerify };
  let server = own.server;
  if (flags.externalAddress) {
    let u: URL;
    try {
      u = new URL(flags.externalAddress);
    } catch {
      throw new Error(`--external-address: "${flags.externalAddress}" is not a URL`);
    }
    if (u.protocol !== 'https:') throw new Error(`--external-address: "${flags.externalAddress}" must be an https:// URL`);
    server = flags.externalAddress;
  }
  let caData: string | undefined;
  if (flags.externalCaFile) {
    let pem: string;
    try {
      pem = readFileSync(flags.externalCaFile, 'utf8');
    } catch (e) {
      throw new Error(`--external-ca-file: cannot read "${flags.externalCaFile}": ${(e as Error).message}`, { cause: e });
    }
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
      throw new Error(`--external-ca-file: "${flags.externalCaFile}" holds no PEM certificate`);
    }
    caData = Buffer.from(pem).toString('base64');
  } else if (own.caData) {
    caData = own.caData;
  } else if (own.caFile) {
    caData = readFileSync(own.caFile).toString('base64');
  }
  return { server, caData, tlsServerName: flags.externalServerName, insecureSkipTlsVerify: own.skipTLSVerify || undefined };
}

/** Key of the credential Secret's data holding the credential's rotation key. */
export const ROTATION_KEY_DATA = 'rotation-key';
/** Default maximum life of a consumer credential: 30 days. */
export const DEFAULT_CREDENTIAL_MAX_LIFE_SECONDS = 30 * 24 * 3600;
/** The shortest token the TokenRequest API issues (expirationSeconds minimum). */
export const MIN_TOKEN_SECONDS = 600;

/** Validates a credential maximum life (seconds) against the token TTL; returns it. */
export function validateCredentialMaxLife(maxLife: number, tokenTtl: number, field = '--credential-max-life'): number {
  if (!Number.isInteger(maxLife) || maxLife < MIN_TOKEN_SECONDS) {
    fail(field, maxLife, `must be a whole number of seconds >= ${MIN_TOKEN_SECONDS} (10m, the shortest token Kubernetes issues)`);
  }
  if (maxLife < tokenTtl) fail(field, maxLife, `is shorter than --token-ttl (${tokenTtl}s); raise it or lower --token-ttl`);
  return maxLife;
}

/** A credential: the Secret its tokens are bound to, its end, and the rotation key its kubeconfigs carry. */
export interface Credential {
  readonly name: string;
  readonly uid: string;
  /** End of the maximum life, epoch ms. */
  readonly expiresAt: number;
  readonly rotationKey: Buffer;
}

export function renderKubeconfig(ext: ExternalCluster, namespace: string, token: string, rotationKey?: Buffer): string {
  const cluster: Record<string, unknown> = { server: ext.server };
  if (ext.caData) cluster['certificate-authority-data'] = ext.caData;
  if (ext.tlsServerName) cluster['tls-server-name'] = ext.tlsServerName;
  if (ext.insecureSkipTlsVerify) cluster['insecure-skip-tls-verify'] = true;
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'provider', cluster }],
    users: [{ name: BINDER_NAME, user: { token } }],
    contexts: [{ name: 'default', context: { cluster: 'provider', user: BINDER_NAME, namespace } }],
    'current-context': 'default',
    // the rotation key: never sent to the API server; opens the sealed rotated kubeconfig (contract/credential.ts)
    ...(rotationKey ? { extensions: [rotationKeyExtension(rotationKey)] } : {}),
  });
}

/** The APIServiceExportRequest handed to the CLI for one bindable API. */
export function exportRequestFor(api: BindableApi): APIServiceExportRequestResponse {
  return {
    apiVersion: BIND_API_VERSION,
    kind: apiServiceExportRequestKind.kind,
    metadata: { name: `${api.resource}.${api.group}` },
    spec: {
      resources: [
        {
          group: api.group,
          resource: api.resource,
          ...(api.permissionClaims.length ? { permissionClaims: api.permissionClaims } : {}),
        },
      ],
    },
    // contract/api types `group` as the literal of its default (""); the value is any API group.
  } as unknown as APIServiceExportRequestResponse;
}

export class Binder {
  constructor(
    private readonly kube: KubeClient,
    readonly opts: BinderOptions,
  ) {
    validateNamespacePrefix(opts.namespacePrefix);
    validateCredentialMaxLife(this.maxLifeSeconds, opts.tokenTtlSeconds, 'BinderOptions.credentialMaxLifeSeconds');
  }

  private get maxLifeSeconds(): number {
    return this.opts.credentialMaxLifeSeconds ?? DEFAULT_CREDENTIAL_MAX_LIFE_SECONDS;
  }

  /** Finds the consumer's cluster namespace by its identity label (verified against the annotations). */
  async findNamespace(id: ConsumerIdentity): Promise<KubeObject | undefined> {
    const list = await this.kube.list(R.namespaces, undefined, { labelSelector: `${IDENTITY_HASH_LABEL}=${identityHash(id)}` });
    return list.items.find((ns) => this.owns(ns, id));
  }

  private owns(ns: KubeObject, id: ConsumerIdentity): boolean {
    const a = ns.metadata.annotations ?? {};
    return a[IDENTITY_ANNOTATION] === identityString(id) && a[ISSUER_ANNOTATION] === id.iss;
  }

  private async ensureNamespace(id: ConsumerIdentity): Promise<{ name: string; created: boolean }> {
    const found = await this.findNamespace(id);
    if (found) {
      if (found.metadata.deletionTimestamp) {
        throw new ApiError(409, 'Conflict', `cluster namespace ${found.metadata.name} is being deleted; bind again in a minute`, 'POST', '/bind');
      }
      return { name: found.metadata.name!, created: false };
    }
    const hash = identityHash(id);
    const name = `${this.opts.namespacePrefix}-${hash.slice(0, 12)}`;
    const ns: KubeObject = {
      metadata: {
        name,
        labels: { [IDENTITY_HASH_LABEL]: hash, [SUBJECT_HASH_LABEL]: subjectHash(id), [MANAGED_BY_LABEL]: MANAGED_BY },
        annotations: { [IDENTITY_ANNOTATION]: identityString(id), [ISSUER_ANNOTATION]: id.iss },
      },
    };
    const max = this.opts.maxClustersPerIdentity ?? 0;
    if (max <= 0) return this.createNamespace(id, ns);
    // count and create under the identity's lock (held by one bind on any replica at a time), so
    // concurrent binds neither exceed the limit nor refuse each other below it
    const counted = async () => {
      const used = (await this.clustersOf(id)).length;
      if (used >= max) throw this.overLimit(id, used, max);
      return this.createNamespace(id, ns);
    };
    return this.opts.identityLock ? this.opts.identityLock.withLock(subjectHash(id), id.sub, counted) : counted();
  }

  private async createNamespace(id: ConsumerIdentity, ns: KubeObject): Promise<{ name: string; created: boolean }> {
    const name = ns.metadata.name!;
    try {
      await this.kube.create(R.namespaces, ns);
      return { name, created: true };
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      const existing = await this.kube.get(R.namespaces, undefined, name);
      if (!this.owns(existing, id)) {
        throw new ApiError(409, 'Conflict', `namespace ${name} exists but belongs to another identity`, 'POST', '/bind');
      }
      return { name, created: false };
    }
  }

  /** The identity's cluster namespaces (not being deleted), oldest first. */
  async clustersOf(id: { iss: string; sub: string }): Promise<KubeObject[]> {
    const list = await this.kube.list(R.namespaces, undefined, { labelSelector: `${SUBJECT_HASH_LABEL}=${subjectHash(id)}` });
    return list.items
      .filter(
        (n) =>
          !n.metadata.deletionTimestamp &&
          n.metadata.annotations?.[ISSUER_ANNOTATION] === id.iss &&
          (n.metadata.annotations?.[IDENTITY_ANNOTATION] ?? '').startsWith(`${id.sub}#`),
      )
      .sort(
        (a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || a.metadata.name!.localeCompare(b.metadata.name!),
      );
  }

  private overLimit(id: ConsumerIdentity, used: number, max: number): LimitError {
    return new LimitError(
      403,
      'clusterID',
      'clusters',
      `identity ${id.sub} already has ${used} app clusters bound, the limit is ${max} (--max-clusters-per-identity); unbind one, or bind again from an app cluster that is already bound`,
    );
  }

  /**
   * Issues a token for the cluster namespace's ServiceAccount, bound to the credential Secret (deleting
   * it invalidates the token) and ending at the credential's end at the latest.
   */
  async issueToken(namespace: string, cred: Credential, now = Date.now()): Promise<{ token: string; expirationTimestamp: string }> {
    const left = Math.floor((cred.expiresAt - now) / 1000);
    if (left < MIN_TOKEN_SECONDS) {
      throw new Error(`credential ${namespace}/${cred.name} ends in ${left}s, less than the shortest token (${MIN_TOKEN_SECONDS}s); the consumer binds again`);
    }
    const tr = await this.kube.request<{ status: { token: string; expirationTimestamp: string } }>(
      'POST',
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${BINDER_NAME}/token`,
      {
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: {
            expirationSeconds: Math.min(this.opts.tokenTtlSeconds, left),
            boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: cred.name, uid: cred.uid },
          },
        },
      },
    );
    return tr.status;
  }

  /**
   * A new credential for the cluster namespace: the credential Secret is deleted (every token of the
   * previous bind is invalid from then on) and created again, with a new rotation key and its maximum life.
   */
  async replaceCredential(namespace: string): Promise<Credential> {
    await this.kube.delete(R.secrets, namespace, CREDENTIAL_SECRET, { ignoreNotFound: true });
    const expiresAt = Date.now() + this.maxLifeSeconds * 1000;
    const key = newRotationKey();
    const body: KubeObject = {
      metadata: {
        name: CREDENTIAL_SECRET,
        namespace,
        labels: { [MANAGED_BY_LABEL]: MANAGED_BY },
        annotations: { [CREDENTIAL_EXPIRY_ANNOTATION]: new Date(expiresAt).toISOString() },
      },
      type: 'Opaque',
      // the rotation key, for a concurrent bind that shares this credential (only the backend reads Secrets here)
      data: { [ROTATION_KEY_DATA]: key.toString('base64') },
    } as KubeObject;
    let created: KubeObject;
    try {
      created = await this.kube.create(R.secrets, body);
    } catch (e) {
      // a concurrent bind of the same consumer made one a moment ago: share it
      if (!isAlreadyExists(e)) throw e;
      created = await this.kube.get(R.secrets, namespace, CREDENTIAL_SECRET);
    }
    const at = Date.parse(created.metadata.annotations?.[CREDENTIAL_EXPIRY_ANNOTATION] ?? '');
    const stored = Buffer.from((created as KubeObject & { data?: Record<string, string> }).data?.[ROTATION_KEY_DATA] ?? '', 'base64');
    return {
      name: CREDENTIAL_SECRET,
      uid: created.metadata.uid!,
      expiresAt: Number.isNaN(at) ? expiresAt : at,
      rotationKey: stored.length === 32 ? stored : key,
    };
  }

  /**
   * Writes a freshly issued token of `cred`: sealed into the ClusterBinding's annotation (what the
   * konnector reads; first, so that a failure below is retried with a new token rather than leaving the
   * konnector without one), then into the kubeconfig Secret (which only the backend reads).
   */
  async writeKubeconfig(namespace: string, cred: Credential): Promise<{ kubeconfig: string; expirationTimestamp: string }> {
    const { token, expirationTimestamp } = await this.issueToken(namespace, cred);
    const kubeconfig = renderKubeconfig(this.opts.external, namespace, token, cred.rotationKey);
    const ends = new Date(cred.expiresAt).toISOString();
    await this.kube.mergePatch(R.clusterBindings, namespace, CLUSTER_BINDING_NAME, {
      metadata: {
        annotations: { [SEALED_KUBECONFIG_ANNOTATION]: sealKubeconfig(cred.rotationKey, namespace, kubeconfig), [CREDENTIAL_EXPIRY_ANNOTATION]: ends },
      },
    });
    await this.kube.apply(
      R.secrets,
      {
        metadata: {
          name: KUBECONFIG_SECRET,
          namespace,
          labels: { [MANAGED_BY_LABEL]: MANAGED_BY },
          annotations: {
            [TOKEN_EXPIRY_ANNOTATION]: expirationTimestamp,
            [TOKEN_ISSUED_ANNOTATION]: new Date().toISOString(),
            [CREDENTIAL_EXPIRY_ANNOTATION]: ends,
          },
        },
        type: 'Opaque',
        data: { kubeconfig: Buffer.from(kubeconfig).toString('base64') },
      },
      FIELD_MANAGER,
      { force: true },
    );
    return { kubeconfig, expirationTimestamp };
  }

  async bind(id: ConsumerIdentity): Promise<BindResult> {
    const { name: ns, created } = await this.ensureNamespace(id);
    const labels = { [MANAGED_BY_LABEL]: MANAGED_BY };
    await this.kube.apply(R.serviceAccounts, { metadata: { name: BINDER_NAME, namespace: ns, labels } }, FIELD_MANAGER, { force: true });
    await this.kube.apply(
      R.roleBindings,
      {
        metadata: { name: BINDER_NAME, namespace: ns, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: BINDER_NAME },
        subjects: [{ kind: 'ServiceAccount', name: BINDER_NAME, namespace: ns }],
      },
      FIELD_MANAGER,
      { force: true },
    );
    await this.kube.apply(
      R.clusterBindings,
      {
        metadata: { name: CLUSTER_BINDING_NAME, namespace: ns, labels },
        spec: { kubeconfigSecretRef: { name: KUBECONFIG_SECRET, key: 'kubeconfig' }, providerPrettyName: this.opts.prettyName },
      },
      FIELD_MANAGER,
      { force: true },
    );
    const { kubeconfig, expirationTimestamp } = await this.writeKubeconfig(ns, await this.replaceCredential(ns));
    return { namespace: ns, kubeconfig, tokenExpiration: expirationTimestamp, namespaceCreated: created };
  }
}

/** The ClusterRole `klutch-binder` every consumer's ServiceAccount gets in its cluster namespace. */
export function binderClusterRole(opts: { klutchKonnectorCompat?: boolean } = {}): KubeObject {
  return {
    metadata: { name: BINDER_NAME, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
    rules: binderPolicyRules(opts),
  };
}
