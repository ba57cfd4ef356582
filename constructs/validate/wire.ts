/**
 * Validation of the binding protocol's JSON wire documents (BindingProvider from `GET /export`,
 * BindingResponse handed to the kubectl-bind callback, and the APIServiceExportRequestResponse
 * entries in it) against their schemas in contract/api/wire.ts.
 */
import {
  apiServiceExportRequestResponseSchema,
  bindingProviderSchema,
  bindingResponseSchema,
  type APIServiceExportRequestResponse,
  type BindingProvider,
  type BindingResponse,
} from '../../contract/api/wire.js';
import { SchemaValidator, type FieldError } from './schema-validator.js';

const schemas = {
  BindingProvider: bindingProviderSchema,
  BindingResponse: bindingResponseSchema,
  APIServiceExportRequestResponse: apiServiceExportRequestResponseSchema,
} as const;

export type WireKind = keyof typeof schemas;

/** The object type `parseWire` returns for each wire kind. */
export interface WireTypes {
  BindingProvider: BindingProvider;
  BindingResponse: BindingResponse;
  APIServiceExportRequestResponse: APIServiceExportRequestResponse;
}

const validators = new Map<WireKind, SchemaValidator>();

/** Field errors of a wire document (empty when valid). */
export function validateWire(kind: WireKind, value: unknown): FieldError[] {
  let v = validators.get(kind);
  if (!v) {
    v = new SchemaValidator(schemas[kind].toJSON());
    validators.set(kind, v);
  }
  return v.validate(value);
}

/**
 * Parses and validates a wire document (JSON text or an already parsed value); throws an error
 * naming every bad field and the value received. The requests of a BindingResponse are checked
 * as APIServiceExportRequestResponses too.
 */
export function parseWire<K extends WireKind>(kind: K, input: string | unknown): WireTypes[K] {
  let value: unknown = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch (e) {
      throw new Error(`${kind}: not valid JSON (${(e as Error).message}); received ${JSON.stringify(input.slice(0, 80))}`, { cause: e });
    }
  }
  const errors = validateWire(kind, value).map((e) => `${e.path || '(document)'}: ${e.message}`);
  if (kind === 'BindingResponse' && errors.length === 0) {
    ((value as BindingResponse).requests ?? []).forEach((r, i) => {
      for (const e of validateWire('APIServiceExportRequestResponse', r)) errors.push(`requests[${i}]${e.path ? '.' + e.path : ''}: ${e.message}`);
    });
  }
  if (errors.length) throw new Error(`${kind} is invalid:\n  ${errors.join('\n  ')}`);
  return value as WireTypes[K];
}
