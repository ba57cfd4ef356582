/**
 * A registry of schemas by apiVersion + kind, filled from CRDs (bundled, from the binding API, or
 * found next to the objects) and from Crossplane XRDs (derived XR and claim CRDs).
 */
import type { JSONSchemaProps } from '../../contract/api/_schema.js';
import { SchemaValidator, type FieldError } from './schema-validator.js';
import { deriveClaimCrd, deriveXrCrd, type CompositeResourceDefinitionLike, type CrossplaneTarget } from './xcrd.js';

/** The CRD fields the registry reads. */
export interface CrdLike {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string };
  spec: {
    group: string;
    names: { kind: string; plural: string };
    scope: string;
    versions: Array<{ name: string; served?: boolean; schema?: { openAPIV3Schema?: JSONSchemaProps } }>;
  };
}

/** One registered kind/version. */
export interface RegisteredSchema {
  readonly apiVersion: string;
  readonly kind: string;
  readonly plural: string;
  readonly scope: string;
  /** Where the schema came from (file, `bundle:<file>`, `binding-api`, `xrd:<file>`). */
  readonly source: string;
  /** The Crossplane release the schema belongs to, for schemas that differ between releases. */
  readonly target?: CrossplaneTarget;
  readonly validator: SchemaValidator;
}

/** Result of validating one object. */
export interface ObjectValidation {
  /** The schemas used (empty when the kind is unknown). */
  readonly schemas: readonly RegisteredSchema[];
  readonly errors: readonly FieldError[];
}

const key = (apiVersion: string, kind: string) => `${apiVersion}\u0000${kind}`;

export class SchemaRegistry {
  private readonly entries = new Map<string, RegisteredSchema[]>();

  /** Registers every served version of a CRD. With `replace`, earlier entries of the same kinds are dropped. */
  addCrd(crd: CrdLike, source: string, opts: { target?: CrossplaneTarget; replace?: boolean } = {}): RegisteredSchema[] {
    const where = `CustomResourceDefinition ${JSON.stringify(crd?.metadata?.name ?? '')} (${source})`;
    if (!crd?.spec?.group || !crd.spec.names?.kind || !Array.isArray(crd.spec.versions)) {
      throw new Error(`${where}: spec.group, spec.names.kind and spec.versions are required`);
    }
    const added: RegisteredSchema[] = [];
    for (const v of crd.spec.versions) {
      if (v.served === false) continue;
      const schema = v.schema?.openAPIV3Schema;
      if (!schema) continue;
      const entry: RegisteredSchema = {
        apiVersion: `${crd.spec.group}/${v.name}`,
        kind: crd.spec.names.kind,
        plural: crd.spec.names.plural,
        scope: crd.spec.scope,
        source,
        target: opts.target,
        validator: new SchemaValidator(schema),
      };
      const k = key(entry.apiVersion, entry.kind);
      // One entry per target: a later CRD for the same kind and target replaces the earlier one.
      const kept = opts.replace ? [] : (this.entries.get(k) ?? []).filter((e) => e.target !== entry.target);
      kept.push(entry);
      this.entries.set(k, kept);
      added.push(entry);
    }
    return added;
  }

  /** Registers the XR CRD and (with claimNames) the claim CRD derived from an XRD, for each target. */
  addXrd(xrd: CompositeResourceDefinitionLike, source: string, targets: readonly CrossplaneTarget[] = ['2']): RegisteredSchema[] {
    const added: RegisteredSchema[] = [];
    const multi = targets.length > 1;
    for (const t of targets) {
      // v2 XRDs do not exist on Crossplane 1.20.
      if (t === '1.20' && xrd.apiVersion === 'apiextensions.crossplane.io/v2') continue;
      const target = multi ? t : undefined;
      added.push(...this.addCrd(deriveXrCrd(xrd, { crossplane: t }) as unknown as CrdLike, `xrd:${source}`, { target }));
      if (xrd.spec.claimNames) added.push(...this.addCrd(deriveClaimCrd(xrd, { crossplane: t }) as unknown as CrdLike, `xrd:${source}`, { target }));
    }
    return added;
  }

  /**
   * A registry with the same schemas whose later additions do not change this one. The compiled
   * validators are shared (they are immutable), so a copy costs no schema compilation.
   */
  copy(): SchemaRegistry {
    const c = new SchemaRegistry();
    for (const [k, list] of this.entries) c.entries.set(k, [...list]);
    return c;
  }

  /** The schemas of a kind (several when it differs between Crossplane releases). */
  lookup(apiVersion: string, kind: string): RegisteredSchema[] {
    return this.entries.get(key(apiVersion, kind)) ?? [];
  }

  /** The kinds known, as `apiVersion kind`. */
  kinds(): string[] {
    return [...this.entries.values()].map((l) => `${l[0].apiVersion} ${l[0].kind}`).sort();
  }

  /**
   * Validates one object (with `old`, as an update; with `partial`, as a template, see
   * SchemaValidator.validate). When a kind has schemas for several Crossplane
   * releases, errors found for only some of them name those releases.
   */
  validate(obj: unknown, old?: unknown, opts: { partial?: boolean } = {}): ObjectValidation {
    const o = obj as { apiVersion?: unknown; kind?: unknown };
    if (typeof o?.apiVersion !== 'string' || typeof o?.kind !== 'string') {
      return {
        schemas: [],
        errors: [{ path: typeof o?.apiVersion !== 'string' ? 'apiVersion' : 'kind', message: 'Required value: apiVersion and kind must be strings' }],
      };
    }
    const schemas = this.lookup(o.apiVersion, o.kind);
    if (schemas.length <= 1) return { schemas, errors: schemas[0]?.validator.validate(obj, old, opts) ?? [] };
    const per = schemas.map((s) => ({ s, errs: s.validator.validate(obj, old, opts) }));
    const count = new Map<string, { e: FieldError; targets: string[] }>();
    for (const { s, errs } of per) {
      for (const e of errs) {
        const k = `${e.path}\u0000${e.message}`;
        const c = count.get(k) ?? { e, targets: [] };
        c.targets.push(s.target ?? s.source);
        count.set(k, c);
      }
    }
    const errors: FieldError[] = [];
    for (const { e, targets } of count.values()) {
      errors.push(targets.length === schemas.length ? e : { ...e, message: `${e.message} (Crossplane ${targets.join(', ')} only)` });
    }
    return { schemas, errors };
  }
}
