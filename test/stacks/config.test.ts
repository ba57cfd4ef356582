/** Stack config validation: every error names the key and the value received; secrets are never echoed. */
import { describe, expect, it } from '@jest/globals';
import { checkBase64Key, parseStackConfig, type RawStackConfig, StackConfigError } from '../../stacks/config.js';
import { connectCluster } from '../../stacks/cluster.js';
import { defaultManifestSource, splitForDeploy } from '../../stacks/manifests.js';
import { topologyManifestSource } from '../../stacks/topology-source.js';
import { generateStackSecrets } from '../../stacks/secrets.js';

const base: RawStackConfig = {
  controlPlane: { name: 'cp' },
  appClusters: [{ name: 'app-1' }],
  backend: { url: 'https://bind.example.com' },
  oidc: { issuerUrl: 'https://issuer.example.com' },
};

function err(raw: RawStackConfig): string {
  try {
    parseStackConfig(raw);
  } catch (e) {
    expect(e).toBeInstanceOf(StackConfigError);
    return (e as Error).message;
  }
  throw new Error('expected a StackConfigError');
}

describe('parseStackConfig', () => {
  it('fills defaults', () => {
    const c = parseStackConfig(base);
    expect(c.controlPlane).toEqual({ name: 'cp', access: { kind: 'kubeconfig' } });
    expect(c.appClusters).toEqual([{ name: 'app-1', access: { kind: 'kubeconfig' }, binding: 'cli' }]);
    expect(c.oidc).toEqual({ issuerUrl: 'https://issuer.example.com', clientId: 'klutch-backend' });
    expect(c.backend).toEqual({ url: 'https://bind.example.com', prettyName: 'klutch-kit', replicas: 2 });
    expect(c.skipAwait).toBe(false);
    expect(c.images).toEqual({});
  });

  it('names the key and the value for bad settings', () => {
    expect(err({ ...base, controlPlane: undefined })).toMatch(/klutch-kit:controlPlane is not set/);
    expect(err({ ...base, controlPlane: { name: 'Control_Plane' } })).toBe(
      'klutch-kit:controlPlane.name: expected a cluster name: a DNS label of at most 40 characters (lower-case letters, digits, "-"), got "Control_Plane"',
    );
    expect(err({ ...base, appClusters: [] })).toMatch(/^klutch-kit:appClusters: expected a non-empty list .* got \[\]$/);
    expect(err({ ...base, appClusters: [{ name: 'cp' }] })).toMatch(/klutch-kit:appClusters\[0\]\.name: "cp" is already used/);
    expect(err({ ...base, appClusters: [{ name: 'a', binding: 'magic' }] })).toBe(
      'klutch-kit:appClusters[0].binding: expected "cli" or "controlPlane", got "magic"',
    );
    expect(err({ ...base, appClusters: [{ name: 'a', access: { kind: 'docker' } }] })).toBe(
      'klutch-kit:appClusters[0].access.kind: expected one of kubeconfig, context, kind, eks, got "docker"',
    );
    expect(err({ ...base, appClusters: [{ name: 'a', access: { kind: 'context' } }] })).toMatch(
      /appClusters\[0\]\.access\.context: expected a non-empty string, got undefined|access\.context/,
    );
    expect(err({ ...base, appClusters: [{ name: 'a', access: { kind: 'eks', region: 'eu-1', desiredCapacity: 0 } }] })).toBe(
      'klutch-kit:appClusters[0].access.desiredCapacity: expected an integer from 1 to 100, got 0',
    );
    expect(err({ ...base, backend: { url: 'http://bind.example.com' } })).toBe(
      'klutch-kit:backend.url: expected an https URL (http is accepted only on loopback), got "http://bind.example.com"',
    );
    expect(err({ ...base, backend: undefined })).toMatch(/^klutch-kit:backend: expected an object \{ url, prettyName, replicas \}.*got undefined$/);
    expect(err({ ...base, backend: { url: 'https://x.example', colour: 'red' } })).toBe(
      'klutch-kit:backend.colour: unknown setting (value "red"); allowed: url, prettyName, replicas',
    );
    expect(err({ ...base, images: { backend: 'ghcr.io/x/backend:latest' } })).toBe(
      'klutch-kit:images.backend: expected a pinned image reference (no whitespace, not :latest), got "ghcr.io/x/backend:latest"',
    );
    expect(err({ ...base, images: { registry: 'ghcr.io/x', base: 'gcr.io/distroless/nodejs22-debian12:nonroot' } })).toBe(
      'klutch-kit:images.base: expected "local" or a base image pinned by digest, "<registry>/<repository>@sha256:<64 hex>", got "gcr.io/distroless/nodejs22-debian12:nonroot"',
    );
    expect(err({ ...base, images: { base: 'local' } })).toBe(
      'klutch-kit:images.base: expected images.registry beside it (images.base is the base of the images the stack builds), got "local"',
    );
    const platformsExpected = 'a non-empty list of distinct platforms out of "linux/amd64", "linux/arm64"';
    expect(err({ ...base, images: { registry: 'ghcr.io/x', platforms: ['linux/s390x'] } })).toBe(
      `klutch-kit:images.platforms[0]: expected ${platformsExpected}, got "linux/s390x"`,
    );
    expect(err({ ...base, images: { registry: 'ghcr.io/x', platforms: [] } })).toBe(`klutch-kit:images.platforms: expected ${platformsExpected}, got []`);
    expect(err({ ...base, images: { registry: 'ghcr.io/x', platforms: 'linux/amd64' } })).toBe(
      `klutch-kit:images.platforms: expected ${platformsExpected}, got "linux/amd64"`,
    );
    expect(err({ ...base, images: { platforms: ['linux/amd64'] } })).toBe(
      'klutch-kit:images.platforms: expected images.registry beside it (images.platforms are those of the images the stack builds), got ["linux/amd64"]',
    );
    expect(parseStackConfig({ ...base, images: { registry: 'ghcr.io/x', platforms: ['linux/arm64'] } }).images).toEqual({
      registry: 'ghcr.io/x',
      platforms: ['linux/arm64'],
    });
    expect(err({ ...base, skipAwait: 'yes' })).toBe('klutch-kit:skipAwait: expected true or false, got "yes"');
    expect(err({ ...base, oidc: undefined })).toMatch(
      /^klutch-kit:dexConnectors: without klutch-kit:oidc the stack deploys Dex, which needs at least one connector; got undefined/,
    );
    expect(err({ ...base, oidc: undefined, dexConnectors: [{ type: 'github', id: 'gh' }] })).toBe(
      'klutch-kit:dexConnectors[0].name: expected a display name, got undefined',
    );
  });

  it('accepts http issuers and backends on loopback only', () => {
    const c = parseStackConfig({ ...base, backend: { url: 'http://127.0.0.1:8080/' }, oidc: { issuerUrl: 'http://localhost:5556/dex' } });
    expect(c.backend.url).toBe('http://127.0.0.1:8080');
  });
});

