import { describe, expect, it } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { crdNeedsUpdate, exportToCRD, isOwnedBy } from '../../../runtime/konnector/crd.js';
import { KubeconfigError, parseKubeconfigSecret } from '../../../runtime/konnector/kubeconfig.js';
import { cleanMeta, deepEqual, hashOf, isSubset, policyFilter, stableStringify } from '../../../runtime/konnector/metadata.js';
import { MetadataKeyPolicy } from '../../../contract/metadata-keys.js';
import { goDuration } from '../../../runtime/konnector/provider.js';
import { matchesFields, matchesLabels, ownerAllowed, parseFieldSelector, selects } from '../../../runtime/konnector/selector.js';
import type { APIServiceBinding, APIServiceExport } from '../../../runtime/konnector/types.js';

const secret = (name: string, labels?: Record<string, string>, type = 'Opaque') => ({
  apiVersion: 'v1',
  kind: 'Secret',
  type,
  metadata: { name, namespace: 'p', labels },
});

describe('claim selectors', () => {
  it('names and namespaces: * or exact entries; defaults select everything', () => {
    expect(selects(undefined, secret('a'), 'ns')).toBe(true);
    expect(selects({ names: ['a', 'b'] }, secret('b'), 'ns')).toBe(true);
    expect(selects({ names: ['a'] }, secret('b'), 'ns')).toBe(false);
    expect(selects({ names: ['*'] }, secret('b'), 'ns')).toBe(true);
    expect(selects({ namespaces: ['team-a'] }, secret('b'), 'team-b')).toBe(false);
    expect(selects({ namespaces: ['team-a'] }, secret('b'), 'team-a')).toBe(true);
  });
  it('names: a *<suffix> entry selects names ending in the suffix (the a8s binding Secret)', () => {
    const a8s = { names: ['*-service-binding'], fieldSelectors: ['type=Opaque'] };
    expect(selects(a8s, secret('db-service-binding'), 'ns')).toBe(true);
    expect(selects(a8s, secret('db-service-binding', undefined, 'kubernetes.io/tls'), 'ns')).toBe(false);
    expect(selects(a8s, secret('db-service-binding-x'), 'ns')).toBe(false);
    expect(selects(a8s, secret('internal'), 'ns')).toBe(false);
    // Namespaces keep exact matching.
    expect(selects({ namespaces: ['*-a'] }, secret('b'), 'team-a')).toBe(false);
  });
  it('label selectors are ORed, the labels within one are ANDed', () => {
    const sel: Record<string, string>[] = [{ a: '1', b: '2' }, { c: '3' }];
    expect(matchesLabels({ a: '1', b: '2' }, sel)).toBe(true);
    expect(matchesLabels({ a: '1' }, sel)).toBe(false);
    expect(matchesLabels({ c: '3', x: 'y' }, sel)).toBe(true);
    expect(matchesLabels(undefined, sel)).toBe(false);
    expect(matchesLabels(undefined, [])).toBe(true);
    // The credentials-only claim never selects an unlabelled Secret.
    expect(selects({ labelSelectors: [{ 'klutch.anynines.com/credentials': 'true' }] }, secret('internal'), 'ns')).toBe(false);
  });
  it('field selectors: =, ==, != on dotted paths; entries ORed, terms ANDed', () => {
    expect(matchesFields(secret('a', undefined, 'kubernetes.io/tls'), ['type=kubernetes.io/tls'])).toBe(true);
    expect(matchesFields(secret('a'), ['type==kubernetes.io/tls'])).toBe(false);
    expect(matchesFields(secret('a'), ['metadata.name=a,type!=kubernetes.io/tls'])).toBe(true);
    expect(matchesFields(secret('a'), ['metadata.name=b', 'metadata.name=a'])).toBe(true);
    expect(() => parseFieldSelector('metadata.name')).toThrow('term "metadata.name" is not field=value');
  });
  it('owner', () => {
    expect(ownerAllowed({ owner: 'Provider' }, 'Consumer')).toBe(false);
    expect(ownerAllowed({ owner: 'Provider' }, 'Provider')).toBe(true);
    expect(ownerAllowed({}, 'Consumer')).toBe(true);
  });
});

