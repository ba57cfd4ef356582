import { describe, expect, it } from '@jest/globals';
import {
  checkAllowedKeyPattern,
  DEFAULT_CROSSING_ANNOTATIONS,
  DEFAULT_CROSSING_LABELS,
  isMetadataKey,
  keyPatternMatches,
  KONNECTOR_KEYS,
  MetadataKeyPolicy,
  NEVER_CROSSING,
} from '../../contract/metadata-keys.js';

/** Keys a provider (or an app) could set to make the other cluster's controllers act on a copy. */
const HOSTILE = [
  'argocd.argoproj.io/secret-type',
  'argocd.argoproj.io/tracking-id',
  'notifications.argoproj.io/subscribe.on-sync-succeeded.slack',
  'grafana_dashboard',
  'grafana_datasource',
  'grafana_folder',
  'k8s-sidecar-target-directory',
  'replicator.v1.mittwald.de/replicate-to',
  'replicator.v1.mittwald.de/replication-allowed-namespaces',
  'reflector.v1.k8s.emberstack.com/reflection-allowed',
  'reflector.v1.k8s.emberstack.com/reflection-auto-enabled',
  'kubed.appscode.com/sync',
  'kubectl.kubernetes.io/last-applied-configuration',
  'kubernetes.io/service-account.name',
  'pod-security.kubernetes.io/enforce',
  'kustomize.toolkit.fluxcd.io/name',
  'fluxcd.io/automated',
  'meta.helm.sh/release-name',
  'helm.sh/resource-policy',
  'kapp.k14s.io/app',
  'app.kubernetes.io/managed-by',
  'app.kubernetes.io/instance',
  'crossplane.io/external-name',
  'crossplane.io/claim-name',
  'pkg.crossplane.io/revision',
  'cert-manager.io/certificate-name',
  'cluster.x-k8s.io/cluster-name',
];

describe('key patterns', () => {
  it('`*` matches any run of characters (none, dots and slashes included), everything else itself', () => {
    expect(keyPatternMatches('example.com/*', 'example.com/team')).toBe(true);
    expect(keyPatternMatches('example.com/*', 'example.com/')).toBe(true);
    expect(keyPatternMatches('example.com/*', 'sub.example.com/team')).toBe(false);
    expect(keyPatternMatches('*.example.com/*', 'a.b.example.com/x')).toBe(true);
    expect(keyPatternMatches('*.example.com/*', 'example.com/x')).toBe(false);
    expect(keyPatternMatches('team', 'team')).toBe(true);
    expect(keyPatternMatches('team', 'teams')).toBe(false);
    expect(keyPatternMatches('a.c', 'abc')).toBe(false); // `.` is literal
    expect(keyPatternMatches('grafana_*', 'grafana_dashboard')).toBe(true);
    expect(keyPatternMatches('*', 'anything/at-all')).toBe(true);
  });

  it('keys are [<DNS subdomain>/]<name>', () => {
    for (const k of ['team', 'example.com/team', 'a_b.c-d', 'x/Y']) expect(isMetadataKey(k)).toBe(true);
    for (const k of ['', '/team', 'Example.com/team', 'example.com/', 'a b', '-x', 'x'.repeat(64), 'a/b/c']) expect(isMetadataKey(k)).toBe(false);
  });
});

