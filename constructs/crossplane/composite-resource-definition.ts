/**
 * `CompositeResourceDefinition`: a typed Crossplane XRD (v1 with claims, or v2 with namespaced composite
 * resources) — versions and their schemas, claim names, connection secret keys, policies — which registers
 * its claim API with the cluster it is created in and goes into an enclosing Configuration package.
 */
import { ClusterRegistry } from '../_cluster-registry.js';
import { ApiObject, Lazy } from 'cdk8s';
import { Construct } from 'constructs';
import { checkDnsLabel, checkDnsSubdomain, checkNonEmpty, compact, copyJson, fail, isPlainObject, show } from './_util.js';
import { EnumLike, enumMembers } from '../_enum-like.js';
import { ConfigurationPackageSource } from './configuration-package.js';

/**
 * An OpenAPI v3 schema object, as written in a CRD's `openAPIV3Schema` (may carry
 * `x-kubernetes-validations` CEL rules and other `x-kubernetes-*` extensions).
 */
export interface OpenApiSchema {
  readonly [key: string]: unknown;
}

/** What a Composition needs to target a composite resource type. */
export interface ICompositeType {
  /** `apiVersion` of the composite resource, e.g. `anynines.com/v1`. */
  readonly compositeApiVersion: string;
  /** `kind` of the composite resource, e.g. `XPostgresqlInstance`. */
  readonly compositeKind: string;
}

/** A composite resource type given by apiVersion and kind. */
export class CompositeType implements ICompositeType {
  /** Refers to a composite type defined elsewhere (not by a construct in this app). */
  public static of(apiVersion: string, kind: string): ICompositeType {
    if (typeof apiVersion !== 'string' || !/^[a-z0-9.-]+\/[a-z0-9]+$/.test(apiVersion)) {
      fail('CompositeType.apiVersion', apiVersion, 'must be "<group>/<version>"');
    }
    if (typeof kind !== 'string' || !/^[A-Z][A-Za-z0-9]*$/.test(kind)) {
      fail('CompositeType.kind', kind, 'must be a PascalCase kind');
    }
    return new CompositeType(apiVersion, kind);
  }
  private constructor(
    public readonly compositeApiVersion: string,
    public readonly compositeKind: string,
  ) {}
}

/** What happens to a claim's composite resource when the claim is deleted (enum-like: static instances). */
export class CompositeDeletePolicy extends EnumLike {
  /** Delete the XR in the background (Crossplane's default). */
  public static readonly BACKGROUND = new CompositeDeletePolicy('Background');
  /** Wait for the XR and its composed resources to be gone (what Klutch uses). */
  public static readonly FOREGROUND = new CompositeDeletePolicy('Foreground');

  /** Every instance, in declaration order. */
  public static get all(): readonly CompositeDeletePolicy[] {
    return enumMembers(CompositeDeletePolicy);
  }

  private constructor(
    /** The `spec.defaultCompositeDeletePolicy` value. */
    value: string,
  ) {
    super(value);
  }
}

/**
 * Scope of the composite resource of an `apiextensions.crossplane.io/v2` XRD (enum-like: static
 * instances). Setting a scope makes the XRD a v2 XRD (Crossplane 2.x only).
 */
export class XrdScope extends EnumLike {
  /** Namespaced composite resources, no claims (Crossplane 2.x's default). */
  public static readonly NAMESPACED = new XrdScope('Namespaced');
  /** Cluster-scoped composite resources, no claims. */
  public static readonly CLUSTER = new XrdScope('Cluster');
  /** Cluster-scoped composite resources that may offer claims (what a v1 XRD is on Crossplane 2.x). */
  public static readonly LEGACY_CLUSTER = new XrdScope('LegacyCluster');

  /** Every instance, in declaration order. */
  public static get all(): readonly XrdScope[] {
    return enumMembers(XrdScope);
  }

  private constructor(
    /** The `spec.scope` value. */
    value: string,
  ) {
    super(value);
  }
}

/** Whether new Composition revisions are picked up automatically (enum-like: static instances). */
export class CompositionUpdatePolicy extends EnumLike {
  public static readonly AUTOMATIC = new CompositionUpdatePolicy('Automatic');
  public static readonly MANUAL = new CompositionUpdatePolicy('Manual');

  /** Every instance, in declaration order. */
  public static get all(): readonly CompositionUpdatePolicy[] {
    return enumMembers(CompositionUpdatePolicy);
  }