describe('dex', () => {
  const dexBase: RawStackConfig = { ...base, oidc: undefined, manifests: 'runtime', dexConnectors: [{ type: 'mockCallback', id: 'mock', name: 'Mock' }] };

  it('sets the deployed Dex’s issuer, TLS Secret and CA, which the backend trusts', () => {
    const config = parseStackConfig({ ...dexBase, dex: { issuerUrl: 'https://10.250.0.1:5556/dex', tlsSecretName: 'dex-tls', caConfigMap: 'dex-ca' } });
    expect(config.dex).toEqual({ issuerUrl: 'https://10.250.0.1:5556/dex', tlsSecretName: 'dex-tls', caConfigMap: 'dex-ca' });
    const objs = defaultManifestSource.controlPlane({ config, images: { backend: 'r/backend:1', dex: 'r/dex:1' }, hasCookieEncryptionKey: false });
    const find = (kind: string, name: string) => objs.find((o) => o.kind === kind && o.metadata.name === name) as any;
    const dexCfg = find('ConfigMap', 'dex-config').data['config.yaml'] as string;
    expect(dexCfg).toContain('issuer: https://10.250.0.1:5556/dex');
    expect(dexCfg).toContain('tlsCert: /etc/dex/tls/tls.crt');
    const backend = find('Deployment', 'klutch-backend').spec.template.spec.containers[0];
    expect(backend.args).toContain('--oidc-issuer-url=https://10.250.0.1:5556/dex');
    expect(backend.env).toContainEqual({ name: 'NODE_EXTRA_CA_CERTS', value: '/etc/klutch/issuer-ca/ca.crt' });
    expect(find('Deployment', 'dex').spec.template.spec.containers[0].image).toBe('r/dex:1');
  });

  it('without it the issuer is <backend.url>/dex over plain HTTP behind the backend’s exposure', () => {
    const config = parseStackConfig(dexBase);
    expect(config.dex).toBeUndefined();
    const objs = defaultManifestSource.controlPlane({ config, images: { backend: 'r/backend:1' }, hasCookieEncryptionKey: false });
    const cm = objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'dex-config') as any;
    expect(cm.data['config.yaml']).toContain('issuer: https://bind.example.com/dex');
    expect(cm.data['config.yaml']).toContain('http: 0.0.0.0:5556');
  });

  it('names the key and the value for bad settings', () => {
    expect(err({ ...dexBase, dex: 'tls' })).toBe('klutch-kit:dex: expected an object { issuerUrl, tlsSecretName, caConfigMap }, got "tls"');
    expect(err({ ...dexBase, dex: { tlsSecretName: 'Dex_TLS' } })).toBe(
      'klutch-kit:dex.tlsSecretName: expected a Kubernetes object name (DNS-1123 subdomain), got "Dex_TLS"',
    );
    expect(err({ ...dexBase, dex: { issuerUrl: 'http://127.0.0.1:5556/dex', tlsSecretName: 'dex-tls' } })).toBe(
      'klutch-kit:dex.issuerUrl: expected an https URL (Dex serves TLS with dex.tlsSecretName), got "http://127.0.0.1:5556/dex"',
    );
    expect(err({ ...dexBase, dex: { caConfigMap: 'ca' }, oidc: { issuerUrl: 'https://issuer.example.com' } })).toMatch(
      /^klutch-kit:dex: expected nothing beside klutch-kit:oidc \(with an external issuer the stack deploys no Dex\), got/,
    );
    expect(err({ ...dexBase, manifests: 'topology', dex: { caConfigMap: 'ca' } })).toMatch(/^klutch-kit:dex: expected nothing with manifests "topology"/);
    expect(err({ ...dexBase, dex: { caBundle: 'x' } })).toMatch(/klutch-kit:dex.*caBundle/);
  });
});

