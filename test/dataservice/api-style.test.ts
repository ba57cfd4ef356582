/**
 * One DataService, two API styles: ApiStyle.CLAIMS (a v1 XRD with claims, today's output) and
 * ApiStyle.NAMESPACED_XR (a v2 XRD, scope Namespaced, no claims) rendered from the same plans,
 * parameters and backends — XRD, CEL rules on spec.crossplane.*, Compositions of namespaced
 * resources, the composed credentials Secret, export templates, the package, validate and graph.
 */
import { describe, expect, it } from '@jest/globals';
import { App, Chart } from 'cdk8s';
import { Catalogue } from '../../constructs/catalogue/index.js';
import { CompositeDeletePolicy, CompositeResourceDefinition, CrossplaneVersion, XrdScope } from '../../constructs/crossplane/index.js';
import {
  A8sBackend,
  ApiStyle,
  apiStyleNamed,
  DataService,
  OperatorProfile,
  Plan,
  PlanTopology,
  type DataServiceProps,
} from '../../constructs/dataservice/index.js';
import { CatalogueInstall, ControlPlaneCluster, renderTopology, topologyGraphOfApp } from '../../constructs/topology/index.js';
import { deriveXrCrd, SchemaValidator, validateDocuments, type CompositeResourceDefinitionLike } from '../../constructs/validate/index.js';
import { selects } from '../../runtime/konnector/selector.js';
import { Catalog, type Crd, type ExportTemplate } from '../../runtime/backend/catalog.js';
import { resourcesPage } from '../../runtime/backend/html.js';
import type { KubeClient } from '../../runtime/core/client.js';
import { ObjectStore } from '../../runtime/core/object-cache.js';
import { defaultRegistry } from '../../constructs/validate/index.js';
import { parse } from 'yaml';
import { render } from './_render.js';

/** The a8s PostgreSQL layout on a made-up Widget kind. */
const WIDGET = OperatorProfile.A8S_POSTGRESQL.with({
  name: 'widget',
  apiVersion: 'widgets.example.com/v1',
  kind: 'Widget',
  spec: undefined,
  version: undefined,
  fieldPaths: {},
  statusFields: {},
});

type Obj = Record<string, any>;

const small = { name: 'small', cpu: '1', memory: '1Gi', storage: '5Gi' };
const big = { name: 'big', cpu: '4', memory: '8Gi', storage: '50Gi' };

function props(extra: Partial<DataServiceProps> = {}): DataServiceProps {
  return {
    group: 'db.example.com',
    kind: 'XWidgetDb',
    claimKind: 'WidgetDb',
    plans: [
      new Plan({ name: 'single-small', topology: PlanTopology.SINGLE, size: small }),
      new Plan({ name: 'single-big', topology: PlanTopology.SINGLE, size: big }),
      new Plan({ name: 'replica-big', topology: PlanTopology.REPLICA, size: big }),
    ],
    services: [{ name: 'widget14' }, { name: 'widget15', plans: ['single-big', 'replica-big'] }],
    parameters: [
      { name: 'maxConnections', type: 'integer', minimum: 1 },
      { name: 'k8sOnly', type: 'string', backends: ['k8s'] },
    ],
    backends: [
      new A8sBackend({ name: 'k8s', profile: WIDGET.with({ version: { prefix: 'widget' } }) }),
      new A8sBackend({ name: 'k8s-small', services: ['widget14'], plans: ['single-small'], profile: WIDGET }),
    ],
    ...extra,
  };
}

function synth(extra: Partial<DataServiceProps> = {}) {
  const chart = new Chart(new App(), 'cp');
  const ds = new DataService(chart, 'widget', props(extra));
  const objects = chart.toJson() as Obj[];
  return { ds, objects, of: (kind: string) => objects.filter((o) => o.kind === kind) };
}

const xrValidator = (xrd: CompositeResourceDefinitionLike) => {
  const crd = deriveXrCrd(xrd, { crossplane: '2' });
  return new SchemaValidator(crd.spec.versions[0].schema!.openAPIV3Schema!);
};
const xr = (kind: string, spec: Obj, apiVersion = 'db.example.com/v1'): Obj => ({ apiVersion, kind, metadata: { name: 'w1', namespace: 'team-a' }, spec });

