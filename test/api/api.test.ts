import { describe, expect, it } from '@jest/globals';
import {
  API_SERVICE_NAMESPACE_ANNOTATION,
  apiServiceBindingKind,
  apiServiceExportKind,
  apiServiceExportTemplateKind,
  BIND_API_VERSION,
  bindingKinds,
  bindingResponseKubeconfig,
  bindingResponseSchema,
  bindingProviderSchema,
  BOUND_ANNOTATION,
  clusterBindingKind,
  ConditionType,
  getCondition,
  IDENTITY_ANNOTATION,
  isConditionFalse,
  isConditionTrue,
  newBindingProvider,
  newBindingResponse,
  setCondition,
  SOURCE_SPEC_HASH_ANNOTATION,
  summarize,
  SYNCER_FINALIZER,
  type APIServiceBinding,
  type Condition,
  type PermissionClaim,
} from '../../contract/api/index.js';
import { SchemaValidator } from '../../constructs/validate/index.js';

describe('kind definitions', () => {
  it('name every kind like Klutch does', () => {
    expect(bindingKinds.map((k) => `${k.apiVersion} ${k.kind} ${k.crdName} ${k.scope}`)).toEqual([
      'klutch.anynines.com/v1alpha1 APIServiceExport apiserviceexports.klutch.anynines.com Namespaced',
      'klutch.anynines.com/v1alpha1 APIServiceExportRequest apiserviceexportrequests.klutch.anynines.com Namespaced',
      'klutch.anynines.com/v1alpha1 APIServiceBinding apiservicebindings.klutch.anynines.com Namespaced',
      'klutch.anynines.com/v1alpha1 APIServiceNamespace apiservicenamespaces.klutch.anynines.com Namespaced',
      'klutch.anynines.com/v1alpha1 ClusterBinding clusterbindings.klutch.anynines.com Namespaced',
      'klutch.anynines.com/v1alpha1 AppClusterBinding appclusterbindings.klutch.anynines.com Namespaced',
      'example-backend.klutch.anynines.com/v1alpha1 APIServiceExportTemplate apiserviceexporttemplates.example-backend.klutch.anynines.com Namespaced',
    ]);
    expect(apiServiceBindingKind.crd().spec.names).toEqual({
      categories: ['kube-bindings'],
      kind: 'APIServiceBinding',
      listKind: 'APIServiceBindingList',
      plural: 'apiservicebindings',
      shortNames: ['sb'],
      singular: 'apiservicebinding',
    });
    for (const k of bindingKinds) expect(k.crd().spec.versions[0].subresources).toEqual({ status: {} });
  });

  it('make() builds plain objects of the kind, and is() recognises them', () => {
    const claim: PermissionClaim = { group: '', resource: 'secrets', version: 'v1', selector: { owner: 'Provider', names: ['db-creds'] } };
    const b: APIServiceBinding = apiServiceBindingKind.make(
      'postgresqlinstances.anynines.com',
      { kubeconfigSecretRef: { namespace: 'klutch-bind', name: 'kubeconfig-abc', key: 'kubeconfig' }, permissionClaims: [{ ...claim, state: 'Accepted' }] },
      { namespace: 'klutch-bind', labels: { a: 'b' } },
    );
    expect(b).toEqual({
      apiVersion: BIND_API_VERSION,
      kind: 'APIServiceBinding',
      metadata: { name: 'postgresqlinstances.anynines.com', namespace: 'klutch-bind', labels: { a: 'b' } },
      spec: {
        kubeconfigSecretRef: { namespace: 'klutch-bind', name: 'kubeconfig-abc', key: 'kubeconfig' },
        permissionClaims: [{ ...claim, state: 'Accepted' }],
      },
    });
    expect(apiServiceBindingKind.is(b)).toBe(true);
    expect(clusterBindingKind.is(b)).toBe(false);
    expect(new SchemaValidator(apiServiceBindingKind.openAPIV3Schema()).validate(b)).toEqual([]);
    expect(() => apiServiceExportKind.make('', {} as never)).toThrow('APIServiceExport: metadata.name must be a non-empty string, got ""');
  });

  it('the template keeps the capitalised APIServiceSelector key on the wire', () => {
    const t = apiServiceExportTemplateKind.make(
      'pg',
      { APIServiceSelector: { group: 'anynines.com', resource: 'postgresqlinstances' } },
      { namespace: 'crossplane-system' },
    );
    expect(Object.keys(t.spec)).toEqual(['APIServiceSelector']);
    expect(apiServiceExportTemplateKind.crd().spec.versions[0].schema.openAPIV3Schema.properties!.spec.required).toEqual(['APIServiceSelector']);
  });

  it('exports the wire constants byte-identical to Klutch', () => {
    expect([BOUND_ANNOTATION, SOURCE_SPEC_HASH_ANNOTATION, SYNCER_FINALIZER, IDENTITY_ANNOTATION, API_SERVICE_NAMESPACE_ANNOTATION]).toEqual([
      'klutch.anynines.com/bound',
      'klutch.anynines.com/source-spec-hash',
      'klutch.anynines.com/syncer',
      'example-backend.klutch.anynines.com/identity',
      'klutch.anynines.com/api-service-namespace',
    ]);
  });
});

