/** CRD → APIServiceExport spec snapshot, and its source-spec hash. */
import { createHash } from 'node:crypto';
import type { Crd } from './catalog.js';
import type { APIServiceExportSpec } from '../../contract/api/api-service-export.js';
import type { PermissionClaim } from '../../contract/wire.js';

const BASE62 = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** sha224 → base62, as Klutch's `klutch.anynines.com/source-spec-hash`. */
export function base62Sha224(s: string): string {
  let n = BigInt('0x' + createHash('sha224').update(s).digest('hex'));
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out || '0';
}

/** Deterministic JSON (sorted keys) for hashing. */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v as object)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** Hash of the parts of a CRD spec an export is made from. */
export const crdSpecHash = (crd: Crd): string => base62Sha224(stableJson(crd.spec));

/**
 * The export spec for `crd`: only served versions (only the storage version when the CRD converts
 * with a webhook, which the consumer side cannot call), with schema, subresources and printer columns.
 */
export function exportSpecFromCrd(
  crd: Crd,
  opts: { informerScope: 'Namespaced' | 'Cluster'; permissionClaims?: PermissionClaim[]; isolation?: 'Prefixed' | 'Namespaced' | 'None' },
): APIServiceExportSpec {
  const webhook = crd.spec.conversion?.strategy === 'Webhook';
  const versions = crd.spec.versions
    .filter((v) => (webhook ? v.storage : v.served))
    .map((v) => {
      const out: Record<string, unknown> = { name: v.name, served: true, storage: v.storage };
      if (v.deprecated) out.deprecated = true;
      if (v.deprecationWarning) out.deprecationWarning = v.deprecationWarning;
      out.schema = { openAPIV3Schema: v.schema?.openAPIV3Schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
      if (v.subresources && Object.keys(v.subresources).length) out.subresources = v.subresources;
      if (v.additionalPrinterColumns?.length) out.additionalPrinterColumns = v.additionalPrinterColumns;
      return out;
    });
  if (versions.length && !versions.some((v) => v.storage)) versions[0].storage = true;
  const names = { ...crd.spec.names };
  const spec: APIServiceExportSpec = {
    group: crd.spec.group,
    names,
    scope: crd.spec.scope,
    // the CRD's own version objects, read loosely (catalog.ts), copied field by field above
    versions: versions as APIServiceExportSpec['versions'],
    informerScope: crd.spec.scope === 'Cluster' ? 'Cluster' : opts.informerScope,
  };
  if (opts.permissionClaims?.length) spec.permissionClaims = opts.permissionClaims;
  if (crd.spec.scope === 'Cluster') spec.clusterScopedIsolation = opts.isolation ?? 'Prefixed';
  return spec;
}