describe('ApiStyle', () => {
  it('is an enum-like class: CLAIMS (default) and NAMESPACED_XR', () => {
    expect(ApiStyle.all).toEqual([ApiStyle.CLAIMS, ApiStyle.NAMESPACED_XR]);
    expect(ApiStyle.all.map((s) => s.value)).toEqual(['Claims', 'NamespacedXR']);
    expect(ApiStyle.NAMESPACED_XR.namespaced).toBe(true);
    expect(ApiStyle.CLAIMS.namespaced).toBe(false);
    expect(synth().ds.apiStyle).toBe(ApiStyle.CLAIMS);
  });

  it('reads the composition reference behind has(): spec.compositionRef for claims, spec.crossplane.compositionRef for namespaced XRs', () => {
    expect(ApiStyle.CLAIMS.compositionExpr('a')).toBe("(has(self.compositionRef) ? self.compositionRef.name : 'a')");
    expect(ApiStyle.NAMESPACED_XR.compositionExpr('a')).toBe(
      "(has(self.crossplane) && has(self.crossplane.compositionRef) ? self.crossplane.compositionRef.name : 'a')",
    );
  });
});

describe('DataService with ApiStyle.NAMESPACED_XR', () => {
  const claims = synth();
  const ns = synth({ apiStyle: ApiStyle.NAMESPACED_XR });
  const xrd = ns.of('CompositeResourceDefinition')[0];

  it('emits a v2 XRD: scope Namespaced, the bound kind as the XR kind, no claimNames, no delete policy', () => {
    expect(xrd.apiVersion).toBe('apiextensions.crossplane.io/v2');
    expect(xrd.metadata.name).toBe('widgetdbs.db.example.com');
    expect(xrd.spec.scope).toBe('Namespaced');
    expect(xrd.spec.names).toMatchObject({ kind: 'WidgetDb', plural: 'widgetdbs' });
    expect(xrd.spec.claimNames).toBeUndefined();
    expect(xrd.spec.defaultCompositeDeletePolicy).toBeUndefined();
    expect(xrd.spec.defaultCompositionRef).toEqual({ name: 'k8s' });
    expect(ns.ds.claimCrdName).toBe('widgetdbs.db.example.com');
    // The claims style is unchanged.
    const c = claims.of('CompositeResourceDefinition')[0];
    expect(c.apiVersion).toBe('apiextensions.crossplane.io/v1');
    expect(c.spec.scope).toBeUndefined();
    expect(c.spec.claimNames.kind).toBe('WidgetDb');
  });

  it('has the same schema and rules as the claims style, with self.compositionRef replaced by the has()-guarded self.crossplane.compositionRef', () => {
    const specOf = (o: Obj) => o.spec.versions[0].schema.openAPIV3Schema.properties.spec;
    const rules = JSON.stringify(specOf(xrd)['x-kubernetes-validations']);
    expect(rules).toContain('has(self.crossplane) && has(self.crossplane.compositionRef) ? self.crossplane.compositionRef.name');
    expect(rules.replace(/self\.crossplane\.compositionRef/g, '')).not.toContain('compositionRef');
    const claimSpec = JSON.stringify(specOf(claims.of('CompositeResourceDefinition')[0]));
    expect(JSON.stringify(specOf(xrd))).toBe(
      claimSpec
        .split('(has(self.compositionRef) ? self.compositionRef.name')
        .join('(has(self.crossplane) && has(self.crossplane.compositionRef) ? self.crossplane.compositionRef.name'),
    );
  });

  it('its rules decide on the XR as Crossplane 2 derives the CRD: no crossplane block = the default backend', () => {
    const v = xrValidator(xrd as CompositeResourceDefinitionLike);
    const ok = (spec: Obj, old?: Obj) => v.validate(xr('WidgetDb', spec), old && xr('WidgetDb', old)).map((e) => e.message);
    expect(ok({ service: 'widget14', plan: 'single-small', parameters: { k8sOnly: 'x' } })).toEqual([]);
    expect(ok({ service: 'widget14', plan: 'single-big', crossplane: { compositionRef: { name: 'k8s' } } })).toEqual([]);
    // k8s-small only offers single-small; k8sOnly is not accepted there.
    expect(ok({ service: 'widget14', plan: 'single-big', crossplane: { compositionRef: { name: 'k8s-small' } } }).join()).toContain('Unsupported plan');
    expect(
      ok({ service: 'widget14', plan: 'single-small', parameters: { k8sOnly: 'x' }, crossplane: { compositionRef: { name: 'k8s-small' } } }).join(),
    ).toContain('parameters.k8sOnly is not supported for k8s-small');
    // A claim-style compositionRef is not a field of a namespaced XR.
    expect(ok({ service: 'widget14', plan: 'single-small', compositionRef: { name: 'k8s' } })).not.toEqual([]);
    // Transition rules as before.
    expect(ok({ service: 'widget14', plan: 'single-small' }, { service: 'widget14', plan: 'single-big' }).join()).toContain('bigger to smaller');
    expect(ok({ service: 'widget15', plan: 'single-big' }, { service: 'widget14', plan: 'single-big' }).join()).toContain('immutable');
  });

  it('composes provider-kubernetes namespaced Objects with the ClusterProviderConfig, named and namespaced like the XR', () => {
    const comp = ns.of('Composition').find((c) => c.metadata.name === 'k8s')!;
    expect(comp.spec.compositeTypeRef).toEqual({ apiVersion: 'db.example.com/v1', kind: 'WidgetDb' });
    const [obj] = render(comp, xr('WidgetDb', { service: 'widget15', plan: 'replica-big', parameters: { maxConnections: 10 } }));
    expect(obj.apiVersion).toBe('kubernetes.m.crossplane.io/v1alpha1');
    expect(obj.spec.providerConfigRef).toEqual({ name: 'kubernetes-provider', kind: 'ClusterProviderConfig' });
    expect(obj.spec.forProvider.manifest).toMatchObject({
      apiVersion: 'widgets.example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w1', namespace: 'team-a' },
      spec: { version: 15, replicas: 3, volumeSize: '50Gi', parameters: { maxConnections: 10 } },
    });
    const input = comp.spec.pipeline[0].input.resources[0];
    expect(JSON.stringify(input.patches)).not.toContain('crossplane.io/claim');
    // Readiness as with claims.
    const claimComp = claims.of('Composition').find((c) => c.metadata.name === 'k8s')!;
    expect(input.readinessChecks).toEqual(claimComp.spec.pipeline[0].input.resources[0].readinessChecks);
    expect(claimComp.spec.pipeline[0].input.resources[0].base.apiVersion).toBe('kubernetes.crossplane.io/v1alpha1');
  });

  it('exports the namespaced XR CRD through the APIServiceExportTemplate', () => {
    const [t] = ns.of('APIServiceExportTemplate');
    expect(t.spec.APIServiceSelector).toEqual({ group: 'db.example.com', resource: 'widgetdbs', version: 'v1' });
  });

  it('fails at synth naming both props when namespaced XRs target Crossplane 1.20', () => {
    expect(() => synth({ apiStyle: ApiStyle.NAMESPACED_XR, crossplaneVersion: CrossplaneVersion.V1_20 })).toThrow(
      /DataServiceProps\.apiStyle: "NamespacedXR" needs Crossplane 2\.x, but DataServiceProps\.crossplaneVersion is 1\.20\.\d+/,
    );
    expect(() => synth({ crossplaneVersion: CrossplaneVersion.V1_20 })).not.toThrow();
    expect(() => synth({ apiStyle: 'NamespacedXR' as never })).toThrow(
      /DataServiceProps\.apiStyle: "NamespacedXR" must be one of ApiStyle\.CLAIMS, ApiStyle\.NAMESPACED_XR/,
    );
    expect(() => synth({ apiStyle: ApiStyle.NAMESPACED_XR, crossplaneVersion: '2.3.4' as never })).toThrow(
      /DataServiceProps\.crossplaneVersion: "2\.3\.4" must be a CrossplaneVersion/,
    );
  });

  it('rejects a delete policy (it only applies to claims)', () => {
    expect(() => synth({ apiStyle: ApiStyle.NAMESPACED_XR, deletePolicy: CompositeDeletePolicy.BACKGROUND })).toThrow(
      /DataServiceProps\.deletePolicy: "Background" only applies to claims, but DataServiceProps\.apiStyle is NamespacedXR/,
    );
  });

  it('clashes with a claims-style data service binding the same kind (one CRD postgresqlinstances.<group> each)', () => {
    const chart = new Chart(new App(), 'cp');
    new DataService(chart, 'a', props());
    const other = [new A8sBackend({ name: 'other', profile: WIDGET.with({ apiVersion: 'w.example.com/v1', kind: 'W' }) })];
    expect(() => new DataService(chart, 'b', props({ apiStyle: ApiStyle.NAMESPACED_XR, backends: other, parameters: [] }))).toThrow(
      /DataService "cp\/a" and DataService "cp\/b" both define kind "WidgetDb" in group "db\.example\.com"/,
    );
  });
});

