import { describe, expect, it } from '@jest/globals';
import { MetadataKeyPolicy } from '../../../contract/metadata-keys.js';
import type { ObjectMeta } from '../../../runtime/core/client.js';
import { Konnector } from '../../../runtime/konnector/konnector.js';
import { buildCommand } from '../../../runtime/konnector/main.js';
import {
  claimMetadataFilters,
  cleanMeta,
  copyMetadataInSync,
  DEFAULT_METADATA_FILTER,
  policyFilter,
  type MetadataFilter,
} from '../../../runtime/konnector/metadata.js';
import { BOUND_ANNOTATION, RESOURCE_OWNER_ANNOTATION, SOURCE_UID_ANNOTATION } from '../../../runtime/konnector/types.js';

/** A provider's Secret of a claim, as the probe set it up. */
const providerSecret: ObjectMeta = {
  name: 'db-service-binding',
  namespace: 'cluster-a-shop',
  uid: 'p-uid',
  labels: {
    'argocd.argoproj.io/secret-type': 'cluster',
    grafana_dashboard: '1',
    'app.kubernetes.io/name': 'postgresql',
    'app.kubernetes.io/managed-by': 'a8s',
    'example.com/tier': 'gold',
    tier: 'gold',
  },
  annotations: {
    'replicator.v1.mittwald.de/replicate-to': '.*',
    'reflector.v1.k8s.emberstack.com/reflection-allowed': 'true',
    'reflector.v1.k8s.emberstack.com/reflection-auto-enabled': 'true',
    'kubed.appscode.com/sync': '',
    [RESOURCE_OWNER_ANNOTATION]: 'Consumer', // forged
    [SOURCE_UID_ANNOTATION]: 'forged',
    'klutch.anynines.com/binding-uid': 'forged',
    'example.com/rotated-at': 'today',
    note: 'x',
  },
};

/** An app-cluster object: its metadata is the app's business. */
const appSecret: ObjectMeta = {
  name: 'app-config',
  namespace: 'shop',
  uid: 'a-uid',
  labels: { 'app.kubernetes.io/name': 'shop', 'random-app-key': 'secret-project-name', 'example.com/tier': 'gold' },
  annotations: { 'random-app-annotation': 'internal', 'kubectl.kubernetes.io/last-applied-configuration': '{"data":{}}', 'example.com/rotated-at': 'today' },
};

const marks = { [RESOURCE_OWNER_ANNOTATION]: 'Provider', [BOUND_ANNOTATION]: 'true' };

describe('cleanMeta with the metadata filter', () => {
  it('down (provider → app cluster), defaults: none of the replication/GitOps keys, only app.kubernetes.io/name, the konnector’s marks', () => {
    expect(cleanMeta(providerSecret, 'db-service-binding', 'shop', marks)).toEqual({
      name: 'db-service-binding',
      namespace: 'shop',
      labels: { 'app.kubernetes.io/name': 'postgresql' },
      annotations: marks,
    });
    // the default filter is the one used when none is given
    expect(cleanMeta(providerSecret, 'x', 'shop', marks, DEFAULT_METADATA_FILTER)).toEqual(cleanMeta(providerSecret, 'x', 'shop', marks));
  });

  it('down, with the admin’s allow-list: the added keys cross too, never-crossing and the konnector’s own keys still do not', () => {
    const f = policyFilter(MetadataKeyPolicy.create({ labels: ['example.com/*', '*'], annotations: ['*'] }));
    expect(cleanMeta(providerSecret, 'db-service-binding', 'shop', marks, f)).toEqual({
      name: 'db-service-binding',
      namespace: 'shop',
      labels: { 'app.kubernetes.io/name': 'postgresql', 'example.com/tier': 'gold', tier: 'gold' },
      annotations: { 'example.com/rotated-at': 'today', note: 'x', ...marks },
    });
  });

  it('the konnector’s own keys are dropped from the source whatever the filter says, and set only from the konnector’s marks', () => {
    const all: MetadataFilter = { label: () => true, annotation: () => true };
    const m = cleanMeta(providerSecret, 'x', 'shop', { [BOUND_ANNOTATION]: 'true' }, all);
    expect(m.annotations?.[RESOURCE_OWNER_ANNOTATION]).toBeUndefined();
    expect(m.annotations?.[SOURCE_UID_ANNOTATION]).toBeUndefined();
    expect(m.annotations?.['klutch.anynines.com/binding-uid']).toBeUndefined();
    expect(m.annotations?.[BOUND_ANNOTATION]).toBe('true');
    expect(cleanMeta(providerSecret, 'x', 'shop', marks, all).annotations?.[RESOURCE_OWNER_ANNOTATION]).toBe('Provider');
  });

  it('up (app cluster → provider), defaults: app-side keys do not leak up', () => {
    expect(cleanMeta(appSecret, 'app-config', 'cluster-a-shop', { [BOUND_ANNOTATION]: 'true' })).toEqual({
      name: 'app-config',
      namespace: 'cluster-a-shop',
      labels: { 'app.kubernetes.io/name': 'shop' },
      annotations: { [BOUND_ANNOTATION]: 'true' },
    });
  });

  it('no labels or annotations at all when none crosses', () => {
    expect(cleanMeta({ name: 'a', labels: { random: 'x' }, annotations: { random: 'y' } }, 'a', undefined)).toEqual({ name: 'a' });
  });
});