describe('metadata helpers', () => {
  it('isSubset ignores fields only on the provider side but compares arrays exactly', () => {
    expect(isSubset({ a: 1, b: { c: 2 } }, { a: 1, b: { c: 2, d: 3 }, e: 4 })).toBe(true);
    expect(isSubset({ a: 1 }, { a: 2 })).toBe(false);
    expect(isSubset({ t: ['x'] }, { t: ['x', 'y'] })).toBe(false);
    expect(isSubset(undefined, { a: 1 })).toBe(true);
    expect(isSubset({ a: 1 }, undefined)).toBe(false);
  });
  it('deepEqual and hashOf are key-order independent', () => {
    expect(deepEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toBe(true);
    expect(hashOf({ a: 1, b: 2 })).toBe(hashOf({ b: 2, a: 1 }));
    expect(hashOf({ a: 1 })).not.toBe(hashOf({ a: 2 }));
  });
  it('hashOf stays the value earlier konnectors wrote into the spec-hash annotation (a change would re-apply every copy once)', () => {
    const spec = { d: 'x', b: [1, { c: 2 }, undefined], a: 1, u: undefined };
    expect(stableStringify(spec)).toBe('{"a":1,"b":[1,{"c":2},null],"d":"x"}');
    expect(hashOf(spec)).toBe('f704269cd1901063495e02e440bb0239');
  });
  it('deepEqual counts a key whose value is undefined as absent', () => {
    expect(deepEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(deepEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(deepEqual({ a: 1, b: 2 }, { a: 1, c: 2 })).toBe(false);
    expect(deepEqual([1, 2], [1, 2, 3])).toBe(false);
    expect(deepEqual({ constructor: 1 }, {})).toBe(false);
    expect(isSubset({ constructor: 1 }, {})).toBe(false);
  });
  it('cleanMeta keeps the labels/annotations the filter lets through and drops server-managed fields', () => {
    const m = cleanMeta(
      {
        name: 'x',
        namespace: 'a',
        uid: 'u',
        resourceVersion: '5',
        generation: 2,
        finalizers: ['f'],
        ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: 'o' }],
        managedFields: [{}],
        creationTimestamp: 'now',
        labels: { l: '1' },
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}', keep: 'yes' },
      },
      'y',
      'b',
      { extra: 'e' },
      policyFilter(MetadataKeyPolicy.create({ labels: ['l'], annotations: ['keep'] })),
    );
    expect(m).toEqual({ name: 'y', namespace: 'b', labels: { l: '1' }, annotations: { keep: 'yes', extra: 'e' } });
  });
});

const exp: APIServiceExport = {
  apiVersion: 'klutch.anynines.com/v1alpha1',
  kind: 'APIServiceExport',
  metadata: { name: 'widgets.example.com', namespace: 'c' },
  spec: {
    group: 'example.com',
    names: { plural: 'widgets', kind: 'Widget' },
    scope: 'Namespaced',
    informerScope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object' } } } },
        subresources: { status: {} },
      },
    ],
  },
} as unknown as APIServiceExport;
const binding = {
  apiVersion: 'klutch.anynines.com/v1alpha1',
  kind: 'APIServiceBinding',
  metadata: { name: 'widgets.example.com', namespace: 'klutch-bind', uid: 'b-uid' },
  spec: {},
} as unknown as APIServiceBinding;