describe('MetadataKeyPolicy', () => {
  const everything = MetadataKeyPolicy.create({ labels: ['*'], annotations: ['*'] });

  it.each(HOSTILE)('%s never crosses, as label or annotation, not even when the admin allows "*"', (key) => {
    for (const p of [MetadataKeyPolicy.DEFAULT, everything]) {
      for (const kind of ['label', 'annotation'] as const) {
        expect(p.crosses(kind, key)).toBe(false);
        expect(p.verdict(kind, key)).toMatchObject({ crosses: false, reason: 'never' });
        expect(MetadataKeyPolicy.isNeverCrossing(key)).toBe(true);
      }
    }
  });

  it('the konnector’s own keys (any key of its domain, also ones added later) never cross: the konnector sets them itself', () => {
    for (const key of [
      'klutch.anynines.com/resource-owner',
      'klutch.anynines.com/source-uid',
      'klutch.anynines.com/bound',
      'klutch.anynines.com/binding-uid',
      'klutch.anynines.com/some-future-key',
      'example-backend.klutch.anynines.com/identity',
      'bootstrap.klutch.anynines.com/create-only',
    ]) {
      expect(everything.verdict('annotation', key)).toMatchObject({ crosses: false, reason: 'konnector' });
      expect(everything.verdict('label', key)).toMatchObject({ crosses: false, reason: 'konnector' });
      expect(MetadataKeyPolicy.isKonnectorKey(key)).toBe(true);
    }
    expect(MetadataKeyPolicy.isKonnectorKey('klutch.anynines.com.evil.io/x')).toBe(false);
  });

  it('by default the descriptive app.kubernetes.io labels cross, nothing else (no annotation at all)', () => {
    const p = MetadataKeyPolicy.DEFAULT;
    for (const k of ['app.kubernetes.io/name', 'app.kubernetes.io/component', 'app.kubernetes.io/part-of', 'app.kubernetes.io/version']) {
      expect(p.verdict('label', k)).toMatchObject({ crosses: true });
      expect(p.crosses('annotation', k)).toBe(false);
    }
    for (const k of ['team', 'example.com/team', 'app', 'description']) {
      expect(MetadataKeyPolicy.isNeverCrossing(k)).toBe(false);
      expect(p.verdict('label', k)).toEqual({ crosses: false, reason: 'not-allowed' });
      expect(p.verdict('annotation', k)).toEqual({ crosses: false, reason: 'not-allowed' });
    }
  });

  it('the admin’s patterns add to the defaults, per kind', () => {
    const p = MetadataKeyPolicy.create({ labels: ['example.com/*'], annotations: ['team'] });
    expect(p.verdict('label', 'example.com/team')).toEqual({ crosses: true, rule: { pattern: 'example.com/*', why: 'added by the app cluster’s admin' } });
    expect(p.crosses('annotation', 'example.com/team')).toBe(false);
    expect(p.crosses('annotation', 'team')).toBe(true);
    expect(p.crosses('label', 'team')).toBe(false);
    expect(p.crosses('label', 'app.kubernetes.io/name')).toBe(true);
    // a broad pattern overlapping the never-crossing list is accepted; the list still wins
    const broad = MetadataKeyPolicy.create({ labels: ['*.kubernetes.io/*'] });
    expect(broad.crosses('label', 'app.kubernetes.io/team')).toBe(true);
    expect(broad.crosses('label', 'app.kubernetes.io/managed-by')).toBe(false);
    expect(broad.crosses('label', 'kubectl.kubernetes.io/default-container')).toBe(false);
  });

  it('refuses an admin pattern that is malformed or entirely never-crossing, naming the option, the value and the rule', () => {
    const bad = (labels: unknown[]) => () => MetadataKeyPolicy.create({ labels: labels as string[] }, 'KonnectorOptions.allowedMetadataKeys');
    expect(bad(['ok.example.com/x', ''])).toThrow('KonnectorOptions.allowedMetadataKeys.labels[1]: "" must be a label or annotation key pattern');
    expect(bad([42])).toThrow('KonnectorOptions.allowedMetadataKeys.labels[0]: 42 must be a label or annotation key pattern');
    expect(bad(['Example.com/x'])).toThrow('labels[0]: "Example.com/x" is not a label or annotation key pattern');
    expect(bad(['example.com/'])).toThrow('is not a label or annotation key pattern');
    expect(bad(['argocd.argoproj.io/secret-type'])).toThrow(
      'labels[0]: "argocd.argoproj.io/secret-type" never crosses (*.argoproj.io/*: Argo CD: `argocd.argoproj.io/secret-type` makes a Secret a cluster or repository credential',
    );
    expect(bad(['replicator.v1.mittwald.de/*'])).toThrow('never crosses (replicator.v1.mittwald.de/*:');
    expect(bad(['app.kubernetes.io/managed-by'])).toThrow('never crosses (app.kubernetes.io/managed-by:');
    expect(bad(['kubectl.kubernetes.io/last-applied-configuration'])).toThrow('never crosses (*.kubernetes.io/*:');
    expect(bad(['klutch.anynines.com/resource-owner'])).toThrow("is one of the konnector's own keys (klutch.anynines.com/*:");
    expect(() => MetadataKeyPolicy.create({ annotations: ['grafana_folder'] })).toThrow('allowedMetadataKeys.annotations[0]: "grafana_folder" never crosses');
    for (const ok of ['*', 'example.com/*', '*.example.com/team', 'team', 'app.kubernetes.io/*', '*.kubernetes.io/*']) {
      expect(checkAllowedKeyPattern('f', ok)).toBe(ok);
    }
  });

  it('every list entry is documented and well-formed, and the defaults are not on the never-crossing list', () => {
    for (const r of [...KONNECTOR_KEYS, ...NEVER_CROSSING, ...DEFAULT_CROSSING_LABELS, ...DEFAULT_CROSSING_ANNOTATIONS]) {
      expect(r.why.length).toBeGreaterThan(10);
      expect(isMetadataKey(r.pattern.replace(/\*/g, 'x'))).toBe(true);
    }
    for (const r of DEFAULT_CROSSING_LABELS) {
      expect(MetadataKeyPolicy.DEFAULT.verdict('label', r.pattern)).toEqual({ crosses: true, rule: r });
      expect(checkAllowedKeyPattern('f', r.pattern)).toBe(r.pattern);
    }
  });
});