  private constructor(
    /** The `spec.defaultCompositionUpdatePolicy` value. */
    value: string,
  ) {
    super(value);
  }
}

/** Type of an additional printer column (enum-like: static instances). */
export class PrinterColumnType extends EnumLike {
  public static readonly STRING = new PrinterColumnType('string');
  public static readonly INTEGER = new PrinterColumnType('integer');
  public static readonly NUMBER = new PrinterColumnType('number');
  public static readonly BOOLEAN = new PrinterColumnType('boolean');
  public static readonly DATE = new PrinterColumnType('date');

  /** Every instance, in declaration order. */
  public static get all(): readonly PrinterColumnType[] {
    return enumMembers(PrinterColumnType);
  }

  private constructor(
    /** The `additionalPrinterColumns[].type` value. */
    value: string,
  ) {
    super(value);
  }
}

/** An additional printer column (`kubectl get` output). */
export interface PrinterColumn {
  /** Column header. */
  readonly name: string;
  /** JSONPath into the object, e.g. `.spec.plan`. */
  readonly jsonPath: string;
  /** @default PrinterColumnType.STRING */
  readonly type?: PrinterColumnType;
  /** @default - none */
  readonly description?: string;
  /** @default - none */
  readonly format?: string;
  /** 0 shows the column in the standard view, higher only with `-o wide`. @default 0 */
  readonly priority?: number;
}

/** Names of the composite resource or of its claim. */
export interface XrdNames {
  /** PascalCase kind, e.g. `XPostgresqlInstance`. */
  readonly kind: string;
  /** Lowercase plural, e.g. `xpostgresqlinstances`. */
  readonly plural: string;
  /** @default - kind in lower case */
  readonly singular?: string;
  /** @default - `<kind>List` */
  readonly listKind?: string;
  /** @default - none */
  readonly shortNames?: string[];
  /** Categories such as `crossplane` or `klutch`. @default - none */
  readonly categories?: string[];
}

/** One version of the composite resource's API. */
export interface XrdVersion {
  /** Version name, e.g. `v1` or `v1alpha1`. */
  readonly name: string;
  /**
   * The OpenAPI v3 schema. Top level `type: object` with `spec` and/or `status` properties;
   * CEL rules (`x-kubernetes-validations`) are allowed anywhere.
   */
  readonly schema: OpenApiSchema;
  /** Whether the version is served by the API server. @default true */
  readonly served?: boolean;
  /**
   * Whether Compositions may target this version (exactly one version must be referenceable).
   * @default - true when it is the only version given to the constructor, otherwise false
   */
  readonly referenceable?: boolean;
  /** @default false */
  readonly deprecated?: boolean;
  /** At most 256 characters. @default - none */
  readonly deprecationWarning?: string;
  /** @default - none */
  readonly additionalPrinterColumns?: PrinterColumn[];
}

export interface CompositeResourceDefinitionProps {
  /** API group of the composite resource and of its claim, e.g. `anynines.com`. */
  readonly group: string;
  /** Names of the composite resource (XR). */
  readonly names: XrdNames;
  /**
   * Scope of the composite resource; when set the XRD is an `apiextensions.crossplane.io/v2` XRD
   * (Crossplane 2.x only). Only `LEGACY_CLUSTER` may offer claims or connection secret keys.
   * @default - none: an `apiextensions.crossplane.io/v1` XRD (valid on 1.20, LegacyCluster on 2.x)
   */
  readonly scope?: XrdScope;
  /** Names of the claim; omit for an XRD without claims. @default - no claims */
  readonly claimNames?: XrdNames;
  /** The API versions. Exactly one must be referenceable (and served). */
  readonly versions: XrdVersion[];
  /**
   * `metadata.name`. Crossplane requires `<names.plural>.<group>`; anything else throws.
   * @default `<names.plural>.<group>`
   */
  readonly name?: string;
  /** Name of the Composition used when a claim or XR names none. @default - none */
  readonly defaultCompositionName?: string;
  /** Name of the Composition every XR must use (immutable). @default - none */
  readonly enforcedCompositionName?: string;
  /** @default - Crossplane's default (Background) */
  readonly defaultCompositeDeletePolicy?: CompositeDeletePolicy;
  /** @default - Crossplane's default (Automatic) */
  readonly defaultCompositionUpdatePolicy?: CompositionUpdatePolicy;
  /** Keys allowed in the XR's connection secret. @default - all keys */
  readonly connectionSecretKeys?: string[];
  /** Labels on the XRD (copied onto the generated CRDs). @default - none */
  readonly labels?: Record<string, string>;
  /** Annotations on the XRD. @default - none */
  readonly annotations?: Record<string, string>;
}