describe('export → CRD', () => {
  it('copies group, names, scope, versions and sets a controller ownerReference to the binding', () => {
    const crd = exportToCRD(exp, binding);
    expect(crd.metadata.name).toBe('widgets.example.com');
    expect(crd.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'klutch.anynines.com/v1alpha1',
        kind: 'APIServiceBinding',
        name: 'widgets.example.com',
        uid: 'b-uid',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(crd.spec.names).toEqual({ plural: 'widgets', kind: 'Widget', singular: 'widget', listKind: 'WidgetList' });
    expect(crd.spec.versions[0]).toMatchObject({ name: 'v1', served: true, storage: true, subresources: { status: {} } });
    expect(isOwnedBy(crd, binding)).toBe(true);
    expect(isOwnedBy({ metadata: { name: 'x' } }, binding)).toBe(false);
  });
  it('needs an update when the schema changes (incl. removed properties), not for server defaults', () => {
    const want = exportToCRD(exp, binding);
    const live = JSON.parse(JSON.stringify(want));
    live.spec.conversion = { strategy: 'None' };
    live.spec.versions[0].extra = 'server default';
    expect(crdNeedsUpdate(live, want)).toBe(false);
    const changed = JSON.parse(JSON.stringify(want));
    changed.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties = { zone: { type: 'string' } };
    expect(crdNeedsUpdate(live, changed)).toBe(true);
    expect(crdNeedsUpdate(changed, want)).toBe(true);
  });
});

describe('kubeconfig Secret parsing', () => {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'p', server: 'https://127.0.0.1:6443', skipTLSVerify: false }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'c', cluster: 'p', user: 'u', namespace: 'cluster-abc' }],
    currentContext: 'c',
  });
  const ref = { namespace: 'klutch-bind', name: 'kc', key: 'kubeconfig' };
  const sec = (text: string) => ({ metadata: { name: 'kc' }, data: { kubeconfig: Buffer.from(text).toString('base64') } });
  it('returns the cluster namespace of the current context', () => {
    const p = parseKubeconfigSecret(sec(kc.exportConfig()), ref);
    expect(p.namespace).toBe('cluster-abc');
    expect(p.server).toBe('https://127.0.0.1:6443');
  });
  it('names the Secret and the fix in every error', () => {
    const reason = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(KubeconfigError);
        expect((e as Error).message).toContain('klutch-bind/kc');
        expect((e as Error).message).toContain('kubectl bind');
        return (e as KubeconfigError).reason;
      }
      throw new Error('no error');
    };
    expect(reason(() => parseKubeconfigSecret(undefined, ref))).toBe('KubeconfigSecretNotFound');
    expect(reason(() => parseKubeconfigSecret({ metadata: { name: 'kc' }, data: {} }, ref))).toBe('KubeconfigSecretInvalid');
    expect(reason(() => parseKubeconfigSecret(sec('apiVersion: v1\nkind: Config\n'), ref))).toBe('KubeconfigSecretInvalid');
    const noNs = JSON.parse(kc.exportConfig());
    delete noNs.contexts[0].context.namespace;
    expect(() => parseKubeconfigSecret(sec(JSON.stringify(noNs)), ref)).toThrow(/has no namespace/);
  });
});

describe('goDuration', () => {
  it('formats like Go', () => {
    expect(goDuration(300_000)).toBe('5m0s');
    expect(goDuration(4000)).toBe('4s');
    expect(goDuration(3_600_000)).toBe('1h0m0s');
    expect(goDuration(90_000)).toBe('1m30s');
  });
});

describe('control-plane mode helpers', () => {
  it('binding root namespace is klutch-bind-<ns>-<name>, hashed to fit a DNS label', async () => {
    const { bindingRootNamespace } = await import('../../../runtime/konnector/appclusterbinding.js');
    expect(bindingRootNamespace('platform', 'app2')).toBe('klutch-bind-platform-app2');
    const long = bindingRootNamespace('a'.repeat(40), 'b'.repeat(40));
    expect(long.length).toBeLessThanOrEqual(63);
    expect(long).toMatch(/^klutch-bind-a{40}-b+-[0-9a-f]{8}$/);
    expect(bindingRootNamespace('a'.repeat(40), 'c'.repeat(40))).not.toBe(long);
  });
  it('container overrides replace fields and merge env/volumeMounts by name', async () => {
    const { mergeContainer } = await import('../../../runtime/konnector/appclusterbinding.js');
    const out = mergeContainer(
      {
        name: 'konnector',
        image: 'a',
        args: ['--x'],
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
      },
      {
        name: 'ignored',
        image: 'b',
        env: [
          { name: 'B', value: '3' },
          { name: 'C', value: '4' },
        ],
        resources: { limits: { memory: '1Gi' } },
      },
    );
    expect(out).toEqual({
      name: 'konnector',
      image: 'b',
      args: ['--x'],
      env: [
        { name: 'A', value: '1' },
        { name: 'B', value: '3' },
        { name: 'C', value: '4' },
      ],
      resources: { limits: { memory: '1Gi' } },
    });
  });
});
