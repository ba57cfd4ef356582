/**
 * The object metadata types and the kind helper every binding API kind is declared with (its schema,
 * CRD and constructors), shared by the files of contract/api/.
 */
import { obj, str, sortKeys, type CelRule, type JSONSchemaProps, type Schema, type TypeOf } from './_schema.js';

/** An owner reference (`metadata.ownerReferences[]`). */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** A managed-fields entry (`metadata.managedFields[]`). */
export interface ManagedFieldsEntry {
  apiVersion?: string;
  fieldsType?: string;
  fieldsV1?: object;
  manager?: string;
  operation?: string;
  subresource?: string;
  time?: Date;
}

/**
 * Object metadata, as read from and written to the API server: the same shape as client-node's
 * `V1ObjectMeta` (assignable both ways), declared here so that the construct library's types do
 * not need `@kubernetes/client-node` (an optional peer used by the runtime only).
 */
export interface ObjectMeta {
  annotations?: { [key: string]: string };
  creationTimestamp?: Date;
  deletionGracePeriodSeconds?: number;
  deletionTimestamp?: Date;
  finalizers?: Array<string>;
  generateName?: string;
  generation?: number;
  labels?: { [key: string]: string };
  managedFields?: Array<ManagedFieldsEntry>;
  name?: string;
  namespace?: string;
  ownerReferences?: Array<OwnerReference>;
  resourceVersion?: string;
  selfLink?: string;
  uid?: string;
}

/** A column of `kubectl get` output (`additionalPrinterColumns`). */
export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  readonly jsonPath: string;
  readonly description?: string;
  readonly format?: string;
  readonly priority?: number;
}

/** Everything needed to render one CustomResourceDefinition with a single version. */
export interface KindOptions<G extends string, V extends string, K extends string, SpecS, StatusS, SR extends boolean> {
  readonly group: G;
  readonly version: V;
  readonly kind: K;
  readonly plural: string;
  /** @default kind lower-cased */
  readonly singular?: string;
  /** @default `${kind}List` */
  readonly listKind?: string;
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
  readonly scope: 'Namespaced' | 'Cluster';
  readonly description: string;
  readonly spec: SpecS;
  /** Whether `spec` is listed in the root `required`. */
  readonly specRequired: SR;
  readonly status: StatusS;
  /** `x-kubernetes-validations` on the root (rules that see `self.metadata`). */
  readonly rootValidations?: readonly CelRule[];
  readonly printerColumns?: readonly PrinterColumn[];
}

/** A rendered CustomResourceDefinition (`apiextensions.k8s.io/v1`). */
export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec: {
    group: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames?: string[]; categories?: string[] };
    scope: 'Namespaced' | 'Cluster';
    versions: Array<{
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: JSONSchemaProps };
      subresources?: { status?: Record<string, never> };
      additionalPrinterColumns?: PrinterColumn[];
    }>;
  };
}

/** Metadata accepted by the object constructors. */
export interface NewObjectMeta {
  readonly namespace?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  readonly finalizers?: string[];
  readonly ownerReferences?: ObjectMeta['ownerReferences'];
}

/** The wire shape of one object of a kind. */
export type KubeObject<G extends string, V extends string, K extends string, Spec, Status, SR extends boolean> = {
  apiVersion: `${G}/${V}`;
  kind: K;
  metadata: ObjectMeta;
  status?: Status;
} & (SR extends true ? { spec: Spec } : { spec?: Spec });

/** One kind of the binding API: its identity, its schema, its CRD, and typed helpers. */
export class KindDef<G extends string, V extends string, K extends string, Spec, Status, SR extends boolean> {
  readonly group: G;
  readonly version: V;
  readonly kind: K;
  readonly apiVersion: `${G}/${V}`;
  readonly plural: string;
  readonly singular: string;
  readonly listKind: string;
  readonly scope: 'Namespaced' | 'Cluster';
  /** The CRD name, `<plural>.<group>`. */
  readonly crdName: string;
  private readonly opts: KindOptions<G, V, K, Schema<Spec>, Schema<Status>, SR>;

