/**
 * Test support for the catalogue: derives claim CRDs (Crossplane's derivation, shared
 * `constructs/validate`) from Klutch's reference XRDs and from ours, and validates claims (create and
 * update) against both with the shared validator (ajv schema + CEL with oldSelf).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, Chart } from 'cdk8s';
import { parse } from 'yaml';
import { Catalogue } from '../../constructs/catalogue/index.js';
import { ApiStyle } from '../../constructs/dataservice/index.js';
import {
  deriveClaimCrd,
  deriveXrCrd,
  SchemaValidator,
  type CompositeResourceDefinitionLike,
  type CrossplaneTarget,
  type FieldError,
} from '../../constructs/validate/index.js';

/** Klutch's XRDs, vendored with their origins in test/fixtures/klutch/SOURCES.md. */
export const KLUTCH_FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'klutch');

/** Klutch's XRD file of each claim kind. */
export const KLUTCH_XRD_FILES: Readonly<Record<string, string>> = {
  PostgresqlInstance: 'xp-common-postgresql_definition.yaml',
  KeyvalueInstance: 'xp-a9s-keyvalue-definition.yaml',
  Logme2Instance: 'xp-a9s-logme2-definition.yaml',
  MariadbInstance: 'xp-a9s-mariadb-definition.yaml',
  MessagingInstance: 'xp-a9s-messaging-definition.yaml',
  MongodbInstance: 'xp-a9s-mongodb-definition.yaml',
  PrometheusInstance: 'xp-a9s-prometheus-definition.yaml',
  SearchInstance: 'xp-a9s-search-definition.yaml',
  ServiceBinding: 'xp-common-servicebinding_definition.yaml',
  Backup: 'xp-common-backup_definition.yaml',
  Restore: 'xp-common-restore_definition.yaml',
};

/** Klutch's Crossplane v2 XRDs (branch migration-crossplane-v2), vendored with their origins in test/fixtures/klutch-v2/SOURCES.md. */
export const KLUTCH_V2_FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'klutch-v2');

/**
 * Klutch's XRD of a claim kind, as published. One normalisation: duplicate `enum` items (Klutch's
 * Restore lists "messaging" twice) are dropped — the API server accepts them and they change no
 * verdict, but ajv refuses such a schema.
 */
export function klutchXrd(claimKind: string): CompositeResourceDefinitionLike {
  return readXrd(join(KLUTCH_FIXTURES, KLUTCH_XRD_FILES[claimKind]));
}

/** Klutch's v2 XRD (namespaced XR, no claims) of a kind, same normalisation; the file names are those of the v1 fixtures. */
export function klutchV2Xrd(kind: string): CompositeResourceDefinitionLike {
  return readXrd(join(KLUTCH_V2_FIXTURES, KLUTCH_XRD_FILES[kind]));
}

function readXrd(file: string): CompositeResourceDefinitionLike {
  const xrd = parse(readFileSync(file, 'utf8')) as CompositeResourceDefinitionLike;
  const dedupe = (n: unknown): void => {
    if (Array.isArray(n)) n.forEach(dedupe);
    else if (n && typeof n === 'object') {
      const o = n as Record<string, unknown>;
      if (Array.isArray(o.enum)) o.enum = [...new Map(o.enum.map((v) => [JSON.stringify(v), v])).values()];
      Object.values(o).forEach(dedupe);
    }
  };
  dedupe(xrd);
  return xrd;
}

/** Our XRDs of the full catalogue, by the kind app clusters bind (claim kind, or the namespaced XR's kind). */
export function ourXrds(apiStyle: ApiStyle = ApiStyle.CLAIMS): Map<string, CompositeResourceDefinitionLike> {
  const app = new App();
  const chart = new Chart(app, 'catalogue');
  new Catalogue(chart, 'catalogue', { apiStyle });
  const out = new Map<string, CompositeResourceDefinitionLike>();
  for (const o of chart.toJson() as Array<Record<string, any>>) {
    if (o.kind === 'CompositeResourceDefinition') out.set((o.spec.claimNames ?? o.spec.names).kind, o as CompositeResourceDefinitionLike);
  }
  return out;
}

/** A validator of namespaced XRs of a v2 XRD (the XR CRD as Crossplane 2 derives it). */
export function xrValidator(xrd: CompositeResourceDefinitionLike): SchemaValidator {
  const crd = deriveXrCrd(xrd, { crossplane: '2' });
  const v = crd.spec.versions.find((x) => x.served !== false)!;
  return new SchemaValidator(v.schema!.openAPIV3Schema!);
}

/** A validator of claims of one XRD (its derived claim CRD, referenceable version). */
export function claimValidator(xrd: CompositeResourceDefinitionLike, target: CrossplaneTarget = '1.20'): SchemaValidator {
  const crd = deriveClaimCrd(xrd, { crossplane: target });
  const v = crd.spec.versions.find((x) => x.served !== false)!;
  return new SchemaValidator(v.schema!.openAPIV3Schema!);
}

/** A claim object. */
export function claim(kind: string, spec: Record<string, unknown>, name = 'c1'): Record<string, unknown> {
  return { apiVersion: 'anynines.com/v1', kind, metadata: { name, namespace: 'default' }, spec };
}

export type Verdict = { ok: boolean; errors: readonly FieldError[] };

export function verdict(v: SchemaValidator, obj: unknown, old?: unknown): Verdict {
  const errors = v.validate(obj, old);
  return { ok: errors.length === 0, errors };
}
