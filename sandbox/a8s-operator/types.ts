/**
 * The a8s API objects the sandbox's local a8s operator serves (CRDs vendored in imports/crds/a8s/, see
 * imports/crds/SOURCES.md) and the conventions of its output.
 */
import type { KubeObject, ResourceRef } from '../../runtime/core/client.js';

export const A8S_RESOURCES = {
  postgresqls: { group: 'postgresql.anynines.com', version: 'v1beta3', plural: 'postgresqls', kind: 'Postgresql', namespaced: true },
  serviceBindings: { group: 'servicebindings.anynines.com', version: 'v1beta3', plural: 'servicebindings', kind: 'ServiceBinding', namespaced: true },
  events: { group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true },
} satisfies Record<string, ResourceRef>;

/** The a8s CRD files (imports/crds/a8s/) the operator needs on the cluster. */
export const A8S_CRD_FILES = ['postgresqls.postgresql.anynines.com.yaml', 'servicebindings.servicebindings.anynines.com.yaml'] as const;

/** The a8s service-binding controller names the credentials Secret `<binding>-service-binding`. */
export const SERVICE_BINDING_SECRET_SUFFIX = '-service-binding';
/** The port of every a8s PostgreSQL service (the Secret carries none). */
export const POSTGRES_PORT = 5432;
/** The application database each local instance gets; every binding's role may connect to it and create in `public`. */
export const APP_DATABASE = 'a9s_apps_default_db';
export const FINALIZER = 'sandbox.klutch-kit.io/a8s-operator';
/** `clusterStatus` values of the a8s PostgreSQL operator. */
export const CLUSTER_STATUS = { running: 'Running', notRunning: 'NotRunning' } as const;
/** The field manager / event source of the operator. */
export const OPERATOR_NAME = 'klutch-kit-sandbox-a8s-operator';

export interface PostgresqlSpec {
  version?: number;
  replicas?: number;
  volumeSize?: string | number;
  expose?: string;
  enableReadOnlyService?: boolean;
  readOnlyTargetNodes?: string;
  extensions?: string[];
  parameters?: Record<string, string | number | undefined>;
  resources?: { limits?: Record<string, string | number>; requests?: Record<string, string | number>; claims?: unknown[] };
  schedulingConstraints?: Record<string, unknown>;
}

export type Postgresql = KubeObject & {
  spec?: PostgresqlSpec;
  status?: { clusterStatus?: string; readyReplicas?: number; error?: string };
};

export type A8sServiceBinding = KubeObject & {
  spec?: { instance?: { apiVersion?: string; kind?: string; name?: string; namespace?: string } };
  status?: { implemented?: boolean; secret?: { name: string; namespace?: string }; error?: string };
};

export const secretNameOf = (bindingName: string): string => `${bindingName}${SERVICE_BINDING_SECRET_SUFFIX}`;