  constructor(opts: KindOptions<G, V, K, Schema<Spec>, Schema<Status>, SR>) {
    this.opts = opts;
    this.group = opts.group;
    this.version = opts.version;
    this.kind = opts.kind;
    this.apiVersion = `${opts.group}/${opts.version}`;
    this.plural = opts.plural;
    this.singular = opts.singular ?? opts.kind.toLowerCase();
    this.listKind = opts.listKind ?? `${opts.kind}List`;
    this.scope = opts.scope;
    this.crdName = `${opts.plural}.${opts.group}`;
  }

  /** The `openAPIV3Schema` of the kind's only version. */
  openAPIV3Schema(): JSONSchemaProps {
    const o = this.opts;
    const root = obj(
      {
        apiVersion: str({ description: 'Versioned schema of this representation of an object (apiVersion of the API server).' }),
        kind: str({ description: 'REST resource this object represents (kind of the API server).' }),
        metadata: obj({}),
        spec: o.spec,
        status: o.status,
      },
      { required: o.specRequired ? ['spec'] : [], description: o.description, validations: o.rootValidations },
    ).toJSON();
    // `metadata` is `type: object` without properties, as controller-gen writes it.
    root.properties!.metadata = { type: 'object' };
    return root;
  }

  /** The CustomResourceDefinition for this kind. */
  crd(): CustomResourceDefinition {
    const o = this.opts;
    const names: CustomResourceDefinition['spec']['names'] = {
      kind: o.kind,
      listKind: this.listKind,
      plural: o.plural,
      singular: this.singular,
    };
    if (o.shortNames?.length) names.shortNames = [...o.shortNames];
    if (o.categories?.length) names.categories = [...o.categories];
    const version: CustomResourceDefinition['spec']['versions'][number] = {
      name: o.version,
      served: true,
      storage: true,
      schema: { openAPIV3Schema: this.openAPIV3Schema() },
      subresources: { status: {} },
    };
    if (o.printerColumns?.length) version.additionalPrinterColumns = o.printerColumns.map((c) => ({ ...c }));
    return sortKeys({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: this.crdName },
      spec: { group: o.group, names, scope: o.scope, versions: [version] },
    }) as CustomResourceDefinition;
  }

  /** Builds an object of this kind (plain JSON, ready for the API server or a cdk8s `ApiObject`). */
  make(name: string, spec: Spec, meta: NewObjectMeta = {}): KubeObject<G, V, K, Spec, Status, SR> {
    if (typeof name !== 'string' || name.length === 0) {
      throw new Error(`${this.kind}: metadata.name must be a non-empty string, got ${JSON.stringify(name)}`);
    }
    const metadata: ObjectMeta = { name };
    if (this.scope === 'Namespaced' && meta.namespace !== undefined) metadata.namespace = meta.namespace;
    if (meta.labels) metadata.labels = { ...meta.labels };
    if (meta.annotations) metadata.annotations = { ...meta.annotations };
    if (meta.finalizers) metadata.finalizers = [...meta.finalizers];
    if (meta.ownerReferences) metadata.ownerReferences = meta.ownerReferences.map((r) => ({ ...r }));
    return { apiVersion: this.apiVersion, kind: this.kind, metadata, spec: structuredClone(spec) } as KubeObject<G, V, K, Spec, Status, SR>;
  }

  /** True when `o` has this kind's apiVersion and kind. */
  is(o: unknown): o is KubeObject<G, V, K, Spec, Status, SR> {
    return !!o && typeof o === 'object' && (o as { apiVersion?: unknown }).apiVersion === this.apiVersion && (o as { kind?: unknown }).kind === this.kind;
  }
}

/** Defines a kind; the TypeScript types are inferred from the `spec` and `status` schemas. */
export function defineKind<
  const G extends string,
  const V extends string,
  const K extends string,
  SpecS extends Schema<unknown>,
  StatusS extends Schema<unknown>,
  const SR extends boolean,
>(opts: KindOptions<G, V, K, SpecS, StatusS, SR>): KindDef<G, V, K, TypeOf<SpecS>, TypeOf<StatusS>, SR> {
  return new KindDef(opts as unknown as KindOptions<G, V, K, Schema<TypeOf<SpecS>>, Schema<TypeOf<StatusS>>, SR>);
}

/** The object type of a kind definition: `type APIServiceExport = ObjectOf<typeof apiServiceExportKind>`. */
export type ObjectOf<D> = D extends KindDef<infer G, infer V, infer K, infer Spec, infer Status, infer SR> ? KubeObject<G, V, K, Spec, Status, SR> : never;