describe('backend.replicas', () => {
  const replicasIn = (objs: ReadonlyArray<{ kind: string; metadata: { name?: string }; spec?: unknown }>) =>
    (objs.find((o) => o.kind === 'Deployment' && o.metadata.name === 'klutch-backend')?.spec as { replicas?: number } | undefined)?.replicas;

  it('defaults to 2 and reaches the backend Deployment in both manifest modes', () => {
    const c = parseStackConfig({ ...base, backend: { url: 'https://bind.example.com', replicas: 3 } });
    expect(c.backend.replicas).toBe(3);
    expect(replicasIn(defaultManifestSource.controlPlane({ config: c, images: { backend: 'b:1' }, hasCookieEncryptionKey: false }))).toBe(3);
    expect(
      replicasIn(
        topologyManifestSource({ anynines: { baseDomain: 'a9s.example.com' } }).controlPlane({
          config: c,
          images: { backend: 'b:1' },
          hasCookieEncryptionKey: false,
        }),
      ),
    ).toBe(3);
    const d = parseStackConfig(base);
    expect(replicasIn(defaultManifestSource.controlPlane({ config: d, images: { backend: 'b:1' }, hasCookieEncryptionKey: false }))).toBe(2);
  });

  it('refuses what is not an integer from 1 to 10, naming key and value', () => {
    const err = (replicas: unknown) => {
      try {
        parseStackConfig({ ...base, backend: { url: 'https://bind.example.com', replicas } });
      } catch (e) {
        expect(e).toBeInstanceOf(StackConfigError);
        return (e as Error).message;
      }
      return 'accepted';
    };
    expect(err('3')).toMatch(/^klutch-kit:backend\.replicas: expected an integer from 1 to 10 .*got "3"$/);
    expect(err(0)).toMatch(/^klutch-kit:backend\.replicas: expected an integer from 1 to 10 .*got 0$/);
    expect(err(1.5)).toMatch(/got 1\.5$/);
    expect(err(11)).toMatch(/got 11$/);
    expect(err(1)).toBe('accepted');
  });
});