/**
 * Fields Crossplane injects into (and owns in) the XR and claim `spec` of a v1 (LegacyCluster)
 * XRD, plus the modern `crossplane` block; declaring them in a schema is an error
 * (crossplane-runtime `pkg/xcrd/schemas.go`).
 */
export const RESERVED_SPEC_FIELDS: readonly string[] = [
  'compositionRef',
  'compositionSelector',
  'compositionRevisionRef',
  'compositionRevisionSelector',
  'compositionUpdatePolicy',
  'compositeDeletePolicy',
  'resourceRef',
  'resourceRefs',
  'claimRef',
  'writeConnectionSecretToRef',
  'publishConnectionDetailsTo',
  'environmentConfigRefs',
  'crossplane',
];

/**
 * Fields Crossplane 2 injects into the `spec` of a modern (Namespaced or Cluster scope) XR: only the
 * `crossplane` block. Fields of the legacy list such as `writeConnectionSecretToRef` are the XRD
 * author's there (Klutch v2's ServiceBinding declares one).
 */
export const RESERVED_MODERN_SPEC_FIELDS: readonly string[] = ['crossplane'];

/** Fields Crossplane owns in the XR and claim `status`. */
export const RESERVED_STATUS_FIELDS: readonly string[] = ['conditions', 'connectionDetails', 'claimConditionTypes', 'crossplane'];

const KIND = /^[A-Z][A-Za-z0-9]*$/;

interface NormalizedVersion {
  name: string;
  served: boolean;
  referenceable: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema: OpenApiSchema;
  printerColumns: PrinterColumn[];
}

/**
 * A Crossplane `CompositeResourceDefinition` (`apiextensions.crossplane.io/v1`), with optional claims.
 *
 * No `scope` is emitted, so the XRD is valid on Crossplane 1.20 and is a LegacyCluster XRD on 2.x.
 * Crossplane's own rules are checked at construction: name = `<plural>.<group>`, exactly one
 * referenceable and served version, claim names distinct from XR names, names of at most 63
 * characters, no reserved fields declared in the schema.
 */
export class CompositeResourceDefinition extends Construct implements ICompositeType {
  /** The emitted object. */
  public readonly apiObject: ApiObject;
  /** `metadata.name` (`<plural>.<group>`). */
  public readonly name: string;
  public readonly group: string;
  public readonly kind: string;
  public readonly plural: string;
  /** Claim kind, when the XRD offers claims. */
  public readonly claimKind?: string;
  /** Claim plural, when the XRD offers claims. */
  public readonly claimPlural?: string;
  /** The v2 scope, or undefined for a v1 XRD. */
  public readonly scope?: XrdScope;

  private readonly names: XrdNames;
  private readonly claimNames?: XrdNames;
  private readonly versionList: NormalizedVersion[] = [];
  private readonly connectionSecretKeyList: string[] = [];
  private defaultCompositionName?: string;
  private readonly enforcedCompositionName?: string;
  private readonly defaultCompositeDeletePolicy?: CompositeDeletePolicy;
  private readonly defaultCompositionUpdatePolicy?: CompositionUpdatePolicy;