describe('copyMetadataInSync: whether a copy needs an update for its metadata', () => {
  const want = { name: 'x', labels: { 'app.kubernetes.io/name': 'pg' }, annotations: { ...marks, 'example.com/a': '1' } };

  it('in sync: same labels and every wanted annotation; annotations set on the copy in its own cluster do not count', () => {
    expect(copyMetadataInSync({ name: 'x', labels: { 'app.kubernetes.io/name': 'pg' }, annotations: { ...want.annotations, 'app-side': 'y' } }, want)).toBe(
      true,
    );
  });

  it('out of sync: a label differs or is extra, a wanted annotation differs or is missing', () => {
    expect(copyMetadataInSync({ ...want, labels: { 'app.kubernetes.io/name': 'pg', extra: 'x' } }, want)).toBe(false);
    expect(copyMetadataInSync({ ...want, labels: {} }, want)).toBe(false);
    expect(copyMetadataInSync({ ...want, annotations: { ...want.annotations, 'example.com/a': '2' } }, want)).toBe(false);
    expect(copyMetadataInSync({ ...want, annotations: marks }, want)).toBe(false);
  });

  it('out of sync: a never-crossing annotation on the copy (an older konnector copied it) is removed by the next update', () => {
    for (const k of ['reflector.v1.k8s.emberstack.com/reflection-auto-enabled', 'replicator.v1.mittwald.de/replicate-to', 'kubed.appscode.com/sync']) {
      expect(copyMetadataInSync({ ...want, annotations: { ...want.annotations, [k]: 'true' } }, want)).toBe(false);
    }
    // unless the copy keeps it on purpose (update.preserving put it into what is wanted)
    const k = 'argocd.argoproj.io/tracking-id';
    expect(
      copyMetadataInSync({ ...want, annotations: { ...want.annotations, [k]: 'app' } }, { ...want, annotations: { ...want.annotations, [k]: 'app' } }),
    ).toBe(true);
  });
});