describe('conditions', () => {
  const t0 = new Date('2026-01-01T00:00:00.123Z');
  const t1 = new Date('2026-01-01T00:05:00Z');

  it('setCondition keeps lastTransitionTime while the status does not change', () => {
    let list = setCondition(undefined, { type: 'SecretValid', status: 'True', reason: 'Valid' }, t0);
    expect(list).toEqual([{ type: 'SecretValid', status: 'True', reason: 'Valid', lastTransitionTime: '2026-01-01T00:00:00Z' }]);
    list = setCondition(list, { type: 'SecretValid', status: 'True', reason: 'StillValid' }, t1);
    expect(list[0].lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    expect(list[0].reason).toBe('StillValid');
    list = setCondition(list, { type: 'SecretValid', status: 'False', reason: 'NotFound', severity: 'Error' }, t1);
    expect(list[0]).toMatchObject({ status: 'False', lastTransitionTime: '2026-01-01T00:05:00Z', severity: 'Error' });
  });

  it('Ready summary: True only when all listed conditions are True; otherwise the first False wins', () => {
    let list: Condition[] = setCondition(undefined, { type: 'SecretValid', status: 'True' }, t0);
    list = setCondition(list, { type: 'Connected', status: 'Unknown', reason: 'Waiting', message: 'waiting for konnector' }, t0);
    list = summarize(list, [ConditionType.SecretValid, ConditionType.Connected], t0);
    expect(getCondition(list, 'Ready')).toMatchObject({ status: 'Unknown', reason: 'Waiting', message: 'waiting for konnector' });
    expect(list[0].type).toBe('Ready');
    list = setCondition(list, { type: 'Connected', status: 'False', reason: 'Unreachable', message: 'dial tcp: refused', severity: 'Warning' }, t1);
    list = summarize(list, [ConditionType.SecretValid, ConditionType.Connected], t1);
    expect(getCondition(list, 'Ready')).toMatchObject({ status: 'False', reason: 'Unreachable', severity: 'Warning' });
    expect(isConditionFalse({ status: { conditions: list } }, 'Ready')).toBe(true);
    list = setCondition(list, { type: 'Connected', status: 'True' }, t1);
    list = summarize(list, [ConditionType.SecretValid, ConditionType.Connected, ConditionType.InformersSynced], t1);
    expect(getCondition(list, 'Ready')).toMatchObject({ status: 'Unknown', reason: 'InformersSyncedMissing' });
    list = summarize(
      setCondition(list, { type: 'InformersSynced', status: 'True' }, t1),
      [ConditionType.SecretValid, ConditionType.Connected, ConditionType.InformersSynced],
      t1,
    );
    expect(isConditionTrue({ status: { conditions: list } }, 'Ready')).toBe(true);
    expect(getCondition(list, 'Ready')?.severity).toBeUndefined();
  });
});

describe('wire types', () => {
  it('BindingProvider: built documents match the schema; bad URLs are rejected naming the field', () => {
    const p = newBindingProvider('anynines', 'v1.5.0', 'https://bind.example.com/authorize');
    expect(p.authenticationMethods).toEqual([{ method: 'OAuth2CodeGrant', oauth2CodeGrant: { authenticatedURL: 'https://bind.example.com/authorize' } }]);
    const v = new SchemaValidator({
      ...bindingProviderSchema.toJSON(),
      properties: { ...bindingProviderSchema.toJSON().properties, metadata: { type: 'object' } },
    });
    expect(v.validate({ ...p, metadata: { name: 'p' } })).toEqual([]);
    expect(v.validate({ ...p, metadata: { name: 'p' }, authenticationMethods: [{ method: 'Password' }] }).map((e) => e.path)).toEqual([
      'authenticationMethods[0].method',
    ]);
    expect(() => newBindingProvider('x', 'v1', 'bind.example.com')).toThrow(
      'BindingProvider.authenticationMethods[0].oauth2CodeGrant.authenticatedURL: must be an http(s) URL, got "bind.example.com"',
    );
  });

  it('BindingResponse carries the kubeconfig as base64 and the requests with kind', () => {
    const r = newBindingResponse({
      sessionID: 'abc123',
      identity: 'https://dex.example.com/CgR1c2Vy',
      kubeconfig: 'apiVersion: v1\nkind: Config\n',
      requests: [{ metadata: { name: 'postgresqlinstances.anynines.com' }, spec: { resources: [{ group: 'anynines.com', resource: 'postgresqlinstances' }] } }],
    });
    expect(r.kubeconfig).toBe(Buffer.from('apiVersion: v1\nkind: Config\n').toString('base64'));
    expect(bindingResponseKubeconfig(r)).toBe('apiVersion: v1\nkind: Config\n');
    expect(r.authentication?.oauth2CodeGrant).toEqual({ sid: 'abc123', id: 'https://dex.example.com/CgR1c2Vy' });
    expect(r.requests[0]).toMatchObject({ apiVersion: BIND_API_VERSION, kind: 'APIServiceExportRequest' });
    expect(bindingResponseSchema.toJSON().required).toEqual(['kubeconfig', 'requests']);
    expect(() => newBindingResponse({ sessionID: 's', identity: 'i', kubeconfig: '', requests: [] })).toThrow('BindingResponse.requests');
  });
});