describe('secrets', () => {
  it('checks cookie keys by decoded length without echoing them', () => {
    expect(() => checkBase64Key('cookieSigningKey', Buffer.alloc(32).toString('base64'), [32, 64])).not.toThrow();
    const bad = Buffer.alloc(20, 1).toString('base64');
    expect(() => checkBase64Key('cookieSigningKey', bad, [32, 64])).toThrow(
      'klutch-kit:cookieSigningKey: expected base64 of 32 or 64 bytes, got a value of 28 characters decoding to 20 bytes; generate one with: openssl rand -base64 32',
    );
    try {
      checkBase64Key('cookieSigningKey', 'not base64 at all!', [32]);
    } catch (e) {
      expect((e as Error).message).not.toContain('not base64 at all');
    }
  });

  it('generates valid, distinct secrets', () => {
    const a = generateStackSecrets();
    const b = generateStackSecrets();
    expect(a['cookieSigningKey']).not.toBe(b['cookieSigningKey']);
    expect(() => checkBase64Key('cookieSigningKey', a['cookieSigningKey'], [32, 64])).not.toThrow();
    expect(() => checkBase64Key('cookieEncryptionKey', a['cookieEncryptionKey'], [32])).not.toThrow();
    expect(a['oidcClientSecret'].length).toBeGreaterThanOrEqual(16);
  });
});

describe('cluster access', () => {
  const none = { getSecret: () => undefined };
  it('names the missing kubeconfig secret key and how to set it', async () => {
    await expect(connectCluster({ name: 'cp', access: { kind: 'kubeconfig' } }, 'controlPlane', none)).rejects.toThrow(
      /^klutch-kit:kubeconfig-cp is not set; cluster "cp" \(controlPlane\) reads its kubeconfig from it\. Set it with: pulumi config set --secret kubeconfig-cp/,
    );
  });
  it('names a missing kubeconfig file', async () => {
    await expect(
      connectCluster({ name: 'a', access: { kind: 'context', context: 'x', path: '/nonexistent/kubeconfig' } }, 'appClusters[0]', none),
    ).rejects.toThrow(
      'klutch-kit:appClusters[0].access.path: cluster "a": kubeconfig file "/nonexistent/kubeconfig" does not exist (resolved to /nonexistent/kubeconfig)',
    );
  });
  it('parses kind access with name, nodeImage and configPath, and rejects unknown settings', () => {
    const c = parseStackConfig({
      ...base,
      appClusters: [{ name: 'a', access: { kind: 'kind', name: 'dev', nodeImage: 'kindest/node:v1.33.1', configPath: 'kind.yaml' } }],
    });
    expect(c.appClusters[0]!.access).toEqual({ kind: 'kind', name: 'dev', nodeImage: 'kindest/node:v1.33.1', configPath: 'kind.yaml' });
    expect(err({ ...base, appClusters: [{ name: 'a', access: { kind: 'kind', workers: 3 } }] })).toBe(
      'klutch-kit:appClusters[0].access.workers: unknown setting (value 3); allowed: kind, name, nodeImage, configPath',
    );
  });
});

describe('splitForDeploy', () => {
  it('rejects nameless and duplicate objects, naming the cluster', () => {
    expect(() => splitForDeploy('cp', [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} } as never])).toThrow(
      /cluster "cp": object #0 has no apiVersion\/kind\/metadata.name/,
    );
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'n' } };
    expect(() => splitForDeploy('cp', [cm, cm])).toThrow('cluster "cp": object ConfigMap n/a appears twice');
  });
});