describe('claimMetadataFilters: the claim narrows the policy per direction, never widens it', () => {
  const policy = MetadataKeyPolicy.create({ labels: ['example.com/*'], annotations: ['example.com/*'] });

  it('without key patterns in the claim, the policy decides both ways', () => {
    const { up, down } = claimMetadataFilters(policy, {});
    expect(cleanMeta(providerSecret, 'x', 'shop', {}, down).labels).toEqual({ 'app.kubernetes.io/name': 'postgresql', 'example.com/tier': 'gold' });
    expect(cleanMeta(appSecret, 'x', 'p', {}, up)).toMatchObject({
      labels: { 'app.kubernetes.io/name': 'shop', 'example.com/tier': 'gold' },
      annotations: { 'example.com/rotated-at': 'today' },
    });
  });

  it('up: read.labels / read.annotations narrow what goes to the provider', () => {
    const { up, down } = claimMetadataFilters(policy, {
      read: { labels: [{ pattern: 'example.com/*' }, { pattern: 'random-app-key' }], annotations: [] },
    });
    // random-app-key is in the claim, but not in the policy: the claim cannot widen it
    expect(cleanMeta(appSecret, 'x', 'p', {}, up)).toEqual({ name: 'x', namespace: 'p', labels: { 'example.com/tier': 'gold' } });
    // `read` does not touch the other direction
    expect(cleanMeta(providerSecret, 'x', 'shop', {}, down).annotations).toEqual({ 'example.com/rotated-at': 'today' });
  });

  it('down: update.labels / update.annotations narrow what comes into the app cluster', () => {
    const { up, down } = claimMetadataFilters(policy, {
      update: { labels: [{ pattern: 'app.kubernetes.io/*' }, { pattern: 'argocd.argoproj.io/*' }], annotations: [{ pattern: 'example.com/rotated-at' }] },
    });
    expect(cleanMeta(providerSecret, 'x', 'shop', {}, down)).toEqual({
      name: 'x',
      namespace: 'shop',
      labels: { 'app.kubernetes.io/name': 'postgresql' }, // not managed-by, not the Argo CD key the claim names
      annotations: { 'example.com/rotated-at': 'today' },
    });
    expect(cleanMeta(appSecret, 'x', 'p', {}, up).labels).toEqual({ 'app.kubernetes.io/name': 'shop', 'example.com/tier': 'gold' });
  });

  it('an empty pattern list lets nothing of that kind through', () => {
    const { down } = claimMetadataFilters(policy, { update: { labels: [], annotations: [] } });
    expect(cleanMeta(providerSecret, 'x', 'shop', marks, down)).toEqual({ name: 'x', namespace: 'shop', annotations: marks });
  });
});

describe('the app cluster admin’s allow-list', () => {
  const parse = (...args: string[]) =>
    buildCommand()
      .exitOverride()
      .configureOutput({ writeErr: () => undefined, writeOut: () => undefined })
      .parse(['node', 'klutch-konnector', ...args])
      .opts();

  it('--allow-label-key / --allow-annotation-key: repeatable, comma-separated, default none', () => {
    expect(parse()).toMatchObject({ allowLabelKey: [], allowAnnotationKey: [] });
    expect(parse('--allow-label-key', 'team,example.com/*', '--allow-label-key=tier', '--allow-annotation-key', 'example.com/x')).toMatchObject({
      allowLabelKey: ['team', 'example.com/*', 'tier'],
      allowAnnotationKey: ['example.com/x'],
    });
  });

  it('a flag naming a never-crossing or malformed key is refused with the flag and the value', () => {
    expect(() => parse('--allow-label-key', 'team,argocd.argoproj.io/secret-type')).toThrow(
      '--allow-label-key: "argocd.argoproj.io/secret-type" never crosses (*.argoproj.io/*:',
    );
    expect(() => parse('--allow-annotation-key', 'Not A Key')).toThrow('--allow-annotation-key: "Not A Key" is not a label or annotation key pattern');
  });

  it('KonnectorOptions.allowedMetadataKeys is checked when the konnector is made', () => {
    const appKubeConfig = { server: 'https://127.0.0.1:1', namespace: 'default', token: 't' } as never;
    expect(() => new Konnector({ appKubeConfig, allowedMetadataKeys: { annotations: ['ok', 'kubed.appscode.com/sync'] } })).toThrow(
      'KonnectorOptions.allowedMetadataKeys.annotations[1]: "kubed.appscode.com/sync" never crosses (*.appscode.com/*:',
    );
  });
});