describe('CompositeResourceDefinition scope (v2 XRDs)', () => {
  const base = { group: 'db.example.com', names: { kind: 'Thing', plural: 'things' }, versions: [{ name: 'v1', schema: { type: 'object' } }] };
  it('a scope makes a v2 XRD; only LegacyCluster offers claims and connection secret keys', () => {
    const chart = new Chart(new App(), 'c');
    const x = new CompositeResourceDefinition(chart, 'x', { ...base, scope: XrdScope.NAMESPACED });
    expect(x.apiObject.toJson()).toMatchObject({ apiVersion: 'apiextensions.crossplane.io/v2', spec: { scope: 'Namespaced' } });
    new CompositeResourceDefinition(chart, 'l', {
      ...base,
      names: { kind: 'L', plural: 'ls' },
      scope: XrdScope.LEGACY_CLUSTER,
      claimNames: { kind: 'LC', plural: 'lcs' },
    });
    expect(() => new CompositeResourceDefinition(chart, 'y', { ...base, scope: XrdScope.NAMESPACED, claimNames: { kind: 'C', plural: 'cs' } })).toThrow(
      /claimNames: "C" is not allowed with scope Namespaced/,
    );
    expect(() => new CompositeResourceDefinition(chart, 'z', { ...base, scope: XrdScope.CLUSTER, connectionSecretKeys: ['password'] })).toThrow(
      /connectionSecretKeys: \["password"\] is not allowed with scope Cluster/,
    );
    expect(() => x.addConnectionSecretKey('password')).toThrow(/not allowed with scope Namespaced/);
    expect(() => new CompositeResourceDefinition(chart, 'w', { ...base, scope: 'Namespaced' as never })).toThrow(/scope: "Namespaced" must be one of/);
  });

  it('a modern XR spec may declare the legacy names (e.g. writeConnectionSecretToRef); only spec.crossplane is reserved', () => {
    const chart = new Chart(new App(), 'c');
    const withSpec = (field: string) => ({
      type: 'object' as const,
      properties: { spec: { type: 'object', properties: { [field]: { type: 'object', properties: { name: { type: 'string' } } } } } },
    });
    const xrd = (id: string, field: string, scope?: XrdScope) =>
      new CompositeResourceDefinition(chart, id, {
        ...base,
        names: { kind: `K${id}`, plural: `k${id.toLowerCase()}s` },
        scope,
        versions: [{ name: 'v1', schema: withSpec(field) }],
      });
    for (const scope of [XrdScope.NAMESPACED, XrdScope.CLUSTER]) {
      expect(() => xrd(`w${scope.value}`, 'writeConnectionSecretToRef', scope)).not.toThrow();
      expect(() => xrd(`c${scope.value}`, 'crossplane', scope)).toThrow(/"crossplane" is a reserved field: Crossplane injects and owns spec\.crossplane/);
    }
    for (const scope of [XrdScope.LEGACY_CLUSTER, undefined])
      expect(() => xrd(`l${scope?.value ?? 'v1'}`, 'writeConnectionSecretToRef', scope)).toThrow(/"writeConnectionSecretToRef" is a reserved field/);
  });
});

