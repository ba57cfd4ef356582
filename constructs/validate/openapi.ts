/**
 * Converts a Kubernetes structural OpenAPI v3 schema (a CRD version's `openAPIV3Schema`) into a
 * JSON Schema (draft-07) that ajv validates the way the API server does with strict field
 * validation:
 *
 * - `nullable: true` admits `null`;
 * - `x-kubernetes-int-or-string` admits integers and strings (a `pattern` applies to strings only);
 * - objects with `properties` reject unknown fields unless `x-kubernetes-preserve-unknown-fields`;
 *   objects with neither `properties` nor `additionalProperties` admit nothing unless preserving
 *   (the API server would prune those fields; `kubectl --validate=strict` reports them);
 * - `x-kubernetes-embedded-resource` admits `apiVersion`, `kind` and `metadata`;
 * - OpenAPI v3.0 boolean `exclusiveMinimum`/`exclusiveMaximum` become draft-07 numbers;
 * - `default` is kept (ajv `useDefaults` applies it like the API server's defaulting);
 * - `x-kubernetes-validations` (CEL) and list-type checks are left to `cel.ts` / `schema-validator.ts`.
 */
import type { JSONSchemaProps } from '../../contract/api/_schema.js';

export type AjvSchema = Record<string, unknown>;

/** Keys copied verbatim (value validations ajv understands). */
const PASSTHROUGH = [
  'type',
  'format',
  'enum',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'default',
] as const;

/** DNS-1123 subdomain: the API server's rule for custom resource names. */
export const DNS_SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

/**
 * The ObjectMeta shape checked for `metadata`. Custom resources (`customResource`) must be named
 * as DNS-1123 subdomains, as the API server requires; embedded resources may be of any kind, so
 * only path-segment rules apply to their names (e.g. `system:aggregate-to-view` is a valid
 * ClusterRole name).
 */
export function objectMetaSchema(nameOverrides?: JSONSchemaProps, customResource = false): AjvSchema {
  const stringMap = { type: 'object', additionalProperties: { type: 'string' } };
  const name: AjvSchema = customResource
    ? { type: 'string', minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN_PATTERN }
    : { type: 'string', minLength: 1, maxLength: 253, not: { pattern: '^\\.\\.?$|[/%]' } };
  if (nameOverrides?.maxLength !== undefined) name.maxLength = Math.min(253, nameOverrides.maxLength);
  if (nameOverrides?.pattern !== undefined) name.allOf = [{ pattern: nameOverrides.pattern }];
  return {
    type: 'object',
    properties: {
      name,
      generateName: { type: 'string' },
      namespace: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 },
      labels: {
        type: 'object',
        additionalProperties: { type: 'string', maxLength: 63, pattern: '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$' },
      },
      annotations: stringMap,
      finalizers: { type: 'array', items: { type: 'string' } },
      ownerReferences: {
        type: 'array',
        items: {
          type: 'object',
          required: ['apiVersion', 'kind', 'name', 'uid'],
          properties: {
            apiVersion: { type: 'string' },
            kind: { type: 'string' },
            name: { type: 'string' },
            uid: { type: 'string' },
            controller: { type: 'boolean' },
            blockOwnerDeletion: { type: 'boolean' },
          },
        },
      },
    },
    // uid, resourceVersion, managedFields, ... are server-populated: accepted as they are.
    additionalProperties: true,
  };
}

interface Ctx {
  /** Inside allOf/anyOf/oneOf/not: value validations only, no unknown-field rejection. */
  junctor: boolean;
}

/** Converts the root `openAPIV3Schema` of a CRD version. */
export function toAjvSchema(root: JSONSchemaProps): AjvSchema {
  const out = convert(root, { junctor: false });
  const props = (out.properties ?? {}) as Record<string, AjvSchema>;
  const metaProps = root.properties?.metadata?.properties;
  props.metadata = objectMetaSchema(metaProps?.name, true);
  out.properties = props;
  // apiVersion and kind are always allowed at the root.
  props.apiVersion ??= { type: 'string' };
  props.kind ??= { type: 'string' };
  return out;
}

function convert(s: JSONSchemaProps, ctx: Ctx): AjvSchema {
  const out: AjvSchema = {};
  for (const k of PASSTHROUGH) if (s[k] !== undefined) out[k] = structuredClone(s[k]);

  if (s['x-kubernetes-int-or-string']) {
    out.type = ['integer', 'string'];
  }
  if (s.exclusiveMinimum === true && typeof s.minimum === 'number') {
    out.exclusiveMinimum = s.minimum;
    delete out.minimum;
  }
  if (s.exclusiveMaximum === true && typeof s.maximum === 'number') {
    out.exclusiveMaximum = s.maximum;
    delete out.maximum;
  }
  if (s.nullable) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (Array.isArray(out.type)) out.type = [...(out.type as string[]), 'null'];
    if (Array.isArray(out.enum)) out.enum = [...(out.enum as unknown[]), null];
  }

  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  const isObject = s.type === 'object' || (!!s.properties && s.type === undefined);

  if (s.properties) {
    const props: Record<string, AjvSchema> = {};
    for (const [k, v] of Object.entries(s.properties)) props[k] = convert(v, ctx);
    out.properties = props;
  }
  if (s.required?.length) out.required = [...s.required];
  if (embedded) {
    const props = (out.properties ?? {}) as Record<string, AjvSchema>;
    props.apiVersion ??= { type: 'string' };
    props.kind ??= { type: 'string' };
    props.metadata = objectMetaSchema(s.properties?.metadata?.properties?.name);
    out.properties = props;
  }
  if (s.additionalProperties !== undefined) {
    out.additionalProperties = typeof s.additionalProperties === 'boolean' ? s.additionalProperties : convert(s.additionalProperties, ctx);
  } else if (isObject && !preserve && !ctx.junctor) {
    out.additionalProperties = false;
  }
  if (s.items) out.items = convert(s.items, ctx);

  // int-or-string schemas carry an anyOf of the two types: already expressed by `type` above.
  const jctx: Ctx = { junctor: true };
  if (s.allOf && !s['x-kubernetes-int-or-string']) out.allOf = s.allOf.map((x) => convert(x, jctx));
  if (s.anyOf && !s['x-kubernetes-int-or-string']) out.anyOf = s.anyOf.map((x) => convert(x, jctx));
  if (s.oneOf) out.oneOf = s.oneOf.map((x) => convert(x, jctx));
  if (s.not) out.not = convert(s.not, jctx);
  return out;
}