  constructor(scope: Construct, id: string, props: CompositeResourceDefinitionProps) {
    super(scope, id);
    const p = 'CompositeResourceDefinitionProps';
    if (!props || typeof props !== 'object') fail(p, props, 'must be an object');
    this.group = checkDnsSubdomain(`${p}.group`, props.group);
    if (!props.group.includes('.')) fail(`${p}.group`, props.group, 'must contain at least one dot (e.g. "example.org"), like every CRD group');
    this.scope = CompositeResourceDefinition.checkedScope(props);
    this.names = normalizeNames(`${p}.names`, props.names);
    this.kind = this.names.kind;
    this.plural = this.names.plural;
    if (props.claimNames !== undefined) {
      this.claimNames = CompositeResourceDefinition.checkedClaimNames(props.claimNames, this.names);
      this.claimKind = this.claimNames.kind;
      this.claimPlural = this.claimNames.plural;
    }

    const expected = `${this.plural}.${this.group}`;
    if (props.name !== undefined && props.name !== expected) {
      fail(`${p}.name`, props.name, `must be "<names.plural>.<group>" = "${expected}"`);
    }
    this.name = checkDnsSubdomain(`${p}.name`, expected);
    this.addVersions(props.versions);

    if (props.defaultCompositionName !== undefined)
      this.defaultCompositionName = checkDnsSubdomain(`${p}.defaultCompositionName`, props.defaultCompositionName);
    if (props.enforcedCompositionName !== undefined)
      this.enforcedCompositionName = checkDnsSubdomain(`${p}.enforcedCompositionName`, props.enforcedCompositionName);
    const policies = this.checkedPolicies(props);
    this.defaultCompositeDeletePolicy = policies.deletePolicy;
    this.defaultCompositionUpdatePolicy = policies.updatePolicy;
    for (const k of props.connectionSecretKeys ?? []) this.addConnectionSecretKey(k);

    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: this.scope ? 'apiextensions.crossplane.io/v2' : 'apiextensions.crossplane.io/v1',
      kind: 'CompositeResourceDefinition',
      metadata: compact({ name: this.name, labels: props.labels, annotations: props.annotations }),
      spec: Lazy.any({ produce: () => this.renderSpec() }),
    });
    // A control plane offers the claim APIs of the XRDs created in it; a package source below it carries the object.
    const claimKind = this.claimKind ?? (this.scope === XrdScope.NAMESPACED ? this.kind : undefined);
    const claimPlural = this.claimPlural ?? (this.scope === XrdScope.NAMESPACED ? this.plural : undefined);
    if (claimKind !== undefined && claimPlural !== undefined) {
      ClusterRegistry.of(this).registerClaimApi({ group: this.group, version: this.referenceableVersion, kind: claimKind, plural: claimPlural });
    }
    ConfigurationPackageSource.enclosing(this)?.addObject(this.apiObject);
  }

  /** The v2 scope (undefined for a v1 XRD); only LegacyCluster XRDs may offer claims and connection details. */
  private static checkedScope(props: CompositeResourceDefinitionProps): XrdScope | undefined {
    const p = 'CompositeResourceDefinitionProps';
    if (props.scope !== undefined && !(props.scope instanceof XrdScope)) fail(`${p}.scope`, props.scope, `must be one of ${XrdScope.all.join(', ')}`);
    const scope = props.scope;
    const noClaims = scope !== undefined && scope !== XrdScope.LEGACY_CLUSTER;
    if (noClaims && props.claimNames !== undefined) {
      fail(
        `${p}.claimNames`,
        props.claimNames.kind,
        `is not allowed with scope ${scope!.value}: only LegacyCluster XRDs offer claims; remove claimNames or the scope`,
      );
    }
    if (noClaims && (props.connectionSecretKeys ?? []).length > 0) {
      fail(
        `${p}.connectionSecretKeys`,
        props.connectionSecretKeys,
        `is not allowed with scope ${scope!.value}: ${scope!.value} composite resources have no connection details; compose a Secret instead`,
      );
    }
    return scope;
  }

  /** Claim names, normalized, none of them equal to one of the composite resource's names. */
  private static checkedClaimNames(claimNames: XrdNames, xr: XrdNames): XrdNames {
    const p = 'CompositeResourceDefinitionProps';
    const c = normalizeNames(`${p}.claimNames`, claimNames);
    const xrNames = [xr.kind, xr.plural, xr.singular, xr.listKind];
    for (const [field, v] of [
      ['kind', c.kind],
      ['plural', c.plural],
      ['singular', c.singular],
      ['listKind', c.listKind],
    ] as const) {
      if (xrNames.includes(v)) fail(`${p}.claimNames.${field}`, v, 'must differ from the composite resource names (kind, plural, singular, listKind)');
    }
    return c;
  }

  /** The versions, exactly one of them referenceable. */
  private addVersions(versions: CompositeResourceDefinitionProps['versions']): void {
    const p = 'CompositeResourceDefinitionProps';
    if (!Array.isArray(versions) || versions.length === 0) {
      fail(`${p}.versions`, versions, 'must list at least one version');
    }
    const only = versions.length === 1;
    versions.forEach((v, i) => this.pushVersion(`${p}.versions[${i}]`, v, only));
    const refs = this.versionList.filter((v) => v.referenceable);
    if (refs.length !== 1) {
      fail(
        `${p}.versions`,
        versions.map((v) => `${v?.name}${v?.referenceable ? ' (referenceable)' : ''}`),
        `must have exactly one referenceable version, found ${refs.length}`,
      );
    }
  }

  /** The claim's composite delete policy (claims only) and the composition update policy. */
  private checkedPolicies(props: CompositeResourceDefinitionProps): { deletePolicy?: CompositeDeletePolicy; updatePolicy?: CompositionUpdatePolicy } {
    const p = 'CompositeResourceDefinitionProps';
    const out: { deletePolicy?: CompositeDeletePolicy; updatePolicy?: CompositionUpdatePolicy } = {};
    if (props.defaultCompositeDeletePolicy !== undefined) {
      if (!(props.defaultCompositeDeletePolicy instanceof CompositeDeletePolicy)) {
        fail(`${p}.defaultCompositeDeletePolicy`, props.defaultCompositeDeletePolicy, 'must be Background or Foreground');
      }
      if (!this.claimNames) fail(`${p}.defaultCompositeDeletePolicy`, props.defaultCompositeDeletePolicy, 'only applies to claims; set claimNames too');
      out.deletePolicy = props.defaultCompositeDeletePolicy;
    }
    if (props.defaultCompositionUpdatePolicy !== undefined) {
      if (!(props.defaultCompositionUpdatePolicy instanceof CompositionUpdatePolicy)) {
        fail(`${p}.defaultCompositionUpdatePolicy`, props.defaultCompositionUpdatePolicy, 'must be Automatic or Manual');
      }
      out.updatePolicy = props.defaultCompositionUpdatePolicy;
    }
    return out;
  }

  /** `apiVersion` of the composite resource: `<group>/<referenceable version>`. */
  public get compositeApiVersion(): string {
    return `${this.group}/${this.referenceableVersion}`;
  }

  /** Kind of the composite resource (for Composition `compositeTypeRef`). */
  public get compositeKind(): string {
    return this.kind;
  }

  /** `apiVersion` of claims (same group and version as the XR). */
  public get claimApiVersion(): string | undefined {
    return this.claimNames ? this.compositeApiVersion : undefined;
  }

  /** Name of the referenceable version. */
  public get referenceableVersion(): string {
    return this.versionList.find((v) => v.referenceable)!.name;
  }

  /** Names of all versions. */
  public get versionNames(): string[] {
    return this.versionList.map((v) => v.name);
  }

  /** A copy of the schema of a version. */
  public schemaOf(version: string): OpenApiSchema {
    const v = this.versionList.find((x) => x.name === version);
    if (!v) fail('CompositeResourceDefinition.schemaOf(version)', version, `is not a version of ${this.name} (${this.versionNames.join(', ')})`);
    return copyJson(v.schema);
  }

  /** Connection secret keys declared so far. */
  public get connectionSecretKeys(): string[] {
    return [...this.connectionSecretKeyList];
  }

  /** Adds a version; it may be referenceable only if no other version is. */
  public addVersion(version: XrdVersion): void {
    const prop = `CompositeResourceDefinition.addVersion(${show(version?.name)})`;
    if (version?.referenceable && this.versionList.some((v) => v.referenceable)) {
      fail(`${prop}.referenceable`, true, `conflicts with referenceable version "${this.referenceableVersion}"; exactly one version may be referenceable`);
    }
    this.pushVersion(prop, version, false);
  }

  /** Adds a printer column to a version (default: the referenceable one). */
  public addPrinterColumn(column: PrinterColumn, version?: string): void {
    const target = version ?? this.referenceableVersion;
    const v = this.versionList.find((x) => x.name === target);
    if (!v) fail('CompositeResourceDefinition.addPrinterColumn(version)', version, `is not a version of ${this.name}`);
    v.printerColumns.push(checkPrinterColumn(`CompositeResourceDefinition.addPrinterColumn(${show(column?.name)})`, column, v.printerColumns));
  }

  /** Allows a key in the XR's connection secret. */
  public addConnectionSecretKey(key: string): void {
    const prop = 'CompositeResourceDefinitionProps.connectionSecretKeys';
    if (this.scope !== undefined && this.scope !== XrdScope.LEGACY_CLUSTER)
      fail(prop, key, `is not allowed with scope ${this.scope.value}: compose a Secret instead`);
    if (typeof key !== 'string' || !/^[-._a-zA-Z0-9]+$/.test(key)) fail(prop, key, 'is not a valid Secret key ([-._a-zA-Z0-9]+)');
    if (this.connectionSecretKeyList.includes(key)) fail(prop, key, 'is listed twice');
    this.connectionSecretKeyList.push(key);
  }

  /** Sets (or replaces) the default Composition name. */
  public setDefaultComposition(name: string): void {
    this.defaultCompositionName = checkDnsSubdomain('CompositeResourceDefinition.setDefaultComposition(name)', name);
  }

  private pushVersion(prop: string, v: XrdVersion, onlyVersion: boolean): void {
    if (!isPlainObject(v)) fail(prop, v, 'must be an object');
    const name = v.name;
    if (typeof name !== 'string' || !/^v[0-9]+((alpha|beta)[0-9]+)?$/.test(name)) {
      fail(`${prop}.name`, name, 'is not a Kubernetes version name (v1, v1alpha1, v2beta3, ...)');
    }
    if (this.versionList.some((x) => x.name === name)) fail(`${prop}.name`, name, 'is declared twice');
    const served = v.served ?? true;
    const referenceable = v.referenceable ?? onlyVersion;
    if (referenceable && !served)
      fail(`${prop}.served`, v.served, `must be true: version "${name}" is referenceable, and the referenceable version must be served`);
    if (v.deprecationWarning !== undefined && (typeof v.deprecationWarning !== 'string' || v.deprecationWarning.length > 256)) {
      fail(`${prop}.deprecationWarning`, v.deprecationWarning, 'must be a string of at most 256 characters');
    }
    checkSchema(`${prop}.schema`, v.schema, this.scope !== undefined && this.scope !== XrdScope.LEGACY_CLUSTER);
    const printerColumns: PrinterColumn[] = [];
    (v.additionalPrinterColumns ?? []).forEach((c, i) => printerColumns.push(checkPrinterColumn(`${prop}.additionalPrinterColumns[${i}]`, c, printerColumns)));
    this.versionList.push({
      name,
      served,
      referenceable,
      deprecated: v.deprecated,
      deprecationWarning: v.deprecationWarning,
      schema: copyJson(v.schema),
      printerColumns,
    });
  }

  private renderSpec(): Record<string, unknown> {
    const names = (n: XrdNames) =>
      compact({
        kind: n.kind,
        plural: n.plural,
        singular: n.singular,
        listKind: n.listKind,
        shortNames: n.shortNames,
        categories: n.categories,
      });
    return compact({
      group: this.group,
      scope: this.scope?.value,
      names: names(this.names),
      claimNames: this.claimNames ? names(this.claimNames) : undefined,
      defaultCompositionRef: this.defaultCompositionName ? { name: this.defaultCompositionName } : undefined,
      enforcedCompositionRef: this.enforcedCompositionName ? { name: this.enforcedCompositionName } : undefined,
      defaultCompositeDeletePolicy: this.defaultCompositeDeletePolicy?.value,
      defaultCompositionUpdatePolicy: this.defaultCompositionUpdatePolicy?.value,
      connectionSecretKeys: [...this.connectionSecretKeyList],
      versions: this.versionList.map((v) =>
        compact({
          name: v.name,
          served: v.served,
          referenceable: v.referenceable,
          deprecated: v.deprecated,
          deprecationWarning: v.deprecationWarning,
          schema: { openAPIV3Schema: copyJson(v.schema) },
          additionalPrinterColumns: v.printerColumns.map((c) =>
            compact({
              name: c.name,
              type: (c.type ?? PrinterColumnType.STRING).value,
              jsonPath: c.jsonPath,
              description: c.description,
              format: c.format,
              priority: c.priority,
            }),
          ),
        }),
      ),
    });
  }
}