describe('Catalogue with ApiStyle.NAMESPACED_XR', () => {
  const chart = new Chart(new App(), 'control-plane');
  const cat = new Catalogue(chart, 'catalogue', { apiStyle: ApiStyle.NAMESPACED_XR });
  const objects = chart.toJson() as Obj[];
  const byName = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name)!;

  it('every API is a v2 namespaced XRD named after the bound kind, with the same Compositions and export templates', () => {
    const xrds = objects.filter((o) => o.kind === 'CompositeResourceDefinition');
    expect(xrds.map((x) => x.metadata.name).sort()).toEqual([
      'backups.anynines.com',
      'keyvalueinstances.anynines.com',
      'logme2instances.anynines.com',
      'mariadbinstances.anynines.com',
      'messaginginstances.anynines.com',
      'mongodbinstances.anynines.com',
      'postgresqlinstances.anynines.com',
      'prometheusinstances.anynines.com',
      'restores.anynines.com',
      'searchinstances.anynines.com',
      'servicebindings.anynines.com',
    ]);
    for (const x of xrds) {
      expect(x.apiVersion).toBe('apiextensions.crossplane.io/v2');
      expect(x.spec.scope).toBe('Namespaced');
      expect(x.spec.claimNames).toBeUndefined();
    }
    const claims = new Chart(new App(), 'x');
    new Catalogue(claims, 'catalogue');
    const names = (os: Obj[], kind: string) =>
      os
        .filter((o) => o.kind === kind)
        .map((o) => o.metadata.name)
        .sort();
    expect(names(objects, 'Composition')).toEqual(names(claims.toJson() as Obj[], 'Composition'));
    expect(names(objects, 'APIServiceExportTemplate')).toEqual(names(claims.toJson() as Obj[], 'APIServiceExportTemplate'));
    expect(cat.apiStyle).toBe(ApiStyle.NAMESPACED_XR);
  });

  it('no composed resource reads the claim labels; every a8s Object is namespaced with the ClusterProviderConfig; a9s MRs lose the claim labels', () => {
    for (const c of objects.filter((o) => o.kind === 'Composition')) {
      expect(JSON.stringify(c)).not.toContain('crossplane.io/claim-');
      for (const r of c.spec.pipeline[0].input.resources) {
        if (r.base.kind === 'Object') {
          expect(r.base.apiVersion).toBe('kubernetes.m.crossplane.io/v1alpha1');
          expect(r.base.spec.providerConfigRef).toEqual({ name: 'kubernetes-provider', kind: 'ClusterProviderConfig' });
        }
      }
    }
  });

  it('a8s ServiceBinding composes the credentials Secret <binding>-creds from the a8s Secret; the export claims exactly it', () => {
    const comp = byName('Composition', 'a8s-servicebinding');
    const out = render(comp, {
      apiVersion: 'anynines.com/v1',
      kind: 'ServiceBinding',
      metadata: { name: 'app', namespace: 'team-a' },
      spec: { instanceRef: 'pg', serviceInstanceType: 'postgresql' },
    });
    expect(out).toHaveLength(2);
    expect(out[0].spec.forProvider.manifest).toMatchObject({
      kind: 'ServiceBinding',
      metadata: { name: 'app', namespace: 'team-a' },
      spec: { instance: { name: 'pg', namespace: 'team-a', kind: 'Postgresql' } },
    });
    const creds = out[1];
    expect(creds.spec.forProvider.manifest).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'connection.crossplane.io/v1alpha1',
      metadata: { name: 'app-creds', namespace: 'team-a' },
    });
    expect(creds.spec.references).toEqual([
      { patchesFrom: { apiVersion: 'v1', kind: 'Secret', name: 'app-service-binding', namespace: 'team-a', fieldPath: 'data' }, toFieldPath: 'data' },
    ]);
    const t = byName('APIServiceExportTemplate', 'servicebindings');
    const secret = (name: string, type: string) => ({ apiVersion: 'v1', kind: 'Secret', type, metadata: { name, namespace: 'team-a' } });
    const claimed = (o: Obj) => t.spec.permissionClaims.some((c: Obj) => selects(c.selector, o as never, 'ns'));
    expect(claimed(secret('app-creds', 'connection.crossplane.io/v1alpha1'))).toBe(true);
    // The a8s operator's own Secret stays on the control plane.
    expect(claimed(secret('app-service-binding', 'Opaque'))).toBe(false);
    expect(t.spec.permissionClaims).toHaveLength(1);
    // No XR connection details anywhere.
    expect(JSON.stringify(objects.filter((o) => o.kind === 'Composition'))).not.toMatch(/connectionDetails|writeConnectionSecretsToNamespace/);
  });

  it('a namespaced ServiceBinding may name its credentials Secret (spec.writeConnectionSecretToRef.name): composed under that name, validated, immutable', () => {
    const binding = (spec: Obj) => ({
      apiVersion: 'anynines.com/v1',
      kind: 'ServiceBinding',
      metadata: { name: 'app', namespace: 'team-a' },
      spec: { instanceRef: 'pg', serviceInstanceType: 'postgresql', ...spec },
    });
    const a8s = render(byName('Composition', 'a8s-servicebinding'), binding({ writeConnectionSecretToRef: { name: 'orders.db-creds' } }));
    expect(a8s[1].spec.forProvider.manifest.metadata).toEqual({ name: 'orders.db-creds', namespace: 'team-a' });
    // still copied from the a8s operator's Secret of the binding
    expect(a8s[1].spec.references[0].patchesFrom).toMatchObject({ name: 'app-service-binding', namespace: 'team-a' });
    const a9s = render(
      byName('Composition', 'a9s-servicebinding'),
      binding({ writeConnectionSecretToRef: { name: 'orders-creds' }, crossplane: { compositionRef: { name: 'a9s-servicebinding' } } }),
    );
    expect(a9s[0].spec.writeConnectionSecretToRef).toEqual({ name: 'orders-creds', namespace: 'team-a' });
    // the export's one permission claim covers every name the XRD accepts
    const t = byName('APIServiceExportTemplate', 'servicebindings');
    expect(t.spec.permissionClaims).toHaveLength(1);
    const claimed = (name: string) =>
      selects(
        t.spec.permissionClaims[0].selector,
        { apiVersion: 'v1', kind: 'Secret', type: 'connection.crossplane.io/v1alpha1', metadata: { name, namespace: 'team-a' } } as never,
        'ns',
      );
    const v = xrValidator(byName('CompositeResourceDefinition', 'servicebindings.anynines.com') as never);
    const errors = (spec: Obj, old?: Obj) => v.validate(binding(spec), old && binding(old)).map((e) => `${e.path}: ${e.message}`);
    for (const name of ['orders-creds', 'orders.db-creds', 'a-creds', `${'a'.repeat(247)}-creds`]) {
      expect({ name, errors: errors({ writeConnectionSecretToRef: { name } }) }).toEqual({ name, errors: [] });
      expect(claimed(name)).toBe(true);
    }
    for (const name of ['orders', 'Orders-creds', '-creds', 'orders-creds.', 'orders_creds', 'orders-creds-x', `${'a'.repeat(248)}-creds`]) {
      const e = errors({ writeConnectionSecretToRef: { name } });
      expect({ name, rejected: e.length > 0 && e.every((m) => m.startsWith('spec.writeConnectionSecretToRef.name: ')) }).toEqual({ name, rejected: true });
    }
    expect(errors({ writeConnectionSecretToRef: {} })).toEqual(['spec.writeConnectionSecretToRef.name: Required value']);
    // immutable: set, changed or removed after creation
    const immutable = ['spec: spec.writeConnectionSecretToRef.name is immutable'];
    expect(errors({ writeConnectionSecretToRef: { name: 'b-creds' } }, { writeConnectionSecretToRef: { name: 'a-creds' } })).toEqual(immutable);
    expect(errors({ writeConnectionSecretToRef: { name: 'b-creds' } }, {})).toEqual(immutable);
    expect(errors({}, { writeConnectionSecretToRef: { name: 'a-creds' } })).toEqual(immutable);
    expect(errors({ writeConnectionSecretToRef: { name: 'a-creds' } }, { writeConnectionSecretToRef: { name: 'a-creds' } })).toEqual([]);
    expect(errors({ policy: 'x' }, {})).toEqual([]);
    // claims have Crossplane's own writeConnectionSecretToRef: the claim XRD does not declare one
    const claimChart = new Chart(new App(), 'claims');
    new Catalogue(claimChart, 'catalogue', { operations: ['servicebinding'], services: ['postgresql'] });
    const claimXrd = (claimChart.toJson() as Obj[]).find((o) => o.kind === 'CompositeResourceDefinition' && o.spec.claimNames?.kind === 'ServiceBinding')!;
    expect(Object.keys(claimXrd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties)).not.toContain('writeConnectionSecretToRef');
  });

  it('passes klutch-kit validate (offline schemas and CEL for v2 XRDs and kubernetes.m Objects)', () => {
    const r = validateDocuments(objects.map((doc, index) => ({ file: 'catalogue.yaml', index, doc })));
    expect(r.issues).toEqual([]);
    expect(r.unknownKinds).toEqual([]);
    // And a namespaced PostgresqlInstance next to it: checked against the XR CRD derived from the v2 XRD.
    const pg = (name: string, spec: Obj) => ({ apiVersion: 'anynines.com/v1', kind: 'PostgresqlInstance', metadata: { name, namespace: 'team-a' }, spec });
    const docs = [
      ...objects,
      pg('good', { service: 'a9s-postgresql14', plan: 'postgresql-single-nano' }),
      pg('bad', { service: 'a9s-postgresql17', plan: 'postgresql-single-nano' }),
    ];
    const r2 = validateDocuments(docs.map((doc, index) => ({ file: 'all.yaml', index, doc })));
    expect(r2.issues.map((i) => i.object)).toEqual(['PostgresqlInstance/team-a/bad']);
    expect(r2.issues[0].message).toContain('Unsupported service used for postgresql');
  });

  it('the catalogue page lists the namespaced XR CRDs; its example names the backend in spec.crossplane.compositionRef and validates', async () => {
    const templates = objects.filter((o) => o.kind === 'APIServiceExportTemplate') as ExportTemplate[];
    const crds = objects.filter((o) => o.kind === 'CompositeResourceDefinition').map((x) => deriveXrCrd(x as never) as unknown as Crd);
    const c = new Catalog({} as KubeClient, 'Namespaced');
    c.cache = { synced: () => true, templates: ObjectStore.of(...templates), crds: ObjectStore.of(...crds) };
    const apis = await c.list();
    const pgApi = apis.find((a) => a.resource === 'postgresqlinstances')!;
    expect([pgApi.kind, pgApi.scope, pgApi.compositionRefField]).toEqual(['PostgresqlInstance', 'Namespaced', 'crossplane.compositionRef']);
    expect(pgApi.parameters!.map((p) => p.path)).not.toContain('crossplane.compositionRef.name');
    const reg = defaultRegistry();
    for (const crd of crds) reg.addCrd(crd as never, 'test');
    // (Restore is left out: its example, in either style, does not set the instanceRef that a8s-restore's rule requires.)
    for (const api of apis.filter((a) => a.resource !== 'restores')) {
      const example = parse(api.exampleClaim!);
      expect({ api: api.resource, errors: reg.validate(example).errors }).toEqual({ api: api.resource, errors: [] });
      expect(example.spec.compositionRef).toBeUndefined();
      expect(example.spec.crossplane.compositionRef.name).toBe(api.offering!.backends.find((b) => b.default)!.name);
    }
    expect(resourcesPage({ prettyName: 'p', user: 'u', sessionId: 's', csrf: 'c', apis })).toContain('choose one with spec.crossplane.compositionRef.name');
  });

  it('Catalogue: namespaced XRs with Crossplane 1.20 fail naming both props', () => {
    expect(() => new Catalogue(new Chart(new App(), 'c'), 'c', { apiStyle: ApiStyle.NAMESPACED_XR, crossplaneVersion: CrossplaneVersion.V1_20 })).toThrow(
      /CatalogueProps\.apiStyle: "NamespacedXR" needs Crossplane 2\.x, but CatalogueProps\.crossplaneVersion is 1\.20\.\d+/,
    );
  });
});

