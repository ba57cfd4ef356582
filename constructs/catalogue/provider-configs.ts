/**
 * Where the catalogue's Compositions get their ProviderConfigs. A `ControlPlaneCluster` hands its own
 * (`ControlPlaneCluster.addProviderConfig`), so the catalogue references what the cluster emits; a
 * catalogue on its own references ProviderConfigs made elsewhere under Klutch's names.
 */
import type { IProviderConfig } from '../crossplane/index.js';
import { type ApiStyle, controlPlaneKubernetesProviderConfig } from '../dataservice/index.js';

/** The ProviderConfigs the catalogue's Compositions reference, by the data service that uses them. */
export interface ICatalogueProviderConfigs {
  /** provider-anynines service broker of a data service (Klutch: `<service>-service-broker`). */
  serviceBroker(service: string): IProviderConfig;
  /**
   * provider-anynines backup manager of a data service (Klutch: `<service>-backup-manager`). The a9s
   * Backup and Restore Compositions pick it from `spec.serviceInstanceType` at run time, so its name
   * must be `<service>-backup-manager`.
   */
  backupManager(service: string): IProviderConfig;
  /** The control plane's provider-kubernetes ProviderConfig of the a8s `Object`s of an API style. */
  kubernetes(style: ApiStyle): IProviderConfig;
}

const A9S = 'dataservices.anynines.com/v1';
const imported = (name: string): IProviderConfig => Object.freeze({ name, apiVersion: A9S, kind: 'ProviderConfig' });

/** ProviderConfigs made elsewhere, under Klutch's names: what a catalogue outside a ControlPlaneCluster references. */
export const KLUTCH_PROVIDER_CONFIG_NAMES: ICatalogueProviderConfigs = Object.freeze({
  serviceBroker: (service: string) => imported(`${service}-service-broker`),
  backupManager: (service: string) => imported(`${service}-backup-manager`),
  kubernetes: (style: ApiStyle) => controlPlaneKubernetesProviderConfig(style),
});

/** Checks a `providerConfigs` prop. */
export function checkCatalogueProviderConfigs(prop: string, v: unknown): ICatalogueProviderConfigs {
  const x = v as Partial<ICatalogueProviderConfigs> | undefined;
  if (!x || typeof x !== 'object' || typeof x.serviceBroker !== 'function' || typeof x.backupManager !== 'function' || typeof x.kubernetes !== 'function') {
    throw new Error(`${prop}: ${String(v)} must be an ICatalogueProviderConfigs (serviceBroker(), backupManager(), kubernetes()), e.g. a ControlPlaneCluster`);
  }
  return x as ICatalogueProviderConfigs;
}