function normalizeNames(prop: string, n: XrdNames): XrdNames {
  if (!isPlainObject(n)) fail(prop, n, 'must be an object with kind and plural');
  if (typeof n.kind !== 'string' || !KIND.test(n.kind) || n.kind.length > 63) {
    fail(`${prop}.kind`, n.kind, 'must be a PascalCase kind of at most 63 characters (e.g. "XPostgresqlInstance")');
  }
  checkDnsLabel(`${prop}.plural`, n.plural);
  const singular = n.singular ?? n.kind.toLowerCase();
  checkDnsLabel(`${prop}.singular`, singular);
  if (singular === n.plural) fail(`${prop}.singular`, singular, `must differ from plural "${n.plural}"`);
  const listKind = n.listKind ?? `${n.kind}List`;
  if (!KIND.test(listKind)) fail(`${prop}.listKind`, listKind, 'must be a PascalCase kind');
  if (listKind === n.kind) fail(`${prop}.listKind`, listKind, 'must differ from kind');
  for (const s of n.shortNames ?? []) checkDnsLabel(`${prop}.shortNames`, s);
  for (const c of n.categories ?? []) checkDnsLabel(`${prop}.categories`, c);
  return compact({
    kind: n.kind,
    plural: n.plural,
    singular,
    listKind,
    shortNames: n.shortNames ? [...n.shortNames] : undefined,
    categories: n.categories ? [...n.categories] : undefined,
  });
}