describe('ControlPlaneCluster with a namespaced catalogue', () => {
  const cp = (catalogueInstall?: CatalogueInstall, version?: CrossplaneVersion) => {
    const app = new App({ outdir: '/nonexistent' });
    new ControlPlaneCluster(app, 'CP', {
      host: 'bind.example.com',
      dex: { connectors: [{ type: 'mockCallback', id: 'mock', name: 'Mock', config: {} }] } as never,
      anynines: { baseDomain: 'a9s.example.com' },
      catalogue: { apiStyle: ApiStyle.NAMESPACED_XR },
      ...(catalogueInstall ? { catalogueInstall } : {}),
      ...(version ? { crossplane: { version } } : {}),
    } as never);
    return app;
  };

  it('emits the ClusterProviderConfig and provider-kubernetes access to Secrets; graph shows the namespaced APIs', () => {
    const app = cp();
    const [cluster] = renderTopology(app);
    const objs = cluster.files.map((f) => f.object as Obj);
    expect(objs.filter((o) => o.kind === 'ClusterProviderConfig').map((o) => [o.apiVersion, o.metadata.name])).toEqual([
      ['kubernetes.m.crossplane.io/v1alpha1', 'kubernetes-provider'],
    ]);
    const role = objs.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'klutch-provider-kubernetes-secrets')!;
    expect(role.rules).toEqual([{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }]);
    const g = topologyGraphOfApp(app);
    const apis = g.clusters[0].nodes.filter((n) => n.kind.toString() === 'api').map((n) => n.label[0]);
    expect(apis).toContain('PostgresqlInstance');
    expect(apis).toContain('ServiceBinding');
    expect(g.clusters[0].nodes.filter((n) => n.kind.toString() === 'api').every((n) => n.exported)).toBe(true);
  });

  it('the Configuration package requires Crossplane >= v2.0.0', () => {
    const [cluster] = renderTopology(cp(CatalogueInstall.configurationPackage({ package: 'registry.example.com/klutch/catalogue:v1' })));
    expect((cluster.packages![0].meta as Obj).spec.crossplane.version).toBe('>=v2.0.0');
    expect(
      cluster
        .packages![0].files.filter((f) => (f.object as Obj).kind === 'CompositeResourceDefinition')
        .every((f) => (f.object as Obj).apiVersion === 'apiextensions.crossplane.io/v2'),
    ).toBe(true);
  });

  it('a Crossplane 1.20 install with a namespaced catalogue fails naming both props', () => {
    expect(() => cp(undefined, CrossplaneVersion.V1_20)).toThrow(
      /CatalogueProps\.apiStyle: "NamespacedXR" needs Crossplane 2\.x, but CatalogueProps\.crossplaneVersion is 1\.20\.\d+/,
    );
  });
});

describe('apiStyleNamed: the styles by their configuration names', () => {
  it('maps claims and namespaced, and names the prop and the value for anything else', () => {
    expect(apiStyleNamed('--api-style', 'claims')).toBe(ApiStyle.CLAIMS);
    expect(apiStyleNamed('--api-style', 'namespaced')).toBe(ApiStyle.NAMESPACED_XR);
    for (const bad of ['Claims', 'NamespacedXR', 'toString', '', undefined, 1])
      expect(() => apiStyleNamed('--api-style', bad)).toThrow(
        `--api-style: ${JSON.stringify(bad) ?? 'undefined'} is not an API style; use claims or namespaced`,
      );
  });
});
