/**
 * `AnyninesProviderConfig`: the provider-anynines ProviderConfig of one a9s service broker or backup
 * manager endpoint (URL, credentials Secret, TLS), referenced by the a9s backends' managed resources.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { checkSecretKeyRef } from './_secret-ref.js';
import { IProviderConfig, ProviderConfig } from './provider-config.js';
import type { SecretKeyRef } from './secret-key-ref.js';
import { checkDnsSubdomain, checkNonEmpty, compact, fail } from './_util.js';
import { EnumLike, enumMembers } from '../_enum-like.js';

const A9S_PROVIDER_CONFIG_API_VERSION = 'dataservices.anynines.com/v1';

/** Which anynines endpoint the ProviderConfig talks to (enum-like: static instances). */
export class AnyninesServiceType extends EnumLike {
  /** The service broker (ServiceInstance, ServiceBinding). */
  public static readonly SERVICE_BROKER = new AnyninesServiceType('servicebroker');
  /** The backup manager (Backup, Restore). */
  public static readonly BACKUP_MANAGER = new AnyninesServiceType('backupmanager');

  /** Every instance, in declaration order. */
  public static get all(): readonly AnyninesServiceType[] {
    return enumMembers(AnyninesServiceType);
  }

  private constructor(
    /** The `spec.serviceType` value, e.g. `servicebroker`. */
    value: string,
  ) {
    super(value);
  }
}

/** TLS settings for the broker or backup manager endpoint. */
export interface AnyninesTls {
  /** CA bundle to trust. @default - system roots */
  readonly caBundleSecretRef?: SecretKeyRef;
  /** @default false */
  readonly insecureSkipVerify?: boolean;
  /** @default - the URL's host */
  readonly overrideServerName?: string;
}

export interface AnyninesProviderConfigProps {
  /** `metadata.name`, e.g. `postgresql-service-broker` (Klutch's `<type>-service-broker` / `<type>-backup-manager`). */
  readonly name: string;
  readonly serviceType: AnyninesServiceType;
  /** Endpoint URL (http or https). */
  readonly url: string;
  /** Secret key holding the username. */
  readonly username: SecretKeyRef;
  /** Secret key holding the password. */
  readonly password: SecretKeyRef;
  /** Health check path or URL. @default - none */
  readonly healthCheckEndpoint?: string;
  /** @default - none */
  readonly tls?: AnyninesTls;
}

/** A provider-anynines `ProviderConfig` (`dataservices.anynines.com/v1`, cluster-scoped). */
export class AnyninesProviderConfig extends Construct implements IProviderConfig {
  /** A provider-anynines ProviderConfig made elsewhere (emits nothing). */
  public static fromName(scope: Construct, id: string, name: string): IProviderConfig {
    return ProviderConfig.fromName(scope, id, name, { apiVersion: A9S_PROVIDER_CONFIG_API_VERSION });
  }

  public readonly apiObject: ApiObject;
  public readonly name: string;
  public readonly apiVersion = A9S_PROVIDER_CONFIG_API_VERSION;
  public readonly kind = 'ProviderConfig';
  public readonly serviceType: AnyninesServiceType;

  constructor(scope: Construct, id: string, props: AnyninesProviderConfigProps) {
    super(scope, id);
    const p = 'AnyninesProviderConfigProps';
    if (!props || typeof props !== 'object') fail(p, props, 'must be an object');
    this.name = checkDnsSubdomain(`${p}.name`, props.name);
    if (!(props.serviceType instanceof AnyninesServiceType)) fail(`${p}.serviceType`, props.serviceType, 'must be servicebroker or backupmanager');
    this.serviceType = props.serviceType;
    let url: URL;
    try {
      url = new URL(checkNonEmpty(`${p}.url`, props.url));
    } catch {
      fail(`${p}.url`, props.url, 'is not an absolute URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(`${p}.url`, props.url, 'must use http or https');
    const username = checkSecretKeyRef(`${p}.username`, props.username);
    const password = checkSecretKeyRef(`${p}.password`, props.password);
    if (props.healthCheckEndpoint !== undefined) checkNonEmpty(`${p}.healthCheckEndpoint`, props.healthCheckEndpoint);
    let tls: Record<string, unknown> | undefined;
    if (props.tls !== undefined) {
      const t = props.tls;
      if (t.insecureSkipVerify && t.caBundleSecretRef) fail(`${p}.tls.insecureSkipVerify`, true, 'contradicts tls.caBundleSecretRef; use one of them');
      if (url.protocol === 'http:') fail(`${p}.tls`, t, `has no effect on the plain-http url ${JSON.stringify(props.url)}`);
      tls = compact({
        caBundleSecretRef: t.caBundleSecretRef ? checkSecretKeyRef(`${p}.tls.caBundleSecretRef`, t.caBundleSecretRef) : undefined,
        insecureSkipVerify: t.insecureSkipVerify,
        overrideServerName: t.overrideServerName !== undefined ? checkNonEmpty(`${p}.tls.overrideServerName`, t.overrideServerName) : undefined,
      });
    }
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: this.apiVersion,
      kind: this.kind,
      metadata: { name: this.name },
      spec: compact({
        serviceType: this.serviceType.value,
        url: props.url,
        healthCheckEndpoint: props.healthCheckEndpoint,
        providerCredentials: { source: 'Secret', username: { secretRef: username }, password: { secretRef: password } },
        tls,
      }),
    });
  }
}