function checkPrinterColumn(prop: string, c: PrinterColumn, existing: PrinterColumn[]): PrinterColumn {
  if (!isPlainObject(c)) fail(prop, c, 'must be an object');
  checkNonEmpty(`${prop}.name`, c.name);
  if (existing.some((e) => e.name === c.name)) fail(`${prop}.name`, c.name, 'is declared twice');
  if (typeof c.jsonPath !== 'string' || !c.jsonPath.startsWith('.'))
    fail(`${prop}.jsonPath`, c.jsonPath, 'must be a JSONPath starting with "." (e.g. ".spec.plan")');
  if (c.type !== undefined && !(c.type instanceof PrinterColumnType)) {
    fail(`${prop}.type`, c.type, `must be one of ${PrinterColumnType.all.join(', ')}`);
  }
  if (c.priority !== undefined && (!Number.isInteger(c.priority) || c.priority < 0)) fail(`${prop}.priority`, c.priority, 'must be an integer >= 0');
  return { ...c };
}

function checkSchema(prop: string, schema: OpenApiSchema, modern: boolean): void {
  if (!isPlainObject(schema)) fail(prop, schema, 'must be an OpenAPI v3 schema object');
  if (schema.type !== undefined && schema.type !== 'object') fail(`${prop}.type`, schema.type, 'must be "object" (or omitted)');
  const props = schema.properties;
  if (props !== undefined) {
    if (!isPlainObject(props)) fail(`${prop}.properties`, props, 'must be an object');
    for (const key of Object.keys(props)) {
      if (key !== 'spec' && key !== 'status') {
        fail(`${prop}.properties`, key, 'is not allowed at the top level: Crossplane only keeps "spec" and "status" (and injects apiVersion, kind, metadata)');
      }
    }
    for (const [section, reserved] of [
      ['spec', modern ? RESERVED_MODERN_SPEC_FIELDS : RESERVED_SPEC_FIELDS],
      ['status', RESERVED_STATUS_FIELDS],
    ] as const) {
      const s = props[section];
      if (s === undefined) continue;
      if (!isPlainObject(s) || (s.type !== undefined && s.type !== 'object'))
        fail(`${prop}.properties.${section}.type`, isPlainObject(s) ? s.type : s, 'must be "object" (or omitted)');
      const fields = isPlainObject(s.properties) ? Object.keys(s.properties) : [];
      for (const f of fields) {
        if (reserved.includes(f)) {
          fail(`${prop}.properties.${section}.properties`, f, `is a reserved field: Crossplane injects and owns ${section}.${f}; remove it from the schema`);
        }
      }
    }
  }
  checkCel(prop, schema);
}

/** Each `x-kubernetes-validations` entry must carry a non-empty `rule` string. */
function checkCel(prop: string, node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach((n, i) => checkCel(`${prop}[${i}]`, n));
    return;
  }
  if (!isPlainObject(node)) return;
  for (const [k, v] of Object.entries(node)) {
    if (k === 'x-kubernetes-validations') {
      if (!Array.isArray(v)) fail(`${prop}.${k}`, v, 'must be a list of {rule, message} entries');
      v.forEach((r, i) => {
        if (!isPlainObject(r) || typeof r.rule !== 'string' || r.rule.trim() === '')
          fail(`${prop}.${k}[${i}].rule`, isPlainObject(r) ? r.rule : r, 'must be a non-empty CEL expression');
      });
    } else if (k !== 'default' && k !== 'example' && k !== 'enum') {
      checkCel(`${prop}.${k}`, v);
    }
  }
}
